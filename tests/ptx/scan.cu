// PTX shape of warp scans (include/warpkit/scan.cuh): an inclusive float sum over a power-of-two
// Width uses exactly log2(Width) shuffles (shfl.sync.up) and nothing else that shuffles; a
// non-power-of-two Width uses ceil(log2(Width)); no local memory anywhere.
// @arch sm_90
// @nolocal
// @expect scan_sum_w32 == 5 shfl\.sync
// @expect scan_sum_w32 == 5 shfl\.sync\.up
// @expect scan_sum_w16 == 4 shfl\.sync
// @expect scan_sum_w8 == 3 shfl\.sync
// @expect scan_sum_w4 == 2 shfl\.sync
// @expect scan_sum_w2 == 1 shfl\.sync
// @expect scan_sum_w1 == 0 shfl\.sync
// @expect scan_sum_w24 == 5 shfl\.sync
// @expect scan_sum_w3 == 2 shfl\.sync
// @expect scan_sum_total_w32 == 6 shfl\.sync
// @expect scan_exsum_w32 == 6 shfl\.sync
// @expect scan_half_w32 == 5 shfl\.sync
#include <warpkit/scan.cuh>

#define K(NAME, W) \
    extern "C" __global__ void NAME(float* p) { p[threadIdx.x] = warpkit::warpInclusiveSum<W>(p[threadIdx.x]); }
K(scan_sum_w32, 32)
K(scan_sum_w16, 16)
K(scan_sum_w8, 8)
K(scan_sum_w4, 4)
K(scan_sum_w2, 2)
K(scan_sum_w1, 1)
K(scan_sum_w24, 24)
K(scan_sum_w3, 3)
#undef K

extern "C" __global__ void scan_sum_total_w32(float* p, float* t) {
    float total;
    p[threadIdx.x] = warpkit::warpInclusiveSum<32>(p[threadIdx.x], total);
    t[threadIdx.x] = total;
}
extern "C" __global__ void scan_exsum_w32(float* p) {
    p[threadIdx.x] = warpkit::warpExclusiveSum<32>(p[threadIdx.x]);
}
extern "C" __global__ void scan_half_w32(__half* p) {
    p[threadIdx.x] = warpkit::warpInclusiveSum<32>(p[threadIdx.x]);
}
