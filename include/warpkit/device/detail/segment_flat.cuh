// warpkit/device/detail/segment_flat.cuh: the flat pass of the segment reductions (plan rule G5:
// one head, CSR offsets, short segments on average). Internal: include warpkit/device/segment.cuh.
//
// The merge path. With c = the offsets clipped to [0, items) and E[s] = c[s + 1] (segment s's
// end), a call's work is the merge of the segment ends E[0 .. segments) with the elements
// [c[0], c[segments]): an end is taken before element x when E <= x. The path, segments +
// (c[segments] - c[0]) items long, is cut into tiles of kFlatTile items (a constant: no device,
// grid or block count enters), so a tile does at most kFlatTile elements and segment ends, how
// ever many segments are empty. The tiles' split points come from a search of the offsets.
//
// The kernels (stages 0, 1, 2a, 2) are in segment_flat_run.cuh; the tile's constants, layout and
// loads (stage 1's part 1) in segment_flat_stage.cuh; its fold and block scan (part 2) here.
// Stage 0 (segmentFlatSplitKernel, a warp a tile boundary): the split of every tile boundary, by a
// search of the offsets, into the workspace (it also clears the flag below), so that a tile starts
// with one load of its two splits (loaded two tiles ahead), not a chain of dependent searches.
// Stage 1 (segmentFlatKernel, one block a tile, grid-stride): a thread up to 8 consecutive ends
// of the tile (segment_flat_stage.cuh: 9 offsets, a batch's loads in flight together) writes the
// empty segments and marks the last element of the others in a bit map (a word a thread's 32
// elements), with the end's number beside it (staged: the empty ones and the results go out
// later, in one pass); the tile's elements (at most kFlatTile) go to shared memory by cp.async
// (sm_80+, 4-byte elements) issued before its ends are read, else by 16-byte loads after the
// ends. Thread t then folds the elements [32t, 32t + 32) left to right from the identity in
// registers, restarting after each marked element (its word of marks; a run without one folds
// with no test); a segment that starts and ends inside the run is done there. A block scan of
// (ended, partial) pairs, in thread order, gives each thread the partial of the segment its first
// end closes. Segment s0 when it began before the tile and ends in it is the tile's head (its
// partial to the workspace); the fold of the elements after the tile's last end is the tile's
// tail. Results go to out from the thread
// that has them, or, when the state is the element type (fp32 / int sums, max, min), into the slot
// of their last element and out, with the tile's empty segments, in one coalesced pass
// (SegFlatStaged).
// Stage 2a (segmentFlatGroupKernel, a warp a group of kFlatGroup tiles, only with more tiles than
// that): a group whose tiles all end inside one segment gets the fold of their tails in order.
// Stage 2 (segmentFlatFixupKernel, a thread a tile; a warp a tile for runs of several tiles): a
// tile's head segment s gets the tails of the run of tiles before it whose open segment is s, then
// its head: out[s]. A run of one tile (short segments) is one thread's merges. A longer run is a
// list of items in order: its tiles' tails, except that each whole group inside it is one item
// (its stage-2a fold), so a segment over a million tiles is a few thousand items; 32 lanes fold
// consecutive items (8 loads in flight), then warpTree in lane order.
//
// The softmax (rule G7) takes the same stages with its own tile and a stage 3 that writes the
// elements of the segments that span tiles: segment_flat_softmax.cuh.
//
// Determinism: every combining order depends only on the clipped offsets (through the tiles of
// the path) and the constants here, never on the device, grid, stream or timing.
//
// Offsets that go back. The flat pass needs nondecreasing clipped offsets; every tile checks the
// pairs of offsets it reads and its split points, and one that finds them out of order sets a flag
// in the workspace (cleared by stage 0). Stage 2 then does every segment again by a warp each
// (lanes strided, warpTree), so decreasing or overlapping CSR offsets give each segment's own
// result, in a fixed order. A flagged tile's writes to shared memory are discarded, but still
// each slot has one writer (flatEnds), so no offsets make a race.
#pragma once

#include "segment_flat_stage.cuh"

namespace warpkit {
namespace detail {

/// A tile's record in the workspace: its head (the segment open at its start that ends in it, -1
/// for none, and that segment's partial over the tile) and its tail (the segment open at its end,
/// `segments` for none, and the fold of the tile's elements after its last end).
template <typename S> struct SegFlatTile {
    long long headSeg, tailSeg;
    S head, tail;
};

/// The first tile k in [lo, hi] whose tail segment is past s (rec[k].tailSeg > s; tailSeg never
/// decreases along the tiles), hi when no tile before it is: a binary search.
template <typename S>
WARPKIT_DEVICE long long flatFirstTailPast(const SegFlatTile<S>* rec, long long lo, long long hi, long long s) {
    while (lo < hi) {
        const long long mid = (lo + hi) / 2;
        if (rec[mid].tailSeg <= s) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/// A thread's (ended, partial) pair for the block scan: `ended` when an end lies in its run.
template <typename S> struct FlatCarry {
    bool ended;
    S v;
};
/// a then b (b's elements after a's): b's partial restarts at b's first end.
template <typename A> WARPKIT_DEVICE FlatCarry<typename A::State> flatJoin(const A& a, FlatCarry<typename A::State> x,
                                                                           FlatCarry<typename A::State> y) {
    return FlatCarry<typename A::State>{x.ended || y.ended, y.ended ? y.v : a.merge(x.v, y.v)};
}

/// Exclusive scan of the pairs over the block in thread order (*all: the whole block's, in the
/// last thread only). Every thread calls, with a barrier of the block between two calls.
template <typename A> WARPKIT_DEVICE FlatCarry<typename A::State>
flatBlockScan(const A& a, FlatCarry<typename A::State> mine, FlatCarry<typename A::State>* all) {
    using C = FlatCarry<typename A::State>;
    __shared__ C warps[kFlatThreads / 32];
    const int lane = (int)laneId(), warp = (int)threadIdx.x / 32;
    C incl = mine;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const C up{shflUp((int)incl.ended, o) != 0, shflUp(incl.v, o)};
        if (lane >= o) incl = flatJoin(a, up, incl);
    }
    C excl{shflUp((int)incl.ended, 1) != 0, shflUp(incl.v, 1)};
    if (lane == 0) excl = C{false, a.identity()};
    if (lane == 31) warps[warp] = incl;
    __syncthreads();
    C before{false, a.identity()};
    for (int w = 0; w < warp; ++w) before = flatJoin(a, before, warps[w]);
    *all = flatJoin(a, before, incl);
    // warps[] is written again a tile later, past that tile's barriers (flatTile's step 3)
    return flatJoin(a, before, excl);
}

/// Exclusive scan of the threads' v over the block in thread order with op (associative and
/// commutative): thread 0 gets seed, thread t seed op v_0 op ... op v_(t-1); *total gets v_0 op ...
/// op v_(n-1). Every thread calls, with a barrier of the block between two calls of one Op.
template <typename Op> WARPKIT_DEVICE int flatIntScan(int v, Op op, int seed, int* total) {
    __shared__ int warps[kFlatThreads / 32];
    const int lane = (int)laneId(), warp = (int)threadIdx.x / 32;
    const int incl = warpInclusiveScan(v, op);
    if (lane == 31) warps[warp] = incl;
    __syncthreads(); // the next write of warps[] is a tile later, past that tile's barriers
    const int up = shflUp(incl, 1);
    int before = lane == 0 ? seed : op(seed, up), all = warps[0];
#pragma unroll
    for (int w = 0; w < kFlatThreads / 32; ++w) {
        if (w < warp) before = op(before, warps[w]);
        if (w > 0) all = op(all, warps[w]);
    }
    *total = all;
    return before;
}

/// ArgMax / ArgMin: where the segment holding element `base` of the tile began (relative to the
/// tile): just after the last end of the threads before, else tileStart (at most 0, below every
/// such position). Every thread calls.
WARPKIT_DEVICE int flatRunStart(unsigned tails, int base, int tileStart) {
    const int mine = tails ? base + 32 - __clz((int)tails) : tileStart; // just after its last end
    int last = 0;
    return flatIntScan(mine, Max{}, tileStart, &last);
}

/// Stage 1, part 2: a thread's run, elements [base, base + n) of the tile (all 32 when Full) from
/// xs, bit k of `tails` set where a segment ends, folded left to right from the identity. A
/// segment that starts and ends inside the run is written (at: out shifted to the tile's first
/// segment), or, staged, put in its last element's slot; *first (staged: the first end's slot) gets
/// the fold up to the run's first end; returns the fold of the elements after its last end (all of
/// them when it has none).
/// start: where the segment holding element base began (the rows of ArgMax / ArgMin). base is a
/// multiple of 32, so the run's slots are consecutive (flatPad and flatSegPad pad only at multiples
/// of 32 and 64).
template <bool Full, typename A>
WARPKIT_DEVICE typename A::State flatRun(const A& at, typename A::Elem* xs, int base, int n, unsigned tails, int start,
                                         const unsigned short* segAt, typename A::State* first) {
    typename A::Elem* run = xs + flatPad(base);
    const unsigned short* seg = segAt + flatSegPad(base);
    typename A::State acc = at.identity();
    if (tails == 0u) { // no end in the run (most runs of segments longer than 32)
#pragma unroll
        for (int k = 0; k < kFlatItems; ++k)
            if (Full || k < n) acc = at.take(acc, run[k], base + k - start);
        return acc;
    }
    if constexpr (SegFlatStaged<A>::value) {
        // every end's fold into its own slot (read above), the first included: a predicated store
#pragma unroll
        for (int k = 0; k < kFlatItems; ++k) {
            if (Full || k < n) acc = at.take(acc, run[k], base + k - start);
            if ((tails >> k) & 1u) {
                run[k] = acc;
                acc = at.identity();
            }
        }
        return acc;
    }
    const int f = __ffs((int)tails) - 1;
#pragma unroll
    for (int k = 0; k < kFlatItems; ++k) {
        if (Full || k < n) acc = at.take(acc, run[k], base + k - start);
        if ((tails >> k) & 1u) {
            if (k == f) *first = acc;
            else at.finish(seg[k], acc);
            acc = at.identity();
            start = base + k + 1;
        }
    }
    return acc;
}

/// A tile's span (flatSpan: its first element x0, nS segment ends, nX elements) and head: segment s0
/// when it ends in the tile and began before it (headOpen; headInTile when it has elements in the
/// tile: its partial is the fold up to its end, else the identity); its tail is segment s1.
struct FlatSpan {
    long long x0;
    int nS, nX;
    bool headOpen, headInTile;
};

/// Stage 1's first steps, for every kind of tile: the span and head (*sp), the tile's ends and
/// elements into shared memory (flatStage), its record's head and tail segments (and the head's
/// partial, the identity, when it has no elements in the tile), and this thread's 32 marks as
/// tail bits (*tails; flatTakeMarks). Returns false when the tile finds the offsets out of order:
/// the call is flagged and the marks cleared. Every thread of the block calls.
template <typename A, typename O>
WARPKIT_DEVICE bool flatOpen(const A& a, SegOffsets<O> o, long long items, long long e0, long long path, long long tile,
                             long long s0, long long s1, const FlatAhead<O>& ah, SegFlatTile<typename A::State>* rec,
                             unsigned* bad, unsigned char* marks, unsigned short* segAt, typename A::Elem* xs,
                             FlatSpan* sp, unsigned* tails) {
    // 1. the tile's path items: s1 - s0 segment ends and the elements x0 .. x0 + nX
    bool inOrder = flatSpan(e0, path, tile, s0, s1, &sp->x0, &sp->nS, &sp->nX);
    // 2. the tile's head and tail
    sp->headOpen = sp->nS > 0 && ah.c0 < sp->x0;
    sp->headInTile = sp->headOpen && ah.c1 > sp->x0;
    // 3. ends and elements into shared memory; a tile with offsets out of order flags the call
    inOrder = flatStage(a, o, items, s0, sp->nS, sp->x0, sp->nX, ah, marks, segAt, xs) && inOrder;
    if (threadIdx.x == 0) {
        rec[tile].headSeg = sp->headOpen ? s0 : -1;
        rec[tile].tailSeg = s1;
        if (!sp->headInTile) rec[tile].head = a.identity(); // every record's head written: stage 2 reads them all
    }
    const bool ok = __syncthreads_and(inOrder) != 0;
    *tails = flatTakeMarks(marks);
    if (!ok && threadIdx.x == 0) *bad = 1u;
    return ok;
}

/// Stage 1: one tile (see the header comment), s0 and s1 the splits of its two boundaries, ah what
/// flatAhead loaded for it, xs its elements' buffer; marks all 0 on entry and on return. Every
/// thread of the block calls.
template <typename A, typename O>
WARPKIT_DEVICE void flatTile(const A& a, SegOffsets<O> o, long long items, long long e0, long long path, long long tile,
                             long long s0, long long s1, const FlatAhead<O>& ah, SegFlatTile<typename A::State>* rec,
                             unsigned* bad, unsigned char* marks, typename A::Elem* xs) {
    using S = typename A::State;
    __shared__ unsigned short segAt[flatSegPad(kFlatTile)];
    FlatSpan sp;
    unsigned tails = 0u;
    if (!flatOpen(a, o, items, e0, path, tile, s0, s1, ah, rec, bad, marks, segAt, xs, &sp, &tails)) return;
    const long long x0 = sp.x0, c0 = ah.c0, c1 = ah.c1;
    const int nS = sp.nS, nX = sp.nX, base = (int)threadIdx.x * kFlatItems;
    const bool headInTile = sp.headInTile;
    // 4. this thread's run of elements [base, base + n), folded in registers
    const int n = nX - base < 0 ? 0 : (nX - base < kFlatItems ? nX - base : kFlatItems);
    int start = 0; // rows of ArgMax / ArgMin: where the segment holding element base began
    if constexpr (SegFlatRows<A>::value) {
        // the tile's first element is in segment s0 (begun at c0), or, when s0 ends at the tile's
        // start, in the segment that begins there
        const long long rel = nS > 0 && c1 == x0 ? 0 : c0 - x0;
        const long long lowest = -2147483647ll + kFlatTile; // rows past 2^31 are not supported
        start = flatRunStart(tails, base, (int)(rel < lowest ? lowest : rel));
    }
    A at = a; // out shifted to the tile's first segment: a segment's slot is a 32-bit offset
    at.out += s0;
    S first = a.identity();
    const S acc = n == kFlatItems ? flatRun<true>(at, xs, base, n, tails, start, segAt, &first)
                                  : flatRun<false>(at, xs, base, n, tails, start, segAt, &first);
    // 5. the block scan: the partial before this thread's first end completes that end's segment
    FlatCarry<S> all;
    const FlatCarry<S> before = flatBlockScan(a, FlatCarry<S>{tails != 0u, acc}, &all);
    if (tails != 0u) { // the tile's first end, when it is s0's and s0 began before the tile: the head
        const int firstAt = base + __ffs((int)tails) - 1;
        if constexpr (SegFlatStaged<A>::value) first = xs[flatPad(firstAt)];
        const S v = a.merge(before.v, first);
        if (!before.ended && headInTile) rec[tile].head = v;
        else if constexpr (SegFlatStaged<A>::value) xs[flatPad(firstAt)] = v;
        else at.finish(segAt[flatSegPad(firstAt)], v);
    }
    if (threadIdx.x == kFlatThreads - 1) rec[tile].tail = all.v;
    if constexpr (SegFlatStaged<A>::value) { // 6. the results, one coalesced pass
        __syncthreads();
        for (int j = (int)threadIdx.x; j < nS; j += kFlatThreads) {
            const int p = segAt[j];
            if (p == kFlatEmpty) at.empty(j);
            else if (p != kFlatNone) at.finish(j, xs[flatPad(p)]);
        }
    }
}

} // namespace detail
} // namespace warpkit
