// warpkit/device/histogram.cuh: the 256-bin histogram of a byte array, called from the host.
//
//   warpkit::deviceHistogramBytes(in, n, hist, workspace, &bytes, stream)
//       hist[b] = number of bytes of in[0 .. n) equal to b, for b = 0 .. 255 (overwritten)
//
// How it works. Each block keeps its own 256 bins in shared memory and counts every byte with
// atomicAdd(bin, 1). The result is unused and the increment is the constant 1, so ptxas (sm_90)
// emits ATOMS.POPC.INC: the shared-memory unit finds the lanes of a warp that hit the same bin and
// adds their count once, so skewed data (most bytes in a few bins) is the cheap case. Each thread
// reads 16 bytes at a time and loads its next batch before counting the current one; at the end
// each block adds its bins to hist. One wave of 1024-thread blocks (occupancy x SMs), fewer for a
// small n (at least 8 vectors a thread).
//
// Conventions (docs/design.md). Host; returns cudaError_t; asynchronous on `stream`: a
// cudaMemsetAsync of hist to 0, then one kernel (the memset alone for n = 0). Any alignment of
// in, any n >= 0 (64-bit); each counter holds its count modulo 2^32. The call needs no workspace:
// the size query reports 1 byte, so that the two-call pattern (query, allocate, call) hands it a
// non-null pointer, and any workspace of at least that size is accepted and left untouched. Bad
// arguments (n < 0, a null workspaceBytes or hist, a null in with n > 0, *workspaceBytes < 1)
// return cudaErrorInvalidValue, and nothing is launched or written. Host caches are per device
// and thread-safe.
#pragma once

#include "../detail/host.cuh"
#include "../thread/vector.cuh"

namespace warpkit {
namespace detail {

constexpr int kHistogramBins = 256;
constexpr int kHistogramThreads = 1024; // threads per block
constexpr int kHistogramLoads = 2;      // 16-byte loads per thread per batch
constexpr size_t kHistogramWorkspaceBytes = 1;

/// Counts the 4 bytes of `w` into the bins.
WARPKIT_DEVICE void histogramCount4(unsigned* bins, unsigned w) {
#pragma unroll
    for (int b = 0; b < 4; ++b) atomicAdd(bins + ((w >> (8 * b)) & 255u), 1u);
}
/// Counts the 16 bytes of `q` into the bins.
WARPKIT_DEVICE void histogramCount16(unsigned* bins, const Vector16<unsigned>& q) {
#pragma unroll
    for (int k = 0; k < 4; ++k) histogramCount4(bins, q.e[k]);
}

/// hist[256] (0 on entry) += the counts of in[0 .. n), split as s = vectorSplit(in, n). Threads:
/// the block size (kHistogramThreads).
template <int Threads>
__global__ void __launch_bounds__(Threads) deviceHistogramKernel(const unsigned char* __restrict__ in, VectorSplit s,
                                                                 unsigned* hist) {
    static_assert(Threads >= kHistogramBins, "deviceHistogramKernel: Threads must be at least the bin count");
    __shared__ unsigned bins[kHistogramBins];
    if (threadIdx.x < kHistogramBins) bins[threadIdx.x] = 0;
    __syncthreads();
    const unsigned* body = reinterpret_cast<const unsigned*>(in + s.head); // 16-byte aligned
    const long long nvec = s.vectors, T = (long long)gridDim.x * Threads;
    long long i = (long long)blockIdx.x * Threads + threadIdx.x;
    if (i + (kHistogramLoads - 1) * T < nvec) { // whole batches: load the next before counting this one
        Vector16<unsigned> q[kHistogramLoads];
#pragma unroll
        for (int u = 0; u < kHistogramLoads; ++u) q[u] = loadVector<LoadStreaming>(body + 4 * (i + u * T));
        for (;;) {
            const long long next = i + kHistogramLoads * T;
            const bool more = next + (kHistogramLoads - 1) * T < nvec;
            Vector16<unsigned> p[kHistogramLoads];
            if (more) {
#pragma unroll
                for (int u = 0; u < kHistogramLoads; ++u) p[u] = loadVector<LoadStreaming>(body + 4 * (next + u * T));
            }
#pragma unroll
            for (int u = 0; u < kHistogramLoads; ++u) histogramCount16(bins, q[u]);
            i = next;
            if (!more) break;
#pragma unroll
            for (int u = 0; u < kHistogramLoads; ++u) q[u] = p[u];
        }
    }
    for (; i < nvec; i += T) histogramCount16(bins, loadVector<LoadStreaming>(body + 4 * i));
    // The head and tail bytes (fewer than 32): one each for the grid's first threads.
    const long long g = (long long)blockIdx.x * Threads + threadIdx.x;
    if (g < s.head + s.tail) atomicAdd(bins + in[extraIndex(s, (int)g, 16)], 1u);
    __syncthreads();
    if (threadIdx.x < kHistogramBins && bins[threadIdx.x]) atomicAdd(hist + threadIdx.x, bins[threadIdx.x]);
}

} // namespace detail

/// hist[b] = the number of bytes equal to b in in[0 .. n), b = 0 .. 255 (hist: 256 counters in
/// device memory, overwritten; each modulo 2^32). Host; asynchronous on `stream`. Workspace and
/// errors: see the header comment.
inline cudaError_t deviceHistogramBytes(const unsigned char* in, long long n, unsigned* hist, void* workspace,
                                        size_t* workspaceBytes, cudaStream_t stream = 0) {
    if (workspaceBytes == nullptr || n < 0) return cudaErrorInvalidValue;
    if (workspace == nullptr) {
        *workspaceBytes = detail::kHistogramWorkspaceBytes;
        return cudaSuccess;
    }
    if (hist == nullptr || (n > 0 && in == nullptr) || *workspaceBytes < detail::kHistogramWorkspaceBytes)
        return cudaErrorInvalidValue;
    constexpr int threads = detail::kHistogramThreads;
    const VectorSplit s = vectorSplit(in, n);
    int blocks = 1;
    if (n > 0)
        WARPKIT_TRY(detail::gridBlocks(detail::deviceHistogramKernel<threads>, threads, s.vectors, 8ll * threads,
                                       1ll << 30, &blocks));
    WARPKIT_TRY(cudaMemsetAsync(hist, 0, detail::kHistogramBins * sizeof(unsigned), stream));
    if (n == 0) return cudaSuccess;
    return detail::launchKernel(detail::deviceHistogramKernel<threads>, blocks, threads, stream, in, s, hist);
}

} // namespace warpkit
