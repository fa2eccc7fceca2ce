// warpkit/cluster/welford.cuh: the cluster merge of Welford states (sm_90). The state, its
// updates, merge, precision and NaN/inf rules: thread/welford.cuh; the exchange and its
// participation rules: cluster/reduce.cuh.
#pragma once

#include "../block/welford.cuh"
#include "reduce.cuh"

namespace warpkit {

/// Merge the blocks' states across the cluster, in block-rank order; every thread of every block
/// gets the result. Every thread of every block must call, each block with its own state (the
/// same in all its threads, e.g. from blockReduceWelford). `x` and `round` as for clusterReduce
/// (clusterExchangeInit first). Without a cluster: returns s.
WARPKIT_DEVICE WelfordState clusterReduceWelford(ClusterExchange<WelfordState>& x, unsigned& round, WelfordState s) {
    return clusterReduce(x, round, s, WelfordMerge{});
}

} // namespace warpkit
