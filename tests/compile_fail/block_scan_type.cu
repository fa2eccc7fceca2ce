// Named block scans accept only the arithmetic types.
// expect: blockExclusiveSum: element type T must be int, unsigned
#include <warpkit/scan.cuh>
struct P { int a; };
__global__ void k(P* p) { p[threadIdx.x] = warpkit::blockExclusiveSum<64>(p[threadIdx.x]); }
