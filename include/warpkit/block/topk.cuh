// warpkit/block/topk.cuh: the k largest (or smallest) of the values a block holds, with their
// indices, ranked; and the stages it is made of, for kernels of your own.
//
//   blockTopK<BT, K, MaxK>(v[K], index[K], k, largest, outValues, outIndex, scratch)   ranks 0 .. n-1
//   blockTopKSelect<BT, K, MaxK>(keys[K], k, scratch)   the k largest packed keys into scratch.keys, unsorted
//   blockTopKSort<BT, MaxK>(scratch, n)                 sort scratch.keys[0 .. n) (largest first)
//
// The order is warp/topk.cuh's: NaN above +inf, -0.0 just below +0.0, equal values by lowest
// index. Values are packed with their indices into 64-bit keys (topkPack), which are distinct, so
// the answer is one fixed set in one fixed order, whatever the block's layout.
//
// How it works. blockRadixSelect (block/radix_select.cuh) finds the threshold above which exactly
// n = min(k, values) packed keys lie; each thread appends its selected keys to scratch.keys with a
// shared atomic (their order there varies, their set does not); blockTopKSort then sorts the n keys
// with a bitonic network over the next power of two in shared memory (empty slots 0 sort last).
//
// Sizes: K (values a thread) 1 .. 64; MaxK (the largest k of the scratch) a power of two, 1 .. 8192;
// k <= MaxK. Scratch: BlockTopKScratch<MaxK>, __shared__, 8 * MaxK + 2 KB.
//
// Participation: every thread of the block calls (converged; the block a whole number of warps;
// BT its size or 0 for blockDim), with the same k and largest; the outputs are written by the block
// (any memory the block may write: shared, or global), and every thread gets the returned count.
#pragma once

#include "radix_select.cuh"
#include "../warp/topk.cuh"

namespace warpkit {

/// Shared scratch of the block top-k: the radix histograms and the selected packed keys.
template <int MaxK> struct BlockTopKScratch {
    BlockRadixScratch select;
    unsigned long long keys[MaxK];
    int count;
};

/// Compile-time check of blockTopK's sizes.
#define WARPKIT_CHECK_BLOCK_TOPK(BT, K, MaxK, fn)                                                         \
    WARPKIT_CHECK_BLOCK_THREADS(BT, fn);                                                                  \
    static_assert((BT) % 32 == 0, fn ": template parameter BlockThreads must be a whole number of warps " \
                                     "(32 .. 1024) or 0 (blockDim at run time)");                         \
    static_assert((K) >= 1 && (K) <= 64, fn ": template parameter K (values a thread) must be 1 .. 64");  \
    static_assert((MaxK) >= 1 && (MaxK) <= 8192 && ((MaxK) & ((MaxK)-1)) == 0,                            \
                  fn ": template parameter MaxK (largest k) must be a power of two, 1 .. 8192")

/// The k largest nonzero packed keys of the block's keys[K] go to s.keys[0 .. n), unsorted, n =
/// min(k, nonzero keys) (k <= MaxK); returns {threshold, n}: the keys >= threshold are those n.
/// Every thread calls (converged) with the same k; every thread gets the result and may read
/// s.keys[0 .. n) on return.
template <int BlockThreads = 0, int K, int MaxK> WARPKIT_DEVICE RadixSelectResult<unsigned long long>
blockTopKSelect(const unsigned long long (&keys)[K], int k, BlockTopKScratch<MaxK>& s) {
    WARPKIT_CHECK_BLOCK_TOPK(BlockThreads, K, MaxK, "blockTopKSelect");
    WARPKIT_DEBUG_CHECK(k <= MaxK, "blockTopKSelect: k exceeds the scratch's MaxK");
    if (linearThreadId() == 0) s.count = 0; // ordered before the appends by blockRadixSelect's barriers
    const RadixSelectResult<unsigned long long> r = blockRadixSelect<BlockThreads>(keys, k < MaxK ? k : MaxK, s.select);
    if (r.selected == 0) return r;
#pragma unroll
    for (int j = 0; j < K; ++j) {
        const bool take = keys[j] != 0 && keys[j] >= r.threshold;
        // one shared atomic per warp and register: the warp's takers get consecutive slots
        const unsigned ballot = __ballot_sync(WARPKIT_FULL_MASK, take);
        if (ballot == 0) continue;
        const unsigned lane = laneId();
        int base = 0;
        if (lane == (unsigned)(__ffs(ballot) - 1)) base = atomicAdd(&s.count, __popc(ballot));
        base = __shfl_sync(WARPKIT_FULL_MASK, base, __ffs(ballot) - 1);
        if (take) s.keys[base + __popc(ballot & laneMaskLt())] = keys[j];
    }
    __syncthreads();
    return r;
}

/// Sorts s.keys[0 .. n) largest first (n <= MaxK), padding up to the next power of two with empty
/// keys (0). Every thread calls (converged) with the same n; the sorted keys are readable by every
/// thread on return.
template <int BlockThreads = 0, int MaxK> WARPKIT_DEVICE void blockTopKSort(BlockTopKScratch<MaxK>& s, int n) {
    WARPKIT_CHECK_BLOCK_TOPK(BlockThreads, 1, MaxK, "blockTopKSort");
    const unsigned threads = BlockThreads > 0 ? BlockThreads : blockDim.x * blockDim.y * blockDim.z;
    const unsigned t = linearThreadId();
    int p = 1;
    while (p < n) p *= 2;
    for (int i = n + (int)t; i < p; i += (int)threads) s.keys[i] = kTopKEmpty;
    __syncthreads();
    for (int size = 2; size <= p; size *= 2)
        for (int stride = size / 2; stride > 0; stride /= 2) {
            for (int i = (int)t; i < p / 2; i += (int)threads) {
                const int lo = 2 * i - (i & (stride - 1)), hi = lo + stride;
                const bool descending = size == p || (lo & size) == 0;
                const unsigned long long a = s.keys[lo], b = s.keys[hi];
                if (descending ? a < b : b < a) {
                    s.keys[lo] = b;
                    s.keys[hi] = a;
                }
            }
            __syncthreads();
        }
}

/// The k largest (largest = true) or smallest values of the block's v[K] (value v[j] of a thread
/// has index index[j]: distinct, below 0xffffffff; kTopKNoIndex marks an empty slot), ranked:
/// outValues[r], outIndex[r] for r = 0 .. n-1, n = min(k, values) returned (k <= MaxK). NaN comes
/// back as the canonical quiet NaN. Every thread calls (converged) with the same k and largest;
/// the block writes the outputs (readable by every thread after a barrier) and every thread gets n.
template <int BlockThreads = 0, int K, int MaxK, typename T>
WARPKIT_DEVICE int blockTopK(const T (&v)[K], const unsigned (&index)[K], int k, bool largest, T* outValues,
                             unsigned* outIndex, BlockTopKScratch<MaxK>& s) {
    WARPKIT_CHECK_TOPK_TYPE(T, "blockTopK");
    unsigned long long keys[K];
#pragma unroll
    for (int j = 0; j < K; ++j) keys[j] = index[j] == kTopKNoIndex ? kTopKEmpty : topkPack(v[j], index[j], largest);
    const int n = blockTopKSelect<BlockThreads>(keys, k, s).selected;
    blockTopKSort<BlockThreads>(s, n);
    const unsigned threads = BlockThreads > 0 ? BlockThreads : blockDim.x * blockDim.y * blockDim.z;
    for (int r = (int)linearThreadId(); r < n; r += (int)threads) {
        outValues[r] = topkUnpackValue<T>(s.keys[r], largest);
        outIndex[r] = topkUnpackIndex(s.keys[r]);
    }
    __syncthreads(); // s.keys may be reused by the next call
    return n;
}

} // namespace warpkit
