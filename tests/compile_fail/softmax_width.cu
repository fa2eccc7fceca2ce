// warpSoftmax needs a segment width that divides the warp.
// expect: warpSoftmax: template parameter Width must divide the warp
#include <warpkit/softmax.cuh>
__global__ void k(float* p) {
    float v[1] = {p[threadIdx.x]};
    warpkit::warpSoftmax<3>(v);
    p[threadIdx.x] = v[0];
}
