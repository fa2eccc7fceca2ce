// Tests of include/warpkit/welford.cuh: the thread-level state (updates one value and K values at a
// time, Chan's merge, the empty state, counts past 2^24, NaN/inf, the statistics helpers) on the
// host; warpReduceWelford at every width 1..32, blockReduceWelford at every block size and shape
// the block tests sweep, clusterReduceWelford on clusters of 1..16 blocks, and the device updates
// (float, __half, __nv_bfloat16) on the GPU. References are two-pass sums in double over the same
// float inputs.
//
// Tolerances (calibrated on 20,000 random merge trees on the host, worst case 2.4x inside): with
// u = 2^-23 (|mean| + sd), the mean is within 8 u / 2 and the population variance within
// 1e-5 var + 1.5 u sd + 6 u^2. The u terms are the float mean's own rounding, which no float-mean
// algorithm avoids; the naive sum / sum-of-squares formula misses by many orders more on the same
// data (checked in host_hard_data, so the data really is hard).
#include "block_common.cuh"
#include <warpkit/welford.cuh>
#include <utility>
#include <vector>

using warpkit::WelfordState;

// ---- references and comparison ----------------------------------------------------------------
struct Stats { double mean, var; unsigned long long n; bool nan, inf; };

static Stats stats_of(const float* x, size_t n) {
    Stats s = {0.0, 0.0, n, false, false};
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i) {
        s.nan |= isnan(x[i]);
        s.inf |= isinf(x[i]);
        sum += x[i];
    }
    if (n == 0) return s;
    s.mean = sum / (double)n;
    double q = 0.0;
    for (size_t i = 0; i < n; ++i) q += ((double)x[i] - s.mean) * ((double)x[i] - s.mean);
    s.var = q / (double)n;
    return s;
}

/// Empty string when `got` matches the statistics `want`, else what is wrong.
static const char* check_state(WelfordState got, const Stats& want, bool allEqual = false) {
    static char buf[256];
    if ((unsigned long long)got.count != want.n) {
        snprintf(buf, sizeof buf, "count %u want %llu", got.count, want.n);
        return buf;
    }
    if (want.n == 0) {
        if (got.mean != 0.0f || got.m2 != 0.0f) {
            snprintf(buf, sizeof buf, "empty state {0, %g, %g}", got.mean, got.m2);
            return buf;
        }
        return "";
    }
    const double var = warpkit::welfordVariance(got);
    if (want.nan) {
        if (!isnan(got.mean) || !isnan(var)) {
            snprintf(buf, sizeof buf, "NaN input: mean %g var %g, want NaN", got.mean, var);
            return buf;
        }
        return "";
    }
    if (want.inf) {
        if (isfinite(got.mean) || !isnan(var)) {
            snprintf(buf, sizeof buf, "inf input: mean %g var %g, want non-finite mean, NaN var", got.mean, var);
            return buf;
        }
        return "";
    }
    if (allEqual) { // identical inputs: Welford's deltas are all 0, so this is exact
        if ((double)got.mean != want.mean || got.m2 != 0.0f) {
            snprintf(buf, sizeof buf, "equal inputs: mean %.9g m2 %g want %.9g, 0", got.mean, got.m2, want.mean);
            return buf;
        }
        return "";
    }
    const double sd = sqrt(want.var), u = ldexp(fabs(want.mean) + sd, -23);
    const double tm = 4.0 * u, tv = 1e-5 * want.var + 1.5 * u * sd + 6.0 * u * u;
    if (!(fabs(got.mean - want.mean) <= tm) || !(fabs(var - want.var) <= tv)) {
        snprintf(buf, sizeof buf, "mean %.9g var %.9g want %.9g %.9g (tol %.3g %.3g, n %llu)", got.mean, var, want.mean,
                 want.var, tm, tv, want.n);
        return buf;
    }
    return "";
}

/// Data sets (offset, sd): easy ones and the hard ones (a large mean with a tiny spread).
static const double kScales[][2] = {{0.0, 1.0},  {3.0, 0.5},  {-1e3, 10.0}, {1e3, 1e-3},
                                    {1e4, 1e-2}, {-1e6, 1.0}, {1e6, 1e-3},  {1e-3, 1e-6}};
static const int kNumScales = (int)(sizeof kScales / sizeof kScales[0]);

static double normal(wk_rng* r) { // Box-Muller
    const double a = wk_uniform(r, 1e-12, 1.0), b = wk_uniform(r, 0.0, 6.283185307179586);
    return sqrt(-2.0 * log(a)) * cos(b);
}
static float sample(wk_rng* r, int scale) { return (float)(kScales[scale][0] + kScales[scale][1] * normal(r)); }

// ---- host: the thread-level state ---------------------------------------------------------------
// Host and device (the GPU tests fold each lane's values in the same ways).
__host__ __device__ static WelfordState build(const float* x, int n,
                                              int mode) { // mode 0: one at a time, 1: 4 at a time, 2: 3 at a time
    WelfordState s = warpkit::welfordEmpty();
    int i = 0;
    if (mode == 1)
        for (; i + 4 <= n; i += 4) {
            const float p[4] = {x[i], x[i + 1], x[i + 2], x[i + 3]};
            s = warpkit::welfordUpdate(s, p);
        }
    if (mode == 2)
        for (; i + 3 <= n; i += 3) {
            const float p[3] = {x[i], x[i + 1], x[i + 2]};
            s = warpkit::welfordUpdate(s, p);
        }
    for (; i < n; ++i) s = warpkit::welfordUpdate(s, x[i]);
    return s;
}

Test(welford, host_updates_and_merges_random) {
    wk_rng r = wk_rng_make(501);
    int bad = 0, checked = 0;
    for (int trial = 0; trial < 3000; ++trial) {
        const int scale = trial % kNumScales, leaves = 1 + (int)wk_int(&r, 0, 63);
        std::vector<float> all;
        std::vector<WelfordState> st;
        for (int l = 0; l < leaves; ++l) {
            const int n = (int)wk_int(&r, 0, 9);
            std::vector<float> x(n);
            for (float& v : x) v = sample(&r, scale);
            st.push_back(build(x.data(), n, (int)wk_int(&r, 0, 2)));
            all.insert(all.end(), x.begin(), x.end());
        }
        // A random merge tree: repeatedly merge a random neighbour pair, in order.
        while (st.size() > 1) {
            const size_t i = (size_t)wk_int(&r, 0, (long long)st.size() - 2);
            st[i] = warpkit::welfordMerge(st[i], st[i + 1]);
            st.erase(st.begin() + (long)i + 1);
        }
        const char* e = check_state(st[0], stats_of(all.data(), all.size()));
        checked++;
        if (*e && bad++ < 5) cr_log_error("trial %d (scale %d, %zu values): %s", trial, scale, all.size(), e);
    }
    cr_expect(bad == 0, "%d of %d random merge trees wrong", bad, checked);
}

Test(welford, host_hard_data) {
    // 1e6 + N(0, 1e-3) rounds to exactly 1e6 in float: Welford's deltas are 0 and the result exact.
    // 1e3 + N(0, 1e-3) and 1e6 + N(0, 1) keep 16 float ulps of spread: within the calibrated bound,
    // where sum / sum-of-squares misses by orders of magnitude.
    wk_rng r = wk_rng_make(502);
    const double cases[][2] = {{1e6, 1e-3}, {1e3, 1e-3}, {1e6, 1.0}, {-1e4, 1e-2}};
    for (const auto& c : cases) {
        for (int n : {32, 1000, 65536}) {
            std::vector<float> x(n);
            for (float& v : x) v = (float)(c[0] + c[1] * normal(&r));
            const Stats want = stats_of(x.data(), n);
            bool equal = true;
            for (float v : x) equal &= v == x[0];
            std::vector<WelfordState> leaves;
            for (int i = 0; i < n; i += 4) leaves.push_back(build(&x[i], n - i < 4 ? n - i : 4, 1));
            while (leaves.size() > 1) { // pairwise, as the warp and block trees
                std::vector<WelfordState> next;
                for (size_t i = 0; i < leaves.size(); i += 2)
                    next.push_back(i + 1 < leaves.size() ? warpkit::welfordMerge(leaves[i], leaves[i + 1]) : leaves[i]);
                leaves = next;
            }
            const char* e = check_state(leaves[0], want, equal);
            cr_expect(*e == 0, "%g + N(0, %g), n %d, tree: %s", c[0], c[1], n, e);
            const char* e1 =
                check_state(build(x.data(), n < 64 ? n : 64, 0), stats_of(x.data(), n < 64 ? n : 64), equal);
            cr_expect(*e1 == 0, "%g + N(0, %g), 64 single updates: %s", c[0], c[1], e1);
            if (!equal) { // the data is hard: the one-pass textbook formula fails on it
                float s = 0.0f, q = 0.0f;
                for (float v : x) { s += v; q += v * v; }
                const double naive = (double)(q / (float)n - (s / (float)n) * (s / (float)n));
                cr_expect(fabs(naive - want.var) > 100.0 * want.var,
                          "%g + N(0, %g): naive variance %g unexpectedly close to %g", c[0], c[1], naive, want.var);
            }
        }
    }
}

Test(welford, host_empty_state_exact) {
    const WelfordState e = warpkit::welfordEmpty();
    cr_expect(e.count == 0 && e.mean == 0.0f && e.m2 == 0.0f);
    const WelfordState s = {7u, 1.2345678f, 3.5f};
    const WelfordState a = warpkit::welfordMerge(e, s), b = warpkit::welfordMerge(s, e),
                       z = warpkit::welfordMerge(e, e);
    cr_expect(memcmp(&a, &s, sizeof s) == 0 && memcmp(&b, &s, sizeof s) == 0,
              "merging with the empty state must return the other state bitwise");
    cr_expect(z.count == 0 && z.mean == 0.0f && z.m2 == 0.0f, "empty + empty: {%u, %g, %g}", z.count, z.mean, z.m2);
    const WelfordState w = {5u, INFINITY, NAN}; // an infinite state keeps a non-finite mean and NaN m2
    const WelfordState wa = warpkit::welfordMerge(e, w), wb = warpkit::welfordMerge(w, e);
    cr_expect(wa.count == 5 && wa.mean == INFINITY && isnan(wa.m2) && wb.count == 5 && !isfinite(wb.mean) &&
              isnan(wb.m2));
    const WelfordState huge = {3u, 1e20f, 0.0f}; // delta^2 overflows: the empty side must not turn it into NaN
    const WelfordState ha = warpkit::welfordMerge(e, huge), hb = warpkit::welfordMerge(huge, e);
    cr_expect(memcmp(&ha, &huge, sizeof huge) == 0 && memcmp(&hb, &huge, sizeof huge) == 0, "{%u, %g, %g} {%u, %g, %g}",
              ha.count, ha.mean, ha.m2, hb.count, hb.mean, hb.m2);
    const WelfordState one = warpkit::welfordUpdate(e, 123456.789f);
    cr_expect(one.count == 1 && one.mean == 123456.789f && one.m2 == 0.0f, "one value: {%u, %.9g, %g}", one.count,
              one.mean, one.m2);
    const float p[3] = {1e6f, 1e6f + 0.0625f, 1e6f - 0.125f};
    const WelfordState three = warpkit::welfordUpdate(e, p);
    const Stats want = stats_of(p, 3);
    cr_expect(three.count == 3 && fabs(three.mean - want.mean) <= 0.0625 &&
                  fabs(warpkit::welfordVariance(three) - want.var) <= 1e-6 * want.var + 1e-9,
              "three values: {%u, %.9g, %g} want mean %.9g var %g", three.count, three.mean,
              warpkit::welfordVariance(three), want.mean, want.var);
    cr_expect(isnan(warpkit::welfordVariance(e)) && isnan(warpkit::welfordSampleVariance(e)) &&
              isnan(warpkit::welfordRstd(e, 1e-5f)));
    cr_expect(warpkit::welfordVariance(one) == 0.0f && isnan(warpkit::welfordSampleVariance(one)));
    const WelfordState q = {4u, 2.0f, 6.0f};
    cr_expect(warpkit::welfordVariance(q) == 1.5f && warpkit::welfordSampleVariance(q) == 2.0f);
    cr_expect(fabs(warpkit::welfordRstd(q, 0.5f) - 0.70710678f) <= 1e-7f, "rstd %g",
              warpkit::welfordRstd(q, 0.5f)); // 1 / sqrt(1.5 + 0.5)
}

Test(welford, host_counts_past_2_24) {
    // Counts a float cannot hold exactly: the merge must keep them exact and weigh means right.
    wk_rng r = wk_rng_make(503);
    for (int t = 0; t < 2000; ++t) {
        const unsigned na = (unsigned)wk_int(&r, 1, 1u << 31), nb = (unsigned)wk_int(&r, 1, 0xffffffffu - na);
        const double ma = wk_uniform(&r, -10.0, 10.0),
                     mb = ma + wk_uniform(&r, -1.0, 1.0) * pow(10.0, (double)wk_int(&r, -6, 0));
        const double va = wk_uniform(&r, 0.0, 2.0), vb = wk_uniform(&r, 0.0, 2.0);
        const WelfordState a = {na, (float)ma, (float)(va * na)}, b = {nb, (float)mb, (float)(vb * nb)};
        const WelfordState m = warpkit::welfordMerge(a, b);
        // Reference from the float states' own values, in double.
        const double N = (double)na + (double)nb, d = (double)b.mean - (double)a.mean;
        const double mean = (double)a.mean + d * (double)nb / N;
        const double m2 = (double)a.m2 + (double)b.m2 + d * d * (double)na * (double)nb / N;
        cr_expect(m.count == na + nb, "count %u want %u + %u", m.count, na, nb);
        cr_expect(fabs(m.mean - mean) <= 2e-7 * (fabs(mean) + fabs(d)) && fabs(m.m2 - m2) <= 4e-7 * m2,
                  "na %u nb %u: mean %.9g m2 %.9g want %.9g %.9g", na, nb, m.mean, m.m2, mean, m2);
        if (m.count != na + nb) break;
    }
    // One more value on a state past 2^24 still counts and still moves the mean.
    WelfordState s = {(1u << 24) + 3u, 1.0f, 0.0f};
    s = warpkit::welfordUpdate(s, 1.0f + 16777219.0f);
    cr_expect(s.count == (1u << 24) + 4u && fabs(s.mean - 2.0) <= 2e-7, "count %u mean %.9g", s.count, s.mean);
    const float four[4] = {5.0f, 5.0f, 5.0f, 5.0f};
    WelfordState k = {30000001u, 1.0f, 0.0f};
    k = warpkit::welfordUpdate(k, four);
    const double km = 1.0 + 16.0 / 30000005.0, km2 = 16.0 * 4.0 * 30000001.0 / 30000005.0;
    cr_expect(k.count == 30000005u && k.mean > 1.0f && fabs(k.mean - km) <= 2e-7 && fabs(k.m2 - km2) <= 1e-6 * km2,
              "count %u mean %.9g m2 %.9g want %.9g %.9g", k.count, k.mean, k.m2, km, km2);
    WelfordState big = {4000000000u, 1.0f, 0.0f};
    big = warpkit::welfordUpdate(big, four);
    cr_expect(big.count == 4000000004u && fabs(big.mean - 1.0) <= 2e-7, "count %u mean %.9g", big.count, big.mean);
}

Test(welford, host_nan_and_inf) {
    const float nanv = NAN, inf = INFINITY;
    const float rows[][5] = {
        {1, 2, nanv, 4, 5}, {1, 2, inf, 4, 5}, {inf, 2, 3, 4, 5}, {1, -inf, 3, inf, 5}, {nanv, inf, 3, 4, 5}};
    for (int c = 0; c < 5; ++c) {
        const Stats want = stats_of(rows[c], 5);
        for (int mode = 0; mode < 3; ++mode) {
            const char* e = check_state(build(rows[c], 5, mode), want);
            cr_expect(*e == 0, "row %d mode %d: %s", c, mode, e);
        }
        // Split into two states merged both ways.
        for (int cut = 0; cut <= 5; ++cut) {
            const WelfordState a = build(rows[c], cut, 0), b = build(rows[c] + cut, 5 - cut, 1);
            const char* e1 = check_state(warpkit::welfordMerge(a, b), want);
            const char* e2 = check_state(warpkit::welfordMerge(b, a), want);
            cr_expect(*e1 == 0 && *e2 == 0, "row %d cut %d: %s %s", c, cut, e1, e2);
        }
    }
}

// ---- GPU: warp ------------------------------------------------------------------------------------
// Lane gid holds cnt[gid] (0..8) values x[gid*8 ..], folded in by mode[gid] (see build()).

template <int W> __global__ void k_warp(const float* x, const int* cnt, const int* mode, WelfordState* out) {
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    out[gid] = warpkit::warpReduceWelford<W>(build(x + gid * 8, cnt[gid], mode[gid]));
}
// States given directly (counts past 2^24): every lane's result.
__global__ void k_warp_states(const WelfordState* in, WelfordState* out) {
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    out[gid] = warpkit::warpReduceWelford(in[gid]);
}

template <int... Ws> static const void* const* warp_table(std::integer_sequence<int, Ws...>) {
    static const void* const table[] = {(const void*)k_warp<Ws + 1>...};
    return table;
}

static int seg_len(int W, int k) { return (k + 1) * W <= 32 ? W : 32 - k * W; }

Test(welford, warp_every_width) {
    WK_REQUIRE_GPU();
    g_failures = 0;
    const int warps = wk_quick() ? 16 : 64, n = warps * 32;
    const void* const* table = warp_table(std::make_integer_sequence<int, 32>{});
    wk_rng r = wk_rng_make(510);
    float* dx = wk_alloc<float>((size_t)n * 8);
    int *dc = wk_alloc<int>(n), *dm = wk_alloc<int>(n);
    WelfordState* dout = wk_alloc<WelfordState>(n);
    for (int W = 1; W <= 32; ++W) {
        std::vector<float> x((size_t)n * 8);
        std::vector<int> cnt(n), mode(n);
        for (int w = 0; w < warps; ++w) {
            const int scale = (w + W) % kNumScales,
                      kind = w % 16; // kind 5: NaN, 6: +inf, 7: +-inf, 8: all empty, 9: equal values
            for (int l = 0; l < 32; ++l) {
                const int i = w * 32 + l;
                cnt[i] = kind == 8 ? 0 : (int)wk_int(&r, 0, 8);
                mode[i] = (int)wk_int(&r, 0, 2);
                for (int j = 0; j < 8; ++j) x[(size_t)i * 8 + j] = kind == 9 ? 1e6f + 0.0625f : sample(&r, scale);
            }
            const int victim = (int)wk_int(&r, 0, 31);
            cnt[w * 32 + victim] = cnt[w * 32 + victim] < 1 ? 1 : cnt[w * 32 + victim];
            if (kind == 5) x[(size_t)(w * 32 + victim) * 8] = NAN;
            if (kind == 6) x[(size_t)(w * 32 + victim) * 8] = INFINITY;
            if (kind == 7) {
                x[(size_t)(w * 32 + victim) * 8] = INFINITY;
                x[(size_t)(w * 32 + (victim + 1) % 32) * 8] = -INFINITY;
                cnt[w * 32 + (victim + 1) % 32] = 1 + cnt[w * 32 + (victim + 1) % 32] % 8;
            }
        }
        wk_upload(dx, x.data(), x.size());
        wk_upload(dc, cnt.data(), n);
        wk_upload(dm, mode.data(), n);
        wk_poison(dout, n);
        void* params[] = {(void*)&dx, (void*)&dc, (void*)&dm, (void*)&dout};
        WK_CUDA(cudaLaunchKernel(table[W - 1], dim3(n / 128), dim3(128), params, 0, 0));
        WK_LAUNCHED();
        std::vector<WelfordState> out(n);
        wk_download(out.data(), dout, n);
        const bool pow2 = (W & (W - 1)) == 0;
        for (int w = 0; w < warps; ++w)
            for (int k = 0; k * W < 32; ++k) {
                const int base = w * 32 + k * W, len = seg_len(W, k);
                std::vector<float> vals;
                bool equal = true;
                for (int l = 0; l < len; ++l)
                    for (int j = 0; j < cnt[base + l]; ++j) vals.push_back(x[(size_t)(base + l) * 8 + j]);
                for (float v : vals) equal &= v == vals[0];
                const Stats want = stats_of(vals.data(), vals.size());
                for (int l = 0; l < (pow2 ? len : 1); ++l) {
                    const char* e = check_state(out[base + l], want, equal && !vals.empty() && !want.nan && !want.inf);
                    EXPECT(*e == 0, "W=%d warp %d segment %d lane %d (%zu values): %s", W, w, k, l, vals.size(), e);
                    EXPECT(memcmp(&out[base + l], &out[base], sizeof(WelfordState)) == 0,
                           "W=%d warp %d segment %d: lane %d differs bitwise from lane 0", W, w, k, l);
                }
            }
    }
    // Merges of states past 2^24 values each (their sum stays below 2^32).
    std::vector<WelfordState> st(n), out(n);
    for (int i = 0; i < n; ++i)
        st[i] = WelfordState{(1u << 26) + (unsigned)wk_int(&r, 0, 1 << 20), (float)wk_uniform(&r, 99.0, 101.0),
                             (float)wk_uniform(&r, 0.0, 1e8)};
    WelfordState* din = wk_alloc<WelfordState>(n);
    wk_upload(din, st.data(), n);
    wk_poison(dout, n);
    k_warp_states<<<n / 128, 128>>>(din, dout);
    WK_LAUNCHED();
    wk_download(out.data(), dout, n);
    for (int w = 0; w < warps; ++w) {
        unsigned long long N = 0;
        double s = 0.0;
        for (int l = 0; l < 32; ++l) {
            N += st[w * 32 + l].count;
            s += (double)st[w * 32 + l].count * st[w * 32 + l].mean;
        }
        const double mean = s / (double)N;
        double m2 = 0.0;
        for (int l = 0; l < 32; ++l) {
            const WelfordState& q = st[w * 32 + l];
            m2 += q.m2 + (double)q.count * (q.mean - mean) * (q.mean - mean);
        }
        const Stats want = {mean, m2 / (double)N, N, false, false};
        for (int l = 0; l < 32; ++l) {
            const char* e = check_state(out[w * 32 + l], want);
            EXPECT(*e == 0, "big counts, warp %d lane %d: %s", w, l, e);
        }
    }
    WK_CUDA(cudaFree(dx));
    WK_CUDA(cudaFree(dc));
    WK_CUDA(cudaFree(dm));
    WK_CUDA(cudaFree(dout));
    WK_CUDA(cudaFree(din));
    cr_assert(g_failures == 0, "%d mismatches (first ones logged above)", g_failures);
}

// ---- GPU: the updates on 16-bit inputs -----------------------------------------------------------
template <typename T> __global__ void k_update16(const float* x, WelfordState* out) {
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    T v[8];
    for (int j = 0; j < 8; ++j) v[j] = warpkit::detail::Arith<T>::from_acc(x[gid * 8 + j]);
    WelfordState s = warpkit::welfordUpdate(warpkit::welfordEmpty(), v);          // 8 at once
    const T w[2] = {v[0], v[1]};
    out[2 * gid] = warpkit::welfordUpdate(s, w);                                   // + 2 more
    out[2 * gid + 1] = warpkit::welfordUpdate(warpkit::welfordEmpty(), x[gid * 8]); // one float
}

template <typename T> static void run_update16(wk_rng* r) {
    const int n = 256;
    std::vector<float> x((size_t)n * 8);
    for (size_t i = 0; i < x.size(); ++i) x[i] = sample(r, (int)(i / 64) % 4);
    float* dx = wk_alloc<float>(x.size());
    WelfordState* dout = wk_alloc<WelfordState>(2 * n);
    wk_upload(dx, x.data(), x.size());
    wk_poison(dout, 2 * n);
    k_update16<T><<<n / 64, 64>>>(dx, dout);
    WK_LAUNCHED();
    std::vector<WelfordState> out(2 * n);
    wk_download(out.data(), dout, 2 * n);
    for (int i = 0; i < n; ++i) {
        float v[10];
        for (int j = 0; j < 8; ++j) v[j] = wk_to_double(wk_from_double<T>(x[(size_t)i * 8 + j]));
        v[8] = v[0]; v[9] = v[1];
        const char* e = check_state(out[2 * i], stats_of(v, 10));
        EXPECT(*e == 0, "%s thread %d: %s", wk_type_name<T>(), i, e);
        EXPECT(out[2 * i + 1].count == 1 && same(out[2 * i + 1].mean, x[(size_t)i * 8]) && out[2 * i + 1].m2 == 0.0f,
               "thread %d: one value", i);
    }
    WK_CUDA(cudaFree(dx)); WK_CUDA(cudaFree(dout));
}

Test(welford, device_updates_16bit_inputs) {
    WK_REQUIRE_GPU();
    g_failures = 0;
    wk_rng r = wk_rng_make(511);
    run_update16<float>(&r);
    run_update16<__half>(&r);
    run_update16<__nv_bfloat16>(&r);
    cr_assert(g_failures == 0, "%d mismatches (first ones logged above)", g_failures);
}

// ---- GPU: block -------------------------------------------------------------------------------------
// Call c of block b: thread t holds cnt (0..4) values at x[((c * n) + t) * 4], folded in by t % 3.
// Two reductions back to back (own scratch, then caller scratch) must agree bitwise.
template <int BT> __global__ void __launch_bounds__(BT > 0 ? BT : 1024, 1)
k_block(const float* x, const int* cnt, WelfordState* out, int* same, int iters) {
    __shared__ warpkit::BlockReduceScratch<WelfordState, BT> sh;
    const int n = (int)(blockDim.x * blockDim.y * blockDim.z);
    const int tid = (int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
    for (int it = 0; it < iters; ++it) {
        const size_t i = (size_t)(blockIdx.x * iters + it) * n + tid;
        const WelfordState s = build(x + i * 4, cnt[i], tid % 3);
        const WelfordState a = warpkit::blockReduceWelford<BT>(s);
        const WelfordState b = warpkit::blockReduceWelford<BT>(s, sh);
        out[i] = a;
        same[i] = a.count == b.count && __float_as_uint(a.mean) == __float_as_uint(b.mean) &&
                  __float_as_uint(a.m2) == __float_as_uint(b.m2);
    }
}

template <int BT> static void run_block(dim3 block, int grid, int iters) {
    const int n = (int)(block.x * block.y * block.z);
    const size_t total = (size_t)grid * iters * n, calls = (size_t)grid * iters;
    wk_rng r = wk_rng_make(520 + n + BT);
    std::vector<float> x(total * 4);
    std::vector<int> cnt(total);
    for (size_t c = 0; c < calls; ++c) {
        const int scale = (int)(c % kNumScales), kind = (int)(c % 7); // 4: NaN, 5: inf, 6: some empty threads only
        for (int t = 0; t < n; ++t) {
            const size_t i = c * n + t;
            cnt[i] = kind == 6 ? (t % 5 == 0 ? 1 : 0) : (int)wk_int(&r, 0, 4);
            for (int j = 0; j < 4; ++j) x[i * 4 + j] = sample(&r, scale);
        }
        const size_t v = c * n + (size_t)wk_int(&r, 0, n - 1);
        if (kind == 4) { cnt[v] = 4; x[v * 4 + 2] = NAN; }
        if (kind == 5) { cnt[v] = 4; x[v * 4 + 3] = -INFINITY; }
    }
    float* dx = wk_alloc<float>(x.size());
    int *dc = wk_alloc<int>(total), *ds = wk_alloc<int>(total);
    WelfordState* dout = wk_alloc<WelfordState>(total);
    wk_upload(dx, x.data(), x.size());
    wk_upload(dc, cnt.data(), total);
    wk_poison(dout, total);
    wk_poison(ds, total);
    k_block<BT><<<grid, block>>>(dx, dc, dout, ds, iters);
    WK_LAUNCHED();
    std::vector<WelfordState> out(total);
    std::vector<int> same(total);
    wk_download(out.data(), dout, total);
    wk_download(same.data(), ds, total);
    for (size_t c = 0; c < calls; ++c) {
        std::vector<float> vals;
        for (int t = 0; t < n; ++t)
            for (int j = 0; j < cnt[c * n + t]; ++j) vals.push_back(x[(c * n + t) * 4 + j]);
        const Stats want = stats_of(vals.data(), vals.size());
        for (int t = 0; t < n; ++t) {
            const size_t i = c * n + t;
            const char* e = check_state(out[i], want);
            EXPECT(*e == 0, "BT=%d block %ux%ux%u call %zu thread %d: %s", BT, block.x, block.y, block.z, c, t, e);
            EXPECT(same[i] == 1, "BT=%d n=%d call %zu thread %d: caller-scratch result differs from the first call's",
                   BT, n, c, t);
            EXPECT(memcmp(&out[i], &out[c * n], sizeof(WelfordState)) == 0,
                   "BT=%d n=%d call %zu: thread %d differs from thread 0", BT, n, c, t);
        }
    }
    WK_CUDA(cudaFree(dx)); WK_CUDA(cudaFree(dc)); WK_CUDA(cudaFree(ds)); WK_CUDA(cudaFree(dout));
}

template <int... Bs> static void block_ct(std::integer_sequence<int, Bs...>) {
    (run_block<Bs>(dim3(Bs), 2, wk_quick() ? 2 : 4), ...);
}

Test(welford, block_every_size_and_shape) {
    WK_REQUIRE_GPU();
    g_failures = 0;
    sweep_block_shapes([](dim3 b, int g, int it) { run_block<0>(b, g, it); }, wk_quick() ? 2 : 3, 7, 4);
    block_ct(std::integer_sequence<int, 1, 32, 33, 96, 100, 256, 1000, 1024>{});
    run_block<105>(dim3(7, 3, 5), 2, 4);
    cr_assert(g_failures == 0, "%d mismatches (first ones logged above)", g_failures);
}

// ---- GPU: cluster -----------------------------------------------------------------------------------
// Three rounds back to back: each block reduces its threads' states, then the cluster merges them.
__global__ void __launch_bounds__(128) k_cluster(const float* x, const int* cnt, WelfordState* out) {
    __shared__ warpkit::ClusterExchange<WelfordState> xch;
    unsigned round = warpkit::clusterExchangeInit(xch);
    for (int it = 0; it < 3; ++it) {
        const size_t i = ((size_t)it * gridDim.x + blockIdx.x) * 128 + threadIdx.x;
        const WelfordState b = warpkit::blockReduceWelford<128>(build(x + i * 4, cnt[i], threadIdx.x % 3));
        out[i] = warpkit::clusterReduceWelford(xch, round, b);
    }
}

Test(welford, cluster_sizes_1_to_16) {
    WK_REQUIRE_GPU();
    int dev = 0, clusters = 0;
    WK_CUDA(cudaGetDevice(&dev));
    WK_CUDA(cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, dev));
    if (!clusters) cr_skip_test("no thread-block clusters on this device");
    g_failures = 0;
    WK_CUDA(cudaFuncSetAttribute(k_cluster, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    wk_rng r = wk_rng_make(530);
    for (int cs : {1, 2, 3, 4, 7, 8, 16}) {
        const int nclusters = wk_quick() ? 2 : 6, blocks = cs * nclusters;
        const size_t total = (size_t)3 * blocks * 128;
        std::vector<float> x(total * 4);
        std::vector<int> cnt(total);
        for (size_t i = 0; i < total; ++i) {
            cnt[i] = (int)wk_int(&r, 0, 4);
            for (int j = 0; j < 4; ++j) x[i * 4 + j] = sample(&r, (int)((i / 128) % kNumScales));
        }
        for (int t = 0; t < 128; ++t) cnt[(size_t)2 * blocks * 128 + 128 + t] = 0; // one block of the last round empty
        float* dx = wk_alloc<float>(x.size());
        int* dc = wk_alloc<int>(total);
        WelfordState* dout = wk_alloc<WelfordState>(total);
        wk_upload(dx, x.data(), x.size());
        wk_upload(dc, cnt.data(), total);
        wk_poison(dout, total);
        cudaLaunchAttribute attr[1];
        cudaLaunchConfig_t cfg = wk_cluster_config(dim3(blocks), dim3(128), (unsigned)cs, attr);
        int active = 0;
        const cudaError_t qe = cudaOccupancyMaxActiveClusters(&active, k_cluster, &cfg);
        if (qe != cudaSuccess || active < 1) { // a 16-block cluster may not fit every part
            (void)cudaGetLastError();
            cr_log_warn("cluster size %d not launchable here (%s): skipped", cs, cudaGetErrorString(qe));
            WK_CUDA(cudaFree(dx)); WK_CUDA(cudaFree(dc)); WK_CUDA(cudaFree(dout));
            continue;
        }
        WK_CUDA(cudaLaunchKernelEx(&cfg, k_cluster, (const float*)dx, (const int*)dc, dout));
        WK_LAUNCHED();
        std::vector<WelfordState> out(total);
        wk_download(out.data(), dout, total);
        for (int it = 0; it < 3; ++it)
            for (int c = 0; c < nclusters; ++c) {
                std::vector<float> vals;
                const size_t b0 = ((size_t)it * blocks + (size_t)c * cs) * 128;
                for (size_t i = b0; i < b0 + (size_t)cs * 128; ++i)
                    for (int j = 0; j < cnt[i]; ++j) vals.push_back(x[i * 4 + j]);
                const Stats want = stats_of(vals.data(), vals.size());
                for (size_t i = b0; i < b0 + (size_t)cs * 128; ++i) {
                    const char* e = check_state(out[i], want);
                    EXPECT(*e == 0, "cluster size %d round %d cluster %d thread %zu: %s", cs, it, c, i - b0, e);
                    EXPECT(memcmp(&out[i], &out[b0], sizeof(WelfordState)) == 0,
                           "cluster size %d round %d cluster %d: thread %zu differs", cs, it, c, i - b0);
                }
            }
        WK_CUDA(cudaFree(dx)); WK_CUDA(cudaFree(dc)); WK_CUDA(cudaFree(dout));
    }
    cr_assert(g_failures == 0, "%d mismatches (first ones logged above)", g_failures);
}
