// select.cu's launches for one element type (common.h's per-dtype launches; select_f32.cu,
// select_f16.cu and select_bf16.cu instantiate them): device/topk.cuh, CUB's two-call workspace rule.
#pragma once

#include "common.h"

#include <warpkit/device/topk.cuh>

template <typename A>
wkt::Status topkAs(const at::Tensor& x, int64_t k, bool largest, const at::Tensor& values, const at::Tensor& indices) {
    auto* i = static_cast<long long*>(indices.data_ptr());
    if (k == 1) // one read a row on the row family's runner, no workspace
        return wkt::cudaStatus(largest ? warpkit::rowArgMax(wkt::ptr<A>(x), wkt::ptr<A>(values), i, x.size(0),
                                                            (int)x.size(1), wkt::ld(x), wkt::stream())
                                       : warpkit::rowArgMin(wkt::ptr<A>(x), wkt::ptr<A>(values), i, x.size(0),
                                                            (int)x.size(1), wkt::ld(x), wkt::stream()),
                               largest ? "rowArgMax" : "rowArgMin");
    return wkt::withWorkspace(x, "rowTopK", [&](void* ws, size_t* bytes) {
        return warpkit::rowTopK(wkt::ptr<A>(x), wkt::ptr<A>(values), i, x.size(0), (int)x.size(1), (int)k, largest,
                                wkt::ld(x), ws, bytes, wkt::stream());
    });
}

template <typename A> wkt::Status sampleAs(const at::Tensor& logits, double temperature, int64_t topK, double topP,
                                           double minP, int64_t seed, int64_t offset, const at::Tensor& seedOffset,
                                           const at::Tensor& out) {
    auto* o = static_cast<long long*>(out.data_ptr());
    const long long rows = logits.size(0);
    const int cols = (int)logits.size(1);
    return wkt::withWorkspace(logits, "rowSample", [&](void* ws, size_t* bytes) {
        if (wkt::given(seedOffset)) {
            const auto* so = static_cast<const unsigned long long*>(seedOffset.data_ptr());
            return warpkit::rowSample(wkt::ptr<A>(logits), o, rows, cols, (float)temperature, (int)topK, (float)topP,
                                      (float)minP, so, so + 1, wkt::ld(logits), ws, bytes, wkt::stream());
        }
        return warpkit::rowSample(wkt::ptr<A>(logits), o, rows, cols, (float)temperature, (int)topK, (float)topP,
                                  (float)minP, (unsigned long long)seed, (unsigned long long)offset, wkt::ld(logits),
                                  ws, bytes, wkt::stream());
    });
}

/// The explicit instantiations of this family's launches for the element type A.
#define WKT_SELECT_LAUNCHES(A) \
    WKT_INSTANTIATE(topkAs, A) \
    WKT_INSTANTIATE(sampleAs, A)
