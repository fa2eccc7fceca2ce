// The N-value block reductions are the named ones: arithmetic element types only.
// expect: blockReduceSum: element type T must be int, unsigned
#include <warpkit/reduce.cuh>
struct P { float a; };
__global__ void k(P* p) { P v[2] = {p[0], p[1]}; warpkit::blockReduceSum<128>(v); p[threadIdx.x] = v[0]; }
