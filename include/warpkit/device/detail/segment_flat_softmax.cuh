// warpkit/device/detail/segment_flat_softmax.cuh: the flat pass of the segment softmax (plan rule
// G7: plain and log, one head, CSR offsets, short segments on average): stage 1's tile for a
// two-pass algorithm and stage 3, which writes the elements of the segments that span tiles. The
// merge path, the tiles and stages 0, 2a and 2 are the reductions' (segment_flat.cuh,
// segment_flat_run.cuh). Internal: include warpkit/device/segment.cuh.
//
// Stage 1 (flatSoftmaxTile, one block a tile). The ends and elements go to shared memory and the
// marks become each thread's 32 tail bits as for the reductions (flatStage, flatTakeMarks). The
// nonempty segments that end in the tile are ranked in order by a block scan of the threads' end
// counts (rank r: 0 .. nEnds - 1; at most kFlatTile / 2 of them, as a tile holds an element for each);
// a thread folds its 32 elements (the online-softmax state), and at each end but its run's first,
// whose segment began inside the run, puts the segment's state (8 bytes) in a shared array at the
// end's rank. The block scan of (ended, partial) pairs then completes each run's first end, which
// is the tile's head when its segment began before the tile (then recorded for stage 2, as the
// reductions' head). After a barrier the threads turn the states into factors in place (the max
// and the scale or log-sum, 8 bytes), rank t + 128 j by thread t. After another, every element between the
// head's end and the last end is in a segment whose factors are in the array: thread t writes
// elements t, t + 128, ... of that range (coalesced), its rank from its run's rank base and tail
// bits. The head's elements (before its end) and the tail's (after the last end) are deferred: the
// tile records where they lie.
// Stage 2 (the reductions' fixup kernel): where a reduction writes a tile m's head segment's result,
// the softmax puts its factors in the workspace at m (every tile whose head segment began before it,
// including one whose head ended exactly at its start: the tiles before read them).
// Stage 3 (segmentFlatWriteKernel, a warp a tile): tile m's deferred head elements with its own
// factors, its deferred tail elements with those of the tile u whose head segment is m's tail
// segment (u = m + 1 unless the segment spans several tiles: then a search of the tiles' tails).
// So every element is read once and written once from DRAM except those of the segments that span
// a tile boundary (read twice). Stage 3 does nothing when a tile found the offsets out of order:
// stage 2 then does every segment by a warp, a fold and a write pass, after stage 1's tiles in
// stream order, so the result does not depend on which tiles wrote first. That rewrite reads x
// again, so an in-place call (y == x) takes the group kernels instead (segFlatAllowed).
#pragma once

#include "segment_flat.cuh"

namespace warpkit {
namespace detail {

/// Whether A is the segment softmax (the flat pass's two-pass algorithm), and its Kind.
template <typename A> struct SegFlatSoftmax {
    static constexpr bool value = false;
    static constexpr int kind = SoftmaxPlain;
};
template <typename T, int Kind> struct SegFlatSoftmax<SegSoftmaxAlgo<T, Kind>> {
    static constexpr bool value = true;
    static constexpr int kind = Kind;
};

/// A segment's softmax factors as the flat pass keeps them: the max and the one other factor the
/// Kind's output uses (SegSoftmaxAlgo::store: the scale, or log-sum for a log Kind), 8 bytes.
struct FlatFactors {
    float max, k;
};

/// A tile's deferred elements (stage 3): those of [x0, x0 + pre) (its head segment's, with f) and
/// of [x0 + post, x0 + n) (its tail segment's, with the factors of the tile that segment ends in).
/// f is written by stage 2 for every tile with a head segment; the rest by stage 1.
struct FlatDefer {
    FlatFactors f;
    long long x0;
    int pre, post, n;
};

/// The flat pass's factors of state s (a.prepare's, less what the Kind's output does not read).
template <typename A> WARPKIT_DEVICE FlatFactors flatFactors(const A& a, SoftmaxState s) {
    const SoftmaxFactors f = a.prepare(s);
    return FlatFactors{f.max, (SegFlatSoftmax<A>::kind & SoftmaxLog) ? f.logSum : f.scale};
}
/// SoftmaxFactors for a.store from FlatFactors: the fields the Kind's output reads are the same.
WARPKIT_DEVICE SoftmaxFactors flatExpand(FlatFactors f) { return SoftmaxFactors{f.max, f.k, f.k, 0.0f}; }

/// Where rank r's factors live in the tile's array: r with its low 4 bits xor its 32-block, so the
/// threads of a warp, each at its own run of ranks (32 apart at mean length 1), hit different banks.
WARPKIT_HD constexpr int flatFactorSlot(int r) { return r ^ ((r >> 5) & 15); }

/// Whether the flat pass may run algorithm a: not the softmax in place (stage 2's rewrite of a
/// tile's segments for offsets out of order would read outputs). Host.
template <typename A> inline bool segFlatAllowed(const A&) { return true; }
template <typename T, int Kind> inline bool segFlatAllowed(const SegSoftmaxAlgo<T, Kind>& a) {
    return (const void*)a.x != (const void*)a.y;
}

/// Exclusive scan of n over the block in thread order; *total gets the block's sum. Every thread
/// calls, with a barrier of the block between two calls.
WARPKIT_DEVICE int flatCountScan(int n, int* total) {
    __shared__ int warps[kFlatThreads / 32];
    const int lane = (int)laneId(), warp = (int)threadIdx.x / 32;
    const int incl = warpInclusiveScan(n, Sum{});
    if (lane == 31) warps[warp] = incl;
    __syncthreads(); // warps[] is written again a tile later, past that tile's barriers
    int before = 0, all = 0;
#pragma unroll
    for (int w = 0; w < kFlatThreads / 32; ++w) {
        before += w < warp ? warps[w] : 0;
        all += warps[w];
    }
    *total = all;
    return before + incl - n;
}

/// Stage 1, part 2 of the softmax: a thread's run, elements [base, base + n) of the tile (all 32
/// when Full) from xs, bit k of `tails` set where a segment ends, its first end of rank `rank`,
/// folded left to right from the identity; each end but the first puts its segment's state in st
/// at its rank (two words: max, sum), *first gets the fold up to the first end. Returns the fold
/// after the last end.
template <bool Full, typename A> WARPKIT_DEVICE SoftmaxState flatSoftmaxRun(const A& a, const typename A::Elem* xs,
                                                                            int base, int n, unsigned tails, int rank,
                                                                            float2* st, SoftmaxState* first) {
    const typename A::Elem* run = xs + flatPad(base);
    SoftmaxState acc = a.identity();
    if (tails == 0u) { // no end in the run: a whole one 8 values an update (one max, one rescale)
        if constexpr (Full) {
#pragma unroll
            for (int c = 0; c < kFlatItems; c += 8) {
                typename A::Elem v[8];
#pragma unroll
                for (int j = 0; j < 8; ++j) v[j] = run[c + j];
                acc = softmaxStateUpdate(acc, v);
            }
        } else {
#pragma unroll
            for (int k = 0; k < kFlatItems; ++k)
                if (k < n) acc = a.take(acc, run[k], 0);
        }
        return acc;
    }
    const int f = __ffs((int)tails) - 1;
    // the states only: their factors (a reciprocal or a logarithm each), taken here, would cost the
    // warp their instructions at nearly every k where any of its lanes has an end (every k at mean 4)
#pragma unroll
    for (int k = 0; k < kFlatItems; ++k) {
        if (Full || k < n) acc = a.take(acc, run[k], 0);
        if ((tails >> k) & 1u) {
            if (k == f) *first = acc;
            else st[flatFactorSlot(rank)] = make_float2(acc.max, acc.sum);
            ++rank;
            acc = a.identity();
        }
    }
    return acc;
}

/// Stage 1 of the softmax: one tile (see the header comment), s0 and s1 the splits of its two
/// boundaries, ah what flatAhead loaded for it, xs its elements' buffer, defer[tile] its deferred
/// elements. marks: all 0 on entry but their first 1 KB, which holds the tile before's run table
/// (each thread's rank base and tail bits, read by its store pass) and is cleared here, before the
/// first barrier; the caller puts a barrier between two tiles. (In the marks, not an array of its
/// own, the table leaves 37.5 KB of shared memory a block for 4-byte values: 6 blocks an SM.)
/// Every thread of the block calls.
template <typename A, typename O>
WARPKIT_DEVICE void flatSoftmaxTile(const A& a, SegOffsets<O> o, long long items, long long e0, long long path,
                                    long long tile, long long s0, long long s1, const FlatAhead<O>& ah,
                                    SegFlatTile<SoftmaxState>* rec, FlatDefer* defer, unsigned* bad,
                                    unsigned char* marks, typename A::Elem* xs) {
    using S = SoftmaxState;
    __shared__ float2 st[kFlatTile / 2]; // by rank (at most kFlatTile / 2 nonempty ends): states, then factors
    __shared__ int lastEnd;              // the tile's last end (its element), when it has one
    static_assert(kFlatThreads * sizeof(uint2) <= kFlatTile, "flatSoftmaxTile: the run table fits the marks");
    uint2* runs = reinterpret_cast<uint2*>(marks); // each thread's (rank of its first end, tail bits)
    runs[threadIdx.x] = make_uint2(0u, 0u);        // the tile before's, read before the caller's barrier
    // 1. the tile's span, head, ends and elements (as flatTile); this thread's tail bits
    FlatSpan sp;
    unsigned tails = 0u;
    if (!flatOpen(a, o, items, e0, path, tile, s0, s1, ah, rec, bad, marks, (unsigned short*)nullptr, xs, &sp, &tails))
        return;
    const long long x0 = sp.x0, c1 = ah.c1;
    const int nX = sp.nX, base = (int)threadIdx.x * kFlatItems;
    const bool headInTile = sp.headInTile;
    const int n = nX - base < 0 ? 0 : (nX - base < kFlatItems ? nX - base : kFlatItems);
    // 2. the ends' ranks: a thread's first end is rank r0
    int nEnds = 0;
    const int r0 = flatCountScan(__popc(tails), &nEnds); // its barrier: every thread has taken its marks
    runs[threadIdx.x] = make_uint2((unsigned)r0, tails);
    if (tails != 0u && r0 + __popc(tails) == nEnds) lastEnd = base + 31 - __clz((int)tails);
    // 3. the run folded; the segments that begin and end in it put their states in st
    S first = a.identity();
    const S acc = n == kFlatItems ? flatSoftmaxRun<true>(a, xs, base, n, tails, r0, st, &first)
                                  : flatSoftmaxRun<false>(a, xs, base, n, tails, r0, st, &first);
    // 4. the block scan completes each run's first end: the tile's head, or a segment of rank r0
    FlatCarry<S> all;
    const FlatCarry<S> before = flatBlockScan(a, FlatCarry<S>{tails != 0u, acc}, &all);
    if (tails != 0u) {
        const S v = a.merge(before.v, first);
        if (!before.ended && headInTile) rec[tile].head = v;
        else st[flatFactorSlot(r0)] = make_float2(v.max, v.sum);
    }
    if (threadIdx.x == kFlatThreads - 1) rec[tile].tail = all.v;
    // 5. each state's factors in place, ranks threadIdx.x + 128 j by this thread, no branch that
    //    diverges (rank 0 of a head from before the tile holds nothing and is never read)
    const int lo = headInTile ? (int)(c1 - x0) : 0;
    __syncthreads();
    const int hi = nEnds > 0 ? lastEnd + 1 : 0;
    if (threadIdx.x == 0) defer[tile] = FlatDefer{FlatFactors{0.0f, 0.0f}, x0, lo, hi, nX};
    for (int r = (int)threadIdx.x; r < nEnds; r += kFlatThreads) {
        const float2 v = st[flatFactorSlot(r)];
        const FlatFactors f = flatFactors(a, SoftmaxState{v.x, v.y});
        st[flatFactorSlot(r)] = make_float2(f.max, f.k);
    }
    __syncthreads();
    // 6. the elements between the head's end and the last end, one coalesced pass
    for (int i = lo + (int)threadIdx.x; i < hi; i += kFlatThreads) {
        const uint2 r = runs[i >> 5];
        const int rank = (int)r.x + __popc(r.y & ((1u << (i & 31)) - 1u));
        const float2 f = st[flatFactorSlot(rank)];
        a.store(flatExpand(FlatFactors{f.x, f.y}), x0 + i, xs[flatPad(i)]);
    }
}

/// Stage 3 kernel (a warp a tile, grid-stride): the deferred elements of every tile (see the
/// header comment), each range lane-strided with 8 loads in flight; nothing when the offsets went
/// back (stage 2 then wrote every segment).
template <typename A> __global__ void __launch_bounds__(kFlatThreads)
    segmentFlatWriteKernel(A a, long long tiles, const SegFlatTile<SoftmaxState>* rec, const FlatDefer* defer,
                           const unsigned* bad) {
    const long long warps = (long long)gridDim.x * (kFlatThreads / 32);
    if (*bad != 0u) return;
    for (long long m = ((long long)blockIdx.x * kFlatThreads + threadIdx.x) / 32; m < tiles; m += warps) {
        const FlatDefer d = defer[m];
        const long long s = rec[m].tailSeg;
        const bool nextHead = m + 1 < tiles && rec[m + 1].headSeg == s; // the usual case: s ends in m + 1
        const FlatFactors nf = m + 1 < tiles ? defer[m + 1].f : d.f;
        if (d.pre > 0) writeRows<A, 8>(a, flatExpand(d.f), d.x0, 0, 1, (long long)laneId(), d.pre, 32);
        if (d.post >= d.n) continue;
        FlatFactors f = nf;
        if (!nextHead) { // s spans tiles: the first tile after m whose tail is past s (tailSeg never decreases)
            long long lo = m + 1, hi = tiles - 1;
            while (lo < hi) {
                const long long mid = (lo + hi) / 2;
                if (rec[mid].tailSeg <= s) lo = mid + 1;
                else hi = mid;
            }
            f = defer[lo].f;
        }
        writeRows<A, 8>(a, flatExpand(f), d.x0 + d.post, 0, 1, (long long)laneId(), d.n - d.post, 32);
    }
}

} // namespace detail
} // namespace warpkit
