// tests/sass/device_reduce.cu: deviceReduce's kernel issues a step's 16-byte loads before it folds
// any of them (docs/tuning.md, D1), in sm_90 SASS: from the first 16-byte load of the fold, at
// least N 16-byte loads come before the first instruction that reads that load's registers. ptxas
// fitted the float sum and the int reductions into 32 registers by folding each load before the
// next was issued (one load in flight a thread), which cost 2-3% at 2^28 elements.
// Checked by tests/check.sh (make test): // @loadsfirst PATTERN N, for every kernel of the cubin
// whose mangled name matches the extended regular expression PATTERN (at least one must).
//
// @loadsfirst deviceReduceKernelIfNS0_9ReadPlainEffNS_3SumE 4
// @loadsfirst deviceReduceKernelIfNS0_9ReadPlainEffNS_3MaxE 4
// @loadsfirst deviceReduceKernelIiNS0_9ReadPlainEiiNS_3SumE 4
// @loadsfirst deviceReduceKernelIiNS0_9ReadPlainEiiNS_3MaxE 4
// @loadsfirst deviceReduceKernelIdNS0_9ReadPlainEddNS_3SumE 4
// @loadsfirst deviceReduceKernelI13__nv_bfloat16NS0_9ReadPlainEf 4
// @loadsfirst deviceReduceKernelIfNS0_13ReadTransform 4
#include <warpkit/device/reduce.cuh>

namespace {
struct Square {
    __device__ float operator()(float x) const { return x * x; }
};
} // namespace

// Host functions whose calls instantiate the kernels checked above.
cudaError_t sassReduceFloat(const float* x, float* out, long long n, void* ws, size_t* bytes) {
    warpkit::deviceReduceSum(x, out, n, ws, bytes);
    warpkit::deviceTransformReduce(x, out, n, Square{}, warpkit::Sum{}, 0.0f, ws, bytes);
    return warpkit::deviceReduceMax(x, out, n, ws, bytes);
}
cudaError_t sassReduceInt(const int* x, int* out, long long n, void* ws, size_t* bytes) {
    warpkit::deviceReduceSum(x, out, n, ws, bytes);
    return warpkit::deviceReduceMax(x, out, n, ws, bytes);
}
cudaError_t sassReduceOther(const double* d, double* outD, const __nv_bfloat16* h, __nv_bfloat16* outH, long long n,
                            void* ws, size_t* bytes) {
    warpkit::deviceReduceSum(d, outD, n, ws, bytes);
    return warpkit::deviceReduceSum(h, outH, n, ws, bytes);
}
