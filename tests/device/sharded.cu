// Tests of include/warpkit/device/sharded.cuh on one GPU: each row cut into 1-8 shards at odd
// boundaries (one-column shards, shards holding the target or not), every shard's statistics
// (rowSoftmaxStats), the ranks' merge in rank order (rowStatsMerge), then each shard's finish
// (rowSoftmaxApply, rowCrossEntropyFinish, rowLogSumExpFinish), against the unsharded calls of the
// whole rows (rowSoftmax, rowCrossEntropy, rowLogSumExp) and rowLogSumExp against a double
// reference.
//   split:      seeded shapes (rows 1..40, cols 1..70000, strides, offsets), every type, plain and
//               log softmax, ignored and out-of-range targets; rows with an all -inf shard, a NaN
//               or a +inf in one shard; outputs poisoned; a second run gives the same bits.
//   paths:      forced plans (warp, block, cluster, staged, streamed) of the statistics and both
//               finishes against the public calls' results.
//   bad_args:   every bad argument returns cudaErrorInvalidValue (the host checks run without a
//               GPU) and, on a GPU, writes nothing.
#include "row_common.cuh"
#include "../softmax_common.cuh" // floor_of
#include <warpkit/device/sharded.cuh>
#include <warpkit/device/softmax.cuh>
#include <vector>

using warpkit::RowShardStats;
using warpkit::SoftmaxState;

/// Shard boundaries of a row of `cols`: n shards (at most cols), each of at least one column, some
/// of exactly one.
static std::vector<int> sh_cuts(wk_rng* r, int cols, int n) {
    n = n < cols ? n : cols;
    std::vector<int> cut = {0};
    for (int s = 1; s < n; ++s) {
        const int most = cols - cut.back() - (n - s); // the widest this shard may be: later shards need a column each
        const int w = wk_int(r, 0, 2) == 0 ? 1 : 1 + (int)wk_int(r, 0, (most - 1) * 2 / (n - s + 1));
        cut.push_back(cut.back() + w);
    }
    cut.push_back(cols);
    return cut;
}

/// Whether got matches want (another call's output): NaN for NaN, equal infinities, else within
/// rel x |want| + abs.
static bool sh_close(double got, double want, double rel, double abs) {
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    return isfinite(got) && fabs(got - want) <= rel * fabs(want) + abs;
}

struct ShOut {
    std::vector<float> loss, lse;
    std::vector<char> y, grad; // raw bytes, for the same-bits check
};

/// One sharded run over the uploaded rows: statistics of each shard, the merge, the finishes.
template <typename T> static int sh_run(const T* dx, const long long* dt, long long rows, int cols, long long ld,
                                        const std::vector<int>& cut, warpkit::SoftmaxKind kind, float scale, size_t nx,
                                        ShOut* o) {
    const int n = (int)cut.size() - 1;
    RowShardStats* g = wk_alloc<RowShardStats>((size_t)n * rows);
    SoftmaxState* gs = wk_alloc<SoftmaxState>((size_t)n * rows);
    RowShardStats* m = wk_alloc<RowShardStats>(rows);
    float* loss = wk_alloc<float>((size_t)n * rows);
    float* lse = wk_alloc<float>(rows);
    T* y = wk_alloc<T>(nx);
    T* gr = wk_alloc<T>(nx);
    wk_poison(y, nx);
    wk_poison(gr, nx);
    wk_poison(loss, (size_t)n * rows);
    int bad = 0;
    auto ok = [&](cudaError_t e, const char* what) {
        if (e != cudaSuccess) cr_log_error("%s returned %s", what, cudaGetErrorString(e)), ++bad;
    };
    for (int s = 0; s < n; ++s) {
        const int w = cut[s + 1] - cut[s];
        ok(warpkit::rowSoftmaxStats(dx + cut[s], dt, cut[s], g + (size_t)s * rows, rows, w, ld),
           "rowSoftmaxStats (ce)");
        ok(warpkit::rowSoftmaxStats(dx + cut[s], gs + (size_t)s * rows, rows, w, ld), "rowSoftmaxStats");
    }
    ok(warpkit::rowStatsMerge(g, m, n, rows), "rowStatsMerge (ce)");
    ok(warpkit::rowStatsMerge(gs, gs, n, rows), "rowStatsMerge in place");
    for (int s = 0; s < n; ++s) {
        const int w = cut[s + 1] - cut[s];
        ok(warpkit::rowSoftmaxApply(dx + cut[s], y + cut[s], gs, rows, w, kind, ld, ld), "rowSoftmaxApply");
        ok(warpkit::rowCrossEntropyFinish(dx + cut[s], dt, m, loss + (size_t)s * rows, gr + cut[s], rows, w, cut[s],
                                          cols, -100LL, scale, ld, ld),
           "rowCrossEntropyFinish");
    }
    ok(warpkit::rowLogSumExpFinish(gs, lse, rows), "rowLogSumExpFinish");
    WK_CUDA(cudaDeviceSynchronize());
    o->loss.resize((size_t)n * rows);
    o->lse.resize(rows);
    o->y.resize(nx * sizeof(T));
    o->grad.resize(nx * sizeof(T));
    wk_download(o->loss.data(), loss, o->loss.size());
    wk_download(o->lse.data(), lse, rows);
    wk_download((T*)o->y.data(), y, nx);
    wk_download((T*)o->grad.data(), gr, nx);
    cudaFree(g);
    cudaFree(gs);
    cudaFree(m);
    cudaFree(loss);
    cudaFree(lse);
    cudaFree(y);
    cudaFree(gr);
    return bad;
}

/// One case: the sharded calls against the unsharded ones. Returns mismatches.
template <typename T> static int sh_case(wk_rng* r, long long rows, int cols, int shards, int iter) {
    const long long ld = row_draw_ld(r, cols);
    const int off = (int)wk_int(r, 0, 7);
    const size_t nx = (size_t)off + (size_t)(rows - 1) * ld + cols + 8;
    const std::vector<int> cut = sh_cuts(r, cols, shards);
    const int n = (int)cut.size() - 1;
    const warpkit::SoftmaxKind kind = iter % 2 ? warpkit::SoftmaxLog : warpkit::SoftmaxPlain;
    const float scale = iter % 3 ? 1.0f : 1.0f / 7.0f;
    std::vector<T> hx(nx);
    std::vector<long long> ht(rows);
    static const double scales[] = {1.0, 10.0, 100.0, 3e3};
    for (size_t i = 0; i < nx; ++i) hx[i] = wk_from_double<T>(wk_uniform(r, -9.0, 9.0));
    for (long long q = 0; q < rows; ++q) {
        T* x = &hx[off + q * ld];
        const double sc = scales[(q + iter) & 3];
        for (int i = 0; i < cols; ++i) x[i] = wk_from_double<T>(wk_uniform(r, -sc, sc));
        const int s = (int)wk_int(r, 0, n - 1); // the shard of this row's special values
        switch ((q + iter) % 7) {
        case 1: // an all -inf shard
            for (int i = cut[s]; i < cut[s + 1]; ++i) x[i] = wk_from_double<T>(-INFINITY);
            break;
        case 2:
            x[wk_int(r, cut[s], cut[s + 1] - 1)] = wk_from_double<T>(NAN);
            break;
        case 3:
            x[wk_int(r, cut[s], cut[s + 1] - 1)] = wk_from_double<T>(INFINITY);
            break;
        case 4: // -inf everywhere but one shard
            for (int i = 0; i < cols; ++i)
                if (i < cut[s] || i >= cut[s + 1]) x[i] = wk_from_double<T>(-INFINITY);
            break;
        }
        const int pick = (int)wk_int(r, 0, 9);
        ht[q] = pick == 0 ? -100 : pick == 1 ? (wk_int(r, 0, 1) ? cols : -3) : wk_int(r, 0, cols - 1);
    }
    T* dx = wk_alloc<T>(nx);
    long long* dt = wk_alloc<long long>(rows);
    wk_upload(dx, hx.data(), nx);
    wk_upload(dt, ht.data(), rows);
    // The unsharded calls.
    T* y = wk_alloc<T>(nx);
    T* gr = wk_alloc<T>(nx);
    float* loss = wk_alloc<float>(rows);
    float* lse = wk_alloc<float>(rows);
    wk_poison(y, nx); // the gaps between rows stay poison: the downloads below read whole buffers
    wk_poison(gr, nx);
    int bad = 0;
    WK_CUDA(warpkit::rowSoftmax(dx + off, y + off, rows, cols, kind, ld, ld));
    WK_CUDA(warpkit::rowCrossEntropy(dx + off, dt, loss, gr + off, rows, cols, -100LL, 0.0f, scale, ld, ld));
    WK_CUDA(warpkit::rowLogSumExp(dx + off, lse, rows, cols, ld));
    WK_CUDA(cudaDeviceSynchronize());
    std::vector<T> hy(nx), hg(nx);
    std::vector<float> hl(rows), hlse(rows);
    wk_download(hy.data(), y, nx);
    wk_download(hg.data(), gr, nx);
    wk_download(hl.data(), loss, rows);
    wk_download(hlse.data(), lse, rows);
    ShOut a, b;
    bad += sh_run<T>(dx + off, dt, rows, cols, ld, cut, kind, scale, nx - off, &a);
    bad += sh_run<T>(dx + off, dt, rows, cols, ld, cut, kind, scale, nx - off, &b);
    // Bytes, not values: a NaN loss (an out-of-range target, a NaN row) is the same bits, never ==.
    auto same = [](const std::vector<float>& u, const std::vector<float>& v) {
        return u.size() == v.size() && memcmp(u.data(), v.data(), u.size() * sizeof(float)) == 0;
    };
    if (!same(a.loss, b.loss) || !same(a.lse, b.lse) || a.y != b.y || a.grad != b.grad)
        cr_log_error("%s %lld x %d in %d shards: two runs differ", wk_type_name<T>(), rows, cols, n), ++bad;
    const T* sy = (const T*)a.y.data();
    const T* sg = (const T*)a.grad.data();
    // fp32: the sharded and the whole-row outputs are each within tol_of<T>() (1e-5, the softmax tests'
    // bound against a double reference) of the true value, so within twice that of each other: the exp
    // of an argument near -70 carries about 70 x 2^-24 of relative rounding in either path.
    const double out = sizeof(T) == 4 ? 2 * tol_of<T>() : 2 * wk_eps<T>(), fl = floor_of<T>();
    for (long long q = 0; q < rows && bad < 3; ++q) {
        double xmax = 0, lref = -INFINITY;
        bool nan = false, pinf = false;
        for (int i = 0; i < cols; ++i) {
            const double v = wk_to_double(hx[off + q * ld + i]);
            nan = nan || isnan(v);
            pinf = pinf || v == INFINITY;
            if (isfinite(v)) xmax = fmax(xmax, fabs(v));
        }
        double s = 0, m = -INFINITY;
        for (int i = 0; i < cols; ++i) m = fmax(m, wk_to_double(hx[off + q * ld + i]));
        for (int i = 0; i < cols && isfinite(m); ++i) s += exp(wk_to_double(hx[off + q * ld + i]) - m);
        lref = nan ? NAN : pinf ? INFINITY : m == -INFINITY ? -INFINITY : m + log(s);
        const double tl = 1e-5 * (1.0 + 2.0 * xmax);
        if (!sh_close(hlse[q], lref, 0, tl))
            cr_log_error("%s %lld x %d row %lld: rowLogSumExp %.9g want %.9g", wk_type_name<T>(), rows, cols, q,
                         hlse[q], lref),
                ++bad;
        if (!sh_close(a.lse[q], hlse[q], 0, tl))
            cr_log_error("%s %lld x %d row %lld: sharded log-sum-exp %.9g, whole %.9g", wk_type_name<T>(), rows, cols,
                         q, a.lse[q], hlse[q]),
                ++bad;
        for (int k = 0; k < n; ++k)
            if (memcmp(&a.loss[(size_t)k * rows + q], &a.loss[q], 4) != 0)
                cr_log_error("%s row %lld: shard %d's loss differs from shard 0's", wk_type_name<T>(), q, k), ++bad;
        if (!sh_close(a.loss[q], hl[q], 0, tl))
            cr_log_error("%s %lld x %d in %d shards row %lld (target %lld): loss %.9g, whole %.9g", wk_type_name<T>(),
                         rows, cols, n, q, ht[q], a.loss[q], hl[q]),
                ++bad;
        for (int i = 0; i < cols && bad < 3; ++i) {
            const size_t at = (size_t)q * ld + i;
            const double gy = wk_to_double(sy[at]), wy = wk_to_double(hy[off + at]);
            const double gg = wk_to_double(sg[at]), wg = wk_to_double(hg[off + at]);
            const bool logk = kind == warpkit::SoftmaxLog;
            if (!sh_close(gy, wy, out, logk ? tl : fl))
                cr_log_error("%s %lld x %d in %d shards row %lld col %d: y %.9g, whole %.9g", wk_type_name<T>(), rows,
                             cols, n, q, i, gy, wy),
                    ++bad;
            if (!sh_close(gg, wg, out, 1e-6 * fabs(scale) + fl))
                cr_log_error("%s %lld x %d in %d shards row %lld col %d (target %lld): grad %.9g, whole %.9g",
                             wk_type_name<T>(), rows, cols, n, q, i, ht[q], gg, wg),
                    ++bad;
        }
    }
    // Nothing outside the rows written.
    for (size_t i = 0; i + off < nx && bad < 3; ++i) {
        const bool in = (long long)(i % ld) < cols && (long long)(i / ld) < rows;
        const unsigned char* py = (const unsigned char*)&sy[i];
        if (!in && (py[0] != 0xA5 || ((const unsigned char*)&sg[i])[0] != 0xA5))
            cr_log_error("%s %lld x %d: element %zu outside the rows written", wk_type_name<T>(), rows, cols, i), ++bad;
    }
    cudaFree(dx);
    cudaFree(dt);
    cudaFree(y);
    cudaFree(gr);
    cudaFree(loss);
    cudaFree(lse);
    return bad;
}

template <typename T> static int sh_one(wk_rng* r, long long, int iter) {
    static const int edges[] = {1, 2, 7, 33, 1000, 1031, 2053, 4099, 8200, 20000, 70001};
    const int cols = edges[wk_int(r, 0, 10)] + (int)wk_int(r, 0, 2);
    const long long rows = wk_int(r, 0, 3) == 0 ? 1 : wk_int(r, 1, cols > 8000 ? 12 : 40);
    return sh_case<T>(r, rows, cols, (int)wk_int(r, 1, 8), iter);
}

Test(device_sharded, split) {
    WK_REQUIRE_GPU();
    row_fuzz("sharded", 3301, wk_quick() ? 24 : 90, sh_one<float>, sh_one<__half>, sh_one<__nv_bfloat16>);
}

/// Every kernel of the row runner on the new params types (forced plans, 3 rows of each column count,
/// two shards): the statistics (CE form), the softmax finish and the cross-entropy finish, each
/// against the public calls' results (the dispatcher's plans) within rounding. Returns mismatches.
template <typename T> static int sh_paths(int* seen) {
    using namespace warpkit::detail;
    const DeviceProps d = row_props();
    int dev = 0;
    WK_CUDA(cudaGetDevice(&dev));
    int bad = 0, salt = 0;
    std::vector<int> cols = {1, 5, 33, 257, 1025, 4097, 8193, 20001, 65537, 131073};
    for (int c : row_thinned(cols)) {
        const long long rows = 3, ld = c + 5, vocab = 2LL * c + 3,
                        begin = c + 1; // this shard: columns begin..begin + c
        wk_rng r = wk_rng_make(0x5a7000ull + salt++);
        std::vector<T> hx((size_t)rows * ld);
        for (T& v : hx) v = wk_from_double<T>(wk_uniform(&r, -20.0, 20.0));
        const std::vector<long long> ht = {begin + c / 2, 0, begin + c - 1}; // in the shard, elsewhere, its last column
        T* dx = wk_alloc<T>(hx.size());
        T* dy = wk_alloc<T>(hx.size());
        long long* dt = wk_alloc<long long>(rows);
        RowShardStats* st = wk_alloc<RowShardStats>(2 * rows);
        SoftmaxState* ss = wk_alloc<SoftmaxState>(rows);
        float* loss = wk_alloc<float>(2 * rows);
        wk_poison(dy, hx.size()); // the gaps between rows stay poison: the downloads read the whole buffer
        wk_upload(dx, hx.data(), hx.size());
        wk_upload(dt, ht.data(), rows);
        // The public calls: this shard's statistics, the other shard's made up, merged; the finishes.
        WK_CUDA(warpkit::rowSoftmaxStats(dx, dt, begin, st, rows, c, ld));
        const RowShardStats other[3] = {{3.0f, 1.5f, 0.0f}, {25.0f, 2.0f, -1.0f}, {-INFINITY, 0.0f, 0.0f}};
        wk_upload(st + rows, other, rows);
        WK_CUDA(warpkit::rowStatsMerge(st, st, 2, rows));
        std::vector<RowShardStats> hs(rows);
        wk_download(hs.data(), st, rows);
        std::vector<SoftmaxState> hss(rows); // the softmax finish takes the merged {max, sum}
        for (long long q = 0; q < rows; ++q) hss[q] = SoftmaxState{hs[q].max, hs[q].sum};
        wk_upload(ss, hss.data(), rows);
        WK_CUDA(warpkit::rowSoftmaxApply(dx, dy, ss, rows, c, warpkit::SoftmaxPlain, ld, ld));
        std::vector<T> wantY(hx.size()), wantG(hx.size()), got(hx.size());
        wk_download(wantY.data(), dy, hx.size());
        WK_CUDA(warpkit::rowCrossEntropyFinish(dx, dt, st, loss, dy, rows, c, begin, vocab, -100LL, 0.5f, ld, ld));
        wk_download(wantG.data(), dy, hx.size());
        std::vector<RowShardStats> wantS(rows), gotS(rows);
        WK_CUDA(warpkit::rowSoftmaxStats(dx, dt, begin, st + rows, rows, c, ld));
        wk_download(wantS.data(), st + rows, rows);
        auto compare = [&](const char* what, const std::vector<T>& want, int path) {
            wk_download(got.data(), dy, got.size());
            for (long long q = 0; q < rows; ++q)
                for (int i = 0; i < c; ++i) {
                    const double a = wk_to_double(got[q * ld + i]), b = wk_to_double(want[q * ld + i]);
                    if (!(fabs(a - b) <= (sizeof(T) == 4 ? 4e-6 : 2 * wk_eps<T>()) * fabs(b) + floor_of<T>()) &&
                        bad++ < 3)
                        cr_log_error("paths %s %s: %d columns, path %d, row %lld col %d: %.9g, dispatcher's %.9g", what,
                                     wk_type_name<T>(), c, path, q, i, a, b);
                }
        };
        for (const RowPlan& p : row_forced_plans<ShardFinishParams<T>>(c, d, 3, 5)) {
            seen[p.path] = 1;
            wk_poison(dy, hx.size());
            const ShardApplyParams<T, warpkit::SoftmaxPlain> pa{{}, dx, dy, ss, ld, ld};
            WK_CUDA(rowOpRun(p, pa, rows, c, dev, d, 0));
            compare("rowSoftmaxApply", wantY, p.path);
            wk_poison(dy, hx.size());
            const ShardFinishParams<T> pf{{}, {dx, dt, loss + rows, dy, ld, ld, -100LL, 0.0f, 0.5f}, st, begin, vocab};
            WK_CUDA(rowOpRun(p, pf, rows, c, dev, d, 0));
            compare("rowCrossEntropyFinish", wantG, p.path);
            const ShardStatsParams<T> ps{{}, dx, dt, nullptr, st + rows, nullptr, ld, begin};
            WK_CUDA(rowOpRun(p, ps, rows, c, dev, d, 0));
            wk_download(gotS.data(), st + rows, rows);
            for (long long q = 0; q < rows; ++q)
                if ((gotS[q].max != wantS[q].max || gotS[q].targetLogit != wantS[q].targetLogit ||
                     !(fabs(gotS[q].sum - wantS[q].sum) <= 4e-6 * wantS[q].sum)) &&
                    bad++ < 3)
                    cr_log_error(
                        "paths stats %s: %d columns, path %d, row %lld: {%.9g, %.9g, %.9g}, dispatcher's {%.9g, "
                        "%.9g, %.9g}",
                        wk_type_name<T>(), c, (int)p.path, q, gotS[q].max, gotS[q].sum, gotS[q].targetLogit,
                        wantS[q].max, wantS[q].sum, wantS[q].targetLogit);
        }
        cudaFree(dx), cudaFree(dy), cudaFree(dt), cudaFree(st), cudaFree(ss), cudaFree(loss);
    }
    return bad;
}

Test(device_sharded, paths) {
    WK_REQUIRE_GPU();
    int seen[5] = {0, 0, 0, 0, 0};
    row_expect_paths("sharded", sh_paths<float>(seen) + sh_paths<__half>(seen) + sh_paths<__nv_bfloat16>(seen), seen);
}

/// Every bad argument: cudaErrorInvalidValue before any GPU work (the pointers are never read).
static int sh_bad_calls(float* x, float* y, long long* t, RowShardStats* st, SoftmaxState* ss, float* l) {
    int bad = 0;
    auto want = [&](cudaError_t e, const char* what) {
        if (e != cudaErrorInvalidValue) cr_log_error("%s: %s", what, cudaGetErrorString(e)), ++bad;
    };
    want(warpkit::rowSoftmaxStats(x, ss, -1, 8, 8), "stats rows < 0");
    want(warpkit::rowSoftmaxStats(x, ss, 2, 0, 8), "stats cols < 1");
    want(warpkit::rowSoftmaxStats(x, ss, 2, 8, 7), "stats ldx < cols");
    want(warpkit::rowSoftmaxStats(x, (SoftmaxState*)nullptr, 2, 8, 8), "stats null stats");
    want(warpkit::rowSoftmaxStats((float*)nullptr, ss, 2, 8, 8), "stats null x");
    want(warpkit::rowSoftmaxStats(x, t, -1, st, 2, 8, 8), "ce stats shardBegin < 0");
    want(warpkit::rowSoftmaxStats(x, (long long*)nullptr, 0, st, 2, 8, 8), "ce stats null targets");
    want(warpkit::rowStatsMerge(st, st, 0, 2), "merge ranks < 1");
    want(warpkit::rowStatsMerge(ss, ss, 2, -1), "merge rows < 0");
    want(warpkit::rowStatsMerge((SoftmaxState*)nullptr, ss, 2, 2), "merge null gathered");
    want(warpkit::rowSoftmaxStats(x, t, 0, st, 2, 0, 8), "ce stats cols 0 (an empty row has no state to write)");
    want(warpkit::rowLogSumExp(x, l, 2, 0, 8), "lse cols 0");
    want(warpkit::rowCrossEntropyFinish(x, t, st, l, y, 2, 0, 0, 16, -100, 1.0f, 8, 8), "finish cols 0");
    want(warpkit::rowSoftmaxApply(x, y, ss, 2, 8, (warpkit::SoftmaxKind)4, 8, 8), "apply unknown kind");
    want(warpkit::rowSoftmaxApply(x, y, ss, 2, 8, warpkit::SoftmaxPlain, 8, 7), "apply ldy < cols");
    want(warpkit::rowSoftmaxApply(x, x, ss, 2, 8, warpkit::SoftmaxPlain, 8, 9), "apply in place, strides differ");
    want(warpkit::rowSoftmaxApply(x, y, (SoftmaxState*)nullptr, 2, 8, warpkit::SoftmaxPlain, 8, 8), "apply null stats");
    want(warpkit::rowCrossEntropyFinish(x, t, st, l, y, 2, 8, 4, 11, -100, 1.0f, 8, 8), "finish shard past vocab");
    want(warpkit::rowCrossEntropyFinish(x, t, st, l, y, 2, 8, -1, 16, -100, 1.0f, 8, 8), "finish shardBegin < 0");
    want(warpkit::rowCrossEntropyFinish(x, t, st, (float*)nullptr, (float*)nullptr, 2, 8, 0, 16, -100, 1.0f, 8, 8),
         "finish no outputs");
    want(warpkit::rowCrossEntropyFinish((float*)nullptr, t, st, l, y, 2, 8, 0, 16, -100, 1.0f, 8, 8),
         "finish null logits");
    want(warpkit::rowCrossEntropyFinish(x, t, (RowShardStats*)nullptr, l, y, 2, 8, 0, 16, -100, 1.0f, 8, 8),
         "finish null stats");
    want(warpkit::rowCrossEntropyFinish(x, t, st, l, x, 2, 8, 0, 16, -100, 1.0f, 8, 9),
         "finish in place, strides differ");
    want(warpkit::rowCrossEntropyFinish(x, t, st, l, y, 2, 8, 0, 16, -100, 1.0f, 8, 7), "finish ldGrad < cols");
    want(warpkit::rowLogSumExp(x, (float*)nullptr, 2, 8, 8), "lse null out");
    want(warpkit::rowLogSumExp(x, l, 2, 8, 3), "lse ldx < cols");
    want(warpkit::rowLogSumExpFinish(ss, l, -2), "lse finish rows < 0");
    want(warpkit::rowLogSumExpFinish((SoftmaxState*)nullptr, l, 2), "lse finish null stats");
    return bad;
}

Test(device_sharded, bad_args) {
    // Host checks alone: pointers that no call may read.
    float* fx = (float*)64;
    int bad = sh_bad_calls(fx, fx + 64, (long long*)128, (RowShardStats*)256, (SoftmaxState*)512, fx + 128);
    cr_expect(bad == 0, "%d bad arguments accepted (host checks)", bad);
    if (!wk_has_gpu()) { // the loss alone reads no logits: null logits, ldGrad unused, passes the checks
        const cudaError_t e =
            warpkit::rowCrossEntropyFinish((const float*)nullptr, (long long*)128, (RowShardStats*)256, fx + 128,
                                           (float*)nullptr, 2, 8, 0, 16, -100, 1.0f, 8, 0);
        cr_expect(e != cudaErrorInvalidValue, "finish, the loss alone with null logits: refused");
        return;
    }
    // On a GPU: real buffers, poisoned, untouched by every bad call; rows = 0 is a no-op.
    const int n = 64;
    float* x = wk_alloc<float>(n);
    float* y = wk_alloc<float>(n);
    float* l = wk_alloc<float>(n);
    long long* t = wk_alloc<long long>(n);
    RowShardStats* st = wk_alloc<RowShardStats>(n);
    SoftmaxState* ss = wk_alloc<SoftmaxState>(n);
    wk_poison(y, n);
    wk_poison(l, n);
    wk_poison(st, n);
    wk_poison(ss, n);
    bad = sh_bad_calls(x, y, t, st, ss, l);
    // The loss alone reads no logits: null logits with an unused ldGrad is a valid call (into l2).
    float* l2 = wk_alloc<float>(n);
    const std::vector<long long> ht(n, 3);
    wk_upload(t, ht.data(), n);
    WK_CUDA(warpkit::rowCrossEntropyFinish((const float*)nullptr, t, st, l2, (float*)nullptr, 2, 8, 0, 16, -100, 1.0f,
                                           8, 0));
    WK_CUDA(warpkit::rowSoftmaxStats(x, ss, 0, 8, 8));
    WK_CUDA(warpkit::rowStatsMerge(st, st, 3, 0));
    WK_CUDA(warpkit::rowCrossEntropyFinish(x, t, st, l, y, 0, 8, 0, 16, -100, 1.0f, 8, 8));
    WK_CUDA(warpkit::rowSoftmaxApply(x, y, ss, 2, 0, warpkit::SoftmaxPlain, 8, 8)); // cols 0: a no-op
    WK_CUDA(cudaDeviceSynchronize());
    std::vector<unsigned char> h(n * sizeof(RowShardStats));
    int touched = 0;
    wk_download((float*)h.data(), y, n);
    for (int i = 0; i < n * 4; ++i) touched += h[i] != 0xA5;
    wk_download((float*)h.data(), l, n);
    for (int i = 0; i < n * 4; ++i) touched += h[i] != 0xA5;
    wk_download((RowShardStats*)h.data(), st, n);
    for (size_t i = 0; i < h.size(); ++i) touched += h[i] != 0xA5;
    wk_download((SoftmaxState*)h.data(), ss, n);
    for (int i = 0; i < n * 8; ++i) touched += h[i] != 0xA5;
    cr_expect(bad == 0 && touched == 0, "%d bad arguments accepted, %d bytes written", bad, touched);
    cudaFree(x);
    cudaFree(y);
    cudaFree(l);
    cudaFree(l2);
    cudaFree(t);
    cudaFree(st);
    cudaFree(ss);
}

// ---- top-k and sampling of split rows: rowTopKShard, rowTopKMerge, rowSampleMerge ---------------

/// Device buffers of one split top-k: each shard's rows x k block gathered [shards][rows][k].
template <typename T> struct SstGathered {
    T* v;
    long long* i;
};

/// Every shard's rowTopKShard block into g (poisoned first); checks the padding of shards narrower
/// than k. Returns mismatches.
template <typename T> static int sst_gather(const T* dx, long long rows, long long ld, const std::vector<int>& cut,
                                            int k, bool largest, SstGathered<T> g) {
    const int n = (int)cut.size() - 1;
    const size_t nk = (size_t)rows * k;
    wk_poison(g.v, n * nk);
    wk_poison(g.i, n * nk);
    size_t bytes = 0, most = 0;
    for (int s = 0; s < n; ++s) {
        WK_CUDA(warpkit::rowTopKShard(dx + cut[s], g.v, g.i, rows, cut[s + 1] - cut[s], k, largest, cut[s], ld, nullptr,
                                      &bytes));
        most = bytes > most ? bytes : most;
    }
    char* ws = (char*)wk_workspace(most);
    for (int s = 0; s < n; ++s) {
        bytes = most;
        WK_CUDA(warpkit::rowTopKShard(dx + cut[s], g.v + s * nk, g.i + s * nk, rows, cut[s + 1] - cut[s], k, largest,
                                      cut[s], ld, ws, &bytes));
    }
    WK_CUDA(cudaDeviceSynchronize());
    std::vector<long long> hi(n * nk);
    std::vector<T> hv(n * nk);
    wk_download(hi.data(), g.i, n * nk);
    wk_download(hv.data(), g.v, n * nk);
    int bad = 0;
    const double pad = largest ? -INFINITY : INFINITY;
    for (int s = 0; s < n && bad < 3; ++s)
        for (size_t q = 0; q < nk; ++q) {
            const int j = (int)(q % k), w = cut[s + 1] - cut[s];
            const long long ix = hi[s * nk + q];
            const bool ok = j < w ? ix >= cut[s] && ix < cut[s + 1]
                                  : ix == warpkit::kShardNoIndex && wk_to_double(hv[s * nk + q]) == pad;
            if (!ok)
                cr_log_error("shard %d slot %zu: index %lld (shard [%d, %d), k %d)", s, q, ix, cut[s], cut[s + 1], k),
                    ++bad;
        }
    cudaFree(ws);
    return bad;
}

/// Row values with the cases of the split: ties (a few distinct values; bf16 values rounding
/// equal), signed zeros, an all -inf shard, NaN and +inf in one shard.
template <typename T> static void sst_fill(wk_rng* r, T* x, int cols, const std::vector<int>& cut, int kind) {
    const int n = (int)cut.size() - 1, s = (int)wk_int(r, 0, n - 1);
    for (int i = 0; i < cols; ++i) {
        double v = wk_uniform(r, -4.0, 4.0);
        if (kind == 1) v = (double)wk_int(r, -3, 3) * 0.5; // many exact ties
        if (kind == 2) v = 1.0 + wk_int(r, 0, 7) * 1e-4;   // equal in bf16 (and fp16 in part)
        if (kind == 3) v = wk_int(r, 0, 1) ? 0.0 : -0.0;   // signed zeros only
        x[i] = wk_from_double<T>(v);
    }
    if (kind == 4)
        for (int i = cut[s]; i < cut[s + 1]; ++i) x[i] = wk_from_double<T>(-INFINITY);
    if (kind == 5) {
        x[wk_int(r, cut[s], cut[s + 1] - 1)] = wk_from_double<T>(NAN);
        x[wk_int(r, cut[s], cut[s + 1] - 1)] = wk_from_double<T>(INFINITY);
    }
    if (kind == 6) x[wk_int(r, cut[s], cut[s + 1] - 1)] = wk_from_double<T>(INFINITY);
    if (kind == 7)
        for (int i = 0; i < cols; ++i) x[i] = wk_from_double<T>(-INFINITY);
}

/// One case: the split top-k and sampler against rowTopK and rowSample of the whole rows.
template <typename T> static int sst_case(wk_rng* r, long long rows, int cols, int shards, int iter) {
    const long long ld = row_draw_ld(r, cols);
    const int off = (int)wk_int(r, 0, 7);
    const size_t nx = (size_t)off + (size_t)(rows - 1) * ld + cols + 8;
    const std::vector<int> cut = sh_cuts(r, cols, shards);
    const int n = (int)cut.size() - 1, most = 2048 / n;
    static const int ks[] = {1, 2, 3, 8, 17, 50, 256, 2048};
    int k = ks[wk_int(r, 0, 7)];
    k = k < cols ? k : cols;
    k = k < most ? k : most;
    const bool largest = iter % 3 != 2;
    std::vector<T> hx(nx, wk_from_double<T>(0.0));
    for (long long q = 0; q < rows; ++q) sst_fill(r, &hx[off + q * ld], cols, cut, (int)((q + iter) % 8));
    T* dx = wk_alloc<T>(nx);
    wk_upload(dx, hx.data(), nx);
    const size_t nk = (size_t)rows * k;
    SstGathered<T> g = {wk_alloc<T>(n * nk), wk_alloc<long long>(n * nk)};
    T *wv = wk_alloc<T>(nk), *mv = wk_alloc<T>(nk), *mv2 = wk_alloc<T>(nk);
    long long *wi = wk_alloc<long long>(nk), *mi = wk_alloc<long long>(nk), *mi2 = wk_alloc<long long>(nk);
    int* mi32 = wk_alloc<int>(nk);
    int bad = sst_gather(dx + off, rows, ld, cut, k, largest, g);
    // top-k: the merge of the shards against rowTopK of the whole rows; values bitwise, indices.
    size_t bytes = 0;
    WK_CUDA(warpkit::rowTopK(dx + off, wv, wi, rows, cols, k, largest, ld, nullptr, &bytes));
    char* ws = (char*)wk_workspace(bytes);
    WK_CUDA(warpkit::rowTopK(dx + off, wv, wi, rows, cols, k, largest, ld, ws, &bytes));
    wk_poison(mv, nk);
    wk_poison(mi, nk);
    wk_poison(mv2, nk);
    wk_poison(mi2, nk);
    wk_poison(mi32, nk);
    WK_CUDA(warpkit::rowTopKMerge(g.v, g.i, mv, mi, n, rows, k, largest));
    WK_CUDA(warpkit::rowTopKMerge(g.v, g.i, mv2, mi2, n, rows, k, largest));
    WK_CUDA(warpkit::rowTopKMerge(g.v, g.i, (T*)nullptr, mi32, n, rows, k, largest));
    WK_CUDA(cudaDeviceSynchronize());
    std::vector<T> a(nk), b(nk), c(nk);
    std::vector<long long> ai(nk), bi(nk), ci(nk);
    std::vector<int> ci32(nk);
    wk_download(a.data(), wv, nk);
    wk_download(b.data(), mv, nk);
    wk_download(c.data(), mv2, nk);
    wk_download(ai.data(), wi, nk);
    wk_download(bi.data(), mi, nk);
    wk_download(ci.data(), mi2, nk);
    wk_download(ci32.data(), mi32, nk);
    for (size_t q = 0; q < nk && bad < 3; ++q)
        if (memcmp(&a[q], &b[q], sizeof(T)) != 0 || ai[q] != bi[q] || (long long)ci32[q] != bi[q])
            cr_log_error("%s %lld x %d in %d shards, k %d %s: rank %zu of row %zu: merged %g (col %lld), whole %g "
                         "(col %lld)",
                         wk_type_name<T>(), rows, cols, n, k, largest ? "largest" : "smallest", q % k, q / k,
                         wk_to_double(b[q]), bi[q], wk_to_double(a[q]), ai[q]),
                ++bad;
    if (memcmp(b.data(), c.data(), nk * sizeof(T)) != 0 || bi != ci)
        cr_log_error("%s: two merges differ", wk_type_name<T>()), ++bad;
    // sampling: the draws of the merge against rowSample(whole rows, topK = k), many settings and seeds.
    if (!largest) bad += sst_gather(dx + off, rows, ld, cut, k, true, g);
    static const float set[][3] = {{1.f, 1.f, 0.f},  {0.7f, 0.9f, 0.f}, {1.3f, 0.5f, 0.05f}, {0.f, 1.f, 0.f},
                                   {1.f, 1.f, 0.3f}, {3.f, 0.95f, 0.f}, {1e30f, 1.f, 0.f},   {0.25f, 0.8f, 0.1f}};
    long long *ts = wk_alloc<long long>(rows), *tm = wk_alloc<long long>(rows);
    std::vector<long long> hs(rows), hm(rows);
    bytes = 0;
    WK_CUDA(warpkit::rowSample(dx + off, ts, rows, cols, 1.f, k, 1.f, 0.f, 1ull, 0ull, ld, nullptr, &bytes));
    char* ws2 = (char*)wk_workspace(bytes);
    for (int c8 = 0; c8 < 8 && bad < 3; ++c8)
        for (int sd = 0; sd < (wk_quick() ? 3 : 8) && bad < 3; ++sd) {
            const float T_ = set[c8][0], P = set[c8][1], M = set[c8][2];
            const unsigned long long seed = 977ull * (unsigned)iter + (unsigned)sd, offset = (unsigned)sd * 3ull;
            wk_poison(tm, rows);
            WK_CUDA(warpkit::rowSample(dx + off, ts, rows, cols, T_, k, P, M, seed, offset, ld, ws2, &bytes));
            WK_CUDA(warpkit::rowSampleMerge(g.v, g.i, tm, n, rows, k, T_, P, M, seed, offset));
            WK_CUDA(cudaDeviceSynchronize());
            wk_download(hs.data(), ts, rows);
            wk_download(hm.data(), tm, rows);
            for (long long q = 0; q < rows && bad < 3; ++q)
                if (hs[q] != hm[q])
                    cr_log_error("%s %lld x %d in %d shards, k %d, T %g topP %g minP %g seed %llu: row %lld merged "
                                 "token %lld, whole %lld",
                                 wk_type_name<T>(), rows, cols, n, k, T_, P, M, seed, q, hm[q], hs[q]),
                        ++bad;
        }
    // the pointer form of the seed and offset
    unsigned long long* so = wk_alloc<unsigned long long>(2);
    const unsigned long long hso[2] = {4242ull, 7ull};
    wk_upload(so, hso, 2);
    wk_poison(tm, rows);
    WK_CUDA(warpkit::rowSample(dx + off, ts, rows, cols, 1.f, k, 0.9f, 0.f, 4242ull, 7ull, ld, ws2, &bytes));
    WK_CUDA(warpkit::rowSampleMerge(g.v, g.i, tm, n, rows, k, 1.f, 0.9f, 0.f, so, so + 1));
    WK_CUDA(cudaDeviceSynchronize());
    wk_download(hs.data(), ts, rows);
    wk_download(hm.data(), tm, rows);
    if (hs != hm) cr_log_error("%s: the pointer form's tokens differ from rowSample's", wk_type_name<T>()), ++bad;
    for (void* p : {(void*)dx, (void*)g.v, (void*)g.i, (void*)wv, (void*)mv, (void*)mv2, (void*)wi, (void*)mi,
                    (void*)mi2, (void*)mi32, (void*)ws, (void*)ws2, (void*)ts, (void*)tm, (void*)so})
        cudaFree(p);
    return bad;
}

template <typename T> static int sst_one(wk_rng* r, long long, int iter) {
    static const int edges[] = {1, 2, 7, 33, 300, 1031, 2053, 5000, 70001};
    const int cols = edges[wk_int(r, 0, 8)] + (int)wk_int(r, 0, 2);
    const long long rows = wk_int(r, 0, 3) == 0 ? 1 : wk_int(r, 1, cols > 8000 ? 6 : 24);
    return sst_case<T>(r, rows, cols, (int)wk_int(r, 1, 8), iter);
}

Test(device_sharded, topk_sample_split) {
    WK_REQUIRE_GPU();
    row_fuzz("sharded top-k / sample", 3302, wk_quick() ? 24 : 80, sst_one<float>, sst_one<__half>,
             sst_one<__nv_bfloat16>);
}

/// Every bad argument of the split top-k and sampler: cudaErrorInvalidValue (cudaErrorNotSupported
/// for ranks x k > 2048) before any GPU work.
static int sst_bad_calls(float* x, float* v, long long* i, long long* tok, unsigned long long* so) {
    int bad = 0;
    auto want = [&](cudaError_t e, cudaError_t w, const char* what) {
        if (e != w) cr_log_error("%s: %s", what, cudaGetErrorString(e)), ++bad;
    };
    const cudaError_t inv = cudaErrorInvalidValue, ns = cudaErrorNotSupported;
    size_t bytes = 1 << 20;
    void* ws = v + 1024;
    want(warpkit::rowTopKShard(x, v, i, -1, 8, 4, true, 0, 8, ws, &bytes), inv, "shard rows < 0");
    want(warpkit::rowTopKShard(x, v, i, 2, 0, 4, true, 0, 8, ws, &bytes), inv, "shard cols 0");
    want(warpkit::rowTopKShard(x, v, i, 2, 8, 0, true, 0, 8, ws, &bytes), inv, "shard k 0");
    want(warpkit::rowTopKShard(x, v, i, 2, 8, 4, true, 0, 7, ws, &bytes), inv, "shard ldx < cols");
    want(warpkit::rowTopKShard(x, v, i, 2, 8, 4, true, -1, 8, ws, &bytes), inv, "shard shardBegin < 0");
    want(warpkit::rowTopKShard((float*)nullptr, v, i, 2, 8, 4, true, 0, 8, ws, &bytes), inv, "shard null x");
    want(warpkit::rowTopKShard(x, (float*)nullptr, i, 2, 8, 4, true, 0, 8, ws, &bytes), inv, "shard null values");
    want(warpkit::rowTopKShard(x, v, (long long*)nullptr, 2, 8, 4, true, 0, 8, ws, &bytes), inv, "shard null indices");
    want(warpkit::rowTopKMerge(v, i, v + 64, i + 64, 0, 2, 4, true), inv, "merge ranks 0");
    want(warpkit::rowTopKMerge(v, i, v + 64, i + 64, 2, -1, 4, true), inv, "merge rows < 0");
    want(warpkit::rowTopKMerge(v, i, v + 64, i + 64, 2, 2, 0, true), inv, "merge k 0");
    want(warpkit::rowTopKMerge((float*)nullptr, i, v + 64, i + 64, 2, 2, 4, true), inv, "merge null values in");
    want(warpkit::rowTopKMerge(v, (long long*)nullptr, v + 64, i + 64, 2, 2, 4, true), inv, "merge null indices in");
    want(warpkit::rowTopKMerge(v, i, v + 64, (long long*)nullptr, 2, 2, 4, true), inv, "merge null indices");
    want(warpkit::rowTopKMerge(v, i, v + 64, i + 64, 3, 2, 683, true), ns, "merge ranks x k > 2048");
    want(warpkit::rowSampleMerge(v, i, tok, 2, 2, 4, -1.f, 1.f, 0.f, 1ull, 0ull), inv, "sample T < 0");
    want(warpkit::rowSampleMerge(v, i, tok, 2, 2, 4, NAN, 1.f, 0.f, 1ull, 0ull), inv, "sample T NaN");
    want(warpkit::rowSampleMerge(v, i, tok, 2, 2, 4, 1.f, 0.f, 0.f, 1ull, 0ull), inv, "sample topP 0");
    want(warpkit::rowSampleMerge(v, i, tok, 2, 2, 4, 1.f, 1.5f, 0.f, 1ull, 0ull), inv, "sample topP > 1");
    want(warpkit::rowSampleMerge(v, i, tok, 2, 2, 4, 1.f, 1.f, -0.1f, 1ull, 0ull), inv, "sample minP < 0");
    want(warpkit::rowSampleMerge(v, i, tok, 2, 2, 4, 1.f, 1.f, 1.1f, 1ull, 0ull), inv, "sample minP > 1");
    want(warpkit::rowSampleMerge(v, i, tok, 2, 2, 0, 1.f, 1.f, 0.f, 1ull, 0ull), inv, "sample k 0");
    want(warpkit::rowSampleMerge(v, i, (long long*)nullptr, 2, 2, 4, 1.f, 1.f, 0.f, 1ull, 0ull), inv,
         "sample null out");
    want(warpkit::rowSampleMerge(v, i, tok, 2, 2, 4, 1.f, 1.f, 0.f, (const unsigned long long*)nullptr, so), inv,
         "sample null seed");
    want(warpkit::rowSampleMerge(v, i, tok, 0, 2, 4, 1.f, 1.f, 0.f, so, so + 1), inv, "sample ranks 0");
    want(warpkit::rowSampleMerge(v, i, tok, 8, 2, 257, 1.f, 1.f, 0.f, 1ull, 0ull), ns, "sample ranks x k > 2048");
    return bad;
}

Test(device_sharded, topk_sample_bad_args) {
    float* fx = (float*)64;
    int bad = sst_bad_calls(fx, fx + 64, (long long*)4096, (long long*)8192, (unsigned long long*)16384);
    cr_expect(bad == 0, "%d bad arguments accepted (host checks)", bad);
    if (!wk_has_gpu()) return;
    // On a GPU: real buffers, poisoned, untouched by every bad call (a too small or missing workspace
    // size too); rows = 0 is a no-op.
    const int n = 1 << 18;
    float* x = wk_alloc<float>(n);
    float* v = wk_alloc<float>(n);
    long long* i = wk_alloc<long long>(n);
    long long* tok = wk_alloc<long long>(64);
    unsigned long long* so = wk_alloc<unsigned long long>(2);
    wk_poison(v, n);
    wk_poison(i, n);
    wk_poison(tok, 64);
    bad = sst_bad_calls(x, v, i, tok, so);
    size_t bytes = 0;
    WK_CUDA(warpkit::rowTopKShard(x, v, i, 2, 8, 4, true, 0, 8, nullptr, &bytes));
    cr_expect(bytes >= 1 && bytes < (size_t)n, "workspace size %zu", bytes);
    size_t small = bytes - 1;
    if (warpkit::rowTopKShard(x, v, i, 2, 8, 4, true, 0, 8, v + 4096, &small) != cudaErrorInvalidValue)
        cr_log_error("shard: a too small workspace accepted"), ++bad;
    if (warpkit::rowTopKShard(x, v, i, 2, 8, 4, true, 0, 8, v + 4096, (size_t*)nullptr) != cudaErrorInvalidValue)
        cr_log_error("shard: a null workspaceBytes accepted"), ++bad;
    WK_CUDA(warpkit::rowTopKShard(x, v, i, 0, 8, 4, true, 0, 8, nullptr, &bytes));
    WK_CUDA(warpkit::rowTopKShard(x, v, i, 0, 8, 4, true, 0, 8, v + 4096, &bytes));
    WK_CUDA(warpkit::rowTopKMerge(v, i, v + 64, i + 64, 2, 0, 4, true));
    WK_CUDA(warpkit::rowSampleMerge(v, i, tok, 2, 0, 4, 1.f, 1.f, 0.f, 1ull, 0ull));
    WK_CUDA(cudaDeviceSynchronize());
    std::vector<unsigned char> h(n * 8);
    int touched = 0;
    wk_download((float*)h.data(), v, 4096); // the part before the workspace
    for (int q = 0; q < 4096 * 4; ++q) touched += h[q] != 0xA5;
    wk_download((long long*)h.data(), i, n);
    for (size_t q = 0; q < h.size(); ++q) touched += h[q] != 0xA5;
    wk_download((long long*)h.data(), tok, 64);
    for (int q = 0; q < 64 * 8; ++q) touched += h[q] != 0xA5;
    cr_expect(bad == 0 && touched == 0, "%d bad arguments accepted, %d bytes written", bad, touched);
    for (void* p : {(void*)x, (void*)v, (void*)i, (void*)tok, (void*)so}) cudaFree(p);
}

/// rowTopKShard's size query with every data pointer null answers what the query with them answers
/// (CUB's habit), bad scalars still refused; and its workspace (the candidates) at base + 1, 3, 8,
/// 15 gives the same bits as at base (wk_workspace_any_address).
Test(device_sharded, topk_shard_workspace) {
    WK_REQUIRE_GPU();
    const cudaError_t inv = cudaErrorInvalidValue;
    const float* nx = nullptr;
    float* nv = nullptr;
    long long* ni = nullptr;
    wk_rng r = wk_rng_make(0x5a4d);
    int bad = 0;
    for (long long rows : {1LL, 3LL, 700LL})
        for (int cols : {5, 3000, 100000}) {
            if (rows * cols > 3000000) continue; // 700 rows of 100000: no other path, only time
            const int k = cols > 1000 ? 300 : 8; // k > cols pads (cols 5)
            const long long n = rows * cols, nk = rows * k;
            std::vector<float> h(n);
            for (auto& v : h) v = (float)wk_uniform(&r, -50.0, 50.0);
            float* dx = wk_alloc<float>(n);
            wk_upload(dx, h.data(), n);
            unsigned char* out = wk_alloc<unsigned char>(nk * 12 + 8);
            float* v = reinterpret_cast<float*>(out);
            long long* i = reinterpret_cast<long long*>(out + nk * 4 + (nk % 2) * 4);
            size_t real = 0, bare = 0, keep = 77;
            WK_CUDA(warpkit::rowTopKShard((const float*)dx, v, i, rows, cols, k, true, 1000, cols, nullptr, &real));
            const cudaError_t e = warpkit::rowTopKShard(nx, nv, ni, rows, cols, k, true, 1000, cols, nullptr, &bare);
            if (e != cudaSuccess || bare != real)
                cr_log_error("rows %lld cols %d: null query %s, %zu bytes (%zu with pointers)", rows, cols,
                             cudaGetErrorString(e), bare, real),
                    ++bad;
            if (warpkit::rowTopKShard(nx, nv, ni, rows, cols, 0, true, 0, cols, nullptr, &keep) != inv ||
                warpkit::rowTopKShard(nx, nv, ni, rows, cols, k, true, -1, cols, nullptr, &keep) != inv ||
                warpkit::rowTopKShard(nx, nv, ni, rows, cols, k, true, 0, cols - 1, nullptr, &keep) != inv ||
                keep != 77)
                cr_log_error("rows %lld cols %d: a bad scalar accepted by the null query", rows, cols), ++bad;
            char what[64];
            snprintf(what, sizeof what, "rowTopKShard rows %lld cols %d k %d", rows, cols, k);
            bad += wk_workspace_any_address(
                [&](void* w, size_t* b) {
                    return warpkit::rowTopKShard((const float*)dx, v, i, rows, cols, k, true, 1000, cols, w, b);
                },
                out, nk * 12 + 8, what);
            for (void* p : {(void*)dx, (void*)out}) WK_CUDA(cudaFree(p));
        }
    cr_expect(bad == 0, "%d mismatches", bad);
}
