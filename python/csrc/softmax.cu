// Softmax and log-softmax over the rows of a 2-D tensor and their backward: warpkit::rowSoftmax
// (device/softmax.cuh) and warpkit::rowSoftmaxBackward (device/softmax_backward.cuh). The launches
// are softmax_launch.cuh's, one file a dtype.
#include "common.h"

/// y = softmax(x) (log: log-softmax) row by row, into the caller's y (x's shape and dtype).
wkt::Status softmaxForward(const at::Tensor& x, const at::Tensor& y, bool log) {
    WKT_REQUIRE(wkt::rowsOk(x) && wkt::rowsOk(y), "x and out must be CUDA row matrices with a unit element stride");
    WKT_REQUIRE(x.sizes() == y.sizes() && x.scalar_type() == y.scalar_type(), "out must match x");
    return wkt::forRows(x, [&](auto tag, long long, int) { return softmaxForwardAs<decltype(tag)>(x, y, log); });
}

/// dx from the forward output y and its gradient dy (log: the log-softmax backward).
wkt::Status softmaxBackward(const at::Tensor& y, const at::Tensor& dy, const at::Tensor& dx, bool log) {
    WKT_REQUIRE(wkt::rowsOk(y) && wkt::rowsOk(dy) && wkt::rowsOk(dx),
                "y, grad and out must be CUDA row matrices with a unit element stride");
    WKT_REQUIRE(y.sizes() == dy.sizes() && y.sizes() == dx.sizes() && dy.scalar_type() == y.scalar_type() &&
                    dx.scalar_type() == y.scalar_type(),
                "grad and out must match the forward output");
    return wkt::forRows(y, [&](auto tag, long long, int) { return softmaxBackwardAs<decltype(tag)>(y, dy, dx, log); });
}
