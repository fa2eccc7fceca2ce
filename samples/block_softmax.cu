// samples/block_softmax.cu: a one-block-per-row softmax kernel, written with warpkit's public
// primitives: thread/vector.cuh moves each row with 16-byte loads and stores whatever its
// alignment, block/softmax.cuh does the row's max, sum and outputs in registers.
// For softmax of a whole matrix, call warpkit::rowSoftmax (device/softmax.cuh) instead: it picks
// a warp, block or cluster path by row length and reaches the copy bandwidth. Copy this file when
// you need your own row kernel: a fused mask, a temperature, a loss from the returned state.
#include <warpkit/softmax.cuh>
#include <warpkit/thread/vector.cuh>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

constexpr int kThreads = 256;                            // threads per block (one row each)
constexpr int kVecs = 4;                                 // 16-byte vectors per thread
constexpr int kV = warpkit::vectorElems<float>();        // floats per vector
constexpr int kMaxCols = kThreads * kVecs * kV;          // 4096 columns
constexpr int kSlots = kVecs * kV + 1;                   // + 1 slot for a head or tail element

// y = softmax(x * invTemp) for each row of a rows x cols matrix with row stride ld; lse[row] gets
// the row's log-sum-exp (what a fused cross-entropy loss needs).
__global__ void __launch_bounds__(kThreads) blockSoftmaxRows(const float* x, float* y, float* lse, int cols, long long ld, float invTemp) {
    const float* xr = x + blockIdx.x * ld;
    const warpkit::VectorSplit s = warpkit::vectorSplit(xr, cols); // head scalars, 16-byte body, tail
    float v[kSlots];
    // Thread t takes body vectors t, t + 256, ... and one head/tail element; empty slots get -inf.
    warpkit::loadShare<kVecs, 1>(v, xr, s, threadIdx.x, kThreads, -INFINITY);
    for (int j = 0; j < kSlots; ++j) v[j] *= invTemp; // -inf stays -inf
    const warpkit::SoftmaxState row = warpkit::blockSoftmax<kThreads>(v); // every thread: outputs, and the row's {max, sum}
    warpkit::storeShare<kVecs, 1>(y + blockIdx.x * ld, s, v, threadIdx.x, kThreads);
    if (threadIdx.x == 0) lse[blockIdx.x] = row.max + logf(row.sum);
}

int main() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("block_softmax: no CUDA device\n");
        return 0;
    }
    const int shapes[][2] = {{1, 1}, {37, 7}, {100, 1000}, {64, 4093}, {9, kMaxCols}};
    bool ok = true;
    for (const auto& sh : shapes) {
        const int rows = sh[0], cols = sh[1];
        const long long ld = cols + 3; // odd row stride: rows start at every alignment
        std::vector<float> hx(rows * ld), hy(rows * ld), hl(rows);
        for (size_t i = 0; i < hx.size(); ++i) hx[i] = (float)((i * 2654435761u % 20001) / 1000.0 - 10.0);
        float *dx, *dy, *dl;
        cudaMalloc(&dx, hx.size() * sizeof(float));
        cudaMalloc(&dy, hx.size() * sizeof(float));
        cudaMalloc(&dl, rows * sizeof(float));
        cudaMemcpy(dx, hx.data(), hx.size() * sizeof(float), cudaMemcpyHostToDevice);
        blockSoftmaxRows<<<rows, kThreads>>>(dx, dy, dl, cols, ld, 0.5f);
        const cudaError_t e = cudaDeviceSynchronize();
        cudaMemcpy(hy.data(), dy, hy.size() * sizeof(float), cudaMemcpyDeviceToHost);
        cudaMemcpy(hl.data(), dl, rows * sizeof(float), cudaMemcpyDeviceToHost);
        cudaFree(dx);
        cudaFree(dy);
        cudaFree(dl);
        double worst = e == cudaSuccess ? 0.0 : INFINITY;
        for (int r = 0; r < rows; ++r) {
            double m = -INFINITY, sum = 0;
            for (int c = 0; c < cols; ++c) m = fmax(m, 0.5 * hx[r * ld + c]);
            for (int c = 0; c < cols; ++c) sum += exp(0.5 * hx[r * ld + c] - m);
            worst = fmax(worst, fabs(hl[r] - (m + log(sum))) / fmax(1.0, fabs(m + log(sum))));
            for (int c = 0; c < cols; ++c) {
                const double want = exp(0.5 * hx[r * ld + c] - m) / sum;
                worst = fmax(worst, fabs(hy[r * ld + c] - want) / want);
            }
        }
        const bool good = worst <= 1e-5;
        ok = ok && good;
        printf("  %4d x %-5d max rel err %.2e %s%s\n", rows, cols, worst, good ? "ok" : "FAILED",
               e == cudaSuccess ? "" : cudaGetErrorString(e));
    }
    printf("block_softmax sample: %s\n", ok ? "all ok" : "FAILED");
    return ok ? 0 : 1;
}
