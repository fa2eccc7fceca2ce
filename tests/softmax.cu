// Tests of include/warpkit/softmax.cuh and of every path of samples/softmax.cu's dispatcher.
// Host tests (run in CI without a GPU): the online-softmax state and softmaxApply against a
// double-precision reference, NaN/inf rules, merge in any grouping.
// GPU tests: warpSoftmax / blockSoftmax (all kinds, widths, K, block sizes incl. partial warps),
// warp/block state reductions, and rowSoftmax through each forced path with cols at the path
// boundaries +-1 and odd primes, rows = 1 and thousands, float/half/bf16, special rows.
#define WARPKIT_SOFTMAX_SAMPLE_NO_MAIN
#include "common.cuh"
#include "../samples/softmax.cu"
#include <vector>

using warpkit::SoftmaxState;

// ---- reference ---------------------------------------------------------------------------------
/// Double-precision softmax of one row with PyTorch's rules (masked kinds: all -inf -> 0 / -inf).
static void ref_softmax(int kind, const double* x, int n, double* y) {
    bool nan = false, pinf = false, allninf = true;
    double m = -INFINITY;
    for (int i = 0; i < n; ++i) {
        if (isnan(x[i])) nan = true;
        else if (x[i] == INFINITY) pinf = true;
        if (!(x[i] == -INFINITY)) allninf = false;
        if (!isnan(x[i])) m = fmax(m, x[i]);
    }
    const bool log_ = kind & warpkit::SoftmaxLog, masked = kind & warpkit::SoftmaxMasked;
    if (nan || pinf || (allninf && !masked)) { for (int i = 0; i < n; ++i) y[i] = NAN; return; }
    if (allninf) { for (int i = 0; i < n; ++i) y[i] = log_ ? -INFINITY : 0.0; return; }
    double s = 0;
    for (int i = 0; i < n; ++i) s += exp(x[i] - m);
    for (int i = 0; i < n; ++i) y[i] = log_ ? x[i] - m - log(s) : exp(x[i] - m) / s;
}

/// got vs want: plain kinds relative (tol * want + abs floor), log kinds tol * (1 + |want|).
static bool close_out(int kind, double got, double want, double tol, double floor_) {
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    if (isnan(got) || isinf(got)) return false;
    if (kind & warpkit::SoftmaxLog) return fabs(got - want) <= tol * (1.0 + fabs(want));
    return fabs(got - want) <= tol * fabs(want) + floor_;
}
template <typename T> static double tol_of(void) { return sizeof(T) == 4 ? 1e-5 : 1e-2; }
template <typename T> static double floor_of(void) { return sizeof(T) == 4 ? 1e-37 : 1e-7; }

/// Fill one row: mode picks the pattern (random at several scales, NaN, +inf, all -inf, some -inf,
/// a first half of -inf).
template <typename T> static void fill_row(wk_rng* r, T* x, int n, int mode) {
    static const double scales[] = {1.0, 10.0, 100.0, 3e3};
    const double sc = scales[mode & 3];
    for (int i = 0; i < n; ++i) x[i] = wk_from_double<T>(wk_uniform(r, -sc, sc));
    switch (mode % 9) {
    case 4: x[wk_int(r, 0, n - 1)] = wk_from_double<T>(NAN); break;
    case 5: x[wk_int(r, 0, n - 1)] = wk_from_double<T>(INFINITY); break;
    case 6: for (int i = 0; i < n; ++i) x[i] = wk_from_double<T>(-INFINITY); break;
    case 7: for (int i = 0; i < n; i += 3) x[i] = wk_from_double<T>(-INFINITY); break;
    case 8: for (int i = 0; i < n / 2; ++i) x[i] = wk_from_double<T>(-INFINITY); break; // whole slices of -inf
    default: break;
    }
}

/// Check rows x cols outputs against the reference; also row sums for plain kinds.
template <typename T>
static void check_rows(const char* what, int kind, const T* x, const T* y, int rows, int cols) {
    std::vector<double> xd(cols), yd(cols);
    const double tol = tol_of<T>(), fl = floor_of<T>();
    int bad = 0;
    for (int r = 0; r < rows && bad < 3; ++r) {
        for (int c = 0; c < cols; ++c) xd[c] = wk_to_double(x[(size_t)r * cols + c]);
        ref_softmax(kind, xd.data(), cols, yd.data());
        double sum = 0;
        bool finite = true;
        for (int c = 0; c < cols; ++c) {
            const double got = wk_to_double(y[(size_t)r * cols + c]);
            sum += got;
            finite = finite && !isnan(yd[c]);
            if (!close_out(kind, got, yd[c], tol, fl) && bad++ < 3)
                cr_log_error("%s %s kind %d: %d x %d row %d col %d: got %.9g want %.9g (x %.9g)", what, wk_type_name<T>(),
                             kind, rows, cols, r, c, got, yd[c], xd[c]);
        }
        const bool zeros = (kind & warpkit::SoftmaxMasked) && yd[0] == 0.0;
        if (!(kind & warpkit::SoftmaxLog) && finite && !zeros && fabs(sum - 1.0) > tol * 2 && bad++ < 3)
            cr_log_error("%s %s: %d x %d row %d sums to %.9g", what, wk_type_name<T>(), rows, cols, r, sum);
    }
    cr_expect(bad == 0, "%s %s kind %d (%d x %d): %d mismatches", what, wk_type_name<T>(), kind, rows, cols, bad);
}

// ---- host tests: the online state --------------------------------------------------------------
static void host_state_case(int kind, const double* xd, const float* xf, int n, int split) {
    SoftmaxState a = warpkit::softmaxStateEmpty(), b = warpkit::softmaxStateEmpty(), seq = warpkit::softmaxStateEmpty();
    for (int i = 0; i < n; ++i) {
        seq = warpkit::softmaxStateUpdate(seq, xf[i]);
        if (i < split) a = warpkit::softmaxStateUpdate(a, xf[i]);
        else b = warpkit::softmaxStateUpdate(b, xf[i]);
    }
    SoftmaxState ab = warpkit::softmaxStateMerge(a, b), ba = warpkit::softmaxStateMerge(b, a);
    std::vector<double> y(n);
    ref_softmax(kind, xd, n, y.data());
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        const SoftmaxState sts[3] = {seq, ab, ba};
        for (int k = 0; k < 3; ++k) {
            double got;
            switch (kind) {
            case 0: got = warpkit::softmaxApply<0>(sts[k], xf[i]); break;
            case 1: got = warpkit::softmaxApply<1>(sts[k], xf[i]); break;
            case 2: got = warpkit::softmaxApply<2>(sts[k], xf[i]); break;
            default: got = warpkit::softmaxApply<3>(sts[k], xf[i]); break;
            }
            if (!close_out(kind, got, y[i], 1e-5, 1e-37) && bad++ < 3)
                cr_log_error("state kind %d n %d split %d form %d: [%d] got %.9g want %.9g", kind, n, split, k, i, got, y[i]);
        }
    }
    cr_expect(bad == 0, "online state kind %d, n %d, split %d: %d mismatches", kind, n, split, bad);
}

Test(softmax_host, online_state_matches_reference) {
    wk_rng r = wk_rng_make(1);
    for (int mode = 0; mode < 36; ++mode) {
        const int n = (int)wk_int(&r, 1, 300);
        std::vector<float> xf(n);
        std::vector<double> xd(n);
        fill_row<float>(&r, xf.data(), n, mode);
        for (int i = 0; i < n; ++i) xd[i] = xf[i];
        for (int kind = 0; kind < 4; ++kind) host_state_case(kind, xd.data(), xf.data(), n, (int)wk_int(&r, 0, n));
    }
}

Test(softmax_host, state_edge_rules) {
    const float inf = INFINITY, nan = NAN;
    SoftmaxState e = warpkit::softmaxStateEmpty();
    cr_expect(e.max == -inf && e.sum == 0.0f, "empty state is {-inf, 0}");
    SoftmaxState s = warpkit::softmaxStateUpdate(e, -inf);
    cr_expect(s.max == -inf && s.sum == 0.0f, "-inf leaves the empty state empty");
    cr_expect(isnan(warpkit::softmaxApply<0>(s, -inf)), "all -inf: NaN (as torch)");
    cr_expect(warpkit::softmaxApply<warpkit::SoftmaxMasked>(s, -inf) == 0.0f, "masked all -inf: 0");
    cr_expect(warpkit::softmaxApply<warpkit::SoftmaxLogMasked>(s, -inf) == -inf, "masked log all -inf: -inf");
    s = warpkit::softmaxStateUpdate(warpkit::softmaxStateUpdate(e, 1.0f), inf);
    cr_expect(isnan(s.sum) && isnan(warpkit::softmaxApply<0>(s, 1.0f)), "+inf makes the row NaN");
    s = warpkit::softmaxStateUpdate(warpkit::softmaxStateUpdate(e, nan), 2.0f);
    cr_expect(isnan(warpkit::softmaxApply<0>(s, 2.0f)), "NaN makes the row NaN");
    s = warpkit::softmaxStateMerge(warpkit::softmaxStateUpdate(e, 3.0f), e);
    cr_expect(s.max == 3.0f && s.sum == 1.0f, "merge with the empty state is the identity");
    s = warpkit::softmaxStateMerge(warpkit::softmaxStateUpdate(e, 0.0f), warpkit::softmaxStateUpdate(e, 0.0f));
    cr_expect(s.max == 0.0f && fabsf(s.sum - 2.0f) < 1e-6f, "two zeros: sum 2");
}

// ---- GPU: warp and block primitives ------------------------------------------------------------
// Row q of a launch is held by segment (warp) q; lane l slot j holds element j*W + l (-inf past n).
template <typename T, int W, int K, int Kind>
__global__ void warp_prim_kernel(const T* x, T* y, const int* lens, int cols) {
    const int lane = threadIdx.x & 31, seg = (blockIdx.x * blockDim.x + threadIdx.x) / W, l = lane % W;
    const int n = lens[seg];
    T v[K];
#pragma unroll
    for (int j = 0; j < K; ++j)
        v[j] = j * W + l < n ? x[(size_t)seg * cols + j * W + l] : warpkit::detail::Arith<T>::from_acc(-__builtin_huge_valf());
    warpkit::warpSoftmax<W, K, Kind>(v);
#pragma unroll
    for (int j = 0; j < K; ++j)
        if (j * W + l < n) y[(size_t)seg * cols + j * W + l] = v[j];
}

/// One row per block; thread t slot j holds element j*blockDim + t.
template <typename T, int B, int K, int Kind>
__global__ void block_prim_kernel(const T* x, T* y, const int* lens, int cols) {
    const int nt = blockDim.x, t = threadIdx.x, n = lens[blockIdx.x];
    const T* p = x + (size_t)blockIdx.x * cols;
    T v[K];
#pragma unroll
    for (int j = 0; j < K; ++j)
        v[j] = j * nt + t < n ? p[j * nt + t] : warpkit::detail::Arith<T>::from_acc(-__builtin_huge_valf());
    warpkit::blockSoftmax<B, K, Kind>(v);
#pragma unroll
    for (int j = 0; j < K; ++j) // outputs of padding slots are unspecified: pad again
        if (j * nt + t >= n) v[j] = warpkit::detail::Arith<T>::from_acc(-__builtin_huge_valf());
    warpkit::blockSoftmax<B, K, Kind>(v); // back to back: the second call reuses the scratch
#pragma unroll
    for (int j = 0; j < K; ++j)
        if (j * nt + t < n) y[(size_t)blockIdx.x * cols + j * nt + t] = v[j];
}

/// Run `rows` rows of random lengths 1..cols through a primitive kernel and check them. The
/// block kernel applies softmax twice, so its reference is softmax(softmax(x)).
template <typename T, typename Launch>
static void run_prim(const char* what, int kind, int rows, int cols, bool twice, uint64_t seed, Launch launch) {
    wk_rng r = wk_rng_make(seed);
    std::vector<T> hx((size_t)rows * cols), hy((size_t)rows * cols);
    std::vector<int> lens(rows);
    for (int q = 0; q < rows; ++q) {
        lens[q] = q == 0 ? cols : q == 1 ? 1 : (int)wk_int(&r, 1, cols);
        fill_row<T>(&r, &hx[(size_t)q * cols], lens[q], q);
    }
    T *dx = wk_alloc<T>(hx.size()), *dy = wk_alloc<T>(hx.size());
    int* dl = wk_alloc<int>(rows);
    wk_upload(dx, hx.data(), hx.size());
    wk_upload(dl, lens.data(), rows);
    wk_poison(dy, hx.size());
    launch(dx, dy, dl);
    WK_LAUNCHED();
    wk_download(hy.data(), dy, hy.size());
    // Check row by row with the row's own length.
    for (int q = 0; q < rows; ++q) {
        std::vector<T> xin(hx.begin() + (size_t)q * cols, hx.begin() + (size_t)q * cols + lens[q]);
        if (twice) { // reference input: the first softmax, rounded to T as the kernel does
            std::vector<double> xd(lens[q]), yd(lens[q]);
            for (int i = 0; i < lens[q]; ++i) xd[i] = wk_to_double(xin[i]);
            ref_softmax(kind, xd.data(), lens[q], yd.data());
            for (int i = 0; i < lens[q]; ++i) xin[i] = wk_from_double<T>(yd[i]);
        }
        check_rows<T>(what, kind, xin.data(), &hy[(size_t)q * cols], 1, lens[q]);
    }
    cudaFree(dx);
    cudaFree(dy);
    cudaFree(dl);
}

template <typename T, int W, int K, int Kind> static void warp_case(int warps) {
    const int rows = warps * (32 / W);
    run_prim<T>("warpSoftmax", Kind, rows, W * K, false, 100 + W * 7 + K + Kind * 1000,
                [&](T* x, T* y, int* l) { warp_prim_kernel<T, W, K, Kind><<<warps, 32>>>(x, y, l, W * K); });
}
template <typename T, int Kind> static void warp_cases(void) {
    warp_case<T, 1, 3, Kind>(3);
    warp_case<T, 4, 1, Kind>(5);
    warp_case<T, 8, 5, Kind>(4);
    warp_case<T, 32, 2, Kind>(6);
}
Test(softmax, warp_primitives) {
    WK_REQUIRE_GPU();
    warp_cases<float, warpkit::SoftmaxPlain>();
    warp_cases<float, warpkit::SoftmaxLog>();
    warp_cases<float, warpkit::SoftmaxMasked>();
    warp_cases<float, warpkit::SoftmaxLogMasked>();
    warp_cases<__half, warpkit::SoftmaxPlain>();
    warp_cases<__half, warpkit::SoftmaxLog>();
    warp_cases<__nv_bfloat16, warpkit::SoftmaxPlain>();
    warp_cases<__nv_bfloat16, warpkit::SoftmaxMasked>();
}

template <typename T, int B, int K, int Kind> static void block_case(int threads, int rows) {
    const int cols = threads * K;
    // The kernel applies the primitive twice (back-to-back use); the reference does the same.
    run_prim<T>("blockSoftmax", Kind, rows, cols, true, 200 + threads + K + Kind * 1000,
                [&](T* x, T* y, int* l) { block_prim_kernel<T, B, K, Kind><<<rows, threads>>>(x, y, l, cols); });
}
template <typename T, int Kind> static void block_cases(void) {
    block_case<T, 0, 1, Kind>(1, 9);
    block_case<T, 0, 1, Kind>(33, 9);
    block_case<T, 0, 3, Kind>(100, 9);
    block_case<T, 0, 1, Kind>(1024, 5);
    block_case<T, 256, 4, Kind>(256, 9);
    block_case<T, 96, 2, Kind>(96, 9);
}
Test(softmax, block_primitives) {
    WK_REQUIRE_GPU();
    block_cases<float, warpkit::SoftmaxPlain>();
    block_cases<float, warpkit::SoftmaxMasked>();
    block_cases<__half, warpkit::SoftmaxPlain>();
    block_cases<__nv_bfloat16, warpkit::SoftmaxPlain>();
}

template <int B> __global__ void state_kernel(const float* x, float* out, int per) {
    const int t = threadIdx.x;
    SoftmaxState s = warpkit::softmaxStateEmpty();
    for (int i = 0; i < per; ++i) s = warpkit::softmaxStateUpdate(s, x[((size_t)blockIdx.x * blockDim.x + t) * per + i]);
    const SoftmaxState w = warpkit::warpReduceSoftmaxState<8>(s);
    const SoftmaxState b = warpkit::blockReduceSoftmaxState<B>(s);
    // Back to back, from the segment states (one lane per segment contributes).
    const SoftmaxState b2 = warpkit::blockReduceSoftmaxState<B>(t % 8 == 0 ? w : warpkit::softmaxStateEmpty());
    float* o = out + ((size_t)blockIdx.x * blockDim.x + t) * 6;
    o[0] = w.max; o[1] = w.sum; o[2] = b.max; o[3] = b.sum; o[4] = b2.max; o[5] = b2.sum;
}

/// max and sum of exp(x - max) in double for n floats; NaN / +inf rules as the state's.
static void ref_state(const float* x, int n, double* m, double* s) {
    double mm = -INFINITY;
    bool nan = false;
    for (int i = 0; i < n; ++i) { if (isnan(x[i])) nan = true; else mm = fmax(mm, x[i]); }
    double ss = 0;
    if (mm != -INFINITY) for (int i = 0; i < n; ++i) ss += exp((double)x[i] - mm);
    if (mm == INFINITY) ss = NAN;
    *m = nan ? NAN : mm;
    *s = nan ? NAN : ss;
}

template <int B> static void state_case(int threads, int blocks, int per) {
    wk_rng r = wk_rng_make(300 + threads);
    const size_t n = (size_t)blocks * threads * per;
    std::vector<float> hx(n), ho((size_t)blocks * threads * 6);
    for (int b = 0; b < blocks; ++b) fill_row<float>(&r, &hx[(size_t)b * threads * per], threads * per, b);
    float *dx = wk_alloc<float>(n), *dout = wk_alloc<float>(ho.size());
    wk_upload(dx, hx.data(), n);
    wk_poison(dout, ho.size());
    state_kernel<B><<<blocks, threads>>>(dx, dout, per);
    WK_LAUNCHED();
    wk_download(ho.data(), dout, ho.size());
    int bad = 0;
    for (int b = 0; b < blocks; ++b) {
        double bm, bs;
        ref_state(&hx[(size_t)b * threads * per], threads * per, &bm, &bs);
        for (int t = 0; t < threads; ++t) {
            const float* o = &ho[((size_t)b * threads + t) * 6];
            const int seg0 = t / 8 * 8, segn = (threads - seg0) < 8 ? threads - seg0 : 8;
            double wm, ws;
            ref_state(&hx[((size_t)b * threads + seg0) * per], segn * per, &wm, &ws);
            const bool warp_ok = (t & 31) + (8 - t % 8) > 32 || seg0 + 8 > ((threads + 31) & ~31) ||
                                 (wk_close(o[0], wm, 0) && wk_close(o[1], ws, 1e-5));
            const bool blk_ok = wk_close(o[2], bm, 0) && wk_close(o[3], bs, 1e-5) && wk_close(o[4], bm, 0) &&
                                wk_close(o[5], bs, 1e-5);
            if ((!blk_ok || (threads % 32 == 0 && !warp_ok)) && bad++ < 3)
                cr_log_error("state %d threads: block %d thread %d: warp {%g,%g} want {%g,%g}; block {%g,%g} {%g,%g} want {%g,%g}",
                             threads, b, t, o[0], o[1], wm, ws, o[2], o[3], o[4], o[5], bm, bs);
        }
    }
    cr_expect(bad == 0, "state reductions, %d threads: %d mismatches", threads, bad);
    cudaFree(dx);
    cudaFree(dout);
}

Test(softmax, state_reductions) {
    WK_REQUIRE_GPU();
    state_case<0>(64, 9, 3);
    state_case<256>(256, 9, 2);
    state_case<0>(1024, 9, 1);
}

// ---- GPU: every dispatcher path ------------------------------------------------------------------
template <typename T, int Kind>
static void path_case(rowsm::Path path, int rows, int cols, uint64_t seed) {
    if (!rowsm::pathSupports<T>(path, cols)) return;
    wk_rng r = wk_rng_make(seed);
    const size_t n = (size_t)rows * cols;
    std::vector<T> hx(n), hy(n);
    for (int q = 0; q < rows; ++q) fill_row<T>(&r, &hx[(size_t)q * cols], cols, q + (int)seed);
    T *dx = wk_alloc<T>(n), *dy = wk_alloc<T>(n);
    wk_upload(dx, hx.data(), n);
    wk_poison(dy, n);
    cudaError_t e = rowsm::rowSoftmax<T, Kind>(dx, dy, rows, cols, path);
    cr_expect(e == cudaSuccess, "rowSoftmax %s %d x %d: %s", rowsm::pathName(path), rows, cols, cudaGetErrorString(e));
    WK_LAUNCHED();
    wk_download(hy.data(), dy, n);
    char what[64];
    snprintf(what, sizeof what, "rowSoftmax/%s", rowsm::pathName(path));
    check_rows<T>(what, Kind, hx.data(), hy.data(), rows, cols);
    cudaFree(dx);
    cudaFree(dy);
}

/// Columns to try on a path: its boundaries +-1, odd primes, its largest rows.
static std::vector<int> path_cols(rowsm::Path p) {
    switch (p) {
    case rowsm::PathWarp: // 16-bit rows go to 2048
        return {1, 2, 3, 4, 5, 7, 8, 9, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 257, 511, 512, 513, 1021, 1023, 1024,
                1025, 1031, 1536, 2047, 2048};
    case rowsm::PathBlock: return {1, 5, 1025, 2047, 2048, 2049, 4095, 4097, 8191, 8192, 8193, 12289, 16383, 16384};
    case rowsm::PathCluster: return {3, 4099, 8191, 8193, 16385, 40009, 65535, 65536, 65537, 131071, 262143, 262144};
    case rowsm::PathSmem: return {1, 13, 1024, 4099, 16384, 50021, 56832, 113664};
    case rowsm::PathStaged: // 64 KB slices: fp32 16384 per block, 16-bit 32768; fp32 262144: 16 blocks
        return {1, 3, 8, 4099, 16383, 16384, 16385, 32767, 32768, 32769, 40009, 65535, 65536, 65537, 131072, 131073,
                262143, 262144};
    default: return {1, 7, 1023, 5003, 65536, 300007};
    }
}

template <typename T, int Kind> static void paths_for(void) {
    const rowsm::Path paths[] = {rowsm::PathWarp,    rowsm::PathBlock,       rowsm::PathCluster, rowsm::PathSmem,
                                 rowsm::PathTwoPass, rowsm::PathStaged};
    // Quick mode (make sanitize: racecheck tracks every shared-memory access) keeps rows short.
    const size_t budget = wk_quick() ? ((size_t)1 << 16) : ((size_t)1 << 22);
    for (rowsm::Path p : paths) {
        for (int cols : path_cols(p)) {
            if (wk_quick() && cols > 70000) continue;
            const int many = (int)std::min<size_t>(wk_quick() ? 300 : 3001, std::max<size_t>(2, budget / (size_t)cols));
            path_case<T, Kind>(p, 1, cols, 7 + cols);
            path_case<T, Kind>(p, many, cols, 11 + cols);
        }
    }
}

/// Every cluster variant (slice shapes) on rows that need 1..16 blocks.
template <typename T> static void cluster_variants(void) {
    if (!rowsm::deviceInfo().clusters) return;
    const int cols_list[] = {3, 20011, 65536, 131071, 262144};
    for (int cols : cols_list) {
        if (wk_quick() && cols > 70000) continue;
        for (int variant = 1; variant <= 4; ++variant) {
            const int rows = (int)std::max<size_t>(1, std::min<size_t>(300, ((size_t)1 << 21) / cols));
            wk_rng r = wk_rng_make(cols + variant);
            const size_t n = (size_t)rows * cols;
            std::vector<T> hx(n), hy(n);
            for (int q = 0; q < rows; ++q) fill_row<T>(&r, &hx[(size_t)q * cols], cols, q);
            T *dx = wk_alloc<T>(n), *dy = wk_alloc<T>(n);
            wk_upload(dx, hx.data(), n);
            wk_poison(dy, n);
            const bool vec = cols % rowsm::Vec<T>::V == 0;
            cudaError_t e = rowsm::rowSoftmaxCluster<T, warpkit::SoftmaxPlain>(dx, dy, rows, cols, vec, variant, 0);
            if (e == cudaErrorInvalidValue) { cudaFree(dx); cudaFree(dy); continue; } // needs > 16 blocks
            cr_expect(e == cudaSuccess, "cluster variant %d, %d cols: %s", variant, cols, cudaGetErrorString(e));
            WK_LAUNCHED();
            wk_download(hy.data(), dy, n);
            char what[64];
            snprintf(what, sizeof what, "cluster variant %d", variant);
            check_rows<T>(what, warpkit::SoftmaxPlain, hx.data(), hy.data(), rows, cols);
            cudaFree(dx);
            cudaFree(dy);
        }
    }
}

/// One variant case: `rows` seeded random rows of `cols` (row q gets fill pattern q + salt), output
/// poisoned, then launch(dx, dy, vec). When it returns cudaSuccess, the rows are checked against
/// the host reference under the label `what`. Returns launch's error.
template <typename T, typename Launch>
static cudaError_t variant_case(int cols, int rows, unsigned long long seed, int salt, int kind, const char* what, Launch launch) {
    wk_rng r = wk_rng_make(seed);
    const size_t n = (size_t)rows * cols;
    std::vector<T> hx(n), hy(n);
    for (int q = 0; q < rows; ++q) fill_row<T>(&r, &hx[(size_t)q * cols], cols, q + salt);
    T *dx = wk_alloc<T>(n), *dy = wk_alloc<T>(n);
    wk_upload(dx, hx.data(), n);
    wk_poison(dy, n);
    const cudaError_t e = launch(dx, dy, cols % rowsm::Vec<T>::V == 0);
    if (e == cudaSuccess) {
        WK_LAUNCHED();
        wk_download(hy.data(), dy, n);
        check_rows<T>(what, kind, hx.data(), hy.data(), rows, cols);
    }
    cudaFree(dx);
    cudaFree(dy);
    return e;
}

/// The staged path at other shapes: 1..16 blocks per row, 1..8 pieces (a piece per 16 bytes at
/// the smallest), 256 / 512 / 1024 threads, max and sum in two sweeps or fused, with and without
/// the stored exps and the load-balancing cluster policy, clusters or global mode (rows of up to
/// 256 blocks, many rows so tickets and counters run through thousands of blocks, and the
/// counters are cleared for the next launch: every shape runs again on the next cols); plain
/// and masked kinds.
template <typename T> static void staged_variants(void) {
    if (!rowsm::deviceInfo().clusters) return;
    struct Shape { int sliceBytes, pieces, threads, flags; bool masked; };
    constexpr int F = rowsm::kStageFused, X = rowsm::kStageExp, B = rowsm::kStageLoadBalance, G = rowsm::kStageGlobal;
    const Shape shapes[] = {{16, 8, 256, X, false},          {4096, 3, 256, F | X, false}, {32 << 10, 4, 512, X | B, false},
                            {48 << 10, 8, 1024, F, false},    {64 << 10, 1, 512, 0, false}, {64 << 10, 4, 256, F | X, false},
                            {96 << 10, 4, 512, F | B, false}, {4096, 2, 256, X, true},      {64 << 10, 4, 256, F | X | B, true},
                            // global mode: up to 256 blocks a row
                            {4096, 2, 256, X | G, false},     {32 << 10, 4, 512, G, false}, {64 << 10, 4, 256, F | X | G, false},
                            {4096, 1, 256, F | X | G, true},  {48 << 10, 8, 1024, F | X, false}};
    const int cols_list[] = {8, 20011, 20016, 65536, 131072, 262144};
    for (int cols : cols_list) {
        if (wk_quick() && cols > 70000) continue;
        for (const Shape& sh : shapes) {
            const size_t budget = wk_quick() ? ((size_t)1 << 17) : ((size_t)1 << 22);
            const int rows = (int)std::max<size_t>(1, std::min<size_t>(wk_quick() ? 300 : 3000, budget / cols));
            constexpr int P = warpkit::SoftmaxPlain, M = warpkit::SoftmaxMasked;
            char what[64];
            snprintf(what, sizeof what, "staged %d B / %d / %d / flags %d%s", sh.sliceBytes, sh.pieces, sh.threads, sh.flags,
                     sh.masked ? " / masked" : "");
            const cudaError_t e = variant_case<T>(cols, rows, cols + sh.sliceBytes + sh.pieces, sh.pieces, sh.masked ? M : P, what,
                                                  [&](const T* dx, T* dy, bool vec) {
                if (sh.masked) return rowsm::rowSoftmaxStaged<T, M, 256>(dx, dy, rows, cols, vec, sh.sliceBytes, sh.pieces, 0, sh.flags);
                if (sh.threads == 256) return rowsm::rowSoftmaxStaged<T, P, 256>(dx, dy, rows, cols, vec, sh.sliceBytes, sh.pieces, 0, sh.flags);
                if (sh.threads == 1024) return rowsm::rowSoftmaxStaged<T, P, 1024>(dx, dy, rows, cols, vec, sh.sliceBytes, sh.pieces, 0, sh.flags);
                return rowsm::rowSoftmaxStaged<T, P, 512>(dx, dy, rows, cols, vec, sh.sliceBytes, sh.pieces, 0, sh.flags);
            });
            // Clusters: more than 16 blocks refused, more than 8 where none fits. Global mode takes these.
            const bool global = sh.flags & G, tooMany = !global && (size_t)cols * sizeof(T) > (size_t)sh.sliceBytes * 16;
            if (tooMany || e == cudaErrorInvalidValue) {
                cr_expect(tooMany || (!global && (size_t)cols * sizeof(T) > (size_t)sh.sliceBytes * 8),
                          "staged %d B x %d: refused %d cols", sh.sliceBytes, sh.pieces, cols);
                continue;
            }
            cr_expect(e == cudaSuccess, "staged %d B / %d pieces / %d thr, %d cols: %s", sh.sliceBytes, sh.pieces, sh.threads,
                      cols, cudaGetErrorString(e));
        }
    }
    rowsm::releaseStageWorkspace(); // memcheck's leak check: nothing left allocated
}

Test(softmax, paths_float) {
    WK_REQUIRE_GPU();
    paths_for<float, warpkit::SoftmaxPlain>();
    cluster_variants<float>();
    staged_variants<float>();
}
Test(softmax, paths_half_bf16) {
    WK_REQUIRE_GPU();
    paths_for<__half, warpkit::SoftmaxPlain>();
    paths_for<__nv_bfloat16, warpkit::SoftmaxPlain>();
    cluster_variants<__half>();
    staged_variants<__half>();
    staged_variants<__nv_bfloat16>();
}
// LogMasked runs the log arithmetic and the masked branch of every path (the plain-masked branch
// is covered by the primitive tests and softmaxApply's host test); one kind keeps the build short.
Test(softmax, paths_log_masked) {
    WK_REQUIRE_GPU();
    paths_for<float, warpkit::SoftmaxLogMasked>();
}
