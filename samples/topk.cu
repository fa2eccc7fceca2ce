// samples/topk.cu: the k largest logits of every row and their columns, in a kernel of your own
// written with warpkit's top-k primitives; one block a row. (For the tuned host call use
// warpkit::rowTopK, include/warpkit/device/topk.cuh; this kernel is the pattern to copy when the
// selection must be fused with other work: a bias, a mask, a scale applied while loading.)
//
// The block walks its row in tiles of 256 x 8 values. Each value is packed with its column into a
// 64-bit key (topkPack: the value's rank, then the lower column first on ties), a key below the
// running k-th best is dropped, and blockTopKSelect keeps the k best of the tile and of the running
// set. At the end blockTopKSort ranks the k keys. main() checks every row against a CPU sort.
#include <warpkit/topk.cuh>

#include <algorithm>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

#define CHECK(call)                                                     \
    do {                                                                \
        if (cudaError_t e_ = (call)) {                                  \
            fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_)); \
            exit(1);                                                    \
        }                                                               \
    } while (0)

constexpr int kThreads = 256, kPer = 8, kMaxK = 256; // k <= kMaxK: one running key a thread

__global__ void __launch_bounds__(kThreads, 1)
    rowTopKSample(const float* __restrict__ x, int cols, int k, float* values, int* indices) {
    __shared__ warpkit::BlockTopKScratch<kMaxK> s;
    const float* row = x + (long long)blockIdx.x * cols;
    const int t = threadIdx.x;
    unsigned long long running = warpkit::kTopKEmpty, threshold = warpkit::kTopKEmpty;
    int n = 0;
    for (int base = 0; base < cols; base += kThreads * kPer) {
        unsigned long long keys[kPer + 1];
        bool any = false;
        for (int j = 0; j < kPer; ++j) {
            const int c = base + j * kThreads + t;
            const unsigned long long key = c < cols ? warpkit::topkPack(row[c], (unsigned)c, true) : 0;
            keys[j] = key >= threshold ? key : warpkit::kTopKEmpty; // cannot reach the top k
            any |= keys[j] != warpkit::kTopKEmpty;
        }
        if (!__syncthreads_or(any)) continue; // nothing in this tile beats the running k-th
        keys[kPer] = running;
        const auto sel = warpkit::blockTopKSelect<kThreads>(keys, k, s);
        n = sel.selected;
        threshold = n == k ? sel.threshold : warpkit::kTopKEmpty;
        running = t < n ? s.keys[t] : warpkit::kTopKEmpty;
    }
    __syncthreads();
    if (t < n) s.keys[t] = running;
    warpkit::blockTopKSort<kThreads>(s, n);
    for (int r = t; r < n; r += kThreads) {
        const unsigned c = warpkit::topkUnpackIndex(s.keys[r]);
        values[(long long)blockIdx.x * k + r] = row[c];
        indices[(long long)blockIdx.x * k + r] = (int)c;
    }
}

int main() {
    const int rows = 64, cols = 50257, ks[] = {1, 8, 50, 256};
    std::vector<float> h((size_t)rows * cols);
    unsigned long long rng = 0x5eed;
    for (size_t i = 0; i < h.size(); ++i) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        h[i] = (float)((rng >> 40) % 2000) / 100.f - 10.f; // many ties: the lowest column must win
    }
    for (int c = 0; c < cols; ++c) h[(size_t)3 * cols + c] = 1.f; // an all-equal row
    h[(size_t)5 * cols + 777] = NAN;                              // NaN ranks above every number
    float *dx, *dv;
    int* di;
    CHECK(cudaMalloc(&dx, h.size() * sizeof(float)));
    CHECK(cudaMalloc(&dv, (size_t)rows * kMaxK * sizeof(float)));
    CHECK(cudaMalloc(&di, (size_t)rows * kMaxK * sizeof(int)));
    CHECK(cudaMemcpy(dx, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
    int bad = 0;
    for (int k : ks) {
        rowTopKSample<<<rows, kThreads>>>(dx, cols, k, dv, di);
        CHECK(cudaGetLastError());
        std::vector<float> v((size_t)rows * k);
        std::vector<int> idx((size_t)rows * k);
        CHECK(cudaMemcpy(v.data(), dv, v.size() * sizeof(float), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(idx.data(), di, idx.size() * sizeof(int), cudaMemcpyDeviceToHost));
        std::vector<int> order(cols);
        for (int r = 0; r < rows; ++r) {
            const float* row = h.data() + (size_t)r * cols;
            for (int c = 0; c < cols; ++c) order[c] = c;
            std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
                return isnan(row[a]) ? !isnan(row[b]) : (!isnan(row[b]) && row[a] > row[b]);
            });
            for (int j = 0; j < k; ++j)
                if (idx[(size_t)r * k + j] != order[j]) {
                    if (bad++ < 5)
                        printf("k=%d row %d rank %d: column %d, want %d\n", k, r, j, idx[(size_t)r * k + j], order[j]);
                }
        }
        printf("k=%3d: %d rows of %d columns checked\n", k, rows, cols);
    }
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dv));
    CHECK(cudaFree(di));
    printf(bad ? "FAILED: %d mismatches\n" : "OK\n", bad);
    return bad ? 1 : 0;
}
