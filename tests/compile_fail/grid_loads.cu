// gridAccumulate needs 1..16 loads in flight.
// expect: template parameter Loads (16-byte loads in flight per thread) must be between 1 and 16
#include <warpkit/grid.cuh>
__global__ void k(const float* p, unsigned long long n, float* out) {
    *out = warpkit::gridAccumulate<0>(p, n, 0.0f, warpkit::Sum{});
}
