// Welford's K-value update reads floating-point inputs (float, __half, __nv_bfloat16).
// expect: welfordUpdate: element type T must be float, __half or __nv_bfloat16
#include <warpkit/welford.cuh>
__global__ void k(const int* x, warpkit::WelfordState* p) {
    const int v[4] = {x[0], x[1], x[2], x[3]};
    p[0] = warpkit::welfordUpdate(p[0], v);
}
