// PTX shape of the block reductions and scans (sm_90): barrier counts, shuffle counts, the
// one-warp case with no barrier and no shared memory, redux.sync for 32-bit integer sums.
// @arch sm_90
// @nolocal
// Full block of 8 warps: entry barrier + one barrier; 5 + 3 butterfly shuffles (log2 of 8 warps).
// @expect k_sum256 == 2 bar.sync
// @expect k_sum256 == 8 shfl.sync.bfly
// One warp known at compile time: no barrier, no shared memory.
// @expect k_sum32 == 0 bar.sync
// @expect k_sum32 == 0 st.shared
// 32-bit integer sum on sm_90: one redux.sync per stage, no shuffles.
// @expect k_isum1024 == 2 redux.sync
// @expect k_isum1024 == 0 shfl.sync
// Partial last warp: the broadcast costs a third barrier.
// @expect k_sum100 == 3 bar.sync
// Thread-0 variant: two barriers, no broadcast.
// @expect k_sum0_256 == 2 bar.sync
// Block scan of 8 warps: 2 barriers, 5 + 3 shuffle-up steps, + 1 shuffle-up for the exclusive form.
// @expect k_scan256 == 2 bar.sync
// @expect k_scan256 == 8 shfl.sync.up
// @expect k_exscan256 == 9 shfl.sync.up
// One-warp scan: no barrier.
// @expect k_scan32 == 0 bar.sync
#include <warpkit/scan.cuh>

extern "C" __global__ void k_sum256(const float* in, float* out) {
    out[threadIdx.x] = warpkit::blockReduceSum<256>(in[threadIdx.x]);
}
extern "C" __global__ void k_sum32(const float* in, float* out) {
    out[threadIdx.x] = warpkit::blockReduceSum<32>(in[threadIdx.x]);
}
extern "C" __global__ void k_isum1024(const int* in, int* out) {
    out[threadIdx.x] = warpkit::blockReduceSum<1024>(in[threadIdx.x]);
}
extern "C" __global__ void k_sum100(const float* in, float* out) {
    out[threadIdx.x] = warpkit::blockReduceSum<100>(in[threadIdx.x]);
}
extern "C" __global__ void k_sum0_256(const float* in, float* out) {
    const float r = warpkit::blockReduceSumToThread0<256>(in[threadIdx.x]);
    if (threadIdx.x == 0) out[0] = r;
}
extern "C" __global__ void k_scan256(const float* in, float* out) {
    out[threadIdx.x] = warpkit::blockInclusiveSum<256>(in[threadIdx.x]);
}
extern "C" __global__ void k_exscan256(const float* in, float* out) {
    out[threadIdx.x] = warpkit::blockExclusiveSum<256>(in[threadIdx.x]);
}
extern "C" __global__ void k_scan32(const float* in, float* out) {
    out[threadIdx.x] = warpkit::blockInclusiveSum<32>(in[threadIdx.x]);
}
