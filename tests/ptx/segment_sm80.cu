// The segment softmax's kernels (the group, heads, chunk, write, no-room, block and slice tiers) on sm_80,
// every kind and element type: no spills and no stack frame (make test's resource check judges
// only sm_90; the block kernel's log kinds once spilled here at their 128 registers).
// @arch sm_80
// @nospill
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <warpkit/device/segment.cuh>

template <typename T> static void softmaxAll(const T* x, T* y, const long long* off, void* ws, size_t* bytes) {
    for (int k = 0; k < 4; ++k) (void)warpkit::segmentSoftmax(x, y, 10, off, 5, 1, (warpkit::SoftmaxKind)k, ws, bytes);
}

void segmentSm80(const float* xf, float* yf, const __half* xh, __half* yh, const __nv_bfloat16* xb, __nv_bfloat16* yb,
                 const long long* off, void* ws, size_t* bytes) {
    softmaxAll(xf, yf, off, ws, bytes);
    softmaxAll(xh, yh, off, ws, bytes);
    softmaxAll(xb, yb, off, ws, bytes);
}
