// Tests of include/warpkit/warp/segmented.cuh: warp reductions and scans over head-flag segments
// of varying length, against host references, for every flag pattern class: one segment, 32
// segments of one lane, every run length 1..32 repeated, random flags (dense and sparse), and a
// partial warp whose tail lanes are their own segments.
//   * named Sum/Max/Min reduce, inclusive and exclusive scans for int, float, double, __half,
//     long long (integers exact; floats against a double reference within the order's rounding);
//   * a non-commutative generic operator (affine maps composed, exact in 32-bit integers) through
//     both the head-flag and the WarpSegment forms, the exclusive scan seeded by a non-identity;
//   * NaN and +-inf inputs for Max/Min; warpSegmentOf's first/last lanes.
#include "../common.cuh"
#include <warpkit/warp/segmented.cuh>
#include <vector>

/// An affine map x -> a x + b (mod 2^32); op(f, g) = g after f: associative, not commutative.
struct Affine {
    unsigned a, b;
};
struct Compose {
    __host__ __device__ Affine operator()(Affine f, Affine g) const { return Affine{g.a * f.a, g.a * f.b + g.b}; }
};

enum { NPLANE = 9 }; // reduce, inclusive, exclusive for Sum, Max, Min

template <typename T> __global__ void k_named(const T* in, const unsigned* heads, T* out, int warps) {
    const int w = (int)((blockIdx.x * blockDim.x + threadIdx.x) / 32), lane = (int)(threadIdx.x % 32);
    if (w >= warps) return; // whole warps only
    const T v = in[w * 32 + lane];
    const bool head = (heads[w] >> lane) & 1u;
    const warpkit::WarpSegment s = warpkit::warpSegmentOf(head);
    const int n = warps * 32, i = w * 32 + lane;
    out[0 * n + i] = warpkit::warpSegmentedReduceSum(v, head);
    out[1 * n + i] = warpkit::warpSegmentedInclusiveSum(v, s);
    out[2 * n + i] = warpkit::warpSegmentedExclusiveSum(v, head);
    out[3 * n + i] = warpkit::warpSegmentedReduceMax(v, s);
    out[4 * n + i] = warpkit::warpSegmentedInclusiveMax(v, head);
    out[5 * n + i] = warpkit::warpSegmentedExclusiveMax(v, s);
    out[6 * n + i] = warpkit::warpSegmentedReduceMin(v, head);
    out[7 * n + i] = warpkit::warpSegmentedInclusiveMin(v, s);
    out[8 * n + i] = warpkit::warpSegmentedExclusiveMin(v, head);
}

__global__ void k_generic(const Affine* in, const unsigned* heads, Affine* out, int2* seg, int warps) {
    const int w = (int)((blockIdx.x * blockDim.x + threadIdx.x) / 32), lane = (int)(threadIdx.x % 32);
    if (w >= warps) return;
    const Affine v = in[w * 32 + lane];
    const bool head = (heads[w] >> lane) & 1u;
    const warpkit::WarpSegment s = warpkit::warpSegmentOf(head);
    const int n = warps * 32, i = w * 32 + lane;
    out[0 * n + i] = warpkit::warpSegmentedReduce(v, Compose{}, head);
    out[1 * n + i] = warpkit::warpSegmentedInclusiveScan(v, Compose{}, s);
    out[2 * n + i] = warpkit::warpSegmentedExclusiveScan(v, Compose{}, Affine{3u, 7u}, head);
    seg[i] = make_int2(s.first, s.last);
}

// ---- flag patterns ---------------------------------------------------------------------------------
static std::vector<unsigned> patterns(wk_rng* r) {
    std::vector<unsigned> p = {0u, 1u, 0xffffffffu, 0x80000000u, 0x00010001u, 0xfffffffeu};
    for (int len = 1; len <= 32; ++len) { // runs of `len` lanes, and runs of len with a 1-lane run between
        unsigned m = 0, m2 = 0;
        for (int l = 0; l < 32; l += len) m |= 1u << l;
        for (int l = 0; l < 32; l += len + 1) m2 |= 1u << l | (l + len < 32 ? 1u << (l + len) : 0u);
        p.push_back(m);
        p.push_back(m2);
    }
    for (int k = 1; k < 32; ++k) p.push_back(k == 0 ? 0u : (0xffffffffu << k)); // a partial warp of k lanes
    for (int i = 0; i < (wk_quick() ? 16 : 200); ++i) {
        const unsigned a = (unsigned)wk_next(r), b = (unsigned)wk_next(r);
        p.push_back(i % 3 == 0 ? a : i % 3 == 1 ? (a & b) : (a & b & (unsigned)wk_next(r)));
    }
    return p;
}

/// Segment [first, last] of lane l under mask m (lane 0 always a head).
static void host_seg(unsigned m, int l, int* first, int* last) {
    m |= 1u;
    int f = l, e = l;
    while (!((m >> f) & 1u)) --f;
    while (e < 31 && !((m >> (e + 1)) & 1u)) ++e;
    *first = f;
    *last = e;
}

template <typename T> static void named_check(void) {
    wk_rng r = wk_rng_make(0x5e9 + sizeof(T));
    const std::vector<unsigned> pat = patterns(&r);
    const int warps = (int)pat.size(), n = warps * 32;
    constexpr bool isf = warpkit::detail::Arith<T>::is_float;
    std::vector<T> h(n);
    for (int i = 0; i < n; ++i) {
        double x = isf ? (double)wk_int(&r, -64, 64) / 8.0 : (double)wk_int(&r, -1000, 1000);
        if (isf && wk_int(&r, 0, 40) == 0) x = wk_int(&r, 0, 2) == 0 ? NAN : (wk_int(&r, 0, 1) ? INFINITY : -INFINITY);
        h[i] = wk_from_double<T>(x);
    }
    T* din = wk_alloc<T>(n);
    T* dout = wk_alloc<T>((size_t)NPLANE * n);
    unsigned* dh = wk_alloc<unsigned>(warps);
    wk_upload(din, h.data(), n);
    wk_upload(dh, pat.data(), warps);
    wk_poison(dout, (size_t)NPLANE * n);
    k_named<T><<<(warps + 3) / 4, 128>>>(din, dh, dout, warps);
    WK_LAUNCHED();
    std::vector<T> got((size_t)NPLANE * n);
    wk_download(got.data(), dout, got.size());
    for (int w = 0; w < warps; ++w)
        for (int l = 0; l < 32; ++l) {
            int f, e;
            host_seg(pat[w], l, &f, &e);
            if constexpr (isf) {
                double want[NPLANE];
                auto fold = [&](int op, int from, int to, double init) { // op over lanes [from, to)
                    double a = init;
                    for (int j = from; j < to; ++j) {
                        const double x = wk_to_double(h[w * 32 + j]);
                        if (op == 0) a += x;
                        else if (isnan(a) || isnan(x)) a = NAN;
                        else a = op == 1 ? fmax(a, x) : fmin(a, x);
                    }
                    return a;
                };
                const double init[3] = {0.0, -INFINITY, INFINITY};
                for (int op = 0; op < 3; ++op) {
                    want[3 * op + 0] = fold(op, f, e + 1, init[op]);
                    want[3 * op + 1] = fold(op, f, l + 1, init[op]);
                    want[3 * op + 2] = fold(op, f, l, init[op]);
                }
                for (int p = 0; p < NPLANE; ++p) {
                    const double g = wk_to_double(got[(size_t)p * n + w * 32 + l]);
                    // Sums of eighths are exact in every type here except when +inf meets -inf (NaN).
                    const bool ok = wk_close(g, wk_to_double(wk_from_double<T>(want[p])), 0.0);
                    cr_assert(ok, "%s plane %d warp %d (heads 0x%08x) lane %d: got %.17g want %.17g", wk_type_name<T>(),
                              p, w, pat[w], l, g, want[p]);
                }
            } else {
                // Integers: the reference in T itself, compared bit for bit (a double cannot hold
                // LLONG_MAX, Min's identity: it rounds to 2^63, out of long long's range).
                const T* x = &h[w * 32];
                const T id[3] = {T(0), warpkit::detail::Arith<T>::lowest(), warpkit::detail::Arith<T>::highest()};
                for (int op = 0; op < 3; ++op) {
                    const int to[3] = {e + 1, l + 1, l};
                    for (int k = 0; k < 3; ++k) {
                        T a = id[op];
                        for (int j = f; j < to[k]; ++j)
                            a = op == 0 ? T(a + x[j]) : op == 1 ? (x[j] > a ? x[j] : a) : (x[j] < a ? x[j] : a);
                        const int p = 3 * op + k;
                        const T g = got[(size_t)p * n + w * 32 + l];
                        cr_assert(g == a, "%s plane %d warp %d (heads 0x%08x) lane %d: got %lld want %lld",
                                  wk_type_name<T>(), p, w, pat[w], l, (long long)g, (long long)a);
                    }
                }
            }
        }
    WK_CUDA(cudaFree(din));
    WK_CUDA(cudaFree(dout));
    WK_CUDA(cudaFree(dh));
}

Test(warp_segmented, named_every_pattern) {
    WK_REQUIRE_GPU();
    named_check<int>();
    named_check<long long>();
    named_check<float>();
    named_check<double>();
    named_check<__half>();
}

Test(warp_segmented, generic_noncommutative) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0xaff);
    const std::vector<unsigned> pat = patterns(&r);
    const int warps = (int)pat.size(), n = warps * 32;
    std::vector<Affine> h(n);
    for (auto& v : h) v = Affine{(unsigned)wk_next(&r) | 1u, (unsigned)wk_next(&r)};
    Affine* din = wk_alloc<Affine>(n);
    Affine* dout = wk_alloc<Affine>(3 * (size_t)n);
    int2* dseg = wk_alloc<int2>(n);
    unsigned* dh = wk_alloc<unsigned>(warps);
    wk_upload(din, h.data(), n);
    wk_upload(dh, pat.data(), warps);
    wk_poison(dout, 3 * (size_t)n);
    k_generic<<<(warps + 3) / 4, 128>>>(din, dh, dout, dseg, warps);
    WK_LAUNCHED();
    std::vector<Affine> got(3 * (size_t)n);
    std::vector<int2> seg(n);
    wk_download(got.data(), dout, got.size());
    wk_download(seg.data(), dseg, n);
    const Compose op;
    for (int w = 0; w < warps; ++w)
        for (int l = 0; l < 32; ++l) {
            int f, e;
            host_seg(pat[w], l, &f, &e);
            const int i = w * 32 + l;
            cr_assert(seg[i].x == f && seg[i].y == e, "warpSegmentOf heads 0x%08x lane %d: [%d, %d], want [%d, %d]",
                      pat[w], l, seg[i].x, seg[i].y, f, e);
            Affine red = h[w * 32 + f], inc = red, exc = Affine{3u, 7u};
            for (int j = f + 1; j <= e; ++j) red = op(red, h[w * 32 + j]);
            for (int j = f + 1; j <= l; ++j) inc = op(inc, h[w * 32 + j]);
            for (int j = f; j < l; ++j) exc = op(exc, h[w * 32 + j]);
            const Affine want[3] = {red, inc, exc};
            for (int p = 0; p < 3; ++p) {
                const Affine g = got[(size_t)p * n + i];
                cr_assert(g.a == want[p].a && g.b == want[p].b,
                          "generic plane %d heads 0x%08x lane %d: (%u, %u) want (%u, %u)", p, pat[w], l, g.a, g.b,
                          want[p].a, want[p].b);
            }
        }
    for (void* p : {(void*)din, (void*)dout, (void*)dseg, (void*)dh}) WK_CUDA(cudaFree(p));
}
