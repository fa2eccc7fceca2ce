// bench/rowwise_shim.cu: C entry points to warpkit's row-wise device calls (rowLayerNorm,
// rowRmsNorm, rowCrossEntropy, rowSoftmaxBackward) for bench/torch_rowwise.py, which loads them
// with ctypes and passes torch tensors' pointers and torch's current stream, so that warpkit, torch
// eager and torch.compile are timed in one process on the same tensors.
// Built by `make bench` as build/bench/libwarpkit_rowwise.so.
// dtype: 0 float, 1 __half, 2 __nv_bfloat16. Each returns the cudaError_t as an int.
#include <warpkit/device/cross_entropy.cuh>
#include <warpkit/device/norm.cuh>
#include <warpkit/device/softmax_backward.cuh>

#define BENCH_DISPATCH_TYPE(dtype, CALL)                                                     \
    switch (dtype) {                                                                      \
    case 0: { using T = float; return (int)(CALL); }                                      \
    case 1: { using T = __half; return (int)(CALL); }                                     \
    case 2: { using T = __nv_bfloat16; return (int)(CALL); }                              \
    default: return (int)cudaErrorInvalidValue;                                           \
    }

extern "C" int wk_layer_norm(int dtype, const void* x, void* y, long long rows, int cols, const void* w, const void* b, float eps,
                             float* mean, float* rstd, long long ldx, long long ldy, void* stream) {
    BENCH_DISPATCH_TYPE(dtype, warpkit::rowLayerNorm((const T*)x, (T*)y, rows, cols, (const T*)w, (const T*)b, eps, mean, rstd, ldx, ldy,
                                                  (cudaStream_t)stream))
}

extern "C" int wk_rms_norm(int dtype, const void* x, void* y, long long rows, int cols, const void* w, float eps, float* rstd,
                           long long ldx, long long ldy, void* stream) {
    BENCH_DISPATCH_TYPE(dtype, warpkit::rowRmsNorm((const T*)x, (T*)y, rows, cols, (const T*)w, eps, rstd, ldx, ldy, (cudaStream_t)stream))
}

extern "C" int wk_cross_entropy(int dtype, const void* logits, const long long* targets, float* loss, void* grad, long long rows,
                                int cols, long long ignoreIndex, float smoothing, float gradScale, long long ldLogits, long long ldGrad,
                                void* stream) {
    BENCH_DISPATCH_TYPE(dtype, warpkit::rowCrossEntropy((const T*)logits, targets, loss, (T*)grad, rows, cols, ignoreIndex, smoothing,
                                                     gradScale, ldLogits, ldGrad, (cudaStream_t)stream))
}

extern "C" int wk_softmax_backward(int dtype, const void* y, const void* dy, void* dx, long long rows, int cols, int kind, long long ldy,
                                   long long lddy, long long lddx, void* stream) {
    BENCH_DISPATCH_TYPE(dtype, warpkit::rowSoftmaxBackward((const T*)y, (const T*)dy, (T*)dx, rows, cols, (warpkit::SoftmaxKind)kind, ldy,
                                                        lddy, lddx, (cudaStream_t)stream))
}
