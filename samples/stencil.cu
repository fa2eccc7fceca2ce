// samples/stencil.cu: the 1-D stencil out[i] = sum_j c[j] * in[i + j - R] (j = 0 .. 2R, zero
// outside [0, n)). Each block stages its tile and a halo of R elements on each side in shared
// memory with blockLoadTileHalo (16-byte loads for the body), then each thread computes K outputs
// in striped order (conflict-free shared reads, coalesced stores). Two variants: coefficients in
// __constant__ memory, and coefficients read through the read-only cache (__ldg). Checked against
// the CPU; timed against a device-to-device copy of the same bytes (n = 2^24 + 3).
#include <warpkit/block/load.cuh>

#include <algorithm>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

constexpr int R = 4;          // radius: 9 coefficients
constexpr int kThreads = 256; // threads per block
constexpr int K = 8;          // outputs per thread
constexpr int kTile = kThreads * K;
constexpr int kHalo = 4; // >= R, and a multiple of 4 floats so smem + kHalo stays 16-byte aligned

__constant__ float cCoef[2 * R + 1];

template <bool ConstantCoef> __global__ void __launch_bounds__(kThreads)
    stencil(const float* __restrict__ in, float* __restrict__ out, long long n, const float* __restrict__ coef) {
    __shared__ alignas(16) float s[kTile + 2 * kHalo];
    const long long start = (long long)blockIdx.x * kTile;
    warpkit::blockLoadTileHalo<kThreads, kTile, kHalo>(s, in, n, start, 0.0f); // s[j] = in[start - kHalo + j]
    float c[2 * R + 1];
#pragma unroll
    for (int j = 0; j <= 2 * R; ++j) c[j] = ConstantCoef ? cCoef[j] : __ldg(coef + j);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const int i = k * kThreads + threadIdx.x; // striped: lanes read consecutive slots
        float acc = 0.0f;
#pragma unroll
        for (int j = 0; j <= 2 * R; ++j) acc = fmaf(c[j], s[kHalo - R + i + j], acc);
        if (start + i < n) __stcs(out + start + i, acc);
    }
}

#define CHECK(call)                                            \
    do {                                                       \
        cudaError_t e_ = (call);                               \
        if (e_ != cudaSuccess) {                               \
            printf("%s: %s\n", #call, cudaGetErrorString(e_)); \
            return 1;                                          \
        }                                                      \
    } while (0)

int main() {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("no CUDA device\n");
        return 0;
    }
    const long long n = (1LL << 24) + 3;
    std::vector<float> h(n), coef(2 * R + 1), got(n);
    for (long long i = 0; i < n; ++i) h[i] = (float)((i * 2654435761LL) % 1000) / 500.0f - 1.0f;
    for (int j = 0; j <= 2 * R; ++j) coef[j] = 1.0f / (1 + (j - R) * (j - R));
    float *in, *out, *dcoef;
    CHECK(cudaMalloc(&in, n * sizeof(float)));
    CHECK(cudaMalloc(&out, n * sizeof(float)));
    CHECK(cudaMalloc(&dcoef, coef.size() * sizeof(float)));
    CHECK(cudaMemcpy(in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dcoef, coef.data(), coef.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpyToSymbol(cCoef, coef.data(), coef.size() * sizeof(float)));
    const int blocks = (int)((n + kTile - 1) / kTile);

    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    auto time = [&](auto launch) { // median of 21 runs, in microseconds
        std::vector<float> t;
        for (int r = 0; r < 21; ++r) {
            cudaEventRecord(a);
            launch();
            cudaEventRecord(b);
            cudaEventSynchronize(b);
            float ms = 0;
            cudaEventElapsedTime(&ms, a, b);
            t.push_back(ms * 1000);
        }
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
    };
    const float copy = time([&] { cudaMemcpyAsync(out, in, n * sizeof(float), cudaMemcpyDeviceToDevice); });
    int bad = 0;
    for (int variant = 0; variant < 2; ++variant) {
        CHECK(cudaMemset(out, 0xA5, n * sizeof(float)));
        auto launch = [&] {
            if (variant == 0) stencil<true><<<blocks, kThreads>>>(in, out, n, dcoef);
            else stencil<false><<<blocks, kThreads>>>(in, out, n, dcoef);
        };
        launch();
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(got.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
        for (long long i = 0; i < n; ++i) {
            double want = 0;
            for (int j = 0; j <= 2 * R; ++j) {
                const long long e = i + j - R;
                if (e >= 0 && e < n) want += (double)coef[j] * h[e];
            }
            if (fabs(got[i] - want) > 1e-5 * (1 + fabs(want)) && bad++ < 5)
                printf("out[%lld] = %g, want %g\n", i, got[i], want);
        }
        const float us = time(launch);
        printf("stencil (%s coefficients): %.1f us, copy %.1f us: %.2fx copy bandwidth\n",
               variant == 0 ? "__constant__" : "read-only cache", us, copy, copy / us);
    }
    printf("%s\n", bad ? "FAILED" : "stencil matches the CPU");
    cudaFree(in);
    cudaFree(out);
    cudaFree(dcoef);
    return bad ? 1 : 0;
}
