// Rows split across GPUs (warpkit/device/sharded.cuh): a shard's row statistics out, the ranks'
// statistics merged in rank order, and the shard's softmax or cross-entropy finished from them.
// Statistics are float32 tensors of shape [rows, 2] ({max, sum}) or [rows, 3] ({max, sum,
// target logit}), [ranks, rows, k] when gathered. The split top-k and sampler: each shard's rows x k
// candidates with global columns out (rowTopKShard), the gathered [ranks, rows, k] merged into the
// whole rows' top k (rowTopKMerge) or one drawn token a row (rowSampleMerge). The launches of the
// dtype-templated calls are sharded_launch.cuh's, one file a dtype.
#include "common.h"

#include <warpkit/device/sharded.cuh>

namespace {

/// A contiguous float32 CUDA tensor whose last dimension is k (2 or 3) over `rows` rows.
bool statsOk(const at::Tensor& s, int64_t rows, int64_t k) {
    return s.is_cuda() && s.scalar_type() == at::kFloat && s.is_contiguous() && s.dim() >= 2 && s.size(-1) == k &&
           s.size(-2) == rows;
}

} // namespace

/// stats [rows, 2]: each row's softmax state (target: none); stats [rows, 3]: the state and the
/// target's logit when it falls in the shard's columns [shardBegin, shardBegin + cols).
wkt::Status shardStats(const at::Tensor& x, const at::Tensor& target, int64_t shardBegin, const at::Tensor& stats) {
    WKT_REQUIRE(wkt::rowsOk(x) && x.size(1) >= 1, "x must be a CUDA row matrix of at least one column");
    const bool ce = stats.dim() == 2 && stats.size(1) == 3;
    WKT_REQUIRE(statsOk(stats, x.size(0), ce ? 3 : 2) && stats.dim() == 2, "stats must be float32 [rows, 2 or 3]");
    WKT_REQUIRE(!ce || wkt::targetsOk(target, x.size(0)),
                "target must be a contiguous int64 CUDA vector of a class a row");
    return wkt::forRows(
        x, [&](auto tag, long long, int) { return shardStatsAs<decltype(tag)>(x, target, shardBegin, stats); });
}

/// stats [rows, k] = the merge of gathered [ranks, rows, k] in rank order (k = 2 or 3).
wkt::Status statsMerge(const at::Tensor& gathered, const at::Tensor& stats) {
    WKT_REQUIRE(gathered.dim() == 3 && (gathered.size(2) == 2 || gathered.size(2) == 3) &&
                    statsOk(gathered, gathered.size(1), gathered.size(2)) && gathered.size(0) >= 1 &&
                    gathered.size(0) <= INT32_MAX,
                "gathered must be float32 [ranks, rows, 2 or 3]");
    WKT_REQUIRE(stats.dim() == 2 && statsOk(stats, gathered.size(1), gathered.size(2)),
                "stats must be float32 [rows, k] matching gathered");
    const long long rows = gathered.size(1);
    if (rows == 0) return wkt::ok();
    const c10::cuda::CUDAGuard guard(gathered.device());
    const int ranks = (int)gathered.size(0);
    if (gathered.size(2) == 2)
        return wkt::cudaStatus(warpkit::rowStatsMerge((const warpkit::SoftmaxState*)gathered.data_ptr(),
                                                      (warpkit::SoftmaxState*)stats.data_ptr(), ranks, rows,
                                                      wkt::stream()),
                               "rowStatsMerge");
    return wkt::cudaStatus(warpkit::rowStatsMerge((const warpkit::RowShardStats*)gathered.data_ptr(),
                                                  (warpkit::RowShardStats*)stats.data_ptr(), ranks, rows,
                                                  wkt::stream()),
                           "rowStatsMerge");
}

/// y = softmax (log: log-softmax) of the shard x from the whole rows' merged stats [rows, 2].
wkt::Status shardSoftmaxApply(const at::Tensor& x, const at::Tensor& stats, bool log, const at::Tensor& y) {
    WKT_REQUIRE(wkt::rowsOk(x), "x must be a CUDA row matrix with a unit element stride");
    WKT_REQUIRE(statsOk(stats, x.size(0), 2) && stats.dim() == 2, "stats must be float32 [rows, 2]");
    WKT_REQUIRE(wkt::rowsOk(y) && y.sizes() == x.sizes() && y.scalar_type() == x.scalar_type(), "y must match x");
    return wkt::forRows(x,
                        [&](auto tag, long long, int) { return shardSoftmaxApplyAs<decltype(tag)>(x, stats, log, y); });
}

/// loss [rows] of the whole rows and grad (the shard's gradient, gradScale 1) from merged
/// cross-entropy stats [rows, 3]; the shard holds columns [shardBegin, shardBegin + cols) of `vocab`.
wkt::Status shardCrossEntropyFinish(const at::Tensor& logits, const at::Tensor& target, const at::Tensor& stats,
                                    int64_t shardBegin, int64_t vocab, int64_t ignoreIndex, const at::Tensor& loss,
                                    const at::Tensor& grad) {
    WKT_REQUIRE(wkt::rowsOk(logits) && logits.size(1) >= 1, "logits must be a CUDA row matrix of at least one column");
    WKT_REQUIRE(wkt::targetsOk(target, logits.size(0)),
                "target must be a contiguous int64 CUDA vector of a class a row");
    WKT_REQUIRE(statsOk(stats, logits.size(0), 3) && stats.dim() == 2, "stats must be float32 [rows, 3]");
    WKT_REQUIRE(wkt::rowValuesOk(loss, logits.size(0)), "loss must be a contiguous float32 vector of a value a row");
    WKT_REQUIRE(wkt::rowsOk(grad) && grad.sizes() == logits.sizes() && grad.scalar_type() == logits.scalar_type(),
                "grad must match logits");
    WKT_REQUIRE(shardBegin >= 0 && shardBegin + logits.size(1) <= vocab, "the shard must lie inside [0, vocab)");
    return wkt::forRows(logits, [&](auto tag, long long, int) {
        return shardCrossEntropyFinishAs<decltype(tag)>(logits, target, stats, shardBegin, vocab, ignoreIndex, loss,
                                                        grad);
    });
}

/// values (x's dtype) and indices (int64), rows x k contiguous: each row's k best of the shard x with
/// global columns (shardBegin + local), padded past the shard's columns (index -1; rowTopKShard).
wkt::Status shardTopK(const at::Tensor& x, int64_t k, bool largest, int64_t shardBegin, const at::Tensor& values,
                      const at::Tensor& indices) {
    WKT_REQUIRE(wkt::rowsOk(x) && x.size(1) >= 1, "x must be a CUDA row matrix of at least one column");
    WKT_REQUIRE(k >= 1 && k <= INT32_MAX && shardBegin >= 0, "need k >= 1 and shard_begin >= 0");
    WKT_REQUIRE(indices.is_cuda() && indices.scalar_type() == at::kLong && indices.is_contiguous() &&
                    indices.numel() == x.size(0) * k,
                "indices must be a contiguous int64 rows x k matrix");
    WKT_REQUIRE(values.is_cuda() && values.is_contiguous() && values.scalar_type() == x.scalar_type() &&
                    values.numel() == x.size(0) * k,
                "values must be a contiguous rows x k matrix of x's dtype");
    if (x.size(0) == 0) return wkt::ok();
    const c10::cuda::CUDAGuard guard(x.device());
    return wkt::dispatch(x.scalar_type(), [&](auto tag) {
        return shardTopKAs<decltype(tag)>(x, k, largest, shardBegin, values, indices);
    });
}

namespace {

/// gv [ranks, rows, k] (float32, float16 or bfloat16) and gi int64 of the same shape, contiguous CUDA.
bool gatheredOk(const at::Tensor& gv, const at::Tensor& gi) {
    return gv.is_cuda() && gv.dim() == 3 && gv.is_contiguous() && gi.is_cuda() && gi.is_contiguous() &&
           gi.scalar_type() == at::kLong && gi.sizes() == gv.sizes() && gv.size(0) >= 1 && gv.size(0) <= INT32_MAX &&
           gv.size(2) >= 1 && gv.size(2) <= INT32_MAX;
}

} // namespace

/// values, indices [rows, k] = the whole rows' top k from the gathered shard candidates (rowTopKMerge).
wkt::Status topkMerge(const at::Tensor& gv, const at::Tensor& gi, bool largest, const at::Tensor& values,
                      const at::Tensor& indices) {
    WKT_REQUIRE(gatheredOk(gv, gi), "gathered values and indices must be contiguous [ranks, rows, k], indices int64");
    WKT_REQUIRE(values.is_contiguous() && values.scalar_type() == gv.scalar_type() &&
                    values.numel() == gv.size(1) * gv.size(2) && indices.is_contiguous() &&
                    indices.scalar_type() == at::kLong && indices.numel() == values.numel(),
                "values and indices must be contiguous [rows, k] (values of the gathered dtype, indices int64)");
    if (gv.size(1) == 0) return wkt::ok();
    const c10::cuda::CUDAGuard guard(gv.device());
    return wkt::dispatch(gv.scalar_type(),
                         [&](auto tag) { return topkMergeAs<decltype(tag)>(gv, gi, largest, values, indices); });
}

/// out[r] (int64) = the token rowSample(whole row r, topK = k, ...) draws, from the gathered shard
/// candidates (rowSampleMerge); seedOffset as sample's (none, or int64 {seed, offset} on the device).
wkt::Status sampleMerge(const at::Tensor& gv, const at::Tensor& gi, double temperature, double topP, double minP,
                        int64_t seed, int64_t offset, const at::Tensor& seedOffset, const at::Tensor& out) {
    WKT_REQUIRE(gatheredOk(gv, gi), "gathered values and indices must be contiguous [ranks, rows, k], indices int64");
    WKT_TRY(wkt::samplerArgsOk(out, gv.size(1), seedOffset));
    if (gv.size(1) == 0) return wkt::ok();
    const c10::cuda::CUDAGuard guard(gv.device());
    return wkt::dispatch(gv.scalar_type(), [&](auto tag) {
        return sampleMergeAs<decltype(tag)>(gv, gi, temperature, topP, minP, seed, offset, seedOffset, out);
    });
}
