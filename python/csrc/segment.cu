// Ragged data over CSR offsets (int32 or int64, segments + 1 entries, on the device): the softmax of
// each segment's rows per column and its backward (warpkit::segmentSoftmax / Backward), and the sum,
// maximum or minimum of each segment of a vector (segmentReduceSum / Max / Min); device/segment.cuh,
// CUB's two-call workspace rule.
#include "common.h"

#include <warpkit/device/segment.cuh>

namespace {

bool offsetsOk(const at::Tensor& o) {
    return o.is_cuda() && o.dim() == 1 && o.numel() >= 1 && o.is_contiguous() &&
           (o.scalar_type() == at::kInt || o.scalar_type() == at::kLong);
}

bool denseOk(const at::Tensor& t, const at::Tensor& like) {
    return t.is_cuda() && t.is_contiguous() && t.sizes() == like.sizes() && t.scalar_type() == like.scalar_type();
}

/// f(offsets pointer) with the offsets' integer type; its Status.
template <typename F> wkt::Status withOffsets(const at::Tensor& offsets, F&& f) {
    if (offsets.scalar_type() == at::kInt) return f(static_cast<const int*>(offsets.data_ptr()));
    return f(static_cast<const long long*>(offsets.data_ptr()));
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
    const warpkit::SoftmaxKind kind = log ? warpkit::SoftmaxLog : warpkit::SoftmaxPlain;
    const long long items = x.size(0);
    const int heads = (int)x.size(1);
    return wkt::dispatch(x.scalar_type(), [&](auto tag) {
        using A = decltype(tag);
        return withOffsets(offsets, [&](auto off) {
            if (backward)
                return wkt::withWorkspace(x, "segmentSoftmaxBackward", [&](void* ws, size_t* bytes) {
                    return warpkit::segmentSoftmaxBackward(wkt::ptr<A>(x), wkt::ptr<A>(dy), wkt::ptr<A>(out), items,
                                                           off, segments, heads, kind, ws, bytes, wkt::stream());
                });
            return wkt::withWorkspace(x, "segmentSoftmax", [&](void* ws, size_t* bytes) {
                return warpkit::segmentSoftmax(wkt::ptr<A>(x), wkt::ptr<A>(out), items, off, segments, heads, kind, ws,
                                               bytes, wkt::stream());
            });
        });
    });
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
    return wkt::dispatch(x.scalar_type(), [&](auto tag) {
        using A = decltype(tag);
        return withOffsets(offsets, [&](auto off) {
            return wkt::withWorkspace(x, "segmentReduce", [&](void* ws, size_t* bytes) {
                const auto* in = wkt::ptr<A>(x);
                auto* o = wkt::ptr<A>(out);
                if (op == 0)
                    return warpkit::segmentReduceSum(in, o, x.numel(), off, segments, ws, bytes, wkt::stream());
                if (op == 1)
                    return warpkit::segmentReduceMax(in, o, x.numel(), off, segments, ws, bytes, wkt::stream());
                return warpkit::segmentReduceMin(in, o, x.numel(), off, segments, ws, bytes, wkt::stream());
            });
        });
    });
}
