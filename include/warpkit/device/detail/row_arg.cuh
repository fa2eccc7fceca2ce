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
//
// Cost. A vector's (or a call's) values lie at rising columns, so the best of them needs only a
// strict compare of a signed key an element (rowArgBestOf: no column compare); the candidates of
// vectors then merge with the column tie-break. Plans: rule A1 (topk_plan.cuh) gives long rows
// that fill the GPU one block a row to topk's filter kernel (T1), rowTopK's k = 1; A2 the rest here.
#pragma once

#include "../../warp/topk.cuh"
#include "row_launch.cuh"
#include "topk_plan.cuh"

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

/// A signed key whose int order is topkOrderKey's (so v's value order, -0.0 below +0.0), every NaN
/// the largest int: the sign bit kept, the other bits flipped for a negative value (2 instructions
/// and the NaN select). topkOrderKey(v) == (unsigned)rowArgSignedKey(v) ^ 0x80000000.
WARPKIT_DEVICE int rowArgSignedKey(float v) {
    const int b = __float_as_int(v);
    return v != v ? 0x7fffffff : b ^ (int)((unsigned)(b >> 31) >> 1);
}

/// The best of x[0 .. N) at the rising columns col, col + 1, ... (Largest: the largest key, else
/// the smallest, NaN last): a strict compare keeps the first of equal keys, so no column compares.
template <bool Largest, int N> WARPKIT_DEVICE RowArg rowArgBestIn(const float* x, int col) {
    int best = rowArgSignedKey(x[0]), at = 0;
#pragma unroll
    for (int k = 1; k < N; ++k) {
        const int key = rowArgSignedKey(x[k]);
        const bool take = Largest ? key > best : key < best;
        best = take ? key : best;
        at = take ? k : at;
    }
    const unsigned u = (unsigned)best ^ 0x80000000u; // topkOrderKey's
    return RowArg{Largest ? u : ~u, col + at};
}
template <int N, typename T> WARPKIT_DEVICE RowArg rowArgBestOf(const RowArgParams<T>& p, const float* x, int col) {
    return p.flip == 0u ? rowArgBestIn<true, N>(x, col) : rowArgBestIn<false, N>(x, col);
}

/// Register paths: the best of each of the thread's vectors, merged with its extra slots', then the
/// group's (and the cluster's).
template <int C, int E, typename T, int K, typename G>
WARPKIT_DEVICE RowArg rowRegs(const RowArgParams<T>& p, long long, int, const RowPart& part, float (&x)[1][K], G g) {
    constexpr int V = vectorElems<T>();
    RowArg best{0u, kRowArgNone};
#pragma unroll
    for (int c = 0; c < C; ++c)
        if (partHasVector(part, c))
            best = RowArgMerge{}(best, rowArgBestOf<V>(p, &x[0][c * V], partVectorColumn<T>(part, c)));
#pragma unroll
    for (int j = 0; j < E; ++j)
        if (partHasExtra(part, j))
            best = RowArgMerge{}(best, rowArgOf(p, x[0][C * V + j], partExtraColumn<T>(part, j)));
    return groupReduce(g, best, RowArgMerge{});
}

template <typename T>
WARPKIT_DEVICE typename RowArgParams<T>::Acc rowStatsInit(const RowArgParams<T>&, long long, int cols, bool) {
    return {RowArg{0u, kRowArgNone}, cols};
}
/// N values from column col (a whole vector, or one extra element): their best, then the merge.
template <int N, typename T> WARPKIT_DEVICE void rowStatsAdd(const RowArgParams<T>& p, typename RowArgParams<T>::Acc& a,
                                                             const float (&x)[1][N], int col) {
    if (col + N <= a.cols) {
        a.best = RowArgMerge{}(a.best, rowArgBestOf<N>(p, x[0], col));
    } else {
#pragma unroll
        for (int k = 0; k < N; ++k)
            if (col + k < a.cols) a.best = RowArgMerge{}(a.best, rowArgOf(p, x[0][k], col + k));
    }
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

/// Rule A1's run: rowTopK's filter kernel (T1) with k = 1, one block a row (device/topk.cuh).
template <typename T>
inline cudaError_t rowArgFilter(const RowArgParams<T>& p, long long rows, int cols, cudaStream_t stream);

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
    int dev = 0;
    DeviceProps d;
    WARPKIT_TRY(currentDevice(&dev, &d));
    if (topkArgFilter(rows, cols, d.sms)) return rowArgFilter(p, rows, cols, stream); // A1
    return rowOpDispatch(p, rows, cols, stream, true);                                // A2
}

} // namespace detail
} // namespace warpkit
