// warpkit/device/detail/norm_backward_plan.cuh: the plan of rowLayerNormBackward and
// rowRmsNormBackward (device/norm_backward.cuh): which kernel takes a row, and how the rows are
// split into parts whose dw / db partial sums a last kernel adds in part order. Host only; the
// golden plan test (tests/device/norm_backward_plan.cu) pins its answers. The measurements behind
// each rule id are in docs/tuning.md, section Norm backward. Internal: include
// warpkit/device/norm_backward.cuh.
//
// Rules (kNbPathRules: the first whose column limit holds; kNbPartRules by path):
//   N1  cols <= 8192 (16-byte aligned rows) or <= 4096 (any alignment): the register path, a group
//       of `group` threads a row (the narrowest power of two of 32..1024 holding the row at
//       kNbElems elements a thread), in blocks of at least 256 threads (several groups a block);
//       one read of the row, up to 3 rows' loads (dres's too) in flight a group (nbRowsAhead)
//   N2  longer rows: the split path, each row cut into slices of kNbSliceCols columns, a block of
//       kNbSliceThreads threads a slice (grid slices x parts): where the grid fits the GPU at once
//       (a cooperative launch), one kernel whose blocks exchange each row's slice sums through
//       global memory and write dx from registers (one read of the row); else a first kernel writes
//       each slice's two row sums, a second re-reads the slice for dx (two reads). Same bits.
//   N3  register path (and the split path's rows of at most 8192 columns): parts = ceil(rows /
//       rows a block at a time), at most 256: blocks of 256 threads fit 2 an SM (their registers
//       hold rows in flight, not more blocks), so 256 blocks are one wave on a 132-SM GPU, each
//       block's first loads and last partials paid once; 16-bit rows in blocks of 256 (at most 2048
//       columns) fit 3 an SM, one row ahead each, so at most 384 (one wave of 396)
//   N4  split path past 8192 columns: parts = floor(blocks / slices), at least 1, at most rows:
//       at most `blocks` blocks (unless slices alone pass it) however few the rows (384: the
//       one-pass kernel's 3 blocks an SM on 132 SMs, all resident at once), each part's dw / db
//       partials one row of the workspace
//   N5  the final sum of the parts' partials: `finish` threads a column, the narrowest power of two
//       of 1..32 that leaves each at most kNbFinishLoads parts, in blocks of kNbFinishThreads (few
//       parts, as on the split path: one thread a column and wide blocks, not 32 threads a column
//       with most of them idle)
// A part is a balanced range of consecutive rows; each column's partial adds the part's rows in a
// fixed order (a group's rows in order, then the groups in order), so dw / db's bits depend on
// (rows, cols, element size) alone: the same on every GPU, stream and call. Aligned and unaligned
// rows of 4097 to 8192 columns take N1 and N2 with one row a block at a time and the same parts
// (N3), so alignment does not change them either; the workspace size follows from parts and slices.
#pragma once

#include "../../detail/host.cuh" // alignUp16

namespace warpkit {
namespace detail {

constexpr int kNbElems = 8;                              // elements of each input a thread holds (N1, N2)
constexpr int kNbMaxGroup = 1024;                        // the widest row group (N1)
constexpr int kNbMaxColsVec = kNbMaxGroup * kNbElems;    // the longest row in registers (N1)
constexpr int kNbMaxColsElem = kNbMaxColsVec / 2;        // element slots (N1): groups of 1024 would spill
constexpr int kNbRegsThreads = 256;                      // the register path's narrowest block (N1)
constexpr int kNbSliceThreads = 256;                     // the split path's block (N2)
constexpr int kNbSliceCols = kNbSliceThreads * kNbElems; // columns a slice (N2)
constexpr int kNbFinishThreads = 256;                    // the final sum's block (N5)
constexpr int kNbFinishLoads = 16;                       // the final sum: parts a thread at most (N5)
constexpr int kNbFinishMaxLanes = 32;                    // the final sum: threads a column at most (N5)
constexpr int kNbSumsWords = 2;                          // 64-bit words of a row's record of a slice's sums (N2)

/// Whether rows of elemBytes-byte elements in blocks of `threads` on the register path are N1 / N3's
/// 16-bit rows in blocks of kNbRegsThreads (at most 2048 columns): 3 blocks an SM, one row ahead each,
/// dres loaded after the row sums, at most maxParts16 parts (measured faster at 768-1024 columns than
/// 3 rows ahead at 2 blocks an SM). The plan and the kernels' bounds read it alike.
WARPKIT_HD constexpr bool nbNarrow16(int elemBytes, int threads) { return elemBytes == 2 && threads == kNbRegsThreads; }

/// A path rule: rows of at most maxColsVec columns (every row 16-byte aligned: vector slots) or
/// maxColsElem columns (any alignment: element slots) take `path`; minThreads: threads a block at
/// least (the register path's blocks hold max(group, minThreads) threads; the split path's blocks
/// exactly minThreads).
enum NbPath { NbRegs = 0, NbSplit = 1 };
struct NbPathRule {
    const char* id;
    int maxColsVec, maxColsElem;
    NbPath path;
    int minThreads;
};
constexpr NbPathRule kNbPathRules[] = {
    {"N1", kNbMaxColsVec, kNbMaxColsElem, NbRegs, kNbRegsThreads},
    {"N2", 0x7fffffff, 0x7fffffff, NbSplit, kNbSliceThreads},
};

/// A split rule: at most maxParts parts; blocks > 0: parts = floor(blocks / slices) (1..rows),
/// else one part per `rows a block at a time` rows; the ...16 fields for 16-bit elements (N3:
/// maxParts16 only in blocks of kNbRegsThreads, where they fit 3 an SM).
struct NbPartRule {
    const char* id;
    int maxParts, maxParts16, blocks, blocks16;
};
constexpr NbPartRule kNbPartRules[] = {{"N3", 256, 384, 0, 0}, {"N4", 512, 512, 384, 384}};
constexpr int kNbMaxParts = 512; // the largest maxParts above

/// How a call spreads: `group` threads a row or a slice, in blocks of `threads`, the row cut into
/// `slices` (1 on the register path), the rows split into `parts` ranges of consecutive rows;
/// vec: vector slots; finish: threads a column of the final sum (N5).
struct NormBackwardPlan {
    const char* pathRule; // id of the path rule
    const char* partRule; // id of the split rule
    NbPath path;
    int group, threads, slices, parts;
    bool vec;
    int finish;
};

/// N5: threads a column of the final sum over `parts` partials: the narrowest power of two of
/// 1..kNbFinishMaxLanes that gives each at most kNbFinishLoads parts. Host only.
inline int nbFinishLanes(int parts) {
    int l = 1;
    while (l < kNbFinishMaxLanes && (long long)l * kNbFinishLoads < parts) l *= 2;
    return l;
}

/// The register path's plan (N1, N3) for rows x cols of elemBytes-byte elements. Host only.
inline NormBackwardPlan nbRegsPlan(long long rows, int cols, bool vec, int elemBytes) {
    NormBackwardPlan p = {kNbPathRules[0].id, kNbPartRules[0].id, NbRegs, 32, 0, 1, 1, vec, 1};
    while ((long long)p.group * kNbElems < cols) p.group *= 2;
    p.threads = p.group > kNbPathRules[0].minThreads ? p.group : kNbPathRules[0].minThreads;
    const long long per = p.threads / p.group, parts = (rows + per - 1) / per;
    const int cap = nbNarrow16(elemBytes, p.threads) ? kNbPartRules[0].maxParts16 : kNbPartRules[0].maxParts;
    p.parts = (int)(parts < 1 ? 1 : parts < cap ? parts : cap);
    p.finish = nbFinishLanes(p.parts);
    return p;
}

/// The plan for rows x cols of elemBytes-byte elements (4, or 2 for 16-bit); vec: every row of dy,
/// x and dx (if written) and w (if given) starts on 16 bytes and cols is a whole number of vectors.
/// Host only.
inline NormBackwardPlan normBackwardPlan(long long rows, int cols, bool vec, int elemBytes) {
    if (cols <= (vec ? kNbPathRules[0].maxColsVec : kNbPathRules[0].maxColsElem))
        return nbRegsPlan(rows, cols, vec, elemBytes);
    const NbPathRule& r = kNbPathRules[1];
    NormBackwardPlan p = {r.id, "", NbSplit, r.minThreads, r.minThreads, 1, 1, vec, 1};
    p.slices = (int)(((long long)cols + kNbSliceCols - 1) / kNbSliceCols);
    if (cols <= kNbMaxColsVec) { // the aligned rows' parts (N3), so that alignment keeps dw / db's bits
        const NormBackwardPlan a = nbRegsPlan(rows, cols, true, elemBytes);
        p.partRule = a.partRule;
        p.parts = a.parts;
        p.finish = a.finish;
        return p;
    }
    const NbPartRule& s = kNbPartRules[1];
    const int blocks = elemBytes == 2 ? s.blocks16 : s.blocks;
    long long parts = blocks / p.slices; // slices x parts at most `blocks`: all resident at once
    parts = parts < rows ? parts : rows;
    p.partRule = s.id;
    p.parts = (int)(parts < 1 ? 1 : parts < s.maxParts ? parts : s.maxParts);
    p.finish = nbFinishLanes(p.parts);
    return p;
}

/// Workspace bytes for elemBytes-byte elements: 16 for alignment, `arrays` (dw, db wanted) float
/// partials of cols a part, and where any alignment takes the split path, a record of the row's two
/// sums a row and slice (kNbSumsWords 64-bit words, 16-byte aligned). Parts and slices are those of
/// the unaligned plan, which the aligned one's parts equal (see above).
inline size_t normBackwardBytes(long long rows, int cols, int arrays, int elemBytes) {
    if (rows <= 0 || cols <= 0) return 0;
    const NormBackwardPlan u = normBackwardPlan(rows, cols, false, elemBytes);
    const size_t partials = (size_t)arrays * (size_t)u.parts * (size_t)cols * sizeof(float);
    const size_t sums = u.path == NbSplit ? (size_t)rows * (size_t)u.slices * kNbSumsWords * 8 : 0;
    return partials + sums == 0 ? 0 : 16 + alignUp16(partials) + sums;
}

/// The block of the register path's kernel for groups of `group` threads (nbLaunchRegs).
constexpr int nbRegsThreads(int group) { return group > kNbRegsThreads ? group : kNbRegsThreads; }

/// Whether norm_backward.cuh's dispatcher (nbLaunch) has a kernel for plan p: the register path
/// for groups 32..1024 in blocks of nbRegsThreads(group) (element slots up to 512: 1024 spills),
/// the split path's two kernels in blocks of kNbSliceThreads. Host only.
inline bool normBackwardPlanCompiled(const NormBackwardPlan& p) {
    if (p.parts < 1 || p.parts > kNbMaxParts || p.slices < 1) return false;
    if (p.finish < 1 || p.finish > kNbFinishMaxLanes || (p.finish & (p.finish - 1)) != 0) return false;
    if (p.path == NbSplit) return p.group == kNbSliceThreads && p.threads == kNbSliceThreads;
    const bool pow2 = p.group >= 32 && p.group <= kNbMaxGroup && (p.group & (p.group - 1)) == 0;
    return pow2 && p.slices == 1 && p.threads == nbRegsThreads(p.group) && (p.vec || p.group < kNbMaxGroup);
}

} // namespace detail
} // namespace warpkit
