// warpkit/warp/packed.cuh: warp reductions and scans of packed 16-bit pairs, __half2 and
// __nv_bfloat162, lane-wise: the .x halves combine with each other and the .y halves with each
// other, as two independent reductions or scans carried in one register.
//
// Included by warpkit/reduce.cuh, warpkit/scan.cuh and warpkit/block/reduce.cuh; the overloads
// below sit next to the scalar named forms of warp/reduce.cuh and warp/scan.cuh (same names, same
// segments, participation and result lanes), so warpReduceSum<16>(h2) picks them.
//
// Precise forms (warpReduceSum/Max/Min, warpInclusiveSum/Max/Min, warpExclusiveSum/Max/Min and the
// valid-lane and active-lane reductions): each pair is widened to float2, combined in float, and
// rounded once at the end, as the scalar __half / __nv_bfloat16 forms do; a step moves 8 bytes (two
// shuffles). Max and Min lose nothing either way, so on sm_80+ they combine the pairs with the
// packed NaN-propagating instruction instead (HMNMX2, one shuffle a step; bf16x2 too on sm_90).
//
// Fast forms (warpReduceSumFast/MaxFast/MinFast): the pairs stay packed, one shuffle and one
// packed HADD2 / HMNMX2 a step. Max and Min are exact (same bits as the precise forms). Sum rounds
// to 16 bits after each of the ceil(log2(Width)) steps: relative to
// the sum of |x|, the error is at most about steps * u, u = 2^-11 for __half (2^-8 for
// __nv_bfloat16): up to 5 * 2^-11 = 0.24% (__half) or 2% (bf16) of sum |x| over 32 lanes, where
// the precise form rounds once (2^-11 / 2^-8 relative to the result). A __half partial sum above
// 65504 becomes inf where the precise form could still round the final sum to a finite value.
//
// NaN: Max and Min propagate NaN in each half on its own; Sum follows IEEE.
#pragma once

#include "reduce.cuh"
#include "scan.cuh"

namespace warpkit {
namespace detail {

/// Lane-wise operators on float2 (the precise forms' accumulator); commutative bit for bit.
struct PairSum {
    static constexpr bool commutative = true;
    WARPKIT_HD float2 operator()(float2 a, float2 b) const { return make_float2(a.x + b.x, a.y + b.y); }
};
struct PairMax {
    static constexpr bool commutative = true;
    WARPKIT_HD float2 operator()(float2 a, float2 b) const { return make_float2(maxNaN(a.x, b.x), maxNaN(a.y, b.y)); }
};
struct PairMin {
    static constexpr bool commutative = true;
    WARPKIT_HD float2 operator()(float2 a, float2 b) const { return make_float2(minNaN(a.x, b.x), minNaN(a.y, b.y)); }
};

/// Lane-wise operators on the packed pairs themselves (the fast forms): HADD2, HMNMX2.NAN.
struct PackedSum {
    static constexpr bool commutative = true;
    template <typename P> WARPKIT_DEVICE P operator()(P a, P b) const { return __hadd2(a, b); }
};
struct PackedMax {
    static constexpr bool commutative = true;
    template <typename P> WARPKIT_DEVICE P operator()(P a, P b) const {
#if WARPKIT_ARCH >= 800
        return __hmax2_nan(a, b);
#else
        return Packed16<P>::from_acc(PairMax{}(Packed16<P>::to_acc(a), Packed16<P>::to_acc(b)));
#endif
    }
};
struct PackedMin {
    static constexpr bool commutative = true;
    template <typename P> WARPKIT_DEVICE P operator()(P a, P b) const {
#if WARPKIT_ARCH >= 800
        return __hmin2_nan(a, b);
#else
        return Packed16<P>::from_acc(PairMin{}(Packed16<P>::to_acc(a), Packed16<P>::to_acc(b)));
#endif
    }
};

/// The float2 operator of a built-in Sum/Max/Min, its packed operator and its identity.
template <typename Op> struct PairOf;
template <> struct PairOf<Sum> {
    using Pair = PairSum;
    using Packed = PackedSum;
    static WARPKIT_HD float2 identity() { return make_float2(-0.0f, -0.0f); }
    static WARPKIT_HD float2 init() { return make_float2(0.0f, 0.0f); } // exclusive lane 0: +0
};
template <> struct PairOf<Max> {
    using Pair = PairMax;
    using Packed = PackedMax;
    static WARPKIT_HD float2 identity() { return make_float2(-__builtin_huge_valf(), -__builtin_huge_valf()); }
    static WARPKIT_HD float2 init() { return identity(); }
};
template <> struct PairOf<Min> {
    using Pair = PairMin;
    using Packed = PackedMin;
    static WARPKIT_HD float2 identity() { return make_float2(__builtin_huge_valf(), __builtin_huge_valf()); }
    static WARPKIT_HD float2 init() { return identity(); }
};

/// M(P, OP) for OP = Sum, Max, Min, the operators PairOf knows: generates the named forms of the
/// pair type P here and in block/reduce.cuh and block/scan.cuh.
#define WARPKIT_DETAIL_PACKED_OPS(M, P) M(P, Sum) M(P, Max) M(P, Min)

/// Max and Min are exact in 16 bits: the packed instruction where the hardware has it.
template <typename Op> struct PackedIsExact {
    static constexpr bool value = !IsSame<Op, Sum>::value && WARPKIT_ARCH >= 800;
};

template <int Width, typename Op, typename P> WARPKIT_DEVICE P packedReduce(P v) {
    if constexpr (PackedIsExact<Op>::value) return warpReduceAny<Width, false>(v, typename PairOf<Op>::Packed{});
    else return Packed16<P>::from_acc(warpReduceAny<Width, false>(Packed16<P>::to_acc(v), typename PairOf<Op>::Pair{}));
}
template <int Width, typename Op, typename P> WARPKIT_DEVICE P packedReduceValid(P v, int valid) {
    const float2 a = segLane<Width>() < valid ? Packed16<P>::to_acc(v) : PairOf<Op>::identity();
    return Packed16<P>::from_acc(warpReduceAny<Width, false>(a, typename PairOf<Op>::Pair{}));
}
template <typename Op, typename P> WARPKIT_DEVICE P packedReduceActive(P v) {
    const float2 a = Packed16<P>::to_acc(v);
    return Packed16<P>::from_acc(warpReduceMaskImpl(a, typename PairOf<Op>::Pair{}, __activemask()));
}
template <int Width, typename Op, bool Exclusive, bool WantTotal, typename P>
WARPKIT_DEVICE P packedScan(P v, P& total) {
    const float2 incl = inclusiveFull<Width>(Packed16<P>::to_acc(v), typename PairOf<Op>::Pair{});
    if constexpr (WantTotal)
        total = Packed16<P>::from_acc(Width == 1 ? incl : segBroadcast<Width>(incl, segLastLane<Width>()));
    if constexpr (Exclusive)
        return Packed16<P>::from_acc(
            exclusiveFromInclusive<Width, false>(incl, typename PairOf<Op>::Pair{}, PairOf<Op>::init()));
    else return Packed16<P>::from_acc(incl);
}

} // namespace detail

// Generated for P = __half2 and __nv_bfloat162 and X = Sum, Max, Min (participation and result
// lanes as the scalar forms in warp/reduce.cuh and warp/scan.cuh):
//   warpReduceX<Width>(P v), warpReduceX<Width>(P v, int valid), warpReduceXActive(P v),
//   warpReduceXFast<Width>(P v),
//   warpInclusiveX<Width>(P v[, P& total]), warpExclusiveX<Width>(P v[, P& total]).
// valid: the first `valid` lanes of each segment contribute; valid = 0 gives the identity
// (0 for Sum, -inf for Max, +inf for Min), rounded to P.
#define WARPKIT_DETAIL_PACKED(P, OP)                                                                            \
    template <int Width = 32> WARPKIT_DEVICE P warpReduce##OP(P v) {                                            \
        WARPKIT_CHECK_WIDTH(Width, "warpReduce" #OP);                                                           \
        if constexpr (Width >= 1 && Width <= 32) return detail::packedReduce<Width, OP>(v);                     \
        else return v;                                                                                          \
    }                                                                                                           \
    template <int Width = 32> WARPKIT_DEVICE P warpReduce##OP(P v, int valid) {                                 \
        WARPKIT_CHECK_WIDTH(Width, "warpReduce" #OP);                                                           \
        if constexpr (Width >= 1 && Width <= 32) return detail::packedReduceValid<Width, OP>(v, valid);         \
        else return v;                                                                                          \
    }                                                                                                           \
    WARPKIT_DEVICE P warpReduce##OP##Active(P v) { return detail::packedReduceActive<OP>(v); }                  \
    template <int Width = 32> WARPKIT_DEVICE P warpReduce##OP##Fast(P v) {                                      \
        WARPKIT_CHECK_WIDTH(Width, "warpReduce" #OP "Fast");                                                    \
        if constexpr (Width >= 1 && Width <= 32)                                                                \
            return detail::warpReduceAny<Width, false>(v, detail::PairOf<OP>::Packed{});                        \
        else return v;                                                                                          \
    }                                                                                                           \
    template <int Width = 32> WARPKIT_DEVICE P warpInclusive##OP(P v) {                                         \
        WARPKIT_CHECK_WIDTH(Width, "warpInclusive" #OP);                                                        \
        P unused;                                                                                               \
        if constexpr (Width >= 1 && Width <= 32) return detail::packedScan<Width, OP, false, false>(v, unused); \
        else return v;                                                                                          \
    }                                                                                                           \
    template <int Width = 32> WARPKIT_DEVICE P warpInclusive##OP(P v, P& total) {                               \
        WARPKIT_CHECK_WIDTH(Width, "warpInclusive" #OP);                                                        \
        if constexpr (Width >= 1 && Width <= 32) return detail::packedScan<Width, OP, false, true>(v, total);   \
        else return v;                                                                                          \
    }                                                                                                           \
    template <int Width = 32> WARPKIT_DEVICE P warpExclusive##OP(P v) {                                         \
        WARPKIT_CHECK_WIDTH(Width, "warpExclusive" #OP);                                                        \
        P unused;                                                                                               \
        if constexpr (Width >= 1 && Width <= 32) return detail::packedScan<Width, OP, true, false>(v, unused);  \
        else return v;                                                                                          \
    }                                                                                                           \
    template <int Width = 32> WARPKIT_DEVICE P warpExclusive##OP(P v, P& total) {                               \
        WARPKIT_CHECK_WIDTH(Width, "warpExclusive" #OP);                                                        \
        if constexpr (Width >= 1 && Width <= 32) return detail::packedScan<Width, OP, true, true>(v, total);    \
        else return v;                                                                                          \
    }

// The fast forms exist for the packed pairs only: any other T stops with a readable error.
#define WARPKIT_DETAIL_FAST_ONLY(NAME)                                                        \
    template <int Width = 32, typename T> WARPKIT_DEVICE T warpReduce##NAME##Fast(T v) {      \
        static_assert(detail::Packed16<T>::value,                                             \
                      "warpReduce" #NAME "Fast: element type T must be "                      \
                      "__half2 or __nv_bfloat162 (use warpReduce" #NAME " for other types)"); \
        return v;                                                                             \
    }
/// Readable errors for a fast form called with a type that is not a packed pair.
WARPKIT_DETAIL_FAST_ONLY(Sum)
WARPKIT_DETAIL_FAST_ONLY(Max)
WARPKIT_DETAIL_FAST_ONLY(Min)
#undef WARPKIT_DETAIL_FAST_ONLY

/// Lane-wise sums (precise: float accumulation; Fast: packed HADD2), maxima and minima (NaN
/// propagates per half) of __half2 pairs, reductions and scans as listed above.
WARPKIT_DETAIL_PACKED_OPS(WARPKIT_DETAIL_PACKED, __half2)
/// The same for __nv_bfloat162 pairs (Fast Sum: packed bf16x2 add; Max/Min: packed on sm_80+).
WARPKIT_DETAIL_PACKED_OPS(WARPKIT_DETAIL_PACKED, __nv_bfloat162)
#undef WARPKIT_DETAIL_PACKED

} // namespace warpkit
