// The named batched reductions accept only the arithmetic types; a struct needs warpReduceBatched with an op.
// expect: warpReduceBatchedMax: element type T must be int, unsigned
#include <warpkit/reduce.cuh>
struct P { float a, b; };
__global__ void k(P* p) { P v[2] = {p[0], p[1]}; warpkit::warpReduceBatchedMax(v); p[0] = v[0]; }
