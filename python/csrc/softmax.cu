// Softmax and log-softmax over the rows of a 2-D tensor and their backward: warpkit::rowSoftmax
// (device/softmax.cuh) and warpkit::rowSoftmaxBackward (device/softmax_backward.cuh).
#include "common.h"

#include <warpkit/device/softmax.cuh>
#include <warpkit/device/softmax_backward.cuh>

/// y = softmax(x) (log: log-softmax) row by row, into the caller's y (x's shape and dtype).
wkt::Status softmaxForward(const at::Tensor& x, const at::Tensor& y, bool log) {
    WKT_REQUIRE(wkt::rowsOk(x) && wkt::rowsOk(y), "x and out must be CUDA row matrices with a unit element stride");
    WKT_REQUIRE(x.sizes() == y.sizes() && x.scalar_type() == y.scalar_type(), "out must match x");
    const warpkit::SoftmaxKind kind = log ? warpkit::SoftmaxLog : warpkit::SoftmaxPlain;
    return wkt::forRows(x, [&](auto tag, long long rows, int cols) {
        using A = decltype(tag);
        return wkt::cudaStatus(warpkit::rowSoftmax(wkt::ptr<A>(x), wkt::ptr<A>(y), rows, cols, kind, wkt::ld(x),
                                                   wkt::ld(y), wkt::stream()),
                               "rowSoftmax");
    });
}

/// dx from the forward output y and its gradient dy (log: the log-softmax backward).
wkt::Status softmaxBackward(const at::Tensor& y, const at::Tensor& dy, const at::Tensor& dx, bool log) {
    WKT_REQUIRE(wkt::rowsOk(y) && wkt::rowsOk(dy) && wkt::rowsOk(dx),
                "y, grad and out must be CUDA row matrices with a unit element stride");
    WKT_REQUIRE(y.sizes() == dy.sizes() && y.sizes() == dx.sizes() && dy.scalar_type() == y.scalar_type() &&
                    dx.scalar_type() == y.scalar_type(),
                "grad and out must match the forward output");
    const warpkit::SoftmaxKind kind = log ? warpkit::SoftmaxLog : warpkit::SoftmaxPlain;
    return wkt::forRows(y, [&](auto tag, long long rows, int cols) {
        using A = decltype(tag);
        return wkt::cudaStatus(warpkit::rowSoftmaxBackward(wkt::ptr<A>(y), wkt::ptr<A>(dy), wkt::ptr<A>(dx), rows, cols,
                                                           kind, wkt::ld(y), wkt::ld(dy), wkt::ld(dx), wkt::stream()),
                               "rowSoftmaxBackward");
    });
}
