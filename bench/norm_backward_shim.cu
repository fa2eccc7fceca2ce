// bench/norm_backward_shim.cu: C entry points to warpkit's rowLayerNormBackward and
// rowRmsNormBackward (contiguous rows) for bench/torch_norm_backward.py, which loads them with
// ctypes and passes torch tensors' pointers and torch's current stream, so that warpkit and torch
// are timed in one process on the same tensors. Built by `make bench` as
// build/bench/libwarpkit_norm_backward.so. dtype: 0 float, 1 __half, 2 __nv_bfloat16. Each returns
// the cudaError_t as an int; a null workspace asks for its size (the two-call rule).
#include <warpkit/device/norm_backward.cuh>

#define WK_NB_DISPATCH(dtype, CALL)        \
    switch (dtype) {                       \
    case 0: {                              \
        using T = float;                   \
        return (int)(CALL);                \
    }                                      \
    case 1: {                              \
        using T = __half;                  \
        return (int)(CALL);                \
    }                                      \
    case 2: {                              \
        using T = __nv_bfloat16;           \
        return (int)(CALL);                \
    }                                      \
    default:                               \
        return (int)cudaErrorInvalidValue; \
    }

extern "C" int wk_layer_norm_backward(int dtype, const void* dy, const void* x, const void* w, const float* mean,
                                      const float* rstd, void* dx, void* dw, void* db, long long rows, int cols,
                                      void* ws, size_t* bytes, void* stream) {
    WK_NB_DISPATCH(dtype, warpkit::rowLayerNormBackward((const T*)dy, (const T*)x, (const T*)w, mean, rstd, (T*)dx,
                                                        (T*)dw, (T*)db, rows, cols, ws, bytes, (cudaStream_t)stream))
}

extern "C" int wk_rms_norm_backward(int dtype, const void* dy, const void* x, const void* w, const float* rstd,
                                    void* dx, void* dw, long long rows, int cols, void* ws, size_t* bytes,
                                    void* stream) {
    WK_NB_DISPATCH(dtype, warpkit::rowRmsNormBackward((const T*)dy, (const T*)x, (const T*)w, rstd, (T*)dx, (T*)dw,
                                                      rows, cols, ws, bytes, (cudaStream_t)stream))
}
