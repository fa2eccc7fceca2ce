// Tests of include/warpkit/device/cross_entropy.cuh (rowCrossEntropy), through the public call
// except where a plan is forced (every kernel of detail/row_kernels.cuh and row_staged.cuh on small inputs, under the
// sanitizers too).
//   fuzz:        seeded random shapes (rows 0, 1, many; cols 1..300000 and path edges +-1), strides
//                and pointer offsets of 0..7 elements, loss only, gradient only, both, in place,
//                ignored targets (ignore index -100 or a real class), label smoothing 0..1, every
//                type; outputs poisoned, everything outside the rows checked untouched.
//   paths:       cols around every path boundary +-1, the dispatcher's plans for few and many rows
//                and forced warp, block, cluster and streamed plans on 3 rows; each gradient also
//                computed in place over the logits, bitwise equal to the separate buffer's.
//   specials:    NaN, +inf, all -inf and partly -inf rows, -inf target logits, out-of-range targets,
//                smoothing 0 and 1, on every path.
//   gradient:    the gradient against central differences of the double-precision reference loss,
//                on small rows.
//   bad_args:    every bad argument returns cudaErrorInvalidValue and writes nothing.
//   concurrent:  two host threads on two streams at once.
#include "row_common.cuh"
#include "../softmax_common.cuh" // fill_row (random rows at four scales, NaN, +inf, -inf patterns), floor_of
#include <warpkit/device/cross_entropy.cuh>
#include <vector>

using warpkit::detail::RowPlan;

struct CeCase {
    long long rows;
    int cols;
    long long ldx, ldg;
    int offX, offG;
    bool inplace, useLoss, useGrad;
    long long ignore;
    int ignoreEvery; // rows q with q % ignoreEvery == 1 get the ignore index (0: none)
    bool outOfRange; // rows q with q % 5 == 3 get a target outside [0, cols)
    float smoothing, scale;
    int mode; // fill_row pattern of row 0 (row r uses mode + r)
};

/// Double-precision loss and gradient of one row (PyTorch's rules; see the header's comment).
static void ce_ref(const double* x, int n, long long t, long long ignore, double e, double scale, double* loss, double* g) {
    if (t == ignore || t < 0 || t >= n) {
        const double v = t == ignore ? 0.0 : NAN;
        *loss = v;
        if (g) for (int j = 0; j < n; ++j) g[j] = v;
        return;
    }
    bool nan = false;
    double m = -INFINITY, sumx = 0;
    for (int j = 0; j < n; ++j) {
        nan = nan || isnan(x[j]);
        if (!isnan(x[j])) m = fmax(m, x[j]);
        sumx += x[j];
    }
    double s = 0;
    for (int j = 0; j < n; ++j) s += exp(x[j] - m); // m = +inf or -inf: NaN, as PyTorch
    const double lse = nan ? NAN : m + log(s);
    const double nll = lse - x[t];
    *loss = e > 0 ? (1 - e) * nll + e * (lse - sumx / n) : nll;
    if (g) for (int j = 0; j < n; ++j) g[j] = scale * (exp(x[j] - lse) - e / n - (j == t ? 1 - e : 0.0));
}

/// The target of row q of case c (random classes, ignored and out-of-range rows as the case says).
static long long ce_target(wk_rng* r, const CeCase& c, long long q) {
    if (c.ignoreEvery > 0 && q % c.ignoreEvery == 1) return c.ignore;
    if (c.outOfRange && q % 5 == 3) return wk_int(r, 0, 1) ? (long long)c.cols + wk_int(r, 0, 3) : -1 - wk_int(r, 0, 3);
    return wk_int(r, 0, c.cols - 1); // may hit a real-class ignore index: the reference agrees
}

/// Runs one case (the dispatcher's plan, or `plan`) and checks it. `gradOut` (optional) gets the
/// rows of the gradient, row after row. Returns mismatches.
template <typename T>
static int ce_case(const char* what, const CeCase& c, uint64_t seed, const RowPlan* plan = nullptr, cudaStream_t st = 0,
                   std::vector<T>* gradOut = nullptr) {
    wk_rng r = wk_rng_make(seed);
    const size_t span = (size_t)(c.rows > 0 ? c.rows - 1 : 0);
    const size_t nx = (size_t)c.offX + span * c.ldx + c.cols + 8;
    const long long ldg = c.inplace ? c.ldx : c.ldg;
    const size_t ng = c.inplace ? nx : (size_t)c.offG + span * c.ldg + c.cols + 8;
    std::vector<T> hx(nx), hg(ng), before(ng);
    std::vector<long long> ht(c.rows > 0 ? c.rows : 1);
    for (size_t i = 0; i < nx; ++i) hx[i] = wk_from_double<T>(wk_uniform(&r, -9.0, 9.0));
    for (long long q = 0; q < c.rows; ++q) {
        fill_row<T>(&r, &hx[c.offX + q * c.ldx], c.cols, c.mode + (int)q);
        ht[q] = ce_target(&r, c, q);
    }
    T* dx = wk_alloc<T>(nx);
    long long* dt = wk_alloc<long long>(ht.size());
    wk_upload(dx, hx.data(), nx);
    wk_upload(dt, ht.data(), ht.size());
    T* dg = dx;
    if (c.inplace) {
        before = hx;
    } else {
        dg = wk_alloc<T>(ng);
        wk_poison(dg, ng);
        wk_download(before.data(), dg, ng);
    }
    const size_t nl = (size_t)c.rows + 2; // loss at [1, rows], guards around
    float* dl = wk_alloc<float>(nl);
    wk_poison(dl, nl);
    T* gp = c.useGrad ? dg + (c.inplace ? c.offX : c.offG) : nullptr;
    float* lp = c.useLoss ? dl + 1 : nullptr;
    cudaError_t e;
    if (plan) {
        int dev = 0;
        warpkit::detail::DeviceProps d;
        WK_CUDA(warpkit::detail::currentDevice(&dev, &d));
        const warpkit::detail::CrossEntropyParams<T> p{dx + c.offX, dt, lp, gp, c.ldx, ldg, c.ignore, c.smoothing, c.scale};
        e = warpkit::detail::rowOpRun(*plan, p, c.rows, c.cols, dev, d, st);
    } else {
        e = warpkit::rowCrossEntropy(dx + c.offX, dt, lp, gp, c.rows, c.cols, c.ignore, c.smoothing, c.scale, c.ldx, ldg, st);
    }
    int bad = 0;
    if (e != cudaSuccess) {
        cr_log_error("%s %s: rowCrossEntropy(%lld x %d) returned %s", what, wk_type_name<T>(), c.rows, c.cols, cudaGetErrorString(e));
        bad = 1;
    }
    WK_CUDA(cudaStreamSynchronize(st));
    WK_CUDA(cudaGetLastError());
    std::vector<float> hl(nl);
    wk_download(hg.data(), dg, ng);
    wk_download(hl.data(), dl, nl);
    const size_t g0 = c.inplace ? (size_t)c.offX : (size_t)c.offG;
    std::vector<double> xd(c.cols), gd(c.cols);
    const double tolOut = sizeof(T) == 4 ? 0.0 : wk_eps<T>();
    for (long long q = 0; q < c.rows && bad < 3; ++q) {
        double xmax = 0;
        for (int i = 0; i < c.cols; ++i) {
            xd[i] = wk_to_double(hx[c.offX + q * c.ldx + i]);
            if (isfinite(xd[i])) xmax = fmax(xmax, fabs(xd[i]));
        }
        double loss;
        ce_ref(xd.data(), c.cols, ht[q], c.ignore, c.smoothing, c.scale, &loss, gd.data());
        if (lp && !wk_close(hl[1 + q], loss, 1e-5 * (1.0 + 2.0 * xmax) / (1.0 + fabs(loss))))
            cr_log_error("%s %s: %lld x %d row %lld (target %lld, smoothing %g): loss %.9g want %.9g", what, wk_type_name<T>(), c.rows,
                         c.cols, q, ht[q], c.smoothing, hl[1 + q], loss), ++bad;
        if (!gp) continue;
        const double hot = 1.0 - c.smoothing, smooth = c.smoothing / c.cols;
        for (int i = 0; i < c.cols && bad < 3; ++i) {
            const double got = wk_to_double(hg[g0 + q * ldg + i]), want = gd[i];
            const double p = want / c.scale + smooth + (i == ht[q] ? hot : 0.0); // the probability
            const double bound = fabs(c.scale) * 1e-5 * (fabs(p) + smooth + (i == ht[q] ? hot : 0.0)) + tolOut * fabs(want) + floor_of<T>();
            const bool ok = isnan(want) ? isnan(got) : isfinite(got) && fabs(got - want) <= bound;
            if (!ok)
                cr_log_error("%s %s: %lld x %d (ld %lld/%lld) row %lld col %d (target %lld): grad %.9g want %.9g (x %.9g)", what,
                             wk_type_name<T>(), c.rows, c.cols, c.ldx, ldg, q, i, ht[q], got, want, xd[i]), ++bad;
        }
        if (gradOut)
            for (int i = 0; i < c.cols; ++i) gradOut->push_back(hg[g0 + q * ldg + i]);
    }
    // Nothing outside the gradient's rows written (nothing at all without a gradient), nor the
    // loss's guards (nor the loss without a loss pointer).
    int touched = 0;
    for (size_t i = 0; i < ng && touched < 3; ++i) {
        const bool inRow = gp && i >= g0 && (long long)((i - g0) % ldg) < c.cols && (long long)((i - g0) / ldg) < c.rows;
        if (!inRow && memcmp(&hg[i], &before[i], sizeof(T)) != 0 && touched++ == 0)
            cr_log_error("%s %s: %lld x %d: gradient element %zu outside the rows was written", what, wk_type_name<T>(), c.rows, c.cols, i);
    }
    std::vector<float> poison(nl);
    memset(poison.data(), 0xA5, nl * sizeof(float));
    for (size_t i = 0; i < nl; ++i) {
        const bool written = lp && i >= 1 && (long long)i <= c.rows;
        if (!written && memcmp(&hl[i], &poison[i], 4) != 0 && touched++ < 3) cr_log_error("%s: loss[%zu] written", what, i);
    }
    cudaFree(dx);
    cudaFree(dt);
    if (!c.inplace) cudaFree(dg);
    cudaFree(dl);
    return bad + touched;
}

template <typename T> static int ce_fuzz_one(wk_rng* r, long long budget, int iter) {
    CeCase c;
    row_draw_shape(r, budget, &c.rows, &c.cols);
    c.ldx = row_draw_ld(r, c.cols);
    c.ldg = row_draw_ld(r, c.cols);
    c.offX = (int)wk_int(r, 0, 7);
    c.offG = (int)wk_int(r, 0, 7);
    const int outputs = (int)wk_int(r, 0, 3); // loss only, gradient only, both, both in place
    c.useLoss = outputs != 1;
    c.useGrad = outputs != 0;
    c.inplace = outputs == 3;
    c.ignore = wk_int(r, 0, 1) ? -100 : wk_int(r, 0, c.cols - 1);
    c.ignoreEvery = (int)wk_int(r, 0, 4);
    c.outOfRange = false;
    static const float smoothing[] = {0.0f, 0.0f, 0.1f, 0.5f, 1.0f};
    c.smoothing = smoothing[wk_int(r, 0, 4)];
    c.scale = wk_int(r, 0, 1) ? 1.0f : 1.0f / 300.0f;
    c.mode = (int)wk_int(r, 0, 35);
    return ce_case<T>("fuzz", c, 0xce000ull + iter);
}

Test(device_cross_entropy, fuzz) {
    WK_REQUIRE_GPU();
    row_fuzz("rowCrossEntropy", 7201, wk_quick() ? 40 : 300, ce_fuzz_one<float>, ce_fuzz_one<__half>,
             ce_fuzz_one<__nv_bfloat16>);
}

/// Every plan at the path edges, each with the gradient in a separate buffer and over the logits:
/// the two must be bitwise equal.
template <typename T> static int ce_paths(int* seen) {
    const warpkit::detail::DeviceProps d = row_props();
    std::vector<int> cols = {1, 3, 5, 8, 9, 12, 17, 31, 33, 40, 67, 127, 255, 257, 513, 1023, 1025, 2047, 2049, 4095,
                             4097, 8191, 8193, 16383, 16385, 32000, 32767, 32769, 50257, 65535, 65537, 131071, 131073, 151936, 262143, 262145};
    if (!wk_quick()) cols.push_back(300007);
    int bad = 0, salt = 0;
    for (int c : row_thinned(cols)) {
        for (const RowPlan& p : row_forced_plans<warpkit::detail::CrossEntropyParams<T>>(c, d, 4, 2)) {
            seen[p.path] = 1;
            const float smoothing = salt % 3 == 0 ? 0.1f : 0.0f;
            CeCase k{3, c, (long long)c + 7, (long long)c + 7, 1, 1, false, true, true, -100, 3, false, smoothing, 0.25f, salt % 9};
            std::vector<T> sep, inpl;
            bad += ce_case<T>("paths (forced plan)", k, 0xcf000ull + salt, &p, 0, &sep);
            k.inplace = true;
            bad += ce_case<T>("paths (forced plan, in place)", k, 0xcf000ull + salt, &p, 0, &inpl);
            if (sep.size() != inpl.size() || memcmp(sep.data(), inpl.data(), sep.size() * sizeof(T)) != 0) {
                cr_log_error("paths %s: %d columns, plan path %d: the in-place gradient differs from the separate one", wk_type_name<T>(), c,
                             (int)p.path);
                ++bad;
            }
            ++salt;
            CeCase a{3, c, (long long)(c + 7) / 8 * 8, (long long)(c + 7) / 8 * 8, 0, 0, false, true, true, 0, 2, false, 0.0f, 1.0f, 1};
            bad += ce_case<T>("paths (forced plan, aligned)", a, 0xcf800ull + salt++, &p);
        }
        // The loss alone on the warp-streamed path (R16), unaligned and aligned rows.
        seen[warpkit::detail::RowWarpStream] = 1;
        const RowPlan ws = warpkit::detail::rowWarpStreamPlan();
        const float sm = salt % 2 ? 0.1f : 0.0f;
        CeCase u{5, c, (long long)c + 3, (long long)c, 1 + salt % 7, 0, false, true, false, -100, 3, false, sm, 1.0f, salt % 9};
        bad += ce_case<T>("paths (warp-streamed loss)", u, 0xcf400ull + salt++, &ws);
        CeCase a{3, c, (long long)(c + 7) / 8 * 8, (long long)c, 0, 0, false, true, false, -100, 2, false, 0.0f, 1.0f, 1};
        bad += ce_case<T>("paths (warp-streamed loss, aligned)", a, 0xcf400ull + salt++, &ws);
    }
    if (!wk_quick()) {
        for (int c : {1000, 3001, 4097, 8191, 32000, 50257, 151936}) {
            const long long rows = row_many_rows(d, c);
            CeCase many{rows, c, (long long)c + 5, (long long)c, 2, 0, false, true, true, -100, 7, false, 0.0f, 1.0f / rows, 0};
            bad += ce_case<T>("paths (many rows)", many, 0xcfc00ull + salt++);
            // The loss alone has its own plan (the rules without per-element outputs): many rows of 3001 columns (every
            // type) and 16-bit rows of 4097 warp-streamed, other rows of 4097..8192 staged.
            if (c == 3001 || c == 4097 || c == 8191) {
                many.useGrad = false;
                bad += ce_case<T>("paths (many rows, loss alone)", many, 0xcfc00ull + salt++);
            }
        }
    }
    return bad;
}

Test(device_cross_entropy, paths) {
    WK_REQUIRE_GPU();
    int seen[5] = {0, 0, 0, 0, 0};
    row_expect_paths("rowCrossEntropy", ce_paths<float>(seen) + ce_paths<__half>(seen) + ce_paths<__nv_bfloat16>(seen),
                     seen);
    cr_expect(seen[warpkit::detail::RowWarpStream], "the warp-streamed plan ran");
}

/// NaN, +inf, all -inf, partly -inf rows (fill_row's modes 4..8, so -inf target logits too), with
/// out-of-range and ignored targets, smoothing 0 and 1, at a column count of each path.
template <typename T> static int ce_specials(void) {
    int bad = 0, salt = 0;
    for (int c : {7, 200, 2047, 5000, 20000, 70001, 151936, 300007}) {
        if (wk_quick() && c > 200000) continue;
        for (int mode = 0; mode < 9; ++mode) {
            for (float smoothing : {0.0f, 0.2f, 1.0f}) {
                if (wk_thin(salt, 6)) { ++salt; continue; }
                CeCase k{10, c, (long long)c, (long long)c, 0, 0, false, true, true, -100, 4, true, smoothing, 1.0f, mode};
                bad += ce_case<T>("specials", k, 0xc5000ull + salt);
                // The loss alone (its own plans: R16-R21; the sanitizers skip the dispatcher's
                // run, whose cluster kernels the gradient's run above covers), and on the
                // warp-streamed path (the dispatcher's for many rows).
                k.useGrad = false;
                const RowPlan ws = warpkit::detail::rowWarpStreamPlan();
                if (!wk_quick()) bad += ce_case<T>("specials (loss alone)", k, 0xc5000ull + salt);
                bad += ce_case<T>("specials (loss alone, warp-streamed)", k, 0xc5000ull + salt++, &ws);
            }
        }
    }
    return bad;
}

Test(device_cross_entropy, specials) {
    WK_REQUIRE_GPU();
    const int bad = ce_specials<float>() + ce_specials<__half>() + ce_specials<__nv_bfloat16>();
    cr_expect(bad == 0, "rowCrossEntropy special rows: %d mismatches", bad);
}

/// The gradient against central differences of the double reference loss (its derivative, not its
/// formula), on rows of 1..13 columns, with and without smoothing.
template <typename T> static int ce_gradient(void) {
    int bad = 0, salt = 0;
    for (int c : {1, 2, 3, 5, 8, 13}) {
        for (float smoothing : {0.0f, 0.3f, 1.0f}) {
            wk_rng r = wk_rng_make(0xfd000ull + salt++);
            const int rows = 4;
            std::vector<T> hx((size_t)rows * c), hg(hx.size());
            std::vector<long long> ht(rows);
            for (T& v : hx) v = wk_from_double<T>(wk_uniform(&r, -4.0, 4.0));
            for (long long& t : ht) t = wk_int(&r, 0, c - 1);
            T* dx = wk_alloc<T>(hx.size());
            long long* dt = wk_alloc<long long>(rows);
            wk_upload(dx, hx.data(), hx.size());
            wk_upload(dt, ht.data(), rows);
            WK_CUDA(warpkit::rowCrossEntropy(dx, dt, (float*)nullptr, dx, rows, c, -100, smoothing, 1.0f, c, c)); // in place
            WK_CUDA(cudaDeviceSynchronize());
            wk_download(hg.data(), dx, hg.size());
            for (int q = 0; q < rows; ++q) {
                std::vector<double> x(c);
                for (int j = 0; j < c; ++j) x[j] = wk_to_double(hx[(size_t)q * c + j]);
                for (int j = 0; j < c; ++j) {
                    const double h = 1e-5, x0 = x[j];
                    double lp, lm;
                    x[j] = x0 + h;
                    ce_ref(x.data(), c, ht[q], -100, smoothing, 1.0, &lp, nullptr);
                    x[j] = x0 - h;
                    ce_ref(x.data(), c, ht[q], -100, smoothing, 1.0, &lm, nullptr);
                    x[j] = x0;
                    const double fd = (lp - lm) / (2 * h), got = wk_to_double(hg[(size_t)q * c + j]);
                    const double tol = (sizeof(T) == 4 ? 1e-5 : 2 * wk_eps<T>()) * (1.0 + fabs(fd));
                    if (!(fabs(got - fd) <= tol) && bad++ < 3)
                        cr_log_error("gradient %s: %d columns (smoothing %g) row %d col %d: got %.9g, central difference %.9g",
                                     wk_type_name<T>(), c, smoothing, q, j, got, fd);
                }
            }
            cudaFree(dx);
            cudaFree(dt);
        }
    }
    return bad;
}

Test(device_cross_entropy, gradient) {
    WK_REQUIRE_GPU();
    const int bad = ce_gradient<float>() + ce_gradient<__half>() + ce_gradient<__nv_bfloat16>();
    cr_expect(bad == 0, "rowCrossEntropy gradient vs central differences: %d mismatches", bad);
}

Test(device_cross_entropy, bad_args) {
    WK_REQUIRE_GPU();
    const int n = 64;
    float* dx = wk_alloc<float>(n);
    float* dg = wk_alloc<float>(n);
    float* dl = wk_alloc<float>(n);
    long long* dt = wk_alloc<long long>(n);
    std::vector<float> hx(n, 1.0f), hg(n), hl(n), poison(n);
    std::vector<long long> ht(n, 1);
    wk_upload(dx, hx.data(), n);
    wk_upload(dt, ht.data(), n);
    wk_poison(dg, n);
    wk_poison(dl, n);
    wk_download(poison.data(), dg, n);
    struct Bad { long long rows; int cols; long long ldx, ldg; float smoothing; int nulls; bool same; const char* what; };
    // nulls: 1 logits, 2 targets, 4 loss and grad
    const Bad bads[] = {
        {-1, 8, 8, 8, 0.0f, 0, false, "rows < 0"},
        {2, 0, 8, 8, 0.0f, 0, false, "cols = 0"},
        {2, -3, 8, 8, 0.0f, 0, false, "cols < 0"},
        {2, 8, 7, 8, 0.0f, 0, false, "ldLogits < cols"},
        {2, 8, 8, 7, 0.0f, 0, false, "ldGrad < cols"},
        {2, 8, 8, 8, 0.0f, 1, false, "logits null"},
        {2, 8, 8, 8, 0.0f, 2, false, "targets null"},
        {2, 8, 8, 8, 0.0f, 4, false, "loss and grad null"},
        {2, 8, 8, 16, 0.0f, 0, true, "in place with ldGrad != ldLogits"},
        {2, 8, 8, 8, -0.1f, 0, false, "smoothing < 0"},
        {2, 8, 8, 8, 1.5f, 0, false, "smoothing > 1"},
        {2, 8, 8, 8, NAN, 0, false, "smoothing NaN"},
        {0, 0, 8, 8, 0.0f, 0, false, "rows 0 but cols 0"},
    };
    for (const Bad& b : bads) {
        const float* x = (b.nulls & 1) ? nullptr : dx;
        const long long* t = (b.nulls & 2) ? nullptr : dt;
        float* l = (b.nulls & 4) ? nullptr : dl;
        float* g = (b.nulls & 4) ? nullptr : b.same ? dx : dg;
        const cudaError_t e = warpkit::rowCrossEntropy(x, t, l, g, b.rows, b.cols, -100, b.smoothing, 1.0f, b.ldx, b.ldg);
        cr_expect(e == cudaErrorInvalidValue, "rowCrossEntropy with %s: got %s, want cudaErrorInvalidValue", b.what, cudaGetErrorString(e));
    }
    cr_expect(warpkit::rowCrossEntropy<float>(nullptr, nullptr, nullptr, 0, 5) == cudaSuccess, "rows 0 with null pointers: no-op");
    WK_LAUNCHED();
    wk_download(hg.data(), dg, n);
    wk_download(hl.data(), dl, n);
    std::vector<float> x2(n);
    wk_download(x2.data(), dx, n);
    cr_expect(memcmp(hg.data(), poison.data(), n * sizeof(float)) == 0, "a rejected call wrote grad");
    cr_expect(memcmp(hl.data(), poison.data(), n * sizeof(float)) == 0, "a rejected call wrote loss");
    cr_expect(memcmp(x2.data(), hx.data(), n * sizeof(float)) == 0, "a rejected call wrote the logits");
    cudaFree(dx);
    cudaFree(dg);
    cudaFree(dl);
    cudaFree(dt);
}

/// Two host threads, each with its own stream, each running a series of shapes at once.
Test(device_cross_entropy, concurrent) {
    WK_REQUIRE_GPU();
    static const int cols[] = {33, 1000, 4097, 32000, 50257, 151936};
    const int bad = wk_two_threads(12, false, [&](int w, int i, cudaStream_t st) {
        const int c = cols[(i + w) % 6];
        CeCase k{c > 20000 ? 4 : 300, c, (long long)c + w, (long long)c, w, 2 * w, i % 3 == 2, true, true, -100, 3, false,
                 i % 2 ? 0.1f : 0.0f, 0.5f, i};
        return (i + w) % 2 ? ce_case<float>("concurrent", k, 0xcd000ull + 100 * w + i, nullptr, st)
                           : ce_case<__nv_bfloat16>("concurrent", k, 0xcd000ull + 100 * w + i, nullptr, st);
    });
    cr_expect(bad == 0, "rowCrossEntropy from two threads / streams at once: %d mismatches", bad);
}
