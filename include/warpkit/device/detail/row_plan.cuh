// warpkit/device/detail/row_plan.cuh: how the row-wise device algorithms spread the rows of a
// rows x cols matrix over the GPU: the plan (a path and its shape), its makers and the one planner
// (rowPlanFor: ordered rule tables, scanned top to bottom); the compiled kernel shapes the launcher
// instantiates (rowPlanCompiled) are in row_shapes.cuh. Host only. Each rule has an id (R1, R2,
// ...): the measurements behind it are in docs/tuning.md under that id, the rules tables in
// docs/design.md.
// tests/device/row_plan.cu pins every planner's answer (row_plan.golden).
//
// Paths (each row's elements live in registers or shared memory between their one read and their
// one write, except on the streamed path):
//   RowWarp       a segment of `width` lanes per row, `chunks` 16-byte vectors a lane, several rows
//                 a warp; no barriers. Chunks are powers of two, except the row family's 32 lanes of
//                 6 (R25: fp32 rows of 129..192 vectors, the model width 768 among them), in
//                 blocks of `threads` = kRowWarpFitThreads (the others: kRowWarpThreads; rows with
//                 head/tail slots keep those, row_launch.cuh).
//   RowBlock      a block of `threads` per row, or (sm_90) a cluster of `blocks` blocks per row,
//                 `chunks` vectors a thread in registers; blocks combine their statistics through
//                 cluster/reduce.cuh.
//   RowStaged     (sm_90) a cluster of `blocks` blocks per row; each block bulk-copies its `slice`
//                 vectors into shared memory in pieces of `piece` vectors.
//   RowStream     any GPU, any length: each block streams its `slice` twice (statistics, then
//                 output); on sm_90 a cluster of up to 16 blocks shares a row.
//   RowWarpStream (calls that write per-row outputs only) a warp per row streams it once.
//   RowShort      (rowSoftmax, rows of fewer than 16 bytes' multiples up to ~256 elements, packed:
//                 ld == cols, 16-byte aligned bases) a block stages a tile of `slice` whole rows,
//                 whose elements are contiguous and start on 16 bytes, in shared memory with 16-byte
//                 accesses; a segment of `width` lanes per row holds `chunks` elements a lane. The
//                 data decides at run time: a short plan for rows that are not packed runs R1's
//                 warp plan (row_launch.cuh).
#pragma once

#include "../../cluster/reduce.cuh"
#include "../../thread/vector.cuh"

namespace warpkit {
namespace detail {

enum RowPath { RowWarp = 0, RowBlock = 1, RowStaged = 2, RowStream = 3, RowWarpStream = 4, RowShort = 5 };

/// A path and its shape (fields a path does not use are 0). Built by the makers below.
struct RowPlan {
    RowPath path;
    int width;   // RowWarp / RowShort: lanes per row (1, 2, 4, ..., 32)
    int chunks;  // RowWarp / RowBlock: 16-byte vectors per lane or thread; RowShort: elements a lane
    int threads; // threads per block
    int blocks;  // RowBlock / RowStaged / RowStream: blocks per row (a cluster when > 1)
    int slice;   // RowBlock / RowStaged / RowStream: 16-byte vectors per block; RowShort: rows a block
    int piece;   // RowStaged: vectors per bulk copy
};

// clang-format off
constexpr int kRowWarpThreads = 128;            // block of the warp paths
constexpr int kRowWarpFitThreads = 512;         // block of R25's warp shape, aligned rows (R25)
constexpr int kRowWarpMaxChunks = 8;            // vectors a lane on the warp path
constexpr int kStageThreads = 128;              // block of the staged path
constexpr int kStreamThreads = 512;             // block of the streamed path
constexpr int kStageSliceBytes = 64 * 1024;     // the largest staged slice (R11)
constexpr int kStageSliceAimBytes = 16 * 1024;  // the slice staged rows aim at (R11)
constexpr int kStageReduceSliceBytes = 32 * 1024; // the slice of staged rows without outputs (R17, R19)
constexpr int kStageMaxPieces = 2;              // bulk copies a staged slice takes
constexpr int kStageMaxBytes = 64 * 1024;       // a staged block with column slices takes at most this (R22)
constexpr int kRowShortThreads = 128;           // block of the short path (R24)
constexpr int kRowShortTileBytes = 16 * 1024;   // the short path's tile of rows (R24)
constexpr int kRowShortMaxChunks = 8;           // elements a lane on the short path (R24)
// clang-format on

/// Vectors a thread holds for "16 values a thread" (C16) and "32" (C32), V elements a vector.
constexpr int rowValuesChunks(int values, int V) { return values / V > 0 ? values / V : 1; }
template <typename T> constexpr int rowC16() { return rowValuesChunks(16, vectorElems<T>()); }
template <typename T> constexpr int rowC32() { return rowValuesChunks(32, vectorElems<T>()); }

// ---- plan makers ----------------------------------------------------------------------------------

/// The warp path for a row of `cols` of V-element vectors: each lane holds `minChunks` (1, 2 or 4)
/// vectors, or fewer where the body has fewer; the segment widens until its lanes hold the body,
/// up to 32 lanes, and past that the lanes hold more.
inline RowPlan rowWarpPlan(int V, int cols, int minChunks) {
    const int vecs = cols / V; // whole vectors of any row's body
    RowPlan p{RowWarp, 1, 1, kRowWarpThreads, 1, 0, 0};
    while (p.chunks < minChunks && p.chunks < vecs) p.chunks *= 2;
    while (p.width < 32 && p.width * p.chunks < vecs) p.width *= 2;
    while (p.width * p.chunks < vecs) p.chunks *= 2;
    return p;
}

/// Shared-memory wavefronts of a warp's first read on the short path for 2-byte rows of `cols`:
/// its 32 / W segments read the first W elements of rows 0, 1, ...; the most distinct 4-byte words
/// one bank serves.
inline int rowShortWays16(int cols, int W) {
    int n[32] = {}, most = 0, prev = -1;
    for (int s = 0; s < 32 / W; ++s)
        for (int w = s * cols / 2; w <= (s * cols + W - 1) / 2; ++w)
            if (w != prev) {
                prev = w;
                most = ++n[w % 32] > most ? n[w % 32] : most;
            }
    return most;
}

/// The short path (R24) for packed rows of `cols` elements of 16 / V bytes: one lane a row of up to
/// kRowShortMaxChunks elements (1, 2, 4 or 8 a lane), past that the narrowest segment of
/// kRowShortMaxChunks elements a lane that holds the row. 16-bit rows past one lane: a segment
/// twice as wide where the first read of a warp's segments takes 4 wavefronts or more (rows of
/// nearly a multiple of 128 bytes, not whole vectors: their segments share banks), and
/// ceil(cols / width) elements a lane rounded up to 4, 5, 6 or 8, or 7 at 32 lanes (the row
/// stage's work is per slot, and 16-bit tiles hold twice the rows of fp32 ones). A tile of whole
/// rows, at most kRowShortTileBytes, whose count is a multiple of the segments a block (every pass
/// of the block over its rows full) and of the rows whose elements fill whole 16-byte vectors
/// (every tile starts on 16 bytes).
inline RowPlan rowShortPlan(int V, int cols) {
    RowPlan p{RowShort, 1, 1, kRowShortThreads, 1, 0, 0};
    while (p.chunks < kRowShortMaxChunks && p.chunks < cols) p.chunks *= 2;
    while (p.width < 32 && p.width * p.chunks < cols) p.width *= 2;
    if (V == 8 && p.width > 1) {
        if (p.width < 32 && cols % V != 0 && rowShortWays16(cols, p.width) >= 4) p.width *= 2;
        const int k = (cols + p.width - 1) / p.width;
        p.chunks = k <= 4 ? 4 : k <= 6 || (k == 7 && p.width == 32) ? k : kRowShortMaxChunks;
    }
    int g = V; // V / gcd(cols, V): the rows of one whole number of vectors
    while (g > 1 && cols % (V / (g / 2)) == 0) g /= 2;
    const int segs = kRowShortThreads / p.width, unit = g > segs ? g : segs;
    const int fit = kRowShortTileBytes / (16 / V) / cols / unit * unit;
    p.slice = fit > unit ? fit : unit;
    return p;
}

/// The block path for `vecs` vectors a row over clusters of `n` blocks of `threads`, `chunks`
/// vectors a thread: balanced slices of ceil(vecs / n) vectors (a block left empty is dropped).
inline RowPlan rowBlockPlan(long long vecs, long long n, int threads, int chunks) {
    const long long slice = (vecs + n - 1) / n;
    return RowPlan{RowBlock, 0, chunks, threads, (int)((vecs + slice - 1) / slice), (int)slice, 0};
}

/// One block a row: the smallest block (128..1024 threads) of 16 values a thread that holds it.
inline RowPlan rowOneBlockPlan(int V, long long vecs) {
    const int c16 = rowValuesChunks(16, V);
    int threads = 128;
    while (threads < 1024 && (long long)threads * c16 < vecs) threads *= 2;
    return rowBlockPlan(vecs, 1, threads, c16);
}

/// The streamed path over `n` blocks a row (a cluster when n > 1) for `vecs` >= 1 vectors a row:
/// balanced slices of ceil(vecs / n) vectors (a block left empty is dropped).
inline RowPlan rowStreamPlan(long long vecs, long long n) {
    const long long slice = (vecs + n - 1) / n;
    return RowPlan{RowStream, 0, 0, kStreamThreads, (int)((vecs + slice - 1) / slice), (int)slice, 0};
}

/// The warp-streamed path: a warp per row in blocks of kRowWarpThreads.
inline RowPlan rowWarpStreamPlan() { return RowPlan{RowWarpStream, 32, 0, kRowWarpThreads, 1, 0, 0}; }

/// The staged path over slices of `slice` vectors (whole 128-byte lines), each bulk-copied in
/// pieces of `piece`, for rows of `vecs` vectors (a block left empty is dropped).
inline RowPlan rowStagedSlicesPlan(long long vecs, int slice, int piece) {
    return RowPlan{RowStaged, 0, 0, kStageThreads, (int)((vecs + slice - 1) / slice), slice, piece};
}

/// The staged path (R11) for rows of `vecs` vectors: the whole number of slices nearest
/// rowBytes / `aim`, at most 16; one bulk copy a slice up to 32 KB, two past it. False (no plan)
/// when a slice would pass kStageSliceBytes.
inline bool rowStagedFits(long long vecs, int aim, RowPlan* out) {
    long long n = (vecs * 16 + aim / 2) / aim;
    n = n < 1 ? 1 : n > kClusterMaxBlocks ? kClusterMaxBlocks : n;
    const long long slice = ((vecs + n - 1) / n + 7) / 8 * 8;
    if (slice * 16 > kStageSliceBytes) return false;
    *out = rowStagedSlicesPlan(vecs, (int)slice, slice * 16 <= 32 * 1024 ? (int)slice : (int)((slice / 2 + 7) / 8 * 8));
    return true;
}

/// rowStagedFits's plan, else the streamed path over 16 blocks (R12).
inline RowPlan rowStagedPlan(long long vecs, int aim) {
    RowPlan p;
    return rowStagedFits(vecs, aim, &p) ? p : rowStreamPlan(vecs, kClusterMaxBlocks);
}

/// Whether rows of `cols` elements (V a vector) fill every slot of plan p's register shape: the warp
/// path's width x chunks vectors a row, or the block path's blocks x threads x chunks (slices of
/// threads x chunks). Aligned, such rows take the full-row kernels (row_launch.cuh's rowRunsFull).
inline bool rowPlanFills(const RowPlan& p, int V, int cols) {
    const long long vecs = cols / V;
    if (cols % V != 0) return false;
    if (p.path == RowWarp) return (long long)p.width * p.chunks == vecs;
    if (p.path == RowBlock) return p.slice == p.threads * p.chunks && (long long)p.blocks * p.slice == vecs;
    return false;
}

// ---- the planner ----------------------------------------------------------------------------------

/// The planner's question: the algorithm's kind (RowClass), its element size and warp chunks
/// (P::kWarpChunks; 1 for rowSoftmax), the shape, the device, and two facts of the call's data.
enum RowClass { RowClassSoftmax, RowClassOutputs, RowClassReduce }; // rowSoftmax; per-element outputs; per-row only
struct RowQuery {
    RowClass cls;
    int elemBytes;  // 4 (fp32) or 2 (fp16, bf16)
    int warpChunks; // the fewest vectors a lane of the warp path holds (1, 2 or 4)
    long long rows;
    int cols;
    int sms;
    bool clusters;  // thread-block clusters (sm_90)
    bool stageable; // the inputs bulk-copy with input 0's split (rowStageable)
    bool columns;   // per-column arrays (LayerNorm's w, b) are in use
};

/// A rule's condition on the row count, against the multiprocessors (k x SMs).
enum RowRowsTest {
    RowsAny,
    RowsWave,      // rows x (the shape's blocks a row) <= k x SMs: every row's blocks in one wave
    RowsMany,      // rows >= k x SMs
    RowsOver,      // rows > k x SMs
    RowsFewSlices, // rows x ceil(row bytes / kStageReduceSliceBytes) < k x SMs
};
struct RowRowsCond {
    RowRowsTest test;
    int k;
};

enum RowShapeKind {
    ShapeWarp,
    ShapeOneBlock,
    ShapeBlock,
    ShapeCluster,
    ShapeClusterOver,
    ShapeStaged,
    ShapeStream,
    ShapeWarpStream,
    ShapeShort,
    ShapeWarpFit
};
/// What a rule builds. ShapeBlock: one block of `threads` x `values` values a thread. ShapeCluster:
/// blocks of `threads` x `values` over n = ceil(vecs / (threads x chunks)) blocks, no rule when n
/// is below `arg` or above kClusterMaxBlocks. ShapeClusterOver: blocks of `threads` x `values` over
/// `arg` blocks (slices of ceil(vecs / arg)), no rule when a slice passes a block. ShapeStaged:
/// rowStagedFits with aim `arg` bytes (no rule when it does not fit). ShapeStream: `arg` blocks a
/// row (0: enough for 8 blocks an SM, at least 2048 vectors a block, at most kClusterMaxBlocks).
/// ShapeShort: rowShortPlan, no rule for rows of whole vectors (R1 serves them at the copy
/// ceiling). ShapeWarpFit: a warp a row of `arg` vectors a lane (R25).
struct RowShape {
    RowShapeKind kind;
    int threads, values, arg;
};

/// A rule: when the element size (0: any), clusters (-1: either), the row's whole-vector columns
/// (vecs x V in (above, max]), its columns (cols > colsAbove) and the rows test hold, the shape.
struct RowRule {
    const char* id;
    int elemBytes;
    int clusters;
    long long above, max;
    int colsAbove;
    RowRowsCond rows;
    RowShape shape;
};

constexpr long long kRowNoMax = 1LL << 40;
constexpr RowRowsCond kRowsAny = {RowsAny, 0};
constexpr RowRowsCond rowsWave(int k) { return {RowsWave, k}; }
constexpr RowRowsCond rowsMany(int k) { return {RowsMany, k}; }
constexpr RowRowsCond rowsOver(int k) { return {RowsOver, k}; }
constexpr RowShape kShapeWarp = {ShapeWarp, 0, 0, 0};
constexpr RowShape kShapeOneBlock = {ShapeOneBlock, 0, 0, 0};
constexpr RowShape kShapeWarpStream = {ShapeWarpStream, kRowWarpThreads, 0, 0};
constexpr RowShape kShapeShort = {ShapeShort, kRowShortThreads, 0, 0};
constexpr RowShape shapeBlock(int threads, int values) { return {ShapeBlock, threads, values, 1}; }
constexpr RowShape shapeCluster(int threads, int values, int minBlocks) {
    return {ShapeCluster, threads, values, minBlocks};
}
constexpr RowShape shapeClusterOver(int threads, int values, int blocks) {
    return {ShapeClusterOver, threads, values, blocks};
}
constexpr RowShape shapeStaged(int aimBytes) { return {ShapeStaged, kStageThreads, 0, aimBytes}; }
constexpr RowShape shapeStream(int blocks) { return {ShapeStream, kStreamThreads, 0, blocks}; }
constexpr RowShape shapeWarpFit(int threads, int chunks) { return {ShapeWarpFit, threads, 0, chunks}; }
constexpr RowShape kShapeWarpFit = shapeWarpFit(kRowWarpFitThreads, 6); // R25's

// The rules (what each does; why: docs/tuning.md). Bounds are on the row's whole-vector columns.
// clang-format off
//                                 id     elem clus above  max       cols  rows            shape
constexpr RowRule kR1f32        = {"R1",  4, -1, -1,    1024,      0, kRowsAny,       kShapeWarp};
constexpr RowRule kR1h16        = {"R1",  2, -1, -1,    2048,      0, kRowsAny,       kShapeWarp};
constexpr RowRule kR2           = {"R2",  2, -1, 1024,  2048,      0, kRowsAny,       shapeBlock(128, 16)};
constexpr RowRule kR3           = {"R3",  2, -1, 2048,  4096,      0, kRowsAny,       shapeBlock(128, 32)};
constexpr RowRule kR4           = {"R4",  0, 0,  -1,    16384,     0, kRowsAny,       kShapeOneBlock};
constexpr RowRule kR5           = {"R5",  0, 0,  -1,    kRowNoMax, 0, kRowsAny,       shapeStream(1)};
constexpr RowRule kR6           = {"R6",  0, 1,  -1,    kRowNoMax, 0, rowsWave(4),    shapeCluster(256, 16, 2)};
constexpr RowRule kR7           = {"R7",  0, 1,  -1,    kRowNoMax, 0, rowsWave(2),    shapeCluster(512, 16, 2)};
constexpr RowRule kR8           = {"R8",  0, 1,  131072, kRowNoMax, 0, rowsWave(2),   shapeCluster(512, 32, 2)};
constexpr RowRule kR28          = {"R28", 0, 1,  131072, kRowNoMax, 0, rowsWave(1),   shapeClusterOver(512, 32, kClusterMaxBlocks)};
constexpr RowRule kR9           = {"R9",  0, 1,  -1,    8192,      0, kRowsAny,       kShapeOneBlock};
constexpr RowRule kR10          = {"R10", 4, 1,  8192,  65536,     0, kRowsAny,       shapeCluster(256, 16, 1)};
constexpr RowRule kR11          = {"R11", 0, 1,  -1,    kRowNoMax, 0, kRowsAny,       shapeStaged(kStageSliceAimBytes)};
constexpr RowRule kR12          = {"R12", 0, 1,  -1,    kRowNoMax, 0, kRowsAny,       shapeStream(kClusterMaxBlocks)};
constexpr RowRule kR13          = {"R13", 2, 1,  4096,  8192,      0, rowsOver(4),    shapeStaged(kStageSliceAimBytes)};
constexpr RowRule kR14          = {"R14", 4, 1,  8192,  65536,     0, kRowsAny,       shapeStaged(kStageSliceAimBytes)};
constexpr RowRule kR15a         = {"R15", 0, 1,  -1,    kRowNoMax, 0, kRowsAny,       shapeCluster(256, 16, 1)};
constexpr RowRule kR15b         = {"R15", 0, 1,  -1,    kRowNoMax, 0, kRowsAny,       shapeCluster(512, 16, 1)};
constexpr RowRule kR15c         = {"R15", 0, 1,  -1,    kRowNoMax, 0, kRowsAny,       shapeCluster(512, 32, 1)};
constexpr RowRule kR16f32       = {"R16", 4, -1, 2048,  3072,      0, rowsMany(8),    kShapeWarpStream};
constexpr RowRule kR16h16       = {"R16", 2, -1, 1024,  6144,      0, rowsMany(8),    kShapeWarpStream};
constexpr RowRule kR17          = {"R17", 0, 1,  4096,  8192,      0, rowsOver(4),    shapeStaged(kStageReduceSliceBytes)};
constexpr RowRule kR18          = {"R18", 0, 1,  -1,    kRowNoMax, 8192, {RowsFewSlices, 1}, shapeStaged(kStageSliceAimBytes)};
constexpr RowRule kR19          = {"R19", 0, 1,  -1,    kRowNoMax, 8192, kRowsAny,    shapeStaged(kStageReduceSliceBytes)};
constexpr RowRule kR20          = {"R20", 0, 1,  -1,    kRowNoMax, 8192, kRowsAny,    shapeStream(0)};
constexpr RowRule kR21          = {"R21", 0, 0,  -1,    kRowNoMax, 8192, kRowsAny,    shapeStream(1)};
constexpr RowRule kR24f32       = {"R24", 4, -1, -1,    140,       0, kRowsAny,       kShapeShort};
constexpr RowRule kR24h16       = {"R24", 2, -1, -1,    248,       0, kRowsAny,       kShapeShort};
constexpr RowRule kR25          = {"R25", 4, -1, 512,   768,       0, kRowsAny,       kShapeWarpFit};

/// rowSoftmax's rules.
constexpr RowRule kRowSoftmaxRules[] = {kR24f32, kR24h16, kR1f32, kR1h16, kR4,  kR5,  kR6,
                                        kR7,     kR28,    kR8,    kR9,    kR10, kR11, kR12};
/// The row family's rules for calls with per-element outputs.
constexpr RowRule kRowOutputRules[] = {kR2,  kR3, kR25, kR1f32, kR1h16, kR4, kR5, kR13,
                                       kR6,  kR7, kR8,  kR9,    kR14,   kR11, kR12};
/// The row family's rules for calls with per-row outputs only (the cross-entropy loss alone).
constexpr RowRule kRowReduceRules[] = {kR16f32, kR16h16, kR18, kR19, kR20, kR21, kR2, kR3, kR1f32, kR1h16, kR4, kR17, kR6, kR7, kR9};
/// R15: a staged plan that cannot stage (inputs aligned differently, rowStageable) or should not
/// (fp32 slices past 32 KB with column arrays in use) takes the first register cluster that
/// holds the row, else R12.
constexpr RowRule kRowRegisterRules[] = {kR15a, kR15b, kR15c, kR12};
// clang-format on

template <int N> constexpr int rowRuleCount(const RowRule (&)[N]) { return N; }

/// rowSoftmax's question.
inline RowQuery rowSoftmaxQuery(int elemBytes, long long rows, int cols, int sms, bool clusters) {
    return RowQuery{RowClassSoftmax, elemBytes, 1, rows, cols, sms, clusters, true, false};
}

/// Whether rule r's conditions on the query hold (the shape may still decline: rowRuleShape).
inline bool rowRuleHolds(const RowRule& r, const RowQuery& q, long long vals) {
    return (r.elemBytes == 0 || r.elemBytes == q.elemBytes) && (r.clusters < 0 || (r.clusters == 1) == q.clusters) &&
           vals > r.above && vals <= r.max && q.cols > r.colsAbove;
}

/// Rule r's plan for the query (false: the shape or the rows test declines).
inline bool rowRuleShape(const RowRule& r, const RowQuery& q, long long vecs, RowPlan* out) {
    const int V = 16 / q.elemBytes;
    const RowShape& s = r.shape;
    long long n = 1; // the shape's blocks a row, for the rows test
    switch (s.kind) {
    case ShapeWarp:
        *out = rowWarpPlan(V, q.cols, q.warpChunks);
        break;
    case ShapeOneBlock:
        *out = rowOneBlockPlan(V, vecs);
        break;
    case ShapeBlock:
        *out = rowBlockPlan(vecs, 1, s.threads, rowValuesChunks(s.values, V));
        break;
    case ShapeCluster: {
        const long long per = (long long)s.threads * rowValuesChunks(s.values, V);
        n = (vecs + per - 1) / per;
        if (n < s.arg || n > kClusterMaxBlocks) return false;
        *out = rowBlockPlan(vecs, n, s.threads, rowValuesChunks(s.values, V));
        break;
    }
    case ShapeClusterOver: {
        const long long per = (long long)s.threads * rowValuesChunks(s.values, V);
        if ((vecs + s.arg - 1) / s.arg > per) return false;
        *out = rowBlockPlan(vecs, s.arg, s.threads, rowValuesChunks(s.values, V));
        n = out->blocks;
        break;
    }
    case ShapeStaged:
        if (!rowStagedFits(vecs, s.arg, out)) return false;
        break;
    case ShapeStream: {
        long long b = s.arg;
        if (b == 0) { // enough blocks for 8 an SM, each of 2048 vectors or more
            const long long most = vecs / 2048 > 1 ? vecs / 2048 : 1;
            b = (8LL * q.sms + q.rows - 1) / q.rows;
            b = b < most ? b : most;
            b = b < kClusterMaxBlocks ? b : kClusterMaxBlocks;
        }
        *out = rowStreamPlan(vecs, b);
        break;
    }
    case ShapeWarpStream:
        *out = rowWarpStreamPlan();
        break;
    case ShapeShort:
        if (q.cols % V == 0) return false;
        *out = rowShortPlan(V, q.cols);
        break;
    case ShapeWarpFit:
        *out = RowPlan{RowWarp, 32, s.arg, s.threads, 1, 0, 0};
        break;
    }
    const long long k = (long long)r.rows.k * q.sms;
    switch (r.rows.test) {
    case RowsAny:
        return true;
    case RowsWave:
        return q.rows * n <= k;
    case RowsMany:
        return q.rows >= k;
    case RowsOver:
        return q.rows > k;
    case RowsFewSlices:
        return q.rows * ((vecs * 16 + kStageReduceSliceBytes - 1) / kStageReduceSliceBytes) < k;
    }
    return false;
}

/// The first rule of `rules` (n of them) whose conditions and shape hold; `id` gets its id.
inline RowPlan rowScanRules(const RowRule* rules, int n, const RowQuery& q, const char** id) {
    const long long vecs = (long long)q.cols / (16 / q.elemBytes); // a row of 8k + 1 columns plans as one of 8k
    const long long vals = vecs * (16 / q.elemBytes);
    RowPlan p = rowStreamPlan(vecs > 0 ? vecs : 1, 1);
    for (int i = 0; i < n; ++i)
        if (rowRuleHolds(rules[i], q, vals) && rowRuleShape(rules[i], q, vecs, &p)) {
            *id = rules[i].id;
            return p;
        }
    *id = "none"; // every table ends in a rule that holds for its rows: not reached
    return p;
}

/// The plan for query q, and (id not null) the id of the rule that gave it.
inline RowPlan rowPlanFor(const RowQuery& q, const char** id = nullptr) {
    const char* rid = nullptr;
    RowPlan p;
    if (q.cls == RowClassSoftmax) p = rowScanRules(kRowSoftmaxRules, rowRuleCount(kRowSoftmaxRules), q, &rid);
    else if (q.cls == RowClassOutputs) p = rowScanRules(kRowOutputRules, rowRuleCount(kRowOutputRules), q, &rid);
    else p = rowScanRules(kRowReduceRules, rowRuleCount(kRowReduceRules), q, &rid);
    if (p.path == RowStaged && q.cls != RowClassSoftmax &&
        (!q.stageable || (q.elemBytes == 4 && q.columns && p.slice * 16 > 32 * 1024)))
        p = rowScanRules(kRowRegisterRules, rowRuleCount(kRowRegisterRules), q, &rid);
    if (id) *id = rid;
    return p;
}

/// R15's plan on its own: the register cluster (else streamed) plan for rows of `cols` elements of
/// elemBytes (a staged plan forced where the inputs cannot stage).
inline RowPlan rowRegisterPlan(int elemBytes, int cols) {
    const RowQuery q{RowClassOutputs, elemBytes, 1, 1, cols, 1, true, false, false};
    const char* id = nullptr;
    return rowScanRules(kRowRegisterRules, rowRuleCount(kRowRegisterRules), q, &id);
}

} // namespace detail
} // namespace warpkit
