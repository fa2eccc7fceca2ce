// warpkit/cluster/softmax.cuh: softmax of a row spread over the blocks of a thread-block cluster
// (sm_90), and the cluster merge of online-softmax states. Kinds, NaN/inf rules and accuracy:
// thread/softmax.cuh; the exchange and its participation rules: cluster/reduce.cuh.
#pragma once

#include "../block/softmax.cuh"
#include "reduce.cuh"

namespace warpkit {

/// Merge the blocks' states across the cluster; every thread of every block gets the result.
/// Every thread of every block must call, each block with its own state (the same in all its
/// threads, e.g. from blockReduceSoftmaxState). `x` and `round` as for clusterReduce.
WARPKIT_DEVICE SoftmaxState clusterReduceSoftmaxState(ClusterExchange<SoftmaxState>& x, unsigned& round, SoftmaxState s) {
    return clusterReduce(x, round, s, SoftmaxStateMerge{});
}

/// Softmax of one row spread over the blocks of a cluster: each thread of each block holds K of
/// its values in `v` (unused slots = -inf) and gets its own K results in place. Returns the whole
/// row's state to every thread. Every thread of every block of the cluster must call; `x` and
/// `round` as for clusterReduce (clusterExchangeInit first). BlockThreads as for blockSoftmax.
/// Each element is read once and written once, however long the row: only the blocks' {max, sum}
/// cross the cluster. Without a cluster this is blockSoftmax.
template <int BlockThreads = 0, int K = 1, int Kind = SoftmaxPlain, typename T>
WARPKIT_DEVICE SoftmaxState clusterSoftmax(T (&v)[K], ClusterExchange<SoftmaxState>& x, unsigned& round) {
    WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "clusterSoftmax");
    WARPKIT_CHECK_SOFTMAX_ARGS(T, K, Kind, "clusterSoftmax");
    constexpr int B = (BlockThreads >= 0 && BlockThreads <= 1024) ? BlockThreads : 0; // one error only
    __shared__ BlockReduceScratch<float, B> wk_softmax_red;
    if constexpr (detail::IsSoftmaxType<T>::value && K >= 1 && B == BlockThreads)
        return detail::softmaxCore<Kind>(v, [](float m) { return blockReduce<B>(m, Max{}, wk_softmax_red); },
                                         [](float s) { return blockReduce<B>(s, Sum{}, wk_softmax_red); },
                                         [&](SoftmaxState part) { return clusterReduceSoftmaxState(x, round, part); });
    else
        return softmaxStateEmpty();
}

} // namespace warpkit
