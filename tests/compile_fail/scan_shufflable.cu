// The generic scan needs a trivially copyable value type.
// expect: warpExclusiveScan: value type T must be trivially copyable
#include <warpkit/scan.cuh>
struct NC { int x; __device__ NC() : x(0) {} __device__ NC(const NC& o) : x(o.x + 1) {} };
struct Op { __device__ NC operator()(NC a, NC) const { return a; } };
__global__ void k(int* p) { NC v; NC r = warpkit::warpExclusiveScan<32>(v, Op{}, v); p[0] = r.x; }
