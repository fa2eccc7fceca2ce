// expect: warpReduceMax: element type T must be int, unsigned, long long
#include <warpkit/reduce.cuh>
struct Pair { float a, b; };
__global__ void k(Pair* p) { p[0] = warpkit::warpReduceMax(p[1]); }
