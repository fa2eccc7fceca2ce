// A shuffle segment lies within one warp: Width must be 1..32.
// expect: warpShuffleRotate: template parameter Width must be between 1 and 32
#include <warpkit/vote.cuh>
__global__ void k(float* p) { p[0] = warpkit::warpShuffleRotate<33>(p[0], 1); }
