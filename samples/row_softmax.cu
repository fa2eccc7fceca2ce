// samples/row_softmax.cu: softmax over the last dimension of a matrix from the host, with the device
// layer's warpkit::rowSoftmax (device/softmax.cuh). This is the call to use: it picks a warp, block
// or cluster path by row length and row count, takes any alignment and row strides, and runs at the
// copy bandwidth. Write your own kernel (samples/block_softmax.cu) only to fuse something into it.
#include <warpkit/device/softmax.cuh>
#include <cuda_fp16.h>
#include <math.h>
#include <stdio.h>
#include <vector>

#define CHECK(call)                                                                       \
    do {                                                                                  \
        const cudaError_t e_ = (call);                                                    \
        if (e_ != cudaSuccess) {                                                          \
            printf("%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            return 1;                                                                     \
        }                                                                                 \
    } while (0)

// Worst relative error of y (rows x cols, row stride ld) against a double softmax of x.
template <typename T>
static double worstError(const std::vector<T>& x, const std::vector<T>& y, int rows, int cols, long long ld, bool log_) {
    double worst = 0;
    for (int r = 0; r < rows; ++r) {
        double m = -INFINITY, s = 0;
        for (int c = 0; c < cols; ++c) m = fmax(m, (double)(float)x[r * ld + c]);
        for (int c = 0; c < cols; ++c) s += exp((double)(float)x[r * ld + c] - m);
        for (int c = 0; c < cols; ++c) {
            const double xv = (double)(float)x[r * ld + c], got = (double)(float)y[r * ld + c];
            const double want = log_ ? xv - m - log(s) : exp(xv - m) / s;
            worst = fmax(worst, fabs(got - want) / (log_ ? fmax(1.0, fabs(want)) : fmax(want, 1e-3)));
        }
    }
    return worst;
}

int main() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("row_softmax: no CUDA device\n");
        return 0;
    }
    bool ok = true;
    // 1. float, contiguous: rowSoftmax(x, y, rows, cols, stream).
    {
        const int rows = 1000, cols = 50257; // a vocabulary: not a multiple of 4
        std::vector<float> hx((size_t)rows * cols), hy(hx.size());
        for (size_t i = 0; i < hx.size(); ++i) hx[i] = (float)((i * 2654435761u % 10007) / 500.0 - 10.0);
        float *dx, *dy;
        CHECK(cudaMalloc(&dx, hx.size() * sizeof(float)));
        CHECK(cudaMalloc(&dy, hx.size() * sizeof(float)));
        CHECK(cudaMemcpy(dx, hx.data(), hx.size() * sizeof(float), cudaMemcpyHostToDevice));
        cudaStream_t stream;
        CHECK(cudaStreamCreate(&stream));
        CHECK(warpkit::rowSoftmax(dx, dy, rows, cols, stream)); // asynchronous, like a kernel launch
        CHECK(cudaStreamSynchronize(stream));
        CHECK(cudaMemcpy(hy.data(), dy, hy.size() * sizeof(float), cudaMemcpyDeviceToHost));
        const double w = worstError(hx, hy, rows, cols, cols, false);
        printf("  float %d x %d: max rel err %.2e %s\n", rows, cols, w, w <= 1e-5 ? "ok" : "FAILED");
        ok = ok && w <= 1e-5;
        CHECK(cudaStreamDestroy(stream));
        CHECK(cudaFree(dx));
        CHECK(cudaFree(dy));
    }
    // 2. __half, log-softmax, in place, on a sub-matrix: rows start ld elements apart.
    {
        const int rows = 300, cols = 1023;
        const long long ld = 1030;
        std::vector<__half> hx((size_t)rows * ld), hy(hx.size());
        for (size_t i = 0; i < hx.size(); ++i) hx[i] = __float2half((float)((i * 40503u % 4001) / 200.0 - 10.0));
        __half* d;
        CHECK(cudaMalloc(&d, hx.size() * sizeof(__half)));
        CHECK(cudaMemcpy(d, hx.data(), hx.size() * sizeof(__half), cudaMemcpyHostToDevice));
        CHECK(warpkit::rowSoftmax(d, d, rows, cols, warpkit::SoftmaxLog, ld, ld)); // default stream
        CHECK(cudaMemcpy(hy.data(), d, hy.size() * sizeof(__half), cudaMemcpyDeviceToHost));
        const double w = worstError(hx, hy, rows, cols, ld, true);
        printf("  half log-softmax in place %d x %d (ld %lld): max err %.2e %s\n", rows, cols, ld, w, w <= 1e-2 ? "ok" : "FAILED");
        ok = ok && w <= 1e-2;
        CHECK(cudaFree(d));
    }
    // 3. Bad arguments come back as cudaErrorInvalidValue, and nothing is launched.
    const cudaError_t bad = warpkit::rowSoftmax((const float*)nullptr, (float*)nullptr, 4, 8);
    printf("  null pointers: %s\n", cudaGetErrorString(bad));
    ok = ok && bad == cudaErrorInvalidValue;
    printf("row_softmax sample: %s\n", ok ? "all ok" : "FAILED");
    return ok ? 0 : 1;
}
