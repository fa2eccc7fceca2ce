// gridAccumulate reads only the supported element types.
// expect: threadAccumulate/gridAccumulate: element type T must be int
#include <warpkit/grid.cuh>
struct Pixel { unsigned char r, g, b, a; };
__global__ void k(const Pixel* p, unsigned long long n, int* out) {
    *out = warpkit::gridAccumulate<4>(p, n, 0, warpkit::Sum{});
}
