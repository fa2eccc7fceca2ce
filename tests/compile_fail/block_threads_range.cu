// blockReduce with BlockThreads outside 0..1024 must be rejected at compile time.
// expect: blockReduceSum: template parameter BlockThreads must be the block size (1..1024)
#include <warpkit/reduce.cuh>
__global__ void k(float* p) { p[0] = warpkit::blockReduceSum<2048>(p[threadIdx.x]); }
