// warpkit/warp/segmented.cuh: warp reductions and scans over segments of VARYING length, marked by
// head flags: a lane whose `head` is true starts a new segment, and lane 0 always starts one.
//
//   warpSegmentOf(head)                         {first, last} lane of this lane's segment
//   warpSegmentedReduce(v, op, head)            op over the segment, in EVERY lane of the segment
//   warpSegmentedInclusiveScan(v, op, head)     op over the segment's lanes up to this one
//   warpSegmentedExclusiveScan(v, op, init, head)  init op (the segment's lanes before this one)
//   warpSegmentedReduceSum/Max/Min, warpSegmentedInclusiveSum/Max/Min,
//   warpSegmentedExclusiveSum/Max/Min           named forms (16-bit floats computed in float)
//
// Every form also takes a WarpSegment (from warpSegmentOf) in place of the head flag, so several
// reductions over the same segments pay for the ballot once. The fixed-width forms of
// warp/reduce.cuh and warp/scan.cuh are cheaper where every segment has the same power-of-two
// width; these are for ragged data (CSR rows, packed sequences, a lane group per item).
//
// Participation: all 32 lanes of the warp must call together (converged). Lanes that hold no data
// (a partial warp's tail) still call; give them head = true so that each forms a segment of its
// own and leaves the others alone.
//
// Order: lanes combine in lane order (the lower lane's value on the left), so any associative
// operator works, commutative or not, and the result is the same bits on every call.
//
// Cost: a Hillis-Steele scan on shfl.up over the segment (ceil(log2(longest segment)) steps: the
// steps stop, by one vote each, once no segment of the warp is longer), one ballot, and for the
// reduction one more shuffle from the segment's last lane. A warp of segments of 1..4 lanes takes
// 2 shuffle steps, a whole warp 5.
//
// NaN: Max and Min propagate NaN (ops.cuh); Sum follows IEEE.
#pragma once

#include "../ops.cuh"
#include "../detail/shfl.cuh"
#include "vote.cuh"

namespace warpkit {

/// The lanes of one segment: `first` and `last` are absolute lanes (0..31), first <= last.
struct WarpSegment {
    int first;
    int last;
};

/// This lane's segment under head flags `head` (lane 0 always starts a segment). All 32 lanes
/// must call; each gets its own segment's first and last lane.
WARPKIT_DEVICE WarpSegment warpSegmentOf(bool head) {
    const unsigned heads = __ballot_sync(WARPKIT_FULL_MASK, head) | 1u;
    const unsigned above = heads & laneMaskGt();
    WarpSegment s;
    s.first = 31 - __clz(heads & laneMaskLe());
    s.last = above ? __ffs(above) - 2 : 31;
    return s;
}

namespace detail {

/// Inclusive scan of v over the lanes of segment s, lower lanes on the left; steps stop once no
/// lane of the warp lies o or more lanes into its segment.
template <typename T, typename Op> WARPKIT_DEVICE T segmentedInclusive(T v, Op op, WarpSegment s) {
    const int slane = (int)laneId() - s.first;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        if (!__any_sync(WARPKIT_FULL_MASK, slane >= o)) break;
        const T other = shflUp(v, o);
        if (slane >= o) v = op(other, v);
    }
    return v;
}

template <typename Op, typename T> struct UseAccScan {
    static constexpr bool value =
        (IsSame<Op, Sum>::value || IsSame<Op, Max>::value || IsSame<Op, Min>::value) && Arith<T>::supported;
};

/// The inclusive scan in the operator's working type: the built-in operators on 16-bit floats
/// work in float and round each output once.
template <typename T, typename Op> WARPKIT_DEVICE T segmentedInclusiveAny(T v, Op op, WarpSegment s) {
    if constexpr (UseAccScan<Op, T>::value) return Arith<T>::from_acc(segmentedInclusive(Arith<T>::to_acc(v), op, s));
    else return segmentedInclusive(v, op, s);
}

template <typename T, typename Op> WARPKIT_DEVICE T segmentedReduceAny(T v, Op op, WarpSegment s) {
    if constexpr (UseAccScan<Op, T>::value) {
        const auto incl = segmentedInclusive(Arith<T>::to_acc(v), op, s);
        return Arith<T>::from_acc(shflIdx(incl, s.last));
    } else {
        return shflIdx(segmentedInclusive(v, op, s), s.last);
    }
}

template <typename T, typename Op> WARPKIT_DEVICE T segmentedExclusiveAny(T v, Op op, T init, WarpSegment s) {
    if constexpr (UseAccScan<Op, T>::value) {
        using A = typename Arith<T>::Acc;
        const A incl = segmentedInclusive(Arith<T>::to_acc(v), op, s);
        const A up = shflUp(incl, 1);
        return Arith<T>::from_acc((int)laneId() == s.first ? Arith<T>::to_acc(init) : op(Arith<T>::to_acc(init), up));
    } else {
        const T up = shflUp(segmentedInclusive(v, op, s), 1);
        return (int)laneId() == s.first ? init : op(init, up);
    }
}

/// The exclusive named forms' init: the identity, +0 for a sum (as warp/scan.cuh's).
template <typename Op, typename T> WARPKIT_DEVICE T segmentedIdentity() {
    using A = typename Arith<T>::Acc;
    if constexpr (IsSame<Op, Sum>::value) return Arith<T>::from_acc(A(0));
    else return Arith<T>::from_acc(Identity<Op, A>::value());
}

} // namespace detail

// ---- generic operator ----------------------------------------------------------------------
// `seg` is a WarpSegment (warpSegmentOf) or this lane's head flag (a bool: lane 0 always starts a
// segment).

namespace detail {
WARPKIT_DEVICE WarpSegment asSegment(WarpSegment s) { return s; }
WARPKIT_DEVICE WarpSegment asSegment(bool head) { return warpSegmentOf(head); }
} // namespace detail

/// op over the lanes of this lane's segment (lower lanes on the left). All 32 lanes must call;
/// every lane of a segment gets its segment's result, bitwise the same. T: any trivially
/// copyable type; op: associative.
template <typename T, typename Op, typename S> WARPKIT_DEVICE T warpSegmentedReduce(T v, Op op, S seg) {
    WARPKIT_CHECK_SHUFFLABLE(T, "warpSegmentedReduce");
    return detail::segmentedReduceAny(v, op, detail::asSegment(seg));
}

/// Inclusive scan inside each segment: a lane gets op over its segment's lanes from the first up
/// to itself. All 32 lanes must call; every lane gets its own prefix.
template <typename T, typename Op, typename S> WARPKIT_DEVICE T warpSegmentedInclusiveScan(T v, Op op, S seg) {
    WARPKIT_CHECK_SHUFFLABLE(T, "warpSegmentedInclusiveScan");
    return detail::segmentedInclusiveAny(v, op, detail::asSegment(seg));
}

/// Exclusive scan inside each segment, seeded by init: a segment's first lane gets init, a later
/// lane init op (its segment's lanes before it). All 32 lanes must call; every lane gets its own.
template <typename T, typename Op, typename S>
WARPKIT_DEVICE T warpSegmentedExclusiveScan(T v, Op op, typename detail::NonDeduced<T>::type init, S seg) {
    WARPKIT_CHECK_SHUFFLABLE(T, "warpSegmentedExclusiveScan");
    return detail::segmentedExclusiveAny(v, op, init, detail::asSegment(seg));
}

// ---- named forms -----------------------------------------------------------------------------
// warpSegmentedReduceX(v, head | seg), warpSegmentedInclusiveX(...), warpSegmentedExclusiveX(...)
// for X = Sum, Max, Min; the exclusive forms' init is the identity (0 for Sum, the lowest value /
// -inf for Max, the highest / +inf for Min). Types: int, unsigned, long long, unsigned long long,
// float, double, __half, __nv_bfloat16. All 32 lanes must call.

#define WARPKIT_DETAIL_SEGMENTED_NAMED(NAME, OP)                                                    \
    template <typename T, typename S> WARPKIT_DEVICE T warpSegmentedReduce##NAME(T v, S seg) {      \
        WARPKIT_CHECK_ARITH_TYPE(T, "warpSegmentedReduce" #NAME);                                   \
        if constexpr (detail::Arith<T>::supported) return warpSegmentedReduce(v, OP{}, seg);        \
        else return v;                                                                              \
    }                                                                                               \
    template <typename T, typename S> WARPKIT_DEVICE T warpSegmentedInclusive##NAME(T v, S seg) {   \
        WARPKIT_CHECK_ARITH_TYPE(T, "warpSegmentedInclusive" #NAME);                                \
        if constexpr (detail::Arith<T>::supported) return warpSegmentedInclusiveScan(v, OP{}, seg); \
        else return v;                                                                              \
    }                                                                                               \
    template <typename T, typename S> WARPKIT_DEVICE T warpSegmentedExclusive##NAME(T v, S seg) {   \
        WARPKIT_CHECK_ARITH_TYPE(T, "warpSegmentedExclusive" #NAME);                                \
        if constexpr (detail::Arith<T>::supported)                                                  \
            return warpSegmentedExclusiveScan(v, OP{}, detail::segmentedIdentity<OP, T>(), seg);    \
        else return v;                                                                              \
    }

/// Sums over segments. All 32 lanes must call; reduce: every lane of a segment gets its sum; scans:
/// each lane gets its own prefix.
WARPKIT_DETAIL_SEGMENTED_NAMED(Sum, Sum)
/// Maxima over segments (callers and results as for Sum); NaN propagates.
WARPKIT_DETAIL_SEGMENTED_NAMED(Max, Max)
/// Minima over segments (callers and results as for Sum); NaN propagates.
WARPKIT_DETAIL_SEGMENTED_NAMED(Min, Min)
#undef WARPKIT_DETAIL_SEGMENTED_NAMED

} // namespace warpkit
