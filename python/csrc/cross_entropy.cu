// Cross-entropy of the rows of a 2-D tensor of logits against int64 targets: each row's loss and, in
// the same pass, its gradient (warpkit::rowCrossEntropy, device/cross_entropy.cuh).
#include "common.h"

#include <warpkit/block/reduce.cuh>
#include <warpkit/device/cross_entropy.cuh>
#include <warpkit/thread/vector.cuh>

namespace {

constexpr int kScaleThreads = 256;
constexpr int kReduceThreads = 1024;

/// scale[r * scaleStride] / max(*divisor, 1) (divisor null: 1), in float: a row's factor.
__device__ __forceinline__ float rowScale(const float* scale, long long scaleStride, long long r,
                                          const float* divisor) {
    const float s = scale[r * scaleStride];
    return divisor ? s / fmaxf(*divisor, 1.0f) : s;
}

/// out[e] = grad[e] * rowScale(e / cols) over the n contiguous elements of a rows x cols gradient
/// (out may be grad: in place), in float, rounded once. V elements a thread at a time: V = 1, or one
/// 16-byte vector (then grad and out are 16-byte aligned and cols >= V, so a vector spans at most
/// two rows).
template <typename T, int V> __global__ void scaleRowsKernel(const T* grad, T* out, const float* scale,
                                                             long long scaleStride, const float* divisor, long long n,
                                                             long long cols) {
    using Ar = warpkit::detail::Arith<T>;
    const long long step = (long long)gridDim.x * blockDim.x * V;
    for (long long e = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * V; e < n; e += step) {
        const long long r = e / cols;
        const long long next = (r + 1) * cols; // the next row's first element
        const float s0 = rowScale(scale, scaleStride, r, divisor);
        if constexpr (V > 1) {
            if (e + V <= n) {
                const float s1 = next < e + V ? rowScale(scale, scaleStride, r + 1, divisor) : s0;
                warpkit::Vector16<T> v = warpkit::loadVector(grad + e);
#pragma unroll
                for (int j = 0; j < V; ++j) v.e[j] = Ar::from_acc(Ar::to_acc(v.e[j]) * (e + j < next ? s0 : s1));
                warpkit::storeVector(out + e, v);
                continue;
            }
        }
        for (long long k = e; k < n && k < e + V; ++k)
            out[k] = Ar::from_acc(Ar::to_acc(grad[k]) * rowScale(scale, scaleStride, k / cols, divisor));
    }
}

template <typename T, int V> cudaError_t scaleRows(const T* grad, T* out, const float* scale, long long scaleStride,
                                                   const float* divisor, long long n, long long cols) {
    int blocks = 1;
    WARPKIT_TRY(warpkit::detail::gridBlocks(scaleRowsKernel<T, V>, kScaleThreads, (n + V - 1) / V, kScaleThreads,
                                            1LL << 30, &blocks));
    return warpkit::detail::launchKernel(scaleRowsKernel<T, V>, blocks, kScaleThreads, wkt::stream(), grad, out, scale,
                                         scaleStride, divisor, n, cols);
}

/// One block: *out = the sum of the rows' losses in T, rounded once; with count (mean), *count =
/// the rows whose target is not ignoreIndex and *out = sum / *count (0 / 0 = NaN for none, as
/// torch). Each thread sums a fixed stride of rows, then the block's fixed tree: the same bits on
/// every call.
template <typename T> __global__ void __launch_bounds__(kReduceThreads)
    reduceLossKernel(const float* loss, const long long* target, long long rows, long long ignoreIndex, T* out,
                     float* count) {
    float v[2] = {0.0f, 0.0f};
#pragma unroll 4
    for (long long r = threadIdx.x; r < rows; r += kReduceThreads) {
        v[0] += loss[r];
        v[1] += target[r] != ignoreIndex ? 1.0f : 0.0f;
    }
    warpkit::blockReduceSum<kReduceThreads>(v);
    if (threadIdx.x == 0) {
        *out = warpkit::detail::Arith<T>::from_acc(count ? v[0] / v[1] : v[0]);
        if (count) *count = v[1];
    }
}

} // namespace

/// loss[r] (float32) and, when grad is given, grad = d loss[r] / d logits (gradScale 1: the
/// backward scales each row by its incoming gradient).
wkt::Status crossEntropyForward(const at::Tensor& logits, const at::Tensor& target, int64_t ignoreIndex,
                                double smoothing, const at::Tensor& loss, const at::Tensor& grad) {
    WKT_REQUIRE(wkt::rowsOk(logits), "logits must be a CUDA row matrix with a unit element stride");
    WKT_REQUIRE(wkt::targetsOk(target, logits.size(0)),
                "target must be a contiguous int64 CUDA vector of a class a row");
    WKT_REQUIRE(wkt::rowValuesOk(loss, logits.size(0)), "loss must be a contiguous float32 vector of a value a row");
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

/// out = grad with row r scaled by scale[r] (float32, any stride, 0 for one value), divided by
/// max(divisor, 1) where one is given (float32, one value: 'mean''s count), in float; out may be
/// grad itself. grad and out: contiguous rows x cols of one dtype.
wkt::Status crossEntropyScale(const at::Tensor& grad, const at::Tensor& scale, const at::Tensor& divisor,
                              const at::Tensor& out) {
    WKT_REQUIRE(grad.is_cuda() && grad.dim() == 2 && grad.is_contiguous() && out.is_contiguous() &&
                    out.sizes() == grad.sizes() && out.scalar_type() == grad.scalar_type() &&
                    out.device() == grad.device(),
                "grad and out must be contiguous CUDA matrices of one shape and dtype");
    WKT_REQUIRE(scale.is_cuda() && scale.device() == grad.device() && scale.scalar_type() == at::kFloat &&
                    scale.dim() == 1 && scale.size(0) == grad.size(0),
                "scale must be a float32 CUDA vector of a value a row");
    if (grad.numel() == 0) return wkt::ok();
    const c10::cuda::CUDAGuard guard(grad.device());
    WKT_REQUIRE(!wkt::given(divisor) || (wkt::rowValuesOk(divisor, 1) && divisor.device() == grad.device()),
                "divisor must be one float32 value on grad's device");
    const long long n = grad.numel(), cols = grad.size(1), stride = grad.size(0) > 1 ? scale.stride(0) : 0;
    const float* s = static_cast<const float*>(scale.data_ptr());
    const float* d = wkt::fptr(divisor);
    return wkt::dispatch(grad.scalar_type(), [&](auto tag) {
        using A = decltype(tag);
        using T = typename wkt::Elem<A>::type;
        constexpr int V = warpkit::vectorElems<T>();
        const T* g = wkt::ptr<A>(grad);
        T* o = wkt::ptr<A>(out);
        const bool vec = cols >= V && ((size_t)g % 16) == 0 && ((size_t)o % 16) == 0;
        return wkt::cudaStatus(vec ? scaleRows<T, V>(g, o, s, stride, d, n, cols)
                                   : scaleRows<T, 1>(g, o, s, stride, d, n, cols),
                               "cross_entropy_scale");
    });
}

/// The 'sum' (count none) or 'mean' of the rows' float32 losses into out (a 0-d tensor of the
/// logits' dtype), in one launch of one block: deterministic. count (mean): one float32, the rows
/// whose target is not ignoreIndex, for the backward. loss and target: one value a row.
wkt::Status crossEntropyReduce(const at::Tensor& loss, const at::Tensor& target, int64_t ignoreIndex,
                               const at::Tensor& out, const at::Tensor& count) {
    WKT_REQUIRE(wkt::rowValuesOk(loss, loss.numel()) && loss.dim() == 1, "loss must be a contiguous float32 vector");
    WKT_REQUIRE(wkt::targetsOk(target, loss.numel()) && target.device() == loss.device(),
                "target must be a contiguous int64 CUDA vector of a class a row");
    WKT_REQUIRE(out.is_cuda() && out.numel() == 1 && out.device() == loss.device(), "out must be one CUDA value");
    WKT_REQUIRE(!wkt::given(count) || (wkt::rowValuesOk(count, 1) && count.device() == loss.device()),
                "count must be one float32 CUDA value");
    const c10::cuda::CUDAGuard guard(loss.device());
    const float* l = wkt::fptr(loss);
    const auto* t = static_cast<const long long*>(target.data_ptr());
    float* c = wkt::fptr(count);
    return wkt::dispatch(out.scalar_type(), [&](auto tag) {
        using A = decltype(tag);
        auto* o = static_cast<typename wkt::Elem<A>::type*>(out.data_ptr());
        return wkt::cudaStatus(warpkit::detail::launchKernel(reduceLossKernel<typename wkt::Elem<A>::type>, 1,
                                                             kReduceThreads, wkt::stream(), l, t,
                                                             (long long)loss.numel(), (long long)ignoreIndex, o, c),
                               "cross_entropy_reduce");
    });
}
