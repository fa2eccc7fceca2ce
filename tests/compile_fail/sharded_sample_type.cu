// rowSampleMerge takes the candidates of float, __half or __nv_bfloat16 logits only.
// expect: rowSampleMerge: value type T must be float, __half or __nv_bfloat16
#include <warpkit/device/sharded.cuh>
cudaError_t f(const double* v, const long long* i, long long* out) {
    return warpkit::rowSampleMerge(v, i, out, 2, 4, 8, 1.f, 1.f, 0.f, 1ull, 0ull);
}
