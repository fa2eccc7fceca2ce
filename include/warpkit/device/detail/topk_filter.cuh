// warpkit/device/detail/topk_filter.cuh: the kernel of rules T1 / T2 (k <= 256, split S3): a threshold
// filter that reads each element once with 16-byte loads and keeps only those that can still reach
// the top k. Stages 0-2 (one warp's share) are in topk_filter_sample.cuh (0) and topk_filter_stages.cuh
// (1, 2), 3-5 and the kernel here.
// Internal: include warpkit/device/topk.cuh.
//
// Each warp of the block owns a buffer of packed keys in shared memory and a threshold: kth, the
// smallest of the k largest keys it has kept (before that: 0, or just below stage 0's bound), and cut,
// kth's value as a float (times sgn = -1 for the smallest, so one compare serves both orders). Per
// item (a row slice):
//   0. sample (topkSampleCut, k >= 2): the best value of each lane's vector slot (u = 0 .. 3) over
//      its warp's first rounds (one in kTopKSampleShare, at least one; more for k >= 32), as a 32-bit
//      order key; a block radix select (topkSampleSelect) finds Q, the k-th largest of the block's 1024
//      (duplicates count: the slots are distinct elements; fmaxf drops NaN unless all are), or a key
//      below it with zeroed low digits (an early stop; fp16 / bf16: after the top 16 bits, the only
//      ones their keys vary in; fp32 after 24), which still has k keys at or above it. k elements of the slice have
//      keys >= Q, so an element whose key is below Q is outside the top k, and every warp starts
//      with kth just below Q's packed keys ((Q << 32) - 1: every element of value Q still passes,
//      whatever its index) and cut one float step below Q's value (elements equal to it pass: other
//      warps' elements of that value may come first). A warp's buffer then only takes keys >= Q << 32,
//      so its flushes never lower kth below it. (A warp's own kth rises only at a flush, every
//      cap - k survivors, so without a start from the block's sample most rounds hold survivors.)
//   1. filter (topkWarpFilter): the warp reads its share of the slice in rising index order, in rounds
//      of kTopKFilterLoads 16-byte loads a lane (warp 0: the scalar head first, the tail last). The
//      common path (topkScanQuiet, the order a template argument): whole rounds none of whose
//      elements passes the raw compare !(v x sgn <= cut) (fp32: one compare an element; fp16 / bf16
//      on sm_80+: a packed max / min keeping NaN, one instruction for two elements; NaN passes). The
//      compare is strict: an element equal in value to kth comes later than kth's and so ranks below
//      it (ties do not pass). A flagged whole round is taken at once (topkTakeRound): each lane's
//      passing elements as a mask, and when the buffer holds them all (after a flush if needed), each
//      lane appends the packed keys (topkPack) above kth of its set bits one a step, in ballot order.
//      Else, and for the last, partial round, vector by vector: each vector's passing elements are
//      packed and those above kth appended (one warp scan a vector, no atomics; topkWarpTake). k = 1 (no stage 0,
//      topkBestFilter, topk_filter_best.cuh, its own kernel): the warp keeps a running best raised
//      once a flagged round (one warp max of the lanes' round keys); the lane holding it reads its
//      round again at the end for the index; no buffer, no flush;
//   2. flush (topkWarpFlush): when an append would pass the warp's cap (2k + 64, at most the buffer),
//      the warp alone (no block barrier) keeps the k largest of its buffer by a radix select over it
//      (from the highest bit where its keys differ) and raises kth and cut to the smallest of them;
//   3. merge (topkBlockMerge): the block selects the k largest of its warps' kept keys: with at most
//      128 of them, each of as many threads counts the keys above its own (its rank) and the k first
//      land in rank order (topkRankMerge); else the select of stage 5 over them; k = 1: a block max
//      (of every lane's key);
//   4. finish (topkFilterFinish): the outputs, ranked (topkSortKept, unless stage 3 ranked them), or
//      the mask. With several slices a row, each slice leaves its k keys in the workspace; the block
//      that finishes the row's last slice (an arrival word a row, after a barrier and thread 0's
//      acq_rel arrival; counted under the call's tag as device/reduce.cuh's and left clean by that
//      block: no memset) runs stage 5 and then 4;
//   5. slice merge (topkSelectCandidates): a block radix select over the row's slices x k keys (read
//      past L1, staged in shared memory), every thread counting each pass, digits from the highest bit
//      in which the keys vary, bits in which none do skipped; up to 128 keys ranked by counting
//      (topkRankSlices) instead; k = 1: a block max (topkBestOfSlices). Split S4 (few rows): the
//      slices hand off their keys ranked, and the merge first drops every key below a bound of the
//      row's k-th taken from the slices' own ranked keys (topkBoundSlices), then ranks or selects.
// An element is dropped only when its warp has kept k keys above it or the sample holds k elements
// at or above it (which then pass), so the set merged is a superset of the top k, and the answer
// (the k largest distinct packed keys) is the same bits for any split. For random data about
// k x (n - s) / s of a slice's n elements pass after a sample of s (k = 8, a 32000-column row:
// about 7 a warp); for k >= 2 ascending rows pass every element (a flush every cap - k): correct, slower.
#pragma once

#include "../reduce.cuh"
#include "topk_filter_best.cuh"
#include "topk_filter_sample.cuh"

namespace warpkit {
namespace detail {

/// Stage 4's sort: s.merge.sel.keys[0 .. n) (distinct, nonzero; n <= kTopKThreads) into rank order,
/// largest first. Each warp of the first ceil(n / 32) sorts its 32 keys in registers (warpBitonicSort,
/// no barrier; empty lanes hold 0, which ranks last) into a run in s.merge.stage; a key's rank is its
/// place in its own run plus, for each other run, the keys above it there (a binary search of the
/// sorted run, the runs searched independently). One barrier, where a block bitonic network
/// (blockTopKSort) has one a stage: 36 at n = 256. Every thread of the block calls (converged) with the
/// same n; the caller's barrier orders the ranked keys before their reads.
WARPKIT_DEVICE void topkSortKept(TopKFilterShared& s, int n) {
    static_assert(kTopKFilterMaxK <= kTopKThreads && kTopKThreads <= kTopKFilterStage,
                  "topk_filter: stage 4's sort holds one key a thread and one run a warp in the stage");
    const int t = (int)threadIdx.x, warp = t / 32, runs = (n + 31) / 32;
    unsigned long long key[1] = {t < n ? s.merge.sel.keys[t] : 0ull};
    if (warp < runs) {
        warpBitonicSort<1, true>(key); // lane l: the run's l-th largest
        s.merge.stage[t] = key[0];
    }
    __syncthreads(); // the runs are written, and sel.keys read, before the ranked writes
    if (key[0] == 0ull) return;
    int rank = (int)laneId();
#pragma unroll
    for (int v = 0; v < kTopKFilterWarps; ++v) {
        if (v >= runs || v == warp) continue;
        const unsigned long long* run = s.merge.stage + v * 32;
        // the run's keys above this one are a prefix of it: its length, 32 or found in 5 steps
        int above = 0;
        if (run[31] > key[0]) above = 32;
        else
#pragma unroll
            for (int step = 16; step > 0; step /= 2) above += run[above + step - 1] > key[0] ? step : 0;
        rank += above;
    }
    s.merge.sel.keys[rank] = key[0];
}

/// Stage 4: row `row`'s outputs from its n best keys in s.merge.sel.keys (n <= k; in rank order when
/// `ranked`): ranked values and indices, or the masked row. Every thread of the block calls (converged).
template <typename T> WARPKIT_DEVICE void topkFilterFinish(const TopKRows<T>& io, const TopKLevel& lv, long long row,
                                                           TopKFilterShared& s, int n, bool ranked) {
    const int t = (int)threadIdx.x;
    if (io.masked) {
        const unsigned long long least = blockReduceMin<kTopKThreads>(t < n ? s.merge.sel.keys[t] : ~0ull);
        topkMaskRow(io, lv.cols, row, least);
    } else {
        if (!ranked) {
            topkSortKept(s, n);
            __syncthreads(); // the ranked keys are written before they are read
        }
        if (t < n) topkWriteOutput(io, lv.k, row, t, s.merge.sel.keys[t]);
    }
    __syncthreads(); // s is read before the next item writes it
}

/// Stage 4 of a slice of a split row: its k keys to the workspace (zeros past n); returns true in the
/// block that finished the row's last slice (its reads then see every slice's writes). Every thread
/// calls. The row's arrival word needs no zeroing: it is counted under the call's tag
/// (device/reduce.cuh), and the last block leaves it clean for the next call.
/// Ordering (PTX memory model), as deviceReduceKernel's hand-off and cooperative groups' grid sync,
/// with no per-thread fence: the first barrier orders the block's stores before thread 0's arrival;
/// the arrival is an acq_rel atomic at gpu scope, whose release is cumulative (it covers every write
/// that precedes it in causality order, the other threads' through the barrier); the last arrival's
/// acquire reads the release sequence of every earlier slice's arrival (each one a read-modify-write
/// of the word), and the second barrier orders the last block's later reads (__ldcg) after it.
WARPKIT_DEVICE bool topkFilterHandOff(const TopKLevel& lv, long long row, long long item, TopKFilterShared& s, int n) {
    const int t = (int)threadIdx.x;
    if (t < lv.k) lv.cout[item * lv.k + t] = t < n ? s.merge.sel.keys[t] : 0ull;
    __syncthreads();
    if (t == 0) {
        s.last = arriveTagged(lv.done + row, lv.tag) == (unsigned)lv.slices - 1u;
        if (s.last) lv.done[row] = kArrivalClean; // every slice has arrived: none touches the word again
    }
    __syncthreads();
    return s.last != 0;
}

/// Stage 5's digit counts: adds to hist the keys of src[0 .. m) under prefix (bits under mask), by
/// their digit at shift. Shared: src is s.merge.stage, else the workspace (read past L1).
template <bool Shared> WARPKIT_DEVICE void topkCountDigits(const unsigned long long* src, int m,
                                                           unsigned long long prefix, unsigned long long mask,
                                                           int shift, unsigned* hist) {
    for (int i = (int)threadIdx.x; i < m; i += kTopKThreads) {
        const unsigned long long key = Shared ? src[i] : __ldcg(src + i);
        if (key != 0ull && (key & mask) == prefix) atomicAdd(&hist[(unsigned)(key >> shift) & 255u], 1u);
    }
}

/// Bitwise OR and AND, for warpReduce.
struct TopKBitOr {
    static constexpr bool commutative = true;
    WARPKIT_DEVICE unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a | b; }
};
struct TopKBitAnd {
    static constexpr bool commutative = true;
    WARPKIT_DEVICE unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a & b; }
};

/// Appends key to out[] when `take`, at a place counted by the shared counter (the warp's takes in
/// lane order, one atomic a warp; the order across warps is the atomics'). All 32 lanes of the warp
/// call (converged).
WARPKIT_DEVICE void topkAppend(bool take, unsigned long long key, unsigned long long* out, int& count) {
    const unsigned ballot = __ballot_sync(WARPKIT_FULL_MASK, take);
    if (ballot == 0u) return;
    const int leader = __ffs(ballot) - 1;
    int at = 0;
    if (laneId() == (unsigned)leader) at = atomicAdd(&count, __popc(ballot));
    at = __shfl_sync(WARPKIT_FULL_MASK, at, leader);
    if (take) out[at + __popc(ballot & laneMaskLt())] = key;
}

/// The k largest nonzero keys of cand[0 .. m) into s.merge.sel.keys[0 .. n), unsorted, n = min(k,
/// nonzero keys) returned. Stage 5: cand is a split row's slices x k candidates in the workspace (read
/// past L1); stage 3: cand is s.merge.stage (inShared). A block radix select: the keys' smallest, their
/// count and the bits in which they vary first (one pass, staging the keys in shared memory when m <=
/// kTopKFilterStage, and one barrier), then 8-bit digits from the highest varying bit down, skipping
/// bits that no two keys differ in (a 16-bit type's low key bits, the index's high bits), every thread
/// counting its share of each pass, until the bucket holds exactly the keys still needed; then every
/// key at or above the prefix found is appended. Every thread of the block calls (converged).
WARPKIT_DEVICE int topkSelectCandidates(const unsigned long long* cand, int m, int k, TopKFilterShared& s,
                                        bool inShared) {
    const int t = (int)threadIdx.x;
    const bool staged = inShared || m <= kTopKFilterStage;
    if (t < 256) s.merge.sel.select.hist[0][t] = 0; // ordered before the first count by the bounds' barrier
    unsigned long long lo = ~0ull, ors = 0ull, ands = ~0ull;
    unsigned nonzero = 0;
    for (int i = t; i < m; i += kTopKThreads) {
        const unsigned long long key = inShared ? s.merge.stage[i] : __ldcg(cand + i);
        if (staged && !inShared) s.merge.stage[i] = key;
        if (key == 0ull) continue;
        lo = key < lo ? key : lo;
        ors |= key;
        ands &= key;
        ++nonzero;
    }
    // the block's bounds: each warp's to its slot, one barrier (it also orders the staged keys before
    // the counts), then every thread folds the slots
    lo = warpReduceMin(lo);
    ors = warpReduce(ors, TopKBitOr());
    ands = warpReduce(ands, TopKBitAnd());
    nonzero = warpReduceSum(nonzero);
    if (laneId() == 0) s.bounds[t / 32] = {lo, ors, ands, nonzero};
    __syncthreads();
    lo = ~0ull, ors = 0ull, ands = ~0ull, nonzero = 0;
#pragma unroll
    for (int w = 0; w < kTopKFilterWarps; ++w) {
        const TopKWarpBounds b = s.bounds[w];
        lo = b.lo < lo ? b.lo : lo;
        ors |= b.ors;
        ands &= b.ands;
        nonzero += b.nonzero;
    }
    const unsigned long long* src = staged ? s.merge.stage : cand;
    unsigned long long prefix = lo;                 // fewer than k + 1 keys: take them all
    if (nonzero > (unsigned)k) {                    // then the keys differ in some bit (they are distinct)
        const unsigned long long vary = ors ^ ands; // nonzero: the keys are distinct
        const int top = 63 - __clzll((long long)vary);
        unsigned long long mask = top == 63 ? 0ull : ~0ull << (top + 1);
        prefix = lo & mask;
        unsigned need = (unsigned)k;
        // pass p counts into hist[p & 1] while hist[(p + 1) & 1], read by pass p - 1, is cleared for p + 1
        for (int shift = top >= 7 ? top - 7 : 0, p = 0;; ++p) {
            unsigned* hist = s.merge.sel.select.hist[p & 1];
            if (staged) topkCountDigits<true>(src, m, prefix, mask, shift, hist);
            else topkCountDigits<false>(src, m, prefix, mask, shift, hist);
            __syncthreads();
            const RadixBucket r = radixFindBucket(hist, need); // each warp for itself
            need -= r.above;
            prefix |= (unsigned long long)r.bucket << shift;
            mask |= 255ull << shift;
            const unsigned long long below = vary & ((1ull << shift) - 1ull); // shift <= 56
            // below = 0: the bucket's keys agree in every bit, so it holds one key (then count == need)
            if (r.count == need || below == 0ull) break;
            // the next digit ends at the highest varying bit under this one; the bits between are lo's
            const int next = 63 - __clzll((long long)below);
            const unsigned long long gap = ((1ull << shift) - 1ull) & ~((2ull << next) - 1ull);
            prefix |= lo & gap;
            mask |= gap;
            shift = next >= 7 ? next - 7 : 0;
            if (t < 256) s.merge.sel.select.hist[(p + 1) & 1][t] = 0;
            __syncthreads();
        }
    }
    if (t == 0) s.merge.sel.count = 0;
    __syncthreads(); // the buckets are read and the count cleared before the appends
    for (int base = 0; base < m; base += kTopKThreads) { // every warp converged: m is the same in all
        const int i = base + t;
        const unsigned long long key = i < m ? (staged ? src[i] : __ldcg(src + i)) : 0ull;
        topkAppend(key != 0ull && key >= prefix, key, s.merge.sel.keys, s.merge.sel.count);
    }
    __syncthreads();
    return (int)(nonzero < (unsigned)k ? nonzero : (unsigned)k);
}

/// Kept keys up to which stage 3 ranks by counting: a thread counts over every kept key (about 5
/// instructions each), which beats the radix select's passes and barriers up to here.
constexpr int kTopKRankMerge = kTopKThreads / 2;

/// Rank by counting (stages 3 and 5, at most kTopKRankMerge keys): `rank` plus the number of
/// keys[0 .. m) above `key` (the keys are distinct; empty slots, 0, count below every nonzero key).
/// Unroll4: the loop unrolled by 4 (stage 3, a call a warp's buffer), else as the compiler chooses
/// (stage 5; an unroll count of 4, 8 or 16 there changes its code). Each thread calls for its own
/// key, alone (no barrier); the callers give every lane of a warp the same m.
template <bool Unroll4>
WARPKIT_DEVICE int topkCountAbove(const unsigned long long* keys, int m, unsigned long long key, int rank) {
    if (Unroll4) {
#pragma unroll 4
        for (int j = 0; j < m; ++j) rank += keys[j] > key ? 1 : 0;
    } else {
        for (int j = 0; j < m; ++j) rank += keys[j] > key ? 1 : 0;
    }
    return rank;
}

/// Stage 3 with at most kTopKRankMerge kept keys (total, the warps' kept keys): thread t takes kept
/// key t and counts the kept keys above it, its rank (the keys are distinct); the keys of rank < k
/// go to s.merge.sel.keys[rank], ranked already. Returns min(k, total). Every thread of the block
/// calls (converged), after s.kept is written and a barrier.
WARPKIT_DEVICE int topkRankMerge(TopKFilterShared& s, int total, int k) {
    const int t = (int)threadIdx.x;
    unsigned long long key = 0ull;
    int rank = 0;
    if (t < total) { // the same trip counts in every lane of a warp
        int w = 0, i = t;
        while (i >= s.kept[w]) i -= s.kept[w++];
        key = s.warp[w].keys[i];
        for (int v = 0; v < kTopKFilterWarps; ++v) rank = topkCountAbove<true>(s.warp[v].keys, s.kept[v], key, rank);
    }
    __syncthreads(); // the buffers are read before the selected keys (their union) are written
    if (t < total && rank < k) s.merge.sel.keys[rank] = key;
    __syncthreads();
    return total < k ? total : k;
}

/// Stage 5 with at most kTopKRankMerge candidates (m = slices x k, read past L1): thread t takes
/// candidate t and, when it is not empty (0), counts the candidates above it, its rank; those of rank
/// < k go to s.merge.sel.keys[rank], ranked already. Returns min(k, nonzero candidates). Every thread
/// of the block calls (converged).
WARPKIT_DEVICE int topkRankSlices(const unsigned long long* cand, int m, int k, TopKFilterShared& s) {
    const int t = (int)threadIdx.x;
    const unsigned long long key = t < m ? __ldcg(cand + t) : 0ull;
    if (t < m) s.merge.stage[t] = key;
    // its barriers order the stage's writes before the reads
    const unsigned nonzero = blockReduceSum<kTopKThreads>(key != 0ull ? 1u : 0u);
    const int rank = key != 0ull ? topkCountAbove<false>(s.merge.stage, m, key, 0) : 0;
    if (key != 0ull && rank < k) s.merge.sel.keys[rank] = key; // sel.keys and stage are apart
    __syncthreads();
    return (int)(nonzero < (unsigned)k ? nonzero : (unsigned)k);
}

/// Stages 3 and 5 for k = 1: the block's largest of every thread's `key` into s.merge.sel.keys[0];
/// returns 1, or 0 when all are empty (0). Every thread of the block calls (converged).
WARPKIT_DEVICE int topkBlockBest(unsigned long long key, TopKFilterShared& s) {
    const unsigned long long best = blockReduceMax<kTopKThreads>(key);
    if (threadIdx.x == 0) s.merge.sel.keys[0] = best;
    __syncthreads();
    return best != 0ull ? 1 : 0;
}

/// Keys a thread of stage 5's bounded gather (S4) loads before it appends any: one wait on L2 for up
/// to kTopKThreads x kTopKBoundLoads candidates.
constexpr int kTopKBoundLoads = 8;

/// Stage 5 under S4: k >= 2, 2 .. kTopKThreads slices, each slice's k keys in rank order in cand
/// (zeros past its count). With j = ceil(k / slices) and m = ceil(k / j) <= slices, the m-th largest
/// B of the slices' j-th keys bounds the row's k-th key from below (m slices hold j keys >= B each,
/// m x j >= k, and the keys are distinct), so no key below B ranks. B: the slices' j-th keys ranked
/// by topkSortKept (0 ranks last; no bound when fewer than m are nonzero); then every candidate >= B
/// is appended to s.merge.stage (kTopKBoundLoads loads in flight a thread), and those are ranked by
/// counting (at most kTopKRankMerge; `ranked` set) or selected by topkSelectCandidates. Neither B nor
/// the ranks depend on how many values tie: random rows keep about 1 .. 1.5 k keys at j = 1 (slices
/// >= k; bf16 at k = 50 about 3 k). Returns min(k, keys kept). Every thread of the block calls.
WARPKIT_DEVICE int topkBoundSlices(const unsigned long long* cand, int slices, int k, TopKFilterShared& s,
                                   bool& ranked) {
    constexpr int Batch = kTopKThreads * kTopKBoundLoads;
    const int t = (int)threadIdx.x, total = slices * k;
    const int j = (k + slices - 1) / slices, m = (k + j - 1) / j;
    // the gather's first batch is loaded with the j-th keys (one wait on L2 for both: all of them
    // when slices x k <= Batch) and held in registers over the bound's sort
    unsigned long long key[kTopKBoundLoads];
#pragma unroll
    for (int r = 0; r < kTopKBoundLoads; ++r) {
        const int i = r * kTopKThreads + t;
        key[r] = i < total ? __ldcg(cand + i) : 0ull;
    }
    const unsigned long long v = t < slices ? __ldcg(cand + (long long)t * k + (j - 1)) : 0ull;
    s.merge.sel.keys[t] = v;
    const int nonzero = __syncthreads_count(v != 0ull); // the keys are written before topkSortKept reads
    topkSortKept(s, slices);
    if (t == 0) s.merge.sel.count = 0;
    __syncthreads(); // ranked, and the runs read, before B is read and the stage written
    const unsigned long long bound = nonzero >= m ? s.merge.sel.keys[m - 1] : 1ull;
    for (int base = 0;;) { // the same trips in every warp
#pragma unroll
        for (int r = 0; r < kTopKBoundLoads; ++r) {
            topkAppend(key[r] >= bound, key[r], s.merge.stage, s.merge.sel.count); // bound >= 1: no empty slot
        }
        base += Batch;
        if (base >= total) break;
#pragma unroll
        for (int r = 0; r < kTopKBoundLoads; ++r) {
            const int i = base + r * kTopKThreads + t;
            key[r] = i < total ? __ldcg(cand + i) : 0ull;
        }
    }
    __syncthreads(); // the appends and their count done, and B read, before the ranked writes below
    const int n = s.merge.sel.count;
    ranked = n <= kTopKRankMerge;
    if (!ranked) return topkSelectCandidates(s.merge.stage, n, k, s, true);
    if (t < n) { // the same trip count in every lane
        const unsigned long long key = s.merge.stage[t];
        const int rank = topkCountAbove<false>(s.merge.stage, n, key, 0);
        if (rank < k) s.merge.sel.keys[rank] = key;
    }
    __syncthreads();
    return n < k ? n : k;
}

/// Stage 5 for k = 1: the largest of a split row's m slice candidates (read past L1) by a block max,
/// no select (the same key: the largest). Returns as topkBlockBest. Every thread of the block calls.
WARPKIT_DEVICE int topkBestOfSlices(const unsigned long long* cand, int m, TopKFilterShared& s) {
    unsigned long long best = 0ull;
    for (int i = (int)threadIdx.x; i < m; i += kTopKThreads) {
        const unsigned long long key = __ldcg(cand + i);
        best = key > best ? key : best;
    }
    return topkBlockBest(best, s);
}

/// Stage 3: the k largest of the warps' kept keys into s.merge.sel.keys[0 .. n), n returned (min(k, keys
/// kept)); k = 1: the largest kth of the warps. `ranked`: whether they are in rank order already (one
/// key, or topkRankMerge). Every thread of the block calls (converged).
template <typename T> WARPKIT_DEVICE int topkBlockMerge(TopKFilterShared& s, TopKWarpState& st, int k, bool largest,
                                                        float sgn, bool& ranked) {
    const int t = (int)threadIdx.x, warp = t / 32;
    ranked = true;
    if (k == 1) return topkBlockBest(st.kth, s);
    if (st.n > k) topkWarpFlush<T>(s.warp[warp], st, k, largest, sgn);
    if (laneId() == 0) s.kept[warp] = st.n;
    __syncthreads();
    int total = 0;
#pragma unroll
    for (int w = 0; w < kTopKFilterWarps; ++w) total += s.kept[w];
    if (total <= kTopKRankMerge) return topkRankMerge(s, total, k);
    ranked = false;
    static_assert(kTopKFilterWarps * kTopKFilterMaxK <= kTopKFilterStage,
                  "topk_filter: the warps' kept keys must fit the merge's stage");
    unsigned long long keys[kTopKFilterWarps]; // st.n <= k <= kTopKFilterMaxK = the block's threads
#pragma unroll
    for (int w = 0; w < kTopKFilterWarps; ++w) keys[w] = t < s.kept[w] ? s.warp[w].keys[t] : 0ull;
    __syncthreads(); // the buffers are read before the stage (their union) is written
    for (int w = 0, at = 0; w < kTopKFilterWarps; at += s.kept[w++])
        if (t < s.kept[w]) s.merge.stage[at + t] = keys[w];
    __syncthreads();
    return topkSelectCandidates(s.merge.stage, total, k, s, true);
}

/// The kernel of rules T1 / T2 (k <= kTopKFilterMaxK) under split S3: see the header comment. Best:
/// lv.k is 1 (rule T1; its own kernel, so that its registers do not bound the k >= 2 kernel's).
/// Bound: split S4 (the plan's sliceBound), its own kernel, so that S3's compiles without S4's code.
template <typename T, bool Best, bool Bound>
__global__ void __launch_bounds__(kTopKThreads, Best ? kTopKBestBlocksPerSm : kTopKFilterBlocksPerSm)
    topkFilterKernel(TopKRows<T> io, TopKLevel lv) {
    static_assert(!(Best && Bound), "topkFilterKernel: Bound (S4) needs k >= 2, so Best must be false");
    __shared__ TopKFilterShared s;
    const int k = Best ? 1 : lv.k;
    const bool largest = io.largest;
    const float sgn = largest ? 1.f : -1.f;
    TopKWarpBuffer& b = s.warp[threadIdx.x / 32];
    for (TopKItem it = topkFirstItem(lv); it.row < lv.rows; topkNextItem(lv, it)) {
        const long long row = it.row, item = row * lv.slices + it.slice;
        const long long end = it.slice * lv.seg + lv.seg < lv.len ? it.slice * lv.seg + lv.seg : lv.len;
        const long long lo = it.slice * lv.seg < end ? it.slice * lv.seg : end;
        TopKWarpState st = topkWarpStart(k);
        const T* x = io.x + row * io.ldx + lo;
        if constexpr (Best) {
            if (largest) topkBestFilter<true>(x, (int)(end - lo), (unsigned)lo, st);
            else topkBestFilter<false>(x, (int)(end - lo), (unsigned)lo, st);
        } else {
            topkSampleCut<T>(x, (int)(end - lo), k, largest, sgn, s.sample, st);
            topkWarpFilter<T>(x, (int)(end - lo), (unsigned)lo, k, largest, sgn, b, st);
        }
        bool ranked;
        int n = topkBlockMerge<T>(s, st, k, largest, sgn, ranked);
        if (lv.slices > 1) {
            // S4: the slices' keys in rank order, for the last block's bound
            const bool bound = Bound && lv.slices <= kTopKThreads && lv.slices * k > kTopKRankMerge;
            if (bound && !ranked) {
                topkSortKept(s, n);
                __syncthreads(); // the ranked keys are written before the hand-off reads them
            }
            if (!topkFilterHandOff(lv, row, item, s, n)) continue;
            const unsigned long long* cand = lv.cout + row * lv.slices * k;
            if (bound) {
                n = topkBoundSlices(cand, lv.slices, k, s, ranked);
            } else {
                ranked = k == 1 || lv.slices * k <= kTopKRankMerge;
                n = k == 1   ? topkBestOfSlices(cand, lv.slices, s)
                    : ranked ? topkRankSlices(cand, lv.slices * k, k, s)
                             : topkSelectCandidates(cand, lv.slices * k, k, s, false);
            }
        }
        topkFilterFinish(io, lv, row, s, n, ranked);
    }
}

} // namespace detail
} // namespace warpkit
