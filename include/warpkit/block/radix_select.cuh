// warpkit/block/radix_select.cuh: the k-th largest of the unsigned keys a block holds, by radix
// select on 8-bit digits from the top; and its two building blocks, for kernels of your own.
//
//   blockRadixSelect<BT>(keys[K], k, scratch)          {threshold, selected}: the keys >= threshold
//   radixDigitCount(keys[K], prefix, mask, shift, hist) add this thread's matching keys to a histogram
//   radixFindBucket(hist, k)                            the digit bucket holding the k-th largest key
//
// Keys: unsigned or unsigned long long (packed top-k keys: warp/topk.cuh's topkPack), K of them
// in each thread's registers. The key 0 marks an empty slot: it is never counted or selected.
//
// blockRadixSelect. Pass p looks at the digit (key >> shift) & 255, shift = bits - 8 (p + 1), of the
// keys whose higher digits equal the prefix found so far: it counts them in a shared histogram of
// 256 buckets, finds the bucket holding the k-th largest, and appends that digit to the prefix. It
// stops early when the bucket holds exactly the keys still needed (then every key >= prefix, lower
// digits 0, is selected), or after the last digit. Result: `selected` keys are >= `threshold`;
// selected = min(k, nonzero keys) when the keys are distinct (the packed keys are); with equal
// keys selected may exceed k by the copies of the k-th largest key (threshold is then that key).
// For random data the passes stop after 3-4 digits; equal keys take every digit.
// Cost per pass: one shared atomic per matching key, two barriers, and a 256-bucket scan that every
// warp does for itself (so the result needs no broadcast).
//
// Participation: every thread of the block calls blockRadixSelect (converged; the block a whole
// number of warps; BT its size, or 0 for blockDim at run time), with the same k; every thread gets
// the result. The scratch (BlockRadixScratch, __shared__) may be reused by the next call at once.
#pragma once

#include "../warp/scan.cuh"
#include "../warp/vote.cuh"

namespace warpkit {

/// Shared scratch of blockRadixSelect: two histograms (one counted while the other is cleared).
struct BlockRadixScratch {
    alignas(16) unsigned hist[2][256];
};

/// blockRadixSelect's answer: `selected` keys are >= threshold (see the header comment).
template <typename Key> struct RadixSelectResult {
    Key threshold;
    int selected;
};

/// The bucket holding the k-th largest key of a histogram: buckets above it hold `above` keys (< k),
/// it holds `count` (above + count >= k); total: all keys counted. bucket = -1 when total < k.
struct RadixBucket {
    int bucket;
    unsigned above, count, total;
};

/// Adds to hist (256 counters, shared or global) the keys of this thread that are nonzero and
/// whose bits under `mask` equal `prefix`, each to bucket (key >> shift) & 255. Any thread calls,
/// with its own keys; hist must be zeroed before the first counter and read after the last one.
template <int K, typename Key>
WARPKIT_DEVICE void radixDigitCount(const Key (&keys)[K], Key prefix, Key mask, int shift, unsigned* hist) {
#pragma unroll
    for (int j = 0; j < K; ++j)
        if (keys[j] != 0 && (keys[j] & mask) == prefix) atomicAdd(&hist[(unsigned)(keys[j] >> shift) & 255u], 1u);
}

/// Finds the bucket of a 256-bucket histogram (hist: shared memory, complete) holding the k-th
/// largest key, counting from bucket 255 down. All 32 lanes of a warp call (converged); every lane
/// gets the answer (several warps may call at once; each reads hist for itself).
WARPKIT_DEVICE RadixBucket radixFindBucket(const unsigned* hist, unsigned k) {
    const unsigned lane = laneId();
    unsigned h[8], mine = 0;        // lane l: buckets 255 - 8l down to 248 - 8l
    if (((size_t)hist & 15) == 0) { // two 16-byte loads a lane: 16 wavefronts a warp instead of 64 (8-way conflicts)
        const uint4 a = reinterpret_cast<const uint4*>(hist + 248 - 8 * lane)[0];
        const uint4 c = reinterpret_cast<const uint4*>(hist + 248 - 8 * lane)[1];
        h[0] = c.w, h[1] = c.z, h[2] = c.y, h[3] = c.x, h[4] = a.w, h[5] = a.z, h[6] = a.y, h[7] = a.x;
    } else {
#pragma unroll
        for (int i = 0; i < 8; ++i) h[i] = hist[255 - 8 * lane - i];
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) mine += h[i];
    unsigned total = 0;
    const unsigned upTo = warpInclusiveSum(mine, total); // keys in this lane's buckets and above
    RadixBucket r = {-1, 0, 0, total};
    if (k == 0 || k > total) return r;
    const unsigned crossing = __ballot_sync(WARPKIT_FULL_MASK, upTo >= k);
    const int src = __ffs(crossing) - 1;
    unsigned run = upTo - mine;
    int bucket = 0;
    unsigned above = 0, count = 0;
    bool found = false;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        if (!found && run + h[i] >= k) {
            bucket = 255 - 8 * (int)lane - i;
            above = run;
            count = h[i];
            found = true;
        }
        run += h[i];
    }
    r.bucket = __shfl_sync(WARPKIT_FULL_MASK, bucket, src);
    r.above = __shfl_sync(WARPKIT_FULL_MASK, above, src);
    r.count = __shfl_sync(WARPKIT_FULL_MASK, count, src);
    return r;
}

/// Radix select of the block's keys (K a thread, in registers): the k largest nonzero keys are
/// the result's `selected` keys >= threshold (see the header comment; selected = 0 when every key
/// is 0 or k < 1). Every thread calls (converged) with the same k; every thread gets the result.
template <int BlockThreads = 0, int K, typename Key>
WARPKIT_DEVICE RadixSelectResult<Key> blockRadixSelect(const Key (&keys)[K], int k, BlockRadixScratch& s) {
    WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockRadixSelect");
    static_assert(BlockThreads % 32 == 0, "blockRadixSelect: template parameter BlockThreads must be a whole number "
                                          "of warps (32 .. 1024) or 0 (blockDim at run time)");
    static_assert(detail::IsSame<Key, unsigned>::value || detail::IsSame<Key, unsigned long long>::value,
                  "blockRadixSelect: key type Key must be unsigned or unsigned long long");
    constexpr int kBits = 8 * (int)sizeof(Key);
    const unsigned threads = BlockThreads > 0 ? BlockThreads : blockDim.x * blockDim.y * blockDim.z;
    const unsigned t = linearThreadId();
    for (unsigned i = t; i < 512; i += threads) (&s.hist[0][0])[i] = 0;
    __syncthreads();
    Key prefix = 0, mask = 0;
    unsigned need = k > 0 ? (unsigned)k : 0u, aboveAll = 0;
    RadixBucket b = {-1, 0, 0, 0};
    int p = 0;
    for (int shift = kBits - 8; shift >= 0; shift -= 8, ++p) {
        unsigned* hist = s.hist[p & 1];
        radixDigitCount(keys, prefix, mask, shift, hist);
        __syncthreads();
        b = radixFindBucket(hist, need);
        if (p == 0 && need > b.total) { // fewer nonzero keys than k: select them all
            need = b.total;
            if (need == 0) { // no key at all (uniform): every warp has read hist before a next call clears it
                __syncthreads();
                return {Key(0), 0};
            }
            b = radixFindBucket(hist, need);
        }
        need -= b.above;
        aboveAll += b.above;
        prefix |= (Key)b.bucket << shift;
        mask |= (Key)255 << shift;
        for (unsigned i = t; i < 256; i += threads) s.hist[(p + 1) & 1][i] = 0;
        __syncthreads();
        if (b.count == need) break; // the whole bucket is selected: lower digits need not be looked at
    }
    return {prefix, (int)(aboveAll + b.count)};
}

} // namespace warpkit
