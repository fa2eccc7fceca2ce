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
// Cost. On the register paths (the row held in registers: warp and block plans) a thread folds
// its slots in two passes (rowArgTwoPass): the best value by max.NaN / min, one instruction an
// element, then the first slot holding it, a compare and a select an element; only the thread's
// candidates merge with the column tie-break. On the streamed paths a vector's values lie at
// rising columns, so the best of them needs only a strict compare of a signed key an element
// (rowArgBestOf: no column compare); the candidates of vectors then merge with the column
// tie-break. The value written is rebuilt from the winner's key (a NaN's re-read from x). Plans:
// topk_plan.cuh's A rules: A1 gives long rows that fill the GPU one block a row to topk's filter
// kernel (T1), rowTopK's k = 1; A3 16-bit rows of 1025..4096 the row family's register block
// plans; A2 the rest its read-only plans.
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
    static constexpr bool kFullRows = true; // aligned rows that fill their shape: no slot tests, no fills
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

/// Pass 1's fold of two values: the larger with NaN first (max.NaN), or the smaller with NaN
/// skipped unless both are (min: NaN last). Either is associative and commutative, so any tree gives
/// the same value; only the sign of a zero may depend on it (pass 2 finds zeros by their bits).
template <bool Largest> WARPKIT_DEVICE float rowArgPick(float a, float b) {
    return Largest ? maxNaN(a, b) : fminf(a, b);
}

/// The lowest column among the thread's filled slots (C body vectors, then E extra elements) whose
/// value `hit` accepts, else kRowArgNone: a compare and a select an element in reverse slot order
/// (a thread's body slots lie at rising columns), the column made from the slot once at the end.
template <int C, int E, typename T, int K, typename H>
WARPKIT_DEVICE int rowArgFirst(const RowPart& part, const float (&x)[1][K], H hit) {
    constexpr int V = vectorElems<T>();
    int at = -1;
#pragma unroll
    for (int k = C * V - 1; k >= 0; --k) at = partHasVector(part, k / V) && hit(x[0][k]) ? k : at;
    int col = at < 0 ? kRowArgNone : partVectorColumn<T>(part, at / V) + at % V;
#pragma unroll
    for (int j = 0; j < E; ++j) { // head and tail elements lie below or above the body
        const int c = partExtraColumn<T>(part, j);
        if (partHasExtra(part, j) && hit(x[0][C * V + j]) && c < col) col = c;
    }
    return col;
}

/// The two-pass fold of the thread's slots (register paths). Pass 1: the best value m of the
/// filled slots by rowArgPick, one instruction an element, in a tree. Pass 2: the first slot holding
/// m: NaN (m is NaN) by v != v; a zero by its bits, +0.0 before -0.0 for the largest (-0.0 first for
/// the smallest); any other value by its bits (equal bits: equal values). The candidate is that
/// slot's; the value's key follows from m (a NaN's payload is not needed: every NaN ranks alike).
template <bool Largest, int C, int E, typename T, int K>
WARPKIT_DEVICE RowArg rowArgTwoPass(const RowArgParams<T>& p, const RowPart& part, const float (&x)[1][K]) {
    constexpr int V = vectorElems<T>(), N = C + E;
    const float none = Largest ? -__int_as_float(0x7f800000) : __int_as_float(0x7fffffff); // folds to the other
    float m[N];
#pragma unroll
    for (int c = 0; c < C; ++c) {
        float a[V];
#pragma unroll
        for (int e = 0; e < V; ++e) a[e] = x[0][c * V + e];
#pragma unroll
        for (int s = 1; s < V; s *= 2)
#pragma unroll
            for (int e = 0; e + s < V; e += 2 * s) a[e] = rowArgPick<Largest>(a[e], a[e + s]);
        m[c] = partHasVector(part, c) ? a[0] : none;
    }
#pragma unroll
    for (int j = 0; j < E; ++j) m[C + j] = partHasExtra(part, j) ? x[0][C * V + j] : none;
#pragma unroll
    for (int s = 1; s < N; s *= 2)
#pragma unroll
        for (int i = 0; i + s < N; i += 2 * s) m[i] = rowArgPick<Largest>(m[i], m[i + s]);
    if (m[0] != m[0]) return rowArgOf(p, m[0], rowArgFirst<C, E, T>(part, x, [](float v) { return v != v; }));
    int bits = m[0] == 0.0f ? (Largest ? 0 : (int)0x80000000) : __float_as_int(m[0]);
    int col = rowArgFirst<C, E, T>(part, x, [bits](float v) { return __float_as_int(v) == bits; });
    if (col == kRowArgNone && m[0] == 0.0f) { // no zero of the preferred sign: the other's first
        bits ^= (int)0x80000000;
        col = rowArgFirst<C, E, T>(part, x, [bits](float v) { return __float_as_int(v) == bits; });
    }
    return col == kRowArgNone ? RowArg{0u, kRowArgNone} : rowArgOf(p, __int_as_float(bits), col);
}

/// Register paths: the thread's candidate by the two-pass fold, then the group's (and the
/// cluster's) by the merge.
template <int C, int E, typename T, int K, typename G>
WARPKIT_DEVICE RowArg rowRegs(const RowArgParams<T>& p, long long, int, const RowPart& part, float (&x)[1][K], G g) {
    const RowArg best = p.flip == 0u ? rowArgTwoPass<true, C, E>(p, part, x) : rowArgTwoPass<false, C, E>(p, part, x);
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
/// The winner's column, and its value: from its key (exact: a 16-bit value widened to float rounds back
/// to itself), or for a NaN copied from x bit for bit (its payload).
template <typename T> WARPKIT_DEVICE void rowOutputs(const RowArgParams<T>& p, const RowArg& f, long long row) {
    if (p.values) {
        const unsigned key = f.key ^ p.flip; // topkOrderKey of the value widened to float
        p.values[row] = key == 0xffffffffu ? p.x[row * p.ldx + f.col] : Arith<T>::from_acc(topkKeyValue<float>(key));
    }
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
    if (rows > 0 && (cols < 1 || ldx < cols)) return cudaErrorInvalidValue;
    constexpr size_t kNeed = 16;
    if (useWorkspace && workspace == nullptr) { // the size query: no data pointers needed
        *workspaceBytes = kNeed;
        return cudaSuccess;
    }
    if (rows > 0 && (x == nullptr || indices == nullptr)) return cudaErrorInvalidValue;
    if (useWorkspace && *workspaceBytes < kNeed) return cudaErrorInvalidValue;
    if (rows == 0) return cudaSuccess;
    const RowArgParams<T> p = {{}, x, values, indices, IsSame<Idx, long long>::value, largest ? 0u : 0xffffffffu, ldx};
    int dev = 0;
    DeviceProps d;
    WARPKIT_TRY(currentDevice(&dev, &d));
    const TopKArgRule& r = topkArgRule(rows, cols, (int)sizeof(T), d.sms);
    if (r.filter) return rowArgFilter(p, rows, cols, stream);    // A1
    return rowOpDispatch(p, rows, cols, stream, !r.outputPlans); // A2, A3
}

} // namespace detail
} // namespace warpkit
