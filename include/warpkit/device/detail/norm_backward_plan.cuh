// warpkit/device/detail/norm_backward_plan.cuh: the plan of rowLayerNormBackward and
// rowRmsNormBackward (device/norm_backward.cuh): which kernel takes a row, and how the rows are
// split into blocks whose dw / db partial sums a second kernel adds in block order. Host only; the
// golden plan test (tests/device/norm_backward_plan.cu) pins its answers. The measurements behind
// each rule id are in docs/tuning.md, section Norm backward. Internal: include
// warpkit/device/norm_backward.cuh.
//
// Rules (kNbPathRules: the first whose column limit holds; kNbPartRules: the one rule):
//   N1  cols <= 8192 (16-byte aligned rows) or <= 4096 (any alignment): the register path, a group
//       of `group` threads a row (the narrowest power of two of 32..1024 holding the row at
//       kNbElems elements a thread), in blocks of at least 256 threads (several groups a block)
//   N2  longer rows: the streamed path, a block of 512 threads a row, two reads of the row
//   N3  parts = ceil(rows / rows a block at a time), at most 512: block b takes the b-th balanced
//       range of consecutive rows and leaves one row of dw / db partials
// parts depends on (rows, cols) alone (alignment moves a row between N1 and N2 only where both
// take one row a block at a time), so the order of dw / db's sums, and so their bits, are the same
// on every GPU and for every alignment; the workspace size follows from parts.
#pragma once

namespace warpkit {
namespace detail {

constexpr int kNbElems = 8;                           // elements of each input a thread holds (N1)
constexpr int kNbMaxGroup = 1024;                     // the widest row group (N1)
constexpr int kNbMaxColsVec = kNbMaxGroup * kNbElems; // the longest row in registers (N1)
constexpr int kNbMaxColsElem = kNbMaxColsVec / 2;     // element slots (N1): groups of 1024 would spill
constexpr int kNbRegsThreads = 256;                   // the register path's narrowest block (N1)
constexpr int kNbStreamThreads = 512;                 // the streamed path's block (N2)
constexpr int kNbFinishCols = 32;                     // the final sum: columns a block
constexpr int kNbFinishLanes = 8;                     // the final sum: threads a column

/// A path rule: rows of at most maxColsVec columns (every row 16-byte aligned: vector slots) or
/// maxColsElem columns (any alignment: element slots) take `path`; minThreads: threads a block at
/// least (the register path's blocks hold max(group, minThreads) threads; the streamed path's
/// blocks exactly minThreads).
enum NbPath { NbRegs = 0, NbStream = 1 };
struct NbPathRule {
    const char* id;
    int maxColsVec, maxColsElem;
    NbPath path;
    int minThreads;
};
constexpr NbPathRule kNbPathRules[] = {
    {"N1", kNbMaxColsVec, kNbMaxColsElem, NbRegs, kNbRegsThreads},
    {"N2", 0x7fffffff, 0x7fffffff, NbStream, kNbStreamThreads},
};

/// The split rule: at most maxParts blocks of consecutive rows.
struct NbPartRule {
    const char* id;
    int maxParts;
};
constexpr NbPartRule kNbPartRules[] = {{"N3", 512}};
constexpr int kNbMaxParts = kNbPartRules[0].maxParts;

/// How a call spreads: `group` threads a row (0: the streamed path, a block a row) in blocks of
/// `threads`, the rows split into `parts` blocks of consecutive rows; vec: vector slots.
struct NormBackwardPlan {
    const char* pathRule; // id of the path rule
    const char* partRule; // id of the split rule
    NbPath path;
    int group, threads, parts;
    bool vec;
};

/// The plan for rows x cols; vec: every row of dy, x and dx (if written) and w (if given) starts
/// on 16 bytes and cols is a whole number of vectors. Host only.
inline NormBackwardPlan normBackwardPlan(long long rows, int cols, bool vec) {
    NormBackwardPlan p = {"", "", NbStream, 0, 0, 1, false};
    for (const NbPathRule& r : kNbPathRules)
        if (cols <= (vec ? r.maxColsVec : r.maxColsElem)) {
            p.pathRule = r.id;
            p.path = r.path;
            p.threads = r.minThreads;
            break;
        }
    if (p.path == NbRegs) {
        p.vec = vec;
        p.group = 32;
        while ((long long)p.group * kNbElems < cols) p.group *= 2;
        p.threads = p.group > p.threads ? p.group : p.threads;
    }
    const NbPartRule& s = kNbPartRules[0];
    const long long per = p.path == NbRegs ? p.threads / p.group : 1;
    const long long parts = (rows + per - 1) / per;
    p.partRule = s.id;
    p.parts = (int)(parts < 1 ? 1 : parts < s.maxParts ? parts : s.maxParts);
    return p;
}

/// Workspace bytes: `arrays` (dw, db wanted) float partials of cols a part, 16 for alignment. It
/// takes the aligned plan's parts, which every alignment shares (see above).
inline size_t normBackwardBytes(long long rows, int cols, int arrays) {
    if (rows <= 0 || cols <= 0 || arrays == 0) return 0;
    return (size_t)arrays * (size_t)normBackwardPlan(rows, cols, true).parts * (size_t)cols * sizeof(float) + 16;
}

/// The block of the register path's kernel for groups of `group` threads (nbLaunchRegs).
constexpr int nbRegsThreads(int group) { return group > kNbRegsThreads ? group : kNbRegsThreads; }

/// Whether norm_backward.cuh's dispatcher (nbLaunch) has a kernel for plan p: the register path
/// for groups 32..1024 in blocks of nbRegsThreads(group) (element slots up to 512: 1024 spills),
/// the streamed path in blocks of kNbStreamThreads. Host only.
inline bool normBackwardPlanCompiled(const NormBackwardPlan& p) {
    if (p.parts < 1 || p.parts > kNbMaxParts) return false;
    if (p.path == NbStream) return p.group == 0 && p.threads == kNbStreamThreads;
    const bool pow2 = p.group >= 32 && p.group <= kNbMaxGroup && (p.group & (p.group - 1)) == 0;
    return pow2 && p.threads == nbRegsThreads(p.group) && (p.vec || p.group < kNbMaxGroup);
}

} // namespace detail
} // namespace warpkit
