// rowTopK writes int or long long indices.
// expect: rowTopK: index type Idx must be int or long long
#include <warpkit/device/topk.cuh>
cudaError_t f(const float* x, float* v, unsigned* i) { return warpkit::rowTopK(x, v, i, 1, 10, 2, true, 10); }
