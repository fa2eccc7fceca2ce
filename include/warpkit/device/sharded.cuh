// warpkit/device/sharded.cuh: softmax, log-sum-exp and cross-entropy of rows split across GPUs
// (a tensor-parallel head holding a slice of the vocabulary on each), as row statistics out and
// row statistics in, called from the host. Each GPU computes its shard's statistics, the ranks
// exchange them with one all-gather (NCCL or any other: warpkit has no communication code), each
// merges them in rank order and finishes its shard:
//
//   warpkit::rowSoftmaxStats(x, stats, rows, cols, ldx, stream)            SoftmaxState a row
//   warpkit::rowSoftmaxStats(x, targets, shardBegin, stats, rows, cols, ldx, stream)  RowShardStats
//   warpkit::rowStatsMerge(gathered, stats, ranks, rows, stream)           [ranks][rows] -> [rows]
//   warpkit::rowSoftmaxApply(x, y, stats, rows, cols, kind, ldx, ldy, stream)
//   warpkit::rowCrossEntropyFinish(logits, targets, stats, loss, grad, rows, cols, shardBegin, vocab,
//                                  ignoreIndex, gradScale, ldLogits, ldGrad, stream)
//   warpkit::rowLogSumExp(x, out, rows, cols, ldx, stream)                 whole rows
//   warpkit::rowLogSumExpFinish(stats, out, rows, stream)                  from merged statistics
//   warpkit::rowTopKShard(x, values, indices, rows, cols, k, largest, shardBegin, ldx, workspace, &bytes, stream)
//   warpkit::rowTopKMerge(gatheredValues, gatheredIndices, values, indices, ranks, rows, k, largest, stream)
//   warpkit::rowSampleMerge(gatheredValues, gatheredIndices, out, ranks, rows, k, temperature, topP, minP,
//                           seed, offset, stream)                         seed, offset: values or pointers
//
// Vocabulary-parallel cross-entropy on rank k of N (shard: columns [shardBegin, shardBegin + cols)
// of a row of `vocab`):
//   rowSoftmaxStats(logits, targets, shardBegin, mine, rows, cols, ld, s);        one read
//   ncclAllGather(mine, gathered, rows * 3, ncclFloat, comm, s);                  12 bytes a row
//   rowStatsMerge(gathered, merged, N, rows, s);                                  same bits on every rank
//   rowCrossEntropyFinish(logits, targets, merged, loss, grad, rows, cols, shardBegin, vocab, -100,
//                         1.0f, ld, ld, s);                                       one read, one write
// The loss equals rowCrossEntropy's of the whole rows within fp32 rounding (its semantics: targets,
// ignoreIndex, gradScale, NaN/inf; no label smoothing), and every rank writes the same loss bits.
//
// Statistics: SoftmaxState {max, sum of exp(x - max)} (8 bytes a row; thread/softmax.cuh), and for
// cross-entropy RowShardStats {max, sum, targetLogit} (12 bytes a row; declared in
// device/detail/sharded_ops.cuh beside the kernels that use it): targetLogit is the target's
// logit where targets[row] falls in the shard, else 0, so the merge adds the ranks' values and gets
// the one rank's logit. A NaN or +inf logit in any shard makes the merged row NaN (softmax rules);
// an all -inf shard is the empty state {-inf, 0} and merges away.
//
// Types: x, y, logits, grad float, __half or __nv_bfloat16 (computed in float); targets int64;
// statistics, loss and log-sum-exp float. Shapes: any rows >= 0 (0 is a no-op), cols >= 1 (0 too
// for rowSoftmaxApply: a no-op; the calls that write per-row statistics or losses refuse it, an
// empty row having no defined state to write), row strides ld >= cols, any pointer alignment,
// 64-bit row counts. In place: y == x with ldy == ldx, grad == logits with ldGrad == ldLogits,
// stats == gathered (rank 0's part).
// Conventions (docs/design.md): returns cudaError_t; asynchronous on `stream`; allocates nothing;
// deterministic; bad arguments (negative rows, cols < 1, ld < cols, ranks < 1, null pointers with
// rows > 0, an unknown kind, shardBegin < 0 or shardBegin + cols > vocab, in-place with different
// strides) return cudaErrorInvalidValue and launch nothing. Paths: the row family's rules
// (device/detail/row_plan.cuh): the statistics pass those without per-element outputs, the
// finishes those with outputs (the statistics come from outside: RowStatsGiven, one read).
//
// Top-k and sampling of split rows (rowTopK's order: ties to the lowest column, NaN first for the
// largest, -0.0 below +0.0; values copied bit for bit). Each rank writes its shard's k best
// (rowTopKShard: a rows x k block of values and int64 GLOBAL columns, shardBegin + local column;
// a shard of fewer than k columns pads ranks cols .. k-1 with index kShardNoIndex (-1) and value
// -inf, +inf for the smallest), the ranks all-gather the blocks ([ranks][rows][k], rank r holding
// the r-th column range, ranges increasing with r), and every rank merges them:
//   rowTopKShard(logits, v, i, rows, cols, k, true, shardBegin, ld, ws, &bytes, s);
//   ncclAllGather(v, gv, rows * k, ncclFloat, comm, s);  ncclAllGather(i, gi, rows * k, ncclInt64, comm, s);
//   rowTopKMerge(gv, gi, values, indices, N, rows, k, true, s);   == rowTopK of the whole rows
//   rowSampleMerge(gv, gi, tokens, N, rows, k, T, topP, minP, seed, offset, s);
// rowTopKMerge gives the whole rows' rowTopK (values bit for bit, indices); rowSampleMerge the token
// rowSample(whole rows, topK = k, ...) draws for the same (seed, offset, row), bit for bit. Where
// the shards hold fewer than k columns in all, the missing ranks are absent (index -1, padded
// value) and the draw is over the present ones (rowSample with topK = the row's columns). Limits:
// 1 <= k, ranks x k <= 2048 (else cudaErrorNotSupported; the merge holds a row's candidates in
// shared memory, a block a row).
#pragma once

#include "detail/sharded_ops.cuh"
#include "detail/sharded_select.cuh"

namespace warpkit {

/// The softmax state {max, sum of exp(x - max)} of each row of x (a rows x cols matrix, row r at
/// x + r * ldx) into stats[row]: one read of x. rows >= 0, cols >= 1, ldx >= cols; x and stats not
/// null when rows > 0; otherwise cudaErrorInvalidValue, nothing written. Host; asynchronous on
/// `stream`. See the header.
template <typename T> inline cudaError_t rowSoftmaxStats(const T* x, SoftmaxState* stats, long long rows, int cols,
                                                         long long ldx, cudaStream_t stream = 0) {
    static_assert(detail::IsRowType<T>::value,
                  "rowSoftmaxStats: element type T must be float, __half or __nv_bfloat16");
    if (rows > 0 && stats == nullptr) return cudaErrorInvalidValue;
    return detail::rowStatsRun(detail::ShardStatsParams<T>{{}, x, nullptr, stats, nullptr, nullptr, ldx, 0}, rows, cols,
                               ldx, stream);
}

/// A cross-entropy shard's statistics: each row's softmax state and the logit of targets[row] when
/// it falls in [shardBegin, shardBegin + cols) (the shard's columns of the whole row), else 0, into
/// stats[row]. One read of x. rows >= 0, cols >= 1, ldx >= cols, shardBegin >= 0; x, targets and
/// stats not null when rows > 0; otherwise cudaErrorInvalidValue, nothing written. Host; asynchronous
/// on `stream`. See the header.
template <typename T> inline cudaError_t rowSoftmaxStats(const T* x, const long long* targets, long long shardBegin,
                                                         RowShardStats* stats, long long rows, int cols, long long ldx,
                                                         cudaStream_t stream = 0) {
    static_assert(detail::IsRowType<T>::value,
                  "rowSoftmaxStats: element type T must be float, __half or __nv_bfloat16");
    if (rows > 0 && (stats == nullptr || targets == nullptr)) return cudaErrorInvalidValue;
    return detail::rowStatsRun(detail::ShardStatsParams<T>{{}, x, targets, nullptr, stats, nullptr, ldx, shardBegin},
                               rows, cols, ldx, stream);
}

/// stats[row] = the merge of gathered[0][row], gathered[1][row], ..., gathered[ranks - 1][row] in
/// rank order (gathered: [ranks][rows], as an all-gather of each rank's rows lays it out), so that
/// every rank computes the same bits. rows >= 0, ranks >= 1; gathered and stats not null when
/// rows > 0 (stats may be gathered itself); otherwise cudaErrorInvalidValue, nothing written. Host;
/// asynchronous on `stream`.
inline cudaError_t rowStatsMerge(const SoftmaxState* gathered, SoftmaxState* stats, int ranks, long long rows,
                                 cudaStream_t stream = 0) {
    return detail::rowStatsMergeRun(gathered, stats, ranks, rows, stream);
}
/// rowStatsMerge of cross-entropy statistics (the target logits are added: one rank holds each).
/// Arguments and errors as the SoftmaxState form. Host; asynchronous on `stream`.
inline cudaError_t rowStatsMerge(const RowShardStats* gathered, RowShardStats* stats, int ranks, long long rows,
                                 cudaStream_t stream = 0) {
    return detail::rowStatsMergeRun(gathered, stats, ranks, rows, stream);
}

/// y = softmax (Kind: a SoftmaxKind) of each row of the shard x, given the whole rows' merged
/// statistics: one read of x, one write of y. rows >= 0, cols >= 0 (rows or cols 0: nothing
/// written), ldx and ldy >= cols, kind a SoftmaxKind; x, y and stats not null when rows and cols > 0; y == x only with
/// ldy == ldx; otherwise cudaErrorInvalidValue, nothing written. Host; asynchronous on `stream`. See the header.
template <typename T> inline cudaError_t rowSoftmaxApply(const T* x, T* y, const SoftmaxState* stats, long long rows,
                                                         int cols, SoftmaxKind kind, long long ldx, long long ldy,
                                                         cudaStream_t stream = 0) {
    static_assert(detail::IsRowType<T>::value,
                  "rowSoftmaxApply: element type T must be float, __half or __nv_bfloat16");
    if (rows < 0 || cols < 0 || ldx < cols || ldy < cols || (int)kind < 0 || (int)kind > 3)
        return cudaErrorInvalidValue;
    if (rows == 0 || cols == 0) return cudaSuccess;
    if (x == nullptr || y == nullptr || stats == nullptr || (x == y && ldx != ldy)) return cudaErrorInvalidValue;
    const detail::ShardApplyParams<T, SoftmaxPlain> p{{}, x, y, stats, ldx, ldy}; // Kind is a tag: same fields
    if (kind == SoftmaxPlain) return detail::rowOpDispatch(p, rows, cols, stream);
    if (kind == SoftmaxLog) return detail::rowOpDispatch(detail::shardApplyAs<SoftmaxLog>(p), rows, cols, stream);
    if (kind == SoftmaxMasked) return detail::rowOpDispatch(detail::shardApplyAs<SoftmaxMasked>(p), rows, cols, stream);
    return detail::rowOpDispatch(detail::shardApplyAs<SoftmaxLogMasked>(p), rows, cols, stream);
}

/// The cross-entropy loss of each whole row (into loss, every rank the same bits) and, when grad is
/// not null, the gradient of the shard's columns times gradScale, from the merged statistics
/// (rowStatsMerge), as rowCrossEntropy of the whole rows with no label smoothing. The shard holds
/// columns [shardBegin, shardBegin + cols) of rows of `vocab`; a target outside [0, vocab) that is
/// not ignoreIndex gives NaN. One read of the logits and one write of grad (none for the loss
/// alone: logits may then be null). rows >= 0, cols >= 1, ldLogits >= cols (ldGrad >= cols with
/// grad), 0 <= shardBegin <= vocab - cols; with rows > 0: targets, stats and loss or grad not null,
/// logits not null with grad, grad == logits only with ldGrad == ldLogits; otherwise
/// cudaErrorInvalidValue, nothing written. Host; asynchronous on `stream`. See the header.
template <typename T>
inline cudaError_t rowCrossEntropyFinish(const T* logits, const long long* targets, const RowShardStats* stats,
                                         float* loss, typename detail::NonDeduced<T>::type* grad, long long rows,
                                         int cols, long long shardBegin, long long vocab, long long ignoreIndex,
                                         float gradScale, long long ldLogits, long long ldGrad,
                                         cudaStream_t stream = 0) {
    static_assert(detail::IsRowType<T>::value,
                  "rowCrossEntropyFinish: element type T must be float, __half or __nv_bfloat16");
    if (rows < 0 || cols < 1 || ldLogits < cols || (grad != nullptr && ldGrad < cols) || shardBegin < 0 ||
        vocab - cols < shardBegin)
        return cudaErrorInvalidValue;
    if (rows == 0) return cudaSuccess;
    if (targets == nullptr || stats == nullptr || (loss == nullptr && grad == nullptr) ||
        (grad != nullptr && logits == nullptr) || (grad != nullptr && grad == logits && ldGrad != ldLogits))
        return cudaErrorInvalidValue;
    const detail::ShardFinishParams<T> p{
        {}, {logits, targets, loss, grad, ldLogits, ldGrad, ignoreIndex, 0.0f, gradScale}, stats, shardBegin, vocab};
    if (grad == nullptr)
        return detail::launchKernel(detail::rowShardLossKernel<T>, detail::shardRowBlocks(rows),
                                    detail::kShardRowThreads, stream, p, rows, cols);
    return detail::rowOpDispatch(p, rows, cols, stream);
}

/// out[row] = log(sum_j exp(x_j)) of each row of x (torch.logsumexp's rules: -inf for a row of all
/// -inf, +inf for one holding +inf, NaN for one holding NaN): one read of x. rows >= 0, cols >= 1,
/// ldx >= cols; x and out not null when rows > 0; otherwise cudaErrorInvalidValue, nothing written.
/// Host; asynchronous on `stream`.
template <typename T> inline cudaError_t rowLogSumExp(const T* x, float* out, long long rows, int cols, long long ldx,
                                                      cudaStream_t stream = 0) {
    static_assert(detail::IsRowType<T>::value, "rowLogSumExp: element type T must be float, __half or __nv_bfloat16");
    if (rows > 0 && out == nullptr) return cudaErrorInvalidValue;
    return detail::rowStatsRun(detail::ShardStatsParams<T>{{}, x, nullptr, nullptr, nullptr, out, ldx, 0}, rows, cols,
                               ldx, stream);
}

/// out[row] = the log-sum-exp of the rows whose merged statistics are stats (rowSoftmaxStats of each
/// shard, all-gathered, rowStatsMerge), with rowLogSumExp's rules. rows >= 0; stats and out not null
/// when rows > 0; otherwise cudaErrorInvalidValue, nothing written. Host; asynchronous on `stream`.
inline cudaError_t rowLogSumExpFinish(const SoftmaxState* stats, float* out, long long rows, cudaStream_t stream = 0) {
    if (rows < 0) return cudaErrorInvalidValue;
    if (rows == 0) return cudaSuccess;
    if (stats == nullptr || out == nullptr) return cudaErrorInvalidValue;
    return detail::launchKernel(detail::rowLogSumExpFinishKernel<SoftmaxState>, detail::shardRowBlocks(rows),
                                detail::kShardRowThreads, stream, stats, out, rows);
}

/// Each row's k best (largest, or smallest) of the shard x (rows x cols, columns [shardBegin,
/// shardBegin + cols) of the whole rows), ranked as rowTopK ranks them, into values[row * k + j] (bit
/// copies of x) and indices[row * k + j] (global columns: shardBegin + local column); a shard of
/// fewer than k columns fills ranks cols .. k-1 with index kShardNoIndex (-1) and value -inf (+inf
/// for the smallest). Every rank so writes a rows x k block for the all-gather. rows >= 0; with
/// rows > 0: cols >= 1, k >= 1, ldx >= cols, shardBegin >= 0, x, values and indices not null.
/// Workspace: CUB's two-call rule as rowTopK's (workspace == nullptr: *workspaceBytes gets the
/// size; that call checks rows, cols, k, shardBegin and ldx, not the pointers, which may be null).
/// Bad arguments (a null workspaceBytes or a too small *workspaceBytes too) return
/// cudaErrorInvalidValue with nothing launched or written. Host; asynchronous on `stream`.
template <typename T, typename Idx> inline cudaError_t rowTopKShard(const T* x, T* values, Idx* indices, long long rows,
                                                                    int cols, int k, bool largest, long long shardBegin,
                                                                    long long ldx, void* workspace,
                                                                    size_t* workspaceBytes, cudaStream_t stream = 0) {
    WARPKIT_CHECK_TOPK_TYPE(T, "rowTopKShard");
    static_assert(detail::IsSame<Idx, long long>::value, "rowTopKShard: index type Idx must be long long (int64)");
    if (rows > 0 && (k < 1 || shardBegin < 0)) return cudaErrorInvalidValue;
    const int kl = k < cols ? k : cols;
    const bool argsOk = values != nullptr && indices != nullptr; // not read by the size query
    const detail::TopKRows<T> io = {x, ldx, largest, nullptr, nullptr, false, nullptr, 0};
    T* cv = nullptr;
    int* ci = nullptr;
    WARPKIT_TRY(
        detail::topkCandidates(io, rows, cols, kl, argsOk, 0x7fffffff, workspace, workspaceBytes, &cv, &ci, stream));
    if (cv == nullptr) return cudaSuccess; // the size query, or no rows
    const int blocks = (int)(rows < detail::kShardRowBlocks ? rows : detail::kShardRowBlocks);
    return detail::launchKernel(detail::rowTopKShardKernel<T>, blocks, detail::kShardFixThreads, stream, (const T*)cv,
                                (const int*)ci, values, indices, rows, kl, k, shardBegin, largest);
}

namespace detail {
/// The merges' shared checks: cudaErrorInvalidValue, cudaErrorNotSupported (ranks x k > kTopKMaxK),
/// or cudaSuccess with *blocks set (0: rows = 0, nothing to launch).
template <typename K> inline cudaError_t shardMergeCheck(K kernel, const void* gv, const long long* gi, const void* out,
                                                         int ranks, long long rows, int k, bool argsOk, int* blocks) {
    *blocks = 0;
    if (rows < 0 || ranks < 1 || k < 1 || !argsOk) return cudaErrorInvalidValue;
    if (rows == 0) return cudaSuccess;
    if (gv == nullptr || gi == nullptr || out == nullptr) return cudaErrorInvalidValue;
    if ((long long)ranks * k > kTopKMaxK) return cudaErrorNotSupported;
    return gridBlocks(kernel, kTopKThreads, rows, 1, 1LL << 30, blocks);
}
} // namespace detail

/// values / indices (rows x k) = ranks 0 .. k-1 of each row's gathered candidates (gatheredValues,
/// gatheredIndices: [ranks][rows][k], rank r's rowTopKShard block at r x rows x k, ranks in column
/// order): rowTopK of the whole rows (same `largest`), values bit for bit. values may be null
/// (indices only); an index beyond int's range wraps with Idx = int. rows >= 0, ranks >= 1, k >= 1,
/// pointers not null when rows > 0, outputs not overlapping the inputs; otherwise
/// cudaErrorInvalidValue; ranks x k > 2048: cudaErrorNotSupported; nothing written on an error.
/// Host; asynchronous on `stream`.
template <typename T, typename Idx>
inline cudaError_t rowTopKMerge(const T* gatheredValues, const long long* gatheredIndices, T* values, Idx* indices,
                                int ranks, long long rows, int k, bool largest, cudaStream_t stream = 0) {
    WARPKIT_CHECK_TOPK_TYPE(T, "rowTopKMerge");
    static_assert(detail::IsSame<Idx, int>::value || detail::IsSame<Idx, long long>::value,
                  "rowTopKMerge: index type Idx must be int or long long");
    int blocks = 0;
    WARPKIT_TRY(detail::shardMergeCheck(detail::rowTopKMergeKernel<T, Idx>, gatheredValues, gatheredIndices, indices,
                                        ranks, rows, k, true, &blocks));
    if (blocks == 0) return cudaSuccess;
    return detail::launchKernel(detail::rowTopKMergeKernel<T, Idx>, blocks, detail::kTopKThreads, stream,
                                gatheredValues, gatheredIndices, values, indices, ranks, rows, k, largest);
}

namespace detail {
template <typename T, typename Idx> inline cudaError_t rowSampleMergeRun(const T* gv, const long long* gi, Idx* out,
                                                                         int ranks, long long rows, int k,
                                                                         SampleParams sp, cudaStream_t stream) {
    WARPKIT_CHECK_TOPK_TYPE(T, "rowSampleMerge");
    static_assert(IsSame<Idx, int>::value || IsSame<Idx, long long>::value,
                  "rowSampleMerge: index type Idx must be int or long long");
    int blocks = 0;
    WARPKIT_TRY(shardMergeCheck(rowSampleMergeKernel<T, Idx>, gv, gi, out, ranks, rows, k,
                                sampleArgsOk(sp.temperature, sp.topP, sp.minP), &blocks));
    if (blocks == 0) return cudaSuccess;
    sp.k = k;
    return launchKernel(rowSampleMergeKernel<T, Idx>, blocks, kTopKThreads, stream, gv, gi, out, ranks, rows, sp);
}
} // namespace detail

/// One token a row (out[row], a global column) drawn from the gathered candidates of rowTopKShard
/// (largest = true, the same k on every rank; [ranks][rows][k] as rowTopKMerge's) exactly as
/// rowSample(whole rows, topK = k, temperature, topP, minP, seed, offset) draws it: the same token
/// for the same (seed, offset, row). Arguments as rowSample's: 0 <= temperature (finite or +inf), 0 <
/// topP <= 1, 0 <= minP <= 1; rows >= 0, ranks >= 1, k >= 1, pointers not null when rows > 0;
/// otherwise cudaErrorInvalidValue; ranks x k > 2048: cudaErrorNotSupported; nothing written on an
/// error. Host; asynchronous on `stream`.
template <typename T, typename Idx>
inline cudaError_t rowSampleMerge(const T* gatheredValues, const long long* gatheredIndices, Idx* out, int ranks,
                                  long long rows, int k, float temperature, float topP, float minP,
                                  unsigned long long seed, unsigned long long offset, cudaStream_t stream = 0) {
    const detail::SampleParams sp = {temperature, topP, minP, 0, seed, offset, nullptr, nullptr};
    return detail::rowSampleMergeRun(gatheredValues, gatheredIndices, out, ranks, rows, k, sp, stream);
}

/// rowSampleMerge with the seed and the offset read from device memory when the kernel runs (as
/// rowSample's pointer form). A null seed or offset returns cudaErrorInvalidValue; otherwise as the
/// by-value form. Host; asynchronous on `stream`.
template <typename T, typename Idx>
inline cudaError_t rowSampleMerge(const T* gatheredValues, const long long* gatheredIndices, Idx* out, int ranks,
                                  long long rows, int k, float temperature, float topP, float minP,
                                  const unsigned long long* seed, const unsigned long long* offset,
                                  cudaStream_t stream = 0) {
    if (seed == nullptr || offset == nullptr) return cudaErrorInvalidValue;
    const detail::SampleParams sp = {temperature, topP, minP, 0, 0, 0, seed, offset};
    return detail::rowSampleMergeRun(gatheredValues, gatheredIndices, out, ranks, rows, k, sp, stream);
}

} // namespace warpkit
