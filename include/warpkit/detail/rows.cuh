// warpkit/detail/rows.cuh: how the device layer spreads the rows of a rows x cols matrix over the
// GPU (the path and its shape, by row length and row count), and the launch that goes with it.
// Internal: device/softmax.cuh uses it, and any other row-wise device algorithm takes the same
// path choice.
//
// Paths (each row's elements live in registers or shared memory between their one read and their
// one write, except the streamed fallback):
//   RowWarp     cols <= 32 x 8 vectors (fp32 1024, 16-bit 2048): a segment of `width` lanes per
//               row, `chunks` 16-byte vectors a lane, several rows per warp; no barriers.
//   RowBlock    one block of `threads` per row, or (sm_90) a cluster of `blocks` blocks per row,
//               `chunks` vectors a thread in registers; blocks swap {max, sum} through
//               cluster/reduce.cuh.
//   RowStaged   (sm_90) a cluster of `blocks` blocks per row; each block bulk-copies its `slice`
//               vectors into shared memory in pieces of `piece` vectors, so several blocks share an
//               SM and their load, reduce and write phases overlap.
//   RowStream   any GPU, any length: each block streams its slice twice (statistics, then output);
//               on sm_90 a cluster of up to 16 blocks shares a row.
//   RowWarpStream (detail/row_kernels.cuh: calls that write per-row outputs only) a warp per row
//               streams it once, a few vectors a lane in flight; no barriers.
#pragma once

#include "host.cuh"
#include "async.cuh"
#include "../thread/vector.cuh"
#include "types.cuh"

namespace warpkit {
namespace detail {

enum RowPath { RowWarp = 0, RowBlock = 1, RowStaged = 2, RowStream = 3, RowWarpStream = 4 };

/// A path and its shape (fields a path does not use are 0).
struct RowPlan {
    RowPath path;
    int width;   // RowWarp: lanes per row (1, 2, 4, ..., 32)
    int chunks;  // RowWarp / RowBlock: 16-byte vectors per lane or thread
    int threads; // RowBlock / RowStaged / RowStream: threads per block
    int blocks;  // RowBlock / RowStaged / RowStream: blocks per row (a cluster when > 1)
    int slice;   // RowStaged / RowStream: 16-byte vectors per block
    int piece;   // RowStaged: vectors per bulk copy
};

constexpr int kRowWarpThreads = 128;       // block of the warp path
constexpr int kRowWarpMaxChunks = 8;       // vectors a lane on the warp path
constexpr int kStageSliceBytes = 64 * 1024; // the largest staged slice: 3 blocks share an H100 SM
constexpr int kStageSliceAimBytes = 16 * 1024; // the slice staged rows aim at (rowStagedPlan)
constexpr int kStageMaxPieces = 2;
constexpr int kRowMaxClusterBlocks = 16;    // H100's non-portable cluster limit
constexpr int kStreamThreads = 512;
constexpr int kStageThreads = 128;

/// Vectors a thread holds on the block path for "16 values a thread" (C16) and "32" (C32).
template <typename T> constexpr int rowC16() { return 16 / vectorElems<T>() > 0 ? 16 / vectorElems<T>() : 1; }
template <typename T> constexpr int rowC32() { return 32 / vectorElems<T>() > 0 ? 32 / vectorElems<T>() : 1; }

/// -inf in T: the fill of a row's empty register slots.
template <typename T> WARPKIT_DEVICE T negInfAs() { return Arith<T>::from_acc(-__builtin_huge_valf()); }

/// The element types of the row-wise device algorithms.
template <typename T> struct IsRowType {
    static constexpr bool value = IsSame<T, float>::value || IsSame<T, __half>::value || IsSame<T, __nv_bfloat16>::value;
};

/// The warp path's layout: each lane of a segment of W lanes holds C body vectors and E head/tail
/// elements of a row (none when Aligned: every row starts on a 16-byte boundary and holds whole
/// vectors); a thread works on R rows at once (at least 16 values in flight).
template <typename T, int W, int C, bool Aligned> struct WarpRowShape {
    static constexpr int V = vectorElems<T>();
    static constexpr int E = Aligned ? 0 : (2 * V - 2 + W - 1) / W; // head + tail elements, at most 2V - 2
    static constexpr int K = C * V + E;
    static constexpr int R = C * V >= 16 ? 1 : 16 / (C * V);
    static constexpr int segs = kRowWarpThreads / W;
    static constexpr int rowsPerBlock = segs * R;
};

/// The warp path's shape for a row of `cols`: each lane holds `minChunks` (1, 2 or 4) vectors, or
/// fewer where the body has fewer; the segment widens until its lanes hold the body, up to 32
/// lanes, and past that the lanes hold more (its head and tail elements have slots of their own).
/// An algorithm with more work per row than per element takes more vectors a lane, so that a warp
/// shares that work over more rows at once (detail/row_kernels.cuh, rowFamilyPlan).
template <typename T> inline RowPlan rowWarpPlan(int cols, int minChunks) {
    const int vecs = cols / vectorElems<T>(); // whole vectors of any row's body
    RowPlan p{RowWarp, 1, 1, kRowWarpThreads, 1, 0, 0};
    while (p.chunks < minChunks && p.chunks < vecs) p.chunks *= 2;
    while (p.width < 32 && p.width * p.chunks < vecs) p.width *= 2;
    while (p.width * p.chunks < vecs) p.chunks *= 2;
    return p;
}

/// The block path for `vecs` vectors a row over clusters of `n` blocks of `threads`, `chunks` vectors
/// a thread: balanced slices of ceil(vecs / n) vectors (a block left empty by the rounding is dropped).
inline RowPlan rowBlockPlan(long long vecs, long long n, int threads, int chunks) {
    RowPlan p{RowBlock, 0, chunks, threads, 1, 0, 0};
    const long long slice = (vecs + n - 1) / n;
    p.slice = (int)slice;
    p.blocks = (int)((vecs + slice - 1) / slice);
    return p;
}

/// The warp-streamed path (detail/row_kernels.cuh; calls without per-element outputs only): a warp
/// per row in blocks of kRowWarpThreads.
inline RowPlan rowWarpStreamPlan() { return RowPlan{RowWarpStream, 32, 0, kRowWarpThreads, 1, 0, 0}; }

/// The streamed path over `n` blocks a row (a cluster when n > 1) for `vecs` >= 1 vectors a row:
/// balanced slices of ceil(vecs / n) vectors (a block left empty by the rounding is dropped).
inline RowPlan rowStreamPlan(long long vecs, long long n) {
    RowPlan p{RowStream, 0, 0, kStreamThreads, 1, 0, 0};
    p.slice = (int)((vecs + n - 1) / n);
    p.blocks = (int)((vecs + p.slice - 1) / p.slice);
    return p;
}

/// One block a row: the smallest block (128..1024 threads) of 16 values a thread that holds it.
template <typename T> inline RowPlan rowOneBlockPlan(long long vecs) {
    int threads = 128;
    while (threads < 1024 && (long long)threads * rowC16<T>() < vecs) threads *= 2;
    return rowBlockPlan(vecs, 1, threads, rowC16<T>());
}

/// The staged path (sm_90) for rows of `vecs` vectors: the whole number of slices nearest
/// rowBytes / `aim` where 16 blocks suffice (2/3 to 2 x aim each, one bulk copy up to 32 KB: many
/// blocks an SM; smaller slices measured slower: H100, the 16-bit cross-entropy gradient at 50257
/// columns, aim 16 KB: 8 slices of 12.6 KB 0.88x copy, 7 of 14.4 KB 0.90x, 6 of 16.8 KB 0.95x, 5
/// of 20 KB 0.97x), else the row over 16 blocks, up to 64 KB a slice (two bulk copies each past
/// 32 KB); the streamed path over 16 blocks beyond.
inline RowPlan rowStagedPlan(long long vecs, int aim) {
    const long long rowBytes = vecs * 16;
    long long n = (rowBytes + aim / 2) / aim;
    n = n < 1 ? 1 : n > kRowMaxClusterBlocks ? kRowMaxClusterBlocks : n;
    const long long slice = ((vecs + n - 1) / n + 7) / 8 * 8; // whole 128-byte lines a slice
    if (slice * 16 > kStageSliceBytes) return rowStreamPlan(vecs, kRowMaxClusterBlocks);
    RowPlan p{RowStaged, 0, 0, kStageThreads, (int)n, (int)slice, 0};
    p.piece = slice * 16 <= 32 * 1024 ? (int)slice : (int)((slice / 2 + 7) / 8 * 8);
    p.blocks = (int)((vecs + slice - 1) / slice); // a block left empty by the rounding is dropped
    return p;
}

/// The path for rows x cols of T on a device with `sms` multiprocessors (clusters: sm_90).
/// Rules and the measurements behind them: docs/design.md.
template <typename T> inline RowPlan rowPlan(long long rows, int cols, int sms, bool clusters) {
    constexpr int V = vectorElems<T>();
    constexpr bool kHalf = sizeof(T) == 2;
    // Any row's body holds at most cols / V whole vectors (its head and tail elements go to their
    // own slots), so a row of 8k + 1 columns needs no more room than one of 8k.
    const long long vecs = (long long)cols / V;
    if (vecs <= 32 * kRowWarpMaxChunks) return rowWarpPlan<T>(cols, 1);
    if (!clusters) {
        if (vecs <= 1024LL * rowC16<T>()) return rowOneBlockPlan<T>(vecs);
        RowPlan s{RowStream, 0, 0, kStreamThreads, 1, 0, 0};
        s.slice = (int)(vecs < (1LL << 30) ? vecs : (1LL << 30));
        return s;
    }
    // Few rows: when every row's blocks fit one wave, each row takes a cluster of small blocks, so
    // that every SM loads at once: 256 threads x 16 values (four blocks an SM), or for longer rows
    // 512 threads x 16 or 32 values (two an SM).
    {
        const int c16 = rowC16<T>();
        long long n = (vecs + 256LL * c16 - 1) / (256LL * c16);
        if (n > 1 && n <= kRowMaxClusterBlocks && rows * n <= 4LL * sms) return rowBlockPlan(vecs, n, 256, c16);
        int chunks = c16;
        n = (vecs + 512LL * chunks - 1) / (512LL * chunks);
        if (n > kRowMaxClusterBlocks) {
            chunks = rowC32<T>();
            n = (vecs + 512LL * chunks - 1) / (512LL * chunks);
        }
        if (n > 1 && n <= kRowMaxClusterBlocks && rows * n <= 2LL * sms) return rowBlockPlan(vecs, n, 512, chunks);
    }
    // Past here every bound is on the body's whole vectors, so that a row of 8k + 1 columns takes
    // the path of a row of 8k.
    if (vecs * V <= 8192) return rowOneBlockPlan<T>(vecs);
    if (!kHalf && vecs * V <= 65536) // fp32: clusters of 256 threads x 16 values (4096 columns a block)
        return rowBlockPlan(vecs, (vecs + 256LL * rowC16<T>() - 1) / (256LL * rowC16<T>()), 256, rowC16<T>());
    // Longer rows (16-bit rows of more than 8192): the staged path.
    return rowStagedPlan(vecs, kStageSliceAimBytes);
}

/// The body vectors that block `rank` of a staged row's cluster holds: from rank * slice on, at
/// most `slice` of them (none for a block past the row's end).
WARPKIT_DEVICE int stagedVectors(const VectorSplit& sp, int rank, int slice) {
    const long long nv = sp.vectors - (long long)rank * slice;
    return nv < 0 ? 0 : nv < slice ? (int)nv : slice;
}

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

/// Launches `kern` with `perRow` blocks a row (a cluster when `clusters` and perRow > 1: a cluster
/// of one block costs block scheduling throughput, H100 cross-entropy loss of 8192 x 8192 16-bit
/// staged in one block 0.89x copy as clusters of 1, 0.96x as plain blocks), `threads` a block and
/// `smem` bytes of dynamic shared memory, in as many launches as the grid's x limit needs:
/// go(cfg, r0) launches the rows from r0 on with configuration cfg (cudaLaunchKernelEx).
/// cudaErrorInvalidConfiguration when no cluster of perRow blocks can be resident.
template <typename K, typename Go>
inline cudaError_t launchRows(K kern, long long rows, int perRow, int threads, int smem, bool clusters, int dev,
                                     cudaStream_t st, Go go) {
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

} // namespace detail
} // namespace warpkit
