// warpkit/block/softmax.cuh: softmax of a row held by a whole block, and the block merge of
// online-softmax states. Kinds, NaN/inf rules and accuracy: thread/softmax.cuh; register layout
// (K slots a thread, unused slots -inf): warp/softmax.cuh.
#pragma once

#include "../warp/softmax.cuh"
#include "reduce.cuh"

namespace warpkit {

/// Softmax of one row held by the whole block: each thread holds K values in `v` (unused slots
/// = -inf; a row of length n fits when n <= threads * K) and gets its own K results in place.
/// Returns the row's state {max, sum of exp(x - max)} to every thread. Every thread of the block
/// must call (any shape, 1..1024 threads). BlockThreads: the block's size when known at compile
/// time (faster), 0 for blockDim at run time. Two blockReduce calls (max, then sum: four
/// barriers); back-to-back calls need no barrier between them.
template <int BlockThreads = 0, int K = 1, int Kind = SoftmaxPlain, typename T>
WARPKIT_DEVICE SoftmaxState blockSoftmax(T (&v)[K]) {
    WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockSoftmax");
    WARPKIT_CHECK_SOFTMAX_ARGS(T, K, Kind, "blockSoftmax");
    constexpr int B = (BlockThreads >= 0 && BlockThreads <= 1024) ? BlockThreads : 0; // one error only
    __shared__ BlockReduceScratch<float, B> wk_softmax_red;
    if constexpr (detail::IsSoftmaxType<T>::value && K >= 1 && B == BlockThreads)
        return detail::softmaxCore<Kind>(v, [](float m) { return blockReduce<B>(m, Max{}, wk_softmax_red); },
                                         [](float s) { return blockReduce<B>(s, Sum{}, wk_softmax_red); });
    else
        return softmaxStateEmpty();
}

/// Log-softmax of a block-held row: blockSoftmax with Kind = SoftmaxLog (returns the row's state).
template <int BlockThreads = 0, int K = 1, typename T> WARPKIT_DEVICE SoftmaxState blockLogSoftmax(T (&v)[K]) {
    return blockSoftmax<BlockThreads, K, SoftmaxLog>(v);
}

/// The state of a block-held row (layout as blockSoftmax), without computing any output: every
/// thread gets the row's {max, sum}. Every thread of the block must call.
template <int BlockThreads = 0, int K = 1, typename T> WARPKIT_DEVICE SoftmaxState blockSoftmaxState(const T (&v)[K]) {
    WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockSoftmaxState");
    WARPKIT_CHECK_SOFTMAX_ARGS(T, K, SoftmaxPlain, "blockSoftmaxState");
    constexpr int B = (BlockThreads >= 0 && BlockThreads <= 1024) ? BlockThreads : 0; // one error only
    __shared__ BlockReduceScratch<float, B> wk_softmax_red;
    return detail::rowStateCore(v, [](float m) { return blockReduce<B>(m, Max{}, wk_softmax_red); },
                                [](float s) { return blockReduce<B>(s, Sum{}, wk_softmax_red); });
}

/// Merge the states of every thread of the block; every thread gets the result. Every thread of
/// the block must call (any shape, 1..1024 threads). BlockThreads as for blockSoftmax. Built on
/// blockReduce: calls may follow each other directly.
template <int BlockThreads = 0> WARPKIT_DEVICE SoftmaxState blockReduceSoftmaxState(SoftmaxState s) {
    WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockReduceSoftmaxState");
    constexpr int B = (BlockThreads >= 0 && BlockThreads <= 1024) ? BlockThreads : 0; // one error only
    return blockReduce<B>(s, SoftmaxStateMerge{});
}

} // namespace warpkit
