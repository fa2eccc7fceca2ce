// Tests of include/warpkit/device/norm.cuh (rowLayerNorm, rowRmsNorm), through the public calls
// except `paths`, which also runs forced plans (every kernel of detail/row_kernels.cuh and row_staged.cuh on small
// inputs, under the sanitizers too).
//   fuzz:        seeded random shapes (rows 0, 1, many; cols 1..300000 and path edges +-1), row
//                strides and pointer offsets of 0..7 elements for x, y, w and b, in place, with and
//                without w, b, mean and rstd, every type; outputs poisoned first, everything outside
//                the rows (and mean / rstd past `rows`) checked untouched.
//   paths:       cols around every path boundary +-1 with the dispatcher's plans for few and many
//                rows, and forced warp, block, cluster and streamed plans on 3 rows.
//   model_width: R25's fp32 rows (516..771 columns, llm.c's 768), their neighbours and the warp
//                path's widest rows (1000..1025): odd rows, every data pattern, with and without
//                w, b and the statistics, aligned and not, row counts around R25's blocks of 16
//                rows; model_width_plan (host only) pins the plan of 8192 x 768.
//   full_rows:   the full-row kernels (aligned rows of exactly a plan's slots) at their boundary
//                (a vector or an element short or over, any pointer or ld off 16 bytes), against
//                the references and bit for bit against the general kernels; full_rows_plan (host
//                only) pins which calls take them.
//   block_columns: R30's copies of w in shared memory (fp32 clusters of 512 x 8 vectors, b null):
//                partial clusters, every pattern, with and without w, b and the statistics, in
//                place, ld past cols, w or b off 16 bytes; bit for bit against w read from memory.
//   specials:    NaN, +-inf, all -inf, constant rows, the hard Welford data (1e6 + N(0, 1e-3)) and
//                near-constant rows a few ulps apart, on every path.
//   bad_args:    every bad argument returns cudaErrorInvalidValue and writes nothing.
//   concurrent:  two host threads on two streams at once.
#include "row_common.cuh"
#include <warpkit/device/norm.cuh>
#include <vector>

using warpkit::detail::RowPlan;

struct NormCase {
    bool rms;
    long long rows;
    int cols;
    long long ldx, ldy;
    int offX, offY, offW, offB; // pointer offsets in elements
    bool inplace, useW, useB, stats;
    float eps;
    int mode; // norm_fill pattern of row 0 (row r uses mode + r)
};

static const int kModes = 12;
/// One row of pattern `mode`: uniform at four scales and centres, NaN, +inf, -inf, all -inf, the
/// hard Welford data, near-constant (a few ulps apart far from 0), constant, one outlier.
template <typename T> static void norm_fill(wk_rng* r, T* x, int n, int mode) {
    static const double scale[] = {1.0, 10.0, 0.5, 3e3}, centre[] = {0.0, 0.0, -1e3, 100.0};
    const double big = sizeof(T) == 4 ? 1e6 : 1e3; // fp16 holds no 1e6
    const int m = mode % kModes;
    for (int i = 0; i < n; ++i) x[i] = wk_from_double<T>(centre[m & 3] + wk_uniform(r, -scale[m & 3], scale[m & 3]));
    switch (m) {
    case 4: x[wk_int(r, 0, n - 1)] = wk_from_double<T>(NAN); break;
    case 5: x[wk_int(r, 0, n - 1)] = wk_from_double<T>(INFINITY); break;
    case 6: x[wk_int(r, 0, n - 1)] = wk_from_double<T>(-INFINITY); break;
    case 7: for (int i = 0; i < n; ++i) x[i] = wk_from_double<T>(-INFINITY); break;
    case 8: // 1e6 + N(0, 1e-3) (Box-Muller), rounded to T
        for (int i = 0; i < n; ++i)
            x[i] = wk_from_double<T>(big + 1e-3 * sqrt(-2.0 * log(wk_uniform(r, 1e-12, 1.0))) * cos(6.283185307 * wk_uniform(r, 0, 1)));
        break;
    case 9: { // big + k ulps, k in -3..3
        const double ulp = wk_eps<T>() * ldexp(1.0, (int)floor(log2(big)));
        for (int i = 0; i < n; ++i) x[i] = wk_from_double<T>(big + ulp * (double)wk_int(r, -3, 3));
        break;
    }
    case 10: { const T c = x[0]; for (int i = 0; i < n; ++i) x[i] = c; break; }
    case 11: x[wk_int(r, 0, n - 1)] = wk_from_double<T>(sizeof(T) == 4 ? 1e5 : 1e3); break;
    default: break;
    }
}

/// Double-precision LayerNorm / RMSNorm of one row (IEEE rules in double give PyTorch's).
static void norm_ref(bool rms, const double* x, int n, const double* w, const double* b, double eps, double* y, double* mean,
                     double* rstd) {
    double s = 0, q = 0;
    if (rms) {
        for (int i = 0; i < n; ++i) q += x[i] * x[i];
        *mean = 0;
        *rstd = 1.0 / sqrt(q / n + eps);
    } else {
        for (int i = 0; i < n; ++i) s += x[i];
        *mean = s / n;
        for (int i = 0; i < n; ++i) q += (x[i] - *mean) * (x[i] - *mean);
        *rstd = 1.0 / sqrt(q / n + eps);
    }
    for (int i = 0; i < n; ++i) y[i] = (x[i] - *mean) * *rstd * (w ? w[i] : 1.0) + (b ? b[i] : 0.0);
}

template <typename T> static double tol_y(void) { return sizeof(T) == 4 ? 2e-5 : wk_eps<T>(); }

/// got within tol of want, scaled by the terms' size `mag`; NaN matches NaN, inf the same inf.
static bool norm_close(double got, double want, double tol, double mag) {
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    if (isnan(got) || isinf(got)) return false;
    return fabs(got - want) <= tol * (1.0 + mag);
}

/// Runs one case (the dispatcher's plan, or `plan`); checks the rows against the reference, mean
/// and rstd, and that nothing else was written. Returns mismatches.
template <typename T>
static int norm_case(const char* what, const NormCase& c, uint64_t seed, const RowPlan* plan = nullptr, cudaStream_t st = 0) {
    wk_rng r = wk_rng_make(seed);
    const size_t span = (size_t)(c.rows > 0 ? c.rows - 1 : 0);
    const size_t nx = (size_t)c.offX + span * c.ldx + c.cols + 8;
    const size_t ny = c.inplace ? nx : (size_t)c.offY + span * c.ldy + c.cols + 8;
    const long long ldy = c.inplace ? c.ldx : c.ldy;
    std::vector<T> hx(nx), hy(ny), before(ny), hw(c.cols + 8), hb(c.cols + 8);
    for (size_t i = 0; i < nx; ++i) hx[i] = wk_from_double<T>(wk_uniform(&r, -9.0, 9.0));
    for (long long q = 0; q < c.rows; ++q) norm_fill<T>(&r, &hx[c.offX + q * c.ldx], c.cols, c.mode + (int)q);
    for (T& v : hw) v = wk_from_double<T>(wk_uniform(&r, -2.0, 2.0));
    for (T& v : hb) v = wk_from_double<T>(wk_uniform(&r, -2.0, 2.0));
    T* dx = wk_alloc<T>(nx);
    T* dw = wk_alloc<T>(hw.size());
    T* db = wk_alloc<T>(hb.size());
    wk_upload(dx, hx.data(), nx);
    wk_upload(dw, hw.data(), hw.size());
    wk_upload(db, hb.data(), hb.size());
    T* dy = dx;
    if (c.inplace) {
        before = hx;
    } else {
        dy = wk_alloc<T>(ny);
        wk_poison(dy, ny);
        wk_download(before.data(), dy, ny);
    }
    const size_t ns = (size_t)c.rows + 2; // mean / rstd at [1, rows], guards around
    float* dm = wk_alloc<float>(ns);
    float* dr = wk_alloc<float>(ns);
    wk_poison(dm, ns);
    wk_poison(dr, ns);
    const T* w = c.useW ? dw + c.offW : nullptr;
    const T* b = c.useB && !c.rms ? db + c.offB : nullptr;
    T* yp = dy + (c.inplace ? c.offX : c.offY);
    float* mp = c.stats && !c.rms ? dm + 1 : nullptr;
    float* rp = c.stats ? dr + 1 : nullptr;
    cudaError_t e;
    if (plan) {
        int dev = 0;
        warpkit::detail::DeviceProps d;
        WK_CUDA(warpkit::detail::currentDevice(&dev, &d));
        const warpkit::detail::NormParams<T> p{dx + c.offX, yp, w, b, mp, rp, c.ldx, ldy, c.eps, c.rms};
        e = warpkit::detail::rowOpRun(*plan, p, c.rows, c.cols, dev, d, st);
    } else if (c.rms) {
        e = warpkit::rowRmsNorm(dx + c.offX, yp, c.rows, c.cols, w, c.eps, rp, c.ldx, ldy, st);
    } else {
        e = warpkit::rowLayerNorm(dx + c.offX, yp, c.rows, c.cols, w, b, c.eps, mp, rp, c.ldx, ldy, st);
    }
    int bad = 0;
    if (e != cudaSuccess) {
        cr_log_error("%s %s: %s(%lld x %d) returned %s", what, wk_type_name<T>(), c.rms ? "rowRmsNorm" : "rowLayerNorm", c.rows,
                     c.cols, cudaGetErrorString(e));
        bad = 1;
    }
    WK_CUDA(cudaStreamSynchronize(st));
    WK_CUDA(cudaGetLastError());
    std::vector<float> hm(ns), hr(ns);
    wk_download(hy.data(), dy, ny);
    wk_download(hm.data(), dm, ns);
    wk_download(hr.data(), dr, ns);
    std::vector<double> xd(c.cols), yd(c.cols), wd(c.cols), bd(c.cols);
    for (int i = 0; i < c.cols; ++i) {
        wd[i] = wk_to_double(hw[c.offW + i]);
        bd[i] = wk_to_double(hb[c.offB + i]);
    }
    const size_t y0 = (size_t)(yp - dy);
    for (long long q = 0; q < c.rows && bad < 3; ++q) {
        for (int i = 0; i < c.cols; ++i) xd[i] = wk_to_double(hx[c.offX + q * c.ldx + i]);
        double mean, rstd;
        norm_ref(c.rms, xd.data(), c.cols, w ? wd.data() : nullptr, b ? bd.data() : nullptr, c.eps, yd.data(), &mean, &rstd);
        for (int i = 0; i < c.cols && bad < 3; ++i) {
            const double got = wk_to_double(hy[y0 + q * ldy + i]);
            const double mag = fabs(yd[i]) + fabs((xd[i] - mean) * rstd * (w ? wd[i] : 1.0));
            if (!norm_close(got, yd[i], tol_y<T>(), mag))
                cr_log_error("%s %s %s: %lld x %d (ld %lld/%lld, off %d/%d) row %lld col %d: got %.9g want %.9g (x %.9g, mean %.9g, rstd %.9g)",
                             what, wk_type_name<T>(), c.rms ? "rms" : "layer", c.rows, c.cols, c.ldx, ldy, c.offX, c.offY, q, i,
                             got, yd[i], xd[i], mean, rstd), ++bad;
        }
        // The mean sums x - x[0] in float, so its rounding scales with the spread about the first
        // element as well as with the mean and the deviation (an outlier in column 0 shifts every
        // other term by its size).
        // sqrt(var + eps) is 1 / rstd; with eps < 0 and var + eps < 0, rstd is NaN (the mean stays
        // exact), and the spread alone bounds the deviation.
        double spread = 0.0;
        for (int i = 0; i < c.cols; ++i) spread = fmax(spread, fabs(xd[i] - xd[0]));
        const double sd = isnan(rstd) ? 0.0 : 1.0 / rstd;
        const double tolMean = 1e-6 * (fabs(mean) + sd + spread) + 1e-30;
        if (mp && !(isfinite(mean) ? fabs(hm[1 + q] - mean) <= tolMean : !isfinite(hm[1 + q]))) {
            cr_log_error("%s %s: %lld x %d row %lld mean %.9g want %.9g (|got - want| %.3g, tolerance %.3g)", what,
                         wk_type_name<T>(), c.rows, c.cols, q, hm[1 + q], mean, fabs(hm[1 + q] - mean), tolMean);
            ++bad;
        }
        if (rp && !norm_close(hr[1 + q], rstd, 0.0, 0.0) && !(fabs(hr[1 + q] - rstd) <= 2e-5 * rstd))
            cr_log_error("%s %s: %lld x %d row %lld rstd %.9g want %.9g", what, wk_type_name<T>(), c.rows, c.cols, q, hr[1 + q], rstd), ++bad;
    }
    // Everything outside the rows' [0, cols), and the stats' guards and unasked stats, as before.
    int touched = 0;
    for (size_t i = 0; i < ny && touched < 3; ++i) {
        const bool inRow = i >= y0 && (long long)((i - y0) % ldy) < c.cols && (long long)((i - y0) / ldy) < c.rows;
        if (!inRow && memcmp(&hy[i], &before[i], sizeof(T)) != 0 && touched++ == 0)
            cr_log_error("%s %s: %lld x %d: element %zu outside the rows was written", what, wk_type_name<T>(), c.rows, c.cols, i);
    }
    std::vector<float> poison(ns);
    memset(poison.data(), 0xA5, ns * sizeof(float));
    for (size_t i = 0; i < ns; ++i) {
        const bool mWritten = mp && i >= 1 && (long long)i <= c.rows, rWritten = rp && i >= 1 && (long long)i <= c.rows;
        if (!mWritten && memcmp(&hm[i], &poison[i], 4) != 0 && touched++ < 3) cr_log_error("%s: mean[%zu] written", what, i);
        if (!rWritten && memcmp(&hr[i], &poison[i], 4) != 0 && touched++ < 3) cr_log_error("%s: rstd[%zu] written", what, i);
    }
    cudaFree(dx);
    if (!c.inplace) cudaFree(dy);
    cudaFree(dw);
    cudaFree(db);
    cudaFree(dm);
    cudaFree(dr);
    return bad + touched;
}

template <typename T> static int norm_fuzz_one(wk_rng* r, long long budget, int iter) {
    NormCase c;
    c.rms = wk_int(r, 0, 2) == 0;
    row_draw_shape(r, budget, &c.rows, &c.cols);
    c.ldx = row_draw_ld(r, c.cols);
    c.ldy = row_draw_ld(r, c.cols);
    c.offX = (int)wk_int(r, 0, 7);
    c.offY = (int)wk_int(r, 0, 7);
    c.offW = (int)wk_int(r, 0, 7);
    c.offB = (int)wk_int(r, 0, 7);
    c.inplace = wk_int(r, 0, 4) == 0;
    c.useW = wk_int(r, 0, 3) != 0;
    c.useB = wk_int(r, 0, 3) != 0;
    c.stats = wk_int(r, 0, 1) == 0;
    static const float eps[] = {1e-5f, 1e-6f, 0.1f, 0.0f};
    c.eps = eps[wk_int(r, 0, 3)];
    c.mode = (int)wk_int(r, 0, 3); // row r takes pattern mode + r: random rows, and specials past row 0
    return norm_case<T>("fuzz", c, 0xa0000ull + iter);
}

Test(device_norm, fuzz) {
    WK_REQUIRE_GPU();
    row_fuzz("rowLayerNorm / rowRmsNorm", 7101, wk_quick() ? 40 : 300, norm_fuzz_one<float>, norm_fuzz_one<__half>,
             norm_fuzz_one<__nv_bfloat16>);
}

template <typename T> static int norm_paths(int* seen) {
    const warpkit::detail::DeviceProps d = row_props();
    std::vector<int> cols = {1, 3, 5, 8, 9, 12, 17, 31, 33, 40, 67, 127, 255, 257, 513, 1023, 1025, 2047, 2049, 4095,
                             4097, 8191, 8193, 16383, 16385, 32767, 32769, 65535, 65537, 131071, 131073, 262143, 262145};
    if (!wk_quick()) cols.push_back(300007);
    int bad = 0, salt = 0;
    for (int c : row_thinned(cols)) {
        for (const RowPlan& p : row_forced_plans<warpkit::detail::NormParams<T>>(c, d, 5, 3)) {
            seen[p.path] = 1;
            const bool rms = salt % 3 == 0;
            // Odd strides and offsets: rows at every alignment, w and b aligned unlike the rows.
            NormCase k{rms, 3, c, (long long)c + 3, (long long)c + 1, 3, 5, 1, 2, salt % 4 == 1, true, true, true, 1e-5f, salt % 4};
            bad += norm_case<T>("paths (forced plan)", k, 0xb000ull + salt++, &p);
            // Aligned rows and parameters (the instantiations without head/tail slots).
            NormCase a{rms, 3, c, (long long)(c + 7) / 8 * 8, (long long)(c + 7) / 8 * 8, 0, 0, 0, 0, false, true, true, true, 1e-5f, 1};
            bad += norm_case<T>("paths (forced plan, aligned)", a, 0xb800ull + salt++, &p);
            // w and b aligned as row 0's body, later rows (ld = cols) not always: staged blocks
            // stage w and b for some rows and read them from memory for others in one launch.
            NormCase m{rms, 3, c, (long long)c, (long long)c + 2, 3, 1, 3, 3, false, true, !rms, true, 1e-5f, salt % 4};
            bad += norm_case<T>("paths (forced plan, w and b as row 0)", m, 0xba00ull + salt++, &p);
        }
        NormCase few{false, 3, c, (long long)c, (long long)c, 0, 0, 0, 0, false, true, true, true, 1e-5f, 2};
        bad += norm_case<T>("paths (3 rows)", few, 0xbc00ull + salt++);
    }
    if (!wk_quick()) {
        for (int c : {1000, 4097, 40009, 100003}) {
            const long long rows = row_many_rows(d, c);
            NormCase many{c % 2 == 0, rows, c, (long long)c + 5, (long long)c, 2, 0, 3, 1, false, true, true, true, 1e-5f, 0};
            bad += norm_case<T>("paths (many rows)", many, 0xbe00ull + salt++);
        }
    }
    return bad;
}

Test(device_norm, paths) {
    WK_REQUIRE_GPU();
    int seen[4] = {0, 0, 0, 0};
    row_expect_paths("rowLayerNorm / rowRmsNorm", norm_paths<float>(seen) + norm_paths<__half>(seen) + norm_paths<__nv_bfloat16>(seen),
                     seen);
}

/// R25's rows (fp32, 129..192 whole vectors a row: a warp a row of 6 vectors a lane) and their
/// neighbours on R1, among them llm.c's 768: odd row counts (every data pattern, NaN and +-inf
/// included, as row r takes pattern mode + r), with and without w, b and the statistics, aligned
/// rows and parameters (the instantiation without head/tail slots), rows and parameters off 16
/// bytes, odd strides, in place; then many rows at 768 with all the outputs. The same at the warp
/// path's widest rows (fp32 32 lanes x 8 vectors, 16-bit 32 x 4: 1000..1024 columns; 1025 just past
/// them; aligned 768 and 1024 take the full-row kernels, K5), and many rows at 1024.
template <typename T> static int norm_model_width(void) {
    int bad = 0, salt = 0;
    for (int c : {515, 516, 517, 640, 700, 767, 768, 769, 771, 772, 1000, 1023, 1024, 1025}) {
        for (int k = 0; k < 8; ++k) {
            const bool rms = k % 4 == 3, useW = k % 4 != 1, useB = k % 4 != 2 && !rms, stats = k % 2 == 0;
            NormCase a{rms, 13, c, (long long)c, (long long)c, 0, 0, 0, 0, false, useW, useB, stats, 1e-5f, k};
            bad += norm_case<T>("model width (aligned)", a, 0xe000ull + salt++);
            NormCase m = a; // 25 rows, odd strides, every pointer off 16 bytes in turn, one in place
            m.rows = 25;
            m.ldx = c + 3;
            m.ldy = c + 1;
            m.offX = 1 + k % 3;
            m.offY = 2 + k % 5;
            m.offW = k % 4;
            m.offB = 3 - k % 4;
            m.inplace = k == 4;
            m.mode = k + 4;
            bad += norm_case<T>("model width (off 16 bytes)", m, 0xe400ull + salt++);
        }
    }
    NormCase many{false, 8193, 768, 768, 768, 0, 0, 0, 0, false, true, true, true, 1e-5f, 0};
    bad += norm_case<T>("model width (8193 x 768)", many, 0xe800ull + salt++);
    for (long long r : {15, 16, 17, 47}) { // R25's blocks hold 16 aligned rows: one short, whole, one over
        NormCase b{false, r, 768, 768, 768, 0, 0, 0, 0, false, true, true, true, 1e-5f, (int)r};
        bad += norm_case<T>("model width (R25's blocks of 16 rows)", b, 0xec00ull + salt++);
    }
    NormCase manyOff{false, 4099, 768, 771, 768, 1, 0, 2, 3, false, true, true, true, 1e-5f, 3};
    bad += norm_case<T>("model width (4099 x 768, off 16 bytes)", manyOff, 0xe900ull + salt++);
    NormCase wide{true, 4097, 1024, 1024, 1024, 0, 0, 0, 0, false, true, false, true, 1e-5f, 1};
    bad += norm_case<T>("model width (4097 x 1024, RMSNorm)", wide, 0xea00ull + salt++);
    NormCase wideLn{false, 2051, 1024, 1024, 1029, 0, 3, 0, 0, false, true, true, true, 1e-5f, 2};
    bad += norm_case<T>("model width (2051 x 1024, y off 16 bytes)", wideLn, 0xeb00ull + salt++);
    return bad;
}

/// The plan llm.c's shape takes (host only, runs without a GPU): R25's warp of 6 vectors a lane
/// in blocks of kRowWarpFitThreads (16 rows a block) for fp32 LayerNorm with w, b and the statistics.
Test(device_norm, model_width_plan) {
    using warpkit::detail::NormParams;
    float* f = reinterpret_cast<float*>(4096);
    const NormParams<float> lnf{f, f + 1024, f + 2048, f + 3072, f + 4096, f + 5120, 768, 768, 1e-5f, false};
    const RowPlan p = warpkit::detail::rowPlanFor(warpkit::detail::rowOpQuery(lnf, 8192, 768, 132, true, false));
    cr_expect(p.path == warpkit::detail::RowWarp && p.width == 32 && p.chunks == 6 &&
                  p.threads == warpkit::detail::kRowWarpFitThreads,
              "fp32 LayerNorm 8192 x 768 plans as a warp of 6 vectors a lane in blocks of %d (R25), got path %d width "
              "%d chunks %d threads %d",
              warpkit::detail::kRowWarpFitThreads, (int)p.path, p.width, p.chunks, p.threads);
}

Test(device_norm, model_width) {
    WK_REQUIRE_GPU();
    const int bad = norm_model_width<float>() + norm_model_width<__nv_bfloat16>();
    cr_expect(bad == 0, "rowLayerNorm / rowRmsNorm at model widths: %d mismatches", bad);
}

/// The widths whose aligned rows fill every slot of their plan (the full-row kernels, K5) on an
/// H100-sized device (132 SMs, clusters): fp32 16 lanes x 2 vectors (2 rows a segment), 32 lanes x
/// 2, 4, 8, R25's 32 x 6 (768), one block of 128 x 4 and 256 x 4, clusters of 2 and 4 blocks of
/// 256 x 4 (few rows); 16-bit 16 lanes x 2 (two segments a warp), 32 lanes x 2 and 4, one block of
/// 128 x 2 and 128 x 4, a cluster of 2 blocks of 256 x 2.
static const int kFullF32[] = {128, 256, 512, 768, 1024, 2048, 4096, 8192, 16384};
static const int kFull16[] = {256, 512, 1024, 2048, 4096, 8192};
static const int kNFullF32 = sizeof(kFullF32) / sizeof(kFullF32[0]), kNFull16 = sizeof(kFull16) / sizeof(kFull16[0]);

/// Whether p's call of rows x cols takes a full-row kernel on a device of `sms` SMs with clusters.
template <typename T>
static bool norm_runs_full(const warpkit::detail::NormParams<T>& p, long long rows, int cols, int sms) {
    using namespace warpkit::detail;
    const RowPlan pl = rowPlanFor(rowOpQuery(p, rows, cols, sms, true, false));
    return rowRunsFull(pl, p, cols, rowAligned(p, cols));
}

/// Which calls take the full-row kernels (host only): the widths above with few and many rows (the
/// cluster widths with few), LayerNorm and RMSNorm, with and without w and b, ld a vector past cols;
/// not a vector short or over (a narrower body in the same shape, or another shape), an element
/// over, nor x, y, ld, w or b off 16 bytes.
template <typename T> static int norm_full_plans(const int* widths, int n) {
    using warpkit::detail::NormParams;
    constexpr int V = warpkit::vectorElems<T>();
    T* f = reinterpret_cast<T*>(1 << 20); // fake, aligned addresses: nothing is launched
    T *x = f, *y = f + (1 << 16), *w = f + (2 << 16), *b = f + (3 << 16);
    float* s = reinterpret_cast<float*>(1 << 24);
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        const int c = widths[i];
        const long long rows = c >= 8192 ? 3 : 16384;
        auto full = [&](const T* xp, T* yp, const T* wp, const T* bp, long long ld, int cols, bool rms) {
            const NormParams<T> p{xp, yp, wp, rms ? nullptr : bp, rms ? nullptr : s, s + 8, ld, ld, 1e-5f, rms};
            return norm_runs_full(p, rows, cols, 132);
        };
        const bool yes[] = {full(x, y, w, b, c, c, false),
                            full(x, y, w, b, c, c, true),
                            full(x, y, nullptr, nullptr, c, c, false),
                            full(x, y, w, nullptr, c, c, false),
                            full(x, x, w, b, c + V, c, false),
                            c >= 8192 ||
                                norm_runs_full(NormParams<T>{x, y, w, b, s, s, c, c, 1e-5f, false}, 3, c, 132)};
        const bool no[] = {full(x, y, w, b, c, c - V, false),     full(x, y, w, b, c + V, c + V, false),
                           full(x, y, w, b, c + 1, c + 1, false), full(x + 1, y, w, b, c, c, false),
                           full(x, y + 1, w, b, c, c, false),     full(x, y, w, b, c + 1, c, false),
                           full(x, y, w + 1, b, c, c, false),     full(x, y, w, b + 1, c, c, false)};
        for (int k = 0; k < (int)(sizeof(yes) / sizeof(yes[0])); ++k)
            if (!yes[k])
                cr_log_error("%s cols %d: case %d does not take the full-row kernel", wk_type_name<T>(), c, k), ++bad;
        for (int k = 0; k < (int)(sizeof(no) / sizeof(no[0])); ++k)
            if (no[k]) cr_log_error("%s cols %d: case %d takes the full-row kernel", wk_type_name<T>(), c, k), ++bad;
    }
    return bad;
}

Test(device_norm, full_rows_plan) {
    const int bad = norm_full_plans<float>(kFullF32, kNFullF32) + norm_full_plans<__half>(kFull16, kNFull16) +
                    norm_full_plans<__nv_bfloat16>(kFull16, kNFull16);
    cr_expect(bad == 0, "full-row kernel selection: %d wrong", bad);
    // fp32 blocks of 32 values a thread (R8: 3 rows of 262144, 16 blocks of 512 x 8 vectors) fill
    // their slots but have no full-row kernel (rowBlockFullShape).
    float* f = reinterpret_cast<float*>(1 << 20);
    const warpkit::detail::NormParams<float> p{f,       f + (1 << 20), f + (2 << 20), f + (3 << 20), nullptr,
                                               nullptr, 262144,        262144,        1e-5f,         false};
    const RowPlan pl = warpkit::detail::rowPlanFor(warpkit::detail::rowOpQuery(p, 3, 262144, 132, true, false));
    cr_expect(pl.path == warpkit::detail::RowBlock && pl.chunks == 8 && warpkit::detail::rowPlanFills(pl, 4, 262144),
              "3 x 262144 fp32 plans as full clusters of 512 x 8 vectors (R8)");
    cr_expect(!norm_runs_full(p, 3, 262144, 132), "fp32 blocks of 8 vectors a thread take no full-row kernel");
}

/// The full-row kernels against the references, at their boundary: the full widths and a vector
/// short and over, an element short and over; rows that leave R25's blocks of 16 and the 2-row
/// segments of fp32 32 x 2 part-filled; every data pattern (NaN, +-inf rows among them: row r
/// takes pattern mode + r), with and without w, b and the statistics, in place, ld a vector past
/// cols (still full), and x, y, ld, w or b off 16 bytes (the general kernels).
template <typename T> static int norm_full_rows(const int* widths, int n) {
    constexpr int V = warpkit::vectorElems<T>();
    int bad = 0, salt = 0;
    row_full_shapes(widths, n, V, [&](int c, int d, long long rows) {
        for (int k = 0; k < 8; ++k) {
            if (d != 0 && k % 2 == 1) continue;
            const bool rms = k % 4 == 3, useW = k % 4 != 1, useB = k % 4 != 2 && !rms, stats = k % 2 == 0;
            NormCase a{rms, rows,   c,    (long long)c, (long long)c, 0,     0,       0,
                       0,   k == 4, useW, useB,         stats,        1e-5f, k + salt};
            if (k == 6) a.ldx = a.ldy = c + V;
            bad += norm_case<T>("full rows", a, 0xf000ull + salt++);
        }
        if (d != 0) return;
        for (int k = 0; k < 5; ++k) { // one pointer or ld off 16 bytes: the general kernels
            NormCase m{k == 4, rows, c, (long long)c, (long long)c, 0, 0, 0, 0, false, true, true, true, 1e-5f, 4 + k};
            if (k == 0) m.offX = 1;
            if (k == 1) m.offY = 2;
            if (k == 2) m.ldx = m.ldy = c + 1;
            if (k == 3) m.offW = 1;
            if (k == 4) m.offB = 3; // RMSNorm reads no b: full again
            bad += norm_case<T>("full rows (general kernel beside)", m, 0xf400ull + salt++);
        }
    });
    return bad;
}

/// The full-row kernels give the general aligned kernels' bits: the same rows (every data pattern)
/// through both instantiations of the dispatcher's plan, y, mean and rstd compared bit for bit
/// (NaN as NaN).
template <typename T> static int norm_full_same(const int* widths, int n) {
    using namespace warpkit::detail;
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        const int c = widths[i];
        const long long rows = c >= 8192 ? 3 : 45;
        const size_t nx = (size_t)rows * c;
        wk_rng r = wk_rng_make(0xf800ull + c);
        std::vector<T> hx(nx), hw(c), hb(c);
        for (long long q = 0; q < rows; ++q) norm_fill<T>(&r, &hx[q * c], c, (int)q);
        for (T& v : hw) v = wk_from_double<T>(wk_uniform(&r, -2.0, 2.0));
        for (T& v : hb) v = wk_from_double<T>(wk_uniform(&r, -2.0, 2.0));
        T* dx = wk_alloc<T>(nx);
        T* dw = wk_alloc<T>(c);
        T* db = wk_alloc<T>(c);
        T* dy[2] = {wk_alloc<T>(nx), wk_alloc<T>(nx)};
        float* ds[2] = {wk_alloc<float>(2 * rows), wk_alloc<float>(2 * rows)};
        wk_upload(dx, hx.data(), nx);
        wk_upload(dw, hw.data(), c);
        wk_upload(db, hb.data(), c);
        for (int rms = 0; rms < 2; ++rms) {
            std::vector<T> hy[2];
            std::vector<float> hs[2];
            for (int full = 0; full < 2; ++full) {
                wk_poison(dy[full], nx);
                wk_poison(ds[full], 2 * rows);
                const NormParams<T> p{
                    dx, dy[full], dw,      rms ? nullptr : db, rms ? nullptr : ds[full], ds[full] + rows, c,
                    c,  1e-5f,    rms == 1};
                if (!row_run_full(p, rows, c, full == 1)) continue;
                hy[full].resize(nx);
                hs[full].resize(2 * rows);
                wk_download(hy[full].data(), dy[full], nx);
                wk_download(hs[full].data(), ds[full], 2 * rows);
            }
            if (hy[0].empty() || hy[1].empty()) continue;
            auto same = [](double a, double b) { return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0; };
            int diff = 0;
            for (size_t j = 0; j < nx; ++j) diff += !same(wk_to_double(hy[0][j]), wk_to_double(hy[1][j]));
            for (long long j = 0; j < 2 * rows; ++j) diff += !same(hs[0][j], hs[1][j]);
            if (diff) {
                cr_log_error("%s %s cols %d: full and general kernels differ in %d values", wk_type_name<T>(),
                             rms ? "rms" : "layer", c, diff);
                bad += diff;
            }
        }
        for (void* q : {(void*)dx, (void*)dw, (void*)db, (void*)dy[0], (void*)dy[1], (void*)ds[0], (void*)ds[1]})
            cudaFree(q);
    }
    return bad;
}

Test(device_norm, full_rows) {
    WK_REQUIRE_GPU();
    const int bad = norm_full_rows<float>(kFullF32, kNFullF32) + norm_full_rows<__half>(kFull16, kNFull16) +
                    norm_full_rows<__nv_bfloat16>(kFull16, kNFull16) + norm_full_same<float>(kFullF32, kNFullF32) +
                    norm_full_same<__half>(kFull16, kNFull16) + norm_full_same<__nv_bfloat16>(kFull16, kNFull16);
    cr_expect(bad == 0, "rowLayerNorm / rowRmsNorm full rows: %d mismatches", bad);
}

/// Every data pattern at a column count of each path, LayerNorm and RMSNorm.
template <typename T> static int norm_specials(void) {
    int bad = 0, salt = 0;
    for (int c : {7, 200, 2047, 5000, 20000, 70001, 262144, 300007}) {
        for (int rms = 0; rms < 2; ++rms) {
            for (int mode = 0; mode < kModes; ++mode) {
                if (wk_thin(salt, 4)) { ++salt; continue; }
                NormCase k{rms == 1, 2, c, (long long)c, (long long)c, 0, 0, 0, 0, false, mode % 2 == 0, true, true, 1e-5f, mode};
                bad += norm_case<T>("specials", k, 0xc000ull + salt++);
            }
        }
    }
    return bad;
}

Test(device_norm, specials) {
    WK_REQUIRE_GPU();
    const int bad = norm_specials<float>() + norm_specials<__half>() + norm_specials<__nv_bfloat16>();
    cr_expect(bad == 0, "rowLayerNorm / rowRmsNorm special rows: %d mismatches", bad);
}

/// R30: fp32 register clusters of 512 x 8 vectors (R8 few rows, R15 many: 131073..262147 columns)
/// copy w of each thread's first 6 pieces to shared memory when b is null and w is aligned with
/// the rows' bodies (RMSNorm, LayerNorm with w alone; LayerNorm with w and b reads memory).
/// Against the references: full and partial clusters (262144, 200000 and 131076 columns: threads
/// with 8, fewer than 6 and no pieces), every data pattern over the rows, LayerNorm with w and b,
/// w alone, b alone, neither, RMSNorm with and without w, the statistics or not, in place, ld past
/// cols, w or b off 16 bytes (the copies declined, w read from memory), the dispatcher's plan (5
/// rows) and R15's forced plan (9 rows). Then bit for bit (RMSNorm, LayerNorm with w alone): the
/// same w at an aligned address (copied) and off 16 bytes (read from memory) give the same outputs.
static int norm_block_columns_case(const NormCase& k, uint64_t seed, bool forced) {
    const RowPlan p = warpkit::detail::rowRegisterPlan(4, k.cols);
    return norm_case<float>(forced ? "block columns (R15 plan)" : "block columns", k, seed, forced ? &p : nullptr);
}

static int norm_block_columns_same(int cols, bool rms) {
    const long long rows = 3;
    wk_rng r = wk_rng_make(0xd500ull + (unsigned)cols + (rms ? 1 : 0));
    const size_t n = (size_t)rows * cols;
    std::vector<float> hx(n), hw(cols + 4), y1(n), y2(n);
    for (long long q = 0; q < rows; ++q) norm_fill<float>(&r, &hx[q * cols], cols, (int)q * 5);
    for (float& v : hw) v = (float)wk_uniform(&r, -2.0, 2.0);
    float* dx = wk_alloc<float>(n);
    float* dy = wk_alloc<float>(n);
    float* dw = wk_alloc<float>(2 * (cols + 4));
    wk_upload(dx, hx.data(), n);
    // w at an aligned address, then the same values at one element past the second copy's start.
    wk_upload(dw, hw.data(), cols);
    float* wOff = dw + (cols + 4) + 1;
    wk_upload(wOff, hw.data(), cols);
    int bad = 0;
    for (int pass = 0; pass < 2; ++pass) {
        const float* w = pass == 0 ? dw : wOff;
        wk_poison(dy, n);
        const cudaError_t e = rms ? warpkit::rowRmsNorm(dx, dy, rows, cols, w, 1e-5f)
                                  : warpkit::rowLayerNorm(dx, dy, rows, cols, w, nullptr, 1e-5f);
        if (e != cudaSuccess) cr_log_error("block columns same: %s", cudaGetErrorString(e)), ++bad;
        WK_CUDA(cudaDeviceSynchronize());
        wk_download(pass == 0 ? y1.data() : y2.data(), dy, n);
    }
    for (size_t i = 0; i < n && bad < 3; ++i)
        if (memcmp(&y1[i], &y2[i], sizeof(float)) != 0)
            cr_log_error("block columns same %s %d: element %zu: %.9g (aligned w) vs %.9g (off 16 bytes)",
                         rms ? "rms" : "layer", cols, i, y1[i], y2[i]),
                ++bad;
    WK_CUDA(cudaFree(dx));
    WK_CUDA(cudaFree(dy));
    WK_CUDA(cudaFree(dw));
    return bad;
}

Test(device_norm, block_columns) {
    WK_REQUIRE_GPU();
    int bad = 0, salt = 0;
    for (int c : {262144, 200000, 131076}) {
        const long long ld = c + 8;
        for (int v = 0; v < 10; ++v) {
            if (wk_thin(salt, 3)) {
                ++salt;
                continue;
            }
            const bool rms = v >= 7, forced = v % 2 == 1;
            const bool useW = v != 3 && v != 9, useB = v != 2 && v != 3;
            const int offW = v == 4 ? 1 : 0, offB = v == 5 ? 3 : 0;
            const bool inplace = v == 6;
            NormCase k{
                rms,  forced ? 9 : 5, c,          v == 1 ? ld : c, v == 1 ? ld + 4 : c, 0, 0, offW, offB, inplace,
                useW, useB,           v % 3 != 2, 1e-5f,           salt % kModes};
            bad += norm_block_columns_case(k, 0xd000ull + salt++, forced);
        }
    }
    for (int c : {262144, 200000})
        for (int rms = 0; rms < 2; ++rms) bad += norm_block_columns_same(c, rms == 1);
    cr_expect(bad == 0, "rowLayerNorm / rowRmsNorm fp32 block clusters with w in shared memory (R30): %d mismatches",
              bad);
}

/// A negative eps is computed with, as torch does: rows whose variance passes |eps| against the
/// reference; where var + eps < 0 (a constant row) a NaN rstd and NaN outputs, the mean still exact.
template <typename T> static int norm_negative_eps(void) {
    int bad = 0, salt = 0;
    for (int c : {7, 768, 5000}) {
        for (int rms = 0; rms < 2; ++rms) {
            NormCase k{rms == 1, 3, c, (long long)c, (long long)c, 0, 0, 0, 0, false, true, true, true, -1e-3f, 0};
            bad += norm_case<T>("negative eps", k, 0xd000ull + salt++);
            NormCase z{rms == 1, 1, c, (long long)c, (long long)c, 0, 0, 0, 0, false, true, true, true, -1e-3f, 10};
            if (rms == 0) bad += norm_case<T>("negative eps, constant row", z, 0xd100ull + salt++);
        }
    }
    return bad;
}

Test(device_norm, negative_eps) {
    WK_REQUIRE_GPU();
    const int bad = norm_negative_eps<float>() + norm_negative_eps<__half>() + norm_negative_eps<__nv_bfloat16>();
    cr_expect(bad == 0, "rowLayerNorm / rowRmsNorm with eps < 0: %d mismatches", bad);
}

Test(device_norm, bad_args) {
    WK_REQUIRE_GPU();
    const int n = 64;
    float* dx = wk_alloc<float>(n);
    float* dy = wk_alloc<float>(n);
    float* ds = wk_alloc<float>(n);
    std::vector<float> hx(n, 1.0f), hy(n), hs(n), poison(n);
    wk_upload(dx, hx.data(), n);
    wk_poison(dy, n);
    wk_poison(ds, n);
    wk_download(poison.data(), dy, n);
    struct Bad { long long rows; int cols; long long ldx, ldy; float eps; bool nullx, nully, same; const char* what; };
    const Bad bads[] = {
        {-1, 8, 8, 8, 1e-5f, false, false, false, "rows < 0"},
        {2, -3, 8, 8, 1e-5f, false, false, false, "cols < 0"},
        {2, 8, 7, 8, 1e-5f, false, false, false, "ldx < cols"},
        {2, 8, 8, 7, 1e-5f, false, false, false, "ldy < cols"},
        {2, 8, 8, 8, 1e-5f, true, false, false, "x null"},
        {2, 8, 8, 8, 1e-5f, false, true, false, "y null"},
        {2, 8, 8, 16, 1e-5f, false, false, true, "in place with ldx != ldy"},
        {2, 8, 8, 8, INFINITY, false, false, false, "eps inf"},
        {2, 8, 8, 8, NAN, false, false, false, "eps NaN"},
    };
    for (const Bad& b : bads) {
        const float* x = b.nullx ? nullptr : dx;
        float* y = b.nully ? nullptr : b.same ? dx : dy;
        const cudaError_t e1 = warpkit::rowLayerNorm(x, y, b.rows, b.cols, dx, dx, b.eps, ds, ds, b.ldx, b.ldy);
        const cudaError_t e2 = warpkit::rowRmsNorm(x, y, b.rows, b.cols, dx, b.eps, ds, b.ldx, b.ldy);
        cr_expect(e1 == cudaErrorInvalidValue && e2 == cudaErrorInvalidValue,
                  "rowLayerNorm / rowRmsNorm with %s: got %s / %s, want cudaErrorInvalidValue", b.what, cudaGetErrorString(e1),
                  cudaGetErrorString(e2));
    }
    cr_expect(warpkit::rowLayerNorm<float>(nullptr, nullptr, 0, 5, nullptr, nullptr, 1e-5f) == cudaSuccess, "rows 0 with null pointers: no-op");
    cr_expect(warpkit::rowRmsNorm<float>(nullptr, nullptr, 0, 5, nullptr, 1e-5f) == cudaSuccess, "rows 0 with null pointers: no-op");
    // cols = 0 (torch's empty normalized dimension): a no-op that writes nothing, as rows = 0.
    for (int k = 0; k < 2; ++k) {
        const float* x = k ? dx : nullptr;
        float* y = k ? dy : nullptr;
        cr_expect(warpkit::rowLayerNorm(x, y, 2, 0, dx, dx, 1e-5f, ds, ds, 8, 8) == cudaSuccess,
                  "rowLayerNorm cols 0: no-op");
        cr_expect(warpkit::rowRmsNorm(x, y, 2, 0, dx, 1e-5f, ds, 8, 8) == cudaSuccess, "rowRmsNorm cols 0: no-op");
        cr_expect(warpkit::rowLayerNorm(x, y, 0, 0, dx, dx, 1e-5f, ds, ds, 0, 0) == cudaSuccess,
                  "rows 0, cols 0: no-op");
    }
    WK_LAUNCHED();
    wk_download(hy.data(), dy, n);
    wk_download(hs.data(), ds, n);
    std::vector<float> x2(n);
    wk_download(x2.data(), dx, n);
    cr_expect(memcmp(hy.data(), poison.data(), n * sizeof(float)) == 0, "a rejected call wrote y");
    cr_expect(memcmp(hs.data(), poison.data(), n * sizeof(float)) == 0, "a rejected call wrote mean or rstd");
    cr_expect(memcmp(x2.data(), hx.data(), n * sizeof(float)) == 0, "a rejected call wrote x");
    cudaFree(dx);
    cudaFree(dy);
    cudaFree(ds);
}

/// Two host threads, each with its own stream, each running a series of shapes at once.
Test(device_norm, concurrent) {
    WK_REQUIRE_GPU();
    static const int cols[] = {33, 768, 4097, 16385, 50257, 151936};
    const int bad = wk_two_threads(12, false, [&](int w, int i, cudaStream_t st) {
        const int c = cols[(i + w) % 6];
        NormCase k{(i + w) % 3 == 0, c > 20000 ? 4 : 300, c, (long long)c + w, (long long)c, w, 2 * w, w, 0, false, true, true, true,
                   1e-5f, i % 4};
        return (i + w) % 2 ? norm_case<float>("concurrent", k, 0xd000ull + 100 * w + i, nullptr, st)
                           : norm_case<__nv_bfloat16>("concurrent", k, 0xd000ull + 100 * w + i, nullptr, st);
    });
    cr_expect(bad == 0, "rowLayerNorm / rowRmsNorm from two threads / streams at once: %d mismatches", bad);
}
