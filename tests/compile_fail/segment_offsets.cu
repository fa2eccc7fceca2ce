// Segment offsets must be int or long long (CSR, or segmentBounds of two such arrays).
// expect: segmentReduceSum: offsets must be a CSR array of int or long long, or segmentBounds(begins, ends) of them
#include <warpkit/device/segment.cuh>
cudaError_t f(const float* in, float* out, const unsigned* offsets, void* w, size_t* b) {
    return warpkit::segmentReduceSum(in, out, 100, offsets, 10, w, b);
}
