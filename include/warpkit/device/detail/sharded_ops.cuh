// warpkit/device/detail/sharded_ops.cuh: what device/sharded.cuh runs: RowShardStats (public:
// the cross-entropy statistics of a row shard), the params types of the statistics pass and the two
// finishes on the row family's runner (device/detail/row_op.cuh hooks), and the per-row kernels (the
// merge in rank order, the loss alone, the log-sum-exp finish). Internal: include
// warpkit/device/sharded.cuh.
#pragma once

#include "../cross_entropy.cuh"

namespace warpkit {

/// A row shard's cross-entropy statistics: its softmax state {max, sum of exp(x - max)} and the
/// target's logit when the target is one of the shard's columns (0 otherwise). 12 bytes; an array
/// of them is rows x 3 floats (ncclFloat).
struct RowShardStats {
    float max, sum, targetLogit;
};

namespace detail {

/// The merge of two shards' statistics: their softmax states merged, their target logits added.
struct RowShardStatsMerge {
    WARPKIT_HD RowShardStats operator()(RowShardStats a, RowShardStats b) const {
        const SoftmaxState m = softmaxStateMerge(SoftmaxState{a.max, a.sum}, SoftmaxState{b.max, b.sum});
        return RowShardStats{m.max, m.sum, a.targetLogit + b.targetLogit};
    }
};
WARPKIT_HD SoftmaxState rowStatsMergeOf(SoftmaxState a, SoftmaxState b) { return softmaxStateMerge(a, b); }
WARPKIT_HD RowShardStats rowStatsMergeOf(RowShardStats a, RowShardStats b) { return RowShardStatsMerge{}(a, b); }

/// The combine of values that every block of a row already holds alike: the first.
struct RowKeepFirst {
    template <typename X> WARPKIT_HD X operator()(X a, X) const { return a; }
};

/// log(sum_j exp(x_j)) of a row's state, as torch.logsumexp: -inf for all -inf, +inf for a row
/// holding +inf (and no NaN), NaN for a row holding NaN.
WARPKIT_HD float logSumExpOf(SoftmaxState s) {
    return s.max == __builtin_huge_valf() ? s.max : s.max == negInf() ? s.max : s.max + logf(s.sum);
}

// ---- the statistics pass: one read of the shard -------------------------------------------------

/// The statistics of each row of x (a per-row-only algorithm of the row family): written as a
/// SoftmaxState (st), a RowShardStats (shard) or a log-sum-exp (lse), whichever is not null.
template <typename T> struct ShardStatsParams : RowReadOnlyTraits {
    using Elem = T;
    using Exchange = RowShardStats;
    using Merge = RowShardStatsMerge;
    struct Acc {
        SoftmaxState st;
        float xt;
    };
    const T* x;
    const long long* targets; // null: no target logit
    SoftmaxState* st;
    RowShardStats* shard;
    float* lse;
    long long ldx, begin;
};

template <typename T> inline ShardStatsParams<T> rowAt(ShardStatsParams<T> p, long long r0) {
    p.x += r0 * p.ldx;
    if (p.targets) p.targets += r0;
    if (p.st) p.st += r0;
    if (p.shard) p.shard += r0;
    if (p.lse) p.lse += r0;
    return p;
}
template <typename T> inline bool rowAligned(const ShardStatsParams<T>& p, int cols) {
    return rowsAligned(p.x, p.ldx, cols);
}
template <typename T> WARPKIT_DEVICE const T* rowInput(const ShardStatsParams<T>& p, int, long long row) {
    return p.x + row * p.ldx;
}
template <typename T> WARPKIT_DEVICE T* rowOutput(const ShardStatsParams<T>&, long long) { return nullptr; }
template <typename T> WARPKIT_DEVICE T rowFill(const ShardStatsParams<T>&, int) { return negInfAs<T>(); }

/// The row's target column within the shard, or -1 (no targets, or the target lies elsewhere).
template <typename T> WARPKIT_DEVICE int shardTarget(const ShardStatsParams<T>& p, long long row, int cols) {
    if (p.targets == nullptr) return -1;
    const long long t = p.targets[row] - p.begin;
    return t >= 0 && t < cols ? (int)t : -1;
}

/// Register paths: the part's max, then {sum of exp(x - max), x_t} (x_t read by the one thread
/// whose slots hold it), the parts' statistics merged across the cluster.
template <int C, int E, typename T, int K, typename G>
WARPKIT_DEVICE RowShardStats rowRegs(const ShardStatsParams<T>& p, long long row, int cols, const RowPart& part,
                                     float (&x)[1][K], G g) {
    const int target = shardTarget(p, row, cols);
    const bool own = target >= 0 && partHoldsColumn<T>(part, target);
    float s[2] = {0.0f, own ? Arith<T>::to_acc(loadScalar(rowInput(p, 0, row) + target)) : 0.0f};
    float m = x[0][0]; // empty slots hold -inf
#pragma unroll
    for (int j = 1; j < K; ++j) m = Max{}(m, x[0][j]);
    m = groupMax(g, m);
    const float ms = m == negInf() ? 0.0f : m; // all -inf: every exp is 0 and the sum 0
#pragma unroll
    for (int j = 0; j < K; ++j) s[0] += expDiff<sizeof(T) == 4>(x[0][j], ms); // 16-bit rows: the fast exp
    groupSums(g, s);
    return groupCombine(g, RowShardStats{m, s[0], s[1]}, RowShardStatsMerge{});
}

template <typename T> WARPKIT_DEVICE typename ShardStatsParams<T>::Acc
rowStatsInit(const ShardStatsParams<T>& p, long long row, int cols, bool first) {
    const int target = first ? shardTarget(p, row, cols) : -1;
    return {softmaxStateEmpty(), target >= 0 ? Arith<T>::to_acc(loadScalar(rowInput(p, 0, row) + target)) : 0.0f};
}
template <int N, typename T> WARPKIT_DEVICE void
rowStatsAdd(const ShardStatsParams<T>&, typename ShardStatsParams<T>::Acc& a, const float (&x)[1][N], int) {
    a.st = softmaxStateUpdateExp<sizeof(T) == 4>(a.st, x[0]);
}
template <typename T>
WARPKIT_DEVICE RowShardStats rowStatsExchange(const ShardStatsParams<T>&, const typename ShardStatsParams<T>::Acc& a) {
    return RowShardStats{a.st.max, a.st.sum, a.xt};
}
template <int Threads, typename T>
WARPKIT_DEVICE RowShardStats rowStatsTotal(const ShardStatsParams<T>& p, const typename ShardStatsParams<T>::Acc& a) {
    return blockReduce<Threads>(rowStatsExchange(p, a), RowShardStatsMerge{});
}
template <typename T>
WARPKIT_DEVICE RowShardStats rowFactors(const ShardStatsParams<T>&, const typename ShardStatsParams<T>::Acc&,
                                        const RowShardStats& total, long long, const VectorSplit&, int) {
    return total;
}
template <int N, typename T>
WARPKIT_DEVICE void rowOut(const ShardStatsParams<T>&, const RowShardStats&, float (&)[1][N], int) {}
template <typename T>
WARPKIT_DEVICE void rowOutputs(const ShardStatsParams<T>& p, const RowShardStats& f, long long row) {
    if (p.st) p.st[row] = SoftmaxState{f.max, f.sum};
    if (p.shard) p.shard[row] = f;
    if (p.lse) p.lse[row] = logSumExpOf(SoftmaxState{f.max, f.sum});
}

// ---- the softmax finish: y from x and the merged statistics -------------------------------------

/// What the finishes share: one input, statistics given from outside (each block of a row reads the
/// same, so their exchange keeps the first), warp lanes of 4 vectors or more (as rowCrossEntropy's;
/// the 32 x 2 shape spills for fp32 log-softmax).
struct ShardGivenTraits {
    using Merge = RowKeepFirst;
    struct Acc {};
    static constexpr int kInputs = 1;
    static constexpr int kColumns = 0;
    static constexpr bool kReduceWarp = false;
    static constexpr bool kStatsGiven = true;
    static constexpr int kWarpChunks = 4;
};

template <typename T, int Kind> struct ShardApplyParams : ShardGivenTraits {
    using Elem = T;
    using Exchange = SoftmaxState;
    static constexpr bool kOutFast = false;
    const T* x;
    T* y;
    const SoftmaxState* stats;
    long long ldx, ldy;
};

/// The same params for another Kind.
template <int Kind, typename T, int K> inline ShardApplyParams<T, Kind> shardApplyAs(const ShardApplyParams<T, K>& p) {
    return ShardApplyParams<T, Kind>{{}, p.x, p.y, p.stats, p.ldx, p.ldy};
}
template <typename T, int Kind> inline ShardApplyParams<T, Kind> rowAt(ShardApplyParams<T, Kind> p, long long r0) {
    p.x += r0 * p.ldx;
    p.y += r0 * p.ldy;
    p.stats += r0;
    return p;
}
template <typename T, int Kind> inline bool rowAligned(const ShardApplyParams<T, Kind>& p, int cols) {
    return rowsAligned(p.x, p.ldx, cols) && rowsAligned(p.y, p.ldy, cols);
}
template <typename T, int Kind>
WARPKIT_DEVICE const T* rowInput(const ShardApplyParams<T, Kind>& p, int, long long row) {
    return p.x + row * p.ldx;
}
template <typename T, int Kind> WARPKIT_DEVICE T* rowOutput(const ShardApplyParams<T, Kind>& p, long long row) {
    return p.y + row * p.ldy;
}
template <typename T, int Kind> WARPKIT_DEVICE T rowFill(const ShardApplyParams<T, Kind>&, int) {
    return negInfAs<T>();
}

/// Register paths: the outputs from the given statistics (every block of a row reads the same).
template <int C, int E, typename T, int Kind, int K, typename G>
WARPKIT_DEVICE SoftmaxFactors rowRegs(const ShardApplyParams<T, Kind>& p, long long row, int, const RowPart&,
                                      float (&x)[1][K], G g) {
    const SoftmaxFactors f = softmaxFactors<Kind>(groupCombine(g, p.stats[row], RowKeepFirst{}));
#pragma unroll
    for (int j = 0; j < K; ++j) x[0][j] = softmaxApply<Kind, sizeof(T) == 4>(f, x[0][j]);
    return f;
}
template <typename T, int Kind> WARPKIT_DEVICE typename ShardApplyParams<T, Kind>::Acc
rowStatsInit(const ShardApplyParams<T, Kind>&, long long, int, bool) {
    return {};
}
template <int N, typename T, int Kind> WARPKIT_DEVICE void
rowStatsAdd(const ShardApplyParams<T, Kind>&, typename ShardApplyParams<T, Kind>::Acc&, const float (&)[1][N], int) {}
template <int Threads, typename T, int Kind>
WARPKIT_DEVICE SoftmaxState rowStatsTotal(const ShardApplyParams<T, Kind>&,
                                          const typename ShardApplyParams<T, Kind>::Acc&) {
    return softmaxStateEmpty();
}
template <typename T, int Kind> WARPKIT_DEVICE SoftmaxFactors rowFactors(const ShardApplyParams<T, Kind>& p,
                                                                         const typename ShardApplyParams<T, Kind>::Acc&,
                                                                         const SoftmaxState&, long long row,
                                                                         const VectorSplit&, int) {
    return softmaxFactors<Kind>(p.stats[row]);
}
template <int N, typename T, int Kind>
WARPKIT_DEVICE void rowOut(const ShardApplyParams<T, Kind>&, const SoftmaxFactors& f, float (&x)[1][N], int) {
#pragma unroll
    for (int k = 0; k < N; ++k) x[0][k] = softmaxApply<Kind, sizeof(T) == 4>(f, x[0][k]);
}
template <typename T, int Kind>
WARPKIT_DEVICE void rowOutputs(const ShardApplyParams<T, Kind>&, const SoftmaxFactors&, long long) {}

// ---- the cross-entropy finish: loss and the shard's gradient from the merged statistics --------

/// rowCrossEntropy's params (no smoothing) over the shard, the merged statistics, the shard's first
/// column and the whole row's length.
template <typename T> struct ShardFinishParams : ShardGivenTraits {
    using Elem = T;
    using Exchange = RowShardStats;
    static constexpr bool kOutFast = true; // rowCrossEntropy's branch-free form in a row with a target
    CrossEntropyParams<T> ce;
    const RowShardStats* stats;
    long long begin, vocab;
};

template <typename T> inline ShardFinishParams<T> rowAt(ShardFinishParams<T> p, long long r0) {
    p.ce = rowAt(p.ce, r0);
    p.stats += r0;
    return p;
}
template <typename T> inline bool rowAligned(const ShardFinishParams<T>& p, int cols) { return rowAligned(p.ce, cols); }
template <typename T> WARPKIT_DEVICE const T* rowInput(const ShardFinishParams<T>& p, int, long long row) {
    return rowInput(p.ce, 0, row);
}
template <typename T> WARPKIT_DEVICE T* rowOutput(const ShardFinishParams<T>& p, long long row) {
    return rowOutput(p.ce, row);
}
template <typename T> WARPKIT_DEVICE T rowFill(const ShardFinishParams<T>&, int) { return negInfAs<T>(); }

/// The row's factors from statistics s: the target's mode over the whole row (rowCrossEntropy's:
/// ignored, out of [0, vocab), valid) and its column within the shard (-1 when elsewhere).
template <typename T> WARPKIT_DEVICE CrossEntropyRow shardFinishRow(const ShardFinishParams<T>& p,
                                                                    const RowShardStats& s, long long row, int cols) {
    const long long t = p.ce.targets[row];
    const int mode = t == p.ce.ignore ? 1 : (t < 0 || t >= p.vocab) ? 2 : 0;
    const int local = mode == 0 && t >= p.begin && t - p.begin < cols ? (int)(t - p.begin) : -1;
    return crossEntropyRow(p.ce, CrossEntropyState{s.max, s.sum, 0.0f, s.targetLogit}, local, mode, cols);
}

/// Register paths: the gradient from the given statistics, one exp an element.
template <int C, int E, typename T, int K, typename G>
WARPKIT_DEVICE CrossEntropyRow rowRegs(const ShardFinishParams<T>& p, long long row, int cols, const RowPart& part,
                                       float (&x)[1][K], G g) {
    const CrossEntropyRow f = shardFinishRow(p, groupCombine(g, p.stats[row], RowKeepFirst{}), row, cols);
    forEachSlot<T, C, E>(part, [&](int j, int col, bool) {
        x[0][j] = crossEntropyGrad(f, expDiff<sizeof(T) == 4>(x[0][j], f.max) * f.scale, col);
    });
    return f;
}
template <typename T>
WARPKIT_DEVICE typename ShardFinishParams<T>::Acc rowStatsInit(const ShardFinishParams<T>&, long long, int, bool) {
    return {};
}
template <int N, typename T> WARPKIT_DEVICE void
rowStatsAdd(const ShardFinishParams<T>&, typename ShardFinishParams<T>::Acc&, const float (&)[1][N], int) {}
template <int Threads, typename T>
WARPKIT_DEVICE RowShardStats rowStatsTotal(const ShardFinishParams<T>&, const typename ShardFinishParams<T>::Acc&) {
    return RowShardStats{negInf(), 0.0f, 0.0f};
}
template <typename T>
WARPKIT_DEVICE CrossEntropyRow rowFactors(const ShardFinishParams<T>& p, const typename ShardFinishParams<T>::Acc&,
                                          const RowShardStats&, long long row, const VectorSplit&, int cols) {
    return shardFinishRow(p, p.stats[row], row, cols);
}
template <int N, typename T>
WARPKIT_DEVICE void rowOut(const ShardFinishParams<T>& p, const CrossEntropyRow& f, float (&x)[1][N], int col) {
    rowOut<N>(p.ce, f, x, col);
}
template <typename T> WARPKIT_DEVICE bool rowOutFastOk(const ShardFinishParams<T>& p, const CrossEntropyRow& f) {
    return rowOutFastOk(p.ce, f);
}
template <int N, typename T>
WARPKIT_DEVICE void rowOutFast(const ShardFinishParams<T>& p, const CrossEntropyRow& f, float (&x)[1][N], int col) {
    rowOutFast<N>(p.ce, f, x, col);
}
template <typename T>
WARPKIT_DEVICE void rowOutputs(const ShardFinishParams<T>& p, const CrossEntropyRow& f, long long row) {
    rowOutputs(p.ce, f, row);
}

// ---- per-row kernels: the merge, the loss alone, the log-sum-exp finish -------------------------

constexpr int kShardRowThreads = 256;
constexpr long long kShardRowBlocks = 65535; // a grid-stride loop covers any row count

inline int shardRowBlocks(long long rows) {
    const long long b = (rows + kShardRowThreads - 1) / kShardRowThreads;
    return (int)(b < kShardRowBlocks ? b : kShardRowBlocks);
}

/// stats[row] = gathered[0][row] merged with gathered[1][row], ..., in rank order (one thread a row;
/// each thread reads its row of every rank before it writes, so stats may be rank 0's part).
template <typename S> __global__ void __launch_bounds__(kShardRowThreads)
    rowStatsMergeKernel(const S* gathered, S* stats, int ranks, long long rows) {
    for (long long row = (long long)blockIdx.x * kShardRowThreads + threadIdx.x; row < rows;
         row += (long long)gridDim.x * kShardRowThreads) {
        S s = gathered[row];
        for (int r = 1; r < ranks; ++r) s = rowStatsMergeOf(s, gathered[(long long)r * rows + row]);
        stats[row] = s;
    }
}

/// The loss alone from the merged statistics (no pass over the logits).
template <typename T> __global__ void __launch_bounds__(kShardRowThreads)
    rowShardLossKernel(ShardFinishParams<T> p, long long rows, int cols) {
    for (long long row = (long long)blockIdx.x * kShardRowThreads + threadIdx.x; row < rows;
         row += (long long)gridDim.x * kShardRowThreads)
        p.ce.loss[row] = shardFinishRow(p, p.stats[row], row, cols).loss;
}

template <typename S> __global__ void __launch_bounds__(kShardRowThreads)
    rowLogSumExpFinishKernel(const S* stats, float* out, long long rows) {
    for (long long row = (long long)blockIdx.x * kShardRowThreads + threadIdx.x; row < rows;
         row += (long long)gridDim.x * kShardRowThreads)
        out[row] = logSumExpOf(stats[row]);
}

template <typename S>
inline cudaError_t rowStatsMergeRun(const S* gathered, S* stats, int ranks, long long rows, cudaStream_t st) {
    if (rows < 0 || ranks < 1) return cudaErrorInvalidValue;
    if (rows == 0) return cudaSuccess;
    if (gathered == nullptr || stats == nullptr) return cudaErrorInvalidValue;
    return launchKernel(rowStatsMergeKernel<S>, shardRowBlocks(rows), kShardRowThreads, st, gathered, stats, ranks,
                        rows);
}

template <typename T>
inline cudaError_t rowStatsRun(const ShardStatsParams<T>& p, long long rows, int cols, long long ldx, cudaStream_t st) {
    if (rows < 0 || cols < 1 || ldx < cols || p.begin < 0) return cudaErrorInvalidValue;
    if (rows == 0) return cudaSuccess;
    if (p.x == nullptr || (p.st == nullptr && p.shard == nullptr && p.lse == nullptr)) return cudaErrorInvalidValue;
    return rowOpDispatch(p, rows, cols, st, true);
}

} // namespace detail
} // namespace warpkit
