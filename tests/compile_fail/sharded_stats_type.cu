// rowSoftmaxStats takes float, __half or __nv_bfloat16 logits only.
// expect: rowSoftmaxStats: element type T must be float, __half or __nv_bfloat16
#include <warpkit/device/sharded.cuh>
cudaError_t f(const double* x, const long long* t, warpkit::RowShardStats* s) {
    return warpkit::rowSoftmaxStats(x, t, 0, s, 4, 100, 100);
}
