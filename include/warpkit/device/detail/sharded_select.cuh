// warpkit/device/detail/sharded_select.cuh: the kernels of the split top-k and sampler of
// device/sharded.cuh. Internal: include warpkit/device/sharded.cuh.
//
// rowTopKShardKernel: rowTopK's ranked candidates of a shard (rows x kLocal in the workspace, local
//   int columns) into the shard's rows x k block: global columns (+ shardBegin), ranks kLocal .. k-1
//   padded (index kShardNoIndex, value -inf for the largest, +inf for the smallest).
// The merge (rowTopKMergeKernel, rowSampleMergeKernel): a block a row (grid-stride), kTopKThreads
//   threads; the row's ranks x k candidates (<= kTopKMaxK) [rank][row][k] in gathered order:
//   1. load: each candidate's key into shared memory: 1 + its 32-bit order key (warp/topk.cuh's
//      topkOrderKey, inverted for the smallest), 0 for an absent one, so each rank's list is
//      descending and absent candidates rank last;
//   2. rank by counting: candidate j of rank r's list ranks j + (over the lists q < r: their keys >=
//      its key) + (over the lists q > r: their keys > its key), each count a binary search. Rank r
//      holds lower columns than rank q > r, and each list breaks ties by column, so this is the
//      order of the whole row: keys descending, ties to the lowest column (rowTopK's order);
//   3. ranks 0 .. k-1 written out (values copied bit for bit), or put in shared memory ranked and
//      drawn from by rowSample's per-row draw (detail/topk_sample.cuh: sampleRank).
#pragma once

#include "../topk.cuh"

namespace warpkit {

/// The index of an absent candidate in rowTopKShard's and rowTopKMerge's outputs.
constexpr long long kShardNoIndex = -1;

namespace detail {

constexpr int kShardFixThreads = 128;

/// Writes the shard's rows x k block from the rows x kl candidates cv / ci (rowTopK's, local
/// columns): column + begin for ranks below kl, (pad, kShardNoIndex) for the rest. A block a row
/// (grid-stride), its threads over the ranks.
template <typename T> __global__ void __launch_bounds__(kShardFixThreads)
    rowTopKShardKernel(const T* cv, const int* ci, T* values, long long* indices, long long rows, int kl, int k,
                       long long begin, bool largest) {
    const T pad = Arith<T>::from_acc(largest ? -__builtin_huge_valf() : __builtin_huge_valf());
    for (long long row = blockIdx.x; row < rows; row += gridDim.x)
        for (int j = (int)threadIdx.x; j < k; j += kShardFixThreads) {
            values[row * k + j] = j < kl ? cv[row * kl + j] : pad;
            indices[row * k + j] = j < kl ? begin + ci[row * kl + j] : kShardNoIndex;
        }
}

/// The offset in the gathered [ranks][rows][k] block of the row's candidate i (rank i / k, slot i % k).
/// Any thread, alone.
WARPKIT_DEVICE long long shardMergeAt(int i, int k, long long rows, long long row) {
    const int r = i / k;
    return ((long long)r * rows + row) * k + (i - r * k);
}

/// Stage 1: the merge key of each of the row's n candidates into keys[] (0: absent); returns how many
/// of the calling thread's candidates are present. Each thread alone (the caller puts the barrier).
template <typename T> WARPKIT_DEVICE int shardMergeLoad(const T* gv, const long long* gi, int n, int k, long long rows,
                                                        long long row, bool largest, unsigned long long* keys) {
    int present = 0;
    for (int i = (int)threadIdx.x; i < n; i += kTopKThreads) {
        const long long o = shardMergeAt(i, k, rows, row);
        const unsigned key = topkOrderKey(gv[o]);
        keys[i] = gi[o] < 0 ? 0ull : 1ull + (largest ? key : ~key);
        present += gi[o] < 0 ? 0 : 1;
    }
    return present;
}

/// How many of list[0 .. k) (descending) rank above key: greater, or equal too when `equalFirst`.
WARPKIT_DEVICE int shardMergeCount(const unsigned long long* list, int k, unsigned long long key, bool equalFirst) {
    int lo = 0, hi = k;
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        const unsigned long long v = list[mid];
        if (v > key || (equalFirst && v == key)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/// Stage 2: the rank in the whole row of candidate i of the ranks x k keys. Any thread, alone.
WARPKIT_DEVICE int shardMergeRank(const unsigned long long* keys, int ranks, int k, int i) {
    const int r = i / k;
    int rank = i - r * k;
    for (int q = 0; q < ranks; ++q)
        if (q != r) rank += shardMergeCount(keys + q * k, k, keys[i], q < r);
    return rank;
}

/// rowTopKMerge: ranks 0 .. k-1 of each row's gathered candidates into values / indices (rows x k).
template <typename T, typename Idx> __global__ void __launch_bounds__(kTopKThreads)
    rowTopKMergeKernel(const T* gv, const long long* gi, T* values, Idx* indices, int ranks, long long rows, int k,
                       bool largest) {
    __shared__ unsigned long long keys[kTopKMaxK];
    const int n = ranks * k;
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        __syncthreads(); // the previous row's keys are read
        shardMergeLoad(gv, gi, n, k, rows, row, largest, keys);
        __syncthreads();
        for (int i = (int)threadIdx.x; i < n; i += kTopKThreads) {
            const int rank = shardMergeRank(keys, ranks, k, i);
            if (rank >= k) continue;
            const long long o = shardMergeAt(i, k, rows, row);
            if (values) values[row * k + rank] = gv[o];
            indices[row * k + rank] = (Idx)gi[o];
        }
    }
}

/// rowSampleMerge: each row's gathered candidates ranked into shared memory (the first sp.k), then
/// rowSample's draw from them (sampleRank over the present ones): out[row] = the drawn column.
template <typename T, typename Idx> __global__ void __launch_bounds__(kTopKThreads)
    rowSampleMergeKernel(const T* gv, const long long* gi, Idx* out, int ranks, long long rows, SampleParams sp) {
    __shared__ unsigned long long keys[kTopKMaxK];
    __shared__ T value[kTopKMaxK];
    __shared__ long long index[kTopKMaxK];
    const unsigned long long seed = sp.seedPtr ? *sp.seedPtr : sp.seed;
    const unsigned long long offset = sp.offsetPtr ? *sp.offsetPtr : sp.offset;
    const int k = sp.k, n = ranks * k;
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        __syncthreads(); // the previous row's draw has read value[] and index[]
        const int present = blockReduceSum<kTopKThreads>(shardMergeLoad(gv, gi, n, k, rows, row, true, keys));
        for (int i = (int)threadIdx.x; i < n; i += kTopKThreads) {
            const int rank = shardMergeRank(keys, ranks, k, i);
            if (rank >= k) continue;
            const long long o = shardMergeAt(i, k, rows, row);
            value[rank] = gv[o];
            index[rank] = gi[o];
        }
        __syncthreads();
        const int pick = sampleRank(value, present < k ? (present > 0 ? present : 1) : k, sp, seed, offset, row);
        if (threadIdx.x == 0) out[row] = (Idx)index[pick];
    }
}

} // namespace detail
} // namespace warpkit
