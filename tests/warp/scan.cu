// Tests of include/warpkit/warp/scan.cuh. Every named scan (inclusive/exclusive x
// Sum/Max/Min) with and without `total`, with and without a valid-lane count, checked against
// host prefix scans in double precision (integers exactly, with two's-complement wrap):
//   * float and int at every Width 1..32, the other six types at a spread of widths;
//   * a non-commutative generic operator at every Width, with init, total and valid counts;
//   * built-in operators through the generic form with a non-identity init;
//   * NaN / +-inf inputs, poisoned outputs, valid counts 1..Width and past it.
#include "../common.cuh"
#include <warpkit/scan.cuh>
#include <type_traits>
#include <utility>
#include <vector>

enum Kind { K_SUM, K_MAX, K_MIN };
static const char* kind_name(int k) { return k == K_SUM ? "sum" : k == K_MAX ? "max" : "min"; }
static int g_warps(void) { return wk_quick() ? 8 : 72; }
enum { NOUT = 12 }; // results per lane, see k_named

// ---- kernels -------------------------------------------------------------------------------------
template <int K, bool Excl, int W, typename T> __device__ T named(T v) {
    if constexpr (!Excl) {
        if constexpr (K == K_SUM) return warpkit::warpInclusiveSum<W>(v);
        else if constexpr (K == K_MAX) return warpkit::warpInclusiveMax<W>(v);
        else return warpkit::warpInclusiveMin<W>(v);
    } else {
        if constexpr (K == K_SUM) return warpkit::warpExclusiveSum<W>(v);
        else if constexpr (K == K_MAX) return warpkit::warpExclusiveMax<W>(v);
        else return warpkit::warpExclusiveMin<W>(v);
    }
}
template <int K, bool Excl, int W, typename T, typename... A> __device__ T named(T v, A&&... a) {
    if constexpr (!Excl) {
        if constexpr (K == K_SUM) return warpkit::warpInclusiveSum<W>(v, static_cast<A&&>(a)...);
        else if constexpr (K == K_MAX) return warpkit::warpInclusiveMax<W>(v, static_cast<A&&>(a)...);
        else return warpkit::warpInclusiveMin<W>(v, static_cast<A&&>(a)...);
    } else {
        if constexpr (K == K_SUM) return warpkit::warpExclusiveSum<W>(v, static_cast<A&&>(a)...);
        else if constexpr (K == K_MAX) return warpkit::warpExclusiveMax<W>(v, static_cast<A&&>(a)...);
        else return warpkit::warpExclusiveMin<W>(v, static_cast<A&&>(a)...);
    }
}
// The valid-lane named forms (warp...Valid).
template <int K, bool Excl, int W, typename T, typename... A> __device__ T namedValid(T v, int valid, A&&... a) {
    if constexpr (!Excl) {
        if constexpr (K == K_SUM) return warpkit::warpInclusiveSumValid<W>(v, valid, static_cast<A&&>(a)...);
        else if constexpr (K == K_MAX) return warpkit::warpInclusiveMaxValid<W>(v, valid, static_cast<A&&>(a)...);
        else return warpkit::warpInclusiveMinValid<W>(v, valid, static_cast<A&&>(a)...);
    } else {
        if constexpr (K == K_SUM) return warpkit::warpExclusiveSumValid<W>(v, valid, static_cast<A&&>(a)...);
        else if constexpr (K == K_MAX) return warpkit::warpExclusiveMaxValid<W>(v, valid, static_cast<A&&>(a)...);
        else return warpkit::warpExclusiveMinValid<W>(v, valid, static_cast<A&&>(a)...);
    }
}

// Lane l of warp w reads in[w*32+l]; out holds NOUT planes of n results:
// for e = 0 (inclusive) and 1 (exclusive), at plane 6e: scan(v), scan(v,total), total,
// scan(v,valid), scan(v,valid,total), total of the valid form.
template <int W, int K, bool Excl, typename T> __device__ void six_forms(T v, int va, T* out, int n) {
    T t1, t2;
    out[0 * n] = named<K, Excl, W>(v);
    out[1 * n] = named<K, Excl, W>(v, t1);
    out[2 * n] = t1;
    out[3 * n] = namedValid<K, Excl, W>(v, va);
    out[4 * n] = namedValid<K, Excl, W>(v, va, t2);
    out[5 * n] = t2;
}
template <int W, typename T, int K> __global__ void k_named(const T* in, T* out, const int* valid, int n) {
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    const int va = valid[(gid >> 5) * 32 + (threadIdx.x & 31) / W];
    six_forms<W, K, false>(in[gid], va, out + gid, n);
    six_forms<W, K, true>(in[gid], va, out + gid + 6 * (size_t)n, n);
}

// Non-commutative associative operator: composition of affine maps x -> a*x + b (mod 2^32);
// compose(f, g) applies f first. A scan that swaps operands gets it wrong.
struct Affine { unsigned a, b; };
struct Compose {
    __host__ __device__ Affine operator()(Affine f, Affine g) const { return Affine{f.a * g.a, f.b * g.a + g.b}; }
};
template <int W> __global__ void k_affine(const Affine* in, Affine* out, const int* valid, Affine init, int n) {
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    const int va = valid[(gid >> 5) * 32 + (threadIdx.x & 31) / W];
    const Affine v = in[gid];
    Affine t1, t2;
    out[gid + 0 * n] = warpkit::warpInclusiveScan<W>(v, Compose{});
    out[gid + 1 * n] = warpkit::warpInclusiveScan<W>(v, Compose{}, t1);
    out[gid + 2 * n] = t1;
    out[gid + 3 * n] = warpkit::warpInclusiveScanValid<W>(v, Compose{}, va);
    out[gid + 4 * n] = warpkit::warpInclusiveScanValid<W>(v, Compose{}, va, t2);
    out[gid + 5 * n] = t2;
    out[gid + 6 * n] = warpkit::warpExclusiveScan<W>(v, Compose{}, init);
    out[gid + 7 * n] = warpkit::warpExclusiveScan<W>(v, Compose{}, init, t1);
    out[gid + 8 * n] = t1;
    out[gid + 9 * n] = warpkit::warpExclusiveScanValid<W>(v, Compose{}, init, va);
    out[gid + 10 * n] = warpkit::warpExclusiveScanValid<W>(v, Compose{}, init, va, t2);
    out[gid + 11 * n] = t2;
}

// Built-in operators through the generic exclusive form with an explicit init (a seed).
template <int W, typename T, int K> __global__ void k_seeded(const T* in, T* out, const int* valid, T init, int n) {
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    const int va = valid[(gid >> 5) * 32 + (threadIdx.x & 31) / W];
    using Op = typename std::conditional<K == K_SUM, warpkit::Sum,
                                         typename std::conditional<K == K_MAX, warpkit::Max, warpkit::Min>::type>::type;
    T t;
    out[gid] = warpkit::warpExclusiveScanValid<W>(in[gid], Op{}, init, va, t);
    out[gid + n] = t;
}

// ---- host side -------------------------------------------------------------------------------------
static int seg_count(int W) { return (32 + W - 1) / W; }
static int seg_len(int W, int k) { return (k + 1) * W <= 32 ? W : 32 - k * W; }

/// Floats in [-100, 100); in odd warps about 1 in 60 elements is NaN, +inf or -inf (even warps
/// stay finite so the numeric comparison has something to bite on). Integers: the whole range.
template <typename T> static void fill(std::vector<T>& h, wk_rng* r) {
    for (size_t i = 0; i < h.size(); ++i) {
        if constexpr (warpkit::detail::Arith<T>::is_float) {
            double x = wk_uniform(r, -100.0, 100.0);
            const uint64_t u = wk_next(r) % 180;
            if ((i / 32) % 2 == 1) {
                if (u == 0) x = NAN;
                else if (u == 1) x = INFINITY;
                else if (u == 2) x = -INFINITY;
            }
            h[i] = wk_from_double<T>(x);
        } else {
            uint64_t u = wk_next(r);
            memcpy(&h[i], &u, sizeof(T));
        }
    }
}

/// Valid count of segment k of warp w: cycles through 1..W+2 over the warps, so every count
/// 1..W and two past it appear.
static std::vector<int> make_valid(int warps, int W) {
    std::vector<int> v((size_t)warps * 32);
    for (int w = 0; w < warps; ++w)
        for (int k = 0; k < 32; ++k) v[w * 32 + k] = 1 + (w + 3 * k) % (W + 2);
    return v;
}

typedef struct { long checked, bad; char first[512]; } tally;
static void report(tally* t, const char* what) {
    cr_expect(t->bad == 0, "%s: %ld of %ld results wrong (seed %#llx); first: %s", what, t->bad, t->checked,
              (unsigned long long)wk_seed(), t->first);
    cr_expect(t->checked > 0, "%s: nothing checked", what);
}
#define NOTE_BAD(t, ...)                                                                  \
    do {                                                                                  \
        if ((t)->bad++ == 0) snprintf((t)->first, sizeof (t)->first, __VA_ARGS__);        \
    } while (0)

/// Reference value: a double (floats) or the exact wrapped integer, plus the sum of |x| so far.
struct RefVal { double d; unsigned long long u; double sa; bool nan; };

template <typename T> static RefVal ref_identity(int kind) {
    RefVal r = {0.0, 0ull, 0.0, false};
    if constexpr (warpkit::detail::Arith<T>::is_float) {
        r.d = kind == K_SUM ? 0.0 : kind == K_MAX ? -INFINITY : INFINITY;
    } else {
        T id = kind == K_SUM   ? T(0)
               : kind == K_MAX ? warpkit::detail::Arith<T>::lowest()
                               : warpkit::detail::Arith<T>::highest();
        r.u = (unsigned long long)id;
    }
    return r;
}
template <typename T> static RefVal ref_step(RefVal acc, T x, int kind) {
    if constexpr (warpkit::detail::Arith<T>::is_float) {
        const double v = wk_to_double(x);
        acc.sa += fabs(v);
        acc.nan |= isnan(v);
        if (kind == K_SUM) acc.d += v;
        else if (kind == K_MAX) acc.d = v > acc.d ? v : acc.d;
        else acc.d = v < acc.d ? v : acc.d;
    } else {
        const T a = (T)acc.u;
        T r;
        if (kind == K_SUM) r = (T)((unsigned long long)a + (unsigned long long)x);
        else if (kind == K_MAX) r = x > a ? x : a;
        else r = x < a ? x : a;
        acc.u = (unsigned long long)r;
    }
    return acc;
}
template <typename T> static bool ref_match(RefVal want, T got, int kind, int W, double* wantd) {
    if constexpr (warpkit::detail::Arith<T>::is_float) {
        double w = (want.nan && kind != K_SUM) ? NAN : want.d;
        *wantd = w;
        const double g = wk_to_double(got);
        if (isnan(w)) return isnan(g);
        if (isinf(w)) return g == w;
        if (isnan(g) || isinf(g)) return false;
        using Acc = typename warpkit::detail::Arith<T>::Acc;
        const double tol = kind == K_SUM ? (double)W * wk_eps<Acc>() * want.sa : 0.0;
        // Exact zero for the exclusive sum's lane 0 must be +0 (not -0 or poison).
        if (w == 0.0 && want.sa == 0.0 && kind == K_SUM) return g == 0.0 && !signbit(g);
        return fabs(g - w) <= tol + wk_eps<T>() * fabs(w);
    } else {
        *wantd = (double)(T)want.u;
        return got == (T)want.u;
    }
}

template <int W, typename T, int K> static void run_named(tally* t, wk_rng* r) {
    const int warps = g_warps(), n = warps * 32;
    std::vector<T> h(n), out((size_t)NOUT * n);
    fill(h, r);
    std::vector<int> valid = make_valid(warps, W);
    T *din = wk_alloc<T>(n), *dout = wk_alloc<T>((size_t)NOUT * n);
    int* dvalid = wk_alloc<int>(valid.size());
    wk_upload(din, h.data(), n);
    wk_upload(dvalid, valid.data(), valid.size());
    wk_poison(dout, (size_t)NOUT * n);
    k_named<W, T, K><<<n / 64, 64>>>(din, dout, dvalid, n);
    WK_LAUNCHED();
    wk_download(out.data(), dout, (size_t)NOUT * n);
    for (int w = 0; w < warps; ++w)
        for (int k = 0; k < seg_count(W); ++k) {
            const int base = w * 32 + k * W, len = seg_len(W, k);
            int cnt = valid[w * 32 + k];
            cnt = cnt < len ? cnt : len;
            for (int form = 0; form < 2; ++form) { // 0: all lanes, 1: valid lanes
                const int m = form ? cnt : len;
                RefVal incl[33];
                incl[0] = ref_identity<T>(K);
                for (int i = 0; i < len; ++i) incl[i + 1] = i < m ? ref_step(incl[i], h[base + i], K) : incl[i];
                for (int e = 0; e < 2; ++e)
                    for (int i = 0; i < len; ++i) {
                        // Exclusive of lane i is the prefix of i elements; past `valid` lanes get the total.
                        const RefVal want = e ? incl[i] : incl[i + 1];
                        const int planes[2] = {6 * e + 3 * form, 6 * e + 3 * form + 1};
                        for (int p : planes) {
                            double wd;
                            t->checked++;
                            const T got = out[(size_t)p * n + base + i];
                            if (!ref_match(want, got, K, W, &wd))
                                NOTE_BAD(t, "%s %s %s%s W=%d warp %d lane %d valid %d (plane %d): got %.9g want %.9g",
                                         wk_type_name<T>(), e ? "exclusive" : "inclusive", kind_name(K),
                                         form ? " valid" : "", W, w, k * W + i, m, p, wk_to_double(got), wd);
                        }
                        double wd;
                        t->checked++;
                        const T got = out[(size_t)(6 * e + 3 * form + 2) * n + base + i];
                        if (!ref_match(incl[len], got, K, W, &wd))
                            NOTE_BAD(t, "%s %s %s%s total W=%d warp %d lane %d valid %d: got %.9g want %.9g",
                                     wk_type_name<T>(), e ? "exclusive" : "inclusive", kind_name(K),
                                     form ? " valid" : "", W, w, k * W + i, m, wk_to_double(got), wd);
                    }
            }
        }
    WK_CUDA(cudaFree(din)); WK_CUDA(cudaFree(dout)); WK_CUDA(cudaFree(dvalid));
}

template <typename T, int K, int... Ws> static void widths(tally* t, wk_rng* r, std::integer_sequence<int, Ws...>) {
    (run_named<Ws, T, K>(t, r), ...);
}
template <int... Ws> using ints = std::integer_sequence<int, Ws...>;
template <int... Ws> static auto plus1(std::integer_sequence<int, Ws...>) { return ints<(Ws + 1)...>{}; }
using AllWidths = decltype(plus1(std::make_integer_sequence<int, 32>{}));
// The segment logic does not depend on the operator or type, so every width is swept for two
// (type, operator) pairs and the rest take a spread of widths (build time: CI compiles 3 archs).
using SomeWidths = ints<1, 3, 8, 13, 32>;
using FewWidths = ints<5, 32>;

template <typename T, typename Ws, int... Ks> static void sweep(uint64_t stream) {
    tally t = {0, 0, ""};
    wk_rng r = wk_rng_make(stream);
    (widths<T, Ks>(&t, &r, Ws{}), ...);
    report(&t, wk_type_name<T>());
}

Test(scan, named_float_int_every_width) {
    WK_REQUIRE_GPU();
    sweep<float, AllWidths, K_SUM>(1);
    sweep<float, SomeWidths, K_MAX, K_MIN>(2);
    sweep<int, AllWidths, K_MIN>(3);
    sweep<int, SomeWidths, K_SUM, K_MAX>(4);
}

Test(scan, named_other_types) {
    WK_REQUIRE_GPU();
    sweep<unsigned, FewWidths, K_SUM, K_MAX, K_MIN>(5);
    sweep<long long, FewWidths, K_SUM, K_MAX, K_MIN>(6);
    sweep<unsigned long long, FewWidths, K_SUM, K_MAX, K_MIN>(7);
    sweep<double, FewWidths, K_SUM, K_MAX, K_MIN>(8);
    sweep<__half, FewWidths, K_SUM, K_MAX, K_MIN>(9);
    sweep<__nv_bfloat16, FewWidths, K_SUM, K_MAX, K_MIN>(10);
}

// ---- generic operator -------------------------------------------------------------------------------
template <int W> static void run_affine(tally* t, wk_rng* r) {
    const int warps = g_warps(), n = warps * 32;
    std::vector<Affine> h(n), out((size_t)NOUT * n);
    for (auto& x : h) x = Affine{(unsigned)wk_next(r) | 1u, (unsigned)wk_next(r)};
    const Affine init = {(unsigned)wk_next(r) | 1u, (unsigned)wk_next(r)};
    std::vector<int> valid = make_valid(warps, W);
    Affine *din = wk_alloc<Affine>(n), *dout = wk_alloc<Affine>((size_t)NOUT * n);
    int* dvalid = wk_alloc<int>(valid.size());
    wk_upload(din, h.data(), n);
    wk_upload(dvalid, valid.data(), valid.size());
    wk_poison(dout, (size_t)NOUT * n);
    k_affine<W><<<n / 64, 64>>>(din, dout, dvalid, init, n);
    WK_LAUNCHED();
    wk_download(out.data(), dout, (size_t)NOUT * n);
    const Compose op;
    auto same = [](Affine a, Affine b) { return a.a == b.a && a.b == b.b; };
    for (int w = 0; w < warps; ++w)
        for (int k = 0; k < seg_count(W); ++k) {
            const int base = w * 32 + k * W, len = seg_len(W, k);
            const int cnt = valid[w * 32 + k] < len ? valid[w * 32 + k] : len;
            for (int form = 0; form < 2; ++form) {
                const int m = form ? cnt : len;
                Affine incl[32];
                incl[0] = h[base];
                for (int i = 1; i < len; ++i) incl[i] = i < m ? op(incl[i - 1], h[base + i]) : incl[i - 1];
                const Affine total = incl[len - 1];
                for (int i = 0; i < len; ++i) {
                    const Affine ex = i == 0 ? init : op(init, incl[i - 1]);
                    const Affine want[6] = {incl[i], incl[i], total, ex, ex, total};
                    const int planes[6] = {3 * form,     3 * form + 1,     3 * form + 2,
                                           6 + 3 * form, 6 + 3 * form + 1, 6 + 3 * form + 2};
                    for (int j = 0; j < 6; ++j) {
                        t->checked++;
                        const Affine g = out[(size_t)planes[j] * n + base + i];
                        if (!same(g, want[j]))
                            NOTE_BAD(t, "affine W=%d warp %d lane %d valid %d plane %d: got {%u,%u} want {%u,%u}", W, w,
                                     k * W + i, m, planes[j], g.a, g.b, want[j].a, want[j].b);
                    }
                }
            }
        }
    WK_CUDA(cudaFree(din)); WK_CUDA(cudaFree(dout)); WK_CUDA(cudaFree(dvalid));
}
template <int... Ws> static void affine_widths(tally* t, wk_rng* r, std::integer_sequence<int, Ws...>) {
    (run_affine<Ws>(t, r), ...);
}

Test(scan, generic_noncommutative) {
    WK_REQUIRE_GPU();
    tally t = {0, 0, ""};
    wk_rng r = wk_rng_make(11);
    affine_widths(&t, &r, ints<1, 2, 3, 4, 5, 7, 8, 11, 16, 17, 24, 31, 32>{});
    report(&t, "affine compose");
}

// ---- built-in operators with an explicit init ---------------------------------------------------
template <int W, typename T, int K> static void run_seeded(tally* t, wk_rng* r) {
    const int warps = g_warps(), n = warps * 32;
    std::vector<T> h(n), out(2 * (size_t)n);
    fill(h, r);
    // if constexpr, not ?:, so that (T)wk_next(r) is never compiled for __half: with the fp16
    // headers of CUDA 12.0 and 12.1 a 64-bit integer to __half conversion is ambiguous.
    T init;
    if constexpr (warpkit::detail::Arith<T>::is_float) init = wk_from_double<T>(wk_uniform(r, -50, 50));
    else init = (T)wk_next(r);
    std::vector<int> valid = make_valid(warps, W);
    T *din = wk_alloc<T>(n), *dout = wk_alloc<T>(2 * (size_t)n);
    int* dvalid = wk_alloc<int>(valid.size());
    wk_upload(din, h.data(), n);
    wk_upload(dvalid, valid.data(), valid.size());
    wk_poison(dout, 2 * (size_t)n);
    k_seeded<W, T, K><<<n / 64, 64>>>(din, dout, dvalid, init, n);
    WK_LAUNCHED();
    wk_download(out.data(), dout, 2 * (size_t)n);
    for (int w = 0; w < warps; ++w)
        for (int k = 0; k < seg_count(W); ++k) {
            const int base = w * 32 + k * W, len = seg_len(W, k);
            const int m = valid[w * 32 + k] < len ? valid[w * 32 + k] : len;
            RefVal seeded = ref_step(ref_identity<T>(K), init, K), plain = ref_identity<T>(K);
            for (int i = 0; i < len; ++i) {
                double wd;
                t->checked++;
                if (!ref_match(seeded, out[base + i], K, W + 1, &wd))
                    NOTE_BAD(t, "%s %s seeded W=%d warp %d lane %d: got %.9g want %.9g", wk_type_name<T>(),
                             kind_name(K), W, w, k * W + i, wk_to_double(out[base + i]), wd);
                if (i < m) { seeded = ref_step(seeded, h[base + i], K); plain = ref_step(plain, h[base + i], K); }
            }
            for (int i = 0; i < len; ++i) {
                double wd;
                t->checked++;
                if (!ref_match(plain, out[(size_t)n + base + i], K, W, &wd))
                    NOTE_BAD(t, "%s %s seeded total W=%d warp %d: got %.9g want %.9g", wk_type_name<T>(), kind_name(K),
                             W, w, wk_to_double(out[(size_t)n + base + i]), wd);
            }
        }
    WK_CUDA(cudaFree(din)); WK_CUDA(cudaFree(dout)); WK_CUDA(cudaFree(dvalid));
}

Test(scan, builtin_ops_with_init) {
    WK_REQUIRE_GPU();
    tally t = {0, 0, ""};
    wk_rng r = wk_rng_make(21);
    run_seeded<32, float, K_SUM>(&t, &r);
    run_seeded<7, float, K_MAX>(&t, &r);
    run_seeded<16, int, K_SUM>(&t, &r);
    run_seeded<32, int, K_MIN>(&t, &r);
    run_seeded<12, __half, K_SUM>(&t, &r);
    run_seeded<32, double, K_MAX>(&t, &r);
    report(&t, "seeded built-in scans");
}

// ---- host-only: the reference itself ---------------------------------------------------------------
Test(scan, host_reference_sanity) {
    // The prefix-scan reference must catch a wrong answer: NaN propagates through max, inf through sum.
    RefVal a = ref_identity<float>(K_MAX);
    a = ref_step(a, 1.0f, K_MAX);
    a = ref_step(a, (float)NAN, K_MAX);
    a = ref_step(a, 2.0f, K_MAX);
    double wd;
    cr_expect(ref_match(a, (float)NAN, K_MAX, 32, &wd));
    cr_expect(!ref_match(a, 2.0f, K_MAX, 32, &wd));
    RefVal s = ref_identity<int>(K_SUM);
    s = ref_step(s, 2147483647, K_SUM);
    s = ref_step(s, 1, K_SUM);
    cr_expect(ref_match(s, (int)(-2147483647 - 1), K_SUM, 32, &wd), "int sum must wrap");
    RefVal z = ref_identity<float>(K_SUM);
    cr_expect(!ref_match(z, -0.0f, K_SUM, 32, &wd), "exclusive sum lane 0 must be +0");
}
