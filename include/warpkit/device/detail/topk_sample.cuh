// warpkit/device/detail/topk_sample.cuh: rowSample's kernel, which draws one token a row from its
// ranked top-k candidates (rowTopK's output). Internal: include warpkit/device/topk.cuh.
//
// A block a row (grid-stride), 256 threads; thread t holds ranks 8t .. 8t + 7 (k <= 2048), so the
// sums below are block scans in a fixed order: the same bits for a row whatever the grid, and
// whatever plan selected the candidates (their values and order are one fixed answer). For
// k <= 256 a warp a row (lane t holds ranks 8t .. 8t + 7) draws the same ranks: the block's scan
// would only add exact zeros from the other warps.
//   1. weights: w_r = exp((l_r - l_0) / T) (l_0 the largest logit; an infinite l_0 weighs the
//      +inf logits 1 and the rest 0); min-p drops w_r < minP (w_0 = 1, so min-p is relative to it);
//   2. top-p: keeps rank r while the weight of the ranks before it is below topP x their total;
//   3. draw: u = Philox4x32-10 draw `offset` of stream (seed, row), in (0, 1] (detail/philox.cuh: the
//      word and mapping cuRAND's curand_init(seed, row, offset) + curand_uniform give); the token is
//      the first kept rank whose inclusive weight sum reaches u x the kept total.
// A NaN logit ranks first (rowTopK's order) and is returned as is; T = 0, and a row of -inf only,
// return rank 0 (the argmax, the lowest column on ties).
#pragma once

#include "../../block/reduce.cuh"
#include "../../block/scan.cuh"
#include "../../warp/reduce.cuh"
#include "../../warp/scan.cuh"
#include "../../detail/philox.cuh"
#include "topk_plan.cuh"

namespace warpkit {
namespace detail {

constexpr int kSamplePerThread = 8;                    // candidates a thread: k <= kTopKThreads x 8 = kTopKMaxK
constexpr int kSampleWarpMaxK = 32 * kSamplePerThread; // k a warp's draw holds (rowSampleWarpKernel)

/// rowSample's scalars; seed and offset are read from the pointers when those are not null.
struct SampleParams {
    float temperature, topP, minP;
    int k;
    unsigned long long seed, offset;
    const unsigned long long *seedPtr, *offsetPtr;
};

/// Whether rowSample's scalars are in range: 0 <= temperature (not NaN), 0 < topP <= 1, 0 <= minP <= 1.
inline bool sampleArgsOk(float temperature, float topP, float minP) {
    return temperature >= 0.f && temperature <= __builtin_huge_valf() && topP > 0.f && topP <= 1.f && minP >= 0.f &&
           minP <= 1.f;
}

/// Weight of a logit l below the row's largest, top (stage 1).
WARPKIT_DEVICE float sampleWeight(float l, float top, float temperature) {
    if (l == top) return 1.f; // rank 0 (and its equals) weigh 1: the kept set is never empty
    if (top == __builtin_huge_valf() || l == -__builtin_huge_valf()) return 0.f;
    return expf((l - top) / temperature);
}

/// Exclusive sum over the draw's threads (a warp when Threads = 32, else the block) and its total.
/// With k <= kSampleWarpMaxK only the first warp holds nonzero weights, and the block's scan then
/// adds exact zeros to the first warp's scan: a warp and a block draw the same bits.
template <int Threads> WARPKIT_DEVICE float sampleExclusiveSum(float v, float& total) {
    if constexpr (Threads == 32) return warpExclusiveScan(v, Sum{}, blockScanInit<Sum, float>(), total);
    else return blockExclusiveSum<Threads>(v, total);
}
template <int Threads> WARPKIT_DEVICE int sampleMin(int v) {
    if constexpr (Threads == 32) return warpReduceMin(v);
    else return blockReduceMin<Threads>(v);
}
template <int Threads> WARPKIT_DEVICE int sampleMax(int v) {
    if constexpr (Threads == 32) return warpReduceMax(v);
    else return blockReduceMax<Threads>(v);
}

/// The rank drawn from a row's ranked candidates v[0 .. k) (1 <= k <= kTopKMaxK; values of T in
/// global or shared memory, read only) with the draw `offset` of stream (seed, row): stages 1-3
/// above; rank 0 for a NaN or -inf top, T = 0 or k = 1. Threads = kTopKThreads: every thread of the
/// block calls; Threads = 32 (k <= kSampleWarpMaxK): the 32 lanes of one warp call. All of them
/// converged; every caller gets the rank, the same for both forms.
template <int Threads = kTopKThreads, typename T>
WARPKIT_DEVICE int sampleRank(const T* v, int k, const SampleParams& sp, unsigned long long seed,
                              unsigned long long offset, long long row) {
    static_assert(Threads == 32 || Threads == kTopKThreads, "sampleRank: Threads must be 32 or kTopKThreads");
    constexpr int C = kSamplePerThread, BT = Threads;
    const int t = Threads == 32 ? (int)laneId() : (int)threadIdx.x;
    const float top = Arith<T>::to_acc(v[0]);
    if (top != top || top == -__builtin_huge_valf() || sp.temperature == 0.f || k == 1) return 0; // NaN, -inf, argmax
    // 1. weights, min-p
    float w[C];
#pragma unroll
    for (int j = 0; j < C; ++j) {
        const int r = t * C + j;
        w[j] = r < k ? sampleWeight(Arith<T>::to_acc(v[r]), top, sp.temperature) : 0.f;
        if (w[j] < sp.minP) w[j] = 0.f;
    }
    // 2. top-p
    float mine = 0.f, total = 0.f;
#pragma unroll
    for (int j = 0; j < C; ++j) mine += w[j];
    float run = sampleExclusiveSum<BT>(mine, total);
    const float cut = sp.topP * total;
#pragma unroll
    for (int j = 0; j < C; ++j) {
        const float wj = w[j];
        if (!(run < cut)) w[j] = 0.f;
        run += wj;
    }
    // 3. draw
    mine = 0.f;
#pragma unroll
    for (int j = 0; j < C; ++j) mine += w[j];
    run = sampleExclusiveSum<BT>(mine, total);
    const float target = philoxUniform(seed, (unsigned long long)row, offset) * total;
    int pick = 0x7fffffff, last = -1;
#pragma unroll
    for (int j = 0; j < C; ++j) {
        run += w[j];
        if (w[j] > 0.f) {
            last = t * C + j;
            if (run >= target && pick == 0x7fffffff) pick = t * C + j;
        }
    }
    pick = sampleMin<BT>(pick);
    last = sampleMax<BT>(last); // rounding may leave the target above every sum: the last kept
    return pick != 0x7fffffff ? pick : last;
}

/// rowSample's draw: a block a row (grid-stride) over rowTopK's candidates values / indices (rows x k).
template <typename T, typename Idx> __global__ void __launch_bounds__(kTopKThreads)
    rowSampleKernel(const T* values, const int* indices, Idx* out, long long rows, SampleParams sp) {
    const unsigned long long seed = sp.seedPtr ? *sp.seedPtr : sp.seed;
    const unsigned long long offset = sp.offsetPtr ? *sp.offsetPtr : sp.offset;
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const int pick = sampleRank(values + row * sp.k, sp.k, sp, seed, offset, row);
        if (threadIdx.x == 0) out[row] = (Idx)indices[row * sp.k + pick];
    }
}

/// rowSample's draw for k <= kSampleWarpMaxK: a warp a row (grid-stride over the warps), the same
/// ranks as rowSampleKernel without its block barriers.
template <typename T, typename Idx> __global__ void __launch_bounds__(kTopKThreads)
    rowSampleWarpKernel(const T* values, const int* indices, Idx* out, long long rows, SampleParams sp) {
    const unsigned long long seed = sp.seedPtr ? *sp.seedPtr : sp.seed;
    const unsigned long long offset = sp.offsetPtr ? *sp.offsetPtr : sp.offset;
    const long long warps = (long long)gridDim.x * (kTopKThreads / 32);
    for (long long row = ((long long)blockIdx.x * kTopKThreads + threadIdx.x) / 32; row < rows; row += warps) {
        const int pick = sampleRank<32>(values + row * sp.k, sp.k, sp, seed, offset, row);
        if (laneId() == 0) out[row] = (Idx)indices[row * sp.k + pick];
    }
}

} // namespace detail
} // namespace warpkit
