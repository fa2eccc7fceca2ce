// samples/device_reduce.cu: to reduce a whole array, call warpkit::deviceReduce (or deviceReduceSum /
// Max / Min) from include/warpkit/device/reduce.cuh: one launch, bitwise the same result on every run.
// Write your own kernel with gridAccumulate + blockReduce only when the reduction is part of other
// work in the same pass: a transform before it (sumOfSquares below), or a result per block.
//
// The calls follow CUB's two-call rule: ask for the workspace size with a null workspace, allocate
// it once, then call as often as you like (the workspace may hold anything between calls).
// Build: make build/samples/device_reduce   Run: ./build/samples/device_reduce
#include <warpkit/device/reduce.cuh>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#define CHECK(call)                                                                                 \
    do {                                                                                            \
        cudaError_t e_ = (call);                                                                    \
        if (e_ != cudaSuccess) {                                                                    \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

// ---- your own kernel: the sum of squares, one partial per block -----------------------------------
// x * x is folded in as each element is read (16-byte loads, 4 in flight), so the squares are
// never stored. Each block writes its partial; deviceReduceSum then adds the partials.
struct SquareSum {
    __device__ float operator()(float acc, float x) const { return acc + x * x; }
};
constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) sumOfSquares(const float* x, long long n, float* partials) {
    const float mine = warpkit::gridAccumulate<4>(x, (unsigned long long)n, 0.0f, SquareSum{}); // every thread
    const float block = warpkit::blockReduceSumToThread0<kThreads>(mine);                        // thread 0 gets it
    if (threadIdx.x == 0) partials[blockIdx.x] = block;
}

// ---- the device layer: two-call workspace, then the reductions ------------------------------------
int main() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        printf("device_reduce: no CUDA device\n");
        return 0;
    }
    const long long n = (1LL << 24) + 7; // any n, 0 included
    std::vector<float> hf(n);
    std::vector<int> hi(n);
    unsigned s = 12345u;
    for (long long i = 0; i < n; ++i) {
        s = s * 1664525u + 1013904223u;
        hf[i] = (float)(s >> 8) / 8388608.0f - 1.0f; // [-1, 1)
        hi[i] = (int)(s >> 12);                      // [0, 2^20): the sum needs 64 bits
    }
    float *x, *fout;
    int* xi;
    long long* llout;
    CHECK(cudaMalloc(&x, n * sizeof(float)));
    CHECK(cudaMalloc(&xi, n * sizeof(int)));
    CHECK(cudaMalloc(&fout, 8 * sizeof(float)));
    CHECK(cudaMalloc(&llout, sizeof(long long)));
    CHECK(cudaMemcpy(x, hf.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(xi, hi.data(), n * sizeof(int), cudaMemcpyHostToDevice));

    int blocks = 0; // your kernel's grid: one wave (resident blocks per SM x SMs)
    CHECK(warpkit::occupancyGridSize(&blocks, sumOfSquares, kThreads));
    float* partials;
    CHECK(cudaMalloc(&partials, blocks * sizeof(float)));

    // 1. Size queries (workspace == nullptr): one allocation, the largest size any call below asks for.
    size_t bytes = 0, need = 0;
    auto ask = [&](cudaError_t e) { CHECK(e); need = bytes > need ? bytes : need; };
    ask(warpkit::deviceReduceSum(x, fout, n, nullptr, &bytes));
    ask(warpkit::deviceReduceMax(x, fout, n, nullptr, &bytes));
    ask(warpkit::deviceReduceMin(x, fout, n, nullptr, &bytes));
    ask(warpkit::deviceReduce(xi, llout, n, warpkit::Sum{}, 0, nullptr, &bytes)); // int summed in 64 bits
    ask(warpkit::deviceReduceSum(partials, fout, blocks, nullptr, &bytes));
    void* ws;
    CHECK(cudaMalloc(&ws, need));

    // 2. The calls: asynchronous on the stream (here the default one), results in device memory.
    CHECK(warpkit::deviceReduceSum(x, fout, n, ws, &need));
    CHECK(warpkit::deviceReduceSum(x, fout + 1, n, ws, &need)); // the same bits again
    CHECK(warpkit::deviceReduceMax(x, fout + 2, n, ws, &need));
    CHECK(warpkit::deviceReduceMin(x, fout + 3, n, ws, &need));
    CHECK(warpkit::deviceReduce(xi, llout, n, warpkit::Sum{}, 0, ws, &need));

    // 3. Your own kernel for a fused pass, then the device layer for its partials.
    sumOfSquares<<<blocks, kThreads>>>(x, n, partials);
    CHECK(cudaGetLastError());
    CHECK(warpkit::deviceReduceSum(partials, fout + 4, blocks, ws, &need));

    float got[5];
    long long gotInt = 0;
    CHECK(cudaMemcpy(got, fout, sizeof(got), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&gotInt, llout, sizeof(gotInt), cudaMemcpyDeviceToHost));

    // CPU reference: float sums in double, within 1e-6 of sum |x| (the GPU adds in float).
    double sum = 0, asum = 0, sq = 0, mx = -INFINITY, mn = INFINITY;
    long long isum = 0;
    for (long long i = 0; i < n; ++i) {
        sum += hf[i];
        asum += fabs(hf[i]);
        sq += (double)hf[i] * hf[i];
        mx = hf[i] > mx ? hf[i] : mx;
        mn = hf[i] < mn ? hf[i] : mn;
        isum += hi[i];
    }
    bool ok = true;
    auto report = [&](const char* what, double g, double want, double tol) {
        const bool good = fabs(g - want) <= tol;
        printf("  %-34s %18.6f  CPU %18.6f  %s\n", what, g, want, good ? "ok" : "FAILED");
        ok &= good;
    };
    report("deviceReduceSum (float)", got[0], sum, 1e-6 * asum);
    report("deviceReduceMax (float)", got[2], mx, 0.0);
    report("deviceReduceMin (float)", got[3], mn, 0.0);
    report("deviceReduce (int, 64-bit sum)", (double)gotInt, (double)isum, 0.0);
    report("sumOfSquares kernel + deviceReduceSum", got[4], sq, 1e-6 * sq);
    const bool same = memcmp(&got[0], &got[1], sizeof(float)) == 0;
    printf("  two runs bitwise the same: %s\n", same ? "ok" : "FAILED");
    ok &= same;
    printf("device_reduce: %s\n", ok ? "ok" : "FAILED");
    cudaFree(x);
    cudaFree(xi);
    cudaFree(fout);
    cudaFree(llout);
    cudaFree(partials);
    cudaFree(ws);
    return ok ? 0 : 1;
}
