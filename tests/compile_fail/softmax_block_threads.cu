// BlockThreads is a block size (1..1024) or 0.
// expect: blockSoftmax: template parameter BlockThreads must be the block size
#include <warpkit/softmax.cuh>
__global__ void k(float* p) {
    float v[1] = {p[threadIdx.x]};
    warpkit::blockSoftmax<2048>(v);
    p[threadIdx.x] = v[0];
}
