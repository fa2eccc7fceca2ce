// samples/compact.cu: stream compaction with warp votes and one aggregated atomic per warp chunk.
//
// Keeps the elements x with pred(x) (here: x > threshold). Each warp takes a chunk of 128*R
// consecutive floats as R rows; in a row each lane holds one float4 (a 16-byte load; R = 16
// loads in flight per lane). Per row the warp takes 4 ballots, one per float4 component, so
// popc(ballot_k & laneMaskLt) counts the kept component-k floats of the lanes below this one and
// popc(ballot_k) those of the row. Lane 0 reserves room for the whole chunk with ONE atomicAdd on
// the output counter (its count from one warp sum) and broadcasts the base.
//
// Stores. Perm (the default): a row's kept floats are written component-major (all kept .x in
// lane order, then .y, .z, .w), so each store instruction writes one contiguous run. Stage: the
// row goes through a 128-float per-warp shared buffer in input order, then out in contiguous
// runs of 32. (Each lane storing its own up to 4 floats in place was measured: its store
// instructions span the row at a 16-byte stride, and at 99% kept it ran at 0.66x CUB.)
//
// ORDER: this does NOT keep the input order. Chunks land in the order their atomics happen; the
// rows of a chunk stay in order; inside a row Perm groups the kept floats by position mod 4,
// Stage keeps the input order. (cub::DeviceSelect::If keeps the full order; it pays a decoupled
// look-back scan for it.)
//
// Run: build/samples/compact. Checks both store modes against the CPU (same multiset, same
// count) and exits non-zero on a mismatch.
#include <warpkit/vote.cuh>
#include <warpkit/reduce.cuh>
#include <stdio.h>
#include <stdlib.h>
#include <vector>
#include <algorithm>

namespace compact {
constexpr int BLOCK = 256;

/// Bits 0..3: which of the 4 floats of `v` (elements e..e+3) are kept. Full: all 4 are < n.
template <bool Full> __device__ __forceinline__ unsigned keep4(float4 v, long long e, long long n, float t) {
    return (unsigned)((Full || e < n) && v.x > t) | (unsigned)((Full || e + 1 < n) && v.y > t) << 1 |
           (unsigned)((Full || e + 2 < n) && v.z > t) << 2 | (unsigned)((Full || e + 3 < n) && v.w > t) << 3;
}

/// How a row's kept floats are stored (see the top of the file).
enum Store { Perm, Stage };

/// One warp chunk of 128*R elements from c: row j is one float4 per lane (elements
/// c + 128j + 4*lane .. +3). Full: the whole chunk is < n (16-byte loads); otherwise guarded
/// scalar loads. buf: this warp's 128-float shared buffer (Stage only).
template <int R, bool Full, Store S>
__device__ __forceinline__ void chunk(const float* __restrict__ in, float* __restrict__ out, unsigned* count,
                                      long long n, float t, long long c, unsigned lane, float* buf) {
    float4 v[R];
#pragma unroll
    for (int j = 0; j < R; ++j) {
        const long long e = c + 128 * j + 4 * lane;
        if (Full) {
            v[j] = __ldcs(reinterpret_cast<const float4*>(in + e));
        } else {
            v[j].x = e < n ? in[e] : 0.f;         v[j].y = e + 1 < n ? in[e + 1] : 0.f;
            v[j].z = e + 2 < n ? in[e + 2] : 0.f; v[j].w = e + 3 < n ? in[e + 3] : 0.f;
        }
    }
    unsigned mine = 0;
#pragma unroll
    for (int j = 0; j < R; ++j) mine += __popc(keep4<Full>(v[j], c + 128 * j + 4 * lane, n, t));
    const unsigned total = warpkit::warpReduceSum(mine);
    unsigned base = 0;
    if (lane == 0 && total) base = atomicAdd(count, total);
    base = __shfl_sync(WARPKIT_FULL_MASK, base, 0);
    const unsigned lt = warpkit::laneMaskLt();
#pragma unroll
    for (int j = 0; j < R; ++j) {
        const unsigned m = keep4<Full>(v[j], c + 128 * j + 4 * lane, n, t);
        const unsigned b0 = __ballot_sync(WARPKIT_FULL_MASK, m & 1u), b1 = __ballot_sync(WARPKIT_FULL_MASK, m & 2u);
        const unsigned b2 = __ballot_sync(WARPKIT_FULL_MASK, m & 4u), b3 = __ballot_sync(WARPKIT_FULL_MASK, m & 8u);
        const unsigned c0 = __popc(b0), c1 = __popc(b1), c2 = __popc(b2), c3 = __popc(b3);
        if constexpr (S == Perm) {
            if (m & 1u) __stcs(out + base + __popc(b0 & lt), v[j].x);
            if (m & 2u) __stcs(out + base + c0 + __popc(b1 & lt), v[j].y);
            if (m & 4u) __stcs(out + base + c0 + c1 + __popc(b2 & lt), v[j].z);
            if (m & 8u) __stcs(out + base + c0 + c1 + c2 + __popc(b3 & lt), v[j].w);
        } else {
            unsigned p = __popc(b0 & lt) + __popc(b1 & lt) + __popc(b2 & lt) + __popc(b3 & lt);
            if (m & 1u) buf[p++] = v[j].x;
            if (m & 2u) buf[p++] = v[j].y;
            if (m & 4u) buf[p++] = v[j].z;
            if (m & 8u) buf[p] = v[j].w;
            __syncwarp();
            for (unsigned k = lane; k < c0 + c1 + c2 + c3; k += 32) __stcs(out + base + k, buf[k]);
            __syncwarp();
        }
        base += c0 + c1 + c2 + c3;
    }
}

/// Compact `in[0..n)` (16-byte aligned) into `out`; `*count` (zeroed by the caller) ends as the
/// number kept. Each warp takes chunks of 128*R elements (one float4 per lane per row, R rows in
/// flight) and makes one atomicAdd per chunk. S: how rows are stored (Perm: fastest; Stage: input
/// order inside each chunk).
template <int R = 16, Store S = Perm>
__global__ void __launch_bounds__(BLOCK) kernel(const float* __restrict__ in, float* __restrict__ out,
                                                unsigned* count, long long n, float threshold) {
    __shared__ float stage[S == Stage ? BLOCK * 4 : 1]; // 128 floats per warp
    float* buf = stage + (S == Stage ? (threadIdx.x >> 5) * 128 : 0);
    const unsigned lane = warpkit::laneId();
    const long long warp = (blockIdx.x * (long long)BLOCK + threadIdx.x) >> 5;
    const long long warps = (gridDim.x * (long long)BLOCK) >> 5;
    long long c = warp * 128 * R;
    for (; c + 128 * R <= n; c += warps * 128 * R) chunk<R, true, S>(in, out, count, n, threshold, c, lane, buf);
    if (c < n) chunk<R, false, S>(in, out, count, n, threshold, c, lane, buf);
}

/// Blocks of BLOCK threads for `k`: one per chunk of `per_warp` elements per warp, at most as many
/// as the GPU holds at once (one wave).
template <typename Kern> inline int grid_for(Kern k, long long n, long long per_warp) {
    int sms = 0, per_sm = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, BLOCK, 0);
    const long long chunks = (n + per_warp - 1) / per_warp, warps_per_block = BLOCK / 32;
    long long g = (chunks + warps_per_block - 1) / warps_per_block;
    const long long cap = (long long)sms * (per_sm > 0 ? per_sm : 1);
    return (int)(g < cap ? (g > 0 ? g : 1) : cap);
}
} // namespace compact

#ifndef COMPACT_NO_MAIN
#define CK(call) do { cudaError_t e = (call); if (e != cudaSuccess) { printf("%s: %s\n", #call, cudaGetErrorString(e)); return 1; } } while (0)
int main() {
    int dev = 0;
    if (cudaGetDeviceCount(&dev) != cudaSuccess || dev == 0) { printf("compact: no CUDA device\n"); return 0; }
    const long long big = (1 << 22) + 12345; // the second size is less than one chunk
    std::vector<float> h(big);
    unsigned s = 12345u;
    for (auto& x : h) { s = s * 1664525u + 1013904223u; x = (float)(s >> 8) / 16777216.0f; }
    float *din, *dout; unsigned* dcount;
    CK(cudaMalloc(&din, big * 4)); CK(cudaMalloc(&dout, big * 4)); CK(cudaMalloc(&dcount, 4));
    CK(cudaMemcpy(din, h.data(), big * 4, cudaMemcpyHostToDevice));
    int bad = 0;
    for (long long n : {big, 1001ll})
        for (int mode = 0; mode < 2; ++mode)
            for (float thr : {0.5f, 0.99f, 0.01f, 2.0f}) {
                CK(cudaMemset(dcount, 0, 4));
                CK(cudaMemset(dout, 0xA5, n * 4));
                if (mode == 0) {
                    auto k = compact::kernel<16, compact::Perm>;
                    k<<<compact::grid_for(k, n, 128 * 16), compact::BLOCK>>>(din, dout, dcount, n, thr);
                } else {
                    auto k = compact::kernel<16, compact::Stage>;
                    k<<<compact::grid_for(k, n, 128 * 16), compact::BLOCK>>>(din, dout, dcount, n, thr);
                }
                CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
                unsigned cnt = 0;
                CK(cudaMemcpy(&cnt, dcount, 4, cudaMemcpyDeviceToHost));
                std::vector<float> want, got(cnt);
                for (long long i = 0; i < n; ++i) if (h[i] > thr) want.push_back(h[i]);
                if (cnt) CK(cudaMemcpy(got.data(), dout, cnt * 4ull, cudaMemcpyDeviceToHost));
                std::sort(want.begin(), want.end()); std::sort(got.begin(), got.end());
                const bool ok = cnt == want.size() && got == want;
                printf("compact (%s): n=%lld threshold %.2f: kept %u (CPU %zu): %s\n", mode ? "stage" : "perm", n, thr, cnt,
                       want.size(), ok ? "match" : "MISMATCH");
                bad += !ok;
            }
    cudaFree(din); cudaFree(dout); cudaFree(dcount);
    printf("compact: input order is not kept (see samples/compact.cu)\n");
    return bad ? 1 : 0;
}
#endif
