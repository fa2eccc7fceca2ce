// PTX shape of include/warpkit/grid.cuh (sm_90): 16-byte read-only loads that allocate no L1 line,
// Loads of them per step, 64-bit grid-stride indices, nothing in local memory.
// @arch sm_90
// @nolocal
// The float body reads only 16-byte vectors: 4 per full step plus 4 guarded in the last step.
// @expect grid_sum_f32_l4 >= 8 ld\.global\.nc\.L1::no_allocate\.v4
// Scalars only for the head/tail element (and the fewer-threads-than-head+tail loop).
// @expect grid_sum_f32_l4 <= 3 ld\.global\.f32
// @expect grid_max_f16_l8 >= 16 ld\.global\.nc\.L1::no_allocate\.v4
// @expect grid_sum_f64_l1 >= 1 ld\.global\.nc\.L1::no_allocate\.v4
// @expect grid_stride_copy >= 1 setp\.[a-z]+\.u64
// @expect grid_stride_copy == 0 setp\.[a-z]+\.[su]32
#include <warpkit/grid.cuh>

extern "C" __global__ void grid_sum_f32_l4(const float* p, unsigned long long n, float* out) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = warpkit::gridAccumulate<4>(p, n, 0.0f, warpkit::Sum{});
}
extern "C" __global__ void grid_max_f16_l8(const __half* p, unsigned long long n, float* out) {
    out[blockIdx.x * blockDim.x + threadIdx.x] =
        warpkit::gridAccumulate<8>(p, n, -__builtin_huge_valf(), warpkit::Max{});
}
extern "C" __global__ void grid_sum_f64_l1(const double* p, unsigned long long n, double* out) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = warpkit::gridAccumulate<1>(p, n, 0.0, warpkit::Sum{});
}
extern "C" __global__ void grid_stride_copy(const float* x, float* y, unsigned long long n) {
    WARPKIT_GRID_STRIDE_LOOP(i, n) { y[i] = 2.0f * x[i]; }
}
