// warpkit/warp/cg.cuh: cooperative-groups overloads of the warp reductions, scans and votes
// (opt-in: the only warpkit header that includes <cooperative_groups.h>; nothing else needs it).
//
//   auto tile = cg::tiled_partition<16>(cg::this_thread_block());
//   float s = warpkit::warpReduceSum(tile, x);       // every lane of the tile gets the sum
//   float p = warpkit::warpInclusiveSum(tile, x);    // every lane gets its own prefix
//   if (x > 0) { float a = warpkit::warpReduceSum(cg::coalesced_threads(), x); }
//
// Tiles: cg::thread_block_tile<N> (N = 1, 2, 4, 8, 16 or 32; a wider tile is a compile error).
// The overloads are the width-template forms with Width = N (warpReduceSum(tile, x) is
// warpReduceSum<N>(x)), so they compile to the same instructions; the tile's lanes are the
// segment. Participation as for those forms: every lane of the warp calls together (every tile
// of the warp, as when the whole block calls, which tiled_partition needs anyway); results reach
// every lane of the tile.
//
// Coalesced groups: cg::coalesced_group (from cg::coalesced_threads() or a tiled_partition of
// one). Every lane of the group must call, converged; each gets the reduction over the group,
// its own prefix in rank order (cg's thread_rank()), or the vote. A full 32-lane group takes the
// full-warp path (redux.sync for 32-bit integers on sm_80+).
//
// Types and operators: as the forms they forward to (warp/reduce.cuh, warp/scan.cuh,
// warp/packed.cuh for __half2 and __nv_bfloat162 through the tile overloads of the named forms).
#pragma once

#include <cooperative_groups.h>

#include "vote.cuh"
#include "packed.cuh"

namespace warpkit {
namespace detail {

/// The lanes of a coalesced group as a warp mask (cooperative groups keeps it as a protected
/// member; a derived type may name it).
struct CoalescedMask : cooperative_groups::coalesced_group {
    static WARPKIT_DEVICE unsigned of(const cooperative_groups::coalesced_group& g) {
        return (g.*(&CoalescedMask::get_mask))();
    }
};

} // namespace detail

#define WARPKIT_CHECK_TILE(N, fn)                                                             \
    static_assert((N) >= 1 && (N) <= 32 && ((N) & ((N)-1)) == 0,                              \
                  fn ": cooperative-groups tile size N must be 1, 2, 4, 8, 16 or 32 (a tile " \
                     "within one warp)")

// ---- thread_block_tile<N> -------------------------------------------------------------------

/// warpReduce<N>(v, op) over the tile: every lane of the tile gets the reduction. The whole warp
/// calls (see the header comment).
template <unsigned N, typename P, typename T, typename Op>
WARPKIT_DEVICE T warpReduce(const cooperative_groups::thread_block_tile<N, P>&, T v, Op op) {
    WARPKIT_CHECK_TILE(N, "warpReduce(tile)");
    if constexpr (N <= 32) return warpReduce<(int)N>(v, op);
    else return v;
}
/// warpInclusiveScan<N>(v, op) over the tile: the whole warp calls; each lane gets its own inclusive prefix.
template <unsigned N, typename P, typename T, typename Op>
WARPKIT_DEVICE T warpInclusiveScan(const cooperative_groups::thread_block_tile<N, P>&, T v, Op op) {
    WARPKIT_CHECK_TILE(N, "warpInclusiveScan(tile)");
    if constexpr (N <= 32) return warpInclusiveScan<(int)N>(v, op);
    else return v;
}
/// warpExclusiveScan<N>(v, op, init) over the tile: the whole warp calls; each lane gets its own
/// exclusive prefix, the tile's first lane init.
template <unsigned N, typename P, typename T, typename Op>
WARPKIT_DEVICE T warpExclusiveScan(const cooperative_groups::thread_block_tile<N, P>&, T v, Op op, T init) {
    WARPKIT_CHECK_TILE(N, "warpExclusiveScan(tile)");
    if constexpr (N <= 32) return warpExclusiveScan<(int)N>(v, op, init);
    else return v;
}

// Named forms over a tile, X = Sum, Max, Min: warpReduceX(tile, v), warpInclusiveX(tile, v),
// warpExclusiveX(tile, v) = the width-template forms with Width = N (every lane of the tile gets
// its result), including __half2 / __nv_bfloat162.
#define WARPKIT_DETAIL_TILE_NAMED(FN)                                              \
    template <unsigned N, typename P, typename T>                                  \
    WARPKIT_DEVICE T FN(const cooperative_groups::thread_block_tile<N, P>&, T v) { \
        WARPKIT_CHECK_TILE(N, #FN "(tile)");                                       \
        if constexpr (N <= 32) return FN<(int)N>(v);                               \
        else return v;                                                             \
    }
/// Sum, maximum, minimum over the tile (the whole warp calls; every lane of the tile gets it).
WARPKIT_DETAIL_TILE_NAMED(warpReduceSum)
WARPKIT_DETAIL_TILE_NAMED(warpReduceMax)
WARPKIT_DETAIL_TILE_NAMED(warpReduceMin)
/// Inclusive prefix sums, maxima, minima over the tile (the whole warp calls; each lane gets its own).
WARPKIT_DETAIL_TILE_NAMED(warpInclusiveSum)
WARPKIT_DETAIL_TILE_NAMED(warpInclusiveMax)
WARPKIT_DETAIL_TILE_NAMED(warpInclusiveMin)
/// Exclusive prefix sums, maxima, minima over the tile (the whole warp calls; each lane gets its own,
/// the tile's first lane the identity).
WARPKIT_DETAIL_TILE_NAMED(warpExclusiveSum)
WARPKIT_DETAIL_TILE_NAMED(warpExclusiveMax)
WARPKIT_DETAIL_TILE_NAMED(warpExclusiveMin)
#undef WARPKIT_DETAIL_TILE_NAMED

/// Votes over the tile: the segment votes with Width = N (segmentBallot: bit i = the tile's
/// lane i). Every lane of the warp calls; each gets its tile's answer.
template <unsigned N, typename P>
WARPKIT_DEVICE unsigned segmentBallot(const cooperative_groups::thread_block_tile<N, P>&, bool pred) {
    WARPKIT_CHECK_TILE(N, "segmentBallot(tile)");
    return segmentBallot<(N <= 32 ? (int)N : 32)>(pred);
}
/// True when the predicate holds in any lane of the tile. Every lane of the warp calls; each gets
/// its tile's answer.
template <unsigned N, typename P>
WARPKIT_DEVICE bool segmentAny(const cooperative_groups::thread_block_tile<N, P>& t, bool pred) {
    return segmentBallot(t, pred) != 0u;
}
/// True when the predicate holds in every lane of the tile. Every lane of the warp calls; each gets
/// its tile's answer.
template <unsigned N, typename P>
WARPKIT_DEVICE bool segmentAll(const cooperative_groups::thread_block_tile<N, P>& t, bool pred) {
    return segmentBallot(t, !pred) == 0u;
}
/// Number of lanes of the tile where the predicate holds. Every lane of the warp calls; each gets
/// its tile's count.
template <unsigned N, typename P>
WARPKIT_DEVICE int segmentCount(const cooperative_groups::thread_block_tile<N, P>& t, bool pred) {
    return __popc(segmentBallot(t, pred));
}

// ---- coalesced_group ------------------------------------------------------------------------

/// Reduce `v` with `op` over the group's lanes (lane order); every lane of the group must call and
/// gets the result. T: any trivially copyable type; op: associative.
template <typename T, typename Op>
WARPKIT_DEVICE T warpReduce(const cooperative_groups::coalesced_group& g, T v, Op op) {
    WARPKIT_CHECK_SHUFFLABLE(T, "warpReduce(coalesced_group)");
    if constexpr (!detail::IsShufflable<T>::value) return v;
    else if constexpr (detail::IsBuiltinOp<Op>::value && detail::Arith<T>::supported)
        return detail::builtinReduceMask<Op>(v, detail::CoalescedMask::of(g));
    else return detail::warpReduceMaskImpl(v, op, detail::CoalescedMask::of(g));
}
/// Inclusive scan over the group in rank order; every lane of the group must call; each gets
/// x(rank 0) op ... op x(own rank).
template <typename T, typename Op>
WARPKIT_DEVICE T warpInclusiveScan(const cooperative_groups::coalesced_group& g, T v, Op op) {
    WARPKIT_CHECK_SHUFFLABLE(T, "warpInclusiveScan(coalesced_group)");
    if constexpr (detail::IsShufflable<T>::value)
        return detail::scanMaskImpl<false>(v, op, v, detail::CoalescedMask::of(g));
    else return v;
}
/// Exclusive scan seeded by `init` over the group in rank order; every lane of the group must call;
/// each gets init op x(rank 0) op ... op x(rank - 1), rank 0 gets init.
template <typename T, typename Op>
WARPKIT_DEVICE T warpExclusiveScan(const cooperative_groups::coalesced_group& g, T v, Op op, T init) {
    WARPKIT_CHECK_SHUFFLABLE(T, "warpExclusiveScan(coalesced_group)");
    if constexpr (detail::IsShufflable<T>::value)
        return detail::scanMaskImpl<true>(v, op, init, detail::CoalescedMask::of(g));
    else return v;
}

// Named forms over a coalesced group (X = Sum, Max, Min; types of the scalar named forms).
#define WARPKIT_DETAIL_GROUP_NAMED(NAME, OP)                                                                        \
    template <typename T> WARPKIT_DEVICE T warpReduce##NAME(const cooperative_groups::coalesced_group& g, T v) {    \
        WARPKIT_CHECK_ARITH_TYPE(T, "warpReduce" #NAME "(coalesced_group)");                                        \
        if constexpr (!detail::Arith<T>::supported) return v;                                                       \
        else return detail::builtinReduceMask<OP>(v, detail::CoalescedMask::of(g));                                 \
    }                                                                                                               \
    template <typename T> WARPKIT_DEVICE T warpInclusive##NAME(const cooperative_groups::coalesced_group& g, T v) { \
        WARPKIT_CHECK_ARITH_TYPE(T, "warpInclusive" #NAME "(coalesced_group)");                                     \
        if constexpr (!detail::Arith<T>::supported) return v;                                                       \
        else return detail::scanMaskBuiltin<false, OP>(v, detail::CoalescedMask::of(g));                            \
    }                                                                                                               \
    template <typename T> WARPKIT_DEVICE T warpExclusive##NAME(const cooperative_groups::coalesced_group& g, T v) { \
        WARPKIT_CHECK_ARITH_TYPE(T, "warpExclusive" #NAME "(coalesced_group)");                                     \
        if constexpr (!detail::Arith<T>::supported) return v;                                                       \
        else return detail::scanMaskBuiltin<true, OP>(v, detail::CoalescedMask::of(g));                             \
    }
/// Sum over the group and its inclusive / exclusive prefix sums: every lane of the group must call,
/// converged; each gets the sum or its own prefix.
WARPKIT_DETAIL_GROUP_NAMED(Sum, Sum)
/// Maximum over the group and its prefix maxima (callers and results as for Sum); NaN propagates.
WARPKIT_DETAIL_GROUP_NAMED(Max, Max)
/// Minimum over the group and its prefix minima (callers and results as for Sum); NaN propagates.
WARPKIT_DETAIL_GROUP_NAMED(Min, Min)
#undef WARPKIT_DETAIL_GROUP_NAMED

/// Ballot over the group: bit l set for each lane l (a warp lane, not a group rank) of the group
/// whose predicate holds. Every lane of the group must call; each gets the ballot.
WARPKIT_DEVICE unsigned segmentBallot(const cooperative_groups::coalesced_group& g, bool pred) {
    return __ballot_sync(detail::CoalescedMask::of(g), pred);
}
/// True when the predicate holds in any lane of the group. Every lane of the group must call; each gets it.
WARPKIT_DEVICE bool segmentAny(const cooperative_groups::coalesced_group& g, bool pred) {
    return segmentBallot(g, pred) != 0u;
}
/// True when the predicate holds in every lane of the group. Every lane of the group must call; each
/// gets it.
WARPKIT_DEVICE bool segmentAll(const cooperative_groups::coalesced_group& g, bool pred) {
    return segmentBallot(g, !pred) == 0u;
}
/// Number of lanes of the group where the predicate holds. Every lane of the group must call; each
/// gets the count.
WARPKIT_DEVICE int segmentCount(const cooperative_groups::coalesced_group& g, bool pred) {
    return __popc(segmentBallot(g, pred));
}

#undef WARPKIT_CHECK_TILE

} // namespace warpkit
