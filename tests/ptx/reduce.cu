// PTX shape of the warp reductions on sm_90 (checked by tests/check.sh, no GPU needed):
// a float Sum/Max over a power-of-two width W uses exactly log2(W) shuffles; a non-power-of-two
// width uses ceil(log2(W)); a 32-bit int Sum/Max/Min over the full warp is one redux.sync;
// Max uses the NaN-propagating max.NaN.f32; nothing goes to local memory.
// @arch sm_90
// @nolocal
// @expect wk_sum_f32_w2 == 1 shfl\.sync
// @expect wk_sum_f32_w4 == 2 shfl\.sync
// @expect wk_sum_f32_w8 == 3 shfl\.sync
// @expect wk_sum_f32_w16 == 4 shfl\.sync
// @expect wk_sum_f32_w32 == 5 shfl\.sync
// @expect wk_sum_f32_w32 == 5 add\.f32
// @expect wk_sum_f32_w3 == 2 shfl\.sync
// @expect wk_sum_f32_w7 == 3 shfl\.sync
// @expect wk_sum_f32_w31 == 5 shfl\.sync
// @expect wk_max_f32_w32 == 5 shfl\.sync
// @expect wk_max_f32_w32 == 5 max\.NaN\.f32
// @expect wk_sum_i32_w32 == 1 redux\.sync\.add
// @expect wk_sum_i32_w32 == 0 shfl\.sync
// @expect wk_max_i32_w32 == 1 redux\.sync\.max\.s32
// @expect wk_min_u32_w32 == 1 redux\.sync\.min\.u32
// @expect wk_sum_i32_valid_w32 == 1 redux\.sync\.add
// @expect wk_sum_i32_active == 1 redux\.sync\.add
// @expect wk_sum_f16_w32 == 5 shfl\.sync
// @expect wk_sum_f64_w32 == 10 shfl\.sync
#include <warpkit/reduce.cuh>

#define WK_KERNEL(NAME, T, EXPR)                                                          \
    extern "C" __global__ void NAME(T* out, const T* in) {                                \
        T v = in[threadIdx.x];                                                            \
        out[threadIdx.x] = EXPR;                                                          \
    }
WK_KERNEL(wk_sum_f32_w2, float, warpkit::warpReduceSum<2>(v))
WK_KERNEL(wk_sum_f32_w4, float, warpkit::warpReduceSum<4>(v))
WK_KERNEL(wk_sum_f32_w8, float, warpkit::warpReduceSum<8>(v))
WK_KERNEL(wk_sum_f32_w16, float, warpkit::warpReduceSum<16>(v))
WK_KERNEL(wk_sum_f32_w32, float, warpkit::warpReduceSum(v))
WK_KERNEL(wk_sum_f32_w3, float, warpkit::warpReduceSum<3>(v))
WK_KERNEL(wk_sum_f32_w7, float, warpkit::warpReduceSum<7>(v))
WK_KERNEL(wk_sum_f32_w31, float, warpkit::warpReduceSum<31>(v))
WK_KERNEL(wk_max_f32_w32, float, warpkit::warpReduceMax(v))
WK_KERNEL(wk_sum_i32_w32, int, warpkit::warpReduceSum(v))
WK_KERNEL(wk_max_i32_w32, int, warpkit::warpReduceMax(v))
WK_KERNEL(wk_min_u32_w32, unsigned, warpkit::warpReduceMin(v))
WK_KERNEL(wk_sum_i32_valid_w32, int, warpkit::warpReduceSum(v, (int)in[32]))
WK_KERNEL(wk_sum_i32_active, int, warpkit::warpReduceSumActive(v))
WK_KERNEL(wk_sum_f16_w32, __half, warpkit::warpReduceSum(v))
WK_KERNEL(wk_sum_f64_w32, double, warpkit::warpReduceSum(v))
