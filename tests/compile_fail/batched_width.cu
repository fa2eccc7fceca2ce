// Batched reductions take the segment widths of the other warp reductions.
// expect: warpReduceBatchedSum: template parameter Width must be between 1 and 32
#include <warpkit/reduce.cuh>
__global__ void k(float* p) { float v[4] = {p[0], p[1], p[2], p[3]}; warpkit::warpReduceBatchedSum<33>(v); p[0] = v[0]; }
