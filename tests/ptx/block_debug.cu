// Under WARPKIT_DEBUG the block functions check that every thread arrived (bar.red.popc counts
// them at the entry barrier, no extra barrier) and that BlockThreads matches blockDim; a failed
// check traps with a message.
// @arch sm_90
// @expect k_dbg_sum256 >= 1 trap
// @expect k_dbg_sum256 == 1 bar.red.popc
// @expect k_dbg_sum256 == 1 bar.sync
// @expect k_dbg_scan100 >= 1 trap
#include <stdio.h>
#define WARPKIT_DEBUG 1
#include <warpkit/scan.cuh>

extern "C" __global__ void k_dbg_sum256(const float* in, float* out) {
    out[threadIdx.x] = warpkit::blockReduceSum<256>(in[threadIdx.x]);
}
extern "C" __global__ void k_dbg_scan100(const float* in, float* out) {
    out[threadIdx.x] = warpkit::blockInclusiveSum<100>(in[threadIdx.x]);
}
