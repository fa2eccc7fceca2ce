// Tests of include/warpkit/warp/reduce.cuh: every type x every width 1..32 x Sum/Max/Min,
// the valid-lane forms with every count 1..Width (and past it), the active-mask forms with random
// lane sets, a non-commutative generic operator, argmax/argmin ties and NaN, and determinism.
// Host references run in double precision (integers exactly, with two's-complement wrap).
#include "../common.cuh"
#include <warpkit/reduce.cuh>
#include <utility>
#include <vector>

enum Kind { K_SUM, K_MAX, K_MIN };
static const char* kind_name(int k) { return k == K_SUM ? "sum" : k == K_MAX ? "max" : "min"; }

static int g_warps(void) { return wk_quick() ? 8 : 96; }

// ---- kernels ---------------------------------------------------------------------------------
// One thread per input element; lane l of warp w reads in[w*32+l]. `valid` holds one count per
// (warp, segment); the valid forms read it, the plain forms ignore it.
template <int W, typename T, int K, bool Valid>
__global__ void k_named(const T* in, T* out, const int* valid) {
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x & 31;
    const int va = valid[(gid >> 5) * 32 + lane / W];
    const T v = in[gid];
    T r;
    if constexpr (K == K_SUM) r = Valid ? warpkit::warpReduceSum<W>(v, va) : warpkit::warpReduceSum<W>(v);
    else if constexpr (K == K_MAX) r = Valid ? warpkit::warpReduceMax<W>(v, va) : warpkit::warpReduceMax<W>(v);
    else r = Valid ? warpkit::warpReduceMin<W>(v, va) : warpkit::warpReduceMin<W>(v);
    out[gid] = r;
}

// Lanes whose bit in masks[warp] is clear return at once; the rest reduce over the active set.
template <typename T, int K> __global__ void k_active(const T* in, T* out, const unsigned* masks) {
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (!((masks[gid >> 5] >> (threadIdx.x & 31)) & 1u)) return;
    const T v = in[gid];
    T r;
    if constexpr (K == K_SUM) r = warpkit::warpReduceSumActive(v);
    else if constexpr (K == K_MAX) r = warpkit::warpReduceMaxActive(v);
    else r = warpkit::warpReduceMinActive(v);
    out[gid] = r;
}

// A non-commutative, associative operator: composition of affine maps x -> a*x + b (mod 2^32).
// compose(f, g) applies f first, then g. A reduction that swaps operands gets it wrong.
struct Affine { unsigned a, b; };
struct Compose {
    __host__ __device__ Affine operator()(Affine f, Affine g) const { return Affine{f.a * g.a, f.b * g.a + g.b}; }
};

template <int W, bool Valid> __global__ void k_affine(const Affine* in, Affine* out, const int* valid) {
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    const int va = valid[(gid >> 5) * 32 + (threadIdx.x & 31) / W];
    out[gid] = Valid ? warpkit::warpReduce<W>(in[gid], Compose{}, va) : warpkit::warpReduce<W>(in[gid], Compose{});
}
__global__ void k_affine_active(const Affine* in, Affine* out, const unsigned* masks) {
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (!((masks[gid >> 5] >> (threadIdx.x & 31)) & 1u)) return;
    out[gid] = warpkit::warpReduceActive(in[gid], Compose{});
}

template <int W, typename T, bool IsMax, bool Valid>
__global__ void k_arg(const T* in, warpkit::ValueIndex<T>* out, const int* valid) {
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    const int va = valid[(gid >> 5) * 32 + (threadIdx.x & 31) / W];
    warpkit::ValueIndex<T> r;
    if constexpr (IsMax)
        r = Valid ? warpkit::warpReduceArgMax<W>(in[gid], gid, va) : warpkit::warpReduceArgMax<W>(in[gid], gid);
    else r = Valid ? warpkit::warpReduceArgMin<W>(in[gid], gid, va) : warpkit::warpReduceArgMin<W>(in[gid], gid);
    out[gid] = r;
}

// ---- host side -----------------------------------------------------------------------------
// Segment geometry: segment k of a warp is lanes [k*W, min((k+1)*W, 32)).
static int seg_count(int W) { return (32 + W - 1) / W; }
static int seg_len(int W, int k) { return (k + 1) * W <= 32 ? W : 32 - k * W; }
static bool is_pow2(int W) { return (W & (W - 1)) == 0; }

/// Random inputs for T: floats in [-100, 100) with NaN and +-inf sprinkled in (about 1 in 40
/// elements each when `specials`), integers across their whole range.
template <typename T> static void fill(std::vector<T>& h, wk_rng* r, bool specials) {
    for (size_t i = 0; i < h.size(); ++i) {
        if constexpr (warpkit::detail::Arith<T>::is_float) {
            double x = wk_uniform(r, -100.0, 100.0);
            uint64_t u = wk_next(r) % 120;
            if (specials && u == 0) x = NAN;
            else if (specials && u == 1) x = INFINITY;
            else if (specials && u == 2) x = -INFINITY;
            h[i] = wk_from_double<T>(x);
        } else {
            uint64_t u = wk_next(r);
            memcpy(&h[i], &u, sizeof(T));
        }
    }
}

/// Host reference of one segment: lanes [b, b+n) of the input. Returns double for floats; for
/// integers the wrapped exact value converted to double is compared via exact equality of T.
template <typename T> static T ref_int(const T* x, int n, int kind) {
    T acc = x[0];
    for (int i = 1; i < n; ++i) {
        if (kind == K_SUM) acc = (T)((unsigned long long)acc + (unsigned long long)x[i]);
        else if (kind == K_MAX) acc = x[i] > acc ? x[i] : acc;
        else acc = x[i] < acc ? x[i] : acc;
    }
    return acc;
}
static double ref_float(const double* x, int n, int kind, double* sumabs) {
    double acc = x[0], sa = fabs(x[0]);
    bool nan = isnan(x[0]);
    for (int i = 1; i < n; ++i) {
        nan |= isnan(x[i]);
        sa += fabs(x[i]);
        if (kind == K_SUM) acc += x[i];
        else if (kind == K_MAX) acc = x[i] > acc ? x[i] : acc;
        else acc = x[i] < acc ? x[i] : acc;
    }
    *sumabs = sa;
    return (nan && kind != K_SUM) ? NAN : acc;
}

typedef struct { long checked, bad; char first[512]; } tally;

static void report(tally* t, const char* what) {
    cr_expect(t->bad == 0, "%s: %ld of %ld results wrong (seed %#llx); first: %s", what, t->bad, t->checked,
              (unsigned long long)wk_seed(), t->first);
}
#define NOTE_BAD(t, ...)                                                                  \
    do {                                                                                  \
        if ((t)->bad++ == 0) snprintf((t)->first, sizeof (t)->first, __VA_ARGS__);        \
    } while (0)

/// Compare one lane's result for segment values x[0..n) (n contributing lanes).
template <typename T> static void check_one(tally* t, const T* x, int n, int kind, T got, int W, int warp, int lane) {
    t->checked++;
    if constexpr (warpkit::detail::Arith<T>::is_float) {
        double xd[32], sa;
        for (int i = 0; i < n; ++i) xd[i] = wk_to_double(x[i]);
        double want = ref_float(xd, n, kind, &sa);
        double g = wk_to_double(got);
        double tol_acc = kind == K_SUM ? (double)W * wk_eps<typename warpkit::detail::Arith<T>::Acc>() * sa : 0.0;
        bool ok;
        if (isnan(want)) ok = isnan(g);
        else if (isinf(want)) ok = g == want;
        else ok = !isnan(g) && !isinf(g) && fabs(g - want) <= tol_acc + wk_eps<T>() * fabs(want);
        if (!ok)
            NOTE_BAD(t, "%s %s W=%d warp %d lane %d n=%d: got %.9g want %.9g", wk_type_name<T>(), kind_name(kind), W,
                     warp, lane, n, g, want);
    } else {
        T want = ref_int(x, n, kind);
        if (got != want)
            NOTE_BAD(t, "%s %s W=%d warp %d lane %d n=%d: got %lld want %lld", wk_type_name<T>(), kind_name(kind), W,
                     warp, lane, n, (long long)got, (long long)want);
    }
}

/// Per-segment valid counts 1..W+1 (W+1 checks that counts past the segment are clamped).
static std::vector<int> make_valid(int warps, int W, wk_rng* r) {
    std::vector<int> v((size_t)warps * 32);
    for (size_t i = 0; i < v.size(); ++i) v[i] = 1 + (int)((i + wk_next(r) % 3) % (size_t)(W + 1));
    return v;
}

// Kernels for widths 1..32 in a table, so the host code below is compiled once per type and
// operator, not once per width (that keeps this file's build time reasonable).
template <typename T, int K, bool Valid, int... Ws>
static const void* const* named_table(std::integer_sequence<int, Ws...>) {
    static const void* const table[] = {(const void*)k_named<Ws + 1, T, K, Valid>...};
    return table;
}
template <typename... Args> static void launch(const void* kernel, int blocks, int threads, Args... args) {
    void* params[] = {(void*)&args...};
    WK_CUDA(cudaLaunchKernel(kernel, dim3(blocks), dim3(threads), params, 0, 0));
    WK_LAUNCHED();
}

template <typename T, int K, bool Valid> static void run_named(tally* t, wk_rng* r, int W, const void* kernel) {
    const int warps = g_warps(), n = warps * 32;
    std::vector<T> h(n), out(n), out2(n);
    fill(h, r, true);
    std::vector<int> valid = make_valid(warps, W, r);
    T *din = wk_alloc<T>(n), *dout = wk_alloc<T>(n);
    int* dvalid = wk_alloc<int>(valid.size());
    wk_upload(din, h.data(), n);
    wk_upload(dvalid, valid.data(), valid.size());
    for (int rep = 0; rep < 2; ++rep) {
        wk_poison(dout, n);
        launch(kernel, n / 128, 128, (const T*)din, dout, (const int*)dvalid);
        wk_download(rep ? out2.data() : out.data(), dout, n);
    }
    for (int w = 0; w < warps; ++w)
        for (int k = 0; k < seg_count(W); ++k) {
            const int base = w * 32 + k * W, len = seg_len(W, k);
            int cnt = Valid ? valid[w * 32 + k] : len;
            cnt = cnt < len ? cnt : len;
            const int lanes = is_pow2(W) ? len : 1; // which lanes hold the result
            for (int l = 0; l < lanes; ++l) {
                check_one<T>(t, &h[base], cnt, K, out[base + l], W, w, k * W + l);
                if (memcmp(&out[base + l], &out[base], sizeof(T)) != 0)
                    NOTE_BAD(t, "%s %s W=%d warp %d: lane %d differs bitwise from the segment's first lane",
                             wk_type_name<T>(), kind_name(K), W, w, k * W + l);
            }
        }
    if (memcmp(out.data(), out2.data(), n * sizeof(T)) != 0)
        NOTE_BAD(t, "%s %s W=%d: two runs on the same input differ", wk_type_name<T>(), kind_name(K), W);
    WK_CUDA(cudaFree(din)); WK_CUDA(cudaFree(dout)); WK_CUDA(cudaFree(dvalid));
}

template <typename T, int K, bool Valid> static void sweep_named(void) {
    tally t = {0, 0, ""};
    wk_rng r = wk_rng_make(K * 100 + (Valid ? 7 : 0) + sizeof(T));
    const void* const* table = named_table<T, K, Valid>(std::make_integer_sequence<int, 32>{});
    for (int W = 1; W <= 32; ++W) run_named<T, K, Valid>(&t, &r, W, table[W - 1]);
    char what[96];
    snprintf(what, sizeof what, "%s %s%s", wk_type_name<T>(), kind_name(K), Valid ? " (valid lanes)" : "");
    report(&t, what);
}
template <int K, bool Valid> static void sweep_types(void) {
    sweep_named<int, K, Valid>();
    sweep_named<unsigned, K, Valid>();
    sweep_named<long long, K, Valid>();
    sweep_named<unsigned long long, K, Valid>();
    sweep_named<float, K, Valid>();
    sweep_named<double, K, Valid>();
    sweep_named<__half, K, Valid>();
    sweep_named<__nv_bfloat16, K, Valid>();
}

Test(warp_reduce, sum_all_types_all_widths) { WK_REQUIRE_GPU(); sweep_types<K_SUM, false>(); }
Test(warp_reduce, max_min_all_types_all_widths_nan_inf) {
    WK_REQUIRE_GPU();
    sweep_types<K_MAX, false>();
    sweep_types<K_MIN, false>();
}
Test(warp_reduce, valid_lane_counts_all_types_all_widths) {
    WK_REQUIRE_GPU();
    sweep_types<K_SUM, true>();
    sweep_types<K_MAX, true>();
    sweep_types<K_MIN, true>();
}

// Lane sets for the active forms: every count 1..32 (random lanes), plus single lanes and all.
static std::vector<unsigned> make_masks(int warps, wk_rng* r) {
    std::vector<unsigned> m(warps);
    for (int w = 0; w < warps; ++w) {
        int want = 1 + w % 32;
        unsigned mask = 0;
        while (__builtin_popcount(mask) < want) mask |= 1u << (wk_next(r) % 32);
        m[w] = mask;
    }
    if (warps > 2) { m[0] = 0x80000000u; m[1] = 0xffffffffu; }
    return m;
}

template <typename T, int K> static void run_active(tally* t, wk_rng* r) {
    const int warps = wk_quick() ? 32 : 128, n = warps * 32;
    std::vector<T> h(n), out(n);
    fill(h, r, true);
    std::vector<unsigned> masks = make_masks(warps, r);
    T *din = wk_alloc<T>(n), *dout = wk_alloc<T>(n);
    unsigned* dm = wk_alloc<unsigned>(warps);
    wk_upload(din, h.data(), n);
    wk_upload(dm, masks.data(), warps);
    wk_poison(dout, n);
    k_active<T, K><<<n / 64, 64>>>(din, dout, dm);
    WK_LAUNCHED();
    wk_download(out.data(), dout, n);
    T poison;
    memset(&poison, 0xA5, sizeof poison);
    for (int w = 0; w < warps; ++w) {
        T x[32];
        int cnt = 0;
        for (int l = 0; l < 32; ++l)
            if ((masks[w] >> l) & 1u) x[cnt++] = h[w * 32 + l];
        for (int l = 0; l < 32; ++l) {
            if ((masks[w] >> l) & 1u) check_one<T>(t, x, cnt, K, out[w * 32 + l], 32, w, l);
            else if (memcmp(&out[w * 32 + l], &poison, sizeof(T)) != 0)
                NOTE_BAD(t, "%s active: inactive lane %d of warp %d was written", wk_type_name<T>(), l, w);
        }
    }
    WK_CUDA(cudaFree(din)); WK_CUDA(cudaFree(dout)); WK_CUDA(cudaFree(dm));
}
template <typename T> static void active_all_kinds(tally* t, wk_rng* r) {
    run_active<T, K_SUM>(t, r);
    run_active<T, K_MAX>(t, r);
    run_active<T, K_MIN>(t, r);
}

Test(warp_reduce, active_lanes_every_count) {
    WK_REQUIRE_GPU();
    tally t = {0, 0, ""};
    wk_rng r = wk_rng_make(41);
    active_all_kinds<int>(&t, &r);
    active_all_kinds<unsigned>(&t, &r);
    active_all_kinds<long long>(&t, &r);
    active_all_kinds<unsigned long long>(&t, &r);
    active_all_kinds<float>(&t, &r);
    active_all_kinds<double>(&t, &r);
    active_all_kinds<__half>(&t, &r);
    active_all_kinds<__nv_bfloat16>(&t, &r);
    report(&t, "active-lane reductions");
}

// ---- generic operator: order matters ----------------------------------------------------------
static Affine compose_ref(const Affine* x, int n) {
    Affine acc = x[0];
    for (int i = 1; i < n; ++i) acc = Compose{}(acc, x[i]);
    return acc;
}

template <bool Valid, int... Ws> static const void* const* affine_table(std::integer_sequence<int, Ws...>) {
    static const void* const table[] = {(const void*)k_affine<Ws + 1, Valid>...};
    return table;
}
template <bool Valid> static void run_affine(tally* t, wk_rng* r, int W, const void* kernel) {
    const int warps = g_warps(), n = warps * 32;
    std::vector<Affine> h(n), out(n);
    for (auto& a : h) { a.a = (unsigned)wk_next(r) | 1u; a.b = (unsigned)wk_next(r); }
    std::vector<int> valid = make_valid(warps, W, r);
    Affine *din = wk_alloc<Affine>(n), *dout = wk_alloc<Affine>(n);
    int* dvalid = wk_alloc<int>(valid.size());
    wk_upload(din, h.data(), n);
    wk_upload(dvalid, valid.data(), valid.size());
    wk_poison(dout, n);
    launch(kernel, n / 128, 128, (const Affine*)din, dout, (const int*)dvalid);
    wk_download(out.data(), dout, n);
    for (int w = 0; w < warps; ++w)
        for (int k = 0; k < seg_count(W); ++k) {
            const int base = w * 32 + k * W, len = seg_len(W, k);
            int cnt = Valid ? (valid[w * 32 + k] < len ? valid[w * 32 + k] : len) : len;
            Affine want = compose_ref(&h[base], cnt);
            for (int l = 0; l < (is_pow2(W) ? len : 1); ++l) {
                t->checked++;
                Affine g = out[base + l];
                if (g.a != want.a || g.b != want.b)
                    NOTE_BAD(t, "compose W=%d%s warp %d lane %d n=%d: got (%u,%u) want (%u,%u)", W,
                             Valid ? " valid" : "", w, k * W + l, cnt, g.a, g.b, want.a, want.b);
            }
        }
    WK_CUDA(cudaFree(din)); WK_CUDA(cudaFree(dout)); WK_CUDA(cudaFree(dvalid));
}
template <bool Valid> static void affine_widths(tally* t, wk_rng* r) {
    const void* const* table = affine_table<Valid>(std::make_integer_sequence<int, 32>{});
    for (int W = 1; W <= 32; ++W) run_affine<Valid>(t, r, W, table[W - 1]);
}

Test(warp_reduce, generic_noncommutative_operator_struct) {
    WK_REQUIRE_GPU();
    tally t = {0, 0, ""};
    wk_rng r = wk_rng_make(77);
    affine_widths<false>(&t, &r);
    affine_widths<true>(&t, &r);
    // Active lanes, in lane order.
    const int warps = 64, n = warps * 32;
    std::vector<Affine> h(n), out(n);
    for (auto& a : h) { a.a = (unsigned)wk_next(&r) | 1u; a.b = (unsigned)wk_next(&r); }
    std::vector<unsigned> masks = make_masks(warps, &r);
    Affine *din = wk_alloc<Affine>(n), *dout = wk_alloc<Affine>(n);
    unsigned* dm = wk_alloc<unsigned>(warps);
    wk_upload(din, h.data(), n);
    wk_upload(dm, masks.data(), warps);
    wk_poison(dout, n);
    k_affine_active<<<n / 64, 64>>>(din, dout, dm);
    WK_LAUNCHED();
    wk_download(out.data(), dout, n);
    for (int w = 0; w < warps; ++w) {
        Affine x[32];
        int cnt = 0;
        for (int l = 0; l < 32; ++l) if ((masks[w] >> l) & 1u) x[cnt++] = h[w * 32 + l];
        Affine want = compose_ref(x, cnt);
        for (int l = 0; l < 32; ++l)
            if ((masks[w] >> l) & 1u) {
                t.checked++;
                if (out[w * 32 + l].a != want.a || out[w * 32 + l].b != want.b)
                    NOTE_BAD(&t, "compose active warp %d (mask %#x) lane %d wrong", w, masks[w], l);
            }
    }
    WK_CUDA(cudaFree(din)); WK_CUDA(cudaFree(dout)); WK_CUDA(cudaFree(dm));
    report(&t, "generic operator");
}

// ---- argmax / argmin -------------------------------------------------------------------------
template <typename T, bool IsMax, bool Valid, int... Ws>
static const void* const* arg_table(std::integer_sequence<int, Ws...>) {
    static const void* const table[] = {(const void*)k_arg<Ws + 1, T, IsMax, Valid>...};
    return table;
}
template <typename T, bool IsMax, bool Valid> static void run_arg(tally* t, wk_rng* r, int W, const void* kernel) {
    const int warps = g_warps(), n = warps * 32;
    std::vector<T> h(n);
    std::vector<warpkit::ValueIndex<T>> out(n);
    for (int i = 0; i < n; ++i) { // few distinct values, so ties are common; some NaN and inf
        uint64_t u = wk_next(r) % 64;
        double x = (double)(int)(wk_next(r) % 7) - 3.0;
        if constexpr (warpkit::detail::Arith<T>::is_float) {
            if (u == 0) x = NAN;
            else if (u == 1) x = INFINITY;
            else if (u == 2) x = -INFINITY;
        }
        h[i] = wk_from_double<T>(x);
    }
    std::vector<int> valid = make_valid(warps, W, r);
    T* din = wk_alloc<T>(n);
    warpkit::ValueIndex<T>* dout = wk_alloc<warpkit::ValueIndex<T>>(n);
    int* dvalid = wk_alloc<int>(valid.size());
    wk_upload(din, h.data(), n);
    wk_upload(dvalid, valid.data(), valid.size());
    wk_poison(dout, n);
    launch(kernel, n / 128, 128, (const T*)din, dout, (const int*)dvalid);
    wk_download(out.data(), dout, n);
    for (int w = 0; w < warps; ++w)
        for (int k = 0; k < seg_count(W); ++k) {
            const int base = w * 32 + k * W, len = seg_len(W, k);
            int cnt = Valid ? (valid[w * 32 + k] < len ? valid[w * 32 + k] : len) : len;
            int best = base; // first NaN wins, else first extreme
            for (int i = base + 1; i < base + cnt; ++i) {
                double a = wk_to_double(h[i]), b = wk_to_double(h[best]);
                if (isnan(b)) continue;
                if (isnan(a) || (IsMax ? a > b : a < b)) best = i;
            }
            for (int l = 0; l < (is_pow2(W) ? len : 1); ++l) {
                t->checked++;
                if (out[base + l].index != best || memcmp(&out[base + l].value, &h[best], sizeof(T)) != 0)
                    NOTE_BAD(t, "arg%s %s W=%d warp %d lane %d n=%d: got index %d want %d", IsMax ? "max" : "min",
                             wk_type_name<T>(), W, w, k * W + l, cnt, out[base + l].index, best);
            }
        }
    WK_CUDA(cudaFree(din)); WK_CUDA(cudaFree(dout)); WK_CUDA(cudaFree(dvalid));
}
template <typename T, bool IsMax, bool Valid> static void arg_widths(tally* t, wk_rng* r) {
    const void* const* table = arg_table<T, IsMax, Valid>(std::make_integer_sequence<int, 32>{});
    for (int W = 1; W <= 32; ++W) run_arg<T, IsMax, Valid>(t, r, W, table[W - 1]);
}
template <typename T> static void arg_all(tally* t, wk_rng* r) {
    arg_widths<T, true, false>(t, r);
    arg_widths<T, false, false>(t, r);
    arg_widths<T, true, true>(t, r);
    arg_widths<T, false, true>(t, r);
}

Test(warp_reduce, argmax_argmin_ties_nan_all_widths) {
    WK_REQUIRE_GPU();
    tally t = {0, 0, ""};
    wk_rng r = wk_rng_make(99);
    arg_all<float>(&t, &r);
    arg_all<int>(&t, &r);
    arg_all<__half>(&t, &r);
    report(&t, "argmax/argmin");
}
