// segment.cu's launches for one element type (common.h's per-dtype launches; segment_f32.cu,
// segment_f16.cu and segment_bf16.cu instantiate them): device/segment.cuh, CUB's two-call
// workspace rule, over int32 or int64 offsets.
#pragma once

#include "common.h"

#include <warpkit/device/segment.cuh>

namespace {

/// f(offsets pointer) with the offsets' integer type; its Status.
template <typename F> wkt::Status withOffsets(const at::Tensor& offsets, F&& f) {
    if (offsets.scalar_type() == at::kInt) return f(static_cast<const int*>(offsets.data_ptr()));
    return f(static_cast<const long long*>(offsets.data_ptr()));
}

} // namespace

template <typename A> wkt::Status segmentSoftmaxAs(const at::Tensor& x, const at::Tensor& dy, const at::Tensor& offsets,
                                                   bool log, const at::Tensor& out) {
    const warpkit::SoftmaxKind kind = log ? warpkit::SoftmaxLog : warpkit::SoftmaxPlain;
    const long long items = x.size(0), segments = offsets.numel() - 1;
    const int heads = (int)x.size(1);
    return withOffsets(offsets, [&](auto off) {
        if (wkt::given(dy))
            return wkt::withWorkspace(x, "segmentSoftmaxBackward", [&](void* ws, size_t* bytes) {
                return warpkit::segmentSoftmaxBackward(wkt::ptr<A>(x), wkt::ptr<A>(dy), wkt::ptr<A>(out), items, off,
                                                       segments, heads, kind, ws, bytes, wkt::stream());
            });
        return wkt::withWorkspace(x, "segmentSoftmax", [&](void* ws, size_t* bytes) {
            return warpkit::segmentSoftmax(wkt::ptr<A>(x), wkt::ptr<A>(out), items, off, segments, heads, kind, ws,
                                           bytes, wkt::stream());
        });
    });
}

template <typename A>
wkt::Status segmentReduceAs(const at::Tensor& x, const at::Tensor& offsets, int64_t op, const at::Tensor& out) {
    const long long segments = offsets.numel() - 1;
    return withOffsets(offsets, [&](auto off) {
        return wkt::withWorkspace(x, "segmentReduce", [&](void* ws, size_t* bytes) {
            const auto* in = wkt::ptr<A>(x);
            auto* o = wkt::ptr<A>(out);
            if (op == 0) return warpkit::segmentReduceSum(in, o, x.numel(), off, segments, ws, bytes, wkt::stream());
            if (op == 1) return warpkit::segmentReduceMax(in, o, x.numel(), off, segments, ws, bytes, wkt::stream());
            return warpkit::segmentReduceMin(in, o, x.numel(), off, segments, ws, bytes, wkt::stream());
        });
    });
}

/// The explicit instantiations of this family's launches for the element type A.
#define WKT_SEGMENT_LAUNCHES(A)          \
    WKT_INSTANTIATE(segmentSoftmaxAs, A) \
    WKT_INSTANTIATE(segmentReduceAs, A)
