// warpkit/device/detail/row_launch.cuh: the row-wise algorithms' host side: launch helpers (grid
// chunks, cluster configuration, the cluster-fit cache), the launches of the row family's kernels
// for the compiled shapes of row_shapes.cuh (and nothing else), the one runner (rowRun: a plan, and
// the one fall-back when a cluster does not fit), and the family's dispatcher (rowOpDispatch).
// rowSoftmax (device/softmax.cuh) runs on the same runner with its own kernels (its overloads of
// the rowLaunch* functions below). Internal.
//
// Errors: a launch returns only its own error; a plan without a compiled kernel returns
// cudaErrorNotSupported (tests/device/row_plan.cu proves none is planned); a cluster that cannot
// be resident (cudaErrorInvalidConfiguration from launchRows' occupancy question, before any
// launch) takes the streamed path in clusters of at most 8. That code never comes from the runtime's
// launch itself (cudaLaunchKernelEx refuses a configuration with cudaErrorInvalidValue or
// cudaErrorInvalidClusterSize, which are returned as they are), so a retry leaves no error behind.
// A short plan (R24) for rows that are not packed (rowShortPacked) runs R1's warp plan instead.
#pragma once

#include "row_kernels.cuh"
#include "row_shapes.cuh"
#include "row_short.cuh"
#include "../../detail/host.cuh"

namespace warpkit {
namespace detail {

// ---- launch helpers -----------------------------------------------------------------------------

/// Calls launchOne(r0, n) for consecutive chunks [r0, r0 + n) of `rows` rows, at most
/// `rowsPerLaunch` each (so that no grid passes the hardware's x limit). Returns the first error.
template <typename Launch>
inline cudaError_t launchRowChunks(long long rows, long long rowsPerLaunch, Launch launchOne) {
    for (long long r0 = 0; r0 < rows; r0 += rowsPerLaunch) {
        const long long n = rows - r0 < rowsPerLaunch ? rows - r0 : rowsPerLaunch;
        WARPKIT_TRY(launchOne(r0, n));
    }
    return cudaSuccess;
}

/// A launch configuration: grid x = `blocks`, `threads` a block, `smem` dynamic shared memory,
/// clusters of `clusterN` along x (no cluster attribute when clusterN == 0: a GPU without them).
struct RowLaunch {
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute attr[2];
};
inline void rowLaunchConfig(RowLaunch* l, long long blocks, int threads, int smem, int clusterN, bool balance,
                            cudaStream_t stream) {
    l->cfg = cudaLaunchConfig_t{};
    l->cfg.gridDim = dim3((unsigned)blocks);
    l->cfg.blockDim = dim3((unsigned)threads);
    l->cfg.dynamicSmemBytes = (size_t)smem;
    l->cfg.stream = stream;
    l->cfg.attrs = l->attr;
    l->cfg.numAttrs = 0;
    if (clusterN > 0) {
        l->attr[0].id = cudaLaunchAttributeClusterDimension;
        l->attr[0].val.clusterDim.x = (unsigned)clusterN;
        l->attr[0].val.clusterDim.y = 1;
        l->attr[0].val.clusterDim.z = 1;
        l->cfg.numAttrs = 1;
        if (balance) {
            l->attr[1].id = cudaLaunchAttributeClusterSchedulingPolicyPreference;
            l->attr[1].val.clusterSchedulingPolicyPreference = cudaClusterSchedulingPolicyLoadBalancing;
            l->cfg.numAttrs = 2;
        }
    }
}

/// Whether clusters of `n` blocks of `kernel` (threads, dynamic shared memory) can be resident on
/// device `dev` at all; asks the occupancy calculator once per (kernel, device, n, smem) for the
/// non-portable sizes (n > 8) and allows them on the kernel.
template <typename K> inline cudaError_t rowClusterFits(K kernel, int dev, int n, int threads, int smem, bool* fits) {
    *fits = true;
    if (n <= 8) return cudaSuccess;
    const void* key = reinterpret_cast<const void*>(kernel);
    int have = 0;
    if (hostCacheGet(key, dev, n, smem, &have)) {
        *fits = have > 0;
        return cudaSuccess;
    }
    WARPKIT_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    RowLaunch l;
    rowLaunchConfig(&l, n, threads, smem, n, false, 0);
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &l.cfg) != cudaSuccess) {
        (void)cudaGetLastError(); // a size the device cannot run at all: not an error of the call
        clusters = 0;
    }
    hostCachePut(key, dev, n, smem, clusters);
    *fits = clusters > 0;
    return cudaSuccess;
}

/// The hardware limit of a grid's x dimension.
constexpr long long kMaxGridX = 2147483647LL;

/// Calls launchOne(r0, n, blocks) for consecutive chunks [r0, r0 + n) of `rows` rows, `rowsPerBlock`
/// rows a block: `blocks` blocks cover the chunk, and no grid passes the x limit (the warp paths).
template <typename Launch>
inline cudaError_t launchRowBlocks(long long rows, long long rowsPerBlock, Launch launchOne) {
    return launchRowChunks(rows, kMaxGridX * rowsPerBlock, [&](long long r0, long long n) {
        return launchOne(r0, n, (int)((n + rowsPerBlock - 1) / rowsPerBlock));
    });
}

/// Launches `kern` with `perRow` blocks a row (a cluster when `clusters` and perRow > 1; one block
/// a row takes no cluster attribute, R23), `threads` a block and
/// `smem` bytes of dynamic shared memory, in as many launches as the grid's x limit needs:
/// go(cfg, r0) launches the rows from r0 on with configuration cfg (cudaLaunchKernelEx).
/// cudaErrorInvalidConfiguration when no cluster of perRow blocks can be resident.
template <typename K, typename Go> inline cudaError_t
launchRows(K kern, long long rows, int perRow, int threads, int smem, bool clusters, int dev, cudaStream_t st, Go go) {
    WARPKIT_TRY(allowDynamicSmem(kern, dev, smem)); // before the occupancy question, which depends on it
    if (clusters) {
        bool fits = true;
        WARPKIT_TRY(rowClusterFits(kern, dev, perRow, threads, smem, &fits));
        if (!fits) return cudaErrorInvalidConfiguration;
    }
    const long long perLaunch = kMaxGridX / perRow;
    return launchRowChunks(rows, perLaunch, [&](long long r0, long long n) {
        RowLaunch l;
        rowLaunchConfig(&l, n * perRow, threads, smem, clusters && perRow > 1 ? perRow : 0, perRow > 8, st);
        return go(l.cfg, r0);
    });
}

// ---- the row family's launches, one per path --------------------------------------------------
// rowRun calls these for a params type P; rowSoftmax overloads each for its own kernels.

/// The warp path: segments of W lanes, C vectors a lane, in blocks of Threads (Full: rowRunsFull).
template <int W, int C, bool Aligned, int Threads = kRowWarpThreads, bool Full = false, typename P>
inline cudaError_t rowLaunchWarp(const P& p, long long rows, int cols, cudaStream_t st) {
    constexpr int perBlock = rowWarpRowsPerBlock<typename P::Elem, W, C, Aligned>(Threads);
    return launchRowBlocks(rows, perBlock, [&](long long r0, long long n, int blocks) {
        return launchKernel(rowOpWarpKernel<P, W, C, Aligned, Threads, Full>, blocks, Threads, st, rowAt(p, r0), n,
                            cols);
    });
}

template <int Threads, int C, bool Aligned, bool Full = false, bool Copy = false, typename P> inline cudaError_t
rowLaunchBlock(const RowPlan& pl, const P& p, long long rows, int cols, bool clusters, int dev, cudaStream_t st) {
    // R30 (sm_90 clusters): the kernel that copies the column arrays' first pieces, with shared
    // memory for them (one slot a thread each), where P's arrays in use allow (rowBlockColumnArrays).
    constexpr int CP = rowBlockColumnPieces<P, Threads, C, Aligned, Full>();
    if constexpr (CP > 0 && !Copy) {
        if (clusters && rowBlockColumnArrays(p) > 0)
            return rowLaunchBlock<Threads, C, Aligned, Full, true>(pl, p, rows, cols, clusters, dev, st);
    }
    auto kern = rowOpBlockKernel<P, Threads, C, Aligned, Full, Copy>;
    int smem = 0;
    if constexpr (Copy) smem = rowBlockColumnArrays(p) * CP * Threads * 16;
    return launchRows(kern, rows, pl.blocks, Threads, smem, clusters, dev, st,
                      [&](const cudaLaunchConfig_t& cfg, long long r0) {
                          return cudaLaunchKernelEx(&cfg, kern, rowAt(p, r0), cols, pl.slice);
                      });
}

/// Whether a staged block of `slice` vectors also stages the column arrays in use (R22): at most as
/// many as its inputs, within kStageMaxBytes.
template <typename P> inline bool rowStagesColumns(const P& p, int slice) {
    const int nc = rowColumnsInUse(p);
    return nc > 0 && nc <= P::kInputs && (P::kInputs + nc) * slice * 16 <= kStageMaxBytes;
}

/// The staged plan `pl` (sm_90): clusters of pl.blocks blocks, the inputs' slices (and the staged
/// column arrays') in dynamic shared memory.
template <typename P>
inline cudaError_t rowLaunchStaged(const RowPlan& pl, const P& p, long long rows, int cols, int dev, cudaStream_t st) {
    if constexpr (!IsSame<RowElem1<P>, typename P::Elem>::value) {
        return cudaErrorNotSupported; // inputs of two types never stage (rowOpRun gives them register plans)
    } else {
        auto kern = rowOpStagedKernel<P, kStageThreads>;
        const bool stageCols = rowStagesColumns(p, pl.slice);
        const int smem = (P::kInputs + (stageCols ? rowColumnsInUse(p) : 0)) * pl.slice * 16;
        return launchRows(kern, rows, pl.blocks, kStageThreads, smem, true, dev, st,
                          [&](const cudaLaunchConfig_t& cfg, long long r0) {
                              return cudaLaunchKernelEx(&cfg, kern, rowAt(p, r0), cols, pl.slice, pl.piece, stageCols);
                          });
    }
}

template <typename P> inline cudaError_t rowLaunchStream(const RowPlan& pl, const P& p, long long rows, int cols,
                                                         bool clusters, int dev, cudaStream_t st) {
    auto kern = rowOpStreamKernel<P, kStreamThreads>;
    return launchRows(kern, rows, pl.blocks, kStreamThreads, 0, clusters && pl.blocks > 1, dev, st,
                      [&](const cudaLaunchConfig_t& cfg, long long r0) {
                          return cudaLaunchKernelEx(&cfg, kern, rowAt(p, r0), cols, pl.slice);
                      });
}

/// The warp-streamed path: a warp per row, blocks of kRowWarpThreads.
template <typename P> inline cudaError_t rowLaunchWarpStream(const P& p, long long rows, int cols, cudaStream_t st) {
    return launchRowBlocks(rows, kRowWarpThreads / 32, [&](long long r0, long long n, int blocks) {
        return launchKernel(rowReduceWarpKernel<P>, blocks, kRowWarpThreads, st, rowAt(p, r0), n, cols);
    });
}

/// The short path (R24) for packed rows (rowShortPacked): plan pl's shape of the element size's
/// short shapes (rowShortShape), ceil(rows / pl.slice) blocks, in as many launches as the grid's x
/// limit needs.
template <typename R, int I = 0>
inline cudaError_t rowLaunchShort(const RowPlan& pl, const R& r, long long rows, int cols, cudaStream_t st) {
    constexpr int eb = (int)sizeof(typename R::Elem);
    if constexpr (I < rowShortShapeCount(eb)) {
        constexpr RowWarpShape s = rowShortShape(eb, I);
        if (pl.width != s.width || pl.chunks != s.chunks) return rowLaunchShort<R, I + 1>(pl, r, rows, cols, st);
        return launchRowBlocks(rows, pl.slice, [&](long long r0, long long n, int blocks) {
            return launchKernel(rowShortKernel<R, s.width, s.chunks>, blocks, kRowShortThreads, st, r, r0, r0 + n, cols,
                                pl.slice);
        });
    } else {
        return cudaErrorNotSupported;
    }
}

// ---- the runner ---------------------------------------------------------------------------------

/// What rowRun runs: a row family params type P (the default), or rowSoftmax's (device/softmax.cuh
/// specialises this: it lacks the 128 x 32 block shape and the warp-streamed path).
template <typename R> struct RowRunner { static constexpr bool softmax = false; };

/// The launch of plan pl's warp shape: one instantiation for each entry of kRowWarpShapes, and the
/// row family's kRowWarpFitShape for fp32 (R25): aligned rows in blocks of pl.threads
/// (kRowWarpFitThreads), rows with head/tail slots in blocks of kRowWarpThreads (in 2 blocks of 512
/// an SM, the 64 registers a thread that leaves, cross-entropy and softmax backward spill there).
/// Full (aligned rows, rowRunsFull): the full-row kernels.
template <typename R, bool Aligned, bool Full = false, int I = 0>
inline cudaError_t rowWarpShapes(const RowPlan& pl, const R& r, long long rows, int cols, cudaStream_t st) {
    if constexpr (I < kRowWarpShapeCount) {
        constexpr RowWarpShape s = kRowWarpShapes[rowWarpShapeRow(R::kWarpChunks)][I];
        if (pl.width == s.width && pl.chunks == s.chunks) {
            if constexpr (Full) return rowLaunchWarp<s.width, s.chunks, true, kRowWarpThreads, true>(r, rows, cols, st);
            else return rowLaunchWarp<s.width, s.chunks, Aligned>(r, rows, cols, st);
        }
        return rowWarpShapes<R, Aligned, Full, I + 1>(pl, r, rows, cols, st);
    } else if constexpr (!RowRunner<R>::softmax && sizeof(typename R::Elem) == 4 &&
                         (Aligned || RowWarpFitUnaligned<R>::value)) {
        constexpr RowWarpShape s = kRowWarpFitShape;
        constexpr int threads = Aligned ? kRowWarpFitThreads : kRowWarpThreads;
        if (pl.width == s.width && pl.chunks == s.chunks)
            return rowLaunchWarp<s.width, s.chunks, Aligned, threads, Full>(r, rows, cols, st);
        return cudaErrorNotSupported;
    } else {
        return cudaErrorNotSupported;
    }
}

/// Whether a block shape of C vectors a thread (elements of elemBytes) has a full-row kernel: all but
/// fp32's 32 values a thread, whose full kernel took 74 registers on sm_90 against the general one's
/// 64 (in blocks of 512, one block an SM instead of 2; capped at 64 it spilled).
constexpr bool rowBlockFullShape(int elemBytes, int chunks) { return !(elemBytes == 4 && chunks == 8); }

/// The launch of plan pl's block shape: one instantiation for each entry of kRowBlockShapes (Full:
/// the full-row kernels, as rowWarpShapes, where rowBlockFullShape).
template <typename R, bool Aligned, bool Full = false, int I = 0> inline cudaError_t
rowBlockShapes(const RowPlan& pl, const R& r, long long rows, int cols, bool clusters, int dev, cudaStream_t st) {
    if constexpr (I < kRowBlockShapeCount) {
        constexpr RowBlockShape s = kRowBlockShapes[I];
        if constexpr (s.softmax || !RowRunner<R>::softmax) {
            constexpr int C = rowValuesChunks(s.values, vectorElems<typename R::Elem>());
            if (pl.threads == s.threads && pl.chunks == C) {
                if constexpr (Full && rowBlockFullShape((int)sizeof(typename R::Elem), C))
                    return rowLaunchBlock<s.threads, C, true, true>(pl, r, rows, cols, clusters, dev, st);
                else return rowLaunchBlock<s.threads, C, Aligned>(pl, r, rows, cols, clusters, dev, st);
            }
        }
        return rowBlockShapes<R, Aligned, Full, I + 1>(pl, r, rows, cols, clusters, dev, st);
    } else {
        return cudaErrorNotSupported;
    }
}

/// Whether plan pl of params r runs its full-row kernel (P::kFullRows): the rows are aligned
/// (`aligned`: rowAligned), fill every slot of the plan's shape (rowPlanFills), which has one
/// (rowBlockFullShape), and the column arrays in use start on 16 bytes.
template <typename R> inline bool rowRunsFull(const RowPlan& pl, const R& r, int cols, bool aligned) {
    if constexpr (RowFullRows<R>::value)
        return aligned && rowPlanFills(pl, vectorElems<typename R::Elem>(), cols) && rowColumnsAligned(r) &&
               (pl.path != RowBlock || rowBlockFullShape((int)sizeof(typename R::Elem), pl.chunks));
    else return false;
}

/// Runs plan `pl` of r (row family params, or rowSoftmax's) on device `dev` with properties d:
/// cudaErrorNotSupported for a plan without a compiled kernel; a cluster the device cannot hold (a
/// non-portable size on a partitioned GPU, say) takes the streamed path in clusters of at most 8.
template <typename R> inline cudaError_t rowRun(RowPlan pl, const R& r, long long rows, int cols, int dev,
                                                const DeviceProps& d, cudaStream_t st) {
    using T = typename R::Elem;
    constexpr RowClass cls = RowRunner<R>::softmax ? RowClassSoftmax : RowClassOutputs;
    const bool aligned = rowAligned(r, cols);
    for (;;) {
        if (!rowPlanCompiled(cls, (int)sizeof(T), R::kWarpChunks, R::kReduceWarp, pl)) return cudaErrorNotSupported;
        cudaError_t e = cudaErrorNotSupported;
        switch (pl.path) {
        case RowWarp:
            if (!aligned && !RowWarpFitUnaligned<R>::value && pl.width == kRowWarpFitShape.width &&
                pl.chunks == kRowWarpFitShape.chunks) { // R25's shape left out for these rows: R1's plan
                pl = rowWarpPlan(vectorElems<T>(), cols, R::kWarpChunks);
                continue;
            }
            if constexpr (RowFullRows<R>::value)
                if (rowRunsFull(pl, r, cols, aligned)) return rowWarpShapes<R, true, true>(pl, r, rows, cols, st);
            return aligned ? rowWarpShapes<R, true>(pl, r, rows, cols, st)
                           : rowWarpShapes<R, false>(pl, r, rows, cols, st);
        case RowWarpStream:
            if constexpr (R::kReduceWarp) return rowLaunchWarpStream(r, rows, cols, st);
            return cudaErrorNotSupported;
        case RowShort: // rows that are not packed take the warp plan R1 gives them
            if constexpr (RowRunner<R>::softmax)
                if (rowShortPacked(rowShortRows(r), cols)) return rowLaunchShort(pl, r, rows, cols, st);
            pl = rowWarpPlan(vectorElems<T>(), cols, R::kWarpChunks);
            continue;
        case RowBlock:
            if constexpr (RowFullRows<R>::value) {
                if (rowRunsFull(pl, r, cols, aligned)) {
                    e = rowBlockShapes<R, true, true>(pl, r, rows, cols, d.clusters, dev, st);
                    break;
                }
            }
            e = aligned ? rowBlockShapes<R, true>(pl, r, rows, cols, d.clusters, dev, st)
                        : rowBlockShapes<R, false>(pl, r, rows, cols, d.clusters, dev, st);
            break;
        case RowStaged:
            e = rowLaunchStaged(pl, r, rows, cols, dev, st);
            break;
        case RowStream:
            e = rowLaunchStream(pl, r, rows, cols, d.clusters, dev, st);
            if (pl.blocks <= 8) return e;
            break;
        }
        if (e != cudaErrorInvalidConfiguration) return e;
        pl = rowStreamPlan(((long long)cols + vectorElems<T>() - 1) / vectorElems<T>(), d.clusters ? 8 : 1);
    }
}

// ---- the row family's dispatcher ----------------------------------------------------------------

/// The planner's question for params p (R15 reads which column arrays are in use and whether the
/// inputs stage together).
template <typename P>
inline RowQuery rowOpQuery(const P& p, long long rows, int cols, int sms, bool clusters, bool reduceOnly) {
    return RowQuery{reduceOnly ? RowClassReduce : RowClassOutputs,
                    (int)sizeof(typename P::Elem),
                    P::kWarpChunks,
                    rows,
                    cols,
                    sms,
                    clusters,
                    rowStageable(p),
                    rowColumnsInUse(p) > 0};
}

/// rowRun of plan pl for params p; a staged plan the inputs cannot take (forced by a test: inputs
/// aligned differently, or no clusters) runs in register clusters (R15).
template <typename P> inline cudaError_t rowOpRun(RowPlan pl, const P& p, long long rows, int cols, int dev,
                                                  const DeviceProps& d, cudaStream_t st) {
    if (pl.path == RowStaged && !(d.clusters && rowStageable(p)))
        pl = rowRegisterPlan((int)sizeof(typename P::Elem), cols);
    return rowRun(pl, p, rows, cols, dev, d, st);
}

/// The row family's dispatcher: the contract's check (row_op.cuh), then rowOpRun with the plan for
/// rows x cols on the current device (`reduceOnly`: nothing written per element).
template <typename P>
inline cudaError_t rowOpDispatch(const P& p, long long rows, int cols, cudaStream_t st, bool reduceOnly = false) {
    if constexpr (rowOpCheck<P>()) {
        int dev = 0;
        DeviceProps d;
        WARPKIT_TRY(currentDevice(&dev, &d));
        return rowOpRun(rowPlanFor(rowOpQuery(p, rows, cols, d.sms, d.clusters, reduceOnly)), p, rows, cols, dev, d,
                        st);
    } else {
        return cudaErrorNotSupported;
    }
}

} // namespace detail
} // namespace warpkit
