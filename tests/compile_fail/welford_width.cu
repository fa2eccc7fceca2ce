// expect: warpReduceWelford: template parameter Width must be between 1 and 32
#include <warpkit/welford.cuh>
__global__ void k(warpkit::WelfordState* p) { p[0] = warpkit::warpReduceWelford<0>(p[threadIdx.x]); }
