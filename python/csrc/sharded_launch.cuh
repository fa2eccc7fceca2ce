// sharded.cu's launches for one element type (common.h's per-dtype launches; sharded_f32.cu,
// sharded_f16.cu and sharded_bf16.cu instantiate them): device/sharded.cuh.
#pragma once

#include "common.h"

#include <warpkit/device/sharded.cuh>

template <typename A>
wkt::Status shardStatsAs(const at::Tensor& x, const at::Tensor& target, int64_t shardBegin, const at::Tensor& stats) {
    const long long rows = x.size(0);
    const int cols = (int)x.size(1);
    if (stats.size(1) == 2)
        return wkt::cudaStatus(warpkit::rowSoftmaxStats(wkt::ptr<A>(x), (warpkit::SoftmaxState*)stats.data_ptr(), rows,
                                                        cols, wkt::ld(x), wkt::stream()),
                               "rowSoftmaxStats");
    return wkt::cudaStatus(warpkit::rowSoftmaxStats(wkt::ptr<A>(x), (const long long*)target.data_ptr(),
                                                    (long long)shardBegin, (warpkit::RowShardStats*)stats.data_ptr(),
                                                    rows, cols, wkt::ld(x), wkt::stream()),
                           "rowSoftmaxStats");
}

template <typename A>
wkt::Status shardSoftmaxApplyAs(const at::Tensor& x, const at::Tensor& stats, bool log, const at::Tensor& y) {
    return wkt::cudaStatus(warpkit::rowSoftmaxApply(wkt::ptr<A>(x), wkt::ptr<A>(y),
                                                    (const warpkit::SoftmaxState*)stats.data_ptr(), x.size(0),
                                                    (int)x.size(1), log ? warpkit::SoftmaxLog : warpkit::SoftmaxPlain,
                                                    wkt::ld(x), wkt::ld(y), wkt::stream()),
                           "rowSoftmaxApply");
}

template <typename A> wkt::Status shardCrossEntropyFinishAs(const at::Tensor& logits, const at::Tensor& target,
                                                            const at::Tensor& stats, int64_t shardBegin, int64_t vocab,
                                                            int64_t ignoreIndex, const at::Tensor& loss,
                                                            const at::Tensor& grad) {
    return wkt::cudaStatus(warpkit::rowCrossEntropyFinish(
                               wkt::ptr<A>(logits), (const long long*)target.data_ptr(),
                               (const warpkit::RowShardStats*)stats.data_ptr(), wkt::fptr(loss), wkt::ptr<A>(grad),
                               logits.size(0), (int)logits.size(1), (long long)shardBegin, (long long)vocab,
                               (long long)ignoreIndex, 1.0f, wkt::ld(logits), wkt::ld(grad), wkt::stream()),
                           "rowCrossEntropyFinish");
}

template <typename A> wkt::Status shardTopKAs(const at::Tensor& x, int64_t k, bool largest, int64_t shardBegin,
                                              const at::Tensor& values, const at::Tensor& indices) {
    return wkt::withWorkspace(x, "rowTopKShard", [&](void* ws, size_t* bytes) {
        return warpkit::rowTopKShard(wkt::ptr<A>(x), wkt::ptr<A>(values), (long long*)indices.data_ptr(), x.size(0),
                                     (int)x.size(1), (int)k, largest, (long long)shardBegin, wkt::ld(x), ws, bytes,
                                     wkt::stream());
    });
}

template <typename A> wkt::Status topkMergeAs(const at::Tensor& gv, const at::Tensor& gi, bool largest,
                                              const at::Tensor& values, const at::Tensor& indices) {
    return wkt::cudaStatus(warpkit::rowTopKMerge(wkt::ptr<A>(gv), (const long long*)gi.data_ptr(), wkt::ptr<A>(values),
                                                 (long long*)indices.data_ptr(), (int)gv.size(0), gv.size(1),
                                                 (int)gv.size(2), largest, wkt::stream()),
                           "rowTopKMerge");
}

template <typename A> wkt::Status sampleMergeAs(const at::Tensor& gv, const at::Tensor& gi, double temperature,
                                                double topP, double minP, int64_t seed, int64_t offset,
                                                const at::Tensor& seedOffset, const at::Tensor& out) {
    auto* o = static_cast<long long*>(out.data_ptr());
    const auto* i = (const long long*)gi.data_ptr();
    const int ranks = (int)gv.size(0), k = (int)gv.size(2);
    if (wkt::given(seedOffset)) {
        const auto* so = static_cast<const unsigned long long*>(seedOffset.data_ptr());
        return wkt::cudaStatus(warpkit::rowSampleMerge(wkt::ptr<A>(gv), i, o, ranks, gv.size(1), k, (float)temperature,
                                                       (float)topP, (float)minP, so, so + 1, wkt::stream()),
                               "rowSampleMerge");
    }
    return wkt::cudaStatus(warpkit::rowSampleMerge(wkt::ptr<A>(gv), i, o, ranks, gv.size(1), k, (float)temperature,
                                                   (float)topP, (float)minP, (unsigned long long)seed,
                                                   (unsigned long long)offset, wkt::stream()),
                           "rowSampleMerge");
}

/// The explicit instantiations of this family's launches for the element type A.
#define WKT_SHARDED_LAUNCHES(A)                   \
    WKT_INSTANTIATE(shardStatsAs, A)              \
    WKT_INSTANTIATE(shardSoftmaxApplyAs, A)       \
    WKT_INSTANTIATE(shardCrossEntropyFinishAs, A) \
    WKT_INSTANTIATE(shardTopKAs, A)               \
    WKT_INSTANTIATE(topkMergeAs, A)               \
    WKT_INSTANTIATE(sampleMergeAs, A)
