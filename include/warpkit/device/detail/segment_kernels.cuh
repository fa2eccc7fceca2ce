// warpkit/device/detail/segment_kernels.cuh: stage 1 behind device/segment.cuh (the group kernel)
// and the long-pair math the later stages share (segment_long.cuh holds those kernels; the plan and
// the stages are described in segment_plan.cuh; a pair's rows and their folds are in
// segment_fold.cuh). Internal: include warpkit/device/segment.cuh.
//
// The long-pair math, one definition for two executors. A pair longer than plan.longRows is cut
// into chunks of chunkRows rows. A chunk's partial: LT virtual threads, thread t folding rows
// t, t + LT, ... of the chunk left to right from the identity, then an ordered tree (each warp's
// 32 values with warpSegmentedReduce over the whole warp, then the warps' values the same way).
// The pair's total: the same tree over LT virtual threads, thread t folding the chunk partials
// [t * per, (t + 1) * per) left to right (per = ceil(chunks / LT)). The chunk kernels compute it
// with LT real threads; a warp of the no-room kernel, when the workspace had no room left for the
// pair (only possible for segments that overlap), emulates the LT threads one warp at a time (under
// rule G6 the direct kernel's block does the pair with LT real threads, chunk after chunk). All
// give the same bits, so the result never depends on which pairs got room.
#pragma once

#include "segment_softmax.cuh"
#include "segment_block.cuh"
#include "segment_fold.cuh"
#include "../../warp/segmented.cuh"
#include "../../warp/reduce.cuh"
#include "../../warp/scan.cuh"
#include "../../warp/vote.cuh"
#include "../../thread/vector.cuh"
#include "../../detail/host.cuh"
#include "../../detail/pdl.cuh"
#include "../reduce.cuh" // loadFromL2

namespace warpkit {
namespace detail {

/// One listed long pair: its chunk k (k < ceil(rows / chunkRows)) is chunk chunkBase + k * stride
/// of the list. `done` counts its finished chunks.
struct SegEntry {
    long long pair, begin, rows, chunkBase, stride;
    unsigned done;
    int head; // the pair's head (pair % heads)
};

/// A warp step with long pairs that found no room: bit l of `mask` set when pair first + l did.
struct SegNoRoom {
    long long first;
    unsigned mask;
};

/// The work list in the workspace: six counters, the entries, each chunk's owner (its entry, or -1
/// for a chunk handed to a pair that found no room), a partial per chunk, each entry's total, the
/// no-room steps (only those with a pair that found no room, so a call whose long pairs all got
/// room writes none), and the slice tier's slots (segment_slice.cuh, two work items a slot): each
/// slot's owner entry (-1: none), a count a slot (a group's finished slices) and `heads` states a
/// slot.
template <typename S> struct SegList {
    unsigned long long* counter; // [0] entries, [1] chunks, [2] no-room steps, [3] block-tier entries taken,
                                 // [4] slice slots handed out, [5] slice tickets taken
    SegEntry* entries;
    int* owner;
    S* partials;
    S* totals;
    SegNoRoom* noRoom;
    int* sliceOwner;
    int* sliceCount;
    S* sliceStates;
    long long maxEntries, maxChunks, maxSlots;
};

/// Lists the warp's long pairs (the isLong lanes) with one atomicAdd on each counter for the whole
/// warp (lane 0's): a pair gets room when its entry and all its chunks fall inside the capacity.
/// Every chunk handed out below the capacity gets its owner, -1 for a pair without room, so the
/// chunk kernels read no entry that was not written. Every lane calls; returns whether this
/// lane's long pair found no room.
template <typename S> WARPKIT_DEVICE bool listAppend(const SegList<S>& l, bool isLong, long long pair, int h, int heads,
                                                     long long begin, long long rows, long long chunkRows) {
    const unsigned longs = __ballot_sync(WARPKIT_FULL_MASK, isLong);
    if (longs == 0u) return false;
    const int lane = (int)laneId();
    const long long n = isLong ? segCeilDiv(rows, chunkRows) : 0;
    long long total = 0;
    const long long excl = warpInclusiveScan(n, Sum{}, total) - n;
    unsigned long long e0 = 0, c0 = 0;
    int got = 0;
    if (lane == 0) {
        const volatile unsigned long long* v = l.counter; // both only grow: once one is full, nothing fits
        got = v[0] < (unsigned long long)l.maxEntries && v[1] < (unsigned long long)l.maxChunks;
        if (got) {
            e0 = atomicAdd(l.counter, (unsigned long long)__popc(longs));
            c0 = atomicAdd(l.counter + 1, (unsigned long long)total);
        }
    }
    if (!shflIdx(got, 0)) return isLong;
    e0 = shflIdx(e0, 0);
    c0 = shflIdx(c0, 0);
    const long long e = (long long)e0 + __popc(longs & laneMaskLt());
    // The heads of one segment listed together (all in this warp step) interleave their chunks:
    // chunk k of head h is chunk base + k * heads + h of their joint range, so the blocks that
    // read the same rows (heads elements apart) run side by side and share sectors through L2.
    const int first = lane - h; // h: the pair's head
    const bool together = heads > 1 && first >= 0 && first + heads <= 32;
    const long long base = (long long)c0 + excl + (together ? h - h * n : 0), stride = together ? heads : 1;
    const bool room = isLong && e < l.maxEntries && base + (n - 1) * stride < l.maxChunks;
    if (room) l.entries[e] = SegEntry{pair, begin, rows, base, stride, 0u, h};
    else if (isLong && e < l.maxEntries) l.entries[e].stride = 1; // no chunks: marked not a block-tier entry
    for (unsigned w = longs; w; w &= w - 1) {
        const int src = __ffs(w) - 1;
        const long long sb = shflIdx(base, src), ss = shflIdx(stride, src), sn = shflIdx(n, src);
        const int so = shflIdx((int)(room ? e : -1), src);
        // its chunks below the capacity (no division for one head: a 64-bit one is a call of about
        // 85 instructions, and a warp of long pairs takes up to 32 of them here)
        const long long left = l.maxChunks - sb, fit = left <= 0 ? 0 : (ss == 1 ? left : (left - 1) / ss + 1);
        const long long kEnd = fit < sn ? fit : sn;
        for (long long k = lane; k < kEnd; k += 32) l.owner[sb + k * ss] = so;
    }
    return isLong && !room;
}

/// Appends the warp's segments for the block and slice tiers (the `mine` lanes: head 0 of each) to
/// the list, with one atomicAdd for the warp on the entries (lane 0's) and one on the slice slots
/// when any lane has `slots` > 0 (a slice-tier segment: segSliceSlots). A block-tier entry has
/// stride 0; a slice-tier one stride -1 and chunkBase its first slot, its slots get it as their
/// owner and their counts are cleared. A slice-tier segment whose slots do not all fit marks its
/// entry stride 1 and its slots below the capacity -1 (so the block kernel reads no slot it was not
/// given). Every lane calls; returns whether this lane's segment got room (else its
/// pairs go to the chunk kernels).
template <typename S> WARPKIT_DEVICE bool segBlockAppend(const SegList<S>& l, bool mine, long long slots,
                                                         long long pair, long long begin, long long rows) {
    const unsigned want = __ballot_sync(WARPKIT_FULL_MASK, mine);
    if (want == 0u) return false;
    const int lane = (int)laneId();
    slots = mine ? slots : 0;
    long long total = 0;
    const long long excl = warpInclusiveScan(slots, Sum{}, total) - slots;
    unsigned long long e0 = 0, s0 = 0;
    int got = 0;
    if (lane == 0) {
        const volatile unsigned long long* v = l.counter; // they only grow: once full, nothing fits
        got = v[0] < (unsigned long long)l.maxEntries && (total == 0 || v[4] < (unsigned long long)l.maxSlots);
        if (got) e0 = atomicAdd(l.counter, (unsigned long long)__popc(want));
        if (got && total > 0) s0 = atomicAdd(l.counter + 4, (unsigned long long)total);
    }
    if (!shflIdx(got, 0)) return false;
    const long long e = (long long)shflIdx(e0, 0) + __popc(want & laneMaskLt()), sb = (long long)shflIdx(s0, 0) + excl;
    const bool room = mine && e < l.maxEntries && (slots == 0 || sb + slots <= l.maxSlots);
    if (room) l.entries[e] = SegEntry{pair, begin, rows, sb, slots > 0 ? -1 : 0, 0u, 0};
    else if (mine && e < l.maxEntries) l.entries[e].stride = 1; // no slots: not a block or slice entry
    for (unsigned w = __ballot_sync(WARPKIT_FULL_MASK, slots > 0); w; w &= w - 1) {
        const int src = __ffs(w) - 1;
        const long long i0 = shflIdx(sb, src), i1 = i0 + shflIdx(slots, src);
        const int so = shflIdx((int)(room ? e : -1), src);
        for (long long i = i0 + lane; i < i1 && i < l.maxSlots; i += 32) {
            l.sliceOwner[i] = so;
            if (so >= 0) l.sliceCount[i] = 0;
        }
    }
    return room;
}

/// Listed chunk c's index within its pair (no 64-bit division for a pair of one head).
WARPKIT_DEVICE long long segmentChunkIndex(long long c, const SegEntry& en) {
    return en.stride == 1 ? c - en.chunkBase : (c - en.chunkBase) / en.stride;
}

/// The chunks the chunk kernels go over: those handed out, up to the capacity.
template <typename S> WARPKIT_DEVICE long long segListChunks(const SegList<S>& l) {
    const unsigned long long handed = l.counter[1];
    return handed < (unsigned long long)l.maxChunks ? (long long)handed : l.maxChunks;
}

/// Blocks of the group kernel an SM holds at least: 3 at 256 threads (80 registers a thread; it
/// waits on memory, so more warps keep more loads in flight); 2 for the ArgMax / ArgMin state of
/// 16-bit and 64-bit values, which spills at 80.
template <typename A> struct SegGroupMinBlocks { static constexpr int value = 3; };
template <typename T, typename V, typename Out, typename Op>
struct SegGroupMinBlocks<SegReduceAlgo<T, V, Out, Op, true>> {
    static constexpr int value = sizeof(T) == 4 ? 3 : 2;
};

/// The lane-group widths in use in the warp: the OR of every lane's `width` (a power of two, 0
/// for none). Every lane calls; every lane gets it.
WARPKIT_DEVICE unsigned segmentTiers(unsigned width) {
#if WARPKIT_ARCH >= 800
    return __reduce_or_sync(WARPKIT_FULL_MASK, width);
#else
    unsigned m = 0u;
#pragma unroll
    for (unsigned w = 1u; w <= 32u; w <<= 1) m |= __any_sync(WARPKIT_FULL_MASK, width == w) ? w : 0u;
    return m;
#endif
}

/// The pairs of one tier (group width G > 1, the lanes in `tier`): the tier's k-th pair goes to
/// group k % (32 / G) in round k / (32 / G); each group folds its pair's rows lane-strided and
/// combines its lanes in lane order. Every lane calls.
template <typename A> WARPKIT_DEVICE void segmentTier(const A& a, int G, unsigned tier, long long g, long long b,
                                                      int mine, int head, int heads) {
    const int lane = (int)laneId(), count = __popc(tier), groups = 32 / G, j = lane & (G - 1);
    const WarpSegment seg{lane & ~(G - 1), (lane & ~(G - 1)) + G - 1};
#pragma unroll 1
    for (int first = 0; first < count; first += groups) {
        const int k = first + lane / G; // this group's pair: the tier's k-th lane
        const int src = k < count ? (int)__fns(tier, 0u, k + 1) : 0;
        const long long pb = shflIdx(b, src), pp = g + src;
        const int prSrc = shflIdx(mine, src), pr = k < count ? prSrc : 0, ph = shflIdx(head, src);
        typename A::State st = foldRows<A, SegTierBatch<A>::value>(a, pb, ph, heads, j, pr, G);
        st = warpSegmentedReduce(st, SegMerge<A>{a}, seg);
        if (pr > 0) {
            if (j == 0) a.finish(pp, st);
            if constexpr (A::kTwoPass) writeRows(a, a.prepare(st), pb, ph, heads, j, pr, G);
        }
    }
}

/// Rows a warp step stages in shared memory (segmentStagedOnes): 32 pairs of up to 8 rows (the
/// perLane of every one-head rule) always fit when the offsets are CSR.
constexpr int kSegStage = 256;

/// A step whose short pairs all take one lane (tiers == 1, one head) and whose rows lie within
/// kSegStage rows: the warp loads that span into shared memory with 16-byte loads (a few vectors
/// a lane, where one-lane folds took a 4-byte load a row, each from another segment), then each
/// lane folds its pair from there with foldRows' order (rows in order from the identity: the same
/// bits). Returns whether it did (else the step folds in place). Every lane calls.
template <int BT, typename A>
WARPKIT_DEVICE bool segmentStagedOnes(const A& a, unsigned tiers, int heads, long long b, int mine, long long p) {
    using T = typename A::Elem;
    constexpr int V = vectorElems<T>(), kPer = (kSegStage / V + 31) / 32;
    __shared__ alignas(16) T stage[BT / 32][kSegStage + V];
    const int lane = (int)laneId();
    if (tiers != 1u || heads != 1) return false;
    const unsigned some = __ballot_sync(WARPKIT_FULL_MASK, mine > 0);
    // the span of the step's rows, relative to its first pair's begin (32-bit once it is known short)
    const long long ref = shflIdx(b, __ffs(some) - 1), rel = b - ref;
    const int r0 = rel < -(1 << 30) ? -(1 << 30) : (rel > (1 << 30) ? (1 << 30) : (int)rel);
    const int lo = warpReduceMin(mine > 0 ? r0 : 1 << 30), hi = warpReduceMax(mine > 0 ? r0 + mine : -(1 << 30));
    if (hi - lo > kSegStage) return false;
    // the span's elements: the head before the first 16-byte boundary at stage[V - head ..), then
    // the vectors from stage[V], so that each lands 16-byte aligned
    // (vectorSplit's split, in 32 bits: the span holds at most kSegStage rows)
    const T* q = segStageSource(a) + (ref + lo);
    const int n = hi - lo, mis = (int)((size_t)q & 15u) / (int)sizeof(T);
    const int head = mis == 0 ? 0 : (V - mis < n ? V - mis : n), vectors = (n - head) / V;
    const int tail = head + vectors * V;
    T* s = stage[threadIdx.x / 32] + (V - head);
    Vector16<T> v[kPer];
#pragma unroll
    for (int k = 0; k < kPer; ++k)
        if (lane + 32 * k < vectors) v[k] = loadVector(q + head + (lane + 32 * k) * V);
    const bool one = lane < head || (lane >= V && lane - V < n - tail); // lanes V.. take the tail
    const int at = lane < head ? lane : tail + lane - V;
    const T x1 = one ? q[at] : T{};
    if (one) s[at] = x1;
#pragma unroll
    for (int k = 0; k < kPer; ++k)
        if (lane + 32 * k < vectors) *reinterpret_cast<Vector16<T>*>(s + head + (lane + 32 * k) * V) = v[k];
    __syncwarp();
    if (mine > 0) {
        const T* mineAt = s + (r0 - lo);
        typename A::State st = a.identity();
#pragma unroll 1
        for (int k0 = 0; k0 < mine; k0 += 8) // predicated batches: lanes of 0..8 rows take one
#pragma unroll
            for (int k = k0; k < k0 + 8; ++k)
                if (k < mine) st = a.take(st, mineAt[k], k);
        a.finish(p, st);
    }
    __syncwarp(); // the stage is written again by the next step
    return true;
}

/// Whether stage 2 stages a one-head call's rows in shared memory (segmentChunkStagedKernel): the
/// one-pass algorithms that read one array (SegStaged) of 4-byte elements (cp.async takes 4 bytes at
/// least, so a 16-bit run's head could not be copied element by element).
template <typename A> struct SegChunkStaged {
    static constexpr bool value = SegStaged<A>::value && sizeof(typename A::Elem) == 4;
};

/// Whether a one-head call under a plan with directRows (rule G6) goes to the direct kernel
/// (segmentDirectKernel, segment_direct.cuh: a block a segment, from the offsets) instead of the
/// group kernel: the one-pass algorithms (their result is the pair's total, nothing to write per
/// element).
template <typename A> struct SegDirect { static constexpr bool value = !A::kTwoPass; };

/// Whether A's fold is one addition (the sum reductions): their listed chunks go to
/// segmentChunkKernel, not the staged kernel (segment.cuh, segmentLaunch).
template <typename A> struct SegAddFold { static constexpr bool value = false; };
template <typename T, typename Acc, typename Out> struct SegAddFold<SegReduceAlgo<T, Acc, Out, Sum, false>> {
    static constexpr bool value = true;
};

/// Stage 1: lane groups over the short pairs (see segment_plan.cuh); long pairs are listed, the
/// steps with pairs that find no room appended to list.noRoom for stage 1c. A warp step takes
/// `step` pairs (1..32; 32 for several heads, whose block tier finds head 0 at lane - head), one a
/// lane: lanes step.. hold none (segmentStepPairs).
template <int BT, int LT, typename A, typename O> __global__ void __launch_bounds__(BT, SegGroupMinBlocks<A>::value)
    segmentGroupKernel(A a, SegOffsets<O> off, long long segments, int heads, long long items, int perLane,
                       long long longRows, long long chunkRows, int sliceGroup, int step,
                       SegList<typename A::State> list) {
    WARPKIT_CHECK_SEGMENT_ALGO(A, "segmentGroupKernel");
    pdlLaunchDependents(); // the next kernel's blocks (the no-room kernel's) may be placed beside this grid
    const int lane = (int)laneId();
    const long long pairs = segments * heads, stride = (long long)gridDim.x * (BT / 32) * step;
    const long long g0 = ((long long)blockIdx.x * BT + threadIdx.x) / 32 * step;
    const bool inStep = lane < step;
    long long nb = 0, ne = 0, nb1 = 0, ne1 = 0;
    // Each step's offsets are loaded two steps ahead, so that a step can start its next step's rows
    // toward L2 (their loads then wait for L2, not DRAM): two steps' rows are in flight a warp.
    segmentBoundsAt(off, segmentOfPair(g0 + lane, heads), inStep && g0 + lane < pairs ? segments : 0, &nb, &ne);
    segmentBoundsAt(off, segmentOfPair(g0 + stride + lane, heads), inStep && g0 + stride + lane < pairs ? segments : 0,
                    &nb1, &ne1);
    for (long long g = g0; g < pairs; g += stride) {
        // 1. this lane's pair: its rows, and whether it is long; the next step's rows toward L2;
        //    the offsets of the step after
        const long long p = g + lane, next = p + 2 * stride;
        const int head = (int)(p - segmentOfPair(p, heads) * heads); // once a step: the rounds shuffle it
        long long b = 0, b1 = 0;
        const long long rows = segmentClip(nb, ne, items, &b), rows1 = segmentClip(nb1, ne1, items, &b1);
        if (rows1 > 0 && rows1 <= longRows) { // its first 64 elements (fp32: 8 KB a warp, a mean-32 step)
            a.prefetch(b1 * heads);
            if (rows1 * heads > 32) a.prefetch(b1 * heads + 32);
        }
        nb = nb1;
        ne = ne1;
        segmentBoundsAt(off, segmentOfPair(next, heads), inStep && next < pairs ? segments : 0, &nb1, &ne1);
        const bool isLong = rows > longRows; // listed
        // the softmax's block and slice tiers: listed once a segment, by head 0
        bool toBlock = false;
        if constexpr (SegBlockSoftmax<A>::value) {
            // heads divide 32: head 0 is lane - head
            const long long slots = isLong ? segSliceSlots(rows, heads, sliceGroup) : 0;
            const bool fits = isLong && (segBlockFits(rows, heads) || slots > 0);
            const bool room = segBlockAppend(list, fits && head == 0, slots, p, b, rows);
            toBlock = shflIdx(room, fits ? lane - head : lane) && fits;
        }
        const unsigned noRoom =
            __ballot_sync(WARPKIT_FULL_MASK, listAppend(list, isLong && !toBlock, p, head, heads, b, rows, chunkRows));
        if (noRoom != 0u && lane == 0) list.noRoom[atomicAdd(list.counter + 2, 1ull)] = SegNoRoom{g, noRoom};
        if (inStep && p < pairs && rows == 0) a.empty(p);
        // 2. the short pairs by tiers: a pair of r rows takes G lanes, G the smallest power of two
        //    with G * perLane >= r (32 at most), so a longer neighbour never widens a pair's group;
        //    only the tiers in use run (segmentTier)
        const int mine = rows > longRows ? 0 : (int)rows;
        int mineG = 1;
        while (mineG < 32 && mineG * perLane < mine) mineG <<= 1;
        const unsigned tiers = segmentTiers(mine > 0 ? (unsigned)mineG : 0u);
        bool staged = false;
        if constexpr (SegStaged<A>::value) staged = segmentStagedOnes<BT>(a, tiers, heads, b, mine, p);
        bool regs = false; // the softmax in registers (segment_softmax.cuh): up to 8 rows a lane, or a whole warp
        if constexpr (SegRegSoftmax<A>::value) {
            regs = heads <= kSegRegMaxHeads &&
                   (mine <= mineG * kSegRegRows || (mineG == 32 && kSegWideRegs<typename A::Elem>));
            if (regs && mine > 0 && mineG == 1) segmentSoftmaxPair(a, b * heads + head, heads, 0, mine, 1);
        }
        if (!staged && !regs && mine > 0 && mineG == 1) { // a group of one lane: its own pair in place, no tree
            const typename A::State st = foldRows(a, b, head, heads, 0, mine, 1);
            a.finish(p, st);
            if constexpr (A::kTwoPass) writeRows(a, a.prepare(st), b, head, heads, 0, mine, 1);
        }
#pragma unroll 1
        for (int G = 2; G <= 32; G <<= 1) {
            if (!(tiers & (unsigned)G)) continue;
            unsigned tier = __ballot_sync(WARPKIT_FULL_MASK, mine > 0 && mineG == G);
            if constexpr (SegRegSoftmax<A>::value) {
                const unsigned inRegs = __ballot_sync(WARPKIT_FULL_MASK, regs && mine > 0 && mineG == G);
                if (inRegs) segmentSoftmaxTier(a, G, inRegs, b, mine, head, heads);
                tier &= ~inRegs; // the rest (more than 16 heads): the fold and write passes
            }
            if (tier) segmentTier(a, G, tier, g, b, mine, head, heads);
        }
    }
}

} // namespace detail
} // namespace warpkit
