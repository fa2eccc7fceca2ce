// expect: warpReduceSumActive: element type T must be int, unsigned
#include <warpkit/reduce.cuh>
__global__ void k(char* p) { p[0] = warpkit::warpReduceSumActive(p[1]); }
