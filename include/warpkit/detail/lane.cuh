// warpkit/detail/lane.cuh: the thread's lane, its linear index in the block and its position in
// a segment. Internal: include a public header instead (warpkit/warp/vote.cuh documents laneId
// and linearThreadId, which are public).
#pragma once

#include "types.cuh"

namespace warpkit {

/// This thread's lane (0..31) = linearThreadId() % 32, read from %laneid, so it is right for
/// 1-D, 2-D and 3-D blocks alike. Any thread may call.
WARPKIT_DEVICE unsigned laneId() {
    unsigned l;
    asm("mov.u32 %0, %%laneid;" : "=r"(l));
    return l;
}

/// Linear index of this thread in its block (x fastest, then y, then z): the order the hardware
/// packs threads into warps. Any thread may call.
WARPKIT_DEVICE unsigned linearThreadId() {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

namespace detail {

__host__ __device__ constexpr bool isPow2(int w) { return w > 0 && (w & (w - 1)) == 0; }

/// Position of this lane in its segment of Width lanes (segments as in warp/reduce.cuh: the last
/// 32 % Width lanes form a shorter segment when Width does not divide 32).
template <int Width> WARPKIT_DEVICE int segLane() {
    if constexpr (isPow2(Width)) return (int)(laneId() & (Width - 1));
    else return (int)(laneId() % Width);
}

/// Lanes in this lane's segment (Width, or 32 % Width for the short last segment), given segLane.
template <int Width> WARPKIT_DEVICE int segLen(int slane) {
    const int start = (int)laneId() - slane;
    return 32 - start < Width ? 32 - start : Width;
}

} // namespace detail
} // namespace warpkit
