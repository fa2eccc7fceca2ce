// Tests of include/warpkit/device/softmax_backward.cuh (rowSoftmaxBackward), through the public
// call except where a plan is forced (every kernel of detail/row_kernels.cuh and row_staged.cuh on small inputs, under
// the sanitizers too).
//   fuzz:        seeded random shapes (rows 0, 1, many; cols 1..300000 and path edges +-1), strides
//                and pointer offsets of 0..7 elements for y, dy and dx (each aligned its own way),
//                dx over dy or over y, every kind and type; outputs poisoned first, everything
//                outside the rows checked untouched.
//   paths:       cols around every path boundary +-1, the dispatcher's plans for few and many rows,
//                and forced warp, block, cluster and streamed plans on 3 rows.
//   specials:    y from rows with NaN, +inf, all -inf and partly -inf logits (zeros, -inf and NaN in
//                y), NaN and inf in dy, on every path.
//   full_rows:   the full-row kernels (aligned rows of exactly a plan's slots) at their boundary (a
//                vector or an element short or over, y, dy, dx or an ld off 16 bytes: the general
//                kernels) against the reference, and bit for bit against the general kernels;
//                full_rows_plan (host only) pins which calls take them.
//   bad_args:    every bad argument returns cudaErrorInvalidValue and writes nothing.
//   concurrent:  two host threads on two streams at once.
#include "row_common.cuh"
#include "../softmax_common.cuh" // ref_softmax and fill_row give realistic y; floor_of
#include <warpkit/device/softmax_backward.cuh>
#include <vector>

using warpkit::detail::RowPlan;

struct SbCase {
    int kind;
    long long rows;
    int cols;
    long long ldy, lddy, lddx;
    int offY, offD, offX;
    int alias; // 0: dx separate, 1: dx over dy, 2: dx over y
    int mode;  // fill_row pattern of row 0's logits (row r uses mode + r); dy gets NaN / inf in modes 9, 10
};

/// Double-precision softmax backward of one row (the formula in IEEE double).
static void sb_ref(bool log_, const double* y, const double* dy, int n, double* dx, double* absSum) {
    double s = 0, a = 0;
    for (int i = 0; i < n; ++i) {
        s += log_ ? dy[i] : dy[i] * y[i];
        a += log_ ? fabs(dy[i]) : fabs(dy[i] * y[i]);
    }
    for (int i = 0; i < n; ++i) dx[i] = log_ ? dy[i] - exp(y[i]) * s : y[i] * (dy[i] - s);
    *absSum = a;
}

/// Runs one case (the dispatcher's plan, or `plan`) and checks it. Returns mismatches.
template <typename T>
static int sb_case(const char* what, const SbCase& c, uint64_t seed, const RowPlan* plan = nullptr, cudaStream_t st = 0) {
    wk_rng r = wk_rng_make(seed);
    const bool log_ = c.kind & warpkit::SoftmaxLog;
    const size_t span = (size_t)(c.rows > 0 ? c.rows - 1 : 0);
    const size_t ny = (size_t)c.offY + span * c.ldy + c.cols + 8, nd = (size_t)c.offD + span * c.lddy + c.cols + 8;
    const long long lddx = c.alias == 1 ? c.lddy : c.alias == 2 ? c.ldy : c.lddx;
    const size_t nx = c.alias == 1 ? nd : c.alias == 2 ? ny : (size_t)c.offX + span * c.lddx + c.cols + 8;
    std::vector<T> hy(ny), hd(nd), hx(nx), before;
    std::vector<double> logits(c.cols), yrow(c.cols);
    for (size_t i = 0; i < ny; ++i) hy[i] = wk_from_double<T>(wk_uniform(&r, -9.0, 9.0));
    for (size_t i = 0; i < nd; ++i) hd[i] = wk_from_double<T>(wk_uniform(&r, -9.0, 9.0));
    std::vector<T> tmp(c.cols);
    for (long long q = 0; q < c.rows; ++q) {
        const int m = c.mode + (int)q;
        fill_row<T>(&r, tmp.data(), c.cols, m % 11 < 9 ? m : 0);
        for (int i = 0; i < c.cols; ++i) logits[i] = wk_to_double(tmp[i]);
        ref_softmax(c.kind, logits.data(), c.cols, yrow.data());
        const double ds = (m & 1) ? 1.0 : 30.0;
        for (int i = 0; i < c.cols; ++i) {
            hy[c.offY + q * c.ldy + i] = wk_from_double<T>(yrow[i]);
            hd[c.offD + q * c.lddy + i] = wk_from_double<T>(wk_uniform(&r, -ds, ds));
        }
        if (m % 11 == 9) hd[c.offD + q * c.lddy + wk_int(&r, 0, c.cols - 1)] = wk_from_double<T>(NAN);
        if (m % 11 == 10) hd[c.offD + q * c.lddy + wk_int(&r, 0, c.cols - 1)] = wk_from_double<T>(m % 2 ? INFINITY : -INFINITY);
    }
    T* dyb = wk_alloc<T>(ny);
    T* ddb = wk_alloc<T>(nd);
    wk_upload(dyb, hy.data(), ny);
    wk_upload(ddb, hd.data(), nd);
    T* dxb = c.alias == 1 ? ddb : c.alias == 2 ? dyb : wk_alloc<T>(nx);
    if (c.alias == 0) wk_poison(dxb, nx);
    before.resize(nx);
    wk_download(before.data(), dxb, nx);
    T* xp = dxb + (c.alias == 1 ? c.offD : c.alias == 2 ? c.offY : c.offX);
    cudaError_t e;
    if (plan) {
        int dev = 0;
        warpkit::detail::DeviceProps d;
        WK_CUDA(warpkit::detail::currentDevice(&dev, &d));
        const warpkit::detail::SoftmaxBackwardParams<T> p{dyb + c.offY, ddb + c.offD, xp, c.ldy, c.lddy, lddx, log_};
        e = warpkit::detail::rowOpRun(*plan, p, c.rows, c.cols, dev, d, st);
    } else {
        e = warpkit::rowSoftmaxBackward(dyb + c.offY, ddb + c.offD, xp, c.rows, c.cols, (warpkit::SoftmaxKind)c.kind, c.ldy, c.lddy, lddx, st);
    }
    int bad = 0;
    if (e != cudaSuccess) {
        cr_log_error("%s %s: rowSoftmaxBackward(%lld x %d, kind %d) returned %s", what, wk_type_name<T>(), c.rows, c.cols, c.kind,
                     cudaGetErrorString(e));
        bad = 1;
    }
    WK_CUDA(cudaStreamSynchronize(st));
    WK_CUDA(cudaGetLastError());
    wk_download(hx.data(), dxb, nx);
    const size_t x0 = (size_t)(xp - dxb);
    std::vector<double> yd(c.cols), dd(c.cols), xd(c.cols);
    const double tolOut = sizeof(T) == 4 ? 1e-6 : wk_eps<T>();
    for (long long q = 0; q < c.rows && bad < 3; ++q) {
        for (int i = 0; i < c.cols; ++i) {
            yd[i] = wk_to_double(hy[c.offY + q * c.ldy + i]);
            dd[i] = wk_to_double(hd[c.offD + q * c.lddy + i]);
        }
        double a;
        sb_ref(log_, yd.data(), dd.data(), c.cols, xd.data(), &a);
        for (int i = 0; i < c.cols && bad < 3; ++i) {
            const double got = wk_to_double(hx[x0 + q * lddx + i]), want = xd[i];
            // The sum's rounding grows with the sum of the terms' sizes (a); then one rounding to T.
            const double mag = log_ ? fabs(dd[i]) + exp(yd[i]) * a : fabs(yd[i]) * (fabs(dd[i]) + a);
            const double bound = 1e-5 * mag + tolOut * fabs(want) + floor_of<T>();
            const bool ok = isnan(want) ? isnan(got) : isinf(want) ? got == want : isfinite(got) && fabs(got - want) <= bound;
            if (!ok)
                cr_log_error("%s %s kind %d: %lld x %d (ld %lld/%lld/%lld, off %d/%d, alias %d) row %lld col %d: got %.9g want %.9g (y %.9g dy %.9g)",
                             what, wk_type_name<T>(), c.kind, c.rows, c.cols, c.ldy, c.lddy, lddx, c.offY, c.offD, c.alias, q, i, got,
                             want, yd[i], dd[i]), ++bad;
        }
    }
    int touched = 0;
    for (size_t i = 0; i < nx && touched < 3; ++i) {
        const bool inRow = i >= x0 && (long long)((i - x0) % lddx) < c.cols && (long long)((i - x0) / lddx) < c.rows;
        if (!inRow && memcmp(&hx[i], &before[i], sizeof(T)) != 0 && touched++ == 0)
            cr_log_error("%s %s: %lld x %d: element %zu outside the rows was written", what, wk_type_name<T>(), c.rows, c.cols, i);
    }
    cudaFree(dyb);
    cudaFree(ddb);
    if (c.alias == 0) cudaFree(dxb);
    return bad + touched;
}

template <typename T> static int sb_fuzz_one(wk_rng* r, long long budget, int iter) {
    SbCase c;
    c.kind = (int)wk_int(r, 0, 3);
    row_draw_shape(r, budget, &c.rows, &c.cols);
    c.ldy = row_draw_ld(r, c.cols);
    c.lddy = row_draw_ld(r, c.cols);
    c.lddx = row_draw_ld(r, c.cols);
    c.offY = (int)wk_int(r, 0, 7);
    c.offD = (int)wk_int(r, 0, 7);
    c.offX = (int)wk_int(r, 0, 7);
    c.alias = (int)wk_int(r, 0, 5) < 4 ? 0 : (int)wk_int(r, 1, 2);
    c.mode = (int)wk_int(r, 0, 3);
    return sb_case<T>("fuzz", c, 0x5b000ull + iter);
}

Test(device_softmax_backward, fuzz) {
    WK_REQUIRE_GPU();
    row_fuzz("rowSoftmaxBackward", 7301, wk_quick() ? 40 : 300, sb_fuzz_one<float>, sb_fuzz_one<__half>,
             sb_fuzz_one<__nv_bfloat16>);
}

template <typename T> static int sb_paths(int* seen) {
    const warpkit::detail::DeviceProps d = row_props();
    std::vector<int> cols = {1, 3, 5, 8, 9, 12, 17, 31, 33, 40, 67, 127, 255, 257, 513, 1023, 1025, 2047, 2049, 4095,
                             4097, 8191, 8193, 16383, 16385, 32767, 32769, 65535, 65537, 131071, 131073, 262143, 262145};
    if (!wk_quick()) cols.push_back(300007);
    int bad = 0, salt = 0;
    for (int c : row_thinned(cols)) {
        for (const RowPlan& p : row_forced_plans<warpkit::detail::SoftmaxBackwardParams<T>>(c, d, 6, 4)) {
            seen[p.path] = 1;
            // y, dy and dx each aligned its own way; every third case in place over dy or y.
            SbCase k{salt % 4, 3, c, (long long)c + 3, (long long)c + 1, (long long)c + 5, 3, 6, 1, salt % 3, salt % 4};
            bad += sb_case<T>("paths (forced plan)", k, 0x5c000ull + salt++, &p);
            const long long ld = (long long)(c + 7) / 8 * 8;
            SbCase a{salt % 2, 3, c, ld, ld, ld, 0, 0, 0, 0, 1};
            bad += sb_case<T>("paths (forced plan, aligned)", a, 0x5c800ull + salt++, &p);
            // y and dy aligned alike (staged plans stage both), rows not on 16 bytes, dx its own way.
            SbCase m{salt % 4, 3, c, (long long)c + 3, (long long)c + 3, (long long)c + 5, 3, 3, 1, 0, salt % 4};
            bad += sb_case<T>("paths (forced plan, y and dy alike)", m, 0x5ca00ull + salt++, &p);
        }
    }
    if (!wk_quick()) {
        for (int c : {1000, 4097, 40009, 100003}) {
            const long long rows = row_many_rows(d, c);
            SbCase many{c % 2 ? warpkit::SoftmaxPlain : warpkit::SoftmaxLog, rows, c, (long long)c + 5, (long long)c, (long long)c + 1,
                        2, 0, 1, 0, 0};
            bad += sb_case<T>("paths (many rows)", many, 0x5cc00ull + salt++);
        }
    }
    return bad;
}

Test(device_softmax_backward, paths) {
    WK_REQUIRE_GPU();
    int seen[4] = {0, 0, 0, 0};
    row_expect_paths("rowSoftmaxBackward", sb_paths<float>(seen) + sb_paths<__half>(seen) + sb_paths<__nv_bfloat16>(seen),
                     seen);
}

/// y from special logits (NaN, +inf, all -inf, every third -inf, half -inf: NaN, zeros and -inf in
/// y), NaN and +-inf in dy, every kind, at a column count of each path.
template <typename T> static int sb_specials(void) {
    int bad = 0, salt = 0;
    for (int c : {7, 200, 2047, 5000, 20000, 70001, 262144, 300007}) {
        if (wk_quick() && c > 200000) continue;
        for (int kind = 0; kind < 4; ++kind)
            for (int mode = 4; mode < 11; ++mode) {
                if (wk_thin(salt, 4)) { ++salt; continue; }
                SbCase k{kind, 2, c, (long long)c, (long long)c, (long long)c, 0, 0, 0, 0, mode};
                bad += sb_case<T>("specials", k, 0x5d000ull + salt++);
            }
    }
    return bad;
}

Test(device_softmax_backward, specials) {
    WK_REQUIRE_GPU();
    const int bad = sb_specials<float>() + sb_specials<__half>() + sb_specials<__nv_bfloat16>();
    cr_expect(bad == 0, "rowSoftmaxBackward special rows: %d mismatches", bad);
}

/// Widths whose aligned rows fill every slot of their plan on an H100-sized device (132 SMs, clusters),
/// few rows (warp segments of 8 to 32 lanes x 1 to 8 vectors, fp32 768's R25 shape, blocks and
/// clusters of blocks); bf16 768 (32 lanes x 4 vectors, 1024 slots) is not full.
static const int kSbFull[] = {32, 64, 128, 256, 512, 768, 1024, 2048, 4096, 8192, 16384, 32768};
static const int kNSbFull = sizeof(kSbFull) / sizeof(kSbFull[0]);

/// Whether the call of y, dy, dx (row strides ld) of rows x cols takes a full-row kernel on a device
/// of 132 SMs with clusters.
template <typename T> static bool sb_runs_full(const T* y, const T* dy, T* dx, long long rows, int cols, long long ldy,
                                               long long lddy, long long lddx) {
    using namespace warpkit::detail;
    const SoftmaxBackwardParams<T> p{y, dy, dx, ldy, lddy, lddx, false};
    return rowRunsFull(rowPlanFor(rowOpQuery(p, rows, cols, 132, true, false)), p, cols, rowAligned(p, cols));
}

/// Which calls take the full-row kernels (host only; no pointer is read): the widths above and the
/// 16384 x 1024 rows of torch_ops (fp32: the warp segment of 32 lanes x 8 vectors, bf16: x 4) do,
/// rows past the block path's (the staged path), a vector or an element short or over, and any
/// pointer or ld off 16 bytes do not.
template <typename T> static int sb_full_plans(void) {
    constexpr int V = warpkit::vectorElems<T>();
    alignas(16) static T buf[64];
    T *y = buf, *d = buf + 16, *x = buf + 32;
    int bad = 0;
    for (int c : kSbFull) {
        const bool full = sizeof(T) == 4 || c != 768;
        if (sb_runs_full(y, d, x, 45, c, c, c, c) != full)
            cr_log_error("%s cols %d: full-row kernel %d, want %d", wk_type_name<T>(), c, !full, full), ++bad;
        const bool no[] = {
            sb_runs_full(y, d, x, 45, c - V, c, c, c),        sb_runs_full(y, d, x, 45, c + 1, c + 1, c + 1, c + 1),
            sb_runs_full(y, d, x, 45, c - 1, c, c, c),        sb_runs_full(y + 1, d, x, 45, c, c, c, c),
            sb_runs_full(y, d + 1, x, 45, c, c, c, c),        sb_runs_full(y, d, x + 1, 45, c, c, c, c),
            sb_runs_full(y, d, x, 45, c, c + 1, c + 1, c + 1)};
        for (int k = 0; k < 7; ++k)
            if (no[k]) cr_log_error("%s cols %d: case %d takes the full-row kernel", wk_type_name<T>(), c, k), ++bad;
    }
    if (!sb_runs_full(y, d, x, 16384, 1024, 1024, 1024, 1024))
        cr_log_error("%s 16384 x 1024: no full-row kernel", wk_type_name<T>()), ++bad;
    if (sb_runs_full(y, d, x, 16384, 16384, 16384, 16384, 16384))
        cr_log_error("%s 16384 x 16384 (staged): a full-row kernel", wk_type_name<T>()), ++bad;
    return bad;
}

Test(device_softmax_backward, full_rows_plan) {
    const int bad = sb_full_plans<float>() + sb_full_plans<__half>() + sb_full_plans<__nv_bfloat16>();
    cr_expect(bad == 0, "rowSoftmaxBackward full-row kernel selection: %d wrong", bad);
}

/// The full-row kernels against the reference at their boundary (the full widths, a vector and an
/// element short and over: those take the general kernels, as do y, dy, dx or ld off 16 bytes), every
/// kind, in place over dy and y, the NaN / inf patterns of dy (modes 9, 10) among the rows.
template <typename T> static int sb_full_rows(void) {
    constexpr int V = warpkit::vectorElems<T>();
    int bad = 0, salt = 0;
    row_full_shapes(kSbFull, kNSbFull, V, [&](int c, int d, long long rows) {
        for (int k = 0; k < 4; ++k) {
            SbCase a{k, rows, c, (long long)c, (long long)c, (long long)c, 0, 0, 0, k % 3, 7 + k};
            bad += sb_case<T>("full rows", a, 0x5f000ull + salt++);
        }
        if (d != 0) return;
        for (int k = 0; k < 4; ++k) { // one pointer or ld off 16 bytes: the general kernels
            SbCase m{k, rows, c, (long long)c, (long long)c, (long long)c, k == 0, k == 1 ? 2 : 0, k == 2 ? 3 : 0,
                     0, 9};
            if (k == 3) m.ldy = m.lddy = m.lddx = c + 1;
            bad += sb_case<T>("full rows (general kernel beside)", m, 0x5f400ull + salt++);
        }
    });
    return bad;
}

/// The full-row kernels give the general aligned kernels' bits: the same rows (NaN and inf among
/// them) through both instantiations of the dispatcher's plan, dx compared bit for bit (NaN as NaN).
template <typename T> static int sb_full_same(void) {
    using namespace warpkit::detail;
    int bad = 0, ran = 0;
    for (int c : kSbFull) {
        const long long rows = c >= 8192 ? 3 : 45;
        const size_t n = (size_t)rows * c;
        wk_rng r = wk_rng_make(0x5f800ull + c);
        std::vector<T> hy(n), hd(n);
        for (size_t j = 0; j < n; ++j) {
            hy[j] = wk_from_double<T>(wk_uniform(&r, 0.0, 2.0 / c));
            hd[j] = wk_from_double<T>(wk_uniform(&r, -9.0, 9.0));
        }
        hd[(size_t)wk_int(&r, 0, c - 1)] = wk_from_double<T>(NAN);               // row 0: NaN
        hd[(size_t)c + wk_int(&r, 0, c - 1)] = wk_from_double<T>(INFINITY);      // row 1: inf
        hy[(size_t)2 * c + wk_int(&r, 0, c - 1)] = wk_from_double<T>(-INFINITY); // row 2: -inf in y
        T* dy = wk_alloc<T>(n);
        T* dd = wk_alloc<T>(n);
        T* dx[2] = {wk_alloc<T>(n), wk_alloc<T>(n)};
        wk_upload(dy, hy.data(), n);
        wk_upload(dd, hd.data(), n);
        for (int lg = 0; lg < 2; ++lg) {
            std::vector<T> hx[2];
            for (int full = 0; full < 2; ++full) {
                wk_poison(dx[full], n);
                const SoftmaxBackwardParams<T> p{dy, dd, dx[full], c, c, c, lg == 1};
                if (!row_run_full(p, rows, c, full == 1)) continue;
                hx[full].resize(n);
                wk_download(hx[full].data(), dx[full], n);
            }
            if (hx[0].empty() || hx[1].empty()) continue;
            ++ran;
            int diff = 0;
            for (size_t j = 0; j < n; ++j) {
                const double a = wk_to_double(hx[0][j]), b = wk_to_double(hx[1][j]);
                diff += !((isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0);
            }
            if (diff) {
                cr_log_error("%s %s cols %d: full and general kernels differ in %d values", wk_type_name<T>(),
                             lg ? "log" : "plain", c, diff);
                bad += diff;
            }
        }
        for (void* q : {(void*)dy, (void*)dd, (void*)dx[0], (void*)dx[1]}) cudaFree(q);
    }
    if (ran == 0 && row_props().clusters) cr_log_error("%s: no width ran a full-row kernel", wk_type_name<T>()), ++bad;
    return bad;
}

Test(device_softmax_backward, full_rows) {
    WK_REQUIRE_GPU();
    const int bad = sb_full_rows<float>() + sb_full_rows<__half>() + sb_full_rows<__nv_bfloat16>() +
                    sb_full_same<float>() + sb_full_same<__half>() + sb_full_same<__nv_bfloat16>();
    cr_expect(bad == 0, "rowSoftmaxBackward full rows: %d mismatches", bad);
}

Test(device_softmax_backward, bad_args) {
    WK_REQUIRE_GPU();
    const int n = 64;
    float* dy = wk_alloc<float>(n);
    float* dd = wk_alloc<float>(n);
    float* dx = wk_alloc<float>(n);
    std::vector<float> hy(n, 0.5f), hx(n), poison(n);
    wk_upload(dy, hy.data(), n);
    wk_upload(dd, hy.data(), n);
    wk_poison(dx, n);
    wk_download(poison.data(), dx, n);
    struct Bad { long long rows; int cols; int kind; long long ldy, lddy, lddx; int nulls; int alias; const char* what; };
    // nulls: 1 y, 2 dy, 4 dx; alias: 1 dx = dy, 2 dx = y
    const Bad bads[] = {
        {-1, 8, 0, 8, 8, 8, 0, 0, "rows < 0"},
        {2, -3, 0, 8, 8, 8, 0, 0, "cols < 0"},
        {2, 8, 0, 7, 8, 8, 0, 0, "ldy < cols"},
        {2, 8, 0, 8, 7, 8, 0, 0, "lddy < cols"},
        {2, 8, 0, 8, 8, 7, 0, 0, "lddx < cols"},
        {2, 8, 0, 8, 8, 8, 1, 0, "y null"},
        {2, 8, 0, 8, 8, 8, 2, 0, "dy null"},
        {2, 8, 0, 8, 8, 8, 4, 0, "dx null"},
        {2, 8, 4, 8, 8, 8, 0, 0, "kind 4"},
        {2, 8, -1, 8, 8, 8, 0, 0, "kind -1"},
        {2, 8, 0, 8, 8, 16, 0, 1, "dx = dy with lddx != lddy"},
        {2, 8, 0, 8, 8, 16, 0, 2, "dx = y with lddx != ldy"},
    };
    for (const Bad& b : bads) {
        const float* y = (b.nulls & 1) ? nullptr : dy;
        const float* d = (b.nulls & 2) ? nullptr : dd;
        float* x = (b.nulls & 4) ? nullptr : b.alias == 1 ? dd : b.alias == 2 ? dy : dx;
        const cudaError_t e = warpkit::rowSoftmaxBackward(y, d, x, b.rows, b.cols, (warpkit::SoftmaxKind)b.kind, b.ldy, b.lddy, b.lddx);
        cr_expect(e == cudaErrorInvalidValue, "rowSoftmaxBackward with %s: got %s, want cudaErrorInvalidValue", b.what,
                  cudaGetErrorString(e));
    }
    cr_expect(warpkit::rowSoftmaxBackward<float>(nullptr, nullptr, nullptr, 0, 5) == cudaSuccess, "rows 0 with null pointers: no-op");
    // cols = 0: a no-op that writes nothing, with or without pointers.
    cr_expect(warpkit::rowSoftmaxBackward(dy, dd, dx, 2, 0) == cudaSuccess, "cols 0: no-op");
    cr_expect(warpkit::rowSoftmaxBackward<float>(nullptr, nullptr, nullptr, 2, 0) == cudaSuccess,
              "cols 0 with null pointers: no-op");
    WK_LAUNCHED();
    wk_download(hx.data(), dx, n);
    std::vector<float> y2(n), d2(n);
    wk_download(y2.data(), dy, n);
    wk_download(d2.data(), dd, n);
    cr_expect(memcmp(hx.data(), poison.data(), n * sizeof(float)) == 0, "a rejected call wrote dx");
    cr_expect(memcmp(y2.data(), hy.data(), n * sizeof(float)) == 0 && memcmp(d2.data(), hy.data(), n * sizeof(float)) == 0,
              "a rejected call wrote y or dy");
    cudaFree(dy);
    cudaFree(dd);
    cudaFree(dx);
}

/// Two host threads, each with its own stream, each running a series of shapes at once.
Test(device_softmax_backward, concurrent) {
    WK_REQUIRE_GPU();
    static const int cols[] = {33, 1000, 4097, 16385, 50257, 151936};
    const int bad = wk_two_threads(12, false, [&](int w, int i, cudaStream_t st) {
        const int c = cols[(i + w) % 6];
        SbCase k{i & 3, c > 20000 ? 4 : 300, c, (long long)c + w, (long long)c, (long long)c + 2 * w, w, 0, 2 * w, i % 3, i};
        return (i + w) % 2 ? sb_case<float>("concurrent", k, 0x5e000ull + 100 * w + i, nullptr, st)
                           : sb_case<__nv_bfloat16>("concurrent", k, 0x5e000ull + 100 * w + i, nullptr, st);
    });
    cr_expect(bad == 0, "rowSoftmaxBackward from two threads / streams at once: %d mismatches", bad);
}
