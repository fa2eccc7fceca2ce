// segmentCount over a width that does not divide 32 must be refused.
// expect: segmentCount: template parameter Width must divide the warp
#include <warpkit/vote.cuh>
__global__ void k(int* p) { p[threadIdx.x] = warpkit::segmentCount<24>(threadIdx.x & 1); }
