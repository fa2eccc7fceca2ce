// A named scan on a type the built-in operators do not accept must be refused.
// expect: warpExclusiveMax: element type T must be int, unsigned
#include <warpkit/scan.cuh>
struct P { float x; };
__global__ void k(P* p) { p[threadIdx.x] = warpkit::warpExclusiveMax<32>(p[threadIdx.x]); }
