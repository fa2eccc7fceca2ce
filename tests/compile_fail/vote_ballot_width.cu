// A segment ballot needs a width that divides the warp (its bits start at bit 0).
// expect: segmentBallot: template parameter Width must divide the warp
#include <warpkit/vote.cuh>
__global__ void k(unsigned* p) { p[threadIdx.x] = warpkit::segmentBallot<12>(threadIdx.x & 1); }
