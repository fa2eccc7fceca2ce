// warpkit/thread/softmax.cuh: the online-softmax state and the per-element softmax rules, for one
// thread (host or device). The warp, block and cluster forms build on these (warp/softmax.cuh,
// block/softmax.cuh, cluster/softmax.cuh); so do the device-level rowSoftmax and friends.
//
// SoftmaxState summarises a set of values x_i as {max, sum} with sum = sum_i exp(x_i - max), so
// softmax(x_j) = exp(x_j - max) / sum and log_softmax(x_j) = x_j - max - log(sum). States can be
// updated one value (or K values) at a time and merged in any grouping, so a row can be streamed
// in pieces and the pieces combined across lanes, warps, blocks or a cluster. The empty state is
// {-inf, 0}.
//
// Kinds (template parameter Kind):
//   SoftmaxPlain      y = exp(x - max) / sum(exp(x - max))
//   SoftmaxLog        y = x - max - log(sum(exp(x - max)))
//   SoftmaxMasked     as Plain, but a row whose elements are all -inf gives zeros (attention
//                     masks that hide a whole row)
//   SoftmaxLogMasked  as Log, but a row of all -inf gives -inf everywhere (log of those zeros)
//
// NaN and infinities, as PyTorch's torch.softmax / torch.log_softmax (these rules live here, in
// softmaxFactors and softmaxApply, and every warpkit softmax follows them):
//   * a NaN anywhere in a row makes every output of that row NaN;
//   * a +inf anywhere makes every output of the row NaN (exp(inf - inf) is NaN);
//   * -inf elements give 0 (Log: -inf) when the row has a finite element;
//   * a row of all -inf gives NaN everywhere (Plain, Log), zeros (Masked), -inf (LogMasked).
//
// Accuracy: the precise exp (the default, and what float rows use) is ex2.approx with the argument
// split into a rounded part and its error, so the only error beyond a few float ulps is the
// rounding of x - max itself; probabilities below 2^-126 flush to zero. The fast exp (Precise =
// false; the row primitives use it for __half and __nv_bfloat16 rows) is one ex2.approx of one
// FFMA: a few float ulps more, far below a 16-bit output's rounding.
//
// Example: cross-entropy loss of a row streamed by one warp (lane-strided), then the loss of `t`:
//     warpkit::SoftmaxState st = warpkit::softmaxStateEmpty();
//     for (int i = lane; i < n; i += 32) st = warpkit::softmaxStateUpdate(st, logits[i]);
//     st = warpkit::warpReduceSoftmaxState(st);              // every lane: the row's state
//     float loss = -warpkit::softmaxApply<warpkit::SoftmaxLog>(st, logits[t]);
#pragma once

#include "../ops.cuh"

namespace warpkit {

/// Which function the softmax primitives compute (see the header comment).
enum SoftmaxKind { SoftmaxPlain = 0, SoftmaxLog = 1, SoftmaxMasked = 2, SoftmaxLogMasked = 3 };

/// Online-softmax state: running max and running sum of exp(x - max).
struct SoftmaxState {
    float max;
    float sum;
};

/// What a row's outputs need, from its state, computed once per row (softmaxFactors):
/// `max` (0 for an all -inf row), `scale` = 1 / sum, `logSum` = log(sum), `log2Scale` = -log2(sum),
/// with the Kind's rule for an all -inf row folded in.
struct SoftmaxFactors {
    float max;
    float scale;
    float logSum;
    float log2Scale;
};

namespace detail {

WARPKIT_HD float negInf() { return -__builtin_huge_valf(); }

constexpr float kLog2e = 1.4426950408889634f; // log2(e) rounded to float

/// 2^a by ex2.approx (device), exp2f (host): -inf -> 0, NaN -> NaN.
WARPKIT_HD float exp2Approx(float a) {
#if defined(__CUDA_ARCH__)
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
    return r;
#else
    return exp2f(a);
#endif
}

/// exp(x - m) in float; warpkit's one exp.
///   Precise (default): m must not be -inf unless x is too (callers substitute 0 for an all -inf
///     max); NaN in, NaN out; arguments below -110 give 0. The rounding error of (x - m) * log2(e)
///     is carried separately, so the result is within a few float ulps of exp(fl(x - m)).
///     log2Scale must be 0.
///   Fast: 2^((x - m) * log2(e) + log2Scale), one FFMA and one ex2.approx: exp(x - m) times
///     2^log2Scale, so a softmax scale folds into the exponent. Infinities and NaN pass through
///     IEEE rules (x - m = -inf gives 0 for a finite log2Scale, NaN for +inf).
template <bool Precise = true, bool OneMul = false> WARPKIT_HD float expDiff(float x, float m, float log2Scale = 0.0f) {
    if constexpr (Precise) {
        float d = x - m;
        d = d < -110.0f ? -110.0f : d; // keeps NaN; -inf -> -110 (exp = 0) so the split stays finite
#if defined(__CUDA_ARCH__)
        const float Llo = 1.9259629911e-08f; // log2(e) - kLog2e
        // OneMul: th's multiply opaque to the compiler, so -th below is a negated operand, not a second
        // multiply (same bits; off by default: ptxas schedules such kernels with more registers).
        const float th = OneMul ? __fmul_rn(d, kLog2e) : d * kLog2e;
        const float tl = __fmaf_rn(d, kLog2e, -th) + d * Llo; // the rounding error of th, plus L's
        const float r = exp2Approx(th);
        return __fmaf_rn(r * tl, 0.6931471805599453f, r); // 2^(th + tl) ~ 2^th * (1 + tl ln 2)
#else
        (void)log2Scale;
        return expf(d);
#endif
    } else {
        return exp2Approx(fmaf(x - m, kLog2e, log2Scale));
    }
}

} // namespace detail

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

namespace detail {
/// softmaxStateUpdate of K values with the precise exp (Precise) or the fast one (16-bit rows,
/// whose rounding hides its error).
template <bool Precise, int K, typename T> WARPKIT_HD SoftmaxState softmaxStateUpdateExp(SoftmaxState s, const T (&v)[K]) {
    float m = s.max;
    for (int j = 0; j < K; ++j) m = Max{}(m, Arith<T>::to_acc(v[j]));
    if (m == negInf()) return s; // one branch per call: nothing but -inf yet
    float sum = s.sum * expDiff<Precise>(s.max, m); // s.max = -inf: 0
    for (int j = 0; j < K; ++j) sum += expDiff<Precise>(Arith<T>::to_acc(v[j]), m);
    if (m == __builtin_huge_valf()) sum = __builtin_nanf("");
    return SoftmaxState{m, sum};
}
} // namespace detail

/// Add K values at once: one max over them, then one exp per value against the new max and one
/// to rescale the old sum, with no branch per element. T: float, __half or __nv_bfloat16 (read
/// as float). Host or device; any thread, alone.
template <int K, typename T> WARPKIT_HD SoftmaxState softmaxStateUpdate(SoftmaxState s, const T (&v)[K]) {
    static_assert(K >= 1, "softmaxStateUpdate: the array must hold at least one value (K >= 1)");
    return detail::softmaxStateUpdateExp<true>(s, v);
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

/// softmaxStateMerge as an operator, for the generic warpReduce / blockReduce / clusterReduce.
struct SoftmaxStateMerge {
    WARPKIT_HD SoftmaxState operator()(SoftmaxState a, SoftmaxState b) const { return softmaxStateMerge(a, b); }
};

#define WARPKIT_CHECK_SOFTMAX_KIND(Kind, fn)                                              \
    static_assert((Kind) >= 0 && (Kind) <= 3,                                             \
                  fn ": template parameter Kind must be a SoftmaxKind (Plain, Log, Masked, LogMasked)")

/// The per-row factors of a row's state for the given Kind: one reciprocal and two logarithms per
/// row, so that each output costs a multiply (or one FFMA) instead of a division. Host or device.
template <int Kind = SoftmaxPlain> WARPKIT_HD SoftmaxFactors softmaxFactors(SoftmaxState s) {
    WARPKIT_CHECK_SOFTMAX_KIND(Kind, "softmaxFactors");
    const bool empty = s.max == detail::negInf(); // the whole row is -inf
    SoftmaxFactors f;
    f.max = empty ? 0.0f : s.max;
    f.scale = 1.0f / s.sum;       // all -inf: 1 / 0 = inf, and 0 * inf = NaN
    f.logSum = logf(s.sum);       // all -inf: -inf, and -inf - -inf = NaN
    f.log2Scale = -log2f(s.sum);  // all -inf: +inf, and -inf + inf = NaN
    if ((Kind & SoftmaxMasked) && empty) {
        f.scale = 0.0f;
        f.logSum = 0.0f;
        f.log2Scale = detail::negInf();
    }
    return f;
}

/// The output for value x of a row with factors f (softmaxFactors<Kind>(row state)). Precise:
/// the precise exp times the scale; otherwise the fast exp with the scale in its exponent (for
/// 16-bit outputs). Host or device.
template <int Kind = SoftmaxPlain, bool Precise = true> WARPKIT_HD float softmaxApply(const SoftmaxFactors& f, float x) {
    WARPKIT_CHECK_SOFTMAX_KIND(Kind, "softmaxApply");
    if constexpr (Kind & SoftmaxLog) return (x - f.max) - f.logSum; // x - max first: exact near max
    else if constexpr (Precise) return detail::expDiff(x, f.max) * f.scale;
    else return detail::expDiff<false>(x, f.max, f.log2Scale);
}

/// softmaxApply over K values in place (T: float, __half or __nv_bfloat16, computed in float).
template <int Kind = SoftmaxPlain, bool Precise = true, int K, typename T>
WARPKIT_HD void softmaxApply(const SoftmaxFactors& f, T (&v)[K]) {
    for (int j = 0; j < K; ++j)
        v[j] = detail::Arith<T>::from_acc(softmaxApply<Kind, Precise>(f, detail::Arith<T>::to_acc(v[j])));
}

/// The output for value x of the set `s` summarises (same rules as softmaxFactors; for many
/// values of one row, take softmaxFactors once and apply those). Host or device.
template <int Kind = SoftmaxPlain> WARPKIT_HD float softmaxApply(SoftmaxState s, float x) {
    return softmaxApply<Kind>(softmaxFactors<Kind>(s), x);
}

namespace detail {

template <typename T> struct IsSoftmaxType {
    static constexpr bool value =
        IsSame<T, float>::value || IsSame<T, __half>::value || IsSame<T, __nv_bfloat16>::value;
};

struct NoCombine {};

/// The state of a row spread over the calling threads' K slots each (unused slots -inf): the max
/// (rmax reduces a float over the threads holding this part), then the sum of exp(v - max) (rsum).
/// StoreExp: v[j] becomes exp(v[j] - max) on the way (the plain kinds' numerators). Precise: the
/// precise exp, else the fast one (OneMul: expDiff's). NaN or +inf in the row: the sum is NaN.
template <bool StoreExp, bool Precise, int K, typename RMax, typename RSum, bool OneMul = false>
WARPKIT_DEVICE SoftmaxState partState(float (&v)[K], RMax rmax, RSum rsum) {
    float m = v[0];
#pragma unroll
    for (int j = 1; j < K; ++j) m = Max{}(m, v[j]);
    m = rmax(m);
    const float ms = m == negInf() ? 0.0f : m; // all -inf: every exp is 0 and the sum 0
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < K; ++j) {
        const float e = expDiff<Precise, OneMul>(v[j], ms);
        if constexpr (StoreExp) v[j] = e;
        s += e;
    }
    return SoftmaxState{m, rsum(s)};
}

/// The body of every register-held row primitive: the row's state (partState; two float
/// reductions, faster on H100 than one reduction of {max, sum} states, whose tree costs an exp per
/// step), then the outputs in place, one exp per element. `combine` (optional) maps this part's
/// state to the whole row's, for rows split further (the blocks of a cluster). Returns the row's
/// state. `masked` adds SoftmaxMasked to Kind at run time.
template <int Kind, int K, typename T, typename RMax, typename RSum, typename Combine = NoCombine>
WARPKIT_DEVICE SoftmaxState softmaxCore(T (&io)[K], RMax rmax, RSum rsum, Combine combine = Combine{}, bool masked = false) {
    float v[K];
#pragma unroll
    for (int j = 0; j < K; ++j) v[j] = Arith<T>::to_acc(io[j]);
    // 16-bit rows take the fast exp: its error is far below a 16-bit output's rounding.
    const SoftmaxState part = partState<!(Kind & SoftmaxLog), sizeof(T) == 4>(v, rmax, rsum);
    SoftmaxState row = part;
    constexpr bool kSplit = !IsSame<Combine, NoCombine>::value;
    if constexpr (kSplit) row = combine(part);
    // `masked` (run time) adds SoftmaxMasked to Kind: the device layer's kernels take it as an argument.
    const SoftmaxFactors f = masked ? softmaxFactors<Kind | SoftmaxMasked>(row) : softmaxFactors<Kind>(row);
    if constexpr (Kind & SoftmaxLog) {
#pragma unroll
        for (int j = 0; j < K; ++j) io[j] = Arith<T>::from_acc((v[j] - f.max) - f.logSum);
    } else {
        float scale = f.scale;
        // This part's exps were relative to its own max. A part of only -inf (its exps all 0) in a
        // row that has other values gets scale * 0: zeros, or NaN when the row holds a NaN or +inf.
        if constexpr (kSplit) {
            const bool partEmpty = part.max == negInf() && row.max != negInf();
            scale *= partEmpty ? 0.0f : expDiff(part.max == negInf() ? 0.0f : part.max, f.max);
        }
#pragma unroll
        for (int j = 0; j < K; ++j) io[j] = Arith<T>::from_acc(v[j] * scale);
    }
    return row;
}

/// The state of a row spread over the calling threads' K slots each, with no outputs.
template <int K, typename T, typename RMax, typename RSum>
WARPKIT_DEVICE SoftmaxState rowStateCore(const T (&io)[K], RMax rmax, RSum rsum) {
    float v[K];
#pragma unroll
    for (int j = 0; j < K; ++j) v[j] = Arith<T>::to_acc(io[j]);
    return partState<false, sizeof(T) == 4>(v, rmax, rsum);
}

} // namespace detail

#define WARPKIT_CHECK_SOFTMAX_ARGS(T, K, Kind, fn)                                        \
    static_assert(::warpkit::detail::IsSoftmaxType<T>::value,                            \
                  fn ": element type T must be float, __half or __nv_bfloat16");          \
    static_assert((K) >= 1, fn ": template parameter K (values per thread) must be at least 1"); \
    WARPKIT_CHECK_SOFTMAX_KIND(Kind, fn)

} // namespace warpkit
