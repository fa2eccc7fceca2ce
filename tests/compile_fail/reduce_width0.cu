// expect: warpReduceSum: template parameter Width must be between 1 and 32
#include <warpkit/reduce.cuh>
__global__ void k(float* p) { p[0] = warpkit::warpReduceSum<0>(p[1]); }
