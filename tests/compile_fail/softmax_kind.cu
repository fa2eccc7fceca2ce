// Kind must be one of the four SoftmaxKind values.
// expect: warpSoftmax: template parameter Kind must be a SoftmaxKind
#include <warpkit/softmax.cuh>
__global__ void k(float* p) {
    float v[1] = {p[threadIdx.x]};
    warpkit::warpSoftmax<32, 1, 7>(v);
    p[threadIdx.x] = v[0];
}
