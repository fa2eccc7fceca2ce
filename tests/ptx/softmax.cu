// PTX shape of the softmax primitives (sm_90), no local memory anywhere:
//  * warp: a max then a sum reduction, log2(Width) butterfly shuffles each: 2 log2(Width);
//  * ex2: exactly one per element (none in the reductions, none for the scale);
//  * block: two blockReduce calls (max, sum), two barriers each.
// @arch sm_90
// @nolocal
// @expect wk_warp_softmax_f32 == 10 shfl.sync.bfly
// @expect wk_warp_softmax_f32 == 4 ex2.approx
// @expect wk_seg8_softmax_f32 == 6 shfl.sync.bfly
// @expect wk_seg8_softmax_f32 == 1 ex2.approx
// @expect wk_warp_logsoftmax_f32 == 4 ex2.approx
// @expect wk_block_softmax_h16 == 8 ex2.approx
// @expect wk_block_softmax_h16 == 4 bar.sync
#include <warpkit/softmax.cuh>

extern "C" __global__ void wk_warp_softmax_f32(float4* p) {
    float4 a = p[threadIdx.x];
    float v[4] = {a.x, a.y, a.z, a.w};
    warpkit::warpSoftmax<32, 4>(v);
    p[threadIdx.x] = make_float4(v[0], v[1], v[2], v[3]);
}
extern "C" __global__ void wk_seg8_softmax_f32(float* p) {
    float v[1] = {p[threadIdx.x]};
    warpkit::warpSoftmax<8, 1>(v);
    p[threadIdx.x] = v[0];
}
extern "C" __global__ void wk_warp_logsoftmax_f32(float4* p) {
    float4 a = p[threadIdx.x];
    float v[4] = {a.x, a.y, a.z, a.w};
    warpkit::warpLogSoftmax<32, 4>(v);
    p[threadIdx.x] = make_float4(v[0], v[1], v[2], v[3]);
}
extern "C" __global__ void wk_block_softmax_h16(uint4* p) {
    uint4 u = p[threadIdx.x];
    __half v[8];
    __builtin_memcpy(v, &u, 16);
    warpkit::blockSoftmax<256, 8>(v);
    __builtin_memcpy(&u, v, 16);
    p[threadIdx.x] = u;
}
