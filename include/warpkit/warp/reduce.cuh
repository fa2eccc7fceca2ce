// warpkit/warp/reduce.cuh: warp reductions over segments of any width, one value or K values a lane.
//
// Segments. A warp is split into segments of `Width` consecutive lanes (Width = 1..32, a
// template parameter, default 32): lanes [k*Width, (k+1)*Width) form segment k. When Width does
// not divide 32, the last 32 % Width lanes form one shorter segment of their own.
//
// Who gets the result:
//   * Width a power of two (1, 2, 4, 8, 16, 32): every lane of the segment, bitwise the same
//     value in each lane.
//   * any other Width: the segment's first lane (lane k*Width). Other lanes hold partial values.
//
// Participation. All 32 lanes of the warp must call the function together (converged), except
// for the *Active forms, which any subset of lanes may call.
//
// Valid-lane forms (`int valid`): only the first `valid` lanes of each segment contribute (valid >=
// Width: the whole segment). `valid` may differ from segment to segment (every lane of a segment
// passes its segment's count): each segment reads only its own lanes. A segment with no valid lane
// (valid <= 0) gets the identity from the named forms: 0 for Sum (-0.0 for floats), the lowest
// value (-inf) for Max, the highest (+inf) for Min. The generic form has no identity to give, so
// there valid must be >= 1 (WARPKIT_DEBUG traps otherwise).
//
// Element types of the named forms (Sum/Max/Min/ArgMax/ArgMin): int, unsigned, long long,
// unsigned long long, float, double, __half, __nv_bfloat16. __half and __nv_bfloat16 are
// reduced in float and rounded once. The generic warpReduce takes any trivially copyable type
// and any associative operator `T op(T, T)`; it need not be commutative.
//
// Commutative operators. The generic forms keep the lower lane's value on the left: the partial
// values slide down to the segment's first lane (shfl.down; op once a step, no selects) and are
// then broadcast to the segment, one more shuffle of T than a butterfly. An operator type that
// declares
//     static constexpr bool commutative = true;
// gets the butterfly instead (log2(Width) shuffles of T): lanes then combine their own value with
// their partner's in either order, so declare it only when op(a, b) and op(b, a) are bitwise equal
// (otherwise the lanes of a segment may end with different bits). Sum, Max and Min count as
// commutative on the element types of the named forms (on other types Sum is the type's own +).
//
// NaN: Max and Min propagate NaN (a segment holding a NaN gives NaN), as torch.max does; plain
// fmaxf would drop it. ArgMax/ArgMin treat NaN as the extreme and return its index.
// Sum follows IEEE: NaN or (+inf) + (-inf) give NaN.
//
// Fast paths: 32-bit integer Sum/Max/Min over a full warp compile to one redux.sync on sm_80+.
// A float Sum/Max/Min over a power-of-two Width uses exactly log2(Width) shuffles.
//
// Batched reductions (warpReduceBatched*, at the end): K independent values per lane, each
// reduced over the segment, in about K shuffles instead of K * log2(Width); the results are
// spread over the segment's lanes (see warpReduceBatched for which lane holds which).
#pragma once

#include "../ops.cuh"
#include "../detail/shfl.cuh"

namespace warpkit {
namespace detail {

template <typename...> struct MakeVoid { using type = void; };

__host__ __device__ constexpr int log2Pow2(int p) { return p <= 1 ? 0 : 1 + log2Pow2(p / 2); }

/// True when Op declares `static constexpr bool commutative = true;` (see the header comment).
template <typename Op, typename = void> struct IsCommutative { static constexpr bool value = false; };
template <typename Op> struct IsCommutative<Op, typename MakeVoid<decltype(Op::commutative)>::type> {
    static constexpr bool value = Op::commutative;
};

/// Keeps the `(v, int valid)` named forms out of overload resolution for cooperative-groups
/// groups (anything with thread_rank()), whose overloads `(group, v)` live in warp/cg.cuh.
template <typename T, typename = void> struct NotGroup { using type = int; };
template <typename T> struct NotGroup<T, typename MakeVoid<decltype(((const T*)nullptr)->thread_rank())>::type> {};

template <typename Op> struct IsBuiltinOp { static constexpr bool value = false; };
template <> struct IsBuiltinOp<Sum> { static constexpr bool value = true; };
template <> struct IsBuiltinOp<Max> { static constexpr bool value = true; };
template <> struct IsBuiltinOp<Min> { static constexpr bool value = true; };

/// Whether op may combine operands in either order: declared commutative, or Sum/Max/Min on an
/// element type of the named forms (on other types Sum is the type's own +, order kept).
template <typename Op, typename T> struct AnyOrder {
    static constexpr bool value = IsCommutative<Op>::value || (IsBuiltinOp<Op>::value && Arith<T>::supported);
};

/// ~0u when bit `b` of x is set, else 0 (one bit-field extract).
WARPKIT_DEVICE unsigned bitMask(unsigned x, int b) { return (unsigned)((int)(x << (31 - b)) >> 31); }

/// One butterfly combine of this lane's value with its partner's. Ordered: the lower lane's value
/// (the partner's when this lane is the upper one, upper = ~0u) goes on the left; the operands are
/// selected, so op runs once.
template <bool Ordered, typename T, typename Op>
WARPKIT_DEVICE T combinePair(T mine, T theirs, unsigned upper, Op op) {
    if constexpr (Ordered) return op(muxWords(upper, theirs, mine), muxWords(upper, mine, theirs));
    else return op(mine, theirs);
}

/// Sliding window toward the segment's first lane: after the step with offset o each lane holds op
/// over [lane, lane + 2o) (clipped to the first `len` lanes of its segment when Clip), lower lanes
/// on the left, so the segment's first lane ends with op over them all; other lanes hold partial
/// values. No operand selects, commutative op or not.
template <int Width, bool Clip, typename T, typename Op>
WARPKIT_DEVICE T warpSlideDown(T v, Op op, int slane, int len) {
#pragma unroll
    for (int o = 1; o < Width; o <<= 1) {
        const T other = shflDown(v, o, isPow2(Width) ? Width : 32);
        if constexpr (Clip) {
            if (slane + o < len) v = op(v, other);
        } else {
            v = op(v, other); // lanes whose window runs past the segment end hold unused values
        }
    }
    return v;
}

/// Segment reduction with every lane contributing. Unordered (commutative op): a butterfly, every
/// lane of a power-of-two segment gets the result. Ordered: the window slides down to the
/// segment's first lane (lower lanes on the left) and, unless Lead (only the first lane needs it),
/// is broadcast to the segment: one more shuffle instead of operand selects at every step. Widths
/// that are not a power of two: the first lane only.
template <int Width, bool Ordered, bool Lead = false, typename T, typename Op>
WARPKIT_DEVICE T warpReduceFull(T v, Op op) {
    if constexpr (Width == 1) {
        return v;
    } else if constexpr (isPow2(Width) && !Ordered) {
#pragma unroll
        for (int o = 1; o < Width; o <<= 1) v = op(v, shflXor(v, o, Width));
        return v;
    } else if constexpr (isPow2(Width)) {
        v = warpSlideDown<Width, false>(v, op, 0, Width);
        return Lead ? v : shflIdx(v, 0, Width);
    } else {
        const int slane = segLane<Width>();
        return warpSlideDown<Width, true>(v, op, slane, segLen<Width>(slane));
    }
}

/// Segment reduction over the first `valid` lanes of each segment, with no identity element.
/// Unordered, power-of-two Width: a butterfly where a lane adopts its partner's partial value when
/// its own group holds no valid lane. Otherwise the clipped sliding window of warpReduceFull.
template <int Width, bool Ordered, bool Lead = false, typename T, typename Op>
WARPKIT_DEVICE T warpReduceValid(T v, Op op, int valid) {
    WARPKIT_DEBUG_CHECK(valid >= 1, "warpReduce: valid lane count must be at least 1");
    if constexpr (Width == 1) {
        return v;
    } else if constexpr (isPow2(Width) && !Ordered) {
        const int slane = segLane<Width>();
#pragma unroll
        for (int o = 1; o < Width; o <<= 1) {
            T other = shflXor(v, o, Width);
            const bool mine = (slane & ~(o - 1)) < valid;          // my group has a valid lane
            const bool theirs = ((slane ^ o) & ~(o - 1)) < valid;  // partner group has one
            if (mine && theirs) v = op(v, other);
            else if (!mine) v = other;
        }
        return v;
    } else {
        const int slane = segLane<Width>();
        const int len = segLen<Width>(slane);
        v = warpSlideDown<Width, true>(v, op, slane, valid < len ? valid : len);
        if constexpr (isPow2(Width) && !Lead) return shflIdx(v, 0, Width);
        else return v;
    }
}

/// Reduction over the lanes of `mask` (the calling lanes: __activemask() for the Active forms, a
/// coalesced group's lanes in warp/cg.cuh); every lane of `mask` gets the result.
template <typename T, typename Op> WARPKIT_DEVICE T warpReduceMaskImpl(T v, Op op, unsigned mask) {
    if (mask == WARPKIT_FULL_MASK) return warpReduceFull<32, !AnyOrder<Op, T>::value>(v, op);
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

template <typename Op, typename T> WARPKIT_DEVICE T builtinReduceMask(T v, unsigned mask) {
#if WARPKIT_ARCH >= 800
    if constexpr (IsInt32<T>::value) return redux<Op>(mask, v);
#endif
    return Arith<T>::from_acc(warpReduceMaskImpl(Arith<T>::to_acc(v), Op{}, mask));
}

/// warpReduce(v, op) [and its valid-lane form]; Lead: only each segment's first lane needs the
/// result (an ordered operator then skips the broadcast). For the block reductions' stages.
template <int Width, bool Lead, typename T, typename Op> WARPKIT_DEVICE T warpReduceAny(T v, Op op) {
    if constexpr (IsBuiltinOp<Op>::value && Arith<T>::supported) return builtinReduce<Width, Op>(v);
    else return warpReduceFull<Width, !AnyOrder<Op, T>::value, Lead>(v, op);
}
template <int Width, bool Lead, typename T, typename Op> WARPKIT_DEVICE T warpReduceAny(T v, Op op, int valid) {
    if constexpr (IsBuiltinOp<Op>::value && Arith<T>::supported) return builtinReduceValid<Width, Op>(v, valid);
    else return warpReduceValid<Width, !AnyOrder<Op, T>::value, Lead>(v, op, valid);
}

} // namespace detail

// ---- generic operator ----------------------------------------------------------------------

/// Reduce `v` with `op` over each segment of Width lanes.
/// All 32 lanes must call. Result: every lane of the segment when Width is a power of two,
/// else the segment's first lane. T: any trivially copyable type; op: associative.
template <int Width = 32, typename T, typename Op> WARPKIT_DEVICE T warpReduce(T v, Op op) {
    WARPKIT_CHECK_WIDTH(Width, "warpReduce");
    WARPKIT_CHECK_SHUFFLABLE(T, "warpReduce");
    if constexpr (Width >= 1 && Width <= 32 && detail::IsShufflable<T>::value)
        return detail::warpReduceAny<Width, false>(v, op);
    else
        return v;
}

/// Like warpReduce, but only the first `valid` lanes of each segment contribute (1 <= valid, may
/// differ per segment; values >= Width mean the whole segment). All 32 lanes must still call; lanes past `valid`
/// may hold anything. Result lanes as for warpReduce.
template <int Width = 32, typename T, typename Op> WARPKIT_DEVICE T warpReduce(T v, Op op, int valid) {
    WARPKIT_CHECK_WIDTH(Width, "warpReduce");
    WARPKIT_CHECK_SHUFFLABLE(T, "warpReduce");
    if constexpr (Width >= 1 && Width <= 32 && detail::IsShufflable<T>::value)
        return detail::warpReduceAny<Width, false>(v, op, valid);
    else
        return v;
}

/// Reduce `v` with `op` over the lanes that are active now (__activemask()), for code where some
/// lanes have returned or branched away. Any non-empty set of lanes may call; every calling lane
/// gets the result. Lanes combine in lane order.
template <typename T, typename Op> WARPKIT_DEVICE T warpReduceActive(T v, Op op) {
    WARPKIT_CHECK_SHUFFLABLE(T, "warpReduceActive");
    if constexpr (detail::IsShufflable<T>::value) {
        if constexpr (detail::IsBuiltinOp<Op>::value && detail::Arith<T>::supported)
            return detail::builtinReduceMask<Op>(v, __activemask());
        else return detail::warpReduceMaskImpl(v, op, __activemask());
    } else {
        return v;
    }
}

// ---- named reductions ------------------------------------------------------------------------
// Generated for Sum, Max and Min: warpReduceX<Width>(v), warpReduceX<Width>(v, valid) and
// warpReduceXActive(v). Participation and result lanes as for the generic forms above.

#define WARPKIT_DETAIL_NAMED_REDUCE(NAME, OP)                                                               \
    template <int Width = 32, typename T> WARPKIT_DEVICE T warpReduce##NAME(T v) {                          \
        WARPKIT_CHECK_WIDTH(Width, "warpReduce" #NAME);                                                     \
        WARPKIT_CHECK_ARITH_TYPE(T, "warpReduce" #NAME);                                                    \
        if constexpr (Width >= 1 && Width <= 32 && detail::Arith<T>::supported)                             \
            return detail::builtinReduce<Width, OP>(v);                                                     \
        else return v;                                                                                      \
    }                                                                                                       \
    template <int Width = 32, typename T, typename detail::NotGroup<T>::type = 0>                           \
    WARPKIT_DEVICE T warpReduce##NAME(T v, int valid) {                                                     \
        WARPKIT_CHECK_WIDTH(Width, "warpReduce" #NAME);                                                     \
        WARPKIT_CHECK_ARITH_TYPE(T, "warpReduce" #NAME);                                                    \
        if constexpr (Width >= 1 && Width <= 32 && detail::Arith<T>::supported)                             \
            return detail::builtinReduceValid<Width, OP>(v, valid);                                         \
        else return v;                                                                                      \
    }                                                                                                       \
    template <typename T> WARPKIT_DEVICE T warpReduce##NAME##Active(T v) {                                  \
        WARPKIT_CHECK_ARITH_TYPE(T, "warpReduce" #NAME "Active");                                           \
        if constexpr (detail::Arith<T>::supported) return detail::builtinReduceMask<OP>(v, __activemask()); \
        else return v;                                                                                      \
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

// ---- batched reductions -----------------------------------------------------------------------
//
// warpReduceBatched<Width>(v, op) and the named Sum/Max/Min forms reduce each of the K values of
// `T v[K]` over the segment (value k of every lane of the segment, in lane order), in place.
//
// Which lane holds which result. Let P = warpBatchedLanes<Width>(), the largest power of two not
// above Width (Width itself when it is a power of two). On return, slot j of lane l of a segment
// (l = the lane's position in its segment, l < P) holds the reduction of value l + j*P, for every
// l + j*P < K; so value k sits in lane k % P, slot k / P, and each lane holds ceil(K / P) results
// in v[0 .. ceil(K / P)). With K == P that is one value per lane: lane k holds value k. All other
// slots, and every slot of lanes l >= P, hold unspecified values.
//
// How (recursive halving, a transposed butterfly). Step s pairs lane l with lane l ^ 2^s. Each
// lane holds M slots; the lower lane of a pair keeps the even slots, the upper lane the odd ones,
// and each sends the half it gives up to its partner, which combines it with its own half (lower
// lane's operand on the left): M/2 shuffles, and M becomes M/2. With M odd, the last slot is
// combined by both lanes of the pair (one more shuffle), and M becomes (M + 1) / 2; once M is 1
// a step is a plain butterfly step. After log2(P) steps each lane holds ceil(K / P) slots.
//
// Cost in shuffles of T (power-of-two Width): the sum of ceil(M / 2) over the log2(Width) steps,
// starting from M = K and halving (rounding up) each step: K - 1 for K == Width (31 for 32 values
// over 32 lanes, against 160 for 32 separate reductions), K - K / Width for a multiple of Width,
// and K - 1 + log2(Width / K) for a power of two K < Width. Each combine also costs two selects
// per 32-bit word to pick the halves (four for a non-commutative generic operator).
//
// Width not a power of two (full segments of Width lanes only): the first 2 * (Width - P) lanes
// of the segment are first combined in adjacent pairs (K shuffles), leaving P partial values in
// lane order; those are reduced as above, and ceil(K / P) more shuffles move the results to lanes
// 0 .. P-1. The last 32 % Width lanes of the warp form no segment here: they must call, their
// values are not used, and what they get back is unspecified.
//
// Participation: all 32 lanes of the warp must call together (converged). Types: the generic form
// any trivially copyable T and any associative op (commutative or not; see "Commutative
// operators" above); the named forms the element types of warpReduceSum (16-bit floats are
// reduced in float and rounded once). NaN as for the single-value forms.

/// Lanes of a segment of Width lanes that hold a batched reduction's results: the largest power of
/// two not above Width. Host or device.
template <int Width> __host__ __device__ constexpr int warpBatchedLanes() {
    return Width >= 32 ? 32 : Width >= 16 ? 16 : Width >= 8 ? 8 : Width >= 4 ? 4 : Width >= 2 ? 2 : 1;
}

namespace detail {

/// Steps Step .. Steps-1 of the recursive halving, with M slots live in v. `vlane`: this lane's
/// position among the P lanes that take part; xch(x, s): the value x of this lane's partner at
/// step s (the lane whose position differs in bit s).
template <int Step, int Steps, int M, bool Ordered, int K, typename T, typename Op, typename Xch>
WARPKIT_DEVICE void batchedHalve(T (&v)[K], Op op, int vlane, Xch xch) {
    if constexpr (Step < Steps) {
        constexpr int half = M / 2;
        const unsigned upper = bitMask((unsigned)vlane, Step);
#pragma unroll
        for (int i = 0; i < half; ++i) { // v[i] is written after v[2i] and v[2i + 1] are read
            const T send = muxWords(upper, v[2 * i], v[2 * i + 1]);
            const T keep = muxWords(upper, v[2 * i + 1], v[2 * i]);
            v[i] = combinePair<Ordered>(keep, xch(send, Step), upper, op);
        }
        if constexpr (M % 2 == 1) v[half] = combinePair<Ordered>(v[M - 1], xch(v[M - 1], Step), upper, op);
        batchedHalve<Step + 1, Steps, half + M % 2, Ordered>(v, op, vlane, xch);
    }
}

/// The batched reduction (layout and cost: see the section comment above warpBatchedLanes).
template <int Width, bool Ordered, int K, typename T, typename Op>
WARPKIT_DEVICE void warpReduceBatchedImpl(T (&v)[K], Op op) {
    constexpr int P = warpBatchedLanes<Width>();
    constexpr int Steps = log2Pow2(P);
    if constexpr (Width == 1) {
        (void)op;
    } else if constexpr (isPow2(Width)) {
        batchedHalve<0, Steps, K, Ordered>(v, op, segLane<Width>(),
                                           [](T x, int s) { return shflXor(x, 1 << s); });
    } else {
        constexpr int R = Width - P; // pairs folded first: lanes 2i and 2i + 1 for i < R
        const int slane = segLane<Width>();
        const int base = (int)laneId() - slane;
        const unsigned fold = 0u - (unsigned)(slane < 2 * R && (slane & 1) == 0);
#pragma unroll
        for (int k = 0; k < K; ++k) v[k] = muxWords(fold, op(v[k], shflDown(v[k], 1)), v[k]);
        // Position p of the P partial values (in lane order) lives in lane real(p) of the segment.
        auto real = [](int p) { return p < R ? 2 * p : p + R; };
        const int vlane = slane < 2 * R ? slane >> 1 : slane - R;
        batchedHalve<0, Steps, K, Ordered>(v, op, vlane,
                                           [&](T x, int s) { return shflIdx(x, base + real(vlane ^ (1 << s))); });
        const int src = base + real(slane < P ? slane : 0);
#pragma unroll
        for (int j = 0; j < (K + P - 1) / P; ++j) v[j] = shflIdx(v[j], src);
    }
}

/// Named batched reduction: 16-bit floats go through a float copy.
template <int Width, typename Op, int K, typename T> WARPKIT_DEVICE void batchedBuiltin(T (&v)[K]) {
    using A = typename Arith<T>::Acc;
    if constexpr (IsSame<A, T>::value) {
        warpReduceBatchedImpl<Width, false>(v, Op{});
    } else {
        constexpr int S = (K + warpBatchedLanes<Width>() - 1) / warpBatchedLanes<Width>();
        A a[K];
#pragma unroll
        for (int k = 0; k < K; ++k) a[k] = Arith<T>::to_acc(v[k]);
        warpReduceBatchedImpl<Width, false>(a, Op{});
#pragma unroll
        for (int j = 0; j < S; ++j) v[j] = Arith<T>::from_acc(a[j]);
    }
}

} // namespace detail

/// Reduce each of the K values of `v` with `op` over the segment, in place; value k's result ends
/// in lane k % P, slot k / P (P = warpBatchedLanes<Width>(); see the section comment above
/// warpBatchedLanes). All 32 lanes must call. T: any trivially copyable type; op: associative.
template <int Width = 32, int K, typename T, typename Op>
WARPKIT_DEVICE void warpReduceBatched(T (&v)[K], Op op) {
    WARPKIT_CHECK_WIDTH(Width, "warpReduceBatched");
    WARPKIT_CHECK_SHUFFLABLE(T, "warpReduceBatched");
    if constexpr (Width >= 1 && Width <= 32 && detail::IsShufflable<T>::value)
        detail::warpReduceBatchedImpl<Width, !detail::AnyOrder<Op, T>::value>(v, op);
}

// Generated for Sum, Max and Min: warpReduceBatchedX<Width>(v), in place, results laid out as for
// warpReduceBatched. All 32 lanes must call.
#define WARPKIT_DETAIL_BATCHED_NAMED(NAME, OP)                                            \
    template <int Width = 32, int K, typename T> WARPKIT_DEVICE void warpReduceBatched##NAME(T (&v)[K]) { \
        WARPKIT_CHECK_WIDTH(Width, "warpReduceBatched" #NAME);                            \
        WARPKIT_CHECK_ARITH_TYPE(T, "warpReduceBatched" #NAME);                           \
        if constexpr (Width >= 1 && Width <= 32 && detail::Arith<T>::supported)           \
            detail::batchedBuiltin<Width, OP>(v);                                         \
    }

/// Sums of K values per lane over each segment, spread over the segment's lanes.
WARPKIT_DETAIL_BATCHED_NAMED(Sum, Sum)
/// Maxima of K values per lane over each segment (NaN if any contributing value is NaN).
WARPKIT_DETAIL_BATCHED_NAMED(Max, Max)
/// Minima of K values per lane over each segment (NaN if any contributing value is NaN).
WARPKIT_DETAIL_BATCHED_NAMED(Min, Min)
#undef WARPKIT_DETAIL_BATCHED_NAMED

} // namespace warpkit
