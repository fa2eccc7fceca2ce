// Tests of include/warpkit/device/add_norm.cuh (rowAddLayerNorm, rowAddRmsNorm), against the
// unfused chain (h = x + r rounded once to T on the host, then rowLayerNorm / rowRmsNorm of h on
// the device) and a double-precision reference of h:
//   fuzz:     seeded random shapes, strides and pointer offsets of 0..7 elements for x, r, h, y, w and
//             b (so the arrays' alignments differ), h in place over x or r, with and without w, b
//             and the statistics, every type; outputs poisoned first, nothing outside the rows
//             written.
//   paths:    cols around the path boundaries with the dispatcher's plans and forced warp, block,
//             cluster and streamed plans (the staged ones fall back to register clusters).
//   specials: NaN, +-inf and constant rows in x or r (a constant h gives y = b exactly).
//   mixed:    a 16-bit r of a float x (autocast's residual stream), fuzz, paths and specials as
//             above: h bitwise against round(float(x) + float(r)) to float, y against rowLayerNorm(h).
//   bad_args: every bad argument returns cudaErrorInvalidValue and writes nothing.
#include "row_common.cuh"
#include <warpkit/device/add_norm.cuh>
#include <type_traits>
#include <vector>

using warpkit::detail::RowPlan;

struct AddCase {
    bool rms;
    long long rows;
    int cols;
    long long ldx, ldr, ldh, ldy;
    int offX, offR, offH, offY, offW, offB;
    int inplace; // 0: h apart, 1: h is x, 2: h is r
    bool useW, useB, stats;
    int mode; // 0: uniform, 1: NaN in x, 2: inf in r, 3: -inf in x, 4: h constant, 5: large x, small r
};

/// h's element as the unfused chain rounds it: x + r in float, rounded once to T (r of T, or
/// narrower: torch's type promotion).
template <typename T, typename R> static T add_round(T x, R r) {
    return wk_from_double<T>((double)((float)wk_to_double(x) + (float)wk_to_double(r)));
}

static bool add_close(double got, double want, double tol, double mag) {
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    if (isnan(got) || isinf(got)) return false;
    return fabs(got - want) <= tol * (1.0 + mag);
}

/// Runs one case with x, h, y of T and r of R; returns mismatches.
template <typename T, typename R = T>
static int add_case(const char* what, const AddCase& c0, uint64_t seed, const RowPlan* plan = nullptr) {
    AddCase c = c0;
    if (!std::is_same<T, R>::value && c.inplace == 2) c.inplace = 1; // h over r only with one type
    wk_rng rng = wk_rng_make(seed);
    const size_t span = (size_t)(c.rows > 0 ? c.rows - 1 : 0);
    const long long ldh = c.inplace == 1 ? c.ldx : c.inplace == 2 ? c.ldr : c.ldh;
    const size_t nx = (size_t)c.offX + span * c.ldx + c.cols + 8, nr = (size_t)c.offR + span * c.ldr + c.cols + 8;
    const size_t nh = (size_t)c.offH + span * c.ldh + c.cols + 8, ny = (size_t)c.offY + span * c.ldy + c.cols + 8;
    std::vector<T> hx(nx), hw(c.cols + 8), hb(c.cols + 8);
    std::vector<R> hr(nr);
    const double big = sizeof(T) == 4 ? 1e4 : 1e2;
    for (size_t i = 0; i < nx; ++i) hx[i] = wk_from_double<T>(wk_uniform(&rng, -4.0, 4.0) + (c.mode == 5 ? big : 0.0));
    for (size_t i = 0; i < nr; ++i) hr[i] = wk_from_double<R>(wk_uniform(&rng, -1.0, 1.0));
    for (T& v : hw) v = wk_from_double<T>(wk_uniform(&rng, -2.0, 2.0));
    for (T& v : hb) v = wk_from_double<T>(wk_uniform(&rng, -2.0, 2.0));
    for (long long q = 0; q < c.rows; ++q) {
        T* xq = &hx[c.offX + q * c.ldx];
        R* rq = &hr[c.offR + q * c.ldr];
        const int at = (int)wk_int(&rng, 0, c.cols - 1);
        if (c.mode == 1) xq[at] = wk_from_double<T>(NAN);
        if (c.mode == 2) rq[at] = wk_from_double<R>(INFINITY);
        if (c.mode == 3) xq[at] = wk_from_double<T>(-INFINITY);
        if (c.mode == 4)
            for (int i = 0; i < c.cols; ++i) xq[i] = wk_from_double<T>(3.0), rq[i] = wk_from_double<R>(0.5);
    }
    T* dx = wk_alloc<T>(nx);
    R* dr = wk_alloc<R>(nr);
    T* dw = wk_alloc<T>(hw.size());
    T* db = wk_alloc<T>(hb.size());
    T* dy = wk_alloc<T>(ny);
    T* dyRef = wk_alloc<T>(ny);
    T* dhRef = wk_alloc<T>(nh);
    wk_upload(dx, hx.data(), nx);
    wk_upload(dr, hr.data(), nr);
    wk_upload(dw, hw.data(), hw.size());
    wk_upload(db, hb.data(), hb.size());
    wk_poison(dy, ny);
    wk_poison(dyRef, ny);
    T* dhOwn = c.inplace == 0 ? wk_alloc<T>(nh) : nullptr;
    if (dhOwn) wk_poison(dhOwn, nh);
    // The arrays h lives in, and its offset there: its own, or x's or r's (one type only).
    T* dhBase = c.inplace == 1 ? dx : c.inplace == 2 ? reinterpret_cast<T*>(dr) : dhOwn;
    const size_t hOff = c.inplace == 1 ? c.offX : c.inplace == 2 ? c.offR : c.offH;
    const size_t nhAll = c.inplace == 1 ? nx : c.inplace == 2 ? nr : nh;
    std::vector<T> hBefore(nhAll), yBefore(ny), hGot(nhAll), yGot(ny), yRef(ny);
    wk_download(hBefore.data(), dhBase, nhAll);
    wk_download(yBefore.data(), dy, ny);
    // The unfused chain's h on the host, in h's layout (rows only), uploaded for rowLayerNorm.
    std::vector<T> hWant = hBefore;
    for (long long q = 0; q < c.rows; ++q)
        for (int i = 0; i < c.cols; ++i)
            hWant[hOff + q * ldh + i] = add_round(hx[c.offX + q * c.ldx + i], hr[c.offR + q * c.ldr + i]);
    T* dhChain = wk_alloc<T>(nhAll);
    wk_upload(dhChain, hWant.data(), nhAll);
    const size_t ns = (size_t)c.rows + 2;
    float* dm = wk_alloc<float>(ns);
    float* ds = wk_alloc<float>(ns);
    float* dmRef = wk_alloc<float>(ns);
    float* dsRef = wk_alloc<float>(ns);
    wk_poison(dm, ns);
    wk_poison(ds, ns);
    wk_poison(dmRef, ns); // the reference writes entries 1 .. rows (RMSNorm: none of dmRef)
    wk_poison(dsRef, ns);
    const T* w = c.useW ? dw + c.offW : nullptr;
    const T* b = c.useB && !c.rms ? db + c.offB : nullptr;
    float* mp = c.stats && !c.rms ? dm + 1 : nullptr;
    float* sp = c.stats ? ds + 1 : nullptr;
    T* hp = dhBase + hOff;
    const float eps = 1e-5f;
    cudaError_t e;
    if (plan) {
        int dev = 0;
        warpkit::detail::DeviceProps d;
        WK_CUDA(warpkit::detail::currentDevice(&dev, &d));
        const warpkit::detail::NormParams<T> n{dx + c.offX, dy + c.offY, w, b, mp, sp, c.ldx, c.ldy, eps, c.rms};
        const warpkit::detail::AddNormParams<T, R> p{n, dr + c.offR, hp, c.ldr, ldh};
        e = warpkit::detail::rowOpRun(*plan, p, c.rows, c.cols, dev, d, 0);
    } else if (c.rms) {
        e = warpkit::rowAddRmsNorm(dx + c.offX, dr + c.offR, hp, dy + c.offY, c.rows, c.cols, w, eps, sp, c.ldx, c.ldr,
                                   ldh, c.ldy);
    } else {
        e = warpkit::rowAddLayerNorm(dx + c.offX, dr + c.offR, hp, dy + c.offY, c.rows, c.cols, w, b, eps, mp, sp,
                                     c.ldx, c.ldr, ldh, c.ldy);
    }
    const cudaError_t eRef =
        c.rms ? warpkit::rowRmsNorm(dhChain + hOff, dyRef + c.offY, c.rows, c.cols, w, eps, dsRef + 1, ldh, c.ldy)
              : warpkit::rowLayerNorm(dhChain + hOff, dyRef + c.offY, c.rows, c.cols, w, b, eps, dmRef + 1, dsRef + 1,
                                      ldh, c.ldy);
    int bad = 0;
    const char* name = !std::is_same<T, R>::value ? (c.rms ? "rowAddRmsNorm (16-bit r)" : "rowAddLayerNorm (16-bit r)")
                       : c.rms                    ? "rowAddRmsNorm"
                                                  : "rowAddLayerNorm";
    if (e != cudaSuccess || eRef != cudaSuccess) {
        cr_log_error("%s %s: %s(%lld x %d) returned %s (unfused %s)", what, wk_type_name<T>(), name, c.rows, c.cols,
                     cudaGetErrorString(e), cudaGetErrorString(eRef));
        bad = 1;
    }
    WK_CUDA(cudaDeviceSynchronize());
    std::vector<float> hm(ns), hs(ns), hmRef(ns), hsRef(ns);
    wk_download(hGot.data(), dhBase, nhAll);
    wk_download(yGot.data(), dy, ny);
    wk_download(yRef.data(), dyRef, ny);
    wk_download(hm.data(), dm, ns);
    wk_download(hs.data(), ds, ns);
    wk_download(hmRef.data(), dmRef, ns);
    wk_download(hsRef.data(), dsRef, ns);
    // h: the unfused chain's bits in the rows, nothing else written (x or r elsewhere when in place).
    // A NaN matches any NaN: the device's float add returns the canonical NaN, the host's keeps the
    // input's payload.
    for (size_t i = 0; i < nhAll && bad < 3; ++i)
        if (memcmp(&hGot[i], &hWant[i], sizeof(T)) != 0 &&
            !(isnan(wk_to_double(hGot[i])) && isnan(wk_to_double(hWant[i]))))
            cr_log_error(
                "%s %s %s: %lld x %d (ld %lld/%lld/%lld, off %d/%d/%zu, in place %d): h[%zu] got %.9g want %.9g", what,
                wk_type_name<T>(), name, c.rows, c.cols, c.ldx, c.ldr, ldh, c.offX, c.offR, hOff, c.inplace, i,
                wk_to_double(hGot[i]), wk_to_double(hWant[i])),
                ++bad;
    // y: against the double reference of h and the unfused device call, both within tolerance.
    const double tol = sizeof(T) == 4 ? 2e-5 : wk_eps<T>();
    std::vector<double> hd(c.cols);
    for (long long q = 0; q < c.rows && bad < 3; ++q) {
        double s = 0, ss = 0;
        for (int i = 0; i < c.cols; ++i) hd[i] = wk_to_double(hWant[hOff + q * ldh + i]), s += hd[i];
        const double mean = c.rms ? 0.0 : s / c.cols;
        for (int i = 0; i < c.cols; ++i) ss += (hd[i] - mean) * (hd[i] - mean);
        const double rstd = 1.0 / sqrt(ss / c.cols + eps);
        for (int i = 0; i < c.cols && bad < 3; ++i) {
            const double wi = w ? wk_to_double(hw[c.offW + i]) : 1.0, bi = b ? wk_to_double(hb[c.offB + i]) : 0.0;
            const double want = (hd[i] - mean) * rstd * wi + bi, mag = fabs(want) + fabs((hd[i] - mean) * rstd * wi);
            const size_t at = c.offY + q * c.ldy + i;
            const double got = wk_to_double(yGot[at]), chain = wk_to_double(yRef[at]);
            // LayerNorm of a constant h: h - mean is 0 exactly (the shift is h's first element), so y is b.
            const bool exact = c.mode == 4 && !c.rms && got != want;
            if (exact || !add_close(got, want, tol, mag) || !add_close(got, chain, 2 * tol, mag))
                cr_log_error("%s %s %s: %lld x %d row %lld col %d: y got %.9g, reference %.9g, unfused %.9g", what,
                             wk_type_name<T>(), name, c.rows, c.cols, q, i, got, want, chain),
                    ++bad;
        }
        // A row holding an infinity has a mean of NaN or +-inf depending on the shift: non-finite both.
        const bool meanOk = !isfinite(hmRef[1 + q])
                                ? !isfinite(hm[1 + q])
                                : add_close(hm[1 + q], hmRef[1 + q], 1e-6, fabs(hmRef[1 + q]) + 1.0 / hsRef[1 + q]);
        if (mp && !meanOk)
            cr_log_error("%s %s: row %lld mean %.9g, unfused %.9g", what, name, q, hm[1 + q], hmRef[1 + q]), ++bad;
        if (sp && !add_close(hs[1 + q], hsRef[1 + q], 2e-5, fabs(hsRef[1 + q])))
            cr_log_error("%s %s: row %lld rstd %.9g, unfused %.9g", what, name, q, hs[1 + q], hsRef[1 + q]), ++bad;
    }
    int touched = 0;
    for (size_t i = 0; i < ny && touched < 3; ++i) {
        const bool inRow = i >= (size_t)c.offY && (long long)((i - c.offY) % c.ldy) < c.cols &&
                           (long long)((i - c.offY) / c.ldy) < c.rows;
        if (!inRow && memcmp(&yGot[i], &yBefore[i], sizeof(T)) != 0 && touched++ == 0)
            cr_log_error("%s %s: %lld x %d: y element %zu outside the rows was written", what, name, c.rows, c.cols, i);
    }
    std::vector<float> poison(ns);
    memset(poison.data(), 0xA5, ns * sizeof(float));
    for (size_t i = 0; i < ns; ++i) {
        const bool in = i >= 1 && (long long)i <= c.rows;
        if (!(mp && in) && memcmp(&hm[i], &poison[i], 4) != 0 && touched++ < 3)
            cr_log_error("%s: mean[%zu] written", what, i);
        if (!(sp && in) && memcmp(&hs[i], &poison[i], 4) != 0 && touched++ < 3)
            cr_log_error("%s: rstd[%zu] written", what, i);
    }
    for (void* p : {(void*)dx, (void*)dr, (void*)dw, (void*)db, (void*)dy, (void*)dyRef, (void*)dhRef, (void*)dhOwn,
                    (void*)dhChain, (void*)dm, (void*)ds, (void*)dmRef, (void*)dsRef})
        if (p) cudaFree(p);
    return bad + touched;
}

template <typename T, typename R = T> static int add_fuzz_one(wk_rng* r, long long budget, int iter) {
    AddCase c;
    c.rms = wk_int(r, 0, 2) == 0;
    row_draw_shape(r, budget / 2, &c.rows, &c.cols);
    c.ldx = row_draw_ld(r, c.cols);
    c.ldr = row_draw_ld(r, c.cols);
    c.ldh = row_draw_ld(r, c.cols);
    c.ldy = row_draw_ld(r, c.cols);
    c.offX = (int)wk_int(r, 0, 7);
    c.offR = (int)wk_int(r, 0, 7);
    c.offH = (int)wk_int(r, 0, 7);
    c.offY = (int)wk_int(r, 0, 7);
    c.offW = (int)wk_int(r, 0, 7);
    c.offB = (int)wk_int(r, 0, 7);
    c.inplace = (int)wk_int(r, 0, 2);
    c.useW = wk_int(r, 0, 3) != 0;
    c.useB = wk_int(r, 0, 3) != 0;
    c.stats = wk_int(r, 0, 1) == 0;
    c.mode = wk_int(r, 0, 3) == 0 ? (int)wk_int(r, 1, 5) : 0;
    return add_case<T, R>("fuzz", c, 0xadd00ull + iter);
}

Test(device_add_norm, fuzz) {
    WK_REQUIRE_GPU();
    row_fuzz("rowAddLayerNorm / rowAddRmsNorm", 7301, wk_quick() ? 40 : 200, add_fuzz_one<float>, add_fuzz_one<__half>,
             add_fuzz_one<__nv_bfloat16>);
}

template <typename T, typename R = T> static int add_paths(int* seen) {
    const warpkit::detail::DeviceProps d = row_props();
    std::vector<int> cols = {1, 5, 8, 9, 33, 255, 768, 1025, 4097, 8193, 16385, 65537, 262145};
    int bad = 0, salt = 0;
    for (int c : row_thinned(cols)) {
        for (const RowPlan& p : row_forced_plans<warpkit::detail::AddNormParams<T, R>>(c, d, 4, 2)) {
            seen[p.path] = 1;
            const bool rms = salt % 3 == 0;
            // Every array off 16 bytes differently, h in place in turn.
            AddCase k{rms, 3, c, c + 3LL, c + 1LL,  c + 5LL, c + 2LL, 3,    1,
                      6,   5, 1, 2,       salt % 3, true,    true,    true, salt % 6};
            bad += add_case<T, R>("paths (forced plan)", k, 0xbd00ull + salt++, &p);
            const long long la = (c + 7) / 8 * 8;
            AddCase a{rms, 3, c, la, la, la, la, 0, 0, 0, 0, 0, 0, 0, true, true, true, 0};
            bad += add_case<T, R>("paths (forced plan, aligned)", a, 0xbe00ull + salt++, &p);
        }
        AddCase few{false, 5,    c, (long long)c, (long long)c, (long long)c, (long long)c, 0, 0, 0, 0, 0, 0, 1, true,
                    true,  true, 0};
        bad += add_case<T, R>("paths (5 rows, h in x)", few, 0xbf00ull + salt++);
    }
    return bad;
}

Test(device_add_norm, paths) {
    WK_REQUIRE_GPU();
    int seen[4] = {0, 0, 0, 0};
    const int bad = add_paths<float>(seen) + add_paths<__half>(seen) + add_paths<__nv_bfloat16>(seen);
    cr_expect(bad == 0, "rowAddLayerNorm / rowAddRmsNorm paths: %d mismatches", bad);
    cr_expect(seen[warpkit::detail::RowWarp] && seen[warpkit::detail::RowBlock] && seen[warpkit::detail::RowStream],
              "warp, block and streamed plans all ran");
}

template <typename T, typename R = T> static int add_specials(void) {
    int bad = 0, salt = 0;
    for (int c : {7, 768, 5000, 70001, 300007})
        for (int rms = 0; rms < 2; ++rms)
            for (int mode = 1; mode <= 5; ++mode) {
                AddCase k{rms == 1, 2, c, (long long)c, (long long)c,  (long long)c, (long long)c, 0,   0, 0,
                          0,        0, 0, mode % 3,     mode % 2 == 0, true,         true,         mode};
                bad += add_case<T, R>("specials", k, 0xc100ull + salt++);
            }
    return bad;
}

Test(device_add_norm, specials) {
    WK_REQUIRE_GPU();
    const int bad = add_specials<float>() + add_specials<__half>() + add_specials<__nv_bfloat16>();
    cr_expect(bad == 0, "rowAddLayerNorm / rowAddRmsNorm special rows: %d mismatches", bad);
}

Test(device_add_norm, mixed) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(7302);
    const long long budget = wk_quick() ? (1 << 16) : (1 << 19);
    int bad = 0;
    for (int i = 0; i < (wk_quick() ? 20 : 100); ++i)
        bad += i % 2 ? add_fuzz_one<float, __nv_bfloat16>(&r, budget, 1000 + i)
                     : add_fuzz_one<float, __half>(&r, budget, 1000 + i);
    int seen[4] = {0, 0, 0, 0};
    bad += add_paths<float, __nv_bfloat16>(seen) + add_specials<float, __nv_bfloat16>() + add_specials<float, __half>();
    cr_expect(bad == 0, "rowAddLayerNorm / rowAddRmsNorm with a 16-bit r of a float x: %d mismatches", bad);
    cr_expect(seen[warpkit::detail::RowWarp] && seen[warpkit::detail::RowBlock] && seen[warpkit::detail::RowStream],
              "warp, block and streamed plans all ran (16-bit r)");
}

Test(device_add_norm, bad_args) {
    WK_REQUIRE_GPU();
    const int n = 64;
    float* dx = wk_alloc<float>(n);
    float* dr = wk_alloc<float>(n);
    float* dh = wk_alloc<float>(n);
    float* dy = wk_alloc<float>(n);
    float* ds = wk_alloc<float>(n);
    std::vector<float> hx(n, 1.0f), got(n), poison(n);
    wk_upload(dx, hx.data(), n);
    wk_upload(dr, hx.data(), n);
    wk_poison(dh, n);
    wk_poison(dy, n);
    wk_poison(ds, n);
    wk_download(poison.data(), dy, n);
    struct Bad {
        long long rows;
        int cols;
        long long ldx, ldr, ldh, ldy;
        float eps;
        int ptrs;
        const char* what;
    };
    // ptrs: 0 apart, 1..4 x / r / h / y null, 5 y is x, 6 y is r, 7 y is h, 8 h is x with another ld,
    // 9 h is r with another ld.
    const Bad bads[] = {
        {-1, 8, 8, 8, 8, 8, 1e-5f, 0, "rows < 0"},
        {2, -3, 8, 8, 8, 8, 1e-5f, 0, "cols < 0"},
        {2, 8, 7, 8, 8, 8, 1e-5f, 0, "ldx < cols"},
        {2, 8, 8, 7, 8, 8, 1e-5f, 0, "ldr < cols"},
        {2, 8, 8, 8, 7, 8, 1e-5f, 0, "ldh < cols"},
        {2, 8, 8, 8, 8, 7, 1e-5f, 0, "ldy < cols"},
        {2, 8, 8, 8, 8, 8, 1e-5f, 1, "x null"},
        {2, 8, 8, 8, 8, 8, 1e-5f, 2, "r null"},
        {2, 8, 8, 8, 8, 8, 1e-5f, 3, "h null"},
        {2, 8, 8, 8, 8, 8, 1e-5f, 4, "y null"},
        {2, 8, 8, 8, 8, 8, 1e-5f, 5, "y is x"},
        {2, 8, 8, 8, 8, 8, 1e-5f, 6, "y is r"},
        {2, 8, 8, 8, 8, 8, 1e-5f, 7, "y is h"},
        {2, 8, 8, 8, 16, 8, 1e-5f, 8, "h is x, ldh != ldx"},
        {2, 8, 8, 8, 16, 8, 1e-5f, 9, "h is r, ldh != ldr"},
        {2, 8, 8, 8, 8, 8, INFINITY, 0, "eps inf"},
        {2, 8, 8, 8, 8, 8, NAN, 0, "eps NaN"},
    };
    for (const Bad& b : bads) {
        const float* x = b.ptrs == 1 ? nullptr : dx;
        const float* r = b.ptrs == 2 ? nullptr : dr;
        float* h = b.ptrs == 3 ? nullptr : b.ptrs == 8 ? dx : b.ptrs == 9 ? dr : dh;
        float* y = b.ptrs == 4 ? nullptr : b.ptrs == 5 ? dx : b.ptrs == 6 ? dr : b.ptrs == 7 ? dh : dy;
        const cudaError_t e1 =
            warpkit::rowAddLayerNorm(x, r, h, y, b.rows, b.cols, dx, dx, b.eps, ds, ds, b.ldx, b.ldr, b.ldh, b.ldy);
        const cudaError_t e2 =
            warpkit::rowAddRmsNorm(x, r, h, y, b.rows, b.cols, dx, b.eps, ds, b.ldx, b.ldr, b.ldh, b.ldy);
        cr_expect(e1 == cudaErrorInvalidValue && e2 == cudaErrorInvalidValue,
                  "rowAddLayerNorm / rowAddRmsNorm with %s: got %s / %s, want cudaErrorInvalidValue", b.what,
                  cudaGetErrorString(e1), cudaGetErrorString(e2));
    }
    // A 16-bit r: h may not be r (other widths), nor y.
    __nv_bfloat16* dr16 = wk_alloc<__nv_bfloat16>(n);
    for (int k = 0; k < 3; ++k) {
        float* hy = reinterpret_cast<float*>(dr16);
        const cudaError_t e = warpkit::rowAddLayerNorm(dx, dr16, k == 1 ? hy : dh, k == 2 ? hy : dy, 2LL, 8, dx, dx,
                                                       k == 0 ? -1.0f * INFINITY : 1e-5f, ds, ds, 8, 8, 8, 8);
        cr_expect(e == cudaErrorInvalidValue, "rowAddLayerNorm (16-bit r) with %s: got %s",
                  k == 0   ? "eps -inf"
                  : k == 1 ? "h is r"
                           : "y is r",
                  cudaGetErrorString(e));
    }
    cudaFree(dr16);
    cr_expect(warpkit::rowAddLayerNorm<float>(nullptr, nullptr, nullptr, nullptr, 0, 5, nullptr, nullptr, 1e-5f) ==
                  cudaSuccess,
              "rows 0 with null pointers: no-op");
    cr_expect(warpkit::rowAddRmsNorm<float>(nullptr, nullptr, nullptr, nullptr, 3, 0, nullptr, 1e-5f) == cudaSuccess,
              "cols 0 with null pointers: no-op");
    WK_LAUNCHED();
    for (float* p : {dx, dr}) {
        wk_download(got.data(), p, n);
        cr_expect(memcmp(got.data(), hx.data(), n * sizeof(float)) == 0, "a rejected call wrote x or r");
    }
    for (float* p : {dh, dy, ds}) {
        wk_download(got.data(), p, n);
        cr_expect(memcmp(got.data(), poison.data(), n * sizeof(float)) == 0,
                  "a rejected call wrote h, y or the statistics");
    }
    for (float* p : {dx, dr, dh, dy, ds}) cudaFree(p);
}
