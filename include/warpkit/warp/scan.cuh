// warpkit/warp/scan.cuh: warp prefix scans over segments of any width (block scans at the end).
//
// Segments: as in reduce.cuh. A warp is split into segments of `Width` consecutive lanes
// (Width = 1..32, template parameter, default 32): lanes [k*Width, (k+1)*Width) form segment k;
// when Width does not divide 32 the last 32 % Width lanes form one shorter segment. Each segment
// scans on its own, in lane order (the lower lane's value is always the left operand), so the
// generic forms accept any associative operator, commutative or not.
//
// Participation: all 32 lanes of the warp must call together (converged). Every lane gets its
// own result. Forms with `T& total` also hand every lane the segment's total (the reduction of
// the segment's inputs, NOT including an exclusive scan's `init`), so no second reduction is
// needed to chain segments.
//
// Inclusive: lane i of a segment gets x0 op x1 op ... op xi.
// Exclusive: lane 0 of a segment gets `init`; lane i > 0 gets init op x0 op ... op x(i-1)
//   (init is a seed, as cub::WarpScan::ExclusiveScan). The named exclusive forms use the
//   identity (0 for Sum, lowest/-inf for Max, highest/+inf for Min), so lane 0 gets exactly that.
//
// Active-lane forms (warpInclusiveScanActive, warpExclusiveSumActive, ...): over whichever lanes
// are active now, in lane order; see the section at the end.
//
// Valid-lane forms, named with a `Valid` suffix (warpInclusiveScanValid, warpExclusiveSumValid, ...)
// and taking `int valid`: only the first `valid` lanes of each segment (valid >= Width means the
// whole segment; valid may differ per segment, every lane of a segment passing the same count)
// contribute; the generic forms need valid >= 1, the named forms take valid <= 0 as an empty
// segment (every lane gets the identity, and so does `total`); inputs of later lanes are ignored
// (they may hold anything, NaN included). Lanes at positions >= valid get what they would get if
// their inputs were the identity: an inclusive scan hands them the total of the valid lanes, an
// exclusive scan hands them init op (total of the valid lanes). `total` is the valid lanes' total.
// (They have their own names because, for T = int, an overload `(v, int valid)` next to
// `(v, T& total)` would let a count held in an int variable silently bind to `total`.)
//
// Types of the named forms (Sum/Max/Min): int, unsigned, long long, unsigned long long, float,
// double, __half, __nv_bfloat16. __half and __nv_bfloat16 are scanned in float and each output is
// rounded once. Integer sums wrap (two's complement). The generic forms take any trivially
// copyable T and any associative `T op(T, T)`.
//
// NaN: Max and Min scans propagate NaN: from the first NaN on, every inclusive prefix is NaN.
// Sum follows IEEE.
//
// Cost: a scan over Width lanes takes ceil(log2(Width)) shuffle-up steps (__shfl_up_sync through
// detail::shflUp); `total` adds one shuffle, an exclusive scan one more, a valid-lane form of a
// generic operator one more. A float sum over a power-of-two Width uses exactly log2(Width)
// shuffles and no local memory.
#pragma once

#include "../ops.cuh"
#include "../detail/shfl.cuh"

namespace warpkit {
namespace detail {

/// Lane (0..31) of the last lane of this lane's segment.
template <int Width> WARPKIT_DEVICE int segLastLane() {
    if constexpr (isPow2(Width)) {
        return (int)(laneId() | (Width - 1));
    } else {
        const int start = (int)laneId() - segLane<Width>();
        return start + Width <= 32 ? start + Width - 1 : 31;
    }
}

/// Broadcast lane `src` (an absolute lane 0..31 inside this lane's segment) to the segment.
template <int Width, typename T> WARPKIT_DEVICE T segBroadcast(T v, int src) {
    if constexpr (isPow2(Width)) return shflIdx(v, src & (Width - 1), Width);
    else return shflIdx(v, src);
}

/// Inclusive scan over each segment, every lane contributing (Hillis-Steele on shfl.up).
template <int Width, typename T, typename Op> WARPKIT_DEVICE T inclusiveFull(T v, Op op) {
    if constexpr (Width > 1) {
        const int slane = segLane<Width>();
#pragma unroll
        for (int o = 1; o < Width; o <<= 1) {
            // Power-of-two Width: the shuffle's own width keeps reads inside the segment.
            // Otherwise read across the warp and keep only lanes whose source is in the segment.
            T other = shflUp(v, o, isPow2(Width) ? Width : 32);
            if (slane >= o) v = op(other, v);
        }
    }
    return v;
}

/// Shift an inclusive scan up by one lane within the segment; lane 0 of a segment gets `init`,
/// the others init op (their left neighbour's inclusive value), or that value alone if !Seed.
template <int Width, bool Seed, typename T, typename Op>
WARPKIT_DEVICE T exclusiveFromInclusive(T incl, Op op, T init) {
    if constexpr (Width == 1) {
        return init;
    } else {
        T up = shflUp(incl, 1, isPow2(Width) ? Width : 32);
        if constexpr (Seed) up = op(init, up);
        return segLane<Width>() == 0 ? init : up;
    }
}

/// Generic scan driver. Returns the inclusive scan; fills `total` when WantTotal.
/// Valid: lanes past `valid` are replaced by the valid lanes' total after the scan.
template <int Width, bool WantTotal, bool Valid, typename T, typename Op>
WARPKIT_DEVICE T inclusiveGeneric(T v, Op op, int valid, T& total) {
    T incl = inclusiveFull<Width>(v, op);
    if constexpr (Valid) {
        WARPKIT_DEBUG_CHECK(valid >= 1, "warpkit scan: valid lane count must be at least 1");
        const int slane = segLane<Width>();
        const int last = segLastLane<Width>();
        const int lastValid = (int)laneId() - slane + valid - 1;
        const T t = segBroadcast<Width>(incl, lastValid < last ? lastValid : last);
        if (slane >= valid) incl = t;
        if constexpr (WantTotal) total = t;
    } else if constexpr (WantTotal) {
        total = Width == 1 ? incl : segBroadcast<Width>(incl, segLastLane<Width>());
    }
    return incl;
}

/// Built-in Sum/Max/Min on a supported type: inclusive scan in the accumulation type (float
/// for 16-bit floats); lanes past `valid` contribute the identity, so they need no extra shuffle.
template <int Width, typename Op, bool WantTotal, bool Valid, typename T>
WARPKIT_DEVICE typename Arith<T>::Acc inclusiveAcc(T v, int valid, T& total) {
    using Acc = typename Arith<T>::Acc;
    Acc a = Arith<T>::to_acc(v);
    if constexpr (Valid) {
        WARPKIT_DEBUG_CHECK(valid >= 1, "warpkit scan: valid lane count must be at least 1");
        if (segLane<Width>() >= valid) a = Identity<Op, Acc>::value();
    }
    Acc incl = inclusiveFull<Width>(a, Op{});
    if constexpr (WantTotal)
        total = Arith<T>::from_acc(Width == 1 ? incl : segBroadcast<Width>(incl, segLastLane<Width>()));
    return incl;
}

template <int Width, typename Op, bool WantTotal, bool Valid, typename T>
WARPKIT_DEVICE T inclusiveBuiltin(T v, int valid, T& total) {
    return Arith<T>::from_acc(inclusiveAcc<Width, Op, WantTotal, Valid>(v, valid, total));
}

/// Built-in exclusive scan with the identity as init (no seeding op needed).
template <int Width, typename Op, bool WantTotal, bool Valid, typename T>
WARPKIT_DEVICE T exclusiveBuiltin(T v, int valid, T& total) {
    using Acc = typename Arith<T>::Acc;
    const Acc incl = inclusiveAcc<Width, Op, WantTotal, Valid>(v, valid, total);
    Acc id = Identity<Op, Acc>::value();
    if constexpr (IsSame<Op, Sum>::value && Arith<T>::is_float) id = Acc(0); // lane 0 gets +0
    return Arith<T>::from_acc(exclusiveFromInclusive<Width, false>(incl, Op{}, id));
}

template <typename Op, typename T> struct UseBuiltinScan {
    static constexpr bool value = (IsSame<Op, Sum>::value || IsSame<Op, Max>::value ||
                                   IsSame<Op, Min>::value) && Arith<T>::supported;
};

template <int Width, bool WantTotal, bool Valid, typename T, typename Op>
WARPKIT_DEVICE T inclusiveDispatch(T v, Op op, int valid, T& total) {
    if constexpr (UseBuiltinScan<Op, T>::value) return inclusiveBuiltin<Width, Op, WantTotal, Valid>(v, valid, total);
    else return inclusiveGeneric<Width, WantTotal, Valid>(v, op, valid, total);
}

template <int Width, bool WantTotal, bool Valid, typename T, typename Op>
WARPKIT_DEVICE T exclusiveDispatch(T v, Op op, T init, int valid, T& total) {
    if constexpr (UseBuiltinScan<Op, T>::value) {
        // Built-in operator with an arbitrary init: scan in Acc, seed in Acc, round once.
        const auto incl = inclusiveAcc<Width, Op, WantTotal, Valid>(v, valid, total);
        return Arith<T>::from_acc(exclusiveFromInclusive<Width, true>(incl, Op{}, Arith<T>::to_acc(init)));
    } else {
        T incl = inclusiveGeneric<Width, WantTotal, Valid>(v, op, valid, total);
        return exclusiveFromInclusive<Width, true>(incl, op, init);
    }
}

/// Inclusive scan over the lanes of `mask` (the calling lanes), in lane order (rank = lanes of mask
/// below this one). A full warp takes the plain 32-lane scan; otherwise Hillis-Steele over ranks,
/// reading the lane `o` ranks below through __fns. Exclusive: the result one rank below, seeded.
template <bool Exclusive, typename T, typename Op> WARPKIT_DEVICE T scanMaskImpl(T v, Op op, T init, unsigned mask) {
    const unsigned lane = laneId();
    T incl = v;
    if (mask == WARPKIT_FULL_MASK) {
        incl = inclusiveFull<32>(v, op);
    } else {
        const int n = __popc(mask);
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            if (o >= n) break; // n is the same in every active lane
            const unsigned src = __fns(mask, lane, -(o + 1));
            const bool has = src < 32;
            const T other = shfl<ShflIdx>(mask, incl, has ? (int)src : (int)lane);
            if (has) incl = op(other, incl);
        }
    }
    if constexpr (Exclusive) {
        const unsigned src = __fns(mask, lane, -2);
        const T up = shfl<ShflIdx>(mask, incl, src < 32 ? (int)src : (int)lane);
        return src < 32 ? op(init, up) : init;
    } else {
        return incl;
    }
}

/// Named active-lane scans: in Acc (float for 16-bit floats); exclusive lane 0 gets the identity
/// (+0 for a float Sum), which seeds the others without changing their values.
template <bool Exclusive, typename Op, typename T> WARPKIT_DEVICE T scanMaskBuiltin(T v, unsigned mask) {
    using Acc = typename Arith<T>::Acc;
    Acc id = Identity<Op, Acc>::value();
    if constexpr (IsSame<Op, Sum>::value && Arith<T>::is_float) id = Acc(0);
    return Arith<T>::from_acc(scanMaskImpl<Exclusive>(Arith<T>::to_acc(v), Op{}, id, mask));
}
template <typename Op, typename T> WARPKIT_DEVICE T inclusiveActive(T v) {
    return scanMaskBuiltin<false, Op>(v, __activemask());
}
template <typename Op, typename T> WARPKIT_DEVICE T exclusiveActive(T v) {
    return scanMaskBuiltin<true, Op>(v, __activemask());
}

} // namespace detail

#define WARPKIT_DETAIL_SCAN_CHECKS(fn)                                                    \
    WARPKIT_CHECK_WIDTH(Width, fn);                                                       \
    WARPKIT_CHECK_SHUFFLABLE(T, fn)
#define WARPKIT_DETAIL_SCAN_OK (Width >= 1 && Width <= 32 && detail::IsShufflable<T>::value)

// ---- generic operator ----------------------------------------------------------------------

/// Inclusive scan of `v` with `op` over each segment of Width lanes (1..32). All 32 lanes must
/// call; every lane gets x0 op ... op x(own position). T: any trivially copyable type; op:
/// associative (need not be commutative). Sum/Max/Min on arithmetic types take the fast path.
template <int Width = 32, typename T, typename Op> WARPKIT_DEVICE T warpInclusiveScan(T v, Op op) {
    WARPKIT_DETAIL_SCAN_CHECKS("warpInclusiveScan");
    T unused;
    if constexpr (WARPKIT_DETAIL_SCAN_OK) return detail::inclusiveDispatch<Width, false, false>(v, op, 32, unused);
    else return v;
}
/// warpInclusiveScan that also gives every lane its segment's total in `total`.
template <int Width = 32, typename T, typename Op> WARPKIT_DEVICE T warpInclusiveScan(T v, Op op, T& total) {
    WARPKIT_DETAIL_SCAN_CHECKS("warpInclusiveScan");
    if constexpr (WARPKIT_DETAIL_SCAN_OK) return detail::inclusiveDispatch<Width, true, false>(v, op, 32, total);
    else return v;
}
/// warpInclusiveScan over the first `valid` (>= 1) lanes of each segment; later lanes' inputs
/// are ignored and they get the valid lanes' total. All 32 lanes must call.
template <int Width = 32, typename T, typename Op> WARPKIT_DEVICE T warpInclusiveScanValid(T v, Op op, int valid) {
    WARPKIT_DETAIL_SCAN_CHECKS("warpInclusiveScanValid");
    T unused;
    if constexpr (WARPKIT_DETAIL_SCAN_OK) return detail::inclusiveDispatch<Width, false, true>(v, op, valid, unused);
    else return v;
}
/// warpInclusiveScanValid with the valid lanes' total in `total` (every lane).
template <int Width = 32, typename T, typename Op>
WARPKIT_DEVICE T warpInclusiveScanValid(T v, Op op, int valid, T& total) {
    WARPKIT_DETAIL_SCAN_CHECKS("warpInclusiveScanValid");
    if constexpr (WARPKIT_DETAIL_SCAN_OK) return detail::inclusiveDispatch<Width, true, true>(v, op, valid, total);
    else return v;
}

/// Exclusive scan of `v` with `op` seeded by `init` over each segment. All 32 lanes must call;
/// lane 0 of a segment gets init, lane i gets init op x0 op ... op x(i-1).
template <int Width = 32, typename T, typename Op> WARPKIT_DEVICE T warpExclusiveScan(T v, Op op, T init) {
    WARPKIT_DETAIL_SCAN_CHECKS("warpExclusiveScan");
    T unused;
    if constexpr (WARPKIT_DETAIL_SCAN_OK)
        return detail::exclusiveDispatch<Width, false, false>(v, op, init, 32, unused);
    else return v;
}
/// warpExclusiveScan that also gives every lane the segment's total (init not included).
template <int Width = 32, typename T, typename Op>
WARPKIT_DEVICE T warpExclusiveScan(T v, Op op, T init, T& total) {
    WARPKIT_DETAIL_SCAN_CHECKS("warpExclusiveScan");
    if constexpr (WARPKIT_DETAIL_SCAN_OK) return detail::exclusiveDispatch<Width, true, false>(v, op, init, 32, total);
    else return v;
}
/// warpExclusiveScan over the first `valid` (>= 1) lanes of each segment; lanes at positions
/// >= valid get init op (the valid lanes' total). All 32 lanes must call.
template <int Width = 32, typename T, typename Op>
WARPKIT_DEVICE T warpExclusiveScanValid(T v, Op op, T init, int valid) {
    WARPKIT_DETAIL_SCAN_CHECKS("warpExclusiveScanValid");
    T unused;
    if constexpr (WARPKIT_DETAIL_SCAN_OK)
        return detail::exclusiveDispatch<Width, false, true>(v, op, init, valid, unused);
    else return v;
}
/// warpExclusiveScanValid with the valid lanes' total (init not included) in `total` (every lane).
template <int Width = 32, typename T, typename Op>
WARPKIT_DEVICE T warpExclusiveScanValid(T v, Op op, T init, int valid, T& total) {
    WARPKIT_DETAIL_SCAN_CHECKS("warpExclusiveScanValid");
    if constexpr (WARPKIT_DETAIL_SCAN_OK)
        return detail::exclusiveDispatch<Width, true, true>(v, op, init, valid, total);
    else return v;
}

// ---- active lanes ---------------------------------------------------------------------------
// Scans over whichever lanes are active now (__activemask()), for code where some lanes have
// returned or branched away; they match warpReduceActive. Any non-empty set of lanes may call;
// the active lanes are taken in lane order (the k-th active lane is rank k), and each gets its own
// prefix over the active lanes of lower rank (inclusive: and its own value).

/// Inclusive scan of `v` with `op` over the active lanes. Any set of lanes may call; each gets
/// x(rank 0) op ... op x(own rank). op: associative (need not be commutative).
template <typename T, typename Op> WARPKIT_DEVICE T warpInclusiveScanActive(T v, Op op) {
    WARPKIT_CHECK_SHUFFLABLE(T, "warpInclusiveScanActive");
    if constexpr (detail::IsShufflable<T>::value) return detail::scanMaskImpl<false>(v, op, v, __activemask());
    else return v;
}
/// Exclusive scan of `v` with `op` seeded by `init` over the active lanes: the lowest active lane
/// gets init, the others init op x(rank 0) op ... op x(own rank - 1). Any set of lanes may call;
/// each gets its own prefix.
template <typename T, typename Op> WARPKIT_DEVICE T warpExclusiveScanActive(T v, Op op, T init) {
    WARPKIT_CHECK_SHUFFLABLE(T, "warpExclusiveScanActive");
    if constexpr (detail::IsShufflable<T>::value) return detail::scanMaskImpl<true>(v, op, init, __activemask());
    else return v;
}

#undef WARPKIT_DETAIL_SCAN_CHECKS
#undef WARPKIT_DETAIL_SCAN_OK

// ---- named scans ---------------------------------------------------------------------------
// warpInclusiveX<Width>(v[, total]), warpInclusiveXValid<Width>(v, valid[, total]) for X = Sum,
// Max, Min; warpExclusiveX<Width>(...) and warpExclusiveXValid<Width>(...) likewise, init = the
// identity (0 for Sum, the lowest value / -inf for Max, the highest / +inf for Min). All 32 lanes
// must call; every lane gets its own prefix (and the segment total). Types: see the header comment.
// warpInclusiveXActive(v) and warpExclusiveXActive(v): the same over the lanes active now (any set
// of lanes may call; rank order; the exclusive forms give the lowest active lane the identity).

#define WARPKIT_DETAIL_NAMED_SCAN(KIND, IMPL, NAME, OP)                                                        \
    template <int Width = 32, typename T> WARPKIT_DEVICE T warp##KIND##NAME(T v) {                             \
        WARPKIT_CHECK_WIDTH(Width, "warp" #KIND #NAME);                                                        \
        WARPKIT_CHECK_ARITH_TYPE(T, "warp" #KIND #NAME);                                                       \
        T unused;                                                                                              \
        if constexpr (Width >= 1 && Width <= 32 && detail::Arith<T>::supported)                                \
            return detail::IMPL##Builtin<Width, OP, false, false>(v, 32, unused);                              \
        else return v;                                                                                         \
    }                                                                                                          \
    template <int Width = 32, typename T> WARPKIT_DEVICE T warp##KIND##NAME(T v, T& total) {                   \
        WARPKIT_CHECK_WIDTH(Width, "warp" #KIND #NAME);                                                        \
        WARPKIT_CHECK_ARITH_TYPE(T, "warp" #KIND #NAME);                                                       \
        if constexpr (Width >= 1 && Width <= 32 && detail::Arith<T>::supported)                                \
            return detail::IMPL##Builtin<Width, OP, true, false>(v, 32, total);                                \
        else return v;                                                                                         \
    }                                                                                                          \
    template <int Width = 32, typename T> WARPKIT_DEVICE T warp##KIND##NAME##Valid(T v, int valid) {           \
        WARPKIT_CHECK_WIDTH(Width, "warp" #KIND #NAME "Valid");                                                \
        WARPKIT_CHECK_ARITH_TYPE(T, "warp" #KIND #NAME "Valid");                                               \
        T unused;                                                                                              \
        if constexpr (Width >= 1 && Width <= 32 && detail::Arith<T>::supported)                                \
            return detail::IMPL##Builtin<Width, OP, false, true>(v, valid, unused);                            \
        else return v;                                                                                         \
    }                                                                                                          \
    template <int Width = 32, typename T> WARPKIT_DEVICE T warp##KIND##NAME##Valid(T v, int valid, T& total) { \
        WARPKIT_CHECK_WIDTH(Width, "warp" #KIND #NAME "Valid");                                                \
        WARPKIT_CHECK_ARITH_TYPE(T, "warp" #KIND #NAME "Valid");                                               \
        if constexpr (Width >= 1 && Width <= 32 && detail::Arith<T>::supported)                                \
            return detail::IMPL##Builtin<Width, OP, true, true>(v, valid, total);                              \
        else return v;                                                                                         \
    }                                                                                                          \
    template <typename T> WARPKIT_DEVICE T warp##KIND##NAME##Active(T v) {                                     \
        WARPKIT_CHECK_ARITH_TYPE(T, "warp" #KIND #NAME "Active");                                              \
        if constexpr (detail::Arith<T>::supported) return detail::IMPL##Active<OP>(v);                         \
        else return v;                                                                                         \
    }

/// Inclusive prefix sums (see above).
WARPKIT_DETAIL_NAMED_SCAN(Inclusive, inclusive, Sum, Sum)
/// Inclusive prefix maxima; NaN from the first NaN on.
WARPKIT_DETAIL_NAMED_SCAN(Inclusive, inclusive, Max, Max)
/// Inclusive prefix minima; NaN from the first NaN on.
WARPKIT_DETAIL_NAMED_SCAN(Inclusive, inclusive, Min, Min)
/// Exclusive prefix sums: lane 0 of a segment gets 0.
WARPKIT_DETAIL_NAMED_SCAN(Exclusive, exclusive, Sum, Sum)
/// Exclusive prefix maxima: lane 0 of a segment gets the lowest value (-inf for floats).
WARPKIT_DETAIL_NAMED_SCAN(Exclusive, exclusive, Max, Max)
/// Exclusive prefix minima: lane 0 of a segment gets the highest value (+inf for floats).
WARPKIT_DETAIL_NAMED_SCAN(Exclusive, exclusive, Min, Min)
#undef WARPKIT_DETAIL_NAMED_SCAN

} // namespace warpkit
