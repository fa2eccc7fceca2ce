// samples/compact.cu: stream compaction with warp votes and one aggregated atomic per warp.
//
// Keeps the elements x with pred(x) (here: x > threshold). Each warp takes a chunk of 32*K
// consecutive elements; for each of its K rows of 32 it takes a __ballot_sync of the predicate,
// so popc(ballot & laneMaskLt) is a lane's place in the row and popc(ballot) the row's count.
// The warp's lane 0 reserves room for the whole chunk with ONE atomicAdd on the output counter
// and broadcasts the base.
//
// ORDER: this does NOT keep the input order across warps: chunks land in the order their
// atomics happen. Inside a chunk the kept elements keep their input order. (cub::DeviceSelect::If
// keeps the full order; it pays a decoupled look-back scan for it.)
//
// Run: build/samples/compact. Checks itself against the CPU (same multiset, same count) and
// exits non-zero on a mismatch.
#include <warpkit/vote.cuh>
#include <stdio.h>
#include <stdlib.h>
#include <vector>
#include <algorithm>

namespace compact {
constexpr int K = 32;      // rows of 32 elements per warp chunk (one atomic per 1024 elements)
constexpr int BLOCK = 256;

/// Compact `in[0..n)` into `out`; `*count` (zeroed by the caller) ends as the number kept.
__global__ void __launch_bounds__(BLOCK) kernel(const float* __restrict__ in, float* __restrict__ out,
                                                unsigned* count, long long n, float threshold) {
    const unsigned lane = warpkit::laneId();
    const long long warp = (blockIdx.x * (long long)BLOCK + threadIdx.x) >> 5;
    const long long warps = (gridDim.x * (long long)BLOCK) >> 5;
    for (long long c = warp * 32 * K; c < n; c += warps * 32 * K) {
        float v[K];
        unsigned ballot[K];
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const long long i = c + j * 32 + lane;
            v[j] = i < n ? __ldcs(in + i) : 0.f;
        }
        unsigned total = 0;
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const long long i = c + j * 32 + lane;
            ballot[j] = __ballot_sync(WARPKIT_FULL_MASK, i < n && v[j] > threshold);
            total += __popc(ballot[j]);
        }
        unsigned base = 0;
        if (lane == 0 && total) base = atomicAdd(count, total);
        base = __shfl_sync(WARPKIT_FULL_MASK, base, 0);
        const unsigned lt = warpkit::laneMaskLt();
#pragma unroll
        for (int j = 0; j < K; ++j) {
            if ((ballot[j] >> lane) & 1u) __stcs(out + base + __popc(ballot[j] & lt), v[j]);
            base += __popc(ballot[j]);
        }
    }
}

inline int grid_for(long long n) {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    const long long chunks = (n + 32 * K - 1) / (32 * K), warps_per_block = BLOCK / 32;
    long long g = (chunks + warps_per_block - 1) / warps_per_block;
    const long long cap = (long long)sms * 8;
    return (int)(g < cap ? (g > 0 ? g : 1) : cap);
}
} // namespace compact

#ifndef COMPACT_NO_MAIN
#define CK(call) do { cudaError_t e = (call); if (e != cudaSuccess) { printf("%s: %s\n", #call, cudaGetErrorString(e)); return 1; } } while (0)
int main() {
    int dev = 0;
    if (cudaGetDeviceCount(&dev) != cudaSuccess || dev == 0) { printf("compact: no CUDA device\n"); return 0; }
    const long long n = (1 << 22) + 12345;
    std::vector<float> h(n);
    unsigned s = 12345u;
    for (auto& x : h) { s = s * 1664525u + 1013904223u; x = (float)(s >> 8) / 16777216.0f; }
    float *din, *dout; unsigned* dcount;
    CK(cudaMalloc(&din, n * 4)); CK(cudaMalloc(&dout, n * 4)); CK(cudaMalloc(&dcount, 4));
    CK(cudaMemcpy(din, h.data(), n * 4, cudaMemcpyHostToDevice));
    int bad = 0;
    for (float thr : {0.5f, 0.99f, 0.01f, 2.0f}) {
        CK(cudaMemset(dcount, 0, 4));
        CK(cudaMemset(dout, 0xA5, n * 4));
        compact::kernel<<<compact::grid_for(n), compact::BLOCK>>>(din, dout, dcount, n, thr);
        CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
        unsigned cnt = 0;
        CK(cudaMemcpy(&cnt, dcount, 4, cudaMemcpyDeviceToHost));
        std::vector<float> want, got(cnt);
        for (float x : h) if (x > thr) want.push_back(x);
        if (cnt) CK(cudaMemcpy(got.data(), dout, cnt * 4ull, cudaMemcpyDeviceToHost));
        std::sort(want.begin(), want.end()); std::sort(got.begin(), got.end());
        const bool ok = cnt == want.size() && got == want;
        printf("compact: n=%lld threshold %.2f: kept %u of %lld (CPU %zu): %s\n", n, thr, cnt, n, want.size(), ok ? "match" : "MISMATCH");
        bad += !ok;
    }
    cudaFree(din); cudaFree(dout); cudaFree(dcount);
    printf("compact: order is kept inside each warp's chunk of %d elements, not across chunks\n", 32 * compact::K);
    return bad ? 1 : 0;
}
#endif
