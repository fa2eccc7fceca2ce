// The generic block reduction needs a trivially copyable value type.
// expect: blockReduce: value type T must be trivially copyable
#include <warpkit/reduce.cuh>
struct NC { int a; __device__ NC(const NC& o) : a(o.a + 1) {} __device__ NC(int x) : a(x) {} };
struct Op { __device__ NC operator()(NC x, NC y) const { return NC(x.a + y.a); } };
__global__ void k(int* p) { p[0] = warpkit::blockReduce<64>(NC(p[threadIdx.x]), Op{}).a; }
