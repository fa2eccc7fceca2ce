// samples/tiled_scan.cu: for a prefix sum of a long array call warpkit::deviceInclusiveSum /
// deviceInclusiveScan (warpkit/device/scan.cuh: one pass over all SMs); this sample is the
// ONE-block tile loop to copy when a scan must be fused into a kernel of your own.
//
// One block walks the array tile by tile, with the running prefix carried between tiles:
//   1. each thread loads ITEMS consecutive elements of the tile and scans them sequentially;
//   2. one block-wide exclusive scan of the per-thread totals, seeded by `running` (the sum of
//      everything before this tile); blockExclusiveScanRunning also advances `running` by the
//      tile's total in every thread, so the next tile needs no extra bookkeeping;
//   3. each thread adds its block prefix to its local prefixes and stores them.
// No __syncthreads is needed between tiles: every warpkit block call is safe back to back.
// Swap warpkit::Sum{} and the element type for any associative operator (e.g. warpkit::Max{}).
// main() also runs the device scan on the same data (the two-call workspace: ask the size, then
// scan), and checks both against the CPU; it exits non-zero on a mismatch.
#include <warpkit/scan.cuh>
#include <warpkit/device/scan.cuh>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

// BlockThreads: block size known at compile time (pass 0 to read blockDim at run time).
// Items: elements per thread per tile, kept in registers (the loops unroll fully).
template <int BlockThreads, int Items, typename T>
__global__ void tiled_inclusive_sum(const T* in, T* out, long long n) {
    const int tid = threadIdx.x;
    const int threads = BlockThreads > 0 ? BlockThreads : (int)blockDim.x;
    const long long tile = (long long)threads * Items;
    T running = T(0); // the sum of all tiles before this one; the same value in every thread
    for (long long base = 0; base < n; base += tile) {
        // 1. load this thread's Items consecutive elements (0, the identity, past the end) ...
        T x[Items];
        const long long first = base + (long long)tid * Items;
#pragma unroll
        for (int j = 0; j < Items; ++j) x[j] = first + j < n ? in[first + j] : T(0);
        // ... and scan them sequentially: x[j] becomes x[0] + ... + x[j].
#pragma unroll
        for (int j = 1; j < Items; ++j) x[j] += x[j - 1];
        // 2. block-wide exclusive scan of the per-thread totals, seeded by the running prefix.
        const T prefix = warpkit::blockExclusiveScanRunning<BlockThreads>(x[Items - 1], warpkit::Sum{}, running);
        // 3. store prefix + local inclusive prefixes.
#pragma unroll
        for (int j = 0; j < Items; ++j)
            if (first + j < n) out[first + j] = prefix + x[j];
    }
}

#define CHECK(call)                                                                       \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) { fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_)); exit(1); } \
    } while (0)

/// Scan n ints with the given kernel configuration and compare with the CPU. Returns 0 if exact.
template <int BlockThreads, int Items> static int run(long long n, int threads, unsigned seed) {
    std::vector<long long> h(n), want(n), got(n);
    srand(seed);
    long long acc = 0;
    for (long long i = 0; i < n; ++i) { h[i] = (rand() % 2001) - 1000; acc += h[i]; want[i] = acc; }
    long long *din, *dout;
    CHECK(cudaMalloc(&din, n * sizeof(long long)));
    CHECK(cudaMalloc(&dout, n * sizeof(long long)));
    CHECK(cudaMemcpy(din, h.data(), n * sizeof(long long), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dout, 0xA5, n * sizeof(long long)));
    tiled_inclusive_sum<BlockThreads, Items><<<1, threads>>>(din, dout, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(got.data(), dout, n * sizeof(long long), cudaMemcpyDeviceToHost));
    long long bad = 0, firstBad = -1;
    for (long long i = 0; i < n; ++i)
        if (got[i] != want[i]) { if (firstBad < 0) firstBad = i; ++bad; }
    printf("  %lld elements, %d threads x %d items per tile (BlockThreads=%d): %s", n, threads, Items,
           BlockThreads, bad ? "MISMATCH" : "matches the CPU");
    if (bad) printf(" (%lld wrong, first at %lld: got %lld want %lld)", bad, firstBad, got[firstBad], want[firstBad]);
    // The same sum by the device scan: ask the workspace size, allocate it, scan (all on stream 0).
    size_t bytes = 0;
    void* workspace;
    CHECK(warpkit::deviceInclusiveSum(din, dout, n, nullptr, &bytes));
    CHECK(cudaMalloc(&workspace, bytes));
    CHECK(cudaMemset(dout, 0xA5, n * sizeof(long long)));
    CHECK(warpkit::deviceInclusiveSum(din, dout, n, workspace, &bytes));
    CHECK(cudaMemcpy(got.data(), dout, n * sizeof(long long), cudaMemcpyDeviceToHost));
    long long badDevice = 0;
    for (long long i = 0; i < n; ++i) badDevice += got[i] != want[i];
    printf("; device scan: %s\n", badDevice ? "MISMATCH" : "matches");
    CHECK(cudaFree(workspace));
    CHECK(cudaFree(din));
    CHECK(cudaFree(dout));
    bad += badDevice;
    return bad ? 1 : 0;
}

int main() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        printf("tiled_scan: no CUDA device: nothing to run\n");
        return 0;
    }
    int fails = 0;
    fails += run<256, 4>(1234567, 256, 1);  // many tiles, the last one partial
    fails += run<0, 3>(100003, 100, 2);     // block size at run time, partial last warp
    fails += run<1024, 2>(2048 * 5, 1024, 3); // whole tiles only
    fails += run<32, 1>(77, 32, 4);         // one warp, array shorter than a tile
    printf("tiled_scan: %s\n", fails ? "FAILED" : "ok");
    return fails ? 1 : 0;
}
