// Tests of the softmax primitives (include/warpkit/softmax.cuh: thread, warp, block and cluster levels).
// Host tests (run in CI without a GPU): the online state, softmaxFactors / softmaxApply and the
// K-value update against a double-precision reference, NaN/inf rules, merge in any grouping.
// GPU tests: warpSoftmax / blockSoftmax (all kinds, widths, K, block sizes incl. partial warps) and
// the states they return, warpSoftmaxState / blockSoftmaxState, warp/block state reductions, and
// clusterSoftmax / clusterReduceSoftmaxState on sm_90. rowSoftmax: tests/device/softmax.cu.
#include "softmax_common.cuh"
#include <warpkit/softmax.cuh>

using warpkit::SoftmaxState;

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
                cr_log_error("state kind %d n %d split %d form %d: [%d] got %.9g want %.9g", kind, n, split, k, i, got,
                             y[i]);
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

/// softmaxFactors + softmaxApply (precise and fast) and the K-value update against the reference
/// and against the one-value update, every kind, random rows and the special patterns.
template <int Kind> static int factors_case(const double* xd, const float* xf, int n) {
    std::vector<double> y(n);
    ref_softmax(Kind, xd, n, y.data());
    SoftmaxState one = warpkit::softmaxStateEmpty(), many = warpkit::softmaxStateEmpty();
    for (int i = 0; i < n; ++i) one = warpkit::softmaxStateUpdate(one, xf[i]);
    int i = 0;
    for (; i + 5 <= n; i += 5) {
        const float k5[5] = {xf[i], xf[i + 1], xf[i + 2], xf[i + 3], xf[i + 4]};
        many = warpkit::softmaxStateUpdate(many, k5);
    }
    for (; i < n; ++i) {
        const float k1[1] = {xf[i]};
        many = warpkit::softmaxStateUpdate(many, k1);
    }
    int bad = 0;
    const SoftmaxState sts[2] = {one, many};
    for (const SoftmaxState& s : sts) {
        const warpkit::SoftmaxFactors f = warpkit::softmaxFactors<Kind>(s);
        for (int j = 0; j < n; ++j) {
            const double precise = warpkit::softmaxApply<Kind, true>(f, xf[j]);
            const double fast = warpkit::softmaxApply<Kind, false>(f, xf[j]);
            const double viaState = warpkit::softmaxApply<Kind>(s, xf[j]);
            if ((!close_out(Kind, precise, y[j], 1e-5, 1e-37) || !close_out(Kind, fast, y[j], 1e-4, 1e-30) ||
                 !close_out(Kind, viaState, y[j], 1e-5, 1e-37)) &&
                bad++ < 3)
                cr_log_error("factors kind %d n %d [%d]: precise %.9g fast %.9g state %.9g want %.9g", Kind, n, j,
                             precise, fast, viaState, y[j]);
        }
    }
    return bad;
}

Test(softmax_host, factors_and_k_value_update) {
    wk_rng r = wk_rng_make(11);
    int bad = 0;
    for (int mode = 0; mode < 36; ++mode) {
        const int n = (int)wk_int(&r, 1, 300);
        std::vector<float> xf(n);
        std::vector<double> xd(n);
        fill_row<float>(&r, xf.data(), n, mode);
        for (int i = 0; i < n; ++i) xd[i] = xf[i];
        bad += factors_case<warpkit::SoftmaxPlain>(xd.data(), xf.data(), n) +
               factors_case<warpkit::SoftmaxLog>(xd.data(), xf.data(), n) +
               factors_case<warpkit::SoftmaxMasked>(xd.data(), xf.data(), n) +
               factors_case<warpkit::SoftmaxLogMasked>(xd.data(), xf.data(), n);
    }
    cr_expect(bad == 0, "softmaxFactors / softmaxApply / K-value softmaxStateUpdate: %d mismatches", bad);
    // The edge rules, through the factors.
    const float inf = INFINITY;
    const float allNinf[3] = {-inf, -inf, -inf};
    const SoftmaxState e = warpkit::softmaxStateUpdate(warpkit::softmaxStateEmpty(), allNinf);
    cr_expect(e.max == -inf && e.sum == 0.0f, "K values of -inf leave the state empty");
    cr_expect(
        isnan(warpkit::softmaxApply<warpkit::SoftmaxPlain>(warpkit::softmaxFactors<warpkit::SoftmaxPlain>(e), -inf)),
        "all -inf: NaN");
    cr_expect(warpkit::softmaxApply<warpkit::SoftmaxMasked>(warpkit::softmaxFactors<warpkit::SoftmaxMasked>(e), -inf) ==
                  0.0f,
              "masked all -inf: 0");
    cr_expect((warpkit::softmaxApply<warpkit::SoftmaxMasked, false>(warpkit::softmaxFactors<warpkit::SoftmaxMasked>(e),
                                                                    -inf)) == 0.0f,
              "masked all -inf, fast exp: 0");
    cr_expect(isnan(warpkit::softmaxApply<warpkit::SoftmaxPlain, false>(
                  warpkit::softmaxFactors<warpkit::SoftmaxPlain>(e), -inf)),
              "all -inf, fast exp: NaN");
    cr_expect(warpkit::softmaxApply<warpkit::SoftmaxLogMasked>(warpkit::softmaxFactors<warpkit::SoftmaxLogMasked>(e),
                                                               -inf) == -inf,
              "masked log all -inf: -inf");
    const float withInf[2] = {1.0f, inf};
    cr_expect(isnan(warpkit::softmaxStateUpdate(warpkit::softmaxStateEmpty(), withInf).sum),
              "+inf among K values: NaN sum");
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
        v[j] = j * W + l < n ? x[(size_t)seg * cols + j * W + l]
                             : warpkit::detail::Arith<T>::from_acc(-__builtin_huge_valf());
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
    for (int i = 0; i < per; ++i)
        s = warpkit::softmaxStateUpdate(s, x[((size_t)blockIdx.x * blockDim.x + t) * per + i]);
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
                cr_log_error("state %d threads: block %d thread %d: warp {%g,%g} want {%g,%g}; block {%g,%g} {%g,%g} "
                             "want {%g,%g}",
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

// ---- GPU: the states the row primitives return --------------------------------------------------
// Segment q (8 lanes) holds row q, slot j of lane l = element j*8 + l (n_q = 1..24 elements; -inf
// past n_q). Each lane writes warpSoftmaxState, then warpSoftmax's returned state; each block
// (64 threads, slot j of thread t = element j*64 + t of row blockIdx.x) writes blockSoftmaxState
// and blockSoftmax's returned state.
__global__ void states_kernel(const float* x, const int* lens, float* out, float* bout) {
    const int lane = threadIdx.x & 31, seg = (blockIdx.x * blockDim.x + threadIdx.x) / 8, l = lane % 8, t = threadIdx.x;
    float v[3], b[3];
    for (int j = 0; j < 3; ++j) {
        v[j] = j * 8 + l < lens[seg] ? x[seg * 24 + j * 8 + l] : -INFINITY;
        b[j] = j * 64 + t < lens[blockIdx.x] * 8 ? x[blockIdx.x * 192 + j * 64 + t] : -INFINITY;
    }
    const SoftmaxState a = warpkit::warpSoftmaxState<8>(v);
    const SoftmaxState r = warpkit::warpSoftmax<8, 3>(v);
    float* o = out + (size_t)(blockIdx.x * blockDim.x + t) * 4;
    o[0] = a.max; o[1] = a.sum; o[2] = r.max; o[3] = r.sum;
    const SoftmaxState ba = warpkit::blockSoftmaxState<64>(b);
    const SoftmaxState br = warpkit::blockSoftmax<64, 3, warpkit::SoftmaxLog>(b);
    float* q = bout + (size_t)(blockIdx.x * blockDim.x + t) * 4;
    q[0] = ba.max; q[1] = ba.sum; q[2] = br.max; q[3] = br.sum;
}

Test(softmax, returned_states) {
    WK_REQUIRE_GPU();
    const int blocks = 6, threads = 64, segs = blocks * threads / 8;
    wk_rng r = wk_rng_make(77);
    std::vector<float> hx((size_t)segs * 24 > (size_t)blocks * 192 ? (size_t)segs * 24 : (size_t)blocks * 192);
    std::vector<int> lens(segs);
    for (int q = 0; q < segs; ++q) {
        lens[q] = (int)wk_int(&r, 1, 24);
        fill_row<float>(&r, &hx[(size_t)q * 24], 24, q);
    }
    for (int q = 0; q < blocks; ++q) fill_row<float>(&r, &hx[(size_t)q * 192], 192, q + 3);
    float *dx = wk_alloc<float>(hx.size()), *dout = wk_alloc<float>((size_t)blocks * threads * 4),
          *dbout = wk_alloc<float>((size_t)blocks * threads * 4);
    int* dl = wk_alloc<int>(segs);
    wk_upload(dx, hx.data(), hx.size());
    wk_upload(dl, lens.data(), segs);
    wk_poison(dout, (size_t)blocks * threads * 4);
    wk_poison(dbout, (size_t)blocks * threads * 4);
    states_kernel<<<blocks, threads>>>(dx, dl, dout, dbout);
    WK_LAUNCHED();
    std::vector<float> ho((size_t)blocks * threads * 4), hb(ho.size());
    wk_download(ho.data(), dout, ho.size());
    wk_download(hb.data(), dbout, hb.size());
    int bad = 0;
    for (int g = 0; g < blocks * threads && bad < 5; ++g) {
        const int seg = g / 8, blk = g / threads;
        double m, s, bm, bs;
        ref_state(&hx[(size_t)seg * 24], lens[seg], &m, &s);
        // The block's row: elements j*64 + t for t < 64, j < 3, of the first lens[blk] * 8.
        std::vector<float> brow(hx.begin() + (size_t)blk * 192, hx.begin() + (size_t)blk * 192 + lens[blk] * 8);
        ref_state(brow.data(), (int)brow.size(), &bm, &bs);
        const float* o = &ho[(size_t)g * 4];
        const float* q = &hb[(size_t)g * 4];
        const bool ok = wk_close(o[0], m, 0) && wk_close(o[1], s, 1e-5) && wk_close(o[2], m, 0) &&
                        wk_close(o[3], s, 1e-5) && wk_close(q[0], bm, 0) && wk_close(q[1], bs, 1e-5) &&
                        wk_close(q[2], bm, 0) && wk_close(q[3], bs, 1e-5);
        if (!ok && bad++ < 5)
            cr_log_error("thread %d: warp states {%g,%g} {%g,%g} want {%g,%g}; block {%g,%g} {%g,%g} want {%g,%g}", g,
                         o[0], o[1], o[2], o[3], m, s, q[0], q[1], q[2], q[3], bm, bs);
    }
    cr_expect(bad == 0, "states returned by warpSoftmax / blockSoftmax and the ...State forms: %d mismatches", bad);
    cudaFree(dx);
    cudaFree(dout);
    cudaFree(dbout);
    cudaFree(dl);
}
