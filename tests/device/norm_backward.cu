// Tests of include/warpkit/device/norm_backward.cuh (rowLayerNormBackward, rowRmsNormBackward),
// against double-precision references computed from the same inputs and float statistics.
//   shapes:      cols 1..262147 (every group size of the register path and the split path's slice
//                edges, +-1), rows 0, 1, few, many (few for the longest rows); odd strides and pointer offsets; w null;
//                every combination of dx, dw, db null; in place (dx = dy, dx = x); every type. Outputs and workspace
//                poisoned first, everything outside the outputs checked untouched.
//   specials:    rows holding NaN, +inf, -inf (statistics as the forward writes them), constant rows.
//   determinism: the same call twice, on two streams, strided and contiguous forms: the same bits;
//                dw / db the same bits for aligned (register path) and unaligned (split path) rows.
//   graph:       the call captured into a CUDA graph and replayed (sm_90: the final sum's Programmatic
//                Dependent Launch), poisoned workspace: the direct call's bits, copies right after it too.
//   finish:      the final sum's kernel alone (N5), bit for bit against the host's float additions in
//                its order: every lane count, parts past the plan's, -0 / NaN / inf partials.
//   workspace:   the size query, 1 byte (never 0) without dw and db, too small a workspace refused; a
//                workspace holding another call's split-path sums, flagged ready (they are cleared).
//   wide:        few rows of 64K columns (rows 1, 2, 255, 256, 257; cols 65535..65537): the one-pass
//                split kernel's exchange of row sums, and the two kernels for unaligned rows.
//   pipeline:    the one-pass kernel's rows published ahead of their dx: rows past 256 slices (two
//                rounds of its wait), parts of 1 or 2 rows.
//   add:         the Add calls (dres added into dx) on every path, dx apart or over dres or dy.
//   rows_ahead:  the register path's rows in flight (N1: up to 3 a group, dres with them) at widths
//                beside 768..4096, rows that leave a part's groups short of a whole batch, Add and
//                mixed forms, NaN / inf rows.
//   add_mixed:   their mixed forms (float x, 16-bit residual): dx as above, dr bitwise dx rounded
//                to the residual's type, nothing outside dr's rows written.
//   bad_args:    every bad argument returns cudaErrorInvalidValue and writes nothing; cols = 0 a
//                no-op; rows = 0 writes zeros to dw and db; the size query refuses bad shapes only.
//   size_query_without_pointers (host only): the query with null data pointers answers enough for
//                any dw / db and alignment the call brings, for every form; bad shapes refused.
// The plan (no GPU needed) is pinned by tests/device/norm_backward_plan.cu.
#include "../common.cuh"
#include <warpkit/device/norm_backward.cuh>
#include <type_traits>
#include <vector>

struct NbCase {
    bool rms;
    long long rows;
    int cols;
    long long lddy, ldx, lddx;
    int offDy, offX, offDx, offW, offWs; // pointer offsets (elements; the workspace's in bytes)
    bool useW, wantDx, wantDw, wantDb;
    int inplace;            // 0 none, 1 dx = dy, 2 dx = x
    int mode;               // 0 uniform, 1 NaN, 2 +inf, 3 -inf, 4 constant row (row r: mode + r when mode > 0)
    bool staleSums = false; // the workspace filled with split-path sums records flagged ready (stale values)
};

template <typename T> static double nb_tol(void) { return sizeof(T) == 4 ? 2e-5 : 2 * wk_eps<T>(); }

/// Runs one case; returns mismatches (the first few logged). Outputs left in *got* when given. add:
/// the Add calls with a residual gradient dres (rows at offset offDy + 1, stride lddy) added into dx,
/// dx apart (1) or dx = dres (2).
template <typename T, typename R = T> static int nb_case(const char* what, const NbCase& c, uint64_t seed,
                                                         cudaStream_t st = 0, std::vector<T>* gotAll = nullptr,
                                                         int add = 0) {
    constexpr bool mixed = !std::is_same<T, R>::value; // add: dr (R) too, laid out as dx in its own array
    wk_rng r = wk_rng_make(seed);
    const size_t span = (size_t)(c.rows > 0 ? c.rows - 1 : 0);
    const size_t ndy = c.offDy + span * c.lddy + c.cols + 8, nx = c.offX + span * c.ldx + c.cols + 8;
    const size_t ndx = c.offDx + span * c.lddx + c.cols + 8, nw = c.offW + c.cols + 8;
    std::vector<T> hdy(ndy), hx(nx), hw(nw);
    for (T& v : hdy) v = wk_from_double<T>(wk_uniform(&r, -2.0, 2.0));
    for (T& v : hx) v = wk_from_double<T>(wk_uniform(&r, -3.0, 3.0) + 0.5);
    for (T& v : hw) v = wk_from_double<T>(wk_uniform(&r, -1.5, 1.5));
    const int rowsN = (int)c.rows;
    std::vector<float> hm(c.rows + 1), hr(c.rows + 1);
    for (long long q = 0; q < c.rows; ++q) { // the row's special, and its statistics as the forward's rules give
        T* x = &hx[c.offX + q * c.ldx];
        const int m = c.mode > 0 ? (c.mode + (int)q) % 5 : 0;
        if (m == 1) x[wk_int(&r, 0, c.cols - 1)] = wk_from_double<T>(NAN);
        if (m == 2) x[wk_int(&r, 0, c.cols - 1)] = wk_from_double<T>(INFINITY);
        if (m == 3) x[wk_int(&r, 0, c.cols - 1)] = wk_from_double<T>(-INFINITY);
        if (m == 4)
            for (int i = 0; i < c.cols; ++i) x[i] = x[0];
        double s = 0, s2 = 0, v = 0;
        for (int i = 0; i < c.cols; ++i) s += wk_to_double(x[i]), s2 += wk_to_double(x[i]) * wk_to_double(x[i]);
        const double mean = s / c.cols;
        for (int i = 0; i < c.cols; ++i) v += (wk_to_double(x[i]) - mean) * (wk_to_double(x[i]) - mean);
        hm[q] = c.rms ? 0.0f : (float)mean;
        hr[q] = (float)(1.0 / sqrt((c.rms ? s2 : v) / c.cols + 1e-5));
    }
    T* ddy = wk_alloc<T>(ndy);
    T* dxin = wk_alloc<T>(nx);
    T* dw = wk_alloc<T>(nw);
    float* dm = wk_alloc<float>(c.rows + 1);
    float* dr = wk_alloc<float>(c.rows + 1);
    wk_upload(ddy, hdy.data(), ndy);
    wk_upload(dxin, hx.data(), nx);
    wk_upload(dw, hw.data(), nw);
    wk_upload(dm, hm.data(), c.rows + 1);
    wk_upload(dr, hr.data(), c.rows + 1);
    const int offRes = c.offDy + 1;
    const size_t nres = offRes + span * c.lddy + c.cols + 8;
    std::vector<T> hres(add ? nres : 0);
    for (T& v : hres) v = wk_from_double<T>(wk_uniform(&r, -1.0, 1.0));
    T* dres = add ? wk_alloc<T>(nres) : nullptr;
    if (add) wk_upload(dres, hres.data(), nres);
    const bool same = c.inplace != 0 || add == 2; // dx over an input: only its rows may change
    T* dout = add == 2 ? dres : c.inplace == 1 ? ddy : c.inplace == 2 ? dxin : wk_alloc<T>(ndx);
    const int offDx = add == 2 ? offRes : c.inplace == 1 ? c.offDy : c.inplace == 2 ? c.offX : c.offDx;
    const long long lddx = add == 2 ? c.lddy : c.inplace == 1 ? c.lddy : c.inplace == 2 ? c.ldx : c.lddx;
    const size_t nout = add == 2 ? nres : c.inplace == 1 ? ndy : c.inplace == 2 ? nx : ndx;
    if (!same) wk_poison(dout, nout);
    std::vector<T> before(nout);
    wk_download(before.data(), dout, nout);
    const size_t ncol = (size_t)c.cols + 16; // dw and db at [4, 4 + cols), guards around
    T* gdw = wk_alloc<T>(ncol);
    T* gdb = wk_alloc<T>(ncol);
    wk_poison(gdw, ncol);
    wk_poison(gdb, ncol);
    std::vector<T> poisonCol(ncol);
    wk_download(poisonCol.data(), gdw, ncol);
    R* drAll = mixed ? wk_alloc<R>(nout) : nullptr;
    std::vector<R> drBefore(mixed ? nout : 0), drGot(mixed ? nout : 0);
    if (mixed) wk_poison(drAll, nout), wk_download(drBefore.data(), drAll, nout);
    const T* w = c.useW ? dw + c.offW : nullptr;
    T* pdx = c.wantDx ? dout + offDx : nullptr;
    T* pdw = c.wantDw ? gdw + 4 : nullptr;
    T* pdb = c.wantDb && !c.rms ? gdb + 4 : nullptr;
    auto call = [&](void* ws, size_t* bytes) {
        if constexpr (mixed)
            return c.rms ? warpkit::rowRmsNormBackwardAdd(ddy + c.offDy, dxin + c.offX, w, dr, dres + offRes, pdx,
                                                          drAll + offDx, pdw, c.rows, c.cols, c.lddy, c.ldx, c.lddy,
                                                          lddx, lddx, ws, bytes, st)
                         : warpkit::rowLayerNormBackwardAdd(ddy + c.offDy, dxin + c.offX, w, dm, dr, dres + offRes, pdx,
                                                            drAll + offDx, pdw, pdb, c.rows, c.cols, c.lddy, c.ldx,
                                                            c.lddy, lddx, lddx, ws, bytes, st);
        if (add)
            return c.rms ? warpkit::rowRmsNormBackwardAdd(ddy + c.offDy, dxin + c.offX, w, dr, dres + offRes, pdx, pdw,
                                                          c.rows, c.cols, c.lddy, c.ldx, c.lddy, lddx, ws, bytes, st)
                         : warpkit::rowLayerNormBackwardAdd(ddy + c.offDy, dxin + c.offX, w, dm, dr, dres + offRes, pdx,
                                                            pdw, pdb, c.rows, c.cols, c.lddy, c.ldx, c.lddy, lddx, ws,
                                                            bytes, st);
        return c.rms ? warpkit::rowRmsNormBackward(ddy + c.offDy, dxin + c.offX, w, dr, pdx, pdw, c.rows, c.cols,
                                                   c.lddy, c.ldx, lddx, ws, bytes, st)
                     : warpkit::rowLayerNormBackward(ddy + c.offDy, dxin + c.offX, w, dm, dr, pdx, pdw, pdb, c.rows,
                                                     c.cols, c.lddy, c.ldx, lddx, ws, bytes, st);
    };
    int bad = 0;
    size_t bytes = 12345;
    WK_CUDA(call(nullptr, &bytes));
    // A workspace for dw / db's partials, and for the split path's row sums (unaligned rows past 4096 columns).
    const bool wantSums =
        (pdw != nullptr || pdb != nullptr || c.cols > warpkit::detail::kNbMaxColsElem) && c.rows > 0 && c.cols > 0;
    if (bytes == 0 || (bytes > 1) != wantSums) // never 0: the two-call pattern must not allocate a null workspace
        cr_log_error("%s: workspace %zu bytes for %s", what, bytes, wantSums ? "sums" : "none"), ++bad;
    unsigned char* ws = wk_alloc<unsigned char>(bytes + c.offWs);
    wk_poison(ws, bytes + c.offWs);
    if (c.staleSums) { // every 8-byte word: a float 2^23 under the ready flag, as a call on other data leaves them
        std::vector<unsigned long long> stale((bytes + c.offWs) / 8, 1ull << 32 | 0x4b000000u);
        wk_upload(reinterpret_cast<unsigned long long*>(ws), stale.data(), stale.size());
    }
    cudaError_t e = call(ws + c.offWs, &bytes);
    if (e != cudaSuccess) cr_log_error("%s: %s", what, cudaGetErrorString(e)), ++bad;
    WK_CUDA(cudaStreamSynchronize(st));
    WK_CUDA(cudaGetLastError());
    std::vector<T> got(nout), gw(ncol), gb(ncol);
    wk_download(got.data(), dout, nout);
    wk_download(gw.data(), gdw, ncol);
    wk_download(gb.data(), gdb, ncol);
    if (mixed) { // dr: dx's float values rounded once to R in the rows, nothing else written
        wk_download(drGot.data(), drAll, nout);
        for (size_t i = 0; i < nout; ++i) {
            const bool row = i >= (size_t)offDx && (long long)((i - offDx) % lddx) < c.cols &&
                             (long long)((i - offDx) / lddx) < c.rows;
            const R want = row ? wk_from_double<R>(wk_to_double(got[i])) : drBefore[i];
            if (memcmp(&drGot[i], &want, sizeof(R)) != 0 &&
                !(isnan(wk_to_double(drGot[i])) && isnan(wk_to_double(want))) && bad++ < 3)
                cr_log_error("%s %s: %lld x %d dr[%zu] %.9g want %.9g (%s)", what, wk_type_name<R>(), c.rows, c.cols, i,
                             wk_to_double(drGot[i]), wk_to_double(want), row ? "dx rounded" : "untouched");
        }
        cudaFree(drAll);
    }
    // The references.
    const double tol = nb_tol<T>();
    std::vector<double> rw(c.cols, 0.0), rb(c.cols, 0.0), mw(c.cols, 0.0), mb(c.cols, 0.0), want(c.cols);
    std::vector<char> inRow(nout, 0);
    for (long long q = 0; q < c.rows; ++q) {
        const T* x = &hx[c.offX + q * c.ldx];
        const T* d = &hdy[c.offDy + q * c.lddy];
        const double mean = hm[q], rstd = hr[q];
        double sg = 0, sgx = 0, mag = 0;
        for (int i = 0; i < c.cols; ++i) {
            const double xh = (wk_to_double(x[i]) - mean) * rstd,
                         g = wk_to_double(d[i]) * (w ? wk_to_double(hw[c.offW + i]) : 1.0);
            sg += g, sgx += g * xh;
            rw[i] += wk_to_double(d[i]) * xh, rb[i] += wk_to_double(d[i]);
            mw[i] += fabs(wk_to_double(d[i]) * xh), mb[i] += fabs(wk_to_double(d[i]));
        }
        if (c.rms) sg = 0;
        for (int i = 0; i < c.cols; ++i) {
            const double xh = (wk_to_double(x[i]) - mean) * rstd,
                         g = wk_to_double(d[i]) * (w ? wk_to_double(hw[c.offW + i]) : 1.0);
            const double a = add ? wk_to_double(hres[offRes + q * c.lddy + i]) : 0.0;
            want[i] = rstd * (g - sg / c.cols - xh * sgx / c.cols) + a;
            mag = fmax(mag, fabs(rstd) * (fabs(g) + fabs(sg / c.cols) + fabs(xh * sgx / c.cols)) + fabs(a));
        }
        if (!pdx) continue;
        for (int i = 0; i < c.cols; ++i) {
            const size_t at = offDx + q * lddx + i;
            inRow[at] = 1;
            const double v = wk_to_double(got[at]);
            const bool ok = isnan(want[i]) ? isnan(v) : !isnan(v) && fabs(v - want[i]) <= tol * (1.0 + mag);
            if (!ok && bad++ < 3)
                cr_log_error("%s %s %s: %lld x %d row %lld col %d dx %.9g want %.9g", what, wk_type_name<T>(),
                             c.rms ? "rms" : "layer", c.rows, c.cols, q, i, v, want[i]);
        }
    }
    for (size_t i = 0; i < nout; ++i)
        if (!inRow[i] && !same && memcmp(&got[i], &before[i], sizeof(T)) != 0 && bad++ < 3)
            cr_log_error("%s: dx element %zu outside the rows written", what, i);
    if (same) // in place: only the rows' elements may change
        for (size_t i = 0; i < nout; ++i)
            if (!inRow[i] && memcmp(&got[i], &before[i], sizeof(T)) != 0 && bad++ < 3)
                cr_log_error("%s: in place element %zu outside the rows written", what, i);
    const double tsum = tol + 2e-7 * (double)rowsN;
    for (int k = 0; k < 2; ++k) {
        const std::vector<T>& g = k == 0 ? gw : gb;
        const bool asked = k == 0 ? pdw != nullptr : pdb != nullptr;
        for (size_t i = 0; i < ncol; ++i) {
            const bool col = i >= 4 && i < 4 + (size_t)c.cols;
            if (!asked || !col) {
                if (memcmp(&g[i], &poisonCol[i], sizeof(T)) != 0 && bad++ < 3)
                    cr_log_error("%s: %s element %zu written", what, k == 0 ? "dw" : "db", i);
                continue;
            }
            const double ref = (k == 0 ? rw : rb)[i - 4], m = (k == 0 ? mw : mb)[i - 4], v = wk_to_double(g[i]);
            const bool ok = isnan(ref) ? isnan(v) : !isnan(v) && fabs(v - ref) <= tsum * (1.0 + m);
            if (!ok && bad++ < 3)
                cr_log_error("%s %s %s: %lld x %d %s[%zu] %.9g want %.9g", what, wk_type_name<T>(),
                             c.rms ? "rms" : "layer", c.rows, c.cols, k == 0 ? "dw" : "db", i - 4, v, ref);
        }
    }
    if (gotAll) {
        *gotAll = got;
        gotAll->insert(gotAll->end(), gw.begin(), gw.end());
        gotAll->insert(gotAll->end(), gb.begin(), gb.end());
    }
    cudaFree(ddy), cudaFree(dxin), cudaFree(dw), cudaFree(dm), cudaFree(dr), cudaFree(gdw), cudaFree(gdb), cudaFree(ws);
    if (!same) cudaFree(dout);
    if (dres) cudaFree(dres);
    return bad;
}

/// A case with odd strides (ld cols + 3, + 1, + 5) and pointer offsets (dy 1, x 3, dx 2, w 1
/// elements, the workspace 3 bytes): every row unaligned; all outputs wanted.
static NbCase nb_odd(bool rms, long long rows, int cols, bool useW, int mode) {
    const long long ld = cols;
    return NbCase{rms, rows, cols, ld + 3, ld + 1, ld + 5, 1, 3, 2, 1, 3, useW, true, true, true, 0, mode};
}

// Every group of the register path +-1; the split path's slice edges (2048 columns) at and past
// 8192, unaligned from 4097; few long rows.
static const int kNbCols[] = {1,    7,    33,   255,  256,  257,  767,   768,   1023,  1025,  2049,  4095,
                              4097, 6143, 6144, 8184, 8192, 8193, 10239, 10240, 10241, 16385, 65537, 262147};

template <typename T> static int nb_shapes(void) {
    int bad = 0, salt = 0;
    for (int cols : kNbCols) {
        const long long many = cols > 8192 ? (cols > 100000 ? 5 : 37) : 3000000 / cols > 2000 ? 2000 : 3000000 / cols;
        for (long long rows : {1LL, 3LL, many}) {
            if (wk_thin(salt, 3)) {
                ++salt;
                continue;
            }
            const int s = salt++;
            const bool rms = s % 3 == 0;
            // Aligned, contiguous: the vector slots.
            NbCase a{rms, rows, cols, cols, cols, cols, 0, 0, 0, 0, 0, true, true, true, true, 0, 0};
            bad += nb_case<T>("aligned", a, 0x4e00ull + s);
            // Odd strides and offsets, w unaligned, a workspace at an odd address.
            bad += nb_case<T>("odd", nb_odd(rms, rows, cols, s % 2 == 0, 0), 0x4f00ull + s);
            // Each output on its own, in place.
            NbCase n{rms, rows, cols, cols, cols,       cols,       0,          0,
                     0,   0,    0,    true, s % 4 == 0, s % 4 == 1, s % 4 == 2, s % 3 == 2 ? 1 : s % 3 == 1 ? 2 : 0,
                     0};
            bad += nb_case<T>("subset", n, 0x5000ull + s);
        }
    }
    return bad;
}

Test(device_norm_backward, shapes) {
    WK_REQUIRE_GPU();
    const int bad = nb_shapes<float>() + nb_shapes<__half>() + nb_shapes<__nv_bfloat16>();
    cr_expect(bad == 0, "rowLayerNormBackward / rowRmsNormBackward: %d mismatches", bad);
}

template <typename T> static int nb_specials(void) {
    int bad = 0, salt = 0;
    for (int cols : {7, 768, 4096, 6143, 8193, 20481}) {
        for (int rms = 0; rms < 2; ++rms) {
            NbCase k{rms == 1, 10, cols, cols, cols, cols, 0, 0, 0, 0, 0, true, true, true, true, 0, 1};
            bad += nb_case<T>("specials", k, 0x5100ull + salt++);
        }
    }
    return bad;
}

Test(device_norm_backward, specials) {
    WK_REQUIRE_GPU();
    const int bad = nb_specials<float>() + nb_specials<__half>() + nb_specials<__nv_bfloat16>();
    cr_expect(bad == 0, "NaN / inf / constant rows: %d mismatches", bad);
}

/// rowLayerNormBackwardAdd / rowRmsNormBackwardAdd: dres added into dx on every path (register
/// path's groups, split path's two-kernel and one-pass forms), aligned and not, dx apart, over dres
/// and over dy, NaN / inf / constant rows, dw and db as without dres.
template <typename T, typename R = T> static int nb_add(void) {
    int bad = 0, salt = 0;
    for (int cols : {1, 7, 33, 257, 768, 1025, 4097, 6143, 8193, 20481, 65537}) {
        for (int k = 0; k < 6; ++k) {
            const bool rms = k % 3 == 2, odd = k % 2 == 1;
            const long long ld = cols + (odd ? 3 : 0);
            const int o = odd ? 1 : 0;
            const int add = k < 4 ? 1 + k % 2 : 1;
            NbCase c{rms,
                     k == 5 ? 10 : 37,
                     cols,
                     ld,
                     ld + o,
                     ld + 2 * o,
                     o,
                     2 * o,
                     3 * o,
                     o,
                     0,
                     k != 3,
                     true,
                     k != 4,
                     true,
                     k == 4 && add == 1 ? 1 : 0,
                     k == 5 ? 1 : 0};
            bad += nb_case<T, R>("add", c, 0x5a00ull + salt++, 0, nullptr, add);
        }
    }
    return bad;
}

Test(device_norm_backward, add) {
    WK_REQUIRE_GPU();
    const int bad = nb_add<float>() + nb_add<__half>() + nb_add<__nv_bfloat16>();
    cr_expect(bad == 0, "rowLayerNormBackwardAdd / rowRmsNormBackwardAdd: %d mismatches", bad);
}

Test(device_norm_backward, add_mixed) {
    WK_REQUIRE_GPU();
    const int bad = nb_add<float, __nv_bfloat16>() + nb_add<float, __half>();
    cr_expect(bad == 0, "rowLayerNormBackwardAdd / rowRmsNormBackwardAdd with a 16-bit residual: %d mismatches", bad);
}

/// The same inputs on the default stream, twice, and on a non-blocking stream: the same bits.
template <typename T> static int nb_determinism(void) {
    int bad = 0;
    cudaStream_t st;
    WK_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (int cols : {768, 4096, 6143, 8193, 40000}) {
        for (int rms = 0; rms < 2; ++rms) {
            NbCase k{
                rms == 1, cols > 8192 ? 40 : 1500, cols, cols, cols, cols, 0, 0, 0, 0, 0, true, true, true, true, 0, 0};
            std::vector<T> a, b, s;
            bad += nb_case<T>("determinism", k, 0x5200ull + cols, 0, &a);
            bad += nb_case<T>("determinism", k, 0x5200ull + cols, 0, &b);
            bad += nb_case<T>("determinism", k, 0x5200ull + cols, st, &s);
            if (a.size() != b.size() || memcmp(a.data(), b.data(), a.size() * sizeof(T)) != 0 ||
                memcmp(a.data(), s.data(), a.size() * sizeof(T)) != 0)
                cr_log_error("%s cols %d: results differ between calls", wk_type_name<T>(), cols), ++bad;
        }
    }
    WK_CUDA(cudaStreamDestroy(st));
    return bad;
}

Test(device_norm_backward, determinism) {
    WK_REQUIRE_GPU();
    const int bad = nb_determinism<float>() + nb_determinism<__half>() + nb_determinism<__nv_bfloat16>();
    cr_expect(bad == 0, "determinism: %d mismatches", bad);
}

/// The call captured into a CUDA graph and replayed: on sm_90 its final sum follows the register
/// path's kernel with Programmatic Dependent Launch (a programmatic edge in the graph), waiting for
/// the whole main grid before it reads a partial. Shapes of both paths (bf16 8192 x 768: 384 parts,
/// 32 threads a column; fp32 RMSNorm 2000 x 4096: 256 parts; fp32 64 x 40000: the split path, its
/// final sum launched plainly), LayerNorm with dw and db. Each run starts with the workspace and
/// outputs poisoned (0xFF: NaN partials), and copies dx, dw and db right after the call in the same
/// stream; the direct call, the copies and every replay must have the same bits (a partial read
/// before it was written, or a copy of dx before the main kernel ended, differs).
template <typename T> static int nb_graph(void) {
    struct Shape {
        long long rows;
        int cols;
        bool rms;
    };
    static const Shape shapes[] = {{8192, 768, false}, {2000, 4096, true}, {64, 40000, false}};
    int bad = 0;
    cudaStream_t st;
    WK_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (const Shape& sh : shapes) {
        const size_t n = (size_t)sh.rows * sh.cols, cols = (size_t)sh.cols;
        wk_rng r = wk_rng_make(0x5b00ull + cols);
        std::vector<T> hdy(n), hx(n), hw(cols);
        std::vector<float> hm(sh.rows), hr(sh.rows);
        for (T& v : hdy) v = wk_from_double<T>(wk_uniform(&r, -2.0, 2.0));
        for (T& v : hx) v = wk_from_double<T>(wk_uniform(&r, -3.0, 3.0));
        for (T& v : hw) v = wk_from_double<T>(wk_uniform(&r, -1.5, 1.5));
        for (long long q = 0; q < sh.rows; ++q)
            hm[q] = sh.rms ? 0.0f : (float)wk_uniform(&r, -0.1, 0.1), hr[q] = (float)wk_uniform(&r, 0.5, 2);
        T* dy = wk_alloc<T>(n);
        T* x = wk_alloc<T>(n);
        T* w = wk_alloc<T>(cols);
        float* m = wk_alloc<float>(sh.rows);
        float* rs = wk_alloc<float>(sh.rows);
        T* out = wk_alloc<T>(2 * (n + 2 * cols)); // dx, dw, db, then their copies
        wk_upload(dy, hdy.data(), n), wk_upload(x, hx.data(), n), wk_upload(w, hw.data(), cols);
        wk_upload(m, hm.data(), sh.rows), wk_upload(rs, hr.data(), sh.rows);
        T *dx = out, *dw = out + n, *db = sh.rms ? nullptr : out + n + cols, *copy = out + n + 2 * cols;
        auto call = [&](void* ws, size_t* bytes) {
            return sh.rms ? warpkit::rowRmsNormBackward(dy, x, w, rs, dx, dw, sh.rows, sh.cols, ws, bytes, st)
                          : warpkit::rowLayerNormBackward(dy, x, w, m, rs, dx, dw, db, sh.rows, sh.cols, ws, bytes, st);
        };
        size_t bytes = 0;
        WK_CUDA(call(nullptr, &bytes));
        unsigned char* ws = wk_alloc<unsigned char>(bytes);
        // One run: poison, the call, the copies (captured: the graph's nodes).
        auto run = [&]() {
            cudaError_t e = call(ws, &bytes);
            if (e == cudaSuccess)
                e = cudaMemcpyAsync(copy, out, (n + 2 * cols) * sizeof(T), cudaMemcpyDeviceToDevice, st);
            return e;
        };
        auto poison = [&]() {
            WK_CUDA(cudaMemsetAsync(ws, 0xFF, bytes, st));
            WK_CUDA(cudaMemsetAsync(out, 0xFF, 2 * (n + 2 * cols) * sizeof(T), st));
        };
        std::vector<T> want(2 * (n + 2 * cols)), got(want.size());
        poison();
        WK_CUDA(run());
        WK_CUDA(cudaStreamSynchronize(st));
        wk_download(want.data(), out, want.size());
        const size_t used = sh.rms ? n + cols : n + 2 * cols; // RMSNorm: no db (left poisoned)
        if (memcmp(want.data(), want.data() + n + 2 * cols, used * sizeof(T)) != 0)
            cr_log_error("%s %lld x %d: the copies right after the call differ from the outputs", wk_type_name<T>(),
                         sh.rows, sh.cols),
                ++bad;
        for (size_t i = n; i < n + cols; ++i) // dw written (not the poison: 0xFF bytes are a NaN)
            if (isnan(wk_to_double(want[i])) && bad++ < 3)
                cr_log_error("%s %lld x %d: dw[%zu] NaN", wk_type_name<T>(), sh.rows, sh.cols, i - n);
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        WK_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
        const cudaError_t captured = run();
        WK_CUDA(cudaStreamEndCapture(st, &graph));
        cr_expect(captured == cudaSuccess, "%s %lld x %d: captured call: %s", wk_type_name<T>(), sh.rows, sh.cols,
                  cudaGetErrorString(captured));
        WK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
        for (int replay = 0; replay < 3; ++replay) {
            poison();
            WK_CUDA(cudaGraphLaunch(exec, st));
            WK_CUDA(cudaStreamSynchronize(st));
            wk_download(got.data(), out, got.size());
            if (memcmp(got.data(), want.data(), got.size() * sizeof(T)) != 0)
                cr_log_error("%s %lld x %d: graph replay %d differs from the direct call", wk_type_name<T>(), sh.rows,
                             sh.cols, replay),
                    ++bad;
        }
        WK_CUDA(cudaGraphExecDestroy(exec));
        WK_CUDA(cudaGraphDestroy(graph));
        cudaFree(dy), cudaFree(x), cudaFree(w), cudaFree(m), cudaFree(rs), cudaFree(out), cudaFree(ws);
    }
    WK_CUDA(cudaStreamDestroy(st));
    return bad;
}

Test(device_norm_backward, graph) {
    WK_REQUIRE_GPU();
    const int bad = nb_graph<float>() + nb_graph<__nv_bfloat16>();
    cr_expect(bad == 0, "captured into a graph: %d mismatches", bad);
}

/// The final sum's kernel on its own (N5), bit for bit against the same float additions on the host
/// (lane l's parts l, l + lanes, ... in order from +0, then the lanes' sums in lane order): every
/// lane count 1..32, parts 0, 1, fewer than the lanes, a multiple of them, the plan's most a thread
/// (16 x lanes) and past it (a second round of loads), columns 1, 33, 257 (partial blocks);
/// partials holding -0, NaN and +-inf among random values; one array and two.
template <typename T> static int nb_finish(void) {
    using warpkit::detail::NbFinish;
    int bad = 0, salt = 0;
    for (int lanes = 1; lanes <= warpkit::detail::kNbFinishMaxLanes; lanes *= 2)
        for (int parts : {0, 1, lanes > 2 ? lanes - 1 : 2, 3 * lanes, 16 * lanes, 16 * lanes + 5}) {
            for (int cols : {1, 33, 257}) {
                const int k = 1 + salt % 2;
                wk_rng r = wk_rng_make(0x5c00ull + salt++);
                const size_t n = (size_t)k * parts * cols;
                std::vector<float> h(n ? n : 1);
                for (float& v : h) {
                    const long long c = wk_int(&r, 0, 199);
                    v = c == 0                    ? -0.0f
                        : c == 1 && salt % 3 == 0 ? NAN
                        : c == 2 && salt % 5 == 0 ? INFINITY
                        : c == 3 && salt % 5 == 0 ? -INFINITY
                                                  : (float)wk_uniform(&r, -4.0, 4.0);
                }
                float* src = wk_alloc<float>(h.size());
                T* out = wk_alloc<T>(2 * (size_t)cols + 2);
                wk_upload(src, h.data(), h.size());
                wk_poison(out, 2 * (size_t)cols + 2);
                NbFinish<T> f{{src, src + (size_t)parts * cols}, {out, out + cols + 2}, parts, cols, lanes};
                const int per = warpkit::detail::kNbFinishThreads / lanes;
                warpkit::detail::normBackwardFinishKernel<T>
                    <<<dim3((unsigned)((cols + per - 1) / per), (unsigned)k), warpkit::detail::kNbFinishThreads>>>(f);
                WK_LAUNCHED();
                std::vector<T> got(2 * (size_t)cols + 2);
                wk_download(got.data(), out, got.size());
                for (int a = 0; a < k; ++a)
                    for (int c = 0; c < cols; ++c) {
                        float total = 0.0f;
                        for (int l = 0; l < lanes; ++l) {
                            float s = 0.0f;
                            for (int p = l; p < parts; p += lanes) s += h[((size_t)a * parts + p) * cols + c];
                            total = l == 0 ? s : total + s;
                        }
                        const T want = wk_from_double<T>((double)total), g = got[(size_t)a * (cols + 2) + c];
                        const bool same =
                            memcmp(&want, &g, sizeof(T)) == 0 || (isnan(wk_to_double(want)) && isnan(wk_to_double(g)));
                        if (!same && bad++ < 3)
                            cr_log_error("%s lanes %d parts %d cols %d: out[%d][%d] %.9g want %.9g", wk_type_name<T>(),
                                         lanes, parts, cols, a, c, wk_to_double(g), wk_to_double(want));
                    }
                std::vector<T> poison(got.size()); // wk_poison's bytes
                memset(static_cast<void*>(poison.data()), 0xA5, poison.size() * sizeof(T));
                for (size_t i = 0; i < got.size(); ++i) { // the guards, and the second array's columns with one
                    const bool out1 = i < (size_t)cols, out2 = k == 2 && i >= (size_t)cols + 2;
                    if (!out1 && !out2 && memcmp(&got[i], &poison[i], sizeof(T)) != 0 && bad++ < 3)
                        cr_log_error("%s lanes %d parts %d cols %d: element %zu written", wk_type_name<T>(), lanes,
                                     parts, cols, i);
                }
                cudaFree(src), cudaFree(out);
            }
        }
    return bad;
}

Test(device_norm_backward, finish) {
    WK_REQUIRE_GPU();
    const int bad = nb_finish<float>() + nb_finish<__half>() + nb_finish<__nv_bfloat16>();
    cr_expect(bad == 0, "the final sum's kernel: %d mismatches", bad);
}

/// Few rows of 64K columns (the split path, N2/N4: 32 or 33 slices x up to 12 parts): rows 1, 2,
/// 255, 256 and 257 (one part per row up to 12 rows, then 21-22 rows a part), columns 65535, 65536
/// and 65537 (a partial last slice, and the slice count's step). Aligned rows of 65536 take the
/// one-pass kernel (its row sums exchanged between the slices' blocks as they run); unaligned rows
/// (odd strides, or 65535 / 65537 columns) the two kernels, or with few rows (a grid that 2 blocks
/// an SM hold) the one-pass kernel with element loads. Every workspace starts with stale sums
/// records flagged ready. LayerNorm with and without db, RMSNorm, w null, NaN / inf / constant rows.
template <typename T> static int nb_wide(void) {
    struct Shape {
        long long rows;
        int cols;
    };
    static const Shape shapes[] = {{1, 65536}, {2, 65536},   {255, 65536}, {256, 65536}, {257, 65536},
                                   {2, 65535}, {256, 65535}, {2, 65537},   {257, 65537}};
    int bad = 0, salt = 0;
    for (const Shape& sh : shapes) {
        if (wk_thin(salt, 3)) {
            ++salt;
            continue;
        }
        const int s = salt++;
        const long long rows = sh.rows;
        const int cols = sh.cols, mode = s % 3 == 2 ? 1 : 0;
        const bool rms = s % 3 == 1;
        // Contiguous, aligned.
        NbCase a{rms, rows, cols, cols, cols, cols, 0, 0, 0, 0, 0, true, true, true, s % 2 == 0, 0, mode, true};
        bad += nb_case<T>("wide aligned", a, 0x5600ull + s);
        // Odd strides and offsets, w null on every other shape.
        NbCase o = nb_odd(rms, rows, cols, s % 2 == 1, mode ^ 1);
        o.staleSums = true;
        bad += nb_case<T>("wide odd", o, 0x5700ull + s);
    }
    return bad;
}

Test(device_norm_backward, wide) {
    WK_REQUIRE_GPU();
    const int bad = nb_wide<float>() + nb_wide<__half>() + nb_wide<__nv_bfloat16>();
    cr_expect(bad == 0, "few rows of 64K columns: %d mismatches", bad);
}

/// The one-pass kernel's pipeline (N2: each block publishes a row's slice sums before it waits on
/// the row before's totals, read by all its threads, kNbSliceThreads slices a round): rows of more
/// than 256 slices (two rounds of the wait: 257 and 270 slices, one part of 1 to 3 rows, the last
/// slice partial or whole), aligned (one pass) and odd (element loads: one pass where 2 blocks an
/// SM hold the grid, else two kernels), stale sums records in the workspace; and rows of 64 slices
/// whose parts hold 1 or 2 rows (rows 5 and 7: the pipeline's drain with no row ahead of it).
template <typename T> static int nb_pipeline(void) {
    struct Shape {
        long long rows;
        int cols;
    };
    static const Shape shapes[] = {{1, 257 * 2048}, {3, 270 * 2048}, {2, 270 * 2048 - 5}, {5, 131072}, {7, 131072}};
    int bad = 0, salt = 0;
    for (const Shape& sh : shapes) {
        const int s = salt++;
        const bool rms = s % 2 == 1;
        NbCase a{rms, sh.rows, sh.cols, sh.cols, sh.cols, sh.cols, 0, 0, 0, 0, 0, true, true, true, true, 0, 0, true};
        bad += nb_case<T>("pipeline aligned", a, 0x5900ull + s);
        NbCase o = nb_odd(rms, sh.rows, sh.cols, s % 2 == 0, s % 3 == 2 ? 1 : 0);
        o.staleSums = true;
        bad += nb_case<T>("pipeline odd", o, 0x5a00ull + s);
    }
    return bad;
}

Test(device_norm_backward, pipeline) {
    WK_REQUIRE_GPU();
    const int bad = nb_pipeline<float>() + nb_pipeline<__nv_bfloat16>();
    cr_expect(bad == 0, "one-pass pipeline: %d mismatches", bad);
}

/// The same values at 16-byte aligned addresses (the register path up to 8192 columns) and at odd
/// ones (the split path past 4096): dw and db have the same bits. Past 8192 columns both take the
/// split path, aligned rows in one pass (vector loads: the grid is resident at once on a GPU of 132
/// SMs or more; 10240: 5 x 76, 65536: 32 x 12 blocks), unaligned rows in two kernels (element loads:
/// 2 blocks an SM hold fewer than the grid), each thread holding the same columns either way: dx has
/// the same bits too. dw / db and dx are reported apart, with the first differing element.
template <typename T> static int nb_alignment(void) {
    int bad = 0;
    for (int cols : {4104, 6144, 8192, 10240, 65536}) {
        const long long rows = cols > 16384 ? 256 : 700; // 256 x 65536: 32 slices x 12 parts
        const size_t n = (size_t)rows * cols;
        wk_rng r = wk_rng_make(0x5300ull + cols);
        std::vector<T> hdy(n), hx(n), hw(cols);
        std::vector<float> hm(rows), hr(rows);
        for (T& v : hdy) v = wk_from_double<T>(wk_uniform(&r, -2.0, 2.0));
        for (T& v : hx) v = wk_from_double<T>(wk_uniform(&r, -3.0, 3.0));
        for (T& v : hw) v = wk_from_double<T>(wk_uniform(&r, -1.5, 1.5));
        for (long long q = 0; q < rows; ++q)
            hm[q] = (float)wk_uniform(&r, -0.1, 0.1), hr[q] = (float)wk_uniform(&r, 0.5, 2);
        std::vector<T> got[2];
        for (int off = 0; off < 2; ++off) { // off 1: every array one element past 16 bytes
            T* dy = wk_alloc<T>(n + 1);
            T* x = wk_alloc<T>(n + 1);
            T* w = wk_alloc<T>(cols + 1);
            T* dx = wk_alloc<T>(n + 1);
            T* dwb = wk_alloc<T>(2 * (size_t)cols + 2);
            float* m = wk_alloc<float>(rows);
            float* rs = wk_alloc<float>(rows);
            wk_poison(dx, n + 1), wk_poison(dwb, 2 * (size_t)cols + 2); // downloaded whole, gaps included
            wk_upload(dy + off, hdy.data(), n), wk_upload(x + off, hx.data(), n), wk_upload(w + off, hw.data(), cols);
            wk_upload(m, hm.data(), rows), wk_upload(rs, hr.data(), rows);
            size_t bytes = 0;
            WK_CUDA(warpkit::rowLayerNormBackward(dy + off, x + off, w + off, m, rs, dx + off, dwb + off,
                                                  dwb + cols + 1 + off, rows, cols, nullptr, &bytes));
            unsigned char* ws = wk_alloc<unsigned char>(bytes);
            WK_CUDA(warpkit::rowLayerNormBackward(dy + off, x + off, w + off, m, rs, dx + off, dwb + off,
                                                  dwb + cols + 1 + off, rows, cols, ws, &bytes));
            WK_CUDA(cudaDeviceSynchronize());
            std::vector<T> h(2 * (size_t)cols + 2);
            wk_download(h.data(), dwb, h.size());
            got[off].assign(h.begin() + off, h.begin() + off + cols);
            got[off].insert(got[off].end(), h.begin() + cols + 1 + off, h.begin() + 2 * cols + 1 + off);
            if (cols > warpkit::detail::kNbMaxColsVec) {
                std::vector<T> hx2(n + 1);
                wk_download(hx2.data(), dx, n + 1);
                got[off].insert(got[off].end(), hx2.begin() + off, hx2.begin() + off + n);
            }
            cudaFree(dy), cudaFree(x), cudaFree(w), cudaFree(dx), cudaFree(dwb), cudaFree(m), cudaFree(rs),
                cudaFree(ws);
        }
        for (int part = 0; part < 2; ++part) { // 0: dw and db, 1: dx (past 8192 columns)
            const size_t from = part == 0 ? 0 : 2 * (size_t)cols, end = part == 0 ? 2 * (size_t)cols : got[0].size();
            for (size_t i = from; i < end; ++i)
                if (memcmp(&got[0][i], &got[1][i], sizeof(T)) != 0) {
                    cr_log_error("%s cols %d: %s differ between aligned and unaligned rows (first at %zu: %g vs %g)",
                                 wk_type_name<T>(), cols, part == 0 ? "dw / db" : "dx", i - from,
                                 wk_to_double(got[0][i]), wk_to_double(got[1][i]));
                    ++bad;
                    break;
                }
        }
    }
    return bad;
}

Test(device_norm_backward, alignment) {
    WK_REQUIRE_GPU();
    const int bad = nb_alignment<float>() + nb_alignment<__half>() + nb_alignment<__nv_bfloat16>();
    cr_expect(bad == 0, "alignment: %d mismatches", bad);
}

/// The register path's rows in flight (nbRowsAhead: up to 3 rows' loads, dres's with them in the
/// Add calls): widths at and beside 768, 1024, 2048 and 4096 (vector slots; 767, 1023, 4095
/// unaligned: element slots), rows 1, 2 and enough that every block's groups take 5 or 6 rows (not
/// a multiple of the rows in flight: the loads past a part's last row), plain and Add calls (the
/// mixed form with a 16-bit residual where T is float), a NaN / inf / constant-row case per width.
template <typename T, typename R = T> static int nb_ahead(void) {
    int bad = 0, salt = 0;
    for (int cols : {760, 767, 768, 776, 1016, 1023, 1024, 1032, 2040, 2048, 4088, 4095, 4096}) {
        const warpkit::detail::NormBackwardPlan big =
            warpkit::detail::normBackwardPlan(1LL << 30, cols, cols % 8 == 0, (int)sizeof(T));
        const long long many = (long long)big.parts * (big.threads / big.group) * 5 + 3;
        for (long long rows : {1LL, 2LL, many}) {
            const int s = salt++;
            const bool rms = s % 3 == 1, odd = cols % 8 != 0;
            NbCase c = odd ? nb_odd(rms, rows, cols, true, 0)
                           : NbCase{rms, rows, cols, cols, cols, cols, 0, 0, 0, 0, 0, true, true, true, true, 0, 0};
            if (rows == 2) c.mode = 1;
            if (std::is_same<T, R>::value) bad += nb_case<T>("ahead", c, 0x5e00ull + s);
            bad += nb_case<T, R>("ahead add", c, 0x5f00ull + s, 0, nullptr, 1);
        }
    }
    return bad;
}

Test(device_norm_backward, rows_ahead) {
    WK_REQUIRE_GPU();
    const int bad =
        nb_ahead<float>() + nb_ahead<__nv_bfloat16>() + nb_ahead<__half>() + nb_ahead<float, __nv_bfloat16>();
    cr_expect(bad == 0, "the register path's rows in flight: %d mismatches", bad);
}

/// The size query of one form (0 plain, 1 Add; R other than T: the mixed Add) with every data pointer
/// null (ptrs false), or with made-up addresses (never read by a query) `off` elements past 16-byte
/// alignment and dw (outs & 1) and db (outs & 2) given.
template <typename T, typename R = T> static cudaError_t
nb_query(int form, bool rms, bool ptrs, int outs, int off, long long rows, int cols, long long ld, size_t* bytes) {
    auto at = [&](int i) { return ptrs ? reinterpret_cast<T*>((size_t)(i + 1) << 32) + off : (T*)nullptr; };
    const float* st = ptrs ? reinterpret_cast<const float*>((size_t)9 << 32) : nullptr;
    R* dr = ptrs ? reinterpret_cast<R*>((size_t)10 << 32) + off : nullptr;
    T *dy = at(0), *x = at(1), *w = at(2), *dx = at(3), *dres = at(6);
    T* dw = (outs & 1) ? at(4) : nullptr;
    T* db = (outs & 2) ? at(5) : nullptr;
    if constexpr (!std::is_same<T, R>::value) {
        return rms ? warpkit::rowRmsNormBackwardAdd(dy, x, w, st, dres, dx, dr, dw, rows, cols, ld, ld, ld, ld, ld,
                                                    nullptr, bytes)
                   : warpkit::rowLayerNormBackwardAdd(dy, x, w, st, st, dres, dx, dr, dw, db, rows, cols, ld, ld, ld,
                                                      ld, ld, nullptr, bytes);
    } else if (form == 1) {
        return rms ? warpkit::rowRmsNormBackwardAdd(dy, x, w, st, dres, dx, dw, rows, cols, ld, ld, ld, ld, nullptr,
                                                    bytes)
                   : warpkit::rowLayerNormBackwardAdd(dy, x, w, st, st, dres, dx, dw, db, rows, cols, ld, ld, ld, ld,
                                                      nullptr, bytes);
    }
    return rms ? warpkit::rowRmsNormBackward(dy, x, w, st, dx, dw, rows, cols, ld, ld, ld, nullptr, bytes)
               : warpkit::rowLayerNormBackward(dy, x, w, st, st, dx, dw, db, rows, cols, ld, ld, ld, nullptr, bytes);
}

/// Every form, shape and alignment: the query with null pointers succeeds and answers at least what
/// the query with pointers answers for any dw / db and alignment (so the call accepts it: two-call
/// rule), exactly that with dw and db both given; shapes still checked. Returns mismatches.
template <typename T, typename R = T> static int nb_bare_queries(void) {
    int bad = 0;
    for (int form = std::is_same<T, R>::value ? 0 : 1; form < 2; ++form)
        for (int rms = 0; rms < 2; ++rms)
            for (int cols : kNbCols)
                for (long long rows : {0LL, 1LL, 3LL, 1000LL, 100000LL}) {
                    const long long ld = cols + (cols % 3);
                    size_t bare = 0;
                    cudaError_t e = nb_query<T, R>(form, rms, false, 0, 0, rows, cols, ld, &bare);
                    if (e != cudaSuccess || bare < 1) {
                        cr_log_error("form %d rms %d rows %lld cols %d: null query %s, %zu bytes", form, rms, rows,
                                     cols, cudaGetErrorString(e), bare);
                        ++bad;
                        continue;
                    }
                    for (int outs = 0; outs < (rms ? 2 : 4); ++outs)
                        for (int off = 0; off < 2; ++off) {
                            size_t real = 0;
                            e = nb_query<T, R>(form, rms, true, outs, off, rows, cols, ld, &real);
                            const bool all = outs == (rms ? 1 : 3);
                            if (e != cudaSuccess || real > bare || (all && real != bare)) {
                                cr_log_error("form %d rms %d rows %lld cols %d outs %d off %d: %s, %zu bytes (null "
                                             "query %zu)",
                                             form, rms, rows, cols, outs, off, cudaGetErrorString(e), real, bare);
                                ++bad;
                            }
                        }
                    size_t keep = 77;
                    if (nb_query<T, R>(form, rms, false, 0, 0, rows, cols, cols - 1, &keep) != cudaErrorInvalidValue ||
                        nb_query<T, R>(form, rms, false, 0, 0, -1 - rows, cols, ld, &keep) != cudaErrorInvalidValue ||
                        nb_query<T, R>(form, rms, false, 0, 0, rows, cols, ld, nullptr) != cudaErrorInvalidValue ||
                        keep != 77) {
                        cr_log_error("form %d rms %d rows %lld cols %d: a bad shape accepted by the null query", form,
                                     rms, rows, cols);
                        ++bad;
                    }
                }
    return bad;
}

// Host only (the size query asks the GPU nothing): CUB's habit of querying with null data pointers.
Test(device_norm_backward, size_query_without_pointers) {
    const int bad = nb_bare_queries<float>() + nb_bare_queries<__half>() + nb_bare_queries<__nv_bfloat16>() +
                    nb_bare_queries<float, __nv_bfloat16>() + nb_bare_queries<float, __half>();
    cr_expect(bad == 0, "the size query without data pointers: %d mismatches", bad);
}

Test(device_norm_backward, bad_args) {
    WK_REQUIRE_GPU();
    const int n = 256;
    float* a = wk_alloc<float>(n); // dy, x, w, mean, rstd
    float* o = wk_alloc<float>(n); // dx, dw, db
    float* ws = wk_alloc<float>(4096);
    std::vector<float> ones(n, 1.0f), got(n), poison(n);
    wk_upload(a, ones.data(), n);
    wk_poison(o, n);
    wk_download(poison.data(), o, n);
    size_t need = 0;
    WK_CUDA(warpkit::rowLayerNormBackward(a, a, a, a, a, o, o + 64, o + 128, 4, 8, nullptr, &need));
    cr_expect(need > 0, "a workspace for dw and db");
    // Without dw and db: 1 byte, never 0 (an allocation of 0 bytes may be null, and the call a second query).
    size_t none = 7;
    WK_CUDA(warpkit::rowLayerNormBackward(a, a, a, a, a, o, (float*)nullptr, (float*)nullptr, 4, 8, nullptr, &none));
    cr_expect(none == 1, "1 byte without dw and db: %zu", none);
    // RMSNorm's dw alone needs less than LayerNorm's dw and db: each call gets one byte less than its own need.
    size_t needRms = 0;
    WK_CUDA(warpkit::rowRmsNormBackward(a, a, a, a, o, o + 64, 4, 8, nullptr, &needRms));
    cr_expect(needRms > 0 && needRms < need, "RMSNorm's workspace for dw alone: %zu (LayerNorm's %zu)", needRms, need);
    size_t small = need - 1, smallRms = needRms - 1, big = 4096 * sizeof(float);
    struct Bad {
        long long rows;
        int cols;
        long long lddy, ldx, lddx;
        int nulls;
        int alias;
        size_t* bytes;
        const char* what;
    };
    // nulls: 1 dy, 2 x, 4 mean, 8 rstd, 16 workspaceBytes; alias: 1 dx = dy, 2 dx = x
    const Bad bads[] = {
        {-1, 8, 8, 8, 8, 0, 0, &big, "rows < 0"},
        {4, -1, 8, 8, 8, 0, 0, &big, "cols < 0"},
        {4, 8, 7, 8, 8, 0, 0, &big, "lddy < cols"},
        {4, 8, 8, 7, 8, 0, 0, &big, "ldx < cols"},
        {4, 8, 8, 8, 7, 0, 0, &big, "lddx < cols"},
        {4, 8, 8, 8, 8, 1, 0, &big, "dy null"},
        {4, 8, 8, 8, 8, 2, 0, &big, "x null"},
        {4, 8, 8, 8, 8, 4, 0, &big, "mean null"},
        {4, 8, 8, 8, 8, 8, 0, &big, "rstd null"},
        {4, 8, 8, 8, 8, 16, 0, &big, "workspaceBytes null"},
        {4, 8, 8, 8, 16, 0, 1, &big, "dx = dy, lddx != lddy"},
        {4, 8, 8, 8, 16, 0, 2, &big, "dx = x, lddx != ldx"},
        {4, 8, 8, 8, 8, 0, 0, &small, "workspace too small"},
    };
    for (const Bad& b : bads) {
        const float* dy = (b.nulls & 1) ? nullptr : a;
        const float* x = (b.nulls & 2) ? nullptr : a + 64;
        const float* mean = (b.nulls & 4) ? nullptr : a;
        const float* rstd = (b.nulls & 8) ? nullptr : a;
        size_t* bytes = (b.nulls & 16) ? nullptr : b.bytes;
        size_t* bytesRms = bytes == &small ? &smallRms : bytes;
        const size_t keep = bytes ? *bytes : 0, keepRms = bytesRms ? *bytesRms : 0;
        float* dx = b.alias == 1 ? const_cast<float*>(dy) : b.alias == 2 ? const_cast<float*>(x) : o;
        const cudaError_t e1 = warpkit::rowLayerNormBackward(dy, x, a, mean, rstd, dx, o + 64, o + 128, b.rows, b.cols,
                                                             b.lddy, b.ldx, b.lddx, ws, bytes);
        cudaError_t e2 = cudaErrorInvalidValue;
        if (!(b.nulls & 4)) // RMSNorm has no mean
            e2 = warpkit::rowRmsNormBackward(dy, x, a, rstd, dx, o + 64, b.rows, b.cols, b.lddy, b.ldx, b.lddx, ws,
                                             bytesRms);
        cr_expect(e1 == cudaErrorInvalidValue && e2 == cudaErrorInvalidValue, "%s: got %s / %s", b.what,
                  cudaGetErrorString(e1), cudaGetErrorString(e2));
        cr_expect((!bytes || *bytes == keep) && (!bytesRms || *bytesRms == keepRms), "%s: workspaceBytes changed",
                  b.what);
        // The size query checks the shape, not the pointers (they may be null there, as in CUB's queries).
        const bool shape = b.bytes != &small && b.alias == 0 && (b.nulls & 15) == 0;
        size_t q = 0;
        const cudaError_t eq = warpkit::rowLayerNormBackward(dy, x, a, mean, rstd, dx, o + 64, o + 128, b.rows, b.cols,
                                                             b.lddy, b.ldx, b.lddx, nullptr, bytes ? &q : nullptr);
        cr_expect(shape ? eq == cudaErrorInvalidValue : eq == cudaSuccess, "%s: the size query answered %s", b.what,
                  cudaGetErrorString(eq));
    }
    // The Add calls: dres null, dx null, lddres < cols, dx = dres with another ld.
    struct BadAdd {
        const float* dres;
        float* dx;
        long long lddres, lddx;
        const char* what;
    };
    const BadAdd badAdds[] = {{nullptr, o, 8, 8, "dres null"},
                              {a + 128, nullptr, 8, 8, "dx null"},
                              {a + 128, o, 7, 8, "lddres < cols"},
                              {o, o, 8, 16, "dx = dres, lddx != lddres"}};
    for (const BadAdd& b : badAdds) {
        const cudaError_t e1 = warpkit::rowLayerNormBackwardAdd(a, a + 64, a, a, a, b.dres, b.dx, o + 64, o + 128, 4, 8,
                                                                8, 8, b.lddres, b.lddx, ws, &big);
        const cudaError_t e2 = warpkit::rowRmsNormBackwardAdd(a, a + 64, a, a, b.dres, b.dx, o + 64, 4, 8, 8, 8,
                                                              b.lddres, b.lddx, ws, &big);
        cr_expect(e1 == cudaErrorInvalidValue && e2 == cudaErrorInvalidValue, "Add calls, %s: got %s / %s", b.what,
                  cudaGetErrorString(e1), cudaGetErrorString(e2));
    }
    // The mixed Add calls: dr null, dr over dx, dres null, lddr < cols.
    __nv_bfloat16* dr16 = wk_alloc<__nv_bfloat16>(64);
    for (int k = 0; k < 4; ++k) {
        __nv_bfloat16* dr = k == 0 ? nullptr : k == 1 ? reinterpret_cast<__nv_bfloat16*>(o) : dr16;
        const float* dres = k == 2 ? nullptr : a + 128;
        const long long lddr = k == 3 ? 7 : 8;
        const cudaError_t e1 = warpkit::rowLayerNormBackwardAdd(a, a + 64, a, a, a, dres, o, dr, o + 64, o + 128, 4, 8,
                                                                8, 8, 8, 8, lddr, ws, &big);
        const cudaError_t e2 =
            warpkit::rowRmsNormBackwardAdd(a, a + 64, a, a, dres, o, dr, o + 64, 4, 8, 8, 8, 8, 8, lddr, ws, &big);
        cr_expect(e1 == cudaErrorInvalidValue && e2 == cudaErrorInvalidValue, "mixed Add calls, case %d: got %s / %s",
                  k, cudaGetErrorString(e1), cudaGetErrorString(e2));
    }
    cudaFree(dr16);
    // cols = 0: nothing to write (null pointers too), a workspace of 1 byte.
    size_t zero = 5;
    cr_expect(warpkit::rowLayerNormBackward<float>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                                   nullptr, 4, 0, nullptr, &zero) == cudaSuccess &&
                  zero == 1,
              "cols 0 query: success, 1 byte (%zu)", zero);
    cr_expect(warpkit::rowLayerNormBackward(a, a, a, a, a, o, o + 64, o + 128, 4, 0, ws, &big) == cudaSuccess,
              "cols 0: no-op");
    cr_expect(warpkit::rowRmsNormBackward(a, a, a, a, o, o + 64, 4, 0, ws, &big) == cudaSuccess, "cols 0: no-op");
    WK_LAUNCHED();
    wk_download(got.data(), o, n);
    cr_expect(memcmp(got.data(), poison.data(), n * sizeof(float)) == 0, "a rejected call or cols 0 wrote an output");
    // rows = 0: dw and db are zeros (an empty sum), dx untouched; a workspace of 1 byte (0 would let the
    // two-call pattern pass a null workspace: a second query, dw and db never written). Poisoned again
    // so that this check sees only the rows-0 calls.
    wk_poison(o, n);
    zero = 5;
    WK_CUDA(warpkit::rowLayerNormBackward<float>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                                 0, 8, nullptr, &zero));
    cr_expect(zero == 1, "rows 0: a workspace of 1 byte (%zu)", zero);
    size_t short0 = 0;
    cr_expect(warpkit::rowLayerNormBackward<float>(nullptr, nullptr, nullptr, nullptr, nullptr, o, o + 64, o + 128, 0,
                                                   8, ws, &short0) == cudaErrorInvalidValue,
              "rows 0: a workspace of 0 bytes refused (smaller than asked for)");
    WK_CUDA(warpkit::rowLayerNormBackward<float>(nullptr, nullptr, nullptr, nullptr, nullptr, o, o + 64, o + 128, 0, 8,
                                                 ws, &zero));
    WK_CUDA(warpkit::rowRmsNormBackward<float>(nullptr, nullptr, nullptr, nullptr, nullptr, o + 192, 0, 8, ws, &zero));
    WK_LAUNCHED();
    wk_download(got.data(), o, n);
    for (int i = 0; i < 8; ++i)
        cr_expect(got[64 + i] == 0.0f && got[128 + i] == 0.0f && got[192 + i] == 0.0f, "rows 0: dw, db zeros");
    cr_expect(memcmp(got.data(), poison.data(), 64 * sizeof(float)) == 0, "rows 0 wrote dx");
    cudaFree(a), cudaFree(o), cudaFree(ws);
}
