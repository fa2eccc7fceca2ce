// The norm backward calls take float, __half or __nv_bfloat16 rows only.
// expect: rowRmsNormBackward: element type T must be float, __half or __nv_bfloat16
#include <warpkit/device/norm_backward.cuh>
int main() {
    const int* p = nullptr;
    size_t bytes = 0;
    return (int)warpkit::rowRmsNormBackward(p, p, nullptr, nullptr, nullptr, nullptr, 4, 8, nullptr, &bytes);
}
