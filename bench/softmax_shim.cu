// bench/softmax_shim.cu: a C entry point to warpkit::rowSoftmax for bench/torch_softmax.py, which
// loads it with ctypes and passes torch tensors' pointers and torch's current stream, so that
// warpkit, torch.softmax and torch.compile are timed in one process on the same tensors.
// Built by `make bench` as build/bench/libwarpkit_softmax.so.
#include <warpkit/device/softmax.cuh>

/// dtype: 0 float, 1 __half, 2 __nv_bfloat16. Returns the cudaError_t as an int.
extern "C" int wk_row_softmax(int dtype, const void* x, void* y, long long rows, int cols, int kind, long long ldx,
                              long long ldy, void* stream) {
    const warpkit::SoftmaxKind k = (warpkit::SoftmaxKind)kind;
    cudaStream_t s = (cudaStream_t)stream;
    switch (dtype) {
    case 0: return (int)warpkit::rowSoftmax((const float*)x, (float*)y, rows, cols, k, ldx, ldy, s);
    case 1: return (int)warpkit::rowSoftmax((const __half*)x, (__half*)y, rows, cols, k, ldx, ldy, s);
    case 2: return (int)warpkit::rowSoftmax((const __nv_bfloat16*)x, (__nv_bfloat16*)y, rows, cols, k, ldx, ldy, s);
    default: return (int)cudaErrorInvalidValue;
    }
}
