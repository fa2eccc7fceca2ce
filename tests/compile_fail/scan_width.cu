// A scan width past the warp must be refused at compile time.
// expect: warpInclusiveSum: template parameter Width must be between 1 and 32
#include <warpkit/scan.cuh>
__global__ void k(float* p) { p[threadIdx.x] = warpkit::warpInclusiveSum<33>(p[threadIdx.x]); }
