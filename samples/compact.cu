// samples/compact.cu: stream compaction (keep the x with pred(x)) written with warp votes. For speed
// call warpkit::deviceSelectUnordered (include/warpkit/device/select.cuh): 16-byte rows, one atomic
// per 2048 elements; this short kernel is the template to copy when the selection is fused into
// other work.
//
// The kernel: each warp reads 32 consecutive elements, takes a ballot of the predicate, reserves
// room for its kept elements with ONE atomicAdd (made by lane 0, popc(ballot) slots) and gives each
// kept lane its place, popc of the kept lanes below it. warpkit::atomicAggInc(count) packs these
// steps for any set of active lanes (used below for the same job in one line).
// ORDER: the warps' runs land in the order their atomics happen, so the input order is not kept
// (each warp's run is in order). cub::DeviceSelect::If keeps it, at the cost of a prefix scan.
// Build: make build/samples/compact   Run: ./build/samples/compact
#include <warpkit/device/select.cuh>
#include <warpkit/vote.cuh>

#include <algorithm>
#include <stdio.h>
#include <vector>

#define CK(call)                                                                                     \
    do {                                                                                             \
        if (cudaError_t e_ = (call)) { printf("%s: %s\n", #call, cudaGetErrorString(e_)); return 1; } \
    } while (0)

/// out[0 .. *count) = the x of in[0 .. n) with x > t, in no particular order. *count: 0 on entry.
/// Whole warps loop together (the ballot needs all 32 lanes); any grid of whole warps works.
__global__ void compactKernel(const float* in, float* out, unsigned long long* count, long long n, float t) {
    const unsigned lane = warpkit::laneId();
    const long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const long long warps = (long long)gridDim.x * blockDim.x / 32;
    for (long long base = warp * 32; base < n; base += warps * 32) {
        const long long i = base + lane;
        const float x = i < n ? in[i] : 0.0f;
        const bool keep = i < n && x > t;
        const unsigned ballot = __ballot_sync(WARPKIT_FULL_MASK, keep); // bit l: lane l keeps its x
        if (ballot == 0) continue;                                     // the same in every lane
        unsigned long long first = 0;
        if (lane == 0) first = atomicAdd(count, (unsigned long long)__popc(ballot));
        first = __shfl_sync(WARPKIT_FULL_MASK, first, 0);
        if (keep) out[first + __popc(ballot & warpkit::laneMaskLt())] = x;
    }
}

/// The same in one line per element, for code where lanes may have left: each calling lane gets its
/// own slot, one atomic per warp (warpkit::atomicAggInc).
__global__ void compactAggKernel(const float* in, float* out, unsigned long long* count, long long n, float t) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        if (in[i] > t) out[warpkit::atomicAggInc(count)] = in[i];
}

int main() {
    int dev = 0;
    if (cudaGetDeviceCount(&dev) != cudaSuccess || dev == 0) {
        printf("compact: no CUDA device\n");
        return 0;
    }
    const long long n = (1 << 22) + 12345;
    std::vector<float> h(n);
    unsigned s = 12345u;
    for (auto& x : h) { s = s * 1664525u + 1013904223u; x = (float)(s >> 8) / 16777216.0f; }
    float *din, *dout;
    unsigned long long* dcount;
    CK(cudaMalloc(&din, n * 4));
    CK(cudaMalloc(&dout, n * 4));
    CK(cudaMalloc(&dcount, 8));
    CK(cudaMemcpy(din, h.data(), n * 4, cudaMemcpyHostToDevice));
    // The device layer's workspace (two-call rule): ask, allocate once.
    size_t bytes = 0;
    CK(warpkit::deviceSelectUnordered(din, dout, n, warpkit::SelectGreater{0.5f}, dcount, nullptr, &bytes));
    void* ws;
    CK(cudaMalloc(&ws, bytes));
    int bad = 0;
    for (float t : {0.5f, 0.99f, 0.01f, 2.0f})
        for (int way = 0; way < 3; ++way) {
            CK(cudaMemset(dout, 0xA5, n * 4));
            if (way == 2) {
                CK(warpkit::deviceSelectUnordered(din, dout, n, warpkit::SelectGreater{t}, dcount, ws, &bytes));
            } else {
                CK(cudaMemset(dcount, 0, 8));
                if (way == 0) compactKernel<<<1024, 256>>>(din, dout, dcount, n, t);
                else compactAggKernel<<<1024, 256>>>(din, dout, dcount, n, t);
                CK(cudaGetLastError());
            }
            unsigned long long cnt = 0;
            CK(cudaMemcpy(&cnt, dcount, 8, cudaMemcpyDeviceToHost));
            std::vector<float> want, got(cnt);
            for (float x : h)
                if (x > t) want.push_back(x);
            if (cnt) CK(cudaMemcpy(got.data(), dout, cnt * 4, cudaMemcpyDeviceToHost));
            std::sort(want.begin(), want.end());
            std::sort(got.begin(), got.end());
            const bool ok = cnt == want.size() && got == want; // same multiset, any order
            const char* name = way == 0 ? "ballot kernel" : way == 1 ? "atomicAggInc kernel" : "deviceSelectUnordered";
            printf("  %-22s x > %.2f: kept %llu (CPU %zu): %s\n", name, t, cnt, want.size(), ok ? "ok" : "FAILED");
            bad += !ok;
        }
    cudaFree(din);
    cudaFree(dout);
    cudaFree(dcount);
    cudaFree(ws);
    printf("compact: %s\n", bad ? "FAILED" : "ok");
    return bad ? 1 : 0;
}
