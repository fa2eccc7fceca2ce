// softmax.cu's launches for one element type (common.h's per-dtype launches; softmax_f32.cu,
// softmax_f16.cu and softmax_bf16.cu instantiate them): device/softmax.cuh, device/softmax_backward.cuh.
#pragma once

#include "common.h"

#include <warpkit/device/softmax.cuh>
#include <warpkit/device/softmax_backward.cuh>

template <typename A> wkt::Status softmaxForwardAs(const at::Tensor& x, const at::Tensor& y, bool log) {
    return wkt::cudaStatus(warpkit::rowSoftmax(wkt::ptr<A>(x), wkt::ptr<A>(y), x.size(0), (int)x.size(1),
                                               log ? warpkit::SoftmaxLog : warpkit::SoftmaxPlain, wkt::ld(x),
                                               wkt::ld(y), wkt::stream()),
                           "rowSoftmax");
}

template <typename A>
wkt::Status softmaxBackwardAs(const at::Tensor& y, const at::Tensor& dy, const at::Tensor& dx, bool log) {
    return wkt::cudaStatus(warpkit::rowSoftmaxBackward(wkt::ptr<A>(y), wkt::ptr<A>(dy), wkt::ptr<A>(dx), y.size(0),
                                                       (int)y.size(1),
                                                       log ? warpkit::SoftmaxLog : warpkit::SoftmaxPlain, wkt::ld(y),
                                                       wkt::ld(dy), wkt::ld(dx), wkt::stream()),
                           "rowSoftmaxBackward");
}

/// The explicit instantiations of this family's launches for the element type A.
#define WKT_SOFTMAX_LAUNCHES(A)          \
    WKT_INSTANTIATE(softmaxForwardAs, A) \
    WKT_INSTANTIATE(softmaxBackwardAs, A)
