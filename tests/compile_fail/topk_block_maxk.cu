// The block top-k scratch holds MaxK keys, a power of two.
// expect: blockTopKSelect: template parameter MaxK (largest k) must be a power of two, 1 .. 8192
#include <warpkit/topk.cuh>
__global__ void k(unsigned long long* p) {
    __shared__ warpkit::BlockTopKScratch<100> s;
    unsigned long long keys[1] = {p[threadIdx.x]};
    p[threadIdx.x] = warpkit::blockTopKSelect<128>(keys, 5, s).threshold;
}
