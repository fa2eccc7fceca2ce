// warpkit/warp/reduce.cuh: warp reductions over segments of any width (block reductions at the end).
//
// Segments. A warp is split into segments of `Width` consecutive lanes (Width = 1..32, a
// template parameter, default 32): lanes [k*Width, (k+1)*Width) form segment k. When Width does
// not divide 32, the last 32 % Width lanes form one shorter segment of their own.
//
// Who gets the result:
//   * Width a power of two (1, 2, 4, 8, 16, 32): every lane of the segment (butterfly), bitwise
//     the same value in each lane.
//   * any other Width: the segment's first lane (lane k*Width). Other lanes hold partial values.
//
// Participation. All 32 lanes of the warp must call the function together (converged), except
// for the *Active forms, which any subset of lanes may call.
//
// Element types of the named forms (Sum/Max/Min/ArgMax/ArgMin): int, unsigned, long long,
// unsigned long long, float, double, __half, __nv_bfloat16. __half and __nv_bfloat16 are
// reduced in float and rounded once. The generic warpReduce takes any trivially copyable type
// and any associative operator `T op(T, T)`; it need not be commutative.
//
// NaN: Max and Min propagate NaN (a segment holding a NaN gives NaN), as torch.max does; plain
// fmaxf would drop it. ArgMax/ArgMin treat NaN as the extreme and return its index.
// Sum follows IEEE: NaN or (+inf) + (-inf) give NaN.
//
// Fast paths: 32-bit integer Sum/Max/Min over a full warp compile to one redux.sync on sm_80+.
// A float Sum/Max/Min over a power-of-two Width uses exactly log2(Width) shuffles.
#pragma once

#include "../ops.cuh"
#include "../detail/shfl.cuh"

namespace warpkit {
namespace detail {

/// Segment reduction with every lane contributing. Ordered: the lower-lane operand always goes
/// on the left (for non-commutative operators); unordered saves a select per step.
template <int Width, bool Ordered, typename T, typename Op>
WARPKIT_DEVICE T warpReduceFull(T v, Op op) {
    if constexpr (Width == 1) {
        return v;
    } else if constexpr (isPow2(Width)) {
#pragma unroll
        for (int o = 1; o < Width; o <<= 1) {
            T other = shflXor(v, o, Width);
            if constexpr (Ordered) v = (laneId() & o) ? op(other, v) : op(v, other);
            else v = op(v, other);
        }
        return v;
    } else {
        // Sliding window: after the step with offset o, each lane holds op over
        // [lane, lane + 2o) clipped to its segment; the segment's first lane ends with all of it.
        const int lane = (int)laneId();
        const int slane = segLane<Width>();
        const int len = (32 - (lane - slane)) < Width ? (32 - (lane - slane)) : Width;
#pragma unroll
        for (int o = 1; o < Width; o <<= 1) {
            T other = shflDown(v, o);
            if (slane + o < len) v = op(v, other);
        }
        return v;
    }
}

/// Segment reduction over the first `valid` lanes of each segment, with no identity element:
/// a lane adopts its partner's partial value when its own group holds no valid lane.
template <int Width, typename T, typename Op>
WARPKIT_DEVICE T warpReduceValid(T v, Op op, int valid) {
    WARPKIT_DEBUG_CHECK(valid >= 1, "warpReduce: valid lane count must be at least 1");
    if constexpr (Width == 1) {
        return v;
    } else if constexpr (isPow2(Width)) {
        const int slane = segLane<Width>();
#pragma unroll
        for (int o = 1; o < Width; o <<= 1) {
            T other = shflXor(v, o, Width);
            const bool mine = (slane & ~(o - 1)) < valid;          // my group has a valid lane
            const bool theirs = ((slane ^ o) & ~(o - 1)) < valid;  // partner group has one
            if (mine && theirs) v = (slane & o) ? op(other, v) : op(v, other);
            else if (!mine) v = other;
        }
        return v;
    } else {
        const int lane = (int)laneId();
        const int slane = segLane<Width>();
        int len = (32 - (lane - slane)) < Width ? (32 - (lane - slane)) : Width;
        len = valid < len ? valid : len;
#pragma unroll
        for (int o = 1; o < Width; o <<= 1) {
            T other = shflDown(v, o);
            if (slane + o < len) v = op(v, other);
        }
        return v;
    }
}

/// Reduction over whichever lanes are active; every active lane gets the result.
template <typename T, typename Op> WARPKIT_DEVICE T warpReduceActiveImpl(T v, Op op) {
    const unsigned mask = __activemask();
    if (mask == WARPKIT_FULL_MASK) return warpReduceFull<32, true>(v, op);
    const unsigned lane = laneId();
    const int n = __popc(mask);
    // Sliding window in rank order: read from the active lane `o` ranks above this one.
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        if (o >= n) break; // n is the same in every active lane
        const unsigned src = __fns(mask, lane, o + 1);
        const bool has = src < 32;
        T other = shfl<ShflIdx>(mask, v, has ? (int)src : (int)lane);
        if (has) v = op(v, other);
    }
    return shfl<ShflIdx>(mask, v, __ffs(mask) - 1);
}

template <typename Op> struct IsBuiltinOp { static constexpr bool value = false; };
template <> struct IsBuiltinOp<Sum> { static constexpr bool value = true; };
template <> struct IsBuiltinOp<Max> { static constexpr bool value = true; };
template <> struct IsBuiltinOp<Min> { static constexpr bool value = true; };

template <typename T> struct IsInt32 {
    static constexpr bool value = IsSame<T, int>::value || IsSame<T, unsigned>::value;
};

#if WARPKIT_ARCH >= 800
/// redux.sync: one instruction for a 32-bit integer Sum/Max/Min over the lanes in `mask`.
template <typename Op, typename T> WARPKIT_DEVICE T redux(unsigned mask, T v) {
    if constexpr (IsSame<Op, Sum>::value) return __reduce_add_sync(mask, v);
    else if constexpr (IsSame<Op, Max>::value) return __reduce_max_sync(mask, v);
    else return __reduce_min_sync(mask, v);
}
#endif

/// Sum/Max/Min of a supported type: 16-bit floats go through float; ints may use redux.sync.
template <int Width, typename Op, typename T> WARPKIT_DEVICE T builtinReduce(T v) {
#if WARPKIT_ARCH >= 800
    if constexpr (Width == 32 && IsInt32<T>::value) return redux<Op>(WARPKIT_FULL_MASK, v);
#endif
    return Arith<T>::from_acc(warpReduceFull<Width, false>(Arith<T>::to_acc(v), Op{}));
}

template <int Width, typename Op, typename T> WARPKIT_DEVICE T builtinReduceValid(T v, int valid) {
    const int slane = segLane<Width>();
    auto a = slane < valid ? Arith<T>::to_acc(v) : Identity<Op, typename Arith<T>::Acc>::value();
#if WARPKIT_ARCH >= 800
    if constexpr (Width == 32 && IsInt32<T>::value) return redux<Op>(WARPKIT_FULL_MASK, a);
#endif
    return Arith<T>::from_acc(warpReduceFull<Width, false>(a, Op{}));
}

template <typename Op, typename T> WARPKIT_DEVICE T builtinReduceActive(T v) {
#if WARPKIT_ARCH >= 800
    if constexpr (IsInt32<T>::value) return redux<Op>(__activemask(), v);
#endif
    return Arith<T>::from_acc(warpReduceActiveImpl(Arith<T>::to_acc(v), Op{}));
}

} // namespace detail

// ---- generic operator ----------------------------------------------------------------------

/// Reduce `v` with `op` over each segment of Width lanes.
/// All 32 lanes must call. Result: every lane of the segment when Width is a power of two,
/// else the segment's first lane. T: any trivially copyable type; op: associative.
template <int Width = 32, typename T, typename Op> WARPKIT_DEVICE T warpReduce(T v, Op op) {
    WARPKIT_CHECK_WIDTH(Width, "warpReduce");
    WARPKIT_CHECK_SHUFFLABLE(T, "warpReduce");
    if constexpr (Width >= 1 && Width <= 32 && detail::IsShufflable<T>::value) {
        if constexpr (detail::IsBuiltinOp<Op>::value && detail::Arith<T>::supported)
            return detail::builtinReduce<Width, Op>(v);
        else
            return detail::warpReduceFull<Width, true>(v, op);
    } else {
        return v;
    }
}

/// Like warpReduce, but only the first `valid` lanes of each segment contribute (1 <= valid;
/// values >= Width mean the whole segment). All 32 lanes must still call; lanes past `valid`
/// may hold anything. Result lanes as for warpReduce.
template <int Width = 32, typename T, typename Op> WARPKIT_DEVICE T warpReduce(T v, Op op, int valid) {
    WARPKIT_CHECK_WIDTH(Width, "warpReduce");
    WARPKIT_CHECK_SHUFFLABLE(T, "warpReduce");
    if constexpr (Width >= 1 && Width <= 32 && detail::IsShufflable<T>::value) {
        if constexpr (detail::IsBuiltinOp<Op>::value && detail::Arith<T>::supported)
            return detail::builtinReduceValid<Width, Op>(v, valid);
        else
            return detail::warpReduceValid<Width>(v, op, valid);
    } else {
        return v;
    }
}

/// Reduce `v` with `op` over the lanes that are active now (__activemask()), for code where some
/// lanes have returned or branched away. Any non-empty set of lanes may call; every calling lane
/// gets the result. Lanes combine in lane order.
template <typename T, typename Op> WARPKIT_DEVICE T warpReduceActive(T v, Op op) {
    WARPKIT_CHECK_SHUFFLABLE(T, "warpReduceActive");
    if constexpr (detail::IsShufflable<T>::value) {
        if constexpr (detail::IsBuiltinOp<Op>::value && detail::Arith<T>::supported)
            return detail::builtinReduceActive<Op>(v);
        else
            return detail::warpReduceActiveImpl(v, op);
    } else {
        return v;
    }
}

// ---- named reductions ------------------------------------------------------------------------
// Generated for Sum, Max and Min: warpReduceX<Width>(v), warpReduceX<Width>(v, valid) and
// warpReduceXActive(v). Participation and result lanes as for the generic forms above.

#define WARPKIT_DETAIL_NAMED_REDUCE(NAME, OP)                                             \
    template <int Width = 32, typename T> WARPKIT_DEVICE T warpReduce##NAME(T v) {        \
        WARPKIT_CHECK_WIDTH(Width, "warpReduce" #NAME);                                   \
        WARPKIT_CHECK_ARITH_TYPE(T, "warpReduce" #NAME);                                  \
        if constexpr (Width >= 1 && Width <= 32 && detail::Arith<T>::supported)           \
            return detail::builtinReduce<Width, OP>(v);                                   \
        else                                                                              \
            return v;                                                                     \
    }                                                                                     \
    template <int Width = 32, typename T> WARPKIT_DEVICE T warpReduce##NAME(T v, int valid) { \
        WARPKIT_CHECK_WIDTH(Width, "warpReduce" #NAME);                                   \
        WARPKIT_CHECK_ARITH_TYPE(T, "warpReduce" #NAME);                                  \
        if constexpr (Width >= 1 && Width <= 32 && detail::Arith<T>::supported)           \
            return detail::builtinReduceValid<Width, OP>(v, valid);                       \
        else                                                                              \
            return v;                                                                     \
    }                                                                                     \
    template <typename T> WARPKIT_DEVICE T warpReduce##NAME##Active(T v) {                \
        WARPKIT_CHECK_ARITH_TYPE(T, "warpReduce" #NAME "Active");                         \
        if constexpr (detail::Arith<T>::supported)                                        \
            return detail::builtinReduceActive<OP>(v);                                    \
        else                                                                              \
            return v;                                                                     \
    }

/// Sum over each segment (see the header comment for result lanes).
WARPKIT_DETAIL_NAMED_REDUCE(Sum, Sum)
/// Maximum over each segment; NaN if any contributing lane holds NaN.
WARPKIT_DETAIL_NAMED_REDUCE(Max, Max)
/// Minimum over each segment; NaN if any contributing lane holds NaN.
WARPKIT_DETAIL_NAMED_REDUCE(Min, Min)
#undef WARPKIT_DETAIL_NAMED_REDUCE

/// Largest value of each segment and the index that came with it (lowest index on ties; NaN
/// wins, as torch.argmax). All 32 lanes must call; result lanes as for warpReduce.
template <int Width = 32, typename T> WARPKIT_DEVICE ValueIndex<T> warpReduceArgMax(T value, int index) {
    WARPKIT_CHECK_ARITH_TYPE(T, "warpReduceArgMax");
    return warpReduce<Width>(ValueIndex<T>{value, index}, ArgMax{});
}
/// warpReduceArgMax over the first `valid` lanes of each segment.
template <int Width = 32, typename T> WARPKIT_DEVICE ValueIndex<T> warpReduceArgMax(T value, int index, int valid) {
    WARPKIT_CHECK_ARITH_TYPE(T, "warpReduceArgMax");
    return warpReduce<Width>(ValueIndex<T>{value, index}, ArgMax{}, valid);
}
/// Smallest value of each segment and its index (lowest index on ties; NaN wins, as
/// torch.argmin). All 32 lanes must call; result lanes as for warpReduce.
template <int Width = 32, typename T> WARPKIT_DEVICE ValueIndex<T> warpReduceArgMin(T value, int index) {
    WARPKIT_CHECK_ARITH_TYPE(T, "warpReduceArgMin");
    return warpReduce<Width>(ValueIndex<T>{value, index}, ArgMin{});
}
/// warpReduceArgMin over the first `valid` lanes of each segment.
template <int Width = 32, typename T> WARPKIT_DEVICE ValueIndex<T> warpReduceArgMin(T value, int index, int valid) {
    WARPKIT_CHECK_ARITH_TYPE(T, "warpReduceArgMin");
    return warpReduce<Width>(ValueIndex<T>{value, index}, ArgMin{}, valid);
}

} // namespace warpkit
