// Top-k selection orders float, __half and __nv_bfloat16 values.
// expect: warpTopK: value type T must be float, __half or __nv_bfloat16
#include <warpkit/topk.cuh>
__global__ void k(int* p, unsigned* o) {
    int v[1] = {p[threadIdx.x]}, ov[1];
    unsigned oi[1];
    warpkit::warpTopK<1>(v, 32, true, ov, oi);
    o[threadIdx.x] = oi[0];
}
