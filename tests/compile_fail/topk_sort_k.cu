// The warp sort holds K keys a lane, K a power of two.
// expect: warpBitonicSort: template parameter K (keys a lane) must be a power of two, 1 .. 32
#include <warpkit/topk.cuh>
__global__ void k(unsigned* p) {
    unsigned v[3] = {p[0], p[1], p[2]};
    warpkit::warpBitonicSort<3>(v);
    p[threadIdx.x] = v[0];
}
