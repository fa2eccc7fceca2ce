// expect: blockReduceWelford: template parameter BlockThreads must be the block size (1..1024)
#include <warpkit/welford.cuh>
__global__ void k(warpkit::WelfordState* p) { p[0] = warpkit::blockReduceWelford<2048>(p[threadIdx.x]); }
