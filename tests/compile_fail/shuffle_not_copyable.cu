// The public shuffles move values through 32-bit shuffles: T must be trivially copyable.
// expect: warpShuffleUp: value type T must be trivially copyable
#include <warpkit/vote.cuh>
struct NC {
    int a;
    __device__ NC(const NC& o) : a(o.a + 1) {}
    __device__ NC(int x) : a(x) {}
};
__global__ void k(int* p) {
    NC v(p[0]);
    p[0] = warpkit::warpShuffleUp(v, 1).a;
}
