// The softmax primitives take float, __half or __nv_bfloat16 values only.
// expect: blockSoftmax: element type T must be float, __half or __nv_bfloat16
#include <warpkit/softmax.cuh>
__global__ void k(int* p) {
    int v[2] = {p[threadIdx.x], p[threadIdx.x + 1]};
    warpkit::blockSoftmax<128, 2>(v);
    p[threadIdx.x] = v[0];
}
