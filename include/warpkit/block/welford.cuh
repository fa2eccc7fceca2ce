// warpkit/block/welford.cuh: the block merge of Welford states. The state, its updates, merge,
// precision and NaN/inf rules: thread/welford.cuh; block shapes, scratch and participation:
// block/reduce.cuh.
#pragma once

#include "../warp/welford.cuh"
#include "reduce.cuh"

namespace warpkit {

/// Merge the states of every thread of the block, in linear thread order (a thread with no values
/// passes welfordEmpty()); every thread gets the result. Every thread of the block must call (any
/// shape, 1..1024 threads). BlockThreads: the block's size when known at compile time (faster), 0
/// for blockDim at run time. Built on blockReduce: calls may follow each other directly.
template <int BlockThreads = 0>
WARPKIT_DEVICE WelfordState blockReduceWelford(WelfordState s, BlockReduceScratch<WelfordState, BlockThreads>& scratch) {
    WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockReduceWelford");
    return blockReduce<BlockThreads>(s, WelfordMerge{}, scratch);
}
/// blockReduceWelford with its own __shared__ scratch.
template <int BlockThreads = 0> WARPKIT_DEVICE WelfordState blockReduceWelford(WelfordState s) {
    WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockReduceWelford");
    constexpr int B = (BlockThreads >= 0 && BlockThreads <= 1024) ? BlockThreads : 0; // one error only
    return blockReduce<B>(s, WelfordMerge{});
}

} // namespace warpkit
