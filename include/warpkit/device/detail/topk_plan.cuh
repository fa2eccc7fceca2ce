// warpkit/device/detail/topk_plan.cuh: the plan of rowTopK and rowArgMax / rowArgMin: which kernel
// selects a row's candidates, and how a row is split over blocks in levels. Host only; the golden
// plan test (tests/device/topk_plan.cu) pins its answers. The measurements behind each rule id are
// in docs/tuning.md, section Selection. Internal: include warpkit/device/topk.cuh.
//
// Levels. Level 0 reads the rows: each of `slices[0]` blocks a row takes a contiguous slice of it
// and leaves its k best packed keys (warp/topk.cuh's topkPack) in the workspace; level i + 1 reads
// those slices[i] * k candidates a row the same way; the last level (one slice a row) writes the
// ranked outputs. One slice at level 0 is one block a row and no workspace.
//
// Rules (kTopKKernelRules: the first with cols <= maxCols and k <= maxK; kTopKSplitRules: the first
// that matches):
//   W2  cols <= 256, k <= 16    the warp select (topk_warp_select.cuh): for 2 <= k <= 2 x lanes, a bound
//                               on the row's k-th key from the lanes' two largest, then the keys at or
//                               above it ranked by counting; else (and when they overflow their slots)
//                               each lane keeps its KL = nextpow2(k) best packed keys and the lanes'
//                               lists merge in log2(lanes) butterfly rounds; 8 lanes a row (4 rows a
//                               warp); never split
//   W3  cols <= 1024, k <= 32   the warp select, 32 lanes a row (k = 17 .. 32 at 256 columns and fewer too:
//                               8 lanes would take the list select)
//   W4  cols <= 4096, k <= 8    the warp select, 32 lanes a row
//   W1  cols <= 1024            a warp a row: the row's packed keys sorted by warpBitonicSort (K = the next
//                               power of two of cols / 32 a lane), any k; never split
//   (warp kernels: kTopKWarpRows warps a block)
//   T0  k = 1, T1's rows, where rowArgMax's plan (A2, the row family) is the faster: rowArgMax's
//                       kernel (row_arg.cuh: the same answer, the value as well as the column), no
//                       workspace; with one when its blocks (rows x blocks a row) fit one wave of S3's
//                       resident blocks and each reads at most 64 KB (32 KB where they fill less than
//                       half the SMs: there S3 spreads a long row wider); without one wherever rowArgMax
//                       takes A2 (elsewhere A1 is T1 one block a row). Not for rowTopKMask
//   T1  k = 1           the threshold filter (topk_filter.cuh): one raw compare an element, survivors
//                       to a per-warp buffer, the warps' k best merged once a slice
//   T2  k <= 256        the same kernel
//   T3  k <= 2048       the streamed block select, eight running keys a thread (256 threads)
//   T4  k > 2048        T3 in passes of 2048 ranks inside one block a row (S1): pass c takes the best
//                       keys below the last key of pass c - 1; ceil(k / 2048) reads of the row
//   S1  the streamed select: rows >= 2 x SMs, or no workspace, or T4: one block a row
//   S2  the streamed select otherwise: slices = min(2 x SMs / rows, tiles in the level, level / (4 k)),
//       per level (one launch a level)
//   S3  the filter (T1, T2), 4 blocks resident an SM: the fewest slices a row (at most cols / max(1024,
//       16 k) and 4096 / k) whose rows x slices items fill the resident blocks' last wave to 90 % (else
//       the best fill); 1 without a workspace. ONE launch: each slice leaves its k best in the
//       workspace and the block that finishes a row's last slice merges them by a block radix select
//       in shared memory (rows x slices x k keys and an arrival word a row: no memset). On 132
//       SMs, k = 8: 1 row of 262144: 256 slices; 64 rows: 8; 512 rows: 1 (k = 256: 16 slices a row)
//   S4  S3 for rows <= maxRows (8) and 2 <= k <= maxK (64) with several slices a row: the slices
//       hand off their k keys in rank order, and the last block bounds the row's k-th key by the
//       slices' own keys (m slices whose j-th key is at or above B hold m x j >= k keys >= B), so
//       that it ranks or selects only the keys at or above B
//   A1-A3 rowArgMax / rowArgMin: T1 one block a row, or the row family (topkArgRule, before topkPlan)
#pragma once

#include "row_op.cuh"
#include "row_plan.cuh"

namespace warpkit {
namespace detail {

constexpr int kTopKThreads = 256;                        // threads a block, every kernel but W1
constexpr int kTopKPerThread = 16;                       // keys a thread loads per tile
constexpr int kTopKTile = kTopKThreads * kTopKPerThread; // elements a tile
constexpr int kTopKMaxLevels = 16;

constexpr int kTopKWarpRows = 8; // warps a block of the warp kernels (W1-W4)

constexpr int kTopKFilterMaxK = 256; // k of the filter kernel (T1, T2): at most one kept key a thread

enum TopKKernel { TopKFilter = 0, TopKStream = 1, TopKWarp = 2, TopKWarpSelect = 3, TopKArg = 4 };

/// A kernel rule: cols <= maxCols and k <= maxK take `kernel` with `runK` running keys a thread
/// (k <= runK x threads; the warp kernels' keys a lane follow from cols or k instead) and, for the
/// warp select, `lanes` lanes a row (8 or 32).
struct TopKKernelRule {
    const char* id;
    int maxCols, maxK;
    TopKKernel kernel;
    int runK;
    int lanes;
};
constexpr TopKKernelRule kTopKKernelRules[] = {
    {"W2", 256, 16, TopKWarpSelect, 0, 8},                 // warp select, 4 rows a warp
    {"W3", 1024, 32, TopKWarpSelect, 0, 32},               // warp select, a warp a row
    {"W4", 4096, 8, TopKWarpSelect, 0, 32},                // warp select, a warp a row
    {"W1", 1024, 1024, TopKWarp, 0, 0},                    // warp sort
    {"T1", 0x7fffffff, 1, TopKFilter, 0, 0},               // filter
    {"T2", 0x7fffffff, kTopKFilterMaxK, TopKFilter, 0, 0}, // filter
    {"T3", 0x7fffffff, 2048, TopKStream, 8, 0},            // streamed select
    {"T4", 0x7fffffff, 0x7fffffff, TopKStream, 8, 0},      // streamed select, passes
};
constexpr int kTopKMaxK = 2048; // ranks a pass of the streamed select (T3); T4 makes passes of it

/// A split rule: one block a row when rows >= minRowsPerSm x SMs (or without a workspace), else
/// blocksPerSm x SMs blocks over the rows, each slice at least minSlice and kFactor x k long.
struct TopKSplitRule {
    const char* id;
    int minRowsPerSm; // S1: rows at which one block a row fills the GPU
    int blocksPerSm;  // S2, S3: blocks to aim for
    int kFactor;      // S2, S3: a slice holds at least kFactor x k elements
    int minSlice;     // S2, S3: a slice holds at least minSlice elements
    int fillPct;      // S3: the last wave of items fills at least this share of the resident blocks
    int maxRows;      // S4: rows at most this many, and k at most maxK (else S3)
    int maxK;
};
constexpr TopKSplitRule kTopKSplitRules[] = {
    {"S1", 2, 0, 0, 0, 0, 0, 0},
    {"S2", 0, 2, 4, kTopKTile, 0, 0, 0},
    {"S3", 0, 4, 16, 1024, 90, 0, 0},
    {"S4", 0, 4, 16, 1024, 90, 8, 64},
};

/// rowTopK's plan for one call.
struct TopKPlan {
    const char* kernelRule; // id of the kernel rule ("" when k is not supported)
    const char* splitRule;  // id of the split rule
    TopKKernel kernel;      // level 0's kernel (later levels: the streamed select)
    int runK;               // running keys a thread (streamed select; 0 for the others)
    int warpK;              // keys a lane: W1 the next power of two of cols / 32; W2-W4 that of k
    int warpLanes;          // lanes a row (warp select)
    int chunks;             // passes of at most kTopKMaxK ranks (T4: more than one)
    int chunkK;             // ranks a pass: min(k, kTopKMaxK)
    bool sliceBound;        // S4 (topkFilterKernel's Bound instance): the row's last block bounds its k-th key
    int levels;             // launches
    int slices[kTopKMaxLevels];
    long long len[kTopKMaxLevels]; // elements a row at each level's input
    size_t workspaceBytes;         // S2: two candidate buffers (levels alternate between them); S3: the slices'
                                   // candidates and an arrival word a row; 0 for one slice a row
};

inline long long topkCeilDiv(long long a, long long b) { return (a + b - 1) / b; }

/// Slices a row of `len` elements takes at one level (see the rules).
inline int topkSlices(const TopKSplitRule& r, long long rows, long long len, int k, int sms) {
    long long s = topkCeilDiv((long long)r.blocksPerSm * sms, rows);
    const long long byTile = topkCeilDiv(len, r.minSlice), byK = len / ((long long)r.kFactor * k);
    s = s < byTile ? s : byTile;
    s = s < byK ? s : byK;
    return s > 1 ? (int)s : 1;
}

constexpr int kTopKFilterStage = 4096; // S3: a row's slices x k candidates, merged in shared memory

/// S3's slices a row: the fewest (1 .. min(cols / max(minSlice, kFactor x k), kTopKFilterStage / k))
/// whose items fill the last wave of resident blocks to fillPct, else those that fill it best.
inline int topkFillSlices(const TopKSplitRule& r, long long rows, int cols, int k, int sms) {
    const long long resident = (long long)r.blocksPerSm * sms;
    const long long minLen = r.minSlice > (long long)r.kFactor * k ? r.minSlice : (long long)r.kFactor * k;
    long long most = cols / minLen < resident ? cols / minLen : resident;
    most = most < kTopKFilterStage / k ? most : kTopKFilterStage / k;
    long long best = 1, bestFill = 0; // fill in percent x 1000 (integers: the same answer on every host)
    for (long long s = 1; s <= most || s == 1; ++s) {
        const long long items = rows * s, fill = items * 100000 / (topkCeilDiv(items, resident) * resident);
        if (fill > bestFill) best = s, bestFill = fill;
        if (fill >= r.fillPct * 1000LL) break;
    }
    return (int)best;
}

/// rowArgMax / rowArgMin's plan (no workspace: the answer of rowTopK with k = 1). The first rule that
/// holds:
///   A1  cols > 4096 (T1's rows: W4 serves shorter ones) and one block a row fills the last wave of
///       S3's resident blocks (blocksPerSm x SMs) to its fillPct: the filter kernel (T1), one block a
///       row, as rowTopK's k = 1 there
///   A3  16-bit rows of 1024 < cols <= 4096: the row family's plan for calls with per-element outputs
///       (R2, R3: a block of 128 a row, the row in registers, where row_arg.cuh's two-pass fold runs),
///       not its read-only one (R16: a warp a row streams it, the exact fold a vector at a time)
///   A2  otherwise: the row family's read-only plan (device/detail/row_arg.cuh, row_plan.cuh)
struct TopKArgRule {
    const char* id;
    int elemBytes;        // 0: any
    int minCols, maxCols; // minCols < cols <= maxCols
    bool filter;          // A1: the filter kernel, when one block a row fills the GPU
    bool outputPlans;     // the row family's plans for per-element outputs (else its read-only ones)
};
constexpr TopKArgRule kTopKArgRules[] = {
    {"A1", 0, 4096, 0x7fffffff, true, false},
    {"A3", 2, 1024, 4096, false, true},
    {"A2", 0, 0, 0x7fffffff, false, false},
};

/// The rule of rowArgMax / rowArgMin over rows x cols (rows >= 1, cols >= 1) of elements of
/// elemBytes on a device of `sms` SMs. Host only.
inline const TopKArgRule& topkArgRule(long long rows, int cols, int elemBytes, int sms) {
    const TopKSplitRule& s = kTopKSplitRules[2];
    const long long resident = (long long)s.blocksPerSm * sms;
    const long long fill = rows * 100000 / (topkCeilDiv(rows, resident) * resident); // percent x 1000
    for (const TopKArgRule& r : kTopKArgRules)
        if ((r.elemBytes == 0 || r.elemBytes == elemBytes) && cols > r.minCols && cols <= r.maxCols &&
            (!r.filter || fill >= s.fillPct * 1000LL))
            return r;
    return kTopKArgRules[2]; // A2 holds for every row: not reached
}

/// Rule T0: rowTopK's k = 1 by rowArgMax's kernel (A2, the row family's read-only plan) where it is
/// the faster (see the rules). The row family's plan is asked as rowArgMax asks it (row_arg.cuh).
struct TopKArgPathRule {
    const char* id;
    int maxBlockBytes;    // a block of the row family's plan reads at most this many bytes
    int spreadBlockBytes; // ... and at most this many where its blocks fill less than half the SMs
};
constexpr TopKArgPathRule kTopKArgPath = {"T0", 64 * 1024, 32 * 1024};

/// Whether rowTopK's k = 1 over rows x cols of elemBytes takes T0 (T1's rows: cols > W4's), on a
/// device of `sms` SMs with or without clusters; workspace: the call's form. Host only.
inline bool topkArgPath(long long rows, int cols, int elemBytes, int sms, bool clusters, bool workspace) {
    const TopKArgRule& a = topkArgRule(rows, cols, elemBytes, sms);
    if (a.filter || a.outputPlans) return false; // A1: T1 itself; A3: not T1's rows
    if (!workspace) return true;                 // rowArgMax's own choice over T1 one block a row
    const RowQuery q = {RowClassReduce, elemBytes, RowReadOnlyTraits::kWarpChunks, rows, cols, sms, clusters,
                        true,           false};
    const RowPlan p = rowPlanFor(q);
    const long long blocks = rows * (p.blocks > 0 ? p.blocks : 1);
    const long long bytes = p.slice > 0 ? (long long)p.slice * 16 : (long long)cols * elemBytes; // a block's read
    const TopKSplitRule& s = kTopKSplitRules[2];
    return blocks <= (long long)s.blocksPerSm * sms && bytes <= kTopKArgPath.maxBlockBytes &&
           (bytes <= kTopKArgPath.spreadBlockBytes || 2 * blocks >= sms);
}

/// The plan of rowTopK over rows x cols for k (1 <= k <= cols), on a device of `sms` SMs (with
/// `clusters`: sm_90); workspace: whether the call may use one (else one block a row); argBytes: the
/// element size where the call may take T0 (values and indices out), 0 where not (the mask). Host only.
inline TopKPlan topkPlan(long long rows, int cols, int k, int sms, bool workspace, int argBytes, bool clusters) {
    TopKPlan p = {};
    p.kernelRule = "";
    p.splitRule = "";
    for (const TopKKernelRule& r : kTopKKernelRules)
        if (cols <= r.maxCols && k <= r.maxK) {
            p.kernelRule = r.id;
            p.kernel = r.kernel;
            p.runK = r.runK;
            p.warpLanes = r.lanes;
            break;
        }
    if (p.kernelRule[0] == 0) return p;
    p.chunkK = k < kTopKMaxK ? k : kTopKMaxK;
    p.chunks = (int)topkCeilDiv(k, p.chunkK);
    k = p.chunkK; // the levels below are those of one pass
    const TopKSplitRule& whole = kTopKSplitRules[0];
    const TopKSplitRule& split = kTopKSplitRules[1];
    p.len[0] = cols;
    p.levels = 1;
    p.slices[0] = 1;
    if (p.kernel == TopKWarp || p.kernel == TopKWarpSelect) {
        p.splitRule = "-";
        for (p.warpK = 1; (p.kernel == TopKWarp ? 32 * p.warpK < cols : p.warpK < k);) p.warpK *= 2;
        return p;
    }
    if (p.kernel == TopKFilter && k == 1 && argBytes > 0 &&
        topkArgPath(rows, cols, argBytes, sms, clusters, workspace)) { // T0: rowArgMax's kernel, no workspace
        p.kernelRule = kTopKArgPath.id;
        p.kernel = TopKArg;
        p.splitRule = "-";
        return p;
    }
    if (p.kernel == TopKFilter) { // S3: one launch, the last block of a row merges its slices
        const TopKSplitRule& r = kTopKSplitRules[2];
        p.splitRule = r.id;
        p.slices[0] = workspace ? topkFillSlices(r, rows, cols, k, sms) : 1;
        if (p.slices[0] > 1) p.workspaceBytes = (size_t)rows * (size_t)p.slices[0] * (size_t)k * 8 + (size_t)rows * 8;
        const TopKSplitRule& few = kTopKSplitRules[3]; // the same slices
        if (p.slices[0] > 1 && k >= 2 && k <= few.maxK && rows <= few.maxRows) {
            p.splitRule = few.id;
            p.sliceBound = true;
        }
        return p;
    }
    if (!workspace || p.chunks > 1 || rows >= (long long)whole.minRowsPerSm * sms) {
        p.splitRule = whole.id;
        return p;
    }
    p.splitRule = split.id;
    size_t buf[2] = {0, 0};
    for (int i = 0;; ++i) {
        p.slices[i] = topkSlices(split, rows, p.len[i], k, sms);
        p.levels = i + 1;
        if (p.slices[i] == 1 || i + 1 == kTopKMaxLevels) break;
        p.len[i + 1] = (long long)p.slices[i] * k;
        const size_t bytes = (size_t)rows * (size_t)p.len[i + 1] * 8;
        buf[i & 1] = bytes > buf[i & 1] ? bytes : buf[i & 1];
    }
    p.slices[p.levels - 1] = 1; // the last level writes the outputs (kFactor >= 2 ends the loop early)
    p.workspaceBytes = buf[0] + buf[1];
    return p;
}

} // namespace detail
} // namespace warpkit
