// The named block reductions accept only the arithmetic types; a struct needs blockReduce with an op.
// expect: blockReduceMax: element type T must be int, unsigned
#include <warpkit/reduce.cuh>
struct P { float a, b; };
__global__ void k(P* p) { p[0] = warpkit::blockReduceMax<128>(p[threadIdx.x]); }
