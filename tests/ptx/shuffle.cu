// PTX shape of the warp toolkit on sm_90 (checked by tests/check.sh, no GPU needed): a public
// shuffle of a 12-byte struct is three shuffles, of a __half2 one; the precise __half2 sum moves a
// float2 (two shuffles a step); the register transpose is 80 shuffles with no branch; nothing goes
// to local memory (the packed fast forms included). The packed forms' own instructions (add.f16x2,
// max.NaN.bf16x2) come from cuda_fp16's inline asm, whose bare closing brace ends check.sh's view of
// a kernel body, so they are not counted here.
// @arch sm_90
// @nolocal
// @expect wk_up_s12 == 3 shfl\.sync\.up
// @expect wk_rotate_h2 == 1 shfl\.sync\.idx
// @expect wk_sum_h2 == 10 shfl\.sync\.bfly
// @expect wk_transpose == 80 shfl\.sync
// @expect wk_transpose == 0 bra
#include <warpkit/reduce.cuh>
#include <warpkit/vote.cuh>
#include <warpkit/warp/exchange.cuh>

struct S12 {
    int a, b, c;
};

extern "C" __global__ void wk_up_s12(S12* p) { p[threadIdx.x] = warpkit::warpShuffleUp<32>(p[threadIdx.x], 1); }
extern "C" __global__ void wk_rotate_h2(__half2* p) {
    p[threadIdx.x] = warpkit::warpShuffleRotate<16>(p[threadIdx.x], 3);
}
extern "C" __global__ void wk_fast_sum_h2(__half2* p) {
    p[threadIdx.x] = warpkit::warpReduceSumFast<32>(p[threadIdx.x]);
}
extern "C" __global__ void wk_fast_max_bf2(__nv_bfloat162* p) {
    p[threadIdx.x] = warpkit::warpReduceMaxFast<16>(p[threadIdx.x]);
}
extern "C" __global__ void wk_max_bf2(__nv_bfloat162* p) {
    p[threadIdx.x] = warpkit::warpReduceMax<16>(p[threadIdx.x]);
}
extern "C" __global__ void wk_sum_h2(__half2* p) { p[threadIdx.x] = warpkit::warpReduceSum<32>(p[threadIdx.x]); }
extern "C" __global__ void wk_transpose(float* p) {
    float v[32];
#pragma unroll
    for (int j = 0; j < 32; ++j) v[j] = p[threadIdx.x * 32 + j];
    warpkit::warpTranspose(v);
#pragma unroll
    for (int j = 0; j < 32; ++j) p[threadIdx.x * 32 + j] = v[j];
}
