// warpkit/warp/welford.cuh: the segment merge of Welford states. The state, its updates, merge,
// precision and NaN/inf rules: thread/welford.cuh.
#pragma once

#include "../thread/welford.cuh"
#include "reduce.cuh"

namespace warpkit {

/// Merge the states of each segment of Width lanes (1..32), in lane order (a lane with no values
/// passes welfordEmpty()). All 32 lanes must call. Result: every lane of the segment when Width is
/// a power of two (bitwise the same in each), else the segment's first lane, as the other warp
/// reductions. Cost: log2(Width) steps of three shuffles and one merge (one reciprocal).
template <int Width = 32> WARPKIT_DEVICE WelfordState warpReduceWelford(WelfordState s) {
    WARPKIT_CHECK_WIDTH(Width, "warpReduceWelford");
    if constexpr (Width >= 1 && Width <= 32) return warpReduce<Width>(s, WelfordMerge{});
    else return s;
}

} // namespace warpkit
