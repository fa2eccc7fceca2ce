// rowTopKShard writes int64 global columns (every rank's block has one layout for the all-gather).
// expect: rowTopKShard: index type Idx must be long long (int64)
#include <warpkit/device/sharded.cuh>
cudaError_t f(const float* x, float* v, int* i, size_t* bytes) {
    return warpkit::rowTopKShard(x, v, i, 1, 10, 2, true, 0, 10, nullptr, bytes);
}
