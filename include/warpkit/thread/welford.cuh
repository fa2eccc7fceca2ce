// warpkit/thread/welford.cuh: Welford's running mean and variance, for one thread (host or
// device). The warp, block and cluster forms build on these (warp/welford.cuh, block/welford.cuh,
// cluster/welford.cuh).
//
// WelfordState summarises a set of n values x_i as {count = n, mean, m2 = sum_i (x_i - mean)^2}.
// States can be updated one value (or K values) at a time and merged in any grouping (Chan et al.),
// so a row can be streamed in pieces and the pieces combined across lanes, warps, blocks or a
// cluster. The empty state is {0, 0, 0} (welfordEmpty); build states only through these functions.
//
// Precision. mean and m2 are floats; count is an exact 32-bit integer, so counts go past 2^24
// (where a float count would stop counting) up to 2^32 - 1 values a state (counts that add up past
// that wrap around). Each merge takes its weight nb / (na + nb) in float from the exact counts:
// the mean moves by (mean_b - mean_a) times that weight, so states of nearly equal means (a large
// mean with a tiny spread, 1e6 + N(0, 1e-3)) merge without cancellation, and m2 only ever adds
// non-negative terms. Merges and updates take one approximate reciprocal on the device (rcp.approx:
// 1 ulp), which perturbs only the weight, not the mean it is applied around.
//
// NaN and infinities (IEEE arithmetic on the formulas, and stated here as the rule):
//   * a NaN anywhere makes the mean and the variance NaN;
//   * an infinite value makes the variance NaN (inf - inf) and the mean +-inf or NaN (NaN when
//     both signs occur, or when a merge subtracts the infinite mean from itself, which depends on
//     the order values are combined in);
//   * values large enough that their differences overflow give an infinite or NaN m2.
//
// Example: a row's mean and rstd (LayerNorm statistics), streamed by one warp in 4-value pieces
// (x 16-byte aligned, n a multiple of 4):
//     warpkit::WelfordState st = warpkit::welfordEmpty();
//     for (int i = 4 * lane; i + 4 <= n; i += 128) {
//         const float4 q = *reinterpret_cast<const float4*>(x + i);
//         const float piece[4] = {q.x, q.y, q.z, q.w};
//         st = warpkit::welfordUpdate(st, piece);         // no division per element
//     }
//     st = warpkit::warpReduceWelford(st);                 // every lane: the row's state
//     float mean = st.mean, rstd = warpkit::welfordRstd(st, 1e-5f);
#pragma once

#include "../ops.cuh"

namespace warpkit {

/// Count, mean and sum of squared deviations from the mean of a set of values.
struct WelfordState {
    unsigned count; // exact number of values (see the header comment for the range)
    float mean;     // their mean (0 for the empty state)
    float m2;       // sum of (x - mean)^2 (0 for the empty state and for one value)
};

namespace detail {

/// 1 / b for Welford weights, b a count (1 .. 2^32; 0 gives inf): one rcp.approx on the device
/// (1 ulp; counts are never denormal, so no scaling), exact on the host.
WARPKIT_HD float welfordRcp(float b) {
#if defined(__CUDA_ARCH__)
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(b));
    return r;
#else
    return 1.0f / b;
#endif
}

template <typename T> struct IsWelfordType {
    static constexpr bool value =
        IsSame<T, float>::value || IsSame<T, __half>::value || IsSame<T, __nv_bfloat16>::value;
};

} // namespace detail

/// The state of no values: {0, 0, 0}. Host or device.
WARPKIT_HD WelfordState welfordEmpty() { return WelfordState{0u, 0.0f, 0.0f}; }

/// Add one value to a state: one reciprocal. Host or device; any thread, alone.
WARPKIT_HD WelfordState welfordUpdate(WelfordState s, float x) {
    const unsigned n = s.count + 1u;
    const float delta = x - s.mean;
    const float mean = s.mean + delta * detail::welfordRcp((float)n);
    const WelfordState r{n, mean, s.m2 + delta * (x - mean)};
    // From empty: exactly x, and m2 = 0 (NaN for an infinite or NaN x).
    return s.count == 0u ? WelfordState{1u, x, x - x} : r;
}

/// Add K values at once, with no division per element: the K values' own mean and m2 are taken
/// relative to a shift (the state's mean, or the first value when the state is empty), so nearby
/// values do not cancel, and the result is merged into s with one reciprocal. T: float, __half or
/// __nv_bfloat16 (read as float). Host or device; any thread, alone.
template <int K, typename T> WARPKIT_HD WelfordState welfordUpdate(WelfordState s, const T (&v)[K]) {
    static_assert(K >= 1, "welfordUpdate: the array must hold at least one value (K >= 1)");
    static_assert(detail::IsWelfordType<T>::value,
                  "welfordUpdate: element type T must be float, __half or __nv_bfloat16");
    const float shift = s.count == 0u ? detail::Arith<T>::to_acc(v[0]) : s.mean;
    float d[K];
    float sum = 0.0f;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int j = 0; j < K; ++j) {
        d[j] = detail::Arith<T>::to_acc(v[j]) - shift;
        sum += d[j];
    }
    const float off = sum * (1.0f / (float)K); // the K values' mean minus shift
    float m2 = 0.0f;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int j = 0; j < K; ++j) {
        const float e = d[j] - off;
        m2 += e * e;
    }
    if (s.count == 0u) return WelfordState{(unsigned)K, shift + off, m2};
    // Chan's merge with delta = off (shift is s.mean): no cancellation in the mean difference.
    const unsigned n = s.count + (unsigned)K;
    const float r = (float)K * detail::welfordRcp((float)n);
    return WelfordState{n, s.mean + off * r, s.m2 + m2 + off * (off * ((float)s.count * r))};
}

/// Merge two states (the state of the union of their values), Chan et al.: one reciprocal. Merging
/// with the empty state gives a finite state back exactly (a -0 mean as +0). Host or device.
/// Associative up to rounding; not bitwise commutative (the generic reductions keep the lower lane
/// on the left).
WARPKIT_HD WelfordState welfordMerge(WelfordState a, WelfordState b) {
    const unsigned n = a.count + b.count;
    const float na = (float)a.count, nb = (float)b.count;
    // b's weight nb / n from the exact counts: exactly 1 when a is empty, 0 when b is, so the
    // empty state needs no other case (its mean and m2 are 0).
    const float r = b.count == n ? 1.0f : nb * detail::welfordRcp(na + nb);
    const float delta = b.mean - a.mean;
    return WelfordState{n, a.mean + delta * r, (a.m2 + b.m2) + delta * (delta * (na * r))};
}

/// welfordMerge as an operator, for the generic warpReduce / blockReduce / clusterReduce.
struct WelfordMerge {
    WARPKIT_HD WelfordState operator()(WelfordState a, WelfordState b) const { return welfordMerge(a, b); }
};

/// Population variance m2 / count (as torch.var(unbiased=False), LayerNorm's); NaN for an empty
/// state. Host or device.
WARPKIT_HD float welfordVariance(WelfordState s) {
    return s.count == 0u ? __builtin_nanf("") : s.m2 / (float)s.count;
}

/// Sample variance m2 / (count - 1) (as torch.var's default); NaN for fewer than two values.
/// Host or device.
WARPKIT_HD float welfordSampleVariance(WelfordState s) {
    return s.count < 2u ? __builtin_nanf("") : s.m2 / (float)(s.count - 1u);
}

/// 1 / sqrt(population variance + eps), the normalisation factor of LayerNorm and BatchNorm
/// (rsqrtf on the device: 2 ulp); NaN for an empty state. Host or device.
WARPKIT_HD float welfordRstd(WelfordState s, float eps) {
    const float v = welfordVariance(s) + eps;
#if defined(__CUDA_ARCH__)
    return rsqrtf(v);
#else
    return 1.0f / sqrtf(v);
#endif
}

} // namespace warpkit
