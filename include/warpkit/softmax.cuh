// warpkit/softmax.cuh: softmax of register-held rows (warp segment or whole block), log-softmax,
// a masked variant for attention, and an online-softmax state (running max, running sum).
//
// Layout. A row is spread over the calling threads' registers: each thread passes an array
// `float v[K]` (or __half / __nv_bfloat16: read and written in that type, all arithmetic in
// float). Any assignment of row elements to (thread, slot) works. Slots that hold no element of
// the row (the tail of a row shorter than threads * K) must hold -INFINITY: such padding changes
// neither the result nor the NaN/inf rules below. Their outputs are unspecified: do not store them.
//
// Kinds (template parameter Kind, default SoftmaxPlain):
//   SoftmaxPlain      y = exp(x - max) / sum(exp(x - max))
//   SoftmaxLog        y = x - max - log(sum(exp(x - max)))
//   SoftmaxMasked     as Plain, but a row whose elements are all -inf gives zeros (attention
//                     masks that hide a whole row)
//   SoftmaxLogMasked  as Log, but a row of all -inf gives -inf everywhere (log of those zeros)
//
// NaN and infinities, as PyTorch's torch.softmax / torch.log_softmax:
//   * a NaN anywhere in a row makes every output of that row NaN;
//   * a +inf anywhere makes every output of the row NaN (exp(inf - inf) is NaN);
//   * -inf elements give 0 (Log: -inf) when the row has a finite element;
//   * a row of all -inf gives NaN everywhere (Plain, Log), zeros (Masked), -inf (LogMasked).
//
// Accuracy: exp is ex2.approx with the argument split into a rounded part and its error, so the
// only error beyond a few float ulps is the rounding of x - max itself (as in any float softmax);
// probabilities below 2^-126 flush to zero.
#pragma once

#include "reduce.cuh"

namespace warpkit {

/// Which function the softmax primitives compute (see the header comment).
enum SoftmaxKind { SoftmaxPlain = 0, SoftmaxLog = 1, SoftmaxMasked = 2, SoftmaxLogMasked = 3 };

/// Online-softmax state: running max and running sum of exp(x - max) (see "online softmax").
struct SoftmaxState {
    float max;
    float sum;
};

namespace detail {

/// exp(x - m) in float. m must not be -inf unless x is too (callers substitute 0 for an
/// all -inf max). NaN in, NaN out; arguments below -110 give 0.
WARPKIT_HD float expDiff(float x, float m) {
    float d = x - m;
    d = d < -110.0f ? -110.0f : d; // keeps NaN; -inf -> -110 (exp = 0) so the split stays finite
#if defined(__CUDA_ARCH__)
    const float L = 1.4426950408889634f;          // log2(e) rounded to float
    const float Llo = 1.9259629911e-08f;          // log2(e) - L
    const float th = d * L;
    const float tl = __fmaf_rn(d, L, -th) + d * Llo; // the rounding error of th, plus L's
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(th));
    return __fmaf_rn(r * tl, 0.6931471805599453f, r); // 2^(th + tl) ~ 2^th * (1 + tl ln 2)
#else
    return expf(d);
#endif
}

WARPKIT_HD float negInf() { return -__builtin_huge_valf(); }


} // namespace detail

// ---- online softmax ------------------------------------------------------------------------
//
// SoftmaxState summarises a set of values x_i as (max, sum) with sum = sum_i exp(x_i - max), so
// softmax(x_j) = exp(x_j - max) / sum and log_softmax(x_j) = x_j - max - log(sum). States can be
// updated one value at a time and merged in any grouping, so a row can be streamed in pieces
// (FlashAttention-style) and the pieces combined across lanes, warps, blocks or a cluster.
// The empty state is {-inf, 0}. NaN or +inf in the set makes sum NaN, so softmaxApply gives NaN.
//
// Example: cross-entropy loss of a row streamed by one warp (lane-strided), then the loss of `t`:
//     warpkit::SoftmaxState st = warpkit::softmaxStateEmpty();
//     for (int i = lane; i < n; i += 32) st = warpkit::softmaxStateUpdate(st, logits[i]);
//     st = warpkit::warpReduceSoftmaxState(st);              // every lane: the row's state
//     float loss = -warpkit::softmaxApply<warpkit::SoftmaxLog>(st, logits[t]);

/// The state of no values: {-inf, 0}. Host or device.
WARPKIT_HD SoftmaxState softmaxStateEmpty() { return SoftmaxState{detail::negInf(), 0.0f}; }

/// Add one value to a state (one exp). Host or device; any thread, alone.
WARPKIT_HD SoftmaxState softmaxStateUpdate(SoftmaxState s, float x) {
    const float m = Max{}(s.max, x);
    if (m == detail::negInf()) return s;
    float sum;
    if (x > s.max) sum = s.sum * detail::expDiff(s.max, x) + 1.0f;
    else sum = s.sum + detail::expDiff(x, s.max); // NaN x, or x == max == +inf: NaN
    if (m == __builtin_huge_valf()) sum = __builtin_nanf("");
    return SoftmaxState{m, sum};
}

/// Merge two states (the state of the union of their values): one exp. Host or device.
/// Associative and commutative up to rounding.
WARPKIT_HD SoftmaxState softmaxStateMerge(SoftmaxState a, SoftmaxState b) {
    const float m = Max{}(a.max, b.max);
    if (m == detail::negInf()) return softmaxStateEmpty();
    const bool aBig = a.max >= b.max; // NaN: false, and then the exp below is NaN
    const SoftmaxState big = aBig ? a : b, small = aBig ? b : a;
    return SoftmaxState{m, big.sum + small.sum * detail::expDiff(small.max, big.max)};
}

/// softmaxStateMerge as an operator, for the generic warpReduce / blockReduce.
struct SoftmaxStateMerge {
    WARPKIT_HD SoftmaxState operator()(SoftmaxState a, SoftmaxState b) const { return softmaxStateMerge(a, b); }
};

/// Merge the states of each segment of Width lanes (1..32). All 32 lanes must call. Result: every
/// lane of the segment when Width is a power of two, else the segment's first lane.
template <int Width = 32> WARPKIT_DEVICE SoftmaxState warpReduceSoftmaxState(SoftmaxState s) {
    WARPKIT_CHECK_WIDTH(Width, "warpReduceSoftmaxState");
    // The merge is commutative: the unordered butterfly saves a select (and a second exp) per step.
    if constexpr (Width >= 1 && Width <= 32) return detail::warpReduceFull<Width, false>(s, SoftmaxStateMerge{});
    else return s;
}

/// The softmax output of value x of the set `s` summarises, for the given Kind (same NaN/inf rules
/// as the row primitives). Host or device.
template <int Kind = SoftmaxPlain> WARPKIT_HD float softmaxApply(SoftmaxState s, float x) {
    static_assert(Kind >= 0 && Kind <= 3, "softmaxApply: template parameter Kind must be a SoftmaxKind");
    const bool empty = s.max == detail::negInf();
    if constexpr (Kind & SoftmaxLog) {
        if ((Kind & SoftmaxMasked) && empty) return detail::negInf();
        return (x - s.max) - logf(s.sum); // x - max first: exact when x is near max
    } else {
        if (empty) return (Kind & SoftmaxMasked) ? 0.0f : __builtin_nanf("");
        return detail::expDiff(x, s.max) / s.sum;
    }
}

namespace detail {

struct NoCombine {};

/// The shared body of every row primitive: max over the row (rmax reduces a float over the
/// threads holding it), then v = exp(v - max) in place and its sum (rsum), then the scale: one
/// exp per element, two float reductions (measured faster on H100 than one reduction of
/// {max, sum} states, whose tree costs an exp per step). `combine` (optional) maps this part's
/// {max, sum} to the whole row's, for rows split further (a thread-block cluster).
template <int Kind, int K, typename T, typename RMax, typename RSum, typename Combine = NoCombine>
WARPKIT_DEVICE void softmaxCore(T (&io)[K], RMax rmax, RSum rsum, Combine combine = Combine{}) {
    float v[K];
#pragma unroll
    for (int j = 0; j < K; ++j) v[j] = Arith<T>::to_acc(io[j]);
    float m = v[0];
#pragma unroll
    for (int j = 1; j < K; ++j) m = Max{}(m, v[j]);
    m = rmax(m);
    const float ms = m == negInf() ? 0.0f : m; // all -inf: every exp is 0 and the sum 0
    float s = 0.0f;
    if constexpr (Kind & SoftmaxLog) {
#pragma unroll
        for (int j = 0; j < K; ++j) s += expDiff(v[j], ms);
    } else {
#pragma unroll
        for (int j = 0; j < K; ++j) { v[j] = expDiff(v[j], ms); s += v[j]; }
    }
    s = rsum(s); // NaN or +inf in the row: NaN
    float M = m, S = s;
    constexpr bool kSplit = !IsSame<Combine, NoCombine>::value;
    if constexpr (kSplit) {
        const SoftmaxState g = combine(SoftmaxState{m, s});
        M = g.max;
        S = g.sum;
    }
    const bool empty = M == negInf(); // the whole row is -inf
    if constexpr (Kind & SoftmaxLog) {
        const float gm = empty ? 0.0f : M;
        float ls = logf(S);                             // all -inf: log 0 = -inf; -inf - -inf = NaN
        if ((Kind & SoftmaxMasked) && empty) ls = 0.0f; // masked: y = x = -inf
#pragma unroll
        for (int j = 0; j < K; ++j) io[j] = Arith<T>::from_acc((v[j] - gm) - ls);
    } else {
        float scale = 1.0f / S;                         // all -inf: 0 * (1 / 0) = NaN
        if constexpr (kSplit) scale *= expDiff(m, empty ? 0.0f : M); // this part's share
        if ((Kind & SoftmaxMasked) && empty) scale = 0.0f;
#pragma unroll
        for (int j = 0; j < K; ++j) io[j] = Arith<T>::from_acc(v[j] * scale);
    }
}

template <typename T> struct IsSoftmaxType {
    static constexpr bool value =
        IsSame<T, float>::value || IsSame<T, __half>::value || IsSame<T, __nv_bfloat16>::value;
};

} // namespace detail

#define WARPKIT_CHECK_SOFTMAX_ARGS(T, K, Kind, fn)                                        \
    static_assert(::warpkit::detail::IsSoftmaxType<T>::value,                            \
                  fn ": element type T must be float, __half or __nv_bfloat16");          \
    static_assert((K) >= 1, fn ": template parameter K (values per thread) must be at least 1"); \
    static_assert((Kind) >= 0 && (Kind) <= 3,                                             \
                  fn ": template parameter Kind must be a SoftmaxKind (Plain, Log, Masked, LogMasked)")

/// Softmax of rows held by segments of Width lanes (Width = 1, 2, 4, 8, 16 or 32): each segment
/// is one row, each lane holds K of its values in `v` (unused slots = -inf), and every lane gets
/// its own K results back in place. All 32 lanes of the warp must call, converged.
template <int Width = 32, int K = 1, int Kind = SoftmaxPlain, typename T>
WARPKIT_DEVICE void warpSoftmax(T (&v)[K]) {
    WARPKIT_CHECK_POW2_WIDTH(Width, "warpSoftmax");
    WARPKIT_CHECK_SOFTMAX_ARGS(T, K, Kind, "warpSoftmax");
    if constexpr (detail::isPow2(Width) && Width <= 32 && detail::IsSoftmaxType<T>::value && K >= 1)
        detail::softmaxCore<Kind>(v, [](float m) { return warpReduce<Width>(m, Max{}); },
                                  [](float s) { return warpReduce<Width>(s, Sum{}); });
}

/// Log-softmax of segment rows: warpSoftmax with Kind = SoftmaxLog.
template <int Width = 32, int K = 1, typename T> WARPKIT_DEVICE void warpLogSoftmax(T (&v)[K]) {
    warpSoftmax<Width, K, SoftmaxLog>(v);
}

/// Softmax of one row held by the whole block: each thread holds K values in `v` (unused slots
/// = -inf; a row of length n fits when n <= threads * K) and gets its own K results in place.
/// Every thread of the block must call (any shape, 1..1024 threads). BlockThreads: the block's
/// size when known at compile time (faster), 0 for blockDim at run time. Two blockReduce calls
/// (max, then sum: four barriers); back-to-back calls need no barrier between them.
template <int BlockThreads = 0, int K = 1, int Kind = SoftmaxPlain, typename T>
WARPKIT_DEVICE void blockSoftmax(T (&v)[K]) {
    WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockSoftmax");
    WARPKIT_CHECK_SOFTMAX_ARGS(T, K, Kind, "blockSoftmax");
    constexpr int B = (BlockThreads >= 0 && BlockThreads <= 1024) ? BlockThreads : 0; // one error only
    __shared__ BlockReduceScratch<float, B> wk_softmax_red;
    if constexpr (detail::IsSoftmaxType<T>::value && K >= 1 && B == BlockThreads)
        detail::softmaxCore<Kind>(v, [](float m) { return blockReduce<B>(m, Max{}, wk_softmax_red); },
                                  [](float s) { return blockReduce<B>(s, Sum{}, wk_softmax_red); });
}

/// Log-softmax of a block-held row: blockSoftmax with Kind = SoftmaxLog.
template <int BlockThreads = 0, int K = 1, typename T> WARPKIT_DEVICE void blockLogSoftmax(T (&v)[K]) {
    blockSoftmax<BlockThreads, K, SoftmaxLog>(v);
}

/// Merge the states of every thread of the block; every thread gets the result. Every thread of
/// the block must call (any shape, 1..1024 threads). BlockThreads as for blockSoftmax. Built on
/// blockReduce: calls may follow each other directly.
template <int BlockThreads = 0> WARPKIT_DEVICE SoftmaxState blockReduceSoftmaxState(SoftmaxState s) {
    WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockReduceSoftmaxState");
    constexpr int B = (BlockThreads >= 0 && BlockThreads <= 1024) ? BlockThreads : 0; // one error only
    return blockReduce<B>(s, SoftmaxStateMerge{});
}

} // namespace warpkit
