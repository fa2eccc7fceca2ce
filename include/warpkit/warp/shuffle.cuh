// warpkit/warp/shuffle.cuh: public shuffles of any trivially copyable type within segments of any
// width: index (broadcast or per-lane gather), shift up, shift down, xor (butterfly) and rotate.
//
// Segments: as in reduce.cuh. A warp is split into segments of `Width` consecutive lanes
// (Width = 1..32, template parameter, default 32); when Width does not divide 32 the last
// 32 % Width lanes form one shorter segment. "Position" below is a lane's index inside its
// segment (0 .. len-1, len = Width or the short segment's length). No shuffle crosses a segment.
//
// What each lane gets (p = this lane's position, len = its segment's length):
//   warpShuffleIdx(v, src)      the value of position src mod len (src may differ per lane: a
//                               gather; a negative src counts from the end, -1 is the last lane).
//   warpShuffleUp(v, delta)     position p - delta; lanes with p < delta keep their own value.
//   warpShuffleDown(v, delta)   position p + delta; lanes with p + delta >= len keep their own.
//   warpShuffleXor(v, laneMask) position p ^ laneMask; with a power-of-two Width only the bits of
//                               laneMask below Width count; otherwise a lane whose partner position
//                               is >= len (outside the short segment) keeps its own value.
//   warpShuffleRotate(v, delta) position (p + delta) mod len: values move delta lanes toward
//                               position 0 and wrap around (a negative delta rotates the other way).
// delta: 0..31 (the same in every lane, as for __shfl_up_sync); larger values are undefined.
//
// Types: any trivially copyable T of any size, moved as ceil(sizeof(T) / 4) 32-bit shuffles (a 12-byte
// struct: 3), plus __half2 and __nv_bfloat162 (one shuffle each; CUDA 13 made them not trivially
// copyable, so they are accepted by name). A type that is not trivially copyable is a compile error.
//
// Participation: the lanes in `mask` (default: all 32) must call together, converged, and every
// lane a calling lane reads from must be in `mask`. From code that may run on a partial warp pass
// __activemask() and read only from active lanes.
//
// Cost: power-of-two widths map to one hardware shuffle per 32-bit word with the width operand
// (Rotate and Idx need no extra instructions); other widths add a few integer instructions to
// compute the segment's start and length.
#pragma once

#include "../detail/shfl.cuh"

namespace warpkit {
namespace detail {

/// Absolute lane of position `pos` (any int, taken mod len) of this lane's segment of Width lanes
/// (Width not a power of two).
template <int Width> WARPKIT_DEVICE int segSourceLane(int pos) {
    const int slane = segLane<Width>();
    const int len = segLen<Width>(slane);
    int p = pos % len;
    p = p < 0 ? p + len : p;
    return (int)laneId() - slane + p;
}

/// warpShuffleDown (Down) and warpShuffleUp (!Down): the value `delta` positions above / below this
/// lane in its segment; a lane whose source lies outside its segment keeps its own value.
template <int Width, bool Down, typename T> WARPKIT_DEVICE T segShift(T v, int delta, unsigned mask) {
    constexpr int hwWidth = isPow2(Width) ? Width : 32; // other widths shift over the whole warp
    const T r = Down ? shflDown(v, delta, hwWidth, mask) : shflUp(v, delta, hwWidth, mask);
    if constexpr (isPow2(Width)) {
        return r;
    } else {
        const int slane = segLane<Width>();
        return (Down ? slane + delta < segLen<Width>(slane) : slane >= delta) ? r : v;
    }
}

} // namespace detail

#define WARPKIT_DETAIL_SHUFFLE_CHECKS(fn) \
    WARPKIT_CHECK_WIDTH(Width, fn);       \
    WARPKIT_CHECK_SHUFFLABLE(T, fn)
#define WARPKIT_DETAIL_SHUFFLE_OK (Width >= 1 && Width <= 32 && detail::IsShufflable<T>::value)

/// The value `v` of position `src` (mod the segment length) of this lane's segment; `src` may
/// differ between lanes (a gather). The lanes in `mask` must call; each gets the value it names.
template <int Width = 32, typename T> WARPKIT_DEVICE T warpShuffleIdx(T v, int src, unsigned mask = WARPKIT_FULL_MASK) {
    WARPKIT_DETAIL_SHUFFLE_CHECKS("warpShuffleIdx");
    if constexpr (!WARPKIT_DETAIL_SHUFFLE_OK) return v;
    else if constexpr (detail::isPow2(Width)) return detail::shflIdx(v, src, Width, mask);
    else return detail::shflIdx(v, detail::segSourceLane<Width>(src), 32, mask);
}

/// The value of the lane `delta` positions below this one in its segment; the first `delta`
/// lanes of each segment keep their own value. delta: 0..31, the same in every lane.
/// The lanes in `mask` must call; each gets its result.
template <int Width = 32, typename T>
WARPKIT_DEVICE T warpShuffleUp(T v, unsigned delta, unsigned mask = WARPKIT_FULL_MASK) {
    WARPKIT_DETAIL_SHUFFLE_CHECKS("warpShuffleUp");
    if constexpr (!WARPKIT_DETAIL_SHUFFLE_OK) return v;
    else return detail::segShift<Width, false>(v, (int)delta, mask);
}

/// The value of the lane `delta` positions above this one in its segment; lanes whose source
/// lies past the segment's end keep their own value. delta: 0..31, the same in every lane.
/// The lanes in `mask` must call; each gets its result.
template <int Width = 32, typename T>
WARPKIT_DEVICE T warpShuffleDown(T v, unsigned delta, unsigned mask = WARPKIT_FULL_MASK) {
    WARPKIT_DETAIL_SHUFFLE_CHECKS("warpShuffleDown");
    if constexpr (!WARPKIT_DETAIL_SHUFFLE_OK) return v;
    else return detail::segShift<Width, true>(v, (int)delta, mask);
}

/// The value of the lane at position (own position XOR laneMask) of this lane's segment: a
/// butterfly exchange. Power-of-two Width: laneMask's bits at or above Width are ignored. Other
/// widths: a lane whose partner position is past its segment's end keeps its own value.
/// The lanes in `mask` must call; each gets its partner's value.
template <int Width = 32, typename T>
WARPKIT_DEVICE T warpShuffleXor(T v, int laneMask, unsigned mask = WARPKIT_FULL_MASK) {
    WARPKIT_DETAIL_SHUFFLE_CHECKS("warpShuffleXor");
    if constexpr (!WARPKIT_DETAIL_SHUFFLE_OK) {
        return v;
    } else if constexpr (detail::isPow2(Width)) {
        return detail::shflXor(v, laneMask & (Width - 1), Width, mask);
    } else {
        const int slane = detail::segLane<Width>();
        const int p = slane ^ (laneMask & 31);
        const int lane = (int)laneId();
        return detail::shflIdx(v, p < detail::segLen<Width>(slane) ? lane - slane + p : lane, 32, mask);
    }
}

/// Rotate the segment's values: position p gets the value of position (p + delta) mod len, so
/// values move `delta` lanes toward position 0 and wrap; a negative delta rotates the other way.
/// The lanes in `mask` must call, converged (for a full rotation: every lane of the segment); each
/// gets its result.
template <int Width = 32, typename T>
WARPKIT_DEVICE T warpShuffleRotate(T v, int delta, unsigned mask = WARPKIT_FULL_MASK) {
    WARPKIT_DETAIL_SHUFFLE_CHECKS("warpShuffleRotate");
    if constexpr (!WARPKIT_DETAIL_SHUFFLE_OK) return v;
    else if constexpr (detail::isPow2(Width)) return detail::shflIdx(v, (int)laneId() + delta, Width, mask);
    else return detail::shflIdx(v, detail::segSourceLane<Width>(detail::segLane<Width>() + delta), 32, mask);
}

#undef WARPKIT_DETAIL_SHUFFLE_CHECKS
#undef WARPKIT_DETAIL_SHUFFLE_OK

} // namespace warpkit
