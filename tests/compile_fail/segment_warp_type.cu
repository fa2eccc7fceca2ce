// The named segmented warp reductions take the arithmetic element types only.
// expect: warpSegmentedReduceSum: element type T must be int, unsigned, long long
#include <warpkit/warp/segmented.cuh>
struct P {
    int a, b;
};
__global__ void k(P* p) { p[threadIdx.x] = warpkit::warpSegmentedReduceSum(p[threadIdx.x], threadIdx.x % 3 == 0); }
