// Cross-entropy of the rows of a 2-D tensor of logits against int64 targets: each row's loss and, in
// the same pass, its gradient (warpkit::rowCrossEntropy, device/cross_entropy.cuh).
#include "common.h"

#include <warpkit/device/cross_entropy.cuh>

/// loss[r] (float32) and, when grad is given, grad = d loss[r] / d logits (gradScale 1: the
/// backward scales each row by its incoming gradient).
wkt::Status crossEntropyForward(const at::Tensor& logits, const at::Tensor& target, int64_t ignoreIndex,
                                double smoothing, const at::Tensor& loss, const at::Tensor& grad) {
    WKT_REQUIRE(wkt::rowsOk(logits), "logits must be a CUDA row matrix with a unit element stride");
    WKT_REQUIRE(target.is_cuda() && target.scalar_type() == at::kLong && target.dim() == 1 &&
                    target.size(0) == logits.size(0) && target.is_contiguous(),
                "target must be a contiguous int64 CUDA vector of a class a row");
    WKT_REQUIRE(loss.is_cuda() && loss.scalar_type() == at::kFloat && loss.numel() == logits.size(0) &&
                    loss.is_contiguous(),
                "loss must be a contiguous float32 vector of a value a row");
    const bool withGrad = wkt::given(grad);
    WKT_REQUIRE(!withGrad ||
                    (wkt::rowsOk(grad) && grad.sizes() == logits.sizes() && grad.scalar_type() == logits.scalar_type()),
                "grad must match logits");
    if (logits.numel() == 0) return wkt::ok();
    const c10::cuda::CUDAGuard guard(logits.device());
    return wkt::dispatch(logits.scalar_type(), [&](auto tag) {
        using A = decltype(tag);
        const auto* t = static_cast<const long long*>(target.data_ptr());
        return wkt::cudaStatus(
            warpkit::rowCrossEntropy(wkt::ptr<A>(logits), t, wkt::fptr(loss), withGrad ? wkt::ptr<A>(grad) : nullptr,
                                     logits.size(0), (int)logits.size(1), (long long)ignoreIndex, (float)smoothing,
                                     1.0f, wkt::ld(logits), withGrad ? wkt::ld(grad) : logits.size(1), wkt::stream()),
            "rowCrossEntropy");
    });
}
