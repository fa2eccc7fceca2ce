// warpkit/device/detail/row_arg.cuh: rowArgMax / rowArgMin on the row family's runner
// (device/detail/row_op.cuh hooks): one read of each row by the plan the family picks for a
// read-only call (a warp, a block or a cluster a row), the winner's column and value written once a
// row. Internal: include warpkit/device/topk.cuh.
//
// Order. A value's rank is topk's (warp/topk.cuh topkOrderKey, of the value widened to float, which
// is exact for the 16-bit types): NaN above +inf, -0.0 just below +0.0; for the smallest the key is
// complemented, so NaN comes last. Of equal keys the lowest column wins, so the merge of two
// candidates is exact, associative and commutative: any reduction order gives the same winner.
// Slots past the row's end never compete (they carry no column).
#pragma once

#include "../../warp/topk.cuh"
#include "row_launch.cuh"

namespace warpkit {
namespace detail {

/// A candidate: its key (larger ranks first) and column (kRowArgNone: none).
struct RowArg {
    unsigned key;
    int col;
};
constexpr int kRowArgNone = 0x7fffffff;

/// The better of two candidates: the larger key, then the lower column.
struct RowArgMerge {
    WARPKIT_HD RowArg operator()(RowArg a, RowArg b) const {
        return (a.key > b.key || (a.key == b.key && a.col < b.col)) ? a : b;
    }
};

/// rowArgMax / rowArgMin's params: x's rows, the outputs (values may be null; indices int or long
/// long by idx64), and flip = 0 for the largest, 0xffffffff for the smallest (the keys' complement).
template <typename T> struct RowArgParams : RowReadOnlyTraits {
    using Elem = T;
    using Exchange = RowArg;
    using Merge = RowArgMerge;
    struct Acc {
        RowArg best;
        int cols;
    };
    const T* x;
    T* values;
    void* indices;
    bool idx64;
    unsigned flip;
    long long ldx;
};

template <typename T> inline RowArgParams<T> rowAt(RowArgParams<T> p, long long r0) {
    p.x += r0 * p.ldx;
    if (p.values) p.values += r0;
    p.indices = p.idx64 ? (void*)(static_cast<long long*>(p.indices) + r0) : (void*)(static_cast<int*>(p.indices) + r0);
    return p;
}
template <typename T> inline bool rowAligned(const RowArgParams<T>& p, int cols) {
    return rowsAligned(p.x, p.ldx, cols);
}
template <typename T> WARPKIT_DEVICE const T* rowInput(const RowArgParams<T>& p, int, long long row) {
    return p.x + row * p.ldx;
}
template <typename T> WARPKIT_DEVICE T* rowOutput(const RowArgParams<T>&, long long) { return nullptr; }
template <typename T> WARPKIT_DEVICE T rowFill(const RowArgParams<T>&, int) { return negInfAs<T>(); }

/// The candidate of value v (widened to float) at column col.
template <typename T> WARPKIT_DEVICE RowArg rowArgOf(const RowArgParams<T>& p, float v, int col) {
    return RowArg{topkOrderKey(v) ^ p.flip, col};
}

/// Register paths: the thread's best of its filled slots, then the group's (and the cluster's).
template <int C, int E, typename T, int K, typename G>
WARPKIT_DEVICE RowArg rowRegs(const RowArgParams<T>& p, long long, int, const RowPart& part, float (&x)[1][K], G g) {
    RowArg best{0u, kRowArgNone};
    forEachSlot<T, C, E>(part, [&](int s, int col, bool holds) {
        if (holds) best = RowArgMerge{}(best, rowArgOf(p, x[0][s], col));
    });
    return groupReduce(g, best, RowArgMerge{});
}

template <typename T>
WARPKIT_DEVICE typename RowArgParams<T>::Acc rowStatsInit(const RowArgParams<T>&, long long, int cols, bool) {
    return {RowArg{0u, kRowArgNone}, cols};
}
template <int N, typename T> WARPKIT_DEVICE void rowStatsAdd(const RowArgParams<T>& p, typename RowArgParams<T>::Acc& a,
                                                             const float (&x)[1][N], int col) {
#pragma unroll
    for (int k = 0; k < N; ++k)
        if (col + k < a.cols) a.best = RowArgMerge{}(a.best, rowArgOf(p, x[0][k], col + k));
}
template <typename T>
WARPKIT_DEVICE RowArg rowStatsExchange(const RowArgParams<T>&, const typename RowArgParams<T>::Acc& a) {
    return a.best;
}
template <int Threads, typename T>
WARPKIT_DEVICE RowArg rowStatsTotal(const RowArgParams<T>&, const typename RowArgParams<T>::Acc& a) {
    return blockReduce<Threads>(a.best, RowArgMerge{});
}
template <typename T> WARPKIT_DEVICE RowArg rowFactors(const RowArgParams<T>&, const typename RowArgParams<T>::Acc&,
                                                       const RowArg& total, long long, const VectorSplit&, int) {
    return total;
}
template <int N, typename T> WARPKIT_DEVICE void rowOut(const RowArgParams<T>&, const RowArg&, float (&)[1][N], int) {}
/// The winner's column, and its value copied from x bit for bit.
template <typename T> WARPKIT_DEVICE void rowOutputs(const RowArgParams<T>& p, const RowArg& f, long long row) {
    if (p.values) p.values[row] = p.x[row * p.ldx + f.col];
    if (p.idx64) static_cast<long long*>(p.indices)[row] = f.col;
    else static_cast<int*>(p.indices)[row] = f.col;
}

/// rowArgMax (largest) / rowArgMin: arguments as rowTopK's with k = 1; the workspace form's
/// workspace is not used (its size query answers 16 bytes).
template <typename T, typename Idx>
inline cudaError_t rowArgRun(const T* x, T* values, Idx* indices, long long rows, int cols, long long ldx, bool largest,
                             bool useWorkspace, void* workspace, size_t* workspaceBytes, cudaStream_t stream) {
    WARPKIT_CHECK_TOPK_TYPE(T, "rowArgMax / rowArgMin");
    static_assert(IsSame<Idx, int>::value || IsSame<Idx, long long>::value,
                  "rowArgMax / rowArgMin: index type Idx must be int or long long");
    if (rows < 0 || cols < 0 || (useWorkspace && workspaceBytes == nullptr)) return cudaErrorInvalidValue;
    if (rows > 0 && (cols < 1 || ldx < cols || x == nullptr || indices == nullptr)) return cudaErrorInvalidValue;
    constexpr size_t kNeed = 16;
    if (useWorkspace && workspace == nullptr) {
        *workspaceBytes = kNeed;
        return cudaSuccess;
    }
    if (useWorkspace && *workspaceBytes < kNeed) return cudaErrorInvalidValue;
    if (rows == 0) return cudaSuccess;
    const RowArgParams<T> p = {{}, x, values, indices, IsSame<Idx, long long>::value, largest ? 0u : 0xffffffffu, ldx};
    return rowOpDispatch(p, rows, cols, stream, true);
}

} // namespace detail
} // namespace warpkit
