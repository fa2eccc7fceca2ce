// The generic batched reduction moves values through shuffles: T must be trivially copyable.
// expect: warpReduceBatched: value type T must be trivially copyable
#include <warpkit/reduce.cuh>
struct NC { int a; __device__ NC(const NC& o) : a(o.a + 1) {} __device__ NC(int x) : a(x) {} };
struct Op { __device__ NC operator()(NC x, NC y) const { return NC(x.a + y.a); } };
__global__ void k(int* p) { NC v[2] = {NC(p[0]), NC(p[1])}; warpkit::warpReduceBatched(v, Op{}); p[0] = v[0].a; }
