// The N-value block reductions check BlockThreads as the single-value ones do.
// expect: blockReduceMin: template parameter BlockThreads must be the block size (1..1024)
#include <warpkit/reduce.cuh>
__global__ void k(float* p) { float v[3] = {p[0], p[1], p[2]}; warpkit::blockReduceMin<1025>(v); p[threadIdx.x] = v[0]; }
