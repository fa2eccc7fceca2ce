// samples/histogram.cu: 256-bin byte histogram with match-aggregated shared-memory atomics.
//
// Each block keeps a private 256-bin histogram in shared memory. For every byte, the lanes of a
// warp that hit the same bin find each other with __match_any_sync (warpkit::atomicAggCountMatch,
// the form that returns no old values) and do ONE shared atomicAdd between them: skewed data,
// where most lanes hit a few bins, costs one atomic per distinct bin per warp instead of up to 32
// serialised ones. At the end each block adds its bins to the global histogram.
//
// Run: build/samples/histogram. Checks itself against the CPU on uniform and skewed data and
// exits non-zero on a mismatch.
#include <warpkit/vote.cuh>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

namespace histo {
constexpr int BLOCK = 512;
constexpr int BINS = 256;

__device__ __forceinline__ void count_word(unsigned* sh, unsigned w) {
#pragma unroll
    for (int b = 0; b < 4; ++b) warpkit::atomicAggCountMatch(sh + ((w >> (8 * b)) & 255u));
}

/// hist[256] (zeroed by the caller) += counts of the n bytes of `in`.
__global__ void __launch_bounds__(BLOCK) kernel(const unsigned char* __restrict__ in, long long n, unsigned* hist) {
    __shared__ unsigned sh[BINS];
    for (int i = threadIdx.x; i < BINS; i += BLOCK) sh[i] = 0;
    __syncthreads();
    const long long tid = blockIdx.x * (long long)BLOCK + threadIdx.x, threads = gridDim.x * (long long)BLOCK;
    const long long n16 = n / 16;
    const uint4* in4 = reinterpret_cast<const uint4*>(in);
    for (long long i = tid; i < n16; i += threads) {
        const uint4 q = __ldcs(in4 + i);
        count_word(sh, q.x); count_word(sh, q.y); count_word(sh, q.z); count_word(sh, q.w);
    }
    for (long long i = n16 * 16 + tid; i < n; i += threads) warpkit::atomicAggCountMatch(sh + in[i]);
    __syncthreads();
    for (int i = threadIdx.x; i < BINS; i += BLOCK)
        if (sh[i]) atomicAdd(hist + i, sh[i]);
}

inline int grid_for(long long n) {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    long long g = (n / 16 + BLOCK - 1) / BLOCK;
    const long long cap = (long long)sms * 4;
    return (int)(g < cap ? (g > 0 ? g : 1) : cap);
}

/// Skewed bytes: 15 of 16 land in bins 0..3, the rest spread over all 256 bins.
__host__ __device__ inline unsigned char skewed(unsigned long long z) {
    return (z & 15) ? (unsigned char)((z >> 8) & 3) : (unsigned char)(z >> 16);
}
__host__ __device__ inline unsigned long long mix(unsigned long long i, unsigned long long seed) {
    unsigned long long z = seed + i * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
} // namespace histo

#ifndef HISTOGRAM_NO_MAIN
#define CK(call) do { cudaError_t e = (call); if (e != cudaSuccess) { printf("%s: %s\n", #call, cudaGetErrorString(e)); return 1; } } while (0)
int main() {
    int dev = 0;
    if (cudaGetDeviceCount(&dev) != cudaSuccess || dev == 0) { printf("histogram: no CUDA device\n"); return 0; }
    const long long n = (1 << 22) + 7777; // not a multiple of 16: the tail loop runs
    std::vector<unsigned char> h(n);
    unsigned char* din; unsigned* dh;
    CK(cudaMalloc(&din, n)); CK(cudaMalloc(&dh, histo::BINS * 4));
    int bad = 0;
    for (int skew = 0; skew < 2; ++skew) {
        for (long long i = 0; i < n; ++i) {
            const unsigned long long z = histo::mix(i, 77 + skew);
            h[i] = skew ? histo::skewed(z) : (unsigned char)(z >> 24);
        }
        CK(cudaMemcpy(din, h.data(), n, cudaMemcpyHostToDevice));
        CK(cudaMemset(dh, 0, histo::BINS * 4));
        histo::kernel<<<histo::grid_for(n), histo::BLOCK>>>(din, n, dh);
        CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
        unsigned got[histo::BINS], want[histo::BINS] = {0};
        CK(cudaMemcpy(got, dh, sizeof got, cudaMemcpyDeviceToHost));
        for (long long i = 0; i < n; ++i) want[h[i]]++;
        const bool ok = memcmp(got, want, sizeof got) == 0;
        printf("histogram: %s data, n=%lld, 256 bins: bin0 %u (CPU %u): %s\n", skew ? "skewed" : "uniform", n, got[0], want[0], ok ? "match" : "MISMATCH");
        bad += !ok;
    }
    cudaFree(din); cudaFree(dh);
    return bad ? 1 : 0;
}
#endif
