// samples/device_reduce.cu: sum and max of an array of any length in ONE kernel launch, with a
// result that is bitwise the same on every run. Copy this file to start your own reduction.
//
// How it works (one launch, no host loop, no second kernel):
//   1. every thread folds its grid-stride share of the input (warpkit::gridAccumulate: 16-byte
//      loads, several in flight);
//   2. each block combines its threads (warp shuffles, then one small __shared__ array) and
//      thread 0 writes the block's partial to global memory;
//   3. thread 0 bumps a global counter with an acquire-release atomic, which publishes its
//      partial; the block that brings the counter to gridDim.x is the last one: it reads every partial, in block order, combines
//      them the same way, writes the result and resets the counter to 0 for the next launch.
// No float atomics are used, and every partial is combined in a fixed order, so for the same
// input and the same GPU the result is bitwise identical on every run.
//
// TUNING KNOBS (all in namespace tuning below):
//   kBlockThreads  threads per block (multiple of 32). 256 is a good default on sm_75..sm_90.
//   kLoads         16-byte loads in flight per thread per step. More hides more memory latency
//                  and costs registers; 4 saturates HBM3 on an H100 with a full grid.
//   grid size      ReducePlan asks the occupancy calculator for resident blocks per SM x SM
//                  count (warpkit::occupancyGridSize), then each launch caps it so that no block
//                  is left without a full vector to read. More blocks than fit at once only add
//                  partials; fewer leave bandwidth unused.
//
// Types: float and double reduce in their own type; int sums accumulate in 64-bit (long long),
// so they cannot overflow below 2^63 (and the max stays int). Max propagates NaN.
// Build: make build/samples/device_reduce   Run: ./build/samples/device_reduce
#include <warpkit/grid.cuh>
#include <warpkit/reduce.cuh>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

namespace tuning {
constexpr int kBlockThreads = 256; // threads per block
constexpr int kLoads = 4;          // 16-byte loads in flight per thread
} // namespace tuning

// ---- the operator: sum and max in one pass -------------------------------------------------
// S is the sum's type (long long for int input), M the element's arithmetic type.
template <typename S, typename M> struct SumMax {
    S sum;
    M max;
};
struct SumMaxOp {
    // fold one element into a partial (called by gridAccumulate)
    template <typename S, typename M>
    __host__ __device__ SumMax<S, M> operator()(SumMax<S, M> a, M x) const {
        return {a.sum + (S)x, warpkit::Max{}(a.max, x)};
    }
    // combine two partials (called by the warp and block combine)
    template <typename S, typename M>
    __host__ __device__ SumMax<S, M> operator()(SumMax<S, M> a, SumMax<S, M> b) const {
        return {a.sum + b.sum, warpkit::Max{}(a.max, b.max)};
    }
};

// Bitwise equality of two results, field by field: memcmp of the whole struct would also compare
// the padding after `max` (SumMax<long long, int> has 4 bytes of it), which nothing initialises.
template <typename S, typename M> inline bool sameBits(const SumMax<S, M>& a, const SumMax<S, M>& b) {
    return memcmp(&a.sum, &b.sum, sizeof(S)) == 0 && memcmp(&a.max, &b.max, sizeof(M)) == 0;
}

// ---- block combine: thread 0 gets op over all BlockThreads values ---------------------------
template <int BlockThreads, typename Acc, typename Op> __device__ Acc blockCombine(Acc v, Op op) {
    static_assert(BlockThreads % 32 == 0 && BlockThreads <= 1024, "BlockThreads: 32..1024, a multiple of 32");
    constexpr int kWarps = BlockThreads / 32;
    __shared__ Acc warpPartial[kWarps];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warpkit::warpReduce(v, op); // every lane of the warp gets the warp's value
    if (kWarps == 1) return v;
    if (lane == 0) warpPartial[warp] = v;
    __syncthreads();
    if (warp == 0) v = warpkit::warpReduce(warpPartial[lane < kWarps ? lane : 0], op, kWarps);
    return v; // valid in thread 0
}

// Read a value another block wrote, from L2 (ld.global.cg), never from this SM's L1.
template <typename Acc> __device__ Acc loadFromL2(const Acc* p) {
    static_assert(sizeof(Acc) % 4 == 0, "Acc must be a whole number of 32-bit words");
    constexpr int kWords = sizeof(Acc) / 4;
    unsigned w[kWords];
#pragma unroll
    for (int i = 0; i < kWords; ++i) w[i] = __ldcg(reinterpret_cast<const unsigned*>(p) + i);
    Acc a;
    memcpy(&a, w, sizeof(Acc));
    return a;
}

// atomicAdd(counter, 1) with acquire-release semantics at GPU scope (sm_70+): the writes this thread
// made before it are visible to whoever later observes the new count, and this thread observes
// the writes released by the increments it follows.
__device__ __forceinline__ unsigned arriveAcqRel(unsigned* counter) {
    unsigned old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(counter) : "memory");
    return old;
}

// ---- the kernel --------------------------------------------------------------------------------
// in[0..n) is reduced with op into *out. init must be op's identity. partials holds gridDim.x
// values; *done must be 0 before the first launch (the kernel leaves it 0 again).
template <int BlockThreads, int Loads, typename T, typename Acc, typename Op>
__global__ void __launch_bounds__(BlockThreads)
deviceReduceKernel(const T* in, unsigned long long n, Acc init, Op op, Acc* partials,
                   unsigned* done, Acc* out) {
    // 1. this thread's share (grid-stride, Loads x 16 bytes in flight)
    Acc acc = warpkit::gridAccumulate<Loads>(in, n, init, op);
    // 2. this block's partial
    acc = blockCombine<BlockThreads>(acc, op);
    __shared__ bool isLast;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = acc;
        // Release: the partial is visible device-wide before the counter moves. Acquire: the last
        // block sees every other block's partial. One acq_rel atomic does both (no separate fence).
        isLast = arriveAcqRel(done) == gridDim.x - 1;
    }
    __syncthreads(); // thread 0's acquire + this barrier order the partial loads below after it
    if (!isLast) return;
    // 3. the last block: every partial, in block order. The loads of a batch are all issued
    //    before any is used (kFinalLoads L2 round trips overlap), since this step is pure latency.
    acc = init;
    constexpr int kFinalLoads = sizeof(Acc) <= 8 ? 8 : 4; // fewer for wide partials: registers
    for (unsigned b0 = threadIdx.x; b0 < gridDim.x; b0 += kFinalLoads * BlockThreads) {
        Acc r[kFinalLoads];
#pragma unroll
        for (int k = 0; k < kFinalLoads; ++k)
            if (b0 + k * BlockThreads < gridDim.x) r[k] = loadFromL2(partials + b0 + k * BlockThreads);
#pragma unroll
        for (int k = 0; k < kFinalLoads; ++k)
            if (b0 + k * BlockThreads < gridDim.x) acc = op(acc, r[k]);
    }
    acc = blockCombine<BlockThreads>(acc, op);
    if (threadIdx.x == 0) {
        *out = acc;
        *done = 0; // ready for the next launch
    }
}

// ---- host side: plan once, launch many times --------------------------------------------------
template <typename T, typename Acc, typename Op> struct ReducePlan {
    int maxBlocks;   // resident blocks of the whole GPU (occupancy x SMs)
    Acc* partials;   // maxBlocks partial values
    unsigned* done;  // the last-block counter
};

template <int BlockThreads = tuning::kBlockThreads, int Loads = tuning::kLoads, typename T, typename Acc, typename Op>
cudaError_t makePlan(ReducePlan<T, Acc, Op>* plan) {
    auto kernel = deviceReduceKernel<BlockThreads, Loads, T, Acc, Op>;
    cudaError_t e = warpkit::occupancyGridSize(&plan->maxBlocks, kernel, BlockThreads);
    if (e == cudaSuccess) e = cudaMalloc((void**)&plan->partials, plan->maxBlocks * sizeof(Acc));
    if (e == cudaSuccess) e = cudaMalloc((void**)&plan->done, sizeof(unsigned));
    if (e == cudaSuccess) e = cudaMemset(plan->done, 0, sizeof(unsigned));
    return e;
}
template <typename T, typename Acc, typename Op> void freePlan(ReducePlan<T, Acc, Op>* plan) {
    cudaFree(plan->partials);
    cudaFree(plan->done);
}

/// One launch: *out (device memory) = op over in[0..n), starting from init (op's identity).
template <int BlockThreads = tuning::kBlockThreads, int Loads = tuning::kLoads, typename T, typename Acc, typename Op>
cudaError_t deviceReduce(const ReducePlan<T, Acc, Op>& plan, const T* in, unsigned long long n, Acc init,
                         Op op, Acc* out, cudaStream_t stream = 0) {
    // Grid: the whole GPU, but no more blocks than there are 16-byte vectors per BlockThreads.
    const unsigned long long perBlock = (unsigned long long)BlockThreads * warpkit::vectorElems<T>();
    unsigned long long useful = (n + perBlock - 1) / perBlock;
    int blocks = useful < (unsigned long long)plan.maxBlocks ? (int)useful : plan.maxBlocks;
    if (blocks < 1) blocks = 1;
    deviceReduceKernel<BlockThreads, Loads><<<blocks, BlockThreads, 0, stream>>>(in, n, init, op, plan.partials,
                                                                                 plan.done, out);
    return cudaGetLastError();
}

#ifndef DEVICE_REDUCE_NO_MAIN
// ---- self-check against the CPU -----------------------------------------------------------------
#define CHECK(call)                                                                          \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess) {                                                             \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

// Device-side fill, with the 64-bit grid-stride loop: int in [0, 2^20) (so an int sum of 2^28
// of them needs 64 bits), floats in [-1, 1).
template <typename T> __global__ void fillKernel(T* p, unsigned long long n, unsigned long long seed) {
    WARPKIT_GRID_STRIDE_LOOP(i, n) {
        unsigned long long z = (i + seed) * 0x9e3779b97f4a7c15ull;
        z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ull;
        z ^= z >> 29;
        if constexpr (!warpkit::detail::Arith<T>::is_float) p[i] = (T)(z >> 44);
        else p[i] = (T)((double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0);
    }
}

template <typename T, typename S> static bool check(unsigned long long n, const char* name) {
    typedef SumMax<S, T> Acc;
    ReducePlan<T, Acc, SumMaxOp> plan;
    CHECK(makePlan(&plan));
    T* in;
    Acc* out;
    CHECK(cudaMalloc((void**)&in, (n ? n : 1) * sizeof(T)));
    CHECK(cudaMalloc((void**)&out, 3 * sizeof(Acc)));
    fillKernel<<<1024, 256>>>(in, n, 12345);
    CHECK(cudaGetLastError());

    const Acc init = {S(0), warpkit::detail::Arith<T>::lowest()}; // identity of (sum, max)
    for (int run = 0; run < 3; ++run) CHECK(deviceReduce(plan, in, n, init, SumMaxOp{}, out + run));
    Acc got[3];
    CHECK(cudaMemcpy(got, out, sizeof(got), cudaMemcpyDeviceToHost));

    // CPU reference: sum in long double / exact int64, max exactly.
    std::vector<T> h(n);
    CHECK(cudaMemcpy(h.data(), in, n * sizeof(T), cudaMemcpyDeviceToHost));
    long double refSum = 0, absSum = 0;
    T refMax = init.max;
    for (unsigned long long i = 0; i < n; ++i) {
        refSum += h[i];
        absSum += h[i] < 0 ? -(long double)h[i] : (long double)h[i];
        refMax = h[i] > refMax ? h[i] : refMax;
    }
    // Float sums differ from the exact one by rounding only: allow 4 unit roundoffs of sum|x|
    // (the observed error is far smaller). Int sums must be exact.
    const double eps = sizeof(T) == 8 ? 1.1e-16 : sizeof(S) == 4 ? 6e-8 : 0.0;
    const bool sumOk = fabsl((long double)got[0].sum - refSum) <= 4 * eps * absSum;
    const bool maxOk = got[0].max == refMax;
    const bool same = sameBits(got[0], got[1]) && sameBits(got[0], got[2]);
    printf("  %-6s n=%-10llu sum=%-22.10Lg max=%-14.8g %s %s\n", name, n, (long double)got[0].sum,
           (double)got[0].max, sumOk && maxOk ? "ok" : "WRONG", same ? "bitwise-same x3" : "NOT DETERMINISTIC");
    if (!sumOk) fprintf(stderr, "    sum: got %.17Lg want %.17Lg\n", (long double)got[0].sum, refSum);
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
    freePlan(&plan);
    return sumOk && maxOk && same;
}

int main() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        printf("device_reduce: no CUDA device\n");
        return 0;
    }
    const unsigned long long sizes[] = {0, 1, 31, (1ull << 20) + 7, 1ull << 24, 1ull << 28};
    bool ok = true;
    printf("device_reduce: sum and max in one launch (block %d, %d loads in flight)\n",
           tuning::kBlockThreads, tuning::kLoads);
    for (unsigned long long n : sizes) {
        ok &= check<float, float>(n, "float");
        ok &= check<double, double>(n, "double");
        ok &= check<int, long long>(n, "int");
    }
    printf("device_reduce: %s\n", ok ? "all checks passed" : "FAILED");
    return ok ? 0 : 1;
}
#endif
