// The CUDA kernels of the selection operators (warpkit::topk, argmax, sample: warpkit/_ops_select.py),
// the segment operators (segment_softmax and its backward, segment_reduce: _ops_segment.py) and the
// sharded ones (warpkit/distributed.py). Each takes its schema's arguments and every input the schema
// admits, as the Python bodies they replace did: outputs allocated here, strided rows read where the
// device call's leading dimension allows (else a contiguous copy), empty inputs answered without a
// launch, other inputs left to the device call's own checks (select.cu, segment.cu, sharded.cu),
// whose failures raise RuntimeError.
#include "ops.h"

namespace {

using wkt::checkCuda;
using wkt::checkDims;
using wkt::lastRows;
using wkt::OptTensor;
using wkt::orNone;
using wkt::raise;
using Tensors2 = std::tuple<at::Tensor, at::Tensor>;

at::Tensor longs(at::IntArrayRef shape, const at::Tensor& like) {
    return at::empty(shape, like.options().dtype(at::kLong));
}

/// (values, indices): each row's k largest (smallest) values of x, ranked, and their int64 columns.
/// The device calls take a row's length as an int: longer rows are refused, not wrapped.
void checkCols(const at::Tensor& x, const char* name) {
    TORCH_CHECK(x.size(1) <= 2147483647, "warpkit.", name, ": rows of ", x.size(1),
                " elements; at most 2147483647 (2^31 - 1) are supported");
}

Tensors2 topkOp(const at::Tensor& x, int64_t k, bool largest) {
    checkDims(x, 2, "topk");
    checkCols(x, "topk");
    TORCH_CHECK(k >= 0 && k <= x.size(1), "warpkit.topk: selected index k out of range (k = ", k, ", dimension of ",
                x.size(1), ")");
    const at::Tensor values = at::empty({x.size(0), k}, x.options());
    const at::Tensor indices = longs({x.size(0), k}, x);
    if (x.size(0) && k) raise(topk(lastRows(x, x.size(1)), k, largest, values, indices), "topk");
    return {values, indices};
}

/// Each row's first maximum's column (int64; a NaN counts as the maximum).
at::Tensor argmaxOp(const at::Tensor& x) {
    checkDims(x, 2, "argmax");
    checkCols(x, "argmax");
    TORCH_CHECK_INDEX(x.size(0) == 0 || x.size(1) > 0, "warpkit.argmax: Expected reduction dim to have non-zero size.");
    const at::Tensor indices = longs({x.size(0)}, x);
    if (x.size(0)) raise(topk(lastRows(x, x.size(1)), 1, true, at::Tensor(), indices), "argmax");
    return indices;
}

/// A column of each row (int64) drawn by rowSample; seedOffset: none (seed, offset by value) or an
/// int64 tensor {seed, offset} read when the kernel runs.
at::Tensor sampleOp(const at::Tensor& logits, double temperature, int64_t topK, double topP, double minP, int64_t seed,
                    int64_t offset, const OptTensor& seedOffset) {
    checkDims(logits, 2, "sample");
    checkCols(logits, "sample");
    const at::Tensor out = longs({logits.size(0)}, logits);
    if (logits.size(0))
        raise(sample(lastRows(logits, logits.size(1)), temperature, topK, topP, minP, seed, offset,
                     seedOffset.has_value() ? seedOffset->contiguous() : at::Tensor(), out),
              "sample");
    return out;
}

/// The segments' softmax (log: log-softmax) of x [items, heads] per column; rows in no segment 0.
at::Tensor segmentSoftmaxOp(const at::Tensor& x, const at::Tensor& offsets, bool log) {
    checkDims(x, 2, "segment_softmax");
    checkCuda(offsets, "segment_softmax");
    const at::Tensor y = at::zeros(x.sizes(), x.options());
    if (x.numel() && offsets.numel() > 1)
        raise(segmentSoftmax(x.contiguous(), at::Tensor(), offsets.contiguous(), log, y), "segment_softmax");
    return y;
}

/// The gradient of segmentSoftmaxOp's x from its output y and y's gradient dy; rows in no segment 0.
at::Tensor segmentSoftmaxBackwardOp(const at::Tensor& y, const at::Tensor& dy, const at::Tensor& offsets, bool log) {
    checkDims(y, 2, "segment_softmax_backward");
    checkCuda(offsets, "segment_softmax_backward");
    const at::Tensor dx = at::zeros(y.sizes(), y.options());
    if (y.numel() && offsets.numel() > 1) {
        const at::Tensor g = (dy.scalar_type() == y.scalar_type() ? dy : dy.to(y.scalar_type())).contiguous();
        raise(segmentSoftmax(y.contiguous(), g, offsets.contiguous(), log, dx), "segment_softmax_backward");
    }
    return dx;
}

/// Each segment's sum (op 0), maximum (1) or minimum (2) of the vector data, in data's dtype.
at::Tensor segmentReduceOp(const at::Tensor& data, const at::Tensor& offsets, int64_t op) {
    checkCuda(data, "segment_reduce");
    checkDims(offsets, 1, "segment_reduce");
    TORCH_CHECK(offsets.numel() >= 1, "warpkit.segment_reduce: offsets needs segments + 1 entries (at least one)");
    const int64_t segments = offsets.numel() - 1;
    const at::Tensor out = at::empty({segments}, data.options());
    if (segments) raise(segmentReduce(data.contiguous(), offsets.contiguous(), op, out), "segment_reduce");
    return out;
}

// ---- sharded rows (warpkit/distributed.py) -------------------------------------------------------

/// Each row's softmax statistics over the shard x: float32 [rows, 2], or [rows, 3] withTarget.
at::Tensor shardStatsOp(const at::Tensor& x, const at::Tensor& target, int64_t shardBegin, bool withTarget) {
    checkDims(x, 2, "shard_stats");
    const at::Tensor stats = at::empty({x.size(0), withTarget ? 3 : 2}, x.options().dtype(at::kFloat));
    if (x.size(0))
        raise(shardStats(lastRows(x, x.size(1)), withTarget ? target.contiguous() : at::Tensor(), shardBegin, stats),
              "shard_stats");
    return stats;
}

/// The merge of gathered [ranks, rows, k] statistics in rank order: [rows, k].
at::Tensor statsMergeOp(const at::Tensor& gathered) {
    checkDims(gathered, 3, "stats_merge");
    const at::Tensor stats = at::empty(gathered.sizes().slice(1), gathered.options().dtype(at::kFloat));
    if (gathered.size(1)) raise(statsMerge(gathered.contiguous(), stats), "stats_merge");
    return stats;
}

/// The shard x's softmax (log: log-softmax) from the whole rows' merged statistics [rows, 2].
at::Tensor shardSoftmaxApplyOp(const at::Tensor& x, const at::Tensor& stats, bool log) {
    checkDims(x, 2, "shard_softmax_apply");
    const at::Tensor y = at::empty(x.sizes(), x.options());
    if (x.numel()) raise(shardSoftmaxApply(lastRows(x, x.size(1)), stats.contiguous(), log, y), "shard_softmax_apply");
    return y;
}

/// (loss, grad): each row's loss (float32) and the shard's gradient, from merged statistics [rows, 3].
Tensors2 shardCrossEntropyFinishOp(const at::Tensor& logits, const at::Tensor& target, const at::Tensor& stats,
                                   int64_t shardBegin, int64_t vocab, int64_t ignoreIndex) {
    checkDims(logits, 2, "shard_cross_entropy_finish");
    const at::Tensor loss = at::empty({logits.size(0)}, logits.options().dtype(at::kFloat));
    const at::Tensor grad = at::empty(logits.sizes(), logits.options());
    if (logits.size(0))
        raise(shardCrossEntropyFinish(lastRows(logits, logits.size(1)), target.contiguous(), stats.contiguous(),
                                      shardBegin, vocab, ignoreIndex, loss, grad),
              "shard_cross_entropy_finish");
    return {loss, grad};
}

/// (values, indices) [rows, k]: each row's k best of the shard x with the whole rows' columns.
Tensors2 shardTopkOp(const at::Tensor& x, int64_t k, bool largest, int64_t shardBegin) {
    checkDims(x, 2, "shard_topk");
    const at::Tensor values = at::empty({x.size(0), k}, x.options());
    const at::Tensor indices = longs({x.size(0), k}, x);
    if (x.size(0)) raise(shardTopK(lastRows(x, x.size(1)), k, largest, shardBegin, values, indices), "shard_topk");
    return {values, indices};
}

/// (values, indices) [rows, k]: the whole rows' top k from the gathered [ranks, rows, k] candidates.
Tensors2 topkMergeOp(const at::Tensor& gv, const at::Tensor& gi, bool largest) {
    checkDims(gv, 3, "topk_merge");
    const at::Tensor values = at::empty(gv.sizes().slice(1), gv.options());
    const at::Tensor indices = longs(gv.sizes().slice(1), gv);
    if (gv.size(1)) raise(topkMerge(gv.contiguous(), gi.contiguous(), largest, values, indices), "topk_merge");
    return {values, indices};
}

/// One int64 token a row drawn from the gathered [ranks, rows, k] candidates (seedOffset as sampleOp's).
at::Tensor sampleMergeOp(const at::Tensor& gv, const at::Tensor& gi, double temperature, double topP, double minP,
                         int64_t seed, int64_t offset, const OptTensor& seedOffset) {
    checkDims(gv, 3, "sample_merge");
    const at::Tensor out = longs({gv.size(1)}, gv);
    if (gv.size(1))
        raise(sampleMerge(gv.contiguous(), gi.contiguous(), temperature, topP, minP, seed, offset,
                          seedOffset.has_value() ? seedOffset->contiguous() : at::Tensor(), out),
              "sample_merge");
    return out;
}

} // namespace

void registerSelectOps(torch::Library& cuda, torch::Library& autograd, pybind11::module_& m) {
    wkt::registerOps(cuda, autograd, m, "topk", &topkOp, "argmax", &argmaxOp, "sample", &sampleOp, "segment_softmax",
                     &segmentSoftmaxOp, "segment_softmax_backward", &segmentSoftmaxBackwardOp, "segment_reduce",
                     &segmentReduceOp, "shard_stats", &shardStatsOp, "stats_merge", &statsMergeOp,
                     "shard_softmax_apply", &shardSoftmaxApplyOp, "shard_cross_entropy_finish",
                     &shardCrossEntropyFinishOp, "shard_topk", &shardTopkOp, "topk_merge", &topkMergeOp, "sample_merge",
                     &sampleMergeOp);
}
