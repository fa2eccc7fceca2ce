// norm.cu's launches for one element type (common.h's per-dtype launches; norm_f32.cu, norm_f16.cu
// and norm_bf16.cu instantiate them; the 16-bit files also the float32 x with their residual):
// device/norm.cuh, device/norm_backward.cuh (CUB's two-call workspace rule) and device/add_norm.cuh.
#pragma once

#include "common.h"

#include <warpkit/device/add_norm.cuh>
#include <warpkit/device/norm.cuh>
#include <warpkit/device/norm_backward.cuh>

template <typename A> wkt::Status normForwardAs(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b,
                                                double eps, const at::Tensor& y, const at::Tensor& mean,
                                                const at::Tensor& rstd, bool rms) {
    const long long rows = x.size(0);
    const int cols = (int)x.size(1);
    if (rms)
        return wkt::cudaStatus(warpkit::rowRmsNorm(wkt::ptr<A>(x), wkt::ptr<A>(y), rows, cols, wkt::ptr<A>(w),
                                                   (float)eps, wkt::fptr(rstd), wkt::ld(x), wkt::ld(y), wkt::stream()),
                               "rowRmsNorm");
    return wkt::cudaStatus(warpkit::rowLayerNorm(wkt::ptr<A>(x), wkt::ptr<A>(y), rows, cols, wkt::ptr<A>(w),
                                                 wkt::ptr<A>(b), (float)eps, wkt::fptr(mean), wkt::fptr(rstd),
                                                 wkt::ld(x), wkt::ld(y), wkt::stream()),
                           "rowLayerNorm");
}

/// dres none: the plain backward; given: its gradient added into dx (the Add calls, dres of x's dtype).
template <typename A> wkt::Status normBackwardAs(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& w,
                                                 const at::Tensor& mean, const at::Tensor& rstd, const at::Tensor& dres,
                                                 const at::Tensor& dx, const at::Tensor& dw, const at::Tensor& db,
                                                 bool rms) {
    const long long rows = x.size(0);
    const int cols = (int)x.size(1);
    const bool res = wkt::given(dres);
    const auto* r = res ? wkt::ptr<A>(dres) : nullptr;
    const long long ldr = res ? wkt::ld(dres) : 0;
    if (rms)
        return wkt::withWorkspace(x, "rowRmsNormBackward", [&](void* ws, size_t* bytes) {
            if (res)
                return warpkit::rowRmsNormBackwardAdd(wkt::ptr<A>(dy), wkt::ptr<A>(x), wkt::ptr<A>(w), wkt::fptr(rstd),
                                                      r, wkt::ptr<A>(dx), wkt::ptr<A>(dw), rows, cols, wkt::ld(dy),
                                                      wkt::ld(x), ldr, wkt::ld(dx), ws, bytes, wkt::stream());
            return warpkit::rowRmsNormBackward(wkt::ptr<A>(dy), wkt::ptr<A>(x), wkt::ptr<A>(w), wkt::fptr(rstd),
                                               wkt::ptr<A>(dx), wkt::ptr<A>(dw), rows, cols, wkt::ld(dy), wkt::ld(x),
                                               wkt::ld(dx), ws, bytes, wkt::stream());
        });
    return wkt::withWorkspace(x, "rowLayerNormBackward", [&](void* ws, size_t* bytes) {
        if (res)
            return warpkit::rowLayerNormBackwardAdd(wkt::ptr<A>(dy), wkt::ptr<A>(x), wkt::ptr<A>(w), wkt::fptr(mean),
                                                    wkt::fptr(rstd), r, wkt::ptr<A>(dx), wkt::ptr<A>(dw),
                                                    wkt::ptr<A>(db), rows, cols, wkt::ld(dy), wkt::ld(x), ldr,
                                                    wkt::ld(dx), ws, bytes, wkt::stream());
        return warpkit::rowLayerNormBackward(wkt::ptr<A>(dy), wkt::ptr<A>(x), wkt::ptr<A>(w), wkt::fptr(mean),
                                             wkt::fptr(rstd), wkt::ptr<A>(dx), wkt::ptr<A>(dw), wkt::ptr<A>(db), rows,
                                             cols, wkt::ld(dy), wkt::ld(x), wkt::ld(dx), ws, bytes, wkt::stream());
    });
}

/// The Add backward of a float32 x whose residual's gradient dr is of the 16-bit B.
template <typename B>
wkt::Status normBackwardNarrowAs(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& w, const at::Tensor& mean,
                                 const at::Tensor& rstd, const at::Tensor& dres, const at::Tensor& dx,
                                 const at::Tensor& dr, const at::Tensor& dw, const at::Tensor& db, bool rms) {
    const long long rows = x.size(0);
    const int cols = (int)x.size(1);
    return wkt::withWorkspace(x, "rowLayerNormBackwardAdd", [&](void* ws, size_t* bytes) {
        if (rms)
            return warpkit::rowRmsNormBackwardAdd(
                wkt::ptr<float>(dy), wkt::ptr<float>(x), wkt::ptr<float>(w), wkt::fptr(rstd), wkt::ptr<float>(dres),
                wkt::ptr<float>(dx), wkt::ptr<B>(dr), wkt::ptr<float>(dw), rows, cols, wkt::ld(dy), wkt::ld(x),
                wkt::ld(dres), wkt::ld(dx), wkt::ld(dr), ws, bytes, wkt::stream());
        return warpkit::rowLayerNormBackwardAdd(
            wkt::ptr<float>(dy), wkt::ptr<float>(x), wkt::ptr<float>(w), wkt::fptr(mean), wkt::fptr(rstd),
            wkt::ptr<float>(dres), wkt::ptr<float>(dx), wkt::ptr<B>(dr), wkt::ptr<float>(dw), wkt::ptr<float>(db), rows,
            cols, wkt::ld(dy), wkt::ld(x), wkt::ld(dres), wkt::ld(dx), wkt::ld(dr), ws, bytes, wkt::stream());
    });
}

/// x, h, y, w, b of A; the residual r of B (A, or 16-bit beside a float32 A).
template <typename A, typename B>
wkt::Status normAddForwardAs(const at::Tensor& x, const at::Tensor& r, const at::Tensor& w, const at::Tensor& b,
                             double eps, const at::Tensor& h, const at::Tensor& y, const at::Tensor& mean,
                             const at::Tensor& rstd, bool rms) {
    const long long rows = x.size(0);
    const int cols = (int)x.size(1);
    if (rms)
        return wkt::cudaStatus(warpkit::rowAddRmsNorm(wkt::ptr<A>(x), wkt::ptr<B>(r), wkt::ptr<A>(h), wkt::ptr<A>(y),
                                                      rows, cols, wkt::ptr<A>(w), (float)eps, wkt::fptr(rstd),
                                                      wkt::ld(x), wkt::ld(r), wkt::ld(h), wkt::ld(y), wkt::stream()),
                               "rowAddRmsNorm");
    return wkt::cudaStatus(warpkit::rowAddLayerNorm(wkt::ptr<A>(x), wkt::ptr<B>(r), wkt::ptr<A>(h), wkt::ptr<A>(y),
                                                    rows, cols, wkt::ptr<A>(w), wkt::ptr<A>(b), (float)eps,
                                                    wkt::fptr(mean), wkt::fptr(rstd), wkt::ld(x), wkt::ld(r),
                                                    wkt::ld(h), wkt::ld(y), wkt::stream()),
                           "rowAddLayerNorm");
}

/// The explicit instantiations of this family's launches for the element type A.
#define WKT_NORM_LAUNCHES(A)           \
    WKT_INSTANTIATE(normForwardAs, A)  \
    WKT_INSTANTIATE(normBackwardAs, A) \
    WKT_INSTANTIATE(normAddForwardAs, A, A)
