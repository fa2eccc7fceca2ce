// warpkit/device/detail/segment_kernels.cuh: the kernels behind device/segment.cuh (the plan and
// the stages are described in segment_plan.cuh). Internal: include warpkit/device/segment.cuh.
//
// Pairs. The work items are (segment, head) pairs p = s * heads + h; pair p's rows are those of
// segment s, clipped to [0, items), and its element of row r sits at index (begin + r) * heads + h.
//
// The long-pair math, one definition for two executors. A pair longer than plan.longRows is cut
// into chunks of chunkRows rows. A chunk's partial: LT virtual threads, thread t folding rows
// t, t + LT, ... of the chunk left to right from the identity, then an ordered tree (each warp's
// 32 values with warpSegmentedReduce over the whole warp, then the warps' values the same way).
// The pair's total: the same tree over LT virtual threads, thread t folding the chunk partials
// [t * per, (t + 1) * per) left to right (per = ceil(chunks / LT)). The chunk kernels compute it
// with LT real threads; a warp of the group kernel, when the workspace has no room left for the
// pair (only possible for segments that overlap), emulates the LT threads one warp at a time. Both
// give the same bits, so the result never depends on which pairs got room.
#pragma once

#include "segment_algos.cuh"
#include "../../warp/segmented.cuh"
#include "../../warp/reduce.cuh"
#include "../../warp/scan.cuh"
#include "../../warp/vote.cuh"
#include "../../detail/host.cuh"
#include "../reduce.cuh" // loadFromL2

namespace warpkit {
namespace detail {

/// Where a segment's rows are: CSR (end = begin + 1, one array) or CUB's begin/end arrays.
template <typename O> struct SegOffsets {
    const O* begin;
    const O* end;
};

/// One listed long pair: its chunk k (k < ceil(rows / chunkRows)) is chunk chunkBase + k * stride
/// of the list. `done` counts its finished chunks.
struct SegEntry {
    long long pair, begin, rows, chunkBase, stride;
    unsigned done;
};

/// The work list in the workspace: two counters (entries and chunks handed out), the entries, each
/// chunk's owner (its entry, or -1 for a chunk handed to a pair that found no room), a partial per
/// chunk and each entry's total.
template <typename S> struct SegList {
    unsigned long long* counter; // [0] entries, [1] chunks
    SegEntry* entries;
    int* owner;
    S* partials;
    S* totals;
    long long maxEntries, maxChunks;
};

/// Segment s's offsets as given, (0, 0) for s at or past `segments` (rows then clip to none).
template <typename O>
WARPKIT_DEVICE void segmentBoundsAt(SegOffsets<O> o, long long s, long long segments, long long* b, long long* e) {
    *b = s < segments ? (long long)o.begin[s] : 0;
    *e = s < segments ? (long long)o.end[s] : 0;
}

/// Rows [b, e) clipped to [0, items): *begin, and the count (0 when e <= b).
WARPKIT_DEVICE long long segmentClip(long long b, long long e, long long items, long long* begin) {
    b = b < 0 ? 0 : (b > items ? items : b);
    e = e < 0 ? 0 : (e > items ? items : e);
    *begin = b;
    return e > b ? e - b : 0;
}

template <typename A> struct SegMerge {
    A a;
    WARPKIT_DEVICE typename A::State operator()(typename A::State x, typename A::State y) const {
        return a.merge(x, y);
    }
};

/// Runs v(element, index, row) for rows first, first + step, ... below `end` of the pair at
/// (base, h), in row order, kBatch rows a batch with the batch's loads in flight together (a
/// short tail too: its loads are predicated, not taken one at a time); returns v (a visitor holds
/// its state by value, so nothing of it needs an address).
template <int kBatch, typename A, typename V> WARPKIT_DEVICE V forRows(const A& a, long long base, int h, int heads,
                                                                       long long first, long long end, long long step,
                                                                       V v) {
    for (long long i = first; i < end; i += kBatch * step) {
        typename A::Elem x[kBatch];
#pragma unroll
        for (int k = 0; k < kBatch; ++k)
            if (i + k * step < end) x[k] = a.load((base + i + k * step) * heads + h);
#pragma unroll
        for (int k = 0; k < kBatch; ++k)
            if (i + k * step < end) v(x[k], (base + i + k * step) * heads + h, i + k * step);
    }
    return v;
}

template <typename A> struct FoldVisitor {
    A a;
    typename A::State st;
    WARPKIT_DEVICE void operator()(const typename A::Elem& x, long long, long long row) { st = a.take(st, x, row); }
};
template <typename A, typename F> struct WriteVisitor {
    A a;
    F f;
    WARPKIT_DEVICE void operator()(const typename A::Elem& x, long long idx, long long) const { a.store(f, idx, x); }
};

/// Left fold of those rows from the identity, 8 loads in flight.
template <typename A> WARPKIT_DEVICE typename A::State foldRows(const A& a, long long base, int h, int heads,
                                                                long long first, long long end, long long step) {
    return forRows<8>(a, base, h, heads, first, end, step, FoldVisitor<A>{a, a.identity()}).st;
}

/// The outputs of those rows (two-pass algorithms), 4 loads in flight (8 spill in the write kernel).
template <typename A, typename F> WARPKIT_DEVICE void
writeRows(const A& a, const F& f, long long base, int h, int heads, long long first, long long end, long long step) {
    forRows<4>(a, base, h, heads, first, end, step, WriteVisitor<A, F>{a, f});
}

/// Ordered reduction of one value a lane over the whole warp (every lane gets it).
template <typename A> WARPKIT_DEVICE typename A::State warpTree(const A& a, typename A::State v) {
    return warpSegmentedReduce(v, SegMerge<A>{a}, WarpSegment{0, 31});
}

/// The ordered tree over the LT threads of a block; thread 0 gets the result. Every thread calls.
template <int LT, typename A> WARPKIT_DEVICE typename A::State blockTree(const A& a, typename A::State v) {
    using S = typename A::State;
    __shared__ S slots[LT / 32];
    const int warp = (int)threadIdx.x / 32, lane = (int)threadIdx.x % 32;
    v = warpTree(a, v);
    if (lane == 0) slots[warp] = v;
    __syncthreads();
    if (warp == 0) v = warpTree(a, lane < LT / 32 ? slots[lane] : a.identity());
    __syncthreads(); // the slots may be written again by the next call
    return v;
}

/// A chunk's partial computed by one warp as blockTree<LT> over LT threads would: lane l of pass w
/// stands for thread 32 w + l, and lane w keeps virtual warp w's value. Every lane gets it.
template <int LT, typename A>
WARPKIT_DEVICE typename A::State chunkByWarp(const A& a, long long base, int h, int heads, long long r0, long long r1) {
    typename A::State top = a.identity();
#pragma unroll 1
    for (int w = 0; w < LT / 32; ++w) {
        const typename A::State t = warpTree(a, foldRows(a, base, h, heads, r0 + 32 * w + (int)laneId(), r1, LT));
        if ((int)laneId() == w) top = t;
    }
    return warpTree(a, top);
}

/// A long pair done by one warp with the chunk kernels' math (no room in the workspace): virtual
/// thread t folds the partials of chunks [t * per, (t + 1) * per) in order, then the LT values go
/// through the same tree. The chunks of one virtual thread are consecutive, so the threads are
/// taken in turn and nothing is stored.
template <int LT, typename A> WARPKIT_DEVICE void longPairByWarp(const A& a, long long pair, long long base,
                                                                 long long rows, int heads, long long chunkRows) {
    using S = typename A::State;
    const int lane = (int)laneId(), h = (int)(pair % heads);
    const long long chunks = (rows + chunkRows - 1) / chunkRows, per = (chunks + LT - 1) / LT;
    S top = a.identity();
#pragma unroll 1
    for (int w = 0; w < LT / 32; ++w) {
        S mine = a.identity();
#pragma unroll 1
        for (int l = 0; l < 32; ++l) {
            S acc = a.identity();
            for (long long c = (32 * w + l) * per; c < (32 * w + l + 1) * per && c < chunks; ++c) {
                const long long r0 = c * chunkRows, r1 = r0 + chunkRows < rows ? r0 + chunkRows : rows;
                acc = a.merge(acc, chunkByWarp<LT>(a, base, h, heads, r0, r1));
            }
            if (lane == l) mine = acc;
        }
        const S t = warpTree(a, mine);
        if (lane == w) top = t;
    }
    const S total = warpTree(a, top);
    if (lane == 0) a.finish(pair, total);
    if constexpr (A::kTwoPass) writeRows(a, a.prepare(total), base, h, heads, lane, rows, 32);
}

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
    const long long n = isLong ? (rows + chunkRows - 1) / chunkRows : 0;
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
    if (room) l.entries[e] = SegEntry{pair, begin, rows, base, stride, 0u};
    for (unsigned w = longs; w; w &= w - 1) {
        const int src = __ffs(w) - 1;
        const long long sb = shflIdx(base, src), ss = shflIdx(stride, src), sn = shflIdx(n, src);
        const int so = shflIdx((int)(room ? e : -1), src);
        const long long fit = sb >= l.maxChunks ? 0 : (l.maxChunks - 1 - sb) / ss + 1; // its chunks below the capacity
        const long long kEnd = fit < sn ? fit : sn;
        for (long long k = lane; k < kEnd; k += 32) l.owner[sb + k * ss] = so;
    }
    return isLong && !room;
}

/// The chunks the chunk kernels go over: those handed out, up to the capacity.
template <typename S> WARPKIT_DEVICE long long segListChunks(const SegList<S>& l) {
    const unsigned long long handed = l.counter[1];
    return handed < (unsigned long long)l.maxChunks ? (long long)handed : l.maxChunks;
}

/// Blocks of the group kernel an SM holds at least: 3 at 256 threads (80 registers a thread; it
/// waits on memory, so more warps keep more loads in flight); 2 for the 16-bit ArgMax / ArgMin
/// state, which spills at 80.
template <typename A> struct SegGroupMinBlocks { static constexpr int value = 3; };
template <typename T, typename V, typename Out, typename Op>
struct SegGroupMinBlocks<SegReduceAlgo<T, V, Out, Op, true>> {
    static constexpr int value = sizeof(T) == 2 ? 2 : 3;
};

/// Stage 1: lane groups over the short pairs (see segment_plan.cuh); long pairs are listed.
template <int BT, int LT, typename A, typename O> __global__ void __launch_bounds__(BT, SegGroupMinBlocks<A>::value)
    segmentGroupKernel(A a, SegOffsets<O> off, long long segments, int heads, long long items, int perLane,
                       long long longRows, long long chunkRows, SegList<typename A::State> list) {
    WARPKIT_CHECK_SEGMENT_ALGO(A, "segmentGroupKernel");
    const int lane = (int)laneId();
    const long long pairs = segments * heads;
    const long long warps = (long long)gridDim.x * (BT / 32);
    // Each step's offsets are loaded one step ahead, so their round trip overlaps the step before.
    long long g = ((long long)blockIdx.x * BT + threadIdx.x) / 32 * 32, nb = 0, ne = 0;
    segmentBoundsAt(off, (g + lane) / heads, g + lane < pairs ? segments : 0, &nb, &ne);
    for (; g < pairs; g += warps * 32) {
        // 1. this lane's pair: its rows, and whether it is long
        const long long p = g + lane, next = p + warps * 32;
        long long b = 0;
        const long long rows = segmentClip(nb, ne, items, &b);
        const int head = (int)(p % heads); // once a step: the rounds below shuffle it
        segmentBoundsAt(off, next / heads, next < pairs ? segments : 0, &nb, &ne);
        const bool isLong = rows > longRows;
        const bool byWarp = listAppend(list, isLong, p, head, heads, b, rows, chunkRows);
        if (p < pairs && rows == 0) a.empty(p);
        // 2. the short pairs by tiers: a pair of r rows takes G lanes, G the smallest power of two
        //    with G * perLane >= r (32 at most); each tier's pairs go 32 / G at a time, so a longer
        //    neighbour never widens a pair's group (nor serialises the warp over tiny pairs)
        const int mine = isLong ? 0 : (int)rows;
        int mineG = 1;
        while (mineG < 32 && mineG * perLane < mine) mineG <<= 1;
#pragma unroll 1
        for (int G = 1; G <= 32; G <<= 1) {
            const unsigned tier = __ballot_sync(WARPKIT_FULL_MASK, mine > 0 && mineG == G);
            const int count = __popc(tier), groups = 32 / G, j = lane & (G - 1);
            const WarpSegment seg{lane & ~(G - 1), (lane & ~(G - 1)) + G - 1};
#pragma unroll 1
            for (int first = 0; first < count; first += groups) {
                const int k = first + lane / G; // this group's pair: the tier's k-th lane
                const int src = k < count ? (int)__fns(tier, 0u, k + 1) : 0;
                const long long pb = shflIdx(b, src), pp = g + src;
                const int prSrc = shflIdx(mine, src), pr = k < count ? prSrc : 0, ph = shflIdx(head, src);
                typename A::State st = foldRows(a, pb, ph, heads, j, pr, G);
                st = warpSegmentedReduce(st, SegMerge<A>{a}, seg);
                if (pr > 0) {
                    if (j == 0) a.finish(pp, st);
                    if constexpr (A::kTwoPass) writeRows(a, a.prepare(st), pb, ph, heads, j, pr, G);
                }
            }
        }
        // 3. long pairs that found no room, by the whole warp
        for (unsigned w = __ballot_sync(WARPKIT_FULL_MASK, byWarp); w; w &= w - 1) {
            const int src = __ffs(w) - 1;
            longPairByWarp<LT>(a, g + src, shflIdx(b, src), shflIdx(rows, src), heads, chunkRows);
        }
    }
}

/// Stage 2: the listed chunks' partials; the last chunk of a pair to finish forms its total.
template <int LT, typename A> __global__ void __launch_bounds__(LT)
    segmentChunkKernel(A a, int heads, long long chunkRows, SegList<typename A::State> list) {
    WARPKIT_CHECK_SEGMENT_ALGO(A, "segmentChunkKernel");
    using S = typename A::State;
    const long long chunks = segListChunks(list);
    __shared__ bool last;
    for (long long c = blockIdx.x; c < chunks; c += gridDim.x) {
        const int e = list.owner[c];
        if (e < 0) continue; // handed to a pair that found no room (a warp of the group kernel does it)
        const SegEntry en = list.entries[e];
        const int h = (int)(en.pair % heads);
        const long long r0 = (c - en.chunkBase) / en.stride * chunkRows;
        const long long r1 = r0 + chunkRows < en.rows ? r0 + chunkRows : en.rows;
        const S part = blockTree<LT>(a, foldRows(a, en.begin, h, heads, r0 + threadIdx.x, r1, LT));
        const long long n = (en.rows + chunkRows - 1) / chunkRows;
        if (n == 1) { // a pair of one chunk: the fold below over its one partial, with no count and
                      // no round trip through L2 (the same bits)
            const S total = blockTree<LT>(a, threadIdx.x == 0 ? a.merge(a.identity(), part) : a.identity());
            if (threadIdx.x == 0) {
                a.finish(en.pair, total);
                list.totals[e] = total;
            }
            continue;
        }
        if (threadIdx.x == 0) {
            list.partials[c] = part;
            __threadfence(); // the partial is visible before the count that announces it
            last = atomicAdd(&list.entries[e].done, 1u) == (unsigned)(n - 1);
        }
        __syncthreads();
        if (!last) continue;
        __threadfence();
        const long long per = (n + LT - 1) / LT;
        S acc = a.identity();
        for (long long k = threadIdx.x * per; k < (threadIdx.x + 1) * per && k < n; ++k)
            acc = a.merge(acc, loadFromL2(list.partials + en.chunkBase + k * en.stride));
        const S total = blockTree<LT>(a, acc);
        if (threadIdx.x == 0) {
            a.finish(en.pair, total);
            list.totals[e] = total;
        }
    }
}

/// Stage 3 (two-pass algorithms): the listed chunks' outputs from their pairs' totals.
template <int LT, typename A> __global__ void __launch_bounds__(LT)
    segmentWriteKernel(A a, int heads, long long chunkRows, SegList<typename A::State> list) {
    WARPKIT_CHECK_SEGMENT_ALGO(A, "segmentWriteKernel");
    if constexpr (A::kTwoPass) {
        const long long chunks = segListChunks(list);
        for (long long c = blockIdx.x; c < chunks; c += gridDim.x) {
            const int e = list.owner[c];
            if (e < 0) continue;
            const SegEntry en = list.entries[e];
            const long long r0 = (c - en.chunkBase) / en.stride * chunkRows;
            const long long r1 = r0 + chunkRows < en.rows ? r0 + chunkRows : en.rows;
            writeRows(a, a.prepare(loadFromL2(list.totals + e)), en.begin, (int)(en.pair % heads), heads,
                      r0 + threadIdx.x, r1, LT);
        }
    }
}

} // namespace detail
} // namespace warpkit
