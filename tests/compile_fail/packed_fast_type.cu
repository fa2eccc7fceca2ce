// The packed fast reductions take __half2 and __nv_bfloat162 only.
// expect: warpReduceSumFast: element type T must be __half2 or __nv_bfloat162
#include <warpkit/reduce.cuh>
__global__ void k(float* p) { p[0] = warpkit::warpReduceSumFast<32>(p[0]); }
