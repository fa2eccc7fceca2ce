// warpkit/device/detail/row_shapes.cuh: the kernel shapes of the row-wise device algorithms that the
// launcher (row_launch.cuh) compiles, and rowPlanCompiled, whether a plan of row_plan.cuh's planner
// is among them. Host only. Internal.
#pragma once

#include "row_plan.cuh"

namespace warpkit {
namespace detail {

// ---- the compiled shapes ------------------------------------------------------------------------
// The launcher (row_launch.cuh) instantiates exactly these; rowPlanCompiled says whether a plan is
// among them (tests/device/row_plan.cu checks every plan of its grid).

struct RowWarpShape {
    int width, chunks;
};
/// Warp shapes for P::kWarpChunks M = 1, 2, 4 (rowWarpPlan's: one lane of 1..M vectors, 2..32
/// lanes of M, then 32 lanes of 2M..8).
constexpr int kRowWarpShapeCount = 9;
// clang-format off
constexpr RowWarpShape kRowWarpShapes[3][kRowWarpShapeCount] = {
    {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {16, 1}, {32, 1}, {32, 2}, {32, 4}, {32, 8}},
    {{1, 1}, {1, 2}, {2, 2}, {4, 2}, {8, 2}, {16, 2}, {32, 2}, {32, 4}, {32, 8}},
    {{1, 1}, {1, 2}, {1, 4}, {2, 4}, {4, 4}, {8, 4}, {16, 4}, {32, 4}, {32, 8}},
};
// clang-format on
constexpr int rowWarpShapeRow(int M) { return M == 1 ? 0 : M == 2 ? 1 : 2; }
/// The row family's one warp shape whose chunks are not a power of two (R25): fp32, every M; not
/// rowSoftmax's. Its kernel runs in blocks of kRowWarpFitThreads, the other warp shapes' in blocks
/// of kRowWarpThreads.
constexpr RowWarpShape kRowWarpFitShape = {32, 6};

/// Short-path shapes (rowShortPlan's). fp32: one lane of 1, 2, 4 or 8 elements, then 2..32 lanes of
/// 8. 16-bit: one lane of 1, 2, 4 or 8, then 2..32 lanes of 5, 6 or 8, 16 lanes of 4 (rows of 62
/// and 63, widened off shared bank conflicts) and 32 lanes of 7 (rows of 193..223).
constexpr int kRowShortShapeCount = 9;
constexpr RowWarpShape kRowShortShapes[kRowShortShapeCount] = {{1, 1}, {1, 2}, {1, 4},  {1, 8}, {2, 8},
                                                               {4, 8}, {8, 8}, {16, 8}, {32, 8}};
constexpr int kRowShortShapeCount16 = 21;
// clang-format off
constexpr RowWarpShape kRowShortShapes16[kRowShortShapeCount16] = {
    {1, 1}, {1, 2}, {1, 4}, {1, 8}, {2, 5}, {2, 6}, {2, 8}, {4, 5}, {4, 6}, {4, 8},
    {8, 5}, {8, 6}, {8, 8}, {16, 4}, {16, 5}, {16, 6}, {16, 8}, {32, 5}, {32, 6}, {32, 7}, {32, 8}};
// clang-format on
/// The short-path shapes of elements of elemBytes: how many, and the i-th.
constexpr int rowShortShapeCount(int elemBytes) { return elemBytes == 2 ? kRowShortShapeCount16 : kRowShortShapeCount; }
constexpr RowWarpShape rowShortShape(int elemBytes, int i) {
    return elemBytes == 2 ? kRowShortShapes16[i] : kRowShortShapes[i];
}

/// Block shapes: threads x values a thread (chunks = values / V); rowSoftmax (R2 and R3 are not
/// its rules) lacks the 128 x 32 one.
struct RowBlockShape {
    int threads, values;
    bool softmax;
};
constexpr int kRowBlockShapeCount = 6;
constexpr RowBlockShape kRowBlockShapes[kRowBlockShapeCount] = {{128, 16, true},  {256, 16, true}, {512, 16, true},
                                                                {1024, 16, true}, {512, 32, true}, {128, 32, false}};

/// Whether plan p of class cls (elements of elemBytes, M = P::kWarpChunks, warpStream: P may take
/// the warp-streamed path) has a compiled kernel. The short path is rowSoftmax's alone.
inline bool rowPlanCompiled(RowClass cls, int elemBytes, int M, bool warpStream, const RowPlan& p) {
    const int V = 16 / elemBytes;
    switch (p.path) {
    case RowWarp:
        if (M != 1 && M != 2 && M != 4) return false;
        if (cls != RowClassSoftmax && elemBytes == 4 && p.width == kRowWarpFitShape.width &&
            p.chunks == kRowWarpFitShape.chunks)
            return p.threads == kRowWarpFitThreads;
        for (const RowWarpShape& s : kRowWarpShapes[rowWarpShapeRow(M)])
            if (s.width == p.width && s.chunks == p.chunks && p.threads == kRowWarpThreads) return true;
        return false;
    case RowBlock:
        for (const RowBlockShape& s : kRowBlockShapes)
            if ((s.softmax || cls != RowClassSoftmax) && s.threads == p.threads &&
                rowValuesChunks(s.values, V) == p.chunks)
                return p.blocks >= 1 && p.blocks <= kClusterMaxBlocks;
        return false;
    case RowStaged:
        return p.threads == kStageThreads && p.blocks >= 1 && p.blocks <= kClusterMaxBlocks && p.piece > 0;
    case RowStream:
        return p.threads == kStreamThreads && p.blocks >= 1 && p.blocks <= kClusterMaxBlocks;
    case RowWarpStream:
        return warpStream && p.threads == kRowWarpThreads;
    case RowShort:
        if (cls != RowClassSoftmax || p.threads != kRowShortThreads || p.slice < 1) return false;
        for (int i = 0; i < rowShortShapeCount(elemBytes); ++i)
            if (rowShortShape(elemBytes, i).width == p.width && rowShortShape(elemBytes, i).chunks == p.chunks)
                return true;
        return false;
    }
    return false;
}

} // namespace detail
} // namespace warpkit
