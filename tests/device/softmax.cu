// Tests of include/warpkit/device/softmax.cuh (rowSoftmax), all through the public call except
// `paths`, which also runs each path's plan on shapes the dispatcher would give another path
// (so that every kernel runs on small inputs, under the sanitizers too).
//   fuzz:        seeded random rows (0, 1, many), cols 1..300000, row strides and pointer offsets
//                of 0..7 elements, every type and kind, in place; outputs poisoned first, and
//                every element between and around the rows checked untouched.
//   paths:       each path's boundaries +-1 with many and with few rows, every type, plain and log.
//   specials:    NaN, +inf, all -inf rows, whole -inf slices, on every path.
//   short_rows:  the short path (R24): every length 1..256, every type, as the dispatcher plans it
//                and with the short plan forced, row counts past two tiles and not a multiple of the
//                rows that fill whole vectors, every row pattern (NaN, +-inf, all -inf) in each
//                tile, in place; its fall-backs (misaligned base, ld != cols), rows = 0, and
//                determinism.
//   few_long_rows: 1..8 and 17 rows of 32000..262144 columns (R6, R7, R28, R8 clusters),
//                every kind, misaligned, row strides, special rows, in place; determinism.
//   bad_args:    every bad argument returns cudaErrorInvalidValue and writes nothing.
//   concurrent:  two host threads on two streams at once (and on two devices where there are two).
#include "row_common.cuh"
#include "../softmax_common.cuh"
#include <warpkit/device/softmax.cuh>

using warpkit::SoftmaxKind;

struct SmCase {
    int kind;
    long long rows;
    int cols;
    long long ldx, ldy;
    int offX, offY; // pointer offsets in elements
    bool inplace;
    int mode; // fill_row pattern of row 0 (row r uses mode + r)
};

/// Runs one case: a fresh x buffer (rows at offX + r * ldx, anything else random filler), y either
/// x itself or a poisoned buffer; checks the rows against the reference and every other element
/// of y unchanged. `plan` (optional): run that plan instead of the dispatcher's. Returns mismatches.
template <typename T>
static int sm_case(const char* what, const SmCase& c, uint64_t seed, const warpkit::detail::RowPlan* plan = nullptr,
                   cudaStream_t st = 0) {
    wk_rng r = wk_rng_make(seed);
    const size_t nx = (size_t)c.offX + (size_t)(c.rows > 0 ? c.rows - 1 : 0) * c.ldx + c.cols + 8;
    const size_t ny = c.inplace ? nx : (size_t)c.offY + (size_t)(c.rows > 0 ? c.rows - 1 : 0) * c.ldy + c.cols + 8;
    std::vector<T> hx(nx), hy(ny), before(ny);
    for (size_t i = 0; i < nx; ++i) hx[i] = wk_from_double<T>(wk_uniform(&r, -50.0, 50.0));
    for (long long q = 0; q < c.rows; ++q) fill_row<T>(&r, &hx[c.offX + (size_t)q * c.ldx], c.cols, c.mode + (int)q);
    T* dx = wk_alloc<T>(nx);
    wk_upload(dx, hx.data(), nx);
    T* dy = dx;
    if (c.inplace) {
        before = hx;
    } else {
        dy = wk_alloc<T>(ny);
        wk_poison(dy, ny);
        wk_download(before.data(), dy, ny);
    }
    const long long ldy = c.inplace ? c.ldx : c.ldy;
    T* yp = dy + (c.inplace ? c.offX : c.offY);
    cudaError_t e;
    if (plan) {
        int dev = 0;
        warpkit::detail::DeviceProps d;
        WK_CUDA(warpkit::detail::currentDevice(&dev, &d));
        const bool masked = (c.kind & warpkit::SoftmaxMasked) != 0;
        using LogRows = warpkit::detail::SoftmaxRows<T, warpkit::SoftmaxLog>;
        using PlainRows = warpkit::detail::SoftmaxRows<T, warpkit::SoftmaxPlain>;
        e = (c.kind & warpkit::SoftmaxLog)
                ? warpkit::detail::rowRun(*plan, LogRows{dx + c.offX, yp, c.ldx, ldy, masked}, c.rows, c.cols, dev, d,
                                          st)
                : warpkit::detail::rowRun(*plan, PlainRows{dx + c.offX, yp, c.ldx, ldy, masked}, c.rows, c.cols, dev, d,
                                          st);
    } else {
        e = warpkit::rowSoftmax(dx + c.offX, yp, c.rows, c.cols, (SoftmaxKind)c.kind, c.ldx, ldy, st);
    }
    int bad = 0;
    if (e != cudaSuccess) {
        cr_log_error("%s %s: rowSoftmax(%lld x %d, kind %d, ld %lld/%lld, off %d/%d%s) returned %s", what, wk_type_name<T>(),
                     c.rows, c.cols, c.kind, c.ldx, ldy, c.offX, c.offY, c.inplace ? ", in place" : "", cudaGetErrorString(e));
        bad = 1;
    }
    WK_CUDA(cudaStreamSynchronize(st));
    WK_CUDA(cudaGetLastError());
    wk_download(hy.data(), dy, ny);
    if (!bad) bad = check_rows_ld(what, c.kind, &hx[c.offX], c.ldx, &hy[yp - dy], ldy, c.rows, c.cols);
    // Everything outside the rows' [0, cols) is as it was.
    const size_t y0 = (size_t)(yp - dy);
    int touched = 0;
    for (size_t i = 0; i < ny && touched < 3; ++i) {
        const bool inRow = i >= y0 && (long long)((i - y0) % ldy) < c.cols && (long long)((i - y0) / ldy) < c.rows;
        if (!inRow && memcmp(&hy[i], &before[i], sizeof(T)) != 0) {
            if (touched++ == 0)
                cr_log_error("%s %s: %lld x %d (ld %lld, off %d): element %zu outside the rows was written", what,
                             wk_type_name<T>(), c.rows, c.cols, ldy, (int)y0, i);
        }
    }
    cudaFree(dx);
    if (!c.inplace) cudaFree(dy);
    return bad + touched;
}

template <typename T> static int sm_fuzz_one(wk_rng* r, long long budget, int iter) {
    SmCase c;
    c.kind = (int)wk_int(r, 0, 3);
    row_draw_shape(r, budget, &c.rows, &c.cols);
    c.ldx = row_draw_ld(r, c.cols);
    c.ldy = row_draw_ld(r, c.cols);
    c.offX = (int)wk_int(r, 0, 7);
    c.offY = (int)wk_int(r, 0, 7);
    c.inplace = wk_int(r, 0, 4) == 0;
    c.mode = (int)wk_int(r, 0, 35);
    return sm_case<T>("fuzz", c, 0xf0220000ull + iter, nullptr);
}

Test(device_softmax, fuzz) {
    WK_REQUIRE_GPU();
    row_fuzz("rowSoftmax", 7001, wk_quick() ? 45 : 330, sm_fuzz_one<float>, sm_fuzz_one<__half>,
             sm_fuzz_one<__nv_bfloat16>);
}

/// Each of the dispatcher's paths: for every type and kind plain/log, the columns around each
/// path's edges with few rows (the dispatcher's plan), and the plan it gives many rows forced
/// onto 3 rows (in place, misaligned), so every kernel runs on small inputs, under the sanitizers
/// too; then a few shapes with really many rows (past one wave of the few-rows rule), so that the
/// row-length rules choose. Odd offsets and strides throughout.
template <typename T> static int sm_paths(int* seen) {
    const warpkit::detail::DeviceProps d = row_props();
    const bool quick = wk_quick();
    std::vector<int> cols = {1, 3, 5, 8, 9, 31, 33, 127, 255, 257, 513, 1023, 1025, 2047, 2049, 4095, 4097, 8191, 8193,
                             16383, 16385, 32767, 32769, 40009, 65535, 65537, 100003, 131073, 262143, 262145, 300007};
    if (!quick) cols.push_back(sizeof(T) == 4 ? 400009 : 600011); // the streamed path on sm_90
    int bad = 0, salt = 0;
    for (int c : row_thinned(cols)) {
        for (int kind : {warpkit::SoftmaxPlain, warpkit::SoftmaxLog}) {
            seen[warpkit::detail::rowPlanFor(warpkit::detail::rowSoftmaxQuery((int)sizeof(T), 3, c, d.sms, d.clusters))
                     .path] = 1;
            SmCase few{kind, 3, c, (long long)c + 3, (long long)c + 1, 3, 5, false, salt};
            bad += sm_case<T>("paths (3 rows)", few, 0x9a000ull + salt++);
            const warpkit::detail::RowPlan p = warpkit::detail::rowPlanFor(
                warpkit::detail::rowSoftmaxQuery((int)sizeof(T), 1LL << 24, c, d.sms, d.clusters));
            seen[p.path] = 1;
            SmCase forced{kind | warpkit::SoftmaxMasked, 3, c, (long long)c + 7, (long long)c + 7, 1, 1, true, 8 + salt};
            bad += sm_case<T>("paths (many-rows plan on 3 rows)", forced, 0x9b000ull + salt++, &p);
        }
    }
    if (!quick) {
        for (int c : {4097, 40009, 100003, sizeof(T) == 4 ? 400009 : 600011}) {
            const long long rows = row_many_rows(d, c);
            SmCase many{c % 2 ? warpkit::SoftmaxPlain : warpkit::SoftmaxLog, rows, c, (long long)c + 5, (long long)c, 2, 0, false, salt};
            bad += sm_case<T>("paths (many rows)", many, 0x9c000ull + salt++);
        }
    }
    return bad;
}

Test(device_softmax, paths) {
    WK_REQUIRE_GPU();
    int seen[6] = {0, 0, 0, 0, 0, 0}; // indexed by RowPath
    const int bad = sm_paths<float>(seen) + sm_paths<__half>(seen) + sm_paths<__nv_bfloat16>(seen);
    cr_expect(bad == 0, "rowSoftmax paths: %d mismatches", bad);
    const warpkit::detail::DeviceProps d = row_props();
    cr_expect(seen[warpkit::detail::RowWarp] && seen[warpkit::detail::RowBlock] && seen[warpkit::detail::RowShort],
              "warp, block and short paths planned");
    if (d.clusters && !wk_quick())
        cr_expect(seen[warpkit::detail::RowStaged] && seen[warpkit::detail::RowStream], "sm_90: staged and streamed paths ran");
}

/// Special rows (NaN, +inf, all -inf, every third -inf, a first half of -inf) at every kind on a
/// column count of each path.
template <typename T> static int sm_specials(void) {
    int bad = 0, salt = 0;
    for (int c : {7, 200, 2047, 5000, 20000, 70001, 262144}) {
        for (int kind = 0; kind < 4; ++kind) {
            for (int mode : {4, 5, 6, 7, 8, 13, 14, 15}) {
                if (wk_thin(salt, 6)) { ++salt; continue; }
                SmCase sc{kind, 2, c, c, c, 0, 0, false, mode};
                bad += sm_case<T>("specials", sc, 0x5e000ull + salt++);
            }
        }
    }
    return bad;
}

Test(device_softmax, specials) {
    WK_REQUIRE_GPU();
    const int bad = sm_specials<float>() + sm_specials<__half>() + sm_specials<__nv_bfloat16>();
    cr_expect(bad == 0, "rowSoftmax special rows: %d mismatches", bad);
}

/// Whether rowSoftmax over rows x c, at element `off` of an allocation of seeded values uniform in
/// [-lim, lim], gives the same bits on two calls.
template <typename T> static bool sm_twice_same(long long rows, int c, int off, unsigned long long seed, double lim) {
    const size_t m = (size_t)rows * c, n = m + off;
    std::vector<T> hx(n), a(n), b(n);
    wk_rng r = wk_rng_make(seed);
    for (size_t i = 0; i < n; ++i) hx[i] = wk_from_double<T>(wk_uniform(&r, -lim, lim));
    T* dx = wk_alloc<T>(n);
    T* dy = wk_alloc<T>(n);
    wk_upload(dx, hx.data(), n);
    for (std::vector<T>* out : {&a, &b}) {
        WK_CUDA(warpkit::rowSoftmax(dx + off, dy + off, rows, c));
        WK_CUDA(cudaDeviceSynchronize());
        wk_download(out->data() + off, dy + off, m); // dy[0, off) is never written
    }
    const bool same = memcmp(a.data() + off, b.data() + off, m * sizeof(T)) == 0;
    cudaFree(dx);
    cudaFree(dy);
    return same;
}

/// Few long rows (R6-R8 and R28 register clusters): 1..8 rows and 17 rows (past one block an SM
/// for 16-block clusters) of the vocabulary lengths and odd lengths near them, R28's longest rows
/// (196613: 6-7 of a thread's 8 fp32 vector slots hold values; 262144: every slot), rows of only
/// negative values, every kind, misaligned bases and row strides, special rows (NaN, +inf, all
/// -inf, some -inf, a first half of -inf), in place; the planner's shape checked (a cluster of
/// more than 8 blocks a row for the 128K-152K rows); and two calls give the same bits.
template <typename T> static int sm_few_long(void) {
    const warpkit::detail::DeviceProps d = row_props();
    const bool quick = wk_quick();
    int bad = 0, salt = 0;
    for (int c : {32000, 50257, 128255, 128256, 131073, 151936, 151939, 196613, 262139, 262144}) {
        if (d.clusters && c >= 128255) {
            const warpkit::detail::RowPlan p =
                warpkit::detail::rowPlanFor(warpkit::detail::rowSoftmaxQuery((int)sizeof(T), 1, c, d.sms, true));
            if (p.path != warpkit::detail::RowBlock || p.blocks <= 8) {
                cr_log_error("few long %s: 1 x %d planned path %d, %d blocks (want a register cluster of > 8)",
                             wk_type_name<T>(), c, (int)p.path, p.blocks);
                ++bad;
            }
            // R28: rows past 131072 values, a block an SM, on 16 blocks of 512 x 32 values; 17 rows: R8's fewer.
            const char* id = "";
            warpkit::detail::rowPlanFor(warpkit::detail::rowSoftmaxQuery((int)sizeof(T), 1, c, d.sms, true), &id);
            const bool r28 = c / warpkit::vectorElems<T>() * warpkit::vectorElems<T>() > 131072 && d.sms >= 16;
            if (r28 != (strcmp(id, "R28") == 0) || (r28 && (p.blocks != 16 || p.threads != 512))) {
                cr_log_error("few long %s: 1 x %d planned %s, %d x %d", wk_type_name<T>(), c, id, p.blocks, p.threads);
                ++bad;
            }
        }
        for (long long rows : {1LL, 2LL, 3LL, 8LL, 17LL}) {
            if (quick && rows > 3) continue;
            const int kind = (int)(salt % 4), off = salt % 3 == 0 ? 0 : (int)(salt % 7);
            const long long ld = salt % 2 ? (long long)c : (long long)c + 3 + salt % 5;
            SmCase fc{kind, rows, c, ld, ld + (salt % 3), off, (off + 3) % 8, salt % 5 == 4, 4 + salt % 9};
            bad += sm_case<T>("few long rows", fc, 0xfe000ull + salt, nullptr);
            ++salt;
        }
    }
    // Rows of only negative values (negative warp, block and cluster maxima: the integer image of
    // a negative float in the kernel's max), every kind, aligned and not.
    for (int c : {32000, 128256, 151939}) {
        for (int kind = 0; kind < 4; ++kind) {
            const long long rows = 2;
            const int off = kind % 2;
            const size_t n = (size_t)rows * c + off;
            std::vector<T> hx(n), hy(n);
            wk_rng r = wk_rng_make(0xfc000ull + c + kind);
            for (size_t i = 0; i < n; ++i) hx[i] = wk_from_double<T>(wk_uniform(&r, -60.0, -0.5));
            T* dx = wk_alloc<T>(n);
            T* dy = wk_alloc<T>(n);
            wk_upload(dx, hx.data(), n);
            wk_poison(dy, n); // dy[0 .. off) is downloaded too
            WK_CUDA(warpkit::rowSoftmax(dx + off, dy + off, rows, c, (SoftmaxKind)kind, c, c));
            WK_CUDA(cudaDeviceSynchronize());
            wk_download(hy.data(), dy, n);
            bad += check_rows_ld("few long rows (negative)", kind, hx.data() + off, c, hy.data() + off, c, rows, c);
            cudaFree(dx);
            cudaFree(dy);
        }
    }
    // Determinism: the same call twice, 1 and 8 rows, aligned and not.
    for (int c : {128256, 151936, 151939, 262139}) {
        for (long long rows : {1LL, 8LL}) {
            if (!sm_twice_same<T>(rows, c, c % 2, 0xfd000ull + c + rows, 30.0)) { // odd lengths: misaligned too
                cr_log_error("few long %s: %lld x %d: two calls gave different bits", wk_type_name<T>(), rows, c);
                ++bad;
            }
        }
    }
    return bad;
}

Test(device_softmax, few_long_rows) {
    WK_REQUIRE_GPU();
    const int bad = sm_few_long<float>() + sm_few_long<__half>() + sm_few_long<__nv_bfloat16>();
    cr_expect(bad == 0, "rowSoftmax few long rows: %d mismatches", bad);
}

/// The short plan for rows of `cols` T (rowShortPlan, the shape R24 gives).
template <typename T> static warpkit::detail::RowPlan sm_short_plan(int cols) {
    return warpkit::detail::rowShortPlan(warpkit::vectorElems<T>(), cols);
}

/// Every length 1..256, packed rows: the dispatcher's plan (the short one wherever R24 holds: checked),
/// then the short plan forced (lengths of whole vectors too), on 2 tiles + 1..5 rows, each row of a
/// tile a different pattern (fill_row's modes cycle, NaN, +inf and all -inf among them).
template <typename T> static int sm_short_sweep(void) {
    const warpkit::detail::DeviceProps d = row_props();
    constexpr int V = warpkit::vectorElems<T>();
    int bad = 0, planned = 0;
    for (int c = 1; c <= 256; ++c) {
        if (wk_thin(c, 7)) continue;
        const warpkit::detail::RowPlan p = sm_short_plan<T>(c);
        const long long rows = 2LL * p.slice + 1 + c % 5;
        const warpkit::detail::RowPlan q =
            warpkit::detail::rowPlanFor(warpkit::detail::rowSoftmaxQuery((int)sizeof(T), rows, c, d.sms, d.clusters));
        const bool wantShort = c % V != 0 && c < (sizeof(T) == 4 ? 144 : 256);
        if ((q.path == warpkit::detail::RowShort) != wantShort && bad++ < 3)
            cr_log_error("short %s: cols %d planned path %d", wk_type_name<T>(), c, (int)q.path);
        planned += q.path == warpkit::detail::RowShort;
        SmCase dc{c % 4, rows, c, c, c, 0, 0, c % 3 == 0, c};
        bad += sm_case<T>("short (dispatcher)", dc, 0x54000ull + c);
        SmCase fc{(c + 1) % 4, rows + 2, c, c, c, 0, 0, c % 3 == 1, c + 4};
        bad += sm_case<T>("short (forced)", fc, 0x55000ull + c, &p);
    }
    if (!wk_quick() && planned < (sizeof(T) == 4 ? 100 : 200)) {
        cr_log_error("short %s: only %d lengths planned the short path", wk_type_name<T>(), planned);
        ++bad;
    }
    return bad;
}

/// The short plan on rows it cannot take (a base off 16 bytes, ld != cols: R1's warp plan runs
/// instead), and on no rows at all.
template <typename T> static int sm_short_fallbacks(void) {
    int bad = 0, salt = 0;
    for (int c : {3, 11, 37, 63, 77, 129, 141, 161, 197, 255}) {
        const warpkit::detail::RowPlan p = sm_short_plan<T>(c);
        const long long rows = p.slice + 3;
        SmCase off{salt % 4, rows, c, c, c, 1, 1, false, salt};
        bad += sm_case<T>("short fall-back (base off 16 bytes)", off, 0x56000ull + salt++);
        bad += sm_case<T>("short fall-back (base off 16 bytes, forced)", off, 0x56000ull + salt++, &p);
        SmCase offY{salt % 4, rows, c, c, c, 0, 3, false, salt};
        bad += sm_case<T>("short fall-back (y off 16 bytes, forced)", offY, 0x56000ull + salt++, &p);
        SmCase ld{salt % 4, rows, c, (long long)c + 1, c, 0, 0, false, salt};
        bad += sm_case<T>("short fall-back (ldx != cols)", ld, 0x56000ull + salt++);
        bad += sm_case<T>("short fall-back (ldx != cols, forced)", ld, 0x56000ull + salt++, &p);
        SmCase ldIn{salt % 4, rows, c, (long long)c + 8, c + 8, 0, 0, true, salt};
        bad += sm_case<T>("short fall-back (ld = cols + 8, in place, forced)", ldIn, 0x56000ull + salt++, &p);
        SmCase none{0, 0, c, c, c, 0, 0, false, 0};
        bad += sm_case<T>("short (rows = 0, forced)", none, 0x56000ull + salt++, &p);
    }
    return bad;
}

/// The same call twice gives the same bits (the short path's shapes and a few other lengths).
template <typename T> static int sm_short_determinism(void) {
    int bad = 0;
    for (int c : {5, 11, 21, 33, 62, 63, 77, 130, 161, 197, 250}) {
        const long long rows = 3001;
        if (!sm_twice_same<T>(rows, c, 0, 0x57000ull + c, 20.0)) {
            cr_log_error("short %s: %lld x %d: two calls gave different bits", wk_type_name<T>(), rows, c);
            ++bad;
        }
    }
    return bad;
}

Test(device_softmax, short_rows) {
    WK_REQUIRE_GPU();
    int bad = sm_short_sweep<float>() + sm_short_sweep<__half>() + sm_short_sweep<__nv_bfloat16>();
    bad += sm_short_fallbacks<float>() + sm_short_fallbacks<__half>() + sm_short_fallbacks<__nv_bfloat16>();
    bad += sm_short_determinism<float>() + sm_short_determinism<__half>() + sm_short_determinism<__nv_bfloat16>();
    cr_expect(bad == 0, "rowSoftmax short rows: %d mismatches", bad);
}

Test(device_softmax, bad_args) {
    WK_REQUIRE_GPU();
    const int n = 64;
    float* dx = wk_alloc<float>(n);
    float* dy = wk_alloc<float>(n);
    std::vector<float> hx(n, 1.0f), hy(n), poison(n);
    wk_upload(dx, hx.data(), n);
    wk_poison(dy, n);
    wk_download(poison.data(), dy, n);
    struct Bad { long long rows; int cols; int kind; long long ldx, ldy; bool nullx, nully, same; const char* what; };
    const Bad bads[] = {
        {-1, 8, 0, 8, 8, false, false, false, "rows < 0"},
        {2, -3, 0, 8, 8, false, false, false, "cols < 0"},
        {2, 8, 0, 7, 8, false, false, false, "ldx < cols"},
        {2, 8, 0, 8, 7, false, false, false, "ldy < cols"},
        {2, 8, 0, 8, 8, true, false, false, "x null"},
        {2, 8, 0, 8, 8, false, true, false, "y null"},
        {2, 8, 4, 8, 8, false, false, false, "kind 4"},
        {2, 8, -1, 8, 8, false, false, false, "kind -1"},
        {2, 8, 0, 8, 16, false, false, true, "in place with ldx != ldy"},
    };
    for (const Bad& b : bads) {
        const float* x = b.nullx ? nullptr : dx;
        float* y = b.nully ? nullptr : b.same ? dx : dy;
        const cudaError_t e = warpkit::rowSoftmax(x, y, b.rows, b.cols, (SoftmaxKind)b.kind, b.ldx, b.ldy);
        cr_expect(e == cudaErrorInvalidValue, "rowSoftmax with %s: got %s, want cudaErrorInvalidValue", b.what,
                  cudaGetErrorString(e));
    }
    // rows == 0 is a no-op, with or without pointers.
    cr_expect(warpkit::rowSoftmax<float>(nullptr, nullptr, 0, 5) == cudaSuccess, "rows 0 with null pointers: no-op");
    cr_expect(warpkit::rowSoftmax(dx, dy, 0, 5) == cudaSuccess, "rows 0: no-op");
    // cols = 0 (an empty dimension): a no-op that writes nothing, with or without pointers.
    cr_expect(warpkit::rowSoftmax(dx, dy, 2, 0, warpkit::SoftmaxLog, 8, 8) == cudaSuccess, "cols 0: no-op");
    cr_expect(warpkit::rowSoftmax<float>(nullptr, nullptr, 2, 0) == cudaSuccess, "cols 0 with null pointers: no-op");
    cr_expect(warpkit::rowSoftmax(dx, dy, 0, 0, warpkit::SoftmaxPlain, 0, 0) == cudaSuccess, "rows 0, cols 0: no-op");
    WK_LAUNCHED();
    wk_download(hy.data(), dy, n);
    std::vector<float> x2(n);
    wk_download(x2.data(), dx, n);
    cr_expect(memcmp(hy.data(), poison.data(), n * sizeof(float)) == 0, "a rejected call wrote y");
    cr_expect(memcmp(x2.data(), hx.data(), n * sizeof(float)) == 0, "a rejected call wrote x");
    cudaFree(dx);
    cudaFree(dy);
}

/// Two host threads, each with its own stream (and its own device where there are two), each
/// running a series of different shapes at once.
Test(device_softmax, concurrent) {
    WK_REQUIRE_GPU();
    static const int cols[] = {33, 1000, 4097, 16385, 50257, 151936};
    const int bad = wk_two_threads(12, true, [&](int w, int i, cudaStream_t st) {
        const int c = cols[(i + w) % 6];
        SmCase sc{i & 3, c > 20000 ? 4 : 300, c, (long long)c + w, (long long)c, w, 2 * w, false, i};
        return (i + w) % 2 ? sm_case<float>("concurrent", sc, 0xc0000ull + 100 * w + i, nullptr, st)
                           : sm_case<__nv_bfloat16>("concurrent", sc, 0xc0000ull + 100 * w + i, nullptr, st);
    });
    cr_expect(bad == 0, "rowSoftmax from two threads / streams at once: %d mismatches", bad);
}
