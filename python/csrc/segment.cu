// Ragged data over CSR offsets (int32 or int64, segments + 1 entries, on the device): the softmax of
// each segment's rows per column and its backward (warpkit::segmentSoftmax / Backward), and the sum,
// maximum or minimum of each segment of a vector (segmentReduceSum / Max / Min); device/segment.cuh,
// CUB's two-call workspace rule. The launches are segment_launch.cuh's, one file a dtype.
#include "common.h"

namespace {

bool offsetsOk(const at::Tensor& o) {
    return o.is_cuda() && o.dim() == 1 && o.numel() >= 1 && o.is_contiguous() &&
           (o.scalar_type() == at::kInt || o.scalar_type() == at::kLong);
}

bool denseOk(const at::Tensor& t, const at::Tensor& like) {
    return t.is_cuda() && t.is_contiguous() && t.sizes() == like.sizes() && t.scalar_type() == like.scalar_type();
}

} // namespace

/// out = the softmax (log: log-softmax) of each segment's rows of x [items, heads], per column; with
/// dy given, its backward: x is then the forward output y and out gets dx. Rows in no segment are
/// not written.
wkt::Status segmentSoftmax(const at::Tensor& x, const at::Tensor& dy, const at::Tensor& offsets, bool log,
                           const at::Tensor& out) {
    const bool backward = wkt::given(dy);
    WKT_REQUIRE(offsetsOk(offsets), "offsets must be a contiguous int32 or int64 CUDA vector of segments + 1 entries");
    WKT_REQUIRE(x.dim() == 2 && x.size(1) >= 1 && x.size(1) <= INT32_MAX && denseOk(x, x) && denseOk(out, x) &&
                    (!backward || denseOk(dy, x)),
                "x, grad and out must be contiguous [items, heads] CUDA tensors of one dtype");
    const long long segments = offsets.numel() - 1;
    if (segments == 0 || x.numel() == 0) return wkt::ok();
    const c10::cuda::CUDAGuard guard(x.device());
    return wkt::dispatch(x.scalar_type(),
                         [&](auto tag) { return segmentSoftmaxAs<decltype(tag)>(x, dy, offsets, log, out); });
}

/// out[s] = the sum (op 0), maximum (1) or minimum (2) of segment s of the vector x, in x's dtype.
wkt::Status segmentReduce(const at::Tensor& x, const at::Tensor& offsets, int64_t op, const at::Tensor& out) {
    WKT_REQUIRE(offsetsOk(offsets), "offsets must be a contiguous int32 or int64 CUDA vector of segments + 1 entries");
    WKT_REQUIRE(x.dim() == 1 && denseOk(x, x) && out.is_cuda() && out.is_contiguous() &&
                    out.scalar_type() == x.scalar_type() && out.numel() == offsets.numel() - 1,
                "data must be a contiguous CUDA vector, out one of its dtype with a value a segment");
    WKT_REQUIRE(op >= 0 && op <= 2, "reduce must be sum, max or min");
    const long long segments = offsets.numel() - 1;
    if (segments == 0) return wkt::ok();
    const c10::cuda::CUDAGuard guard(x.device());
    return wkt::dispatch(x.scalar_type(),
                         [&](auto tag) { return segmentReduceAs<decltype(tag)>(x, offsets, op, out); });
}
