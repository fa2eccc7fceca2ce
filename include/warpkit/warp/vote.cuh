// warpkit/warp/vote.cuh: lane and warp ids, lane masks, segment votes, leader election, segment
// broadcast and warp-aggregated atomic increments.
//
// Ids. A block's threads are numbered by their linear index
//   t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z),
// and the hardware packs consecutive t into warps. So the lane is t % 32 and the warp is t / 32
// for 1-D, 2-D and 3-D blocks alike; threadIdx.x % 32 is wrong as soon as blockDim.x is not a
// multiple of 32.
//
// Segments (for the vote helpers): Width consecutive lanes, Width dividing 32 (1, 2, 4, 8, 16, 32),
// so that a segment's ballot fits in Width bits starting at bit 0. Broadcast takes any Width 1..32
// (segments as in reduce.cuh: the last short segment when Width does not divide 32).
//
// Participation. Functions with a `mask` parameter (default: all 32 lanes) must be called by
// exactly the lanes in `mask`, converged; lanes outside it (returned early, branched away)
// count as absent: their predicate is false for ballot/any/count and ignored by all. Pass
// __activemask() from code that may run on a partial warp. The atomics take no mask: any subset
// of lanes may call them (they use __activemask()).
#pragma once

#include "../detail/shfl.cuh"

namespace warpkit {

// ---- ids and lane masks ------------------------------------------------------------------------

// linearThreadId() and laneId() (detail/lane.cuh): this thread's linear index in its block and
// its lane, linearThreadId() % 32. Any thread may call.

/// This thread's warp in its block = linearThreadId() / 32 (not %warpid, which names a hardware
/// slot and may change). Any thread may call.
WARPKIT_DEVICE unsigned warpId() { return linearThreadId() >> 5; }
/// Number of warps in the block (the last one may be partial). Any thread may call.
WARPKIT_DEVICE unsigned warpsPerBlock() { return (blockDim.x * blockDim.y * blockDim.z + 31) >> 5; }

/// Bits of the lanes below this one (lt), at or below (le), above (gt), at or above (ge).
/// Any thread may call; each lane gets its own mask.
WARPKIT_DEVICE unsigned laneMaskLt() { unsigned m; asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m)); return m; }
WARPKIT_DEVICE unsigned laneMaskLe() { unsigned m; asm("mov.u32 %0, %%lanemask_le;" : "=r"(m)); return m; }
WARPKIT_DEVICE unsigned laneMaskGt() { unsigned m; asm("mov.u32 %0, %%lanemask_gt;" : "=r"(m)); return m; }
WARPKIT_DEVICE unsigned laneMaskGe() { unsigned m; asm("mov.u32 %0, %%lanemask_ge;" : "=r"(m)); return m; }

namespace detail {
/// Bits of this lane's segment (Width divides 32) in a warp-wide mask.
template <int Width> WARPKIT_DEVICE unsigned segmentBits() {
    if constexpr (Width == 32) return WARPKIT_FULL_MASK;
    else return ((1u << Width) - 1u) << (laneId() & ~(unsigned)(Width - 1));
}
/// Shift this lane's segment of a warp-wide mask down to bit 0.
template <int Width> WARPKIT_DEVICE unsigned segmentShift(unsigned m) {
    if constexpr (Width == 32) return m;
    else return (m >> (laneId() & ~(unsigned)(Width - 1))) & ((1u << Width) - 1u);
}
} // namespace detail

// ---- segment votes -------------------------------------------------------------------------------

/// Ballot over this lane's segment of Width lanes (Width divides 32): bit i of the result is the
/// predicate of the segment's lane i (0 for lanes outside `mask`). The lanes in `mask` must call;
/// each gets its own segment's bits.
template <int Width = 32> WARPKIT_DEVICE unsigned segmentBallot(bool pred, unsigned mask = WARPKIT_FULL_MASK) {
    WARPKIT_CHECK_POW2_WIDTH(Width, "segmentBallot");
    return detail::segmentShift<Width>(__ballot_sync(mask, pred));
}
/// True when the predicate holds in any lane of the segment that is in `mask`. Participation as
/// segmentBallot; every calling lane gets its segment's answer.
template <int Width = 32> WARPKIT_DEVICE bool segmentAny(bool pred, unsigned mask = WARPKIT_FULL_MASK) {
    WARPKIT_CHECK_POW2_WIDTH(Width, "segmentAny");
    return segmentBallot<Width>(pred, mask) != 0u;
}
/// True when the predicate holds in every lane of the segment that is in `mask` (lanes outside it
/// are ignored). Participation as segmentBallot.
template <int Width = 32> WARPKIT_DEVICE bool segmentAll(bool pred, unsigned mask = WARPKIT_FULL_MASK) {
    WARPKIT_CHECK_POW2_WIDTH(Width, "segmentAll");
    return (detail::segmentShift<Width>(__ballot_sync(mask, !pred) & mask)) == 0u;
}
/// Number of lanes of the segment (in `mask`) where the predicate holds. Participation as
/// segmentBallot.
template <int Width = 32> WARPKIT_DEVICE int segmentCount(bool pred, unsigned mask = WARPKIT_FULL_MASK) {
    WARPKIT_CHECK_POW2_WIDTH(Width, "segmentCount");
    return __popc(segmentBallot<Width>(pred, mask));
}

// ---- leader election and broadcast ------------------------------------------------------------

/// Lowest lane of `mask` (which must be non-zero), by default of the lanes active now. Any lane
/// may call; each gets the same answer for the same mask.
WARPKIT_DEVICE int leaderLane(unsigned mask = __activemask()) { return __ffs(mask) - 1; }
/// True in exactly one calling lane: the lowest lane among those active now. Any subset of lanes
/// may call (partial warps included).
WARPKIT_DEVICE bool isLeader() { return (__activemask() & laneMaskLt()) == 0u; }

/// The value `v` of lane `srcLane` (0..Width-1, a position inside the segment) of this lane's
/// segment, handed to every lane of the segment. Width: any of 1..32 (segments as in reduce.cuh;
/// in the last short segment a srcLane past its end reads the segment's last lane). The lanes in
/// `mask` must call, and the source lane must be one of them. T: any trivially copyable type.
template <int Width = 32, typename T>
WARPKIT_DEVICE T segmentBroadcast(T v, int srcLane, unsigned mask = WARPKIT_FULL_MASK) {
    WARPKIT_CHECK_WIDTH(Width, "segmentBroadcast");
    WARPKIT_CHECK_SHUFFLABLE(T, "segmentBroadcast");
    if constexpr (Width >= 1 && Width <= 32 && detail::IsShufflable<T>::value) {
        if constexpr (detail::isPow2(Width)) {
            return detail::shflIdx(v, srcLane & (Width - 1), Width, mask);
        } else {
            const int start = (int)laneId() - detail::segLane<Width>();
            int src = start + srcLane;
            src = src < start + Width - 1 ? src : start + Width - 1;
            return detail::shflIdx(v, src < 31 ? src : 31, 32, mask);
        }
    } else {
        return v;
    }
}

// ---- warp-aggregated atomics ------------------------------------------------------------------

namespace detail {
template <typename T> struct IsCounter {
    static constexpr bool value = IsSame<T, int>::value || IsSame<T, unsigned>::value ||
                                  IsSame<T, unsigned long long>::value;
};
} // namespace detail

#define WARPKIT_CHECK_COUNTER_TYPE(T, fn)                                                 \
    static_assert(::warpkit::detail::IsCounter<T>::value,                                 \
                  fn ": counter type T must be int, unsigned or unsigned long long")

namespace detail {
/// The lanes of `group` (this lane among them; `active` = every calling lane) add popc(group) to
/// *counter with one atomicAdd by the group's lowest lane; each lane gets the old value plus the
/// number of group lanes below it.
template <typename T> WARPKIT_DEVICE T groupAtomicInc(T* counter, unsigned group, unsigned active) {
    const int leader = __ffs(group) - 1;
    T base = 0;
    if ((int)laneId() == leader) base = atomicAdd(counter, (T)__popc(group));
    base = shflIdx(base, leader, 32, active);
    return base + (T)__popc(group & laneMaskLt());
}
} // namespace detail

/// Warp-aggregated `atomicAdd(counter, 1)`: the calling lanes (any subset; all must pass the same
/// `counter`) do ONE atomicAdd of their count between them, made by the lowest calling lane.
/// Each lane gets its own old value, exactly as if it had done its own atomicAdd: the values are
/// distinct and consecutive, handed out in lane order. Global or shared memory.
template <typename T> WARPKIT_DEVICE T atomicAggInc(T* counter) {
    WARPKIT_CHECK_COUNTER_TYPE(T, "atomicAggInc");
    const unsigned active = __activemask();
    return detail::groupAtomicInc(counter, active, active);
}

/// Per-address aggregated `atomicAdd(counter, 1)`: the calling lanes (any subset) may pass
/// different pointers; lanes with the same pointer are grouped with __match_any_sync and do one
/// atomicAdd between them (the group's lowest lane makes it). Each lane gets its own old value,
/// exactly as its own atomicAdd would (distinct and consecutive per address, in lane order).
template <typename T> WARPKIT_DEVICE T atomicAggIncMatch(T* counter) {
    WARPKIT_CHECK_COUNTER_TYPE(T, "atomicAggIncMatch");
    const unsigned active = __activemask();
    return detail::groupAtomicInc(counter, __match_any_sync(active, (unsigned long long)counter), active);
}

/// Per-address aggregated `atomicAdd(counter, 1)` whose old values are not needed (counting,
/// histograms): lanes with the same pointer do one atomicAdd of their count, made by the group's
/// lowest lane, with no value shuffled back. Any subset of lanes may call.
template <typename T> WARPKIT_DEVICE void atomicAggCountMatch(T* counter) {
    WARPKIT_CHECK_COUNTER_TYPE(T, "atomicAggCountMatch");
    const unsigned group = __match_any_sync(__activemask(), (unsigned long long)counter);
    if ((group & laneMaskLt()) == 0u) atomicAdd(counter, (T)__popc(group));
}

/// Per-key aggregated `atomicAdd(counters + key, 1)` whose old values are not needed: the calling
/// lanes (any subset; all must pass the same `counters`) are grouped by their 32-bit `key` with
/// __match_any_sync, and each group does ONE atomicAdd of its count on counters[key], made by its
/// lowest lane. Matching the 32-bit key is about twice as fast as matching the 64-bit pointer
/// in the form above (samples/histogram.cu, H100). Cost: the match takes longer the more
/// distinct keys the warp holds. Where a shared `atomicAdd(p, 1)` would do instead, prefer it:
/// ptxas (sm_90) turns it into ATOMS.POPC.INC, which aggregates same-address lanes in hardware
/// and beat this helper by 4.5x on skewed data (a 256-bin byte histogram on H100).
template <typename T> WARPKIT_DEVICE void atomicAggCountMatch(T* counters, unsigned key) {
    WARPKIT_CHECK_COUNTER_TYPE(T, "atomicAggCountMatch");
    const unsigned group = __match_any_sync(__activemask(), key);
    if ((group & laneMaskLt()) == 0u) atomicAdd(counters + key, (T)__popc(group));
}

} // namespace warpkit
