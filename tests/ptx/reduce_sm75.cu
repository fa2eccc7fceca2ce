// On sm_75 (no redux.sync) the 32-bit int warp sum falls back to 5 shuffles, and Max keeps NaN
// through an explicit test instead of max.NaN.
// @arch sm_75
// @nolocal
// @expect wk75_sum_i32_w32 == 5 shfl\.sync
// @expect wk75_sum_i32_w32 == 0 redux
// @expect wk75_max_f32_w32 == 0 max\.NaN
#include <warpkit/reduce.cuh>
extern "C" __global__ void wk75_sum_i32_w32(int* out, const int* in) {
    out[threadIdx.x] = warpkit::warpReduceSum(in[threadIdx.x]);
}
extern "C" __global__ void wk75_max_f32_w32(float* out, const float* in) {
    out[threadIdx.x] = warpkit::warpReduceMax(in[threadIdx.x]);
}
