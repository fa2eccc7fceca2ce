// Aggregated atomics hand out integer counters only.
// expect: atomicAggInc: counter type T must be int, unsigned or unsigned long long
#include <warpkit/vote.cuh>
__global__ void k(float* p) { p[threadIdx.x] = warpkit::atomicAggInc(p); }
