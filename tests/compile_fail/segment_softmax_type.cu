// segmentSoftmax takes float, __half or __nv_bfloat16 values only.
// expect: segmentSoftmax: element type T must be float, __half or __nv_bfloat16
#include <warpkit/device/segment.cuh>
cudaError_t f(const int* x, int* y, const int* offsets, void* w, size_t* b) {
    return warpkit::segmentSoftmax(x, y, 100, offsets, 10, 4, warpkit::SoftmaxPlain, w, b);
}
