// tests/device/row_common.cuh: what the tests of the row-wise device algorithms share
// (rowSoftmax, rowLayerNorm / rowRmsNorm, rowCrossEntropy, rowSoftmaxBackward):
//  - row_draw_shape / row_draw_ld: the fuzzers' random row shapes and strides;
//  - row_fuzz: the fuzz loop over float, __half and __nv_bfloat16, as one expectation;
//  - row_thinned, row_props, row_forced_plans, row_many_rows, row_expect_paths: the `paths` tests'
//    pieces;
//  - row_full_shapes, row_run_full: the full-row kernels' tests.
#pragma once

#include "../common.cuh"
#include <warpkit/device/detail/row_launch.cuh>
#include <vector>

/// Column counts at the row paths' boundaries (the fuzzers draw +-1 around them).
static const int kRowEdges[] = {4, 8, 32, 64, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144};

/// A random row shape: cols log-uniform over 1..300000, a third of the draws next to a path
/// boundary; rows 0, 1, or up to min(3000, budget / cols), at least 1.
static inline void row_draw_shape(wk_rng* r, long long budget, long long* rows, int* cols) {
    int c;
    if (wk_int(r, 0, 2) == 0) c = kRowEdges[wk_int(r, 0, 14)] + (int)wk_int(r, -1, 1);
    else c = (int)exp(wk_uniform(r, 0.0, log(300000.0)));
    c = c < 1 ? 1 : c;
    const long long maxRows = budget / c > 0 ? budget / c : 1;
    const int pick = (int)wk_int(r, 0, 9);
    *rows = pick == 0 ? 0 : pick == 1 ? 1 : wk_int(r, 1, maxRows < 3000 ? maxRows : 3000);
    *cols = c;
}

/// A random leading dimension for rows of `cols`: cols itself a third of the time, else 1..9 more.
static inline long long row_draw_ld(wk_rng* r, int cols) { return cols + (wk_int(r, 0, 2) == 0 ? 0 : wk_int(r, 1, 9)); }

/// One fuzz case of element type T: draws its shape from r (at most `budget` elements a row
/// array), runs it and returns its mismatches.
typedef int (*RowFuzzOne)(wk_rng* r, long long budget, int iter);

/// `iters` fuzz cases from the seeded stream `seed`, each of a random type among float, __half and
/// __nv_bfloat16; one expectation that none failed, naming `what`.
static inline void row_fuzz(const char* what, uint64_t seed, int iters, RowFuzzOne f32, RowFuzzOne f16, RowFuzzOne bf16) {
    wk_rng r = wk_rng_make(seed);
    const long long budget = wk_quick() ? (1 << 16) : (1 << 19);
    int bad = 0, failed = 0;
    for (int i = 0; i < iters; ++i) {
        const int type = (int)wk_int(&r, 0, 2);
        const int b = (type == 0 ? f32 : type == 1 ? f16 : bf16)(&r, budget, i);
        bad += b;
        failed += b > 0;
    }
    cr_expect(bad == 0, "%s fuzz: %d of %d cases failed (%d mismatches)", what, failed, iters, bad);
}

/// The `paths` tests' column counts, in order: all of them, or every third under racecheck
/// (wk_thin).
static inline std::vector<int> row_thinned(const std::vector<int>& cols) {
    std::vector<int> kept;
    for (size_t i = 0; i < cols.size(); ++i)
        if (!wk_thin((int)i, 3)) kept.push_back(cols[i]);
    return kept;
}

/// The full-row tests' shapes: each of the n widths (d = 0) and its neighbours a vector (V elements)
/// and an element short and over (d = -V, V, -1, 1; under racecheck those of every third width,
/// wk_thin): fn(c, d, rows) with c = width + d, rows 3 from 8192 columns, else 37.
template <typename F> static inline void row_full_shapes(const int* widths, int n, int V, F fn) {
    for (int i = 0; i < n; ++i)
        for (int d : {0, -V, V, -1, 1}) {
            if (d != 0 && wk_thin(i, 3)) continue;
            const int c = widths[i] + d;
            fn(c, d, c >= 8192 ? 3LL : 37LL);
        }
}

/// Runs p (aligned rows x cols) through the full-row kernel (`full`) or the general aligned kernel
/// of the dispatcher's plan on the current device, and waits for it; false (nothing run) where that
/// plan's rows do not fill it (rowRunsFull: a device without clusters, say).
template <typename P> static inline bool row_run_full(const P& p, long long rows, int cols, bool full) {
    using namespace warpkit::detail;
    int dev = 0;
    DeviceProps d;
    WK_CUDA(currentDevice(&dev, &d));
    const RowPlan pl = rowPlanFor(rowOpQuery(p, rows, cols, d.sms, d.clusters, false));
    if (!rowRunsFull(pl, p, cols, true)) return false;
    const cudaError_t e =
        pl.path == RowWarp
            ? (full ? rowWarpShapes<P, true, true>(pl, p, rows, cols, 0) : rowWarpShapes<P, true>(pl, p, rows, cols, 0))
            : (full ? rowBlockShapes<P, true, true>(pl, p, rows, cols, d.clusters, dev, 0)
                    : rowBlockShapes<P, true>(pl, p, rows, cols, d.clusters, dev, 0));
    cr_expect(e == cudaSuccess, "cols %d: the %s kernel's launch returned %s", cols, full ? "full-row" : "general",
              cudaGetErrorString(e));
    WK_CUDA(cudaDeviceSynchronize());
    return true;
}

/// The current device's properties, as the dispatchers see them.
static inline warpkit::detail::DeviceProps row_props(void) {
    int dev = 0;
    warpkit::detail::DeviceProps d;
    WK_CUDA(warpkit::detail::currentDevice(&dev, &d));
    return d;
}

/// Rows enough to fill the device past one wave of the few-rows rule at `cols` columns, so that
/// the row-length rules choose the plan.
static inline long long row_many_rows(const warpkit::detail::DeviceProps& d, int cols) { return (long long)d.sms * 2048 * 16 / cols + 3; }

/// Plans that run every kernel of the row-op dispatcher on `cols` columns of P's type: the dispatcher's
/// for 3 and 2^24 rows, and (cols small enough) each block shape on one block and on a cluster of
/// up to `blockCluster`, the streamed path on one block and on a cluster of `streamCluster`, and
/// (sm_90) the staged path in the dispatcher's slices and in small ones of two pieces each over a
/// cluster of `streamCluster`. Each test picks its own cluster sizes, so that between them the
/// sizes 2..6 all run.
template <typename P>
static std::vector<warpkit::detail::RowPlan> row_forced_plans(int cols, const warpkit::detail::DeviceProps& d, int blockCluster,
                                                              int streamCluster) {
    using namespace warpkit::detail;
    using T = typename P::Elem;
    const P none{};
    std::vector<RowPlan> ps = {rowPlanFor(rowOpQuery(none, 3, cols, d.sms, d.clusters, false)),
                               rowPlanFor(rowOpQuery(none, 1LL << 24, cols, d.sms, d.clusters, false))};
    if (wk_quick() && cols > 40000) return ps; // the sanitizers: forced plans on the shorter rows only
    const long long vecs = cols / warpkit::vectorElems<T>();
    const int shapes[6][2] = {{128, rowC16<T>()}, {256, rowC16<T>()}, {512, rowC16<T>()}, {1024, rowC16<T>()}, {512, rowC32<T>()}, {128, rowC32<T>()}};
    for (const auto& s : shapes) {
        if (vecs <= (long long)s[0] * s[1]) ps.push_back(rowBlockPlan(vecs > 0 ? vecs : 1, 1, s[0], s[1]));
        if (d.clusters && vecs >= 3 && vecs <= (long long)blockCluster * s[0] * s[1])
            ps.push_back(rowBlockPlan(vecs, vecs < blockCluster ? vecs : blockCluster, s[0], s[1]));
    }
    ps.push_back(rowStreamPlan(vecs > 0 ? vecs : 1, 1));
    if (d.clusters && vecs >= streamCluster) ps.push_back(rowStreamPlan(vecs, streamCluster));
    if (d.clusters && vecs >= 2 * streamCluster) {
        ps.push_back(rowStagedPlan(vecs, kStageSliceAimBytes));
        const long long slice = (vecs + streamCluster - 1) / streamCluster;
        if (slice * 16 <= kStageSliceBytes / 2) // the dispatcher's plan covers longer rows
            ps.push_back(rowStagedSlicesPlan(vecs, (int)slice, (int)((slice + 1) / 2)));
    }
    return ps;
}

/// The `paths` expectations of a row op: no mismatches, and the warp, block and streamed plans
/// (seen[path] set when one ran) all ran, and the staged plans where the GPU has clusters.
static inline void row_expect_paths(const char* what, int bad, const int* seen) {
    cr_expect(bad == 0, "%s paths: %d mismatches", what, bad);
    cr_expect(seen[warpkit::detail::RowWarp] && seen[warpkit::detail::RowBlock] && seen[warpkit::detail::RowStream],
              "warp, block and streamed plans all ran");
    cr_expect(!row_props().clusters || seen[warpkit::detail::RowStaged], "staged plans ran (sm_90)");
}
