// expect: warpReduce: value type T must be trivially copyable
#include <warpkit/reduce.cuh>
struct Counted {
    int v;
    __device__ Counted(const Counted& o) : v(o.v + 1) {}
    __device__ Counted(int x) : v(x) {}
};
struct Add { __device__ Counted operator()(Counted a, Counted b) const { return Counted(a.v + b.v); } };
__global__ void k(int* p) { p[0] = warpkit::warpReduce(Counted(p[1]), Add{}).v; }
