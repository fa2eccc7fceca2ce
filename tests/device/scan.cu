// Tests of include/warpkit/device/scan.cuh (deviceInclusiveScan / deviceExclusiveScan and the Sum
// forms), against host scans: exact for integers and integer structs, a double-precision reference
// for floats with a tolerance that grows with the position.
//   sizes:         int, unsigned, long long, float, double sums, inclusive and exclusive (also
//                  seeded): n = 0, 1, 2, small, tile +-1, 2 tiles +-1, primes, 33 and 300 tiles (past
//                  the look-back windows kept in shared memory); outputs poisoned, guards checked.
//   alignment:     in and out at element offsets 0..7 separately, and in place; the float results are
//                  the same bits for every out offset and in place (only in's alignment may matter).
//   noncommutative: affine maps mod 2^32 (8 bytes, 4-byte aligned: also at 4 bytes past a 16-byte
//                  boundary, element I/O) and 2x2 matrices mod 65521 (16 bytes), both scans.
//   segmented:     SegmentedPair / SegmentedOp, head flags with random segment lengths (1 to
//                  several tiles), int and double values (the double pair has padding).
//   special:       NaN and +-inf in float sums; Max with NaN.
//   determinism:   float sums, many runs with other work on other streams (a kernel holding SMs for
//                  random times), several streams at once, bitwise identical outputs.
//   pipelines:     every stage count and lag a GPU's shared memory can lead to, on grids of 1, 3
//                  and all blocks: exact, and float bits equal to the public call's.
//   streams:       two concurrent scans on two streams with two workspaces.
//   workspace:     the size query; every call gets a workspace full of plausible garbage (status
//                  words claiming published prefixes); reuse without clearing;
//                  a workspace at an odd address.
//   bad_args:      every bad argument returns cudaErrorInvalidValue and writes nothing.
//   huge:          n > 2^31 unsigned sum in place, misaligned, every output checked on the device
//                  (skipped under WARPKIT_QUICK and when the 8.6 GB do not fit).
#include "../common.cuh"
#include <warpkit/device/scan.cuh>
#include <vector>

// ---- operators and struct types ---------------------------------------------------------------

/// x -> m x + c (mod 2^32); (f then g) = (g.m f.m, g.m f.c + g.c): associative, not commutative.
struct Affine {
    unsigned m, c;
};
struct AffineThen {
    __host__ __device__ Affine operator()(Affine f, Affine g) const { return {g.m * f.m, g.m * f.c + g.c}; }
};

/// 2x2 matrix product mod 65521.
struct Mat2 {
    unsigned a, b, c, d;
};
struct Mat2Mul {
    __host__ __device__ Mat2 operator()(Mat2 x, Mat2 y) const {
        const unsigned long long p = 65521u; // entries < p: a sum of two products fits 64 bits
        return {(unsigned)((1ull * x.a * y.a + 1ull * x.b * y.c) % p), (unsigned)((1ull * x.a * y.b + 1ull * x.b * y.d) % p),
                (unsigned)((1ull * x.c * y.a + 1ull * x.d * y.c) % p), (unsigned)((1ull * x.c * y.b + 1ull * x.d * y.d) % p)};
    }
};

using SegI = warpkit::SegmentedPair<int>;
using SegD = warpkit::SegmentedPair<double>;
using SegSum = warpkit::SegmentedOp<warpkit::Sum>;

static bool same(int a, int b) { return a == b; }
static bool same(unsigned a, unsigned b) { return a == b; }
static bool same(long long a, long long b) { return a == b; }
static bool same(const Affine& a, const Affine& b) { return a.m == b.m && a.c == b.c; }
static bool same(const Mat2& a, const Mat2& b) { return a.a == b.a && a.b == b.b && a.c == b.c && a.d == b.d; }
static bool same(const SegI& a, const SegI& b) { return a.value == b.value && (a.head != 0) == (b.head != 0); }
static void show(char* s, int x) { snprintf(s, 96, "%d", x); }
static void show(char* s, unsigned x) { snprintf(s, 96, "%u", x); }
static void show(char* s, long long x) { snprintf(s, 96, "%lld", x); }
static void show(char* s, const Affine& x) { snprintf(s, 96, "(%u, %u)", x.m, x.c); }
static void show(char* s, const Mat2& x) { snprintf(s, 96, "[%u %u; %u %u]", x.a, x.b, x.c, x.d); }
static void show(char* s, const SegI& x) { snprintf(s, 96, "(%d, head %d)", x.value, x.head); }

static int gen(wk_rng* r, int) { return (int)wk_int(r, -1000, 1000); }
static unsigned gen(wk_rng* r, unsigned) { return (unsigned)wk_next(r); } // sums wrap mod 2^32
static long long gen(wk_rng* r, long long) { return wk_int(r, -1000000000000LL, 1000000000000LL); }
static Affine gen(wk_rng* r, Affine) { return {(unsigned)wk_next(r) | 1u, (unsigned)wk_next(r)}; }
static Mat2 gen(wk_rng* r, Mat2) {
    return {(unsigned)wk_int(r, 0, 65520), (unsigned)wk_int(r, 0, 65520), (unsigned)wk_int(r, 0, 65520),
            (unsigned)wk_int(r, 0, 65520)};
}

template <typename T> static long long tileElems() { return warpkit::detail::ScanShape<T>::tileElems; }

// ---- running one call -------------------------------------------------------------------------

/// A workspace filled with plausible garbage before every call: status words that claim
/// published inclusive prefixes (flag 2) with random values. A call that failed to clear it
/// reads them and goes wrong (or out of bounds), which the checks see.
struct Workspace {
    void* p;
    size_t bytes;
};
__global__ void garbage_kernel(unsigned long long* w, size_t words, unsigned long long seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words; i += (size_t)gridDim.x * blockDim.x) {
        unsigned long long z = (seed + i) * 0x9e3779b97f4a7c15ull;
        z ^= z >> 29;
        w[i] = (2ull << 32) | (z & 0xffffffffull);
    }
}
static Workspace ws_make(size_t bytes) {
    Workspace w = {wk_alloc<unsigned char>(bytes + 64), bytes + 64};
    return w;
}
static void ws_garbage(const Workspace& w, cudaStream_t s, unsigned long long seed) {
    garbage_kernel<<<64, 256, 0, s>>>((unsigned long long*)w.p, w.bytes / 8, seed);
    WK_CUDA(cudaGetLastError());
}

template <bool Exclusive, typename T, typename Op>
static cudaError_t scan_call(const T* in, T* out, long long n, Op op, T init, void* ws, size_t* bytes, cudaStream_t s) {
    if constexpr (Exclusive) return warpkit::deviceExclusiveScan(in, out, n, op, init, ws, bytes, s);
    else return warpkit::deviceInclusiveScan(in, out, n, op, ws, bytes, s);
}

/// Queries the size, checks it fits the workspace, fills the workspace with garbage and scans.
template <bool Exclusive, typename T, typename Op>
static void scan_run(const T* in, T* out, long long n, Op op, T init, const Workspace& w, cudaStream_t s = 0,
                     unsigned long long seed = 1) {
    size_t need = 12345;
    WK_CUDA((scan_call<Exclusive>(in, out, n, op, init, nullptr, &need, s)));
    cr_assert(need <= w.bytes, "workspace query %zu bytes > the test's %zu", need, w.bytes);
    cr_assert(n > 0 || need == 0, "workspace query for n = 0: %zu bytes, want 0", need);
    ws_garbage(w, s, seed);
    size_t have = need;
    WK_CUDA((scan_call<Exclusive>(in, out, n, op, init, w.p, &have, s)));
}

template <bool Exclusive, typename T, typename Op>
static void host_scan(const T* in, T* out, long long n, Op op, T init) {
    T acc = init;
    for (long long i = 0; i < n; ++i) {
        if (Exclusive) {
            out[i] = acc;
            acc = op(acc, in[i]);
        } else {
            acc = i == 0 ? in[0] : op(acc, in[i]);
            out[i] = acc;
        }
    }
}

/// Buffers for one exact case: in at din + inOff, out at dout + outOff (or in place at
/// dout + outOff), both with `guard` poisoned elements around them.
template <typename T> struct Bufs {
    T *din, *dout;
    long long cap;
};
template <typename T> static Bufs<T> bufs_make(long long cap) { return {wk_alloc<T>(cap + 32), wk_alloc<T>(cap + 32), cap}; }
template <typename T> static void bufs_free(Bufs<T>& b) {
    WK_CUDA(cudaFree(b.din));
    WK_CUDA(cudaFree(b.dout));
}

/// One exact case: returns the number of wrong elements (logging the first few).
template <bool Exclusive, typename T, typename Op>
static long long exact_case(const char* what, const std::vector<T>& h, long long n, int inOff, int outOff, bool inPlace,
                            Op op, T init, Bufs<T>& b, const Workspace& w) {
    cr_assert(n + 16 <= b.cap);
    const long long span = n + 16;
    std::vector<T> want(n > 0 ? n : 1), got(span);
    host_scan<Exclusive>(h.data(), want.data(), n, op, init);
    wk_poison(b.dout, b.cap + 32);
    T* out = b.dout + 8 + outOff;
    const T* in = b.din + inOff;
    if (inPlace) wk_upload(out, h.data(), n);
    else wk_upload(b.din + inOff, h.data(), n);
    scan_run<Exclusive>(inPlace ? out : in, out, n, op, init, w);
    WK_CUDA(cudaDeviceSynchronize());
    wk_download(got.data(), b.dout + outOff, span); // 8 guard elements on each side
    long long bad = 0;
    unsigned char poison[sizeof(T)];
    memset(poison, 0xA5, sizeof(T));
    for (long long i = 0; i < span; ++i) {
        const long long e = i - 8;
        const bool inside = e >= 0 && e < n;
        const bool ok = inside ? same(got[i], want[e]) : memcmp(&got[i], poison, sizeof(T)) == 0;
        if (!ok && bad++ < 3) {
            char g[96], x[96] = "poison";
            show(g, got[i]);
            if (inside) show(x, want[e]);
            cr_log_error("%s: %s n=%lld in+%d out+%d%s: element %lld = %s, want %s", what, Exclusive ? "exclusive" : "inclusive",
                         n, inOff, outOff, inPlace ? " in place" : "", e, g, x);
        }
    }
    return bad;
}

/// Sizes around every tile boundary that matters for T: 0, 1, 2, small, tile +-1, 2 and 3 tiles
/// +-1, primes.
template <typename T> static std::vector<long long> sizes_for() {
    const long long t = tileElems<T>();
    std::vector<long long> s = {0, 1, 2, 3, 5, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, t - 1, t, t + 1, 2 * t - 1,
                                2 * t, 2 * t + 1, 3 * t + 1, 65537, 100003};
    if (!wk_quick()) {
        s.push_back(33 * t + 7); // more than one look-back window
        s.push_back(1000003);
        s.push_back(300 * t - 1); // past the windows kept in shared memory
    }
    return s;
}

/// Buffers and a workspace for every size of sizes_for<T>().
template <typename T> struct Sweep {
    std::vector<long long> sizes;
    long long cap;
    Bufs<T> b;
    Workspace w;
};
template <typename T> static Sweep<T> sweep_make() {
    Sweep<T> s;
    s.sizes = sizes_for<T>();
    s.cap = 64;
    for (long long n : s.sizes) s.cap = n + 64 > s.cap ? n + 64 : s.cap;
    s.b = bufs_make<T>(s.cap);
    size_t need = 0;
    WK_CUDA(warpkit::deviceExclusiveSum((const T*)s.b.din, s.b.dout, s.cap, nullptr, &need));
    s.w = ws_make(need);
    return s;
}
template <typename T> static void sweep_free(Sweep<T>& s) {
    bufs_free(s.b);
    WK_CUDA(cudaFree(s.w.p));
}

template <typename T> static long long exact_sizes(const char* what) {
    Sweep<T> s = sweep_make<T>();
    wk_rng r = wk_rng_make(0x5ca9 + sizeof(T));
    std::vector<T> h(s.cap);
    for (long long i = 0; i < s.cap; ++i) h[i] = gen(&r, T());
    long long bad = 0;
    for (long long n : s.sizes) {
        bad += exact_case<false>(what, h, n, 0, 0, false, warpkit::Sum{}, T(0), s.b, s.w);
        bad += exact_case<true>(what, h, n, 0, 0, false, warpkit::Sum{}, T(0), s.b, s.w);
        bad += exact_case<true>(what, h, n, 1, 3, false, warpkit::Sum{}, T(7), s.b, s.w); // seeded
    }
    sweep_free(s);
    return bad;
}

Test(device_scan, sizes_exact) {
    WK_REQUIRE_GPU();
    const long long bad =
        exact_sizes<int>("int sum") + exact_sizes<unsigned>("unsigned sum") + exact_sizes<long long>("long long sum");
    cr_expect(bad == 0, "%lld wrong elements", bad);
}

// ---- floats -----------------------------------------------------------------------------------

/// Checks a float/double scan against a long double reference: within eps * (64 + tiles before
/// i) * sum |x_j| (the rounding bound of a summation of that depth: the chain of tile prefixes
/// grows with i, each tile adds fewer than 64 levels), NaN where the reference is NaN, the same
/// infinity. Returns mismatches.
template <bool Exclusive, typename T>
static long long float_check(const char* what, const T* in, const T* got, long long n, T init) {
    long double acc = Exclusive ? (long double)init : 0.0L, absAcc = Exclusive ? fabsl((long double)init) : 0.0L;
    const double eps = wk_eps<T>();
    long long bad = 0;
    for (long long i = 0; i < n; ++i) {
        if (!Exclusive) {
            acc += (long double)in[i];
            absAcc += fabsl((long double)in[i]);
        }
        const double want = (double)acc, g = (double)got[i];
        bool ok;
        if (isnan(want) || isinf(want)) ok = wk_close(g, want, 0.0);
        else ok = !isnan(g) && !isinf(g) && fabs(g - want) <= eps * (64.0 + (double)(i / tileElems<T>())) * (double)absAcc;
        if (!ok && bad++ < 3)
            cr_log_error("%s %s: %s n=%lld: element %lld = %.17g, want %.17g (sum |x| %.6g)", what, wk_type_name<T>(),
                         Exclusive ? "exclusive" : "inclusive", n, i, g, want, (double)absAcc);
        if (Exclusive) {
            acc += (long double)in[i];
            absAcc += fabsl((long double)in[i]);
        }
    }
    return bad;
}

template <bool Exclusive, typename T>
static long long float_case(const char* what, const std::vector<T>& h, long long n, Bufs<T>& b, const Workspace& w,
                            T init = T(0)) {
    std::vector<T> got(n > 0 ? n : 1);
    wk_upload(b.din, h.data(), n);
    wk_poison(b.dout, b.cap + 32);
    if (Exclusive) scan_run<true>((const T*)b.din, b.dout, n, warpkit::Sum{}, init, w);
    else scan_run<false>((const T*)b.din, b.dout, n, warpkit::Sum{}, init, w);
    WK_CUDA(cudaDeviceSynchronize());
    wk_download(got.data(), b.dout, n);
    return float_check<Exclusive>(what, h.data(), got.data(), n, init);
}

template <typename T> static long long float_sizes() {
    Sweep<T> s = sweep_make<T>();
    wk_rng r = wk_rng_make(0xf10a7 + sizeof(T));
    std::vector<T> h(s.cap);
    long long bad = 0;
    for (int mode = 0; mode < 2; ++mode) {
        // mode 0: uniform in [-1, 1) (cancellation); mode 1: positive, spanning 6 decades
        for (long long i = 0; i < s.cap; ++i)
            h[i] = mode == 0 ? (T)wk_uniform(&r, -1.0, 1.0) : (T)pow(10.0, wk_uniform(&r, -3.0, 3.0));
        for (long long n : s.sizes) {
            bad += float_case<false>("sum", h, n, s.b, s.w);
            bad += float_case<true>("sum", h, n, s.b, s.w, (T)0.25);
        }
    }
    sweep_free(s);
    return bad;
}

Test(device_scan, sizes_float) {
    WK_REQUIRE_GPU();
    const long long bad = float_sizes<float>() + float_sizes<double>();
    cr_expect(bad == 0, "%lld wrong elements", bad);
}

Test(device_scan, special_values) {
    WK_REQUIRE_GPU();
    const long long n = 3 * tileElems<float>() + 77;
    Bufs<float> b = bufs_make<float>(n + 64);
    size_t need = 0;
    WK_CUDA(warpkit::deviceExclusiveSum((const float*)b.din, b.dout, n, nullptr, &need));
    Workspace w = ws_make(need);
    wk_rng r = wk_rng_make(77);
    std::vector<float> h(n);
    long long bad = 0;
    // A NaN in tile 1 (all later prefixes NaN); +inf in tile 0 then -inf in tile 2 (inf, then NaN);
    // +inf alone (inf from there on).
    const long long t = tileElems<float>();
    for (int c = 0; c < 3; ++c) {
        for (long long i = 0; i < n; ++i) h[i] = (float)wk_uniform(&r, -1.0, 1.0);
        if (c == 0) h[t + 5] = NAN;
        if (c == 1) { h[17] = INFINITY; h[2 * t + 3] = -INFINITY; }
        if (c == 2) h[n - 2] = INFINITY;
        bad += float_case<false>("special", h, n, b, w);
        bad += float_case<true>("special", h, n, b, w);
    }
    // Max propagates NaN through the look-back too: a NaN in tile 0 makes every later prefix NaN.
    for (long long i = 0; i < n; ++i) h[i] = (float)wk_uniform(&r, -1.0, 1.0);
    h[100] = NAN;
    std::vector<float> got(n);
    wk_upload(b.din, h.data(), n);
    scan_run<false>((const float*)b.din, b.dout, n, warpkit::Max{}, 0.0f, w);
    WK_CUDA(cudaDeviceSynchronize());
    wk_download(got.data(), b.dout, n);
    float m = -INFINITY;
    for (long long i = 0; i < n; ++i) {
        m = warpkit::Max{}(m, h[i]);
        const bool ok = isnan(m) ? isnan(got[i]) : got[i] == m;
        if (!ok && bad++ < 3) cr_log_error("max: element %lld = %g, want %g", i, got[i], m);
    }
    bufs_free(b);
    WK_CUDA(cudaFree(w.p));
    cr_expect(bad == 0, "%lld wrong elements", bad);
}

// ---- alignment and in place ---------------------------------------------------------------------

/// Every in offset x out offset 0..7 and in place: exact for int, and for float the same bits as
/// the aligned out-of-place run with the same in offset.
Test(device_scan, alignment) {
    WK_REQUIRE_GPU();
    const long long n = wk_quick() ? 2 * tileElems<int>() + 13 : 5 * tileElems<int>() + 13;
    Bufs<int> bi = bufs_make<int>(n + 64);
    Bufs<float> bf = bufs_make<float>(n + 64);
    Bufs<double> bd = bufs_make<double>(n + 64);
    size_t need = 0;
    WK_CUDA(warpkit::deviceInclusiveSum((const double*)bd.din, bd.dout, n + 64, nullptr, &need));
    Workspace w = ws_make(need);
    wk_rng r = wk_rng_make(0xa119);
    std::vector<int> hi(n);
    std::vector<float> hf(n), ref(n), got(n);
    std::vector<double> hd(n);
    for (long long i = 0; i < n; ++i) {
        hi[i] = gen(&r, 0);
        hf[i] = (float)wk_uniform(&r, -1.0, 1.0);
    }
    long long bad = 0;
    for (int io = 0; io < 8; ++io) {
        for (int oo = 0; oo <= 8; ++oo) { // oo = 8: in place at in's offset
            const bool inPlace = oo == 8;
            const int outOff = inPlace ? io : oo;
            bad += exact_case<false>("int alignment", hi, n, io, outOff, inPlace, warpkit::Sum{}, 0, bi, w);
            bad += exact_case<true>("int alignment", hi, n, io, outOff, inPlace, warpkit::Sum{}, 5, bi, w);
            // float: bitwise the same as out offset 0 for this in offset
            float* out = bf.dout + outOff;
            wk_upload(inPlace ? out : bf.din + io, hf.data(), n);
            scan_run<false>(inPlace ? (const float*)out : (const float*)bf.din + io, out, n, warpkit::Sum{}, 0.0f, w);
            WK_CUDA(cudaDeviceSynchronize());
            wk_download(oo == 0 ? ref.data() : got.data(), out, n);
            if (oo == 0) bad += float_check<false>("alignment", hf.data(), ref.data(), n, 0.0f);
            else if (memcmp(got.data(), ref.data(), n * sizeof(float)) != 0 && bad++ < 3)
                cr_log_error("float: in+%d out+%d%s differs in its bits from out+0", io, outOff, inPlace ? " in place" : "");
        }
        // double: 8-byte elements, offsets of 1 element are 8 bytes, half a vector
        for (long long i = 0; i < n; ++i) hd[i] = wk_uniform(&r, -1.0, 1.0);
        wk_upload(bd.din + io, hd.data(), n);
        scan_run<false>((const double*)bd.din + io, bd.dout + (7 - io), n, warpkit::Sum{}, 0.0, w);
        WK_CUDA(cudaDeviceSynchronize());
        std::vector<double> gd(n);
        wk_download(gd.data(), bd.dout + (7 - io), n);
        bad += float_check<false>("alignment", hd.data(), gd.data(), n, 0.0);
    }
    bufs_free(bi);
    bufs_free(bf);
    bufs_free(bd);
    WK_CUDA(cudaFree(w.p));
    cr_expect(bad == 0, "%lld wrong elements", bad);
}

// ---- non-commutative operators and segmented scans --------------------------------------------------

/// A struct case at a byte offset (any multiple of the struct's alignment) of in and of out.
/// Byte buffers for structs at any byte offset, and a workspace.
struct ByteBufs {
    unsigned char *din, *dout;
    size_t cap;
    Workspace w;
};
static ByteBufs byte_bufs_make(size_t cap, size_t need) {
    return {wk_alloc<unsigned char>(cap), wk_alloc<unsigned char>(cap), cap, ws_make(need)};
}
static void byte_bufs_free(ByteBufs& b) {
    WK_CUDA(cudaFree(b.din));
    WK_CUDA(cudaFree(b.dout));
    WK_CUDA(cudaFree(b.w.p));
}

template <bool Exclusive, typename T, typename Op>
static long long struct_case(const char* what, const std::vector<T>& h, long long n, int inBytes, int outBytes, Op op,
                             T init, const ByteBufs& b) {
    unsigned char *din = b.din, *dout = b.dout;
    const size_t cap = b.cap;
    const Workspace& w = b.w;
    std::vector<T> want(n > 0 ? n : 1), got(n > 0 ? n : 1);
    host_scan<Exclusive>(h.data(), want.data(), n, op, init);
    WK_CUDA(cudaMemset(dout, 0xA5, cap));
    WK_CUDA(cudaMemcpy(din + inBytes, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    scan_run<Exclusive>((const T*)(din + inBytes), (T*)(dout + outBytes), n, op, init, w);
    WK_CUDA(cudaDeviceSynchronize());
    WK_CUDA(cudaMemcpy(got.data(), dout + outBytes, n * sizeof(T), cudaMemcpyDeviceToHost));
    long long bad = 0;
    for (long long i = 0; i < n; ++i) {
        if (!same(got[i], want[i]) && bad++ < 3) {
            char g[96], x[96];
            show(g, got[i]);
            show(x, want[i]);
            cr_log_error("%s %s n=%lld in+%dB out+%dB: element %lld = %s, want %s", what, Exclusive ? "exclusive" : "inclusive",
                         n, inBytes, outBytes, i, g, x);
        }
    }
    // nothing written past the end
    unsigned char tail[64];
    WK_CUDA(cudaMemcpy(tail, dout + outBytes + n * sizeof(T), sizeof(tail), cudaMemcpyDeviceToHost));
    for (int k = 0; k < 64; ++k)
        if (tail[k] != 0xA5 && bad++ < 3) cr_log_error("%s: byte %d past the end written", what, k);
    return bad;
}

Test(device_scan, noncommutative) {
    WK_REQUIRE_GPU();
    const long long nMax = wk_quick() ? 3 * tileElems<Affine>() + 5 : 40 * tileElems<Affine>() + 5;
    size_t needA = 0, needM = 0;
    WK_CUDA(warpkit::deviceInclusiveScan((const Affine*)nullptr, (Affine*)nullptr, nMax, AffineThen{}, nullptr, &needA));
    WK_CUDA(warpkit::deviceInclusiveScan((const Mat2*)nullptr, (Mat2*)nullptr, nMax, Mat2Mul{}, nullptr, &needM));
    ByteBufs b = byte_bufs_make((size_t)nMax * sizeof(Mat2) + 256, needA > needM ? needA : needM);
    wk_rng r = wk_rng_make(0xaff);
    std::vector<Affine> ha(nMax);
    std::vector<Mat2> hm(nMax);
    for (long long i = 0; i < nMax; ++i) {
        ha[i] = gen(&r, Affine());
        hm[i] = gen(&r, Mat2());
    }
    const Affine ia = {3u, 12345u};
    const Mat2 im = {1u, 2u, 3u, 5u};
    const long long ta = tileElems<Affine>(), tm = tileElems<Mat2>();
    const long long ns[] = {1, 2, 7, ta - 1, ta, ta + 1, 3 * tm + 1, nMax};
    long long bad = 0;
    for (long long n : ns) {
        // byte offsets: 16-byte aligned, one element (8), and 4 bytes (no whole element in a vector)
        const int offs[][2] = {{0, 0}, {8, 0}, {4, 0}, {0, 4}, {12, 20}, {4, 4}};
        for (const auto& o : offs) {
            bad += struct_case<false>("affine", ha, n, o[0], o[1], AffineThen{}, ia, b);
            bad += struct_case<true>("affine", ha, n, o[0], o[1], AffineThen{}, ia, b);
        }
        const int moffs[][2] = {{0, 0}, {16, 4}, {4, 16}, {8, 8}};
        for (const auto& o : moffs) {
            bad += struct_case<false>("mat2", hm, n, o[0], o[1], Mat2Mul{}, im, b);
            bad += struct_case<true>("mat2", hm, n, o[0], o[1], Mat2Mul{}, im, b);
        }
    }
    byte_bufs_free(b);
    cr_expect(bad == 0, "%lld wrong elements", bad);
}

/// Head flags with random segment lengths: mostly short, some longer than a tile.
static std::vector<int> random_heads(wk_rng* r, long long n, long long longLen) {
    std::vector<int> head(n, 0);
    long long i = 0;
    while (i < n) {
        head[i] = (int)wk_int(r, 1, 3); // any nonzero value is a head
        const int kind = (int)wk_int(r, 0, 9);
        i += kind < 7 ? wk_int(r, 1, 40) : (kind < 9 ? wk_int(r, 41, 3000) : wk_int(r, longLen / 2, 2 * longLen));
    }
    if (n > 0 && wk_int(r, 0, 1)) head[0] = 0; // element 0 starts a segment with or without a flag
    return head;
}

Test(device_scan, segmented) {
    WK_REQUIRE_GPU();
    const long long n = wk_quick() ? 3 * tileElems<SegI>() + 11 : 25 * tileElems<SegI>() + 11;
    size_t need = 0;
    WK_CUDA(warpkit::deviceInclusiveScan((const SegD*)nullptr, (SegD*)nullptr, n, SegSum{}, nullptr, &need));
    ByteBufs b = byte_bufs_make((size_t)n * sizeof(SegD) + 256, need);
    wk_rng r = wk_rng_make(0x5e6);
    long long bad = 0;
    for (int rep = 0; rep < 3; ++rep) {
        const std::vector<int> head = random_heads(&r, n, tileElems<SegI>());
        std::vector<SegI> hi(n);
        for (long long i = 0; i < n; ++i) hi[i] = {gen(&r, 0), head[i]};
        bad += struct_case<false>("segmented int", hi, n, 0, 0, SegSum{}, SegI{0, 0}, b);
        bad += struct_case<false>("segmented int", hi, n, 4, 8, SegSum{}, SegI{0, 0}, b);
        // double values: 16-byte pairs with 4 bytes of padding, at 16- and 8-byte offsets
        std::vector<SegD> hd(n), gd(n);
        memset(hd.data(), 0, n * sizeof(SegD));
        for (long long i = 0; i < n; ++i) {
            hd[i].value = wk_uniform(&r, -1.0, 1.0);
            hd[i].head = head[i];
        }
        for (int off = 0; off <= 8; off += 8) {
            WK_CUDA(cudaMemcpy(b.din + off, hd.data(), n * sizeof(SegD), cudaMemcpyHostToDevice));
            scan_run<false>((const SegD*)(b.din + off), (SegD*)(b.dout + 16 - off), n, SegSum{}, SegD{0.0, 0}, b.w);
            WK_CUDA(cudaDeviceSynchronize());
            WK_CUDA(cudaMemcpy(gd.data(), b.dout + 16 - off, n * sizeof(SegD), cudaMemcpyDeviceToHost));
            long double acc = 0, absAcc = 0;
            long long segStart = 0;
            for (long long i = 0; i < n; ++i) {
                if (i == 0 || hd[i].head) {
                    acc = 0;
                    absAcc = 0;
                    segStart = i;
                }
                acc += hd[i].value;
                absAcc += fabsl((long double)hd[i].value);
                const double tol = wk_eps<double>() * (64.0 + (double)(i - segStart) / 1024.0) * (double)absAcc;
                const bool headOk = (gd[i].head != 0) == (segStart > 0 || hd[0].head != 0);
                if ((fabs(gd[i].value - (double)acc) > tol || !headOk) && bad++ < 3)
                    cr_log_error("segmented double off %d: element %lld = (%.17g, %d), want %.17g", off, i, gd[i].value,
                                 gd[i].head, (double)acc);
            }
        }
    }
    byte_bufs_free(b);
    cr_expect(bad == 0, "%lld wrong elements", bad);
}

// ---- determinism and concurrency ------------------------------------------------------------------

/// Holds the SM it lands on for `ns` nanoseconds (a different time per block): other work that
/// changes when, and where, the scan's blocks run.
__global__ void hog_kernel(unsigned long long ns, unsigned seed) {
    unsigned long long t0, t;
    const unsigned long long mine = ns * (1 + (blockIdx.x * 2654435761u + seed) % 7) / 4;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < mine);
}

Test(device_scan, determinism) {
    WK_REQUIRE_GPU();
    const bool quick = wk_quick();
    const long long n = quick ? (1 << 18) + 3 : (1 << 23) + 3;
    const int runs = quick ? 4 : 40, streams = 3;
    int sms = 0;
    WK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    float* din = wk_alloc<float>(n);
    float* dout[streams];
    Workspace w[streams];
    size_t need = 0;
    WK_CUDA(warpkit::deviceInclusiveSum((const float*)din, din, n, nullptr, &need));
    cudaStream_t st[streams + 1];
    for (int s = 0; s < streams; ++s) {
        dout[s] = wk_alloc<float>(n);
        w[s] = ws_make(need);
        WK_CUDA(cudaStreamCreateWithFlags(&st[s], cudaStreamNonBlocking));
    }
    WK_CUDA(cudaStreamCreateWithFlags(&st[streams], cudaStreamNonBlocking));
    wk_rng r = wk_rng_make(0xde7);
    std::vector<float> h(n), ref(n), got(n);
    for (long long i = 0; i < n; ++i) h[i] = (float)wk_uniform(&r, -1.0, 1.0) * (float)pow(10.0, wk_uniform(&r, -2.0, 2.0));
    wk_upload(din, h.data(), n);
    long long bad = 0;
    for (int excl = 0; excl < 2; ++excl) {
        for (int run = 0; run < runs; ++run) {
            // Other work first: a random number of SM-holding blocks for random times on their own
            // stream, and a random delay on the scan streams before their scans.
            const unsigned hogBlocks = (unsigned)wk_int(&r, 0, 3 * sms);
            if (hogBlocks) hog_kernel<<<hogBlocks, 128, 0, st[streams]>>>((unsigned long long)wk_int(&r, 1000, 40000), (unsigned)run);
            for (int s = 0; s < streams; ++s) {
                const unsigned delayBlocks = (unsigned)wk_int(&r, 0, sms);
                if (delayBlocks) hog_kernel<<<delayBlocks, 32, 0, st[s]>>>((unsigned long long)wk_int(&r, 0, 20000), (unsigned)(run + s));
                if (excl) scan_run<true>((const float*)din, dout[s], n, warpkit::Sum{}, 1.5f, w[s], st[s], run * 7 + s);
                else scan_run<false>((const float*)din, dout[s], n, warpkit::Sum{}, 0.0f, w[s], st[s], run * 7 + s);
            }
            WK_CUDA(cudaDeviceSynchronize());
            WK_CUDA(cudaGetLastError());
            for (int s = 0; s < streams; ++s) {
                if (run == 0 && s == 0) {
                    wk_download(ref.data(), dout[0], n);
                    bad += excl ? float_check<true>("determinism", h.data(), ref.data(), n, 1.5f)
                                : float_check<false>("determinism", h.data(), ref.data(), n, 0.0f);
                    continue;
                }
                wk_download(got.data(), dout[s], n);
                if (memcmp(got.data(), ref.data(), n * sizeof(float)) != 0) {
                    long long first = 0;
                    while (memcmp(&got[first], &ref[first], sizeof(float)) == 0) ++first;
                    if (bad++ < 3)
                        cr_log_error("%s run %d stream %d: element %lld = %.9g, first run %.9g (bits differ)",
                                     excl ? "exclusive" : "inclusive", run, s, first, got[first], ref[first]);
                }
            }
        }
    }
    // In place, with all of the above: the same bits again.
    // The copies go on the scan's own stream: a device-to-device cudaMemcpy does not wait for its
    // copy to finish, and the non-blocking streams do not wait for the legacy stream.
    for (int s = 0; s < streams; ++s)
        WK_CUDA(cudaMemcpyAsync(dout[s], din, n * sizeof(float), cudaMemcpyDeviceToDevice, st[s]));
    for (int s = 0; s < streams; ++s) scan_run<false>((const float*)dout[s], dout[s], n, warpkit::Sum{}, 0.0f, w[s], st[s], s);
    WK_CUDA(cudaDeviceSynchronize());
    wk_download(ref.data(), dout[0], n);
    for (int s = 1; s < streams; ++s) {
        wk_download(got.data(), dout[s], n);
        if (memcmp(got.data(), ref.data(), n * sizeof(float)) != 0 && bad++ < 3)
            cr_log_error("in place, stream %d: bits differ from stream 0", s);
    }
    std::vector<float> outOfPlace(n);
    scan_run<false>((const float*)din, dout[1], n, warpkit::Sum{}, 0.0f, w[1]);
    WK_CUDA(cudaDeviceSynchronize());
    wk_download(outOfPlace.data(), dout[1], n);
    if (memcmp(outOfPlace.data(), ref.data(), n * sizeof(float)) != 0 && bad++ < 3)
        cr_log_error("in place and out of place differ in their bits");
    for (int s = 0; s <= streams; ++s) WK_CUDA(cudaStreamDestroy(st[s]));
    for (int s = 0; s < streams; ++s) {
        WK_CUDA(cudaFree(dout[s]));
        WK_CUDA(cudaFree(w[s].p));
    }
    WK_CUDA(cudaFree(din));
    cr_expect(bad == 0, "%lld differences", bad);
}

/// Runs detail::deviceScanRun with a chosen pipeline and grid cap, on a garbage-filled workspace.
template <bool Exclusive, typename T, typename Op>
static void plan_run(const T* in, T* out, long long n, Op op, T init, const Workspace& w, int stages, int lag,
                     int blocks) {
    ws_garbage(w, 0, (unsigned long long)(stages * 100 + lag * 10 + blocks));
    unsigned long long* status = (unsigned long long*)(((size_t)w.p + 15) / 16 * 16);
    WK_CUDA((warpkit::detail::deviceScanRun<Exclusive>(in, out, n, op, init, status, stages, lag, blocks, 0)));
}

/// Every pipeline scanPlan can pick on some GPU (1 to 8 stages, lag 0 to 3, with the async
/// prefetch and without it: stages <= lag + 1), each on grids of 1 and 3 blocks (so that a block
/// walks dozens of tiles through every stage and barrier in turn) and on all resident blocks;
/// aligned and misaligned in and out. int and 2x2-matrix scans exact, float sums the same bits
/// as the public call's (the pipeline does not change the order of operations). Pipelines whose
/// stages do not fit the GPU's shared memory are skipped (8 stages fit for the 16-byte matrices).
Test(device_scan, pipelines) {
    WK_REQUIRE_GPU();
    int smemOptin = 0;
    WK_CUDA(cudaDeviceGetAttribute(&smemOptin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
    const int plans[][2] = {{1, 0}, {2, 0}, {2, 1}, {3, 1}, {3, 0}, {4, 2}, {4, 3}, {5, 3}, {6, 3}, {8, 3}};
    const int grids[] = {1, 3, 0};
    const int offsets[][2] = {{0, 0}, {1, 3}};
    const long long t = tileElems<int>(), n = (wk_quick() ? 12 : 40) * t + 13;
    const long long tm = tileElems<Mat2>(), nm = (wk_quick() ? 12 : 40) * tm + 5;
    Bufs<int> bi = bufs_make<int>(n);
    Bufs<float> bf = bufs_make<float>(n);
    Bufs<Mat2> bm = bufs_make<Mat2>(nm);
    size_t need = 0, needM = 0;
    WK_CUDA(warpkit::deviceInclusiveSum((const int*)bi.din, bi.dout, n, nullptr, &need));
    WK_CUDA(warpkit::deviceInclusiveScan((const Mat2*)bm.din, bm.dout, nm, Mat2Mul{}, nullptr, &needM));
    Workspace w = ws_make(need > needM ? need : needM);
    wk_rng r = wk_rng_make(0x91e);
    std::vector<int> hi(n), want(n), wantEx(n), got(n);
    std::vector<float> hf(n), ref(n), gotf(n);
    std::vector<Mat2> hm(nm), wantM(nm), gotM(nm);
    for (long long i = 0; i < n; ++i) hi[i] = gen(&r, 0);
    for (long long i = 0; i < n; ++i) hf[i] = (float)wk_uniform(&r, -1.0, 1.0);
    for (long long i = 0; i < nm; ++i) hm[i] = gen(&r, Mat2());
    host_scan<false>(hi.data(), want.data(), n, warpkit::Sum{}, 0);
    host_scan<true>(hi.data(), wantEx.data(), n, warpkit::Sum{}, 5);
    host_scan<false>(hm.data(), wantM.data(), nm, Mat2Mul{}, Mat2{});
    long long bad = 0, runs = 0;
    auto check = [&](const char* what, int st, int lag, int g, const auto& gotv, const auto& wantv, long long cnt) {
        for (long long i = 0; i < cnt; ++i)
            if (!same(gotv[i], wantv[i])) {
                if (bad++ < 3) cr_log_error("%s stages %d lag %d grid %d: element %lld wrong", what, st, lag, g, i);
                break;
            }
    };
    for (const auto& off : offsets) {
        const int* in = bi.din + off[0];
        int* out = bi.dout + off[1];
        const float* fin = bf.din + off[0];
        float* fout = bf.dout + off[1];
        wk_upload(bi.din + off[0], hi.data(), n);
        wk_upload(bf.din + off[0], hf.data(), n);
        wk_upload(bm.din + off[0], hm.data(), nm);
        scan_run<false>(fin, fout, n, warpkit::Sum{}, 0.0f, w);
        WK_CUDA(cudaDeviceSynchronize());
        wk_download(ref.data(), fout, n);
        bad += float_check<false>("pipelines", hf.data(), ref.data(), n, 0.0f);
        for (const auto& pl : plans) {
            for (int g : grids) {
                if (pl[0] * warpkit::detail::ScanStage<int>::bytes + 8192 <= smemOptin) {
                    ++runs;
                    wk_poison(bi.dout, n + 32);
                    plan_run<false>(in, out, n, warpkit::Sum{}, 0, w, pl[0], pl[1], g);
                    WK_CUDA(cudaDeviceSynchronize());
                    wk_download(got.data(), out, n);
                    check("int inclusive", pl[0], pl[1], g, got, want, n);
                    plan_run<true>(in, out, n, warpkit::Sum{}, 5, w, pl[0], pl[1], g);
                    WK_CUDA(cudaDeviceSynchronize());
                    wk_download(got.data(), out, n);
                    check("int exclusive", pl[0], pl[1], g, got, wantEx, n);
                    wk_poison(bf.dout, n + 32);
                    plan_run<false>(fin, fout, n, warpkit::Sum{}, 0.0f, w, pl[0], pl[1], g);
                    WK_CUDA(cudaDeviceSynchronize());
                    wk_download(gotf.data(), fout, n);
                    if (memcmp(gotf.data(), ref.data(), n * sizeof(float)) != 0 && bad++ < 3)
                        cr_log_error("float stages %d lag %d grid %d: bits differ from the public call's", pl[0], pl[1], g);
                }
                if (pl[0] * warpkit::detail::ScanStage<Mat2>::bytes + 8192 <= smemOptin) {
                    ++runs;
                    wk_poison(bm.dout, nm + 32);
                    plan_run<false>((const Mat2*)bm.din + off[0], bm.dout + off[1], nm, Mat2Mul{}, Mat2{}, w, pl[0], pl[1], g);
                    WK_CUDA(cudaDeviceSynchronize());
                    wk_download(gotM.data(), bm.dout + off[1], nm);
                    check("Mat2 inclusive", pl[0], pl[1], g, gotM, wantM, nm);
                }
            }
        }
    }
    // Not pipelines: rejected before anything is written.
    const int notPlans[][2] = {{1, 1}, {3, 3}, {5, 4}, {0, 0}, {2, -1}};
    for (const auto& pl : notPlans) {
        unsigned long long* status = (unsigned long long*)(((size_t)w.p + 15) / 16 * 16);
        const cudaError_t e = warpkit::detail::deviceScanRun<false>((const int*)bi.din, bi.dout, n, warpkit::Sum{}, 0,
                                                                    status, pl[0], pl[1], 0, 0);
        cr_expect(e == cudaErrorInvalidValue, "stages %d lag %d: %s, want cudaErrorInvalidValue", pl[0], pl[1],
                  cudaGetErrorString(e));
    }
    cr_expect(runs >= 40, "only %lld pipelines fit this GPU", runs);
    bufs_free(bi);
    bufs_free(bf);
    bufs_free(bm);
    WK_CUDA(cudaFree(w.p));
    cr_expect(bad == 0, "%lld wrong results", bad);
}

/// Two scans at once on two streams with two workspaces, each with other work around it.
Test(device_scan, two_streams) {
    WK_REQUIRE_GPU();
    const long long n = wk_quick() ? 4 * tileElems<int>() + 9 : (1 << 23) + 9;
    Bufs<int> b[2] = {bufs_make<int>(n), bufs_make<int>(n)};
    size_t need = 0;
    WK_CUDA(warpkit::deviceInclusiveSum((const int*)b[0].din, b[0].dout, n, nullptr, &need));
    Workspace w[2] = {ws_make(need), ws_make(need)};
    cudaStream_t st[2];
    for (auto& s : st) WK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    wk_rng r = wk_rng_make(0x2);
    std::vector<int> h[2] = {std::vector<int>(n), std::vector<int>(n)}, want(n), got(n);
    long long bad = 0;
    for (int rep = 0; rep < (wk_quick() ? 2 : 6); ++rep) {
        for (int k = 0; k < 2; ++k) {
            for (long long i = 0; i < n; ++i) h[k][i] = gen(&r, 0);
            wk_upload(b[k].din, h[k].data(), n);
            wk_poison(b[k].dout, n);
        }
        for (int k = 0; k < 2; ++k) {
            hog_kernel<<<(unsigned)wk_int(&r, 1, 64), 64, 0, st[k]>>>((unsigned long long)wk_int(&r, 0, 10000), rep);
            if (k == 0) scan_run<false>((const int*)b[0].din, b[0].dout, n, warpkit::Sum{}, 0, w[0], st[0], rep);
            else scan_run<true>((const int*)b[1].din, b[1].dout, n, warpkit::Sum{}, -3, w[1], st[1], rep + 99);
        }
        WK_CUDA(cudaDeviceSynchronize());
        for (int k = 0; k < 2; ++k) {
            if (k == 0) host_scan<false>(h[0].data(), want.data(), n, warpkit::Sum{}, 0);
            else host_scan<true>(h[1].data(), want.data(), n, warpkit::Sum{}, -3);
            wk_download(got.data(), b[k].dout, n);
            for (long long i = 0; i < n; ++i)
                if (got[i] != want[i] && bad++ < 3) cr_log_error("stream %d rep %d: element %lld = %d, want %d", k, rep, i, got[i], want[i]);
        }
    }
    for (auto& s : st) WK_CUDA(cudaStreamDestroy(s));
    for (int k = 0; k < 2; ++k) {
        bufs_free(b[k]);
        WK_CUDA(cudaFree(w[k].p));
    }
    cr_expect(bad == 0, "%lld wrong elements", bad);
}

// ---- workspace and arguments ----------------------------------------------------------------------

Test(device_scan, workspace_query) {
    WK_REQUIRE_GPU();
    // The size does not depend on the pointers (null ones included) and grows with n; n = 0 needs 0.
    size_t a = 1, b = 1, c = 1, d = 1;
    int x[64];
    WK_CUDA(warpkit::deviceInclusiveSum((const int*)nullptr, (int*)nullptr, 0, nullptr, &a));
    cr_expect(a == 0, "n = 0: %zu bytes", a);
    WK_CUDA(warpkit::deviceInclusiveSum((const int*)nullptr, (int*)nullptr, 1000, nullptr, &b));
    WK_CUDA(warpkit::deviceInclusiveSum((const int*)x + 1, x + 3, 1000, nullptr, &c));
    WK_CUDA(warpkit::deviceInclusiveSum((const int*)nullptr, (int*)nullptr, 1LL << 33, nullptr, &d));
    cr_expect(b > 0 && b == c && d > b, "sizes %zu %zu %zu", b, c, d);
    // n = 0 with a workspace: nothing to do, success, nothing written
    int* out = wk_alloc<int>(4);
    wk_poison(out, 4);
    size_t have = 0;
    WK_CUDA(warpkit::deviceInclusiveSum((const int*)out, out, 0, out, &have));
    WK_CUDA(warpkit::deviceExclusiveSum((const int*)nullptr, (int*)nullptr, 0, out, &have));
    WK_CUDA(cudaDeviceSynchronize());
    int h[4];
    wk_download(h, out, 4);
    for (int k = 0; k < 4; ++k) cr_expect(h[k] == (int)0xA5A5A5A5, "n = 0 wrote element %d", k);
    WK_CUDA(cudaFree(out));
    // back-to-back calls on one workspace without clearing it in between (the call clears it)
    const long long n = 3 * tileElems<int>() + 1;
    Bufs<int> bb = bufs_make<int>(n + 64);
    WK_CUDA(warpkit::deviceInclusiveSum((const int*)bb.din, bb.dout, n + 64, nullptr, &have));
    Workspace w = ws_make(have);
    std::vector<int> in(n), want(n), got(n);
    wk_rng r = wk_rng_make(9);
    for (long long i = 0; i < n; ++i) in[i] = gen(&r, 0);
    wk_upload(bb.din, in.data(), n);
    host_scan<false>(in.data(), want.data(), n, warpkit::Sum{}, 0);
    long long bad = 0;
    for (int rep = 0; rep < 3; ++rep) {
        size_t sz = w.bytes;
        WK_CUDA(warpkit::deviceInclusiveSum((const int*)bb.din, bb.dout, n, w.p, &sz));
    }
    WK_CUDA(cudaDeviceSynchronize());
    wk_download(got.data(), bb.dout, n);
    for (long long i = 0; i < n; ++i)
        if (got[i] != want[i] && bad++ < 3) cr_log_error("reuse: element %lld = %d, want %d", i, got[i], want[i]);
    // a workspace at an odd address
    size_t sz = w.bytes - 8;
    wk_poison(bb.dout, n);
    WK_CUDA(warpkit::deviceInclusiveSum((const int*)bb.din, bb.dout, n, (char*)w.p + 3, &sz));
    WK_CUDA(cudaDeviceSynchronize());
    wk_download(got.data(), bb.dout, n);
    for (long long i = 0; i < n; ++i)
        if (got[i] != want[i] && bad++ < 3) cr_log_error("odd workspace: element %lld = %d, want %d", i, got[i], want[i]);
    bufs_free(bb);
    WK_CUDA(cudaFree(w.p));
    cr_expect(bad == 0, "%lld wrong elements", bad);
}

Test(device_scan, bad_args) {
    WK_REQUIRE_GPU();
    const long long n = 1000;
    float* buf = wk_alloc<float>(2 * n);
    size_t need = 0;
    WK_CUDA(warpkit::deviceInclusiveSum((const float*)buf, buf + n, n, nullptr, &need));
    Workspace w = ws_make(need);
    wk_poison(buf, 2 * n);
    const float* in = buf;
    float* out = buf + n;
    const cudaError_t inval = cudaErrorInvalidValue;
    size_t sz = need, small = need - 1, q = 777;
    // negative n (also for the query), null workspaceBytes, null pointers with work, small workspace
    cr_expect(warpkit::deviceInclusiveSum(in, out, -1, w.p, &sz) == inval);
    cr_expect(warpkit::deviceInclusiveSum(in, out, -1, nullptr, &q) == inval && q == 777, "query with n < 0");
    cr_expect(warpkit::deviceInclusiveSum(in, out, n, w.p, nullptr) == inval);
    cr_expect(warpkit::deviceInclusiveSum(in, out, n, nullptr, nullptr) == inval);
    cr_expect(warpkit::deviceInclusiveSum((const float*)nullptr, out, n, w.p, &sz) == inval);
    cr_expect(warpkit::deviceInclusiveSum(in, (float*)nullptr, n, w.p, &sz) == inval);
    cr_expect(warpkit::deviceInclusiveSum(in, out, n, w.p, &small) == inval);
    cr_expect(warpkit::deviceExclusiveScan(in, out, n, warpkit::Max{}, 0.0f, w.p, &small) == inval);
    // overlapping without being equal
    cr_expect(warpkit::deviceInclusiveSum(in, buf + 1, n, w.p, &sz) == inval);
    cr_expect(warpkit::deviceInclusiveSum((const float*)buf + 1, buf, n, w.p, &sz) == inval);
    cr_expect(warpkit::deviceExclusiveSum((const float*)buf + n - 1, buf, n, w.p, &sz) == inval);
    // more elements than tiles can number
    cr_expect(warpkit::deviceInclusiveSum(in, out, 1LL << 50, nullptr, &q) == inval && q == 777, "n = 2^50");
    WK_CUDA(cudaDeviceSynchronize());
    std::vector<float> h(2 * n);
    wk_download(h.data(), buf, 2 * n);
    int written = 0;
    for (long long i = 0; i < 2 * n; ++i) {
        unsigned u;
        memcpy(&u, &h[i], 4);
        written += u != 0xA5A5A5A5u;
    }
    cr_expect(written == 0, "%d elements written by calls with bad arguments", written);
    // ... and the same buffers work with good ones (in place is fine, adjacent is fine)
    cr_expect(warpkit::deviceInclusiveSum(in, (float*)in, n, w.p, &sz) == cudaSuccess);
    cr_expect(warpkit::deviceInclusiveSum(in, out, n, w.p, &sz) == cudaSuccess);
    WK_CUDA(cudaDeviceSynchronize());
    WK_CUDA(cudaFree(buf));
    WK_CUDA(cudaFree(w.p));
}

// ---- more than 2^31 elements --------------------------------------------------------------------

constexpr unsigned kHugePeriod = 977; // x[i] = i % 977: the prefix has a closed form

__global__ void huge_fill(unsigned* x, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        x[i] = (unsigned)(i % kHugePeriod);
}
__host__ __device__ inline unsigned huge_prefix(long long i) { // (0 + 1 + ... ) over x[0 .. i], mod 2^32
    const unsigned long long m = (unsigned long long)i + 1, q = m / kHugePeriod, r = m % kHugePeriod;
    return (unsigned)(q * (kHugePeriod * (kHugePeriod - 1ull) / 2) + r * (r - 1) / 2);
}
__global__ void huge_check(const unsigned* x, long long n, unsigned long long* wrong, long long* firstWrong) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        if (x[i] != huge_prefix(i)) {
            atomicAdd(wrong, 1ull);
            atomicMin(firstWrong, i);
        }
}

Test(device_scan, huge) {
    WK_REQUIRE_GPU();
    if (wk_quick()) cr_skip_test("n > 2^31 is too slow under the sanitizers (WARPKIT_QUICK)");
    const long long n = (1LL << 31) + 12345, off = 3; // in place, 12 bytes past a 16-byte boundary
    unsigned* buf = nullptr;
    if (cudaMalloc(&buf, (size_t)(n + off) * sizeof(unsigned)) != cudaSuccess) {
        cudaGetLastError();
        cr_skip_test("cannot allocate %.1f GB", (double)(n + off) * 4 / 1e9);
    }
    size_t need = 0;
    WK_CUDA(warpkit::deviceInclusiveSum((const unsigned*)buf, buf, n, nullptr, &need));
    void* ws = nullptr;
    if (cudaMalloc(&ws, need) != cudaSuccess) {
        cudaGetLastError();
        WK_CUDA(cudaFree(buf));
        cr_skip_test("cannot allocate the workspace");
    }
    unsigned* x = buf + off;
    huge_fill<<<4096, 256>>>(x, n);
    WK_LAUNCHED();
    size_t have = need;
    WK_CUDA(warpkit::deviceInclusiveSum((const unsigned*)x, x, n, ws, &have));
    WK_LAUNCHED();
    unsigned long long* wrong;
    long long* first;
    WK_CUDA(cudaMallocManaged(&wrong, sizeof(*wrong)));
    WK_CUDA(cudaMallocManaged(&first, sizeof(*first)));
    *wrong = 0;
    *first = n;
    huge_check<<<4096, 256>>>(x, n, wrong, first);
    WK_LAUNCHED();
    unsigned last = 0;
    WK_CUDA(cudaMemcpy(&last, x + n - 1, sizeof(last), cudaMemcpyDeviceToHost));
    cr_expect(*wrong == 0, "%llu wrong elements of %lld, first at %lld", *wrong, n, *first);
    cr_expect(last == huge_prefix(n - 1), "last element %u, want %u", last, huge_prefix(n - 1));
    WK_CUDA(cudaFree(wrong));
    WK_CUDA(cudaFree(first));
    WK_CUDA(cudaFree(ws));
    WK_CUDA(cudaFree(buf));
}
