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
// each segment's max and sum live in two shared arrays at its rank. Two segmented folds over a
// thread's fold run (R consecutive elements, R = 8 .. 32 by the tile's element count, so that every
// warp folds: flatFoldRun), each one short loop with no branch per element: first the maxima (each end
// puts its segment's max at its rank; a block scan of (ended, max) completes each run's first end,
// and the last thread puts the tail's max after the last rank), then, after a barrier, the sums of
// exp(x - max) with each element's own segment max read by its rank (no rescaling; a block scan of
// (ended, sum) completes the first ends). The tile's head (its segment began before the tile) gets
// the state (max, sum) of its elements in the tile, recorded for stage 2 as the reductions' head; the
// tail likewise. fp32 plain kinds keep exp(x - max) in x's slot. After a barrier the threads turn
// the states into factors in place (the max and the scale or log-sum), rank t + 128 j by thread t.
// After another, every element between the head's end and the last end is in a segment whose
// factors are in the arrays: thread t writes elements t, t + 128, ... of that range (coalesced),
// its rank from its run's rank base and tail bits. The head's elements (before its end) and the
// tail's (after the last end) are deferred: the tile records where they lie.
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

/// A fold's step at element j of a run (mask = 1 << j, a constant once unrolled; bits: the run's
/// end bits from the step's first element): when bit j is set (a segment ends there), acc goes to
/// the shared slot at address *at, acc becomes reset and *at advances a slot. A bit test and three
/// predicated instructions: as C++, the test went through shifts and a select for each use, or the
/// store behind a branch with the array's address recomputed under it (about 10 instructions an
/// element).
WARPKIT_DEVICE void flatEndIf(unsigned bits, unsigned mask, float& acc, float reset, unsigned& at) {
    asm volatile("{\n.reg .pred p;\n.reg .b32 t;\nand.b32 t, %2, %4;\nsetp.ne.b32 p, t, 0;\n"
                 "@p st.shared.f32 [%1], %0;\n@p mov.f32 %0, %3;\n@p add.u32 %1, %1, 4;\n}"
                 : "+f"(acc), "+r"(at)
                 : "r"(bits), "f"(reset), "r"(mask)
                 : "memory");
}
/// r + 1 when bits & mask (a constant once unrolled) is nonzero, else r: a bit test and a predicated add.
WARPKIT_DEVICE int flatCountIf(unsigned bits, unsigned mask, int r) {
    asm("{\n.reg .pred p;\n.reg .b32 t;\nand.b32 t, %1, %2;\nsetp.ne.b32 p, t, 0;\n@p add.s32 %0, %0, 1;\n}"
        : "+r"(r)
        : "r"(bits), "r"(mask));
    return r;
}

/// Whether the flat pass may run algorithm a: not the softmax in place (stage 2's rewrite of a
/// tile's segments for offsets out of order would read outputs). Host.
template <typename A> inline bool segFlatAllowed(const A&) { return true; }
template <typename T, int Kind> inline bool segFlatAllowed(const SegSoftmaxAlgo<T, Kind>& a) {
    return (const void*)a.x != (const void*)a.y;
}

/// The segmented maxima's and sums' operators of the block scans (flatBlockScan).
struct FlatMaxOp {
    using State = float;
    WARPKIT_DEVICE float identity() const { return negInf(); }
    WARPKIT_DEVICE float merge(float x, float y) const { return Max{}(x, y); } // NaN if either is
};
struct FlatSumOp {
    using State = float;
    WARPKIT_DEVICE float identity() const { return 0.0f; }
    WARPKIT_DEVICE float merge(float x, float y) const { return x + y; }
};

/// The max a segment's exponents are taken against: 0 for an all -inf segment (as softmaxFactors),
/// so that its sum is 0 and its state {-inf, 0}.
WARPKIT_DEVICE float flatExpMax(float m) { return m == negInf() ? 0.0f : m; }

/// Whether the fold keeps exp(x - max) in x's shared slot for the store pass (the plain kinds of
/// fp32: the store is then one multiply, with the same bits as SegSoftmaxAlgo::store).
template <typename A> struct SegFlatKeepExp {
    static constexpr bool value = IsSame<typename A::Elem, float>::value && (SegFlatSoftmax<A>::kind & SoftmaxLog) == 0;
};

constexpr int kFlatSoftmaxUnroll = 8; // elements a step of the folds: one copy of each fold's body

/// The elements a thread folds (R, its fold run [R t, R t + R)) in a tile of nX elements: the least
/// multiple of kFlatSoftmaxUnroll that covers them with every thread, so that all the warps fold
/// (at mean 1 a tile holds about 2048 elements: R 16 or 24, not 32). A step of the folds (8
/// elements from a multiple of 8) lies in one 32-block of the padded slots, so its slots are
/// consecutive; the start slots flatPad(R t) of a warp's lanes fall in 32 banks for R 8, 16 and 32,
/// at most 2 lanes a bank for R 24.
WARPKIT_HD constexpr int flatFoldRun(int nX) {
    constexpr int U = kFlatSoftmaxUnroll * kFlatThreads;
    return nX <= U ? kFlatSoftmaxUnroll : (nX + U - 1) / U * kFlatSoftmaxUnroll;
}
static_assert(flatFoldRun(kFlatTile) == kFlatItems && kFlatItems % kFlatSoftmaxUnroll == 0,
              "flatFoldRun: a full tile folds the aligned 32-element runs");

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
    using T = typename A::Elem;
    __shared__ float smax[kFlatTile / 2 + 1]; // by rank (at most kFlatTile / 2 ends), and the tail's
    __shared__ float ssum[kFlatTile / 2];     // by rank: sums, then with smax the factors
    __shared__ int lastEnd;                   // the tile's last end (its element), when it has one
    static_assert(kFlatThreads * sizeof(uint2) <= kFlatTile, "flatSoftmaxTile: the run table fits the marks");
    static_assert(kFlatItems % kFlatSoftmaxUnroll == 0, "flatSoftmaxTile: the folds' steps tile a run");
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
    // 2. the ends' ranks: aligned run t's first end is rank r0 (the run table, read by the store
    //    pass). The folds take runs of R elements (fold run t: elements [R t, R t + R)), R the
    //    multiple of 8 that spreads the tile's elements over all the threads (8 .. 32): at mean 1 a
    //    tile holds about 2048 elements, and 32-element runs left warps 2 and 3 idle at the scans'
    //    barriers. A fold run's bits and first rank come from the run table (a barrier of its own
    //    when R < 32). A fold run's slots past the tile's elements get -inf, so that every run with
    //    elements folds all R (max: no change; exp: 0).
    int nEnds = 0;
    const int r0 = flatIntScan(__popc(tails), Sum{}, 0, &nEnds); // its barrier: every thread has taken its marks
    runs[threadIdx.x] = make_uint2((unsigned)r0, tails);
    if (tails != 0u && r0 + __popc(tails) == nEnds) lastEnd = base + 31 - __clz((int)tails);
    const int R = flatFoldRun(nX);
    const int start = (int)threadIdx.x * R;
    unsigned bitsAll = tails; // the fold run's end bits (bit k: element start + k)
    int rank0 = r0;           // the rank of its first end
    if (R < kFlatItems) {     // R is the same in every thread
        __syncthreads();
        const uint2 w0 = runs[start >> 5],
                    w1 = runs[(start >> 5) + 1 < kFlatThreads ? (start >> 5) + 1 : kFlatThreads - 1];
        const int sh = start & 31;
        bitsAll = (unsigned)((((unsigned long long)w1.y << 32) | w0.y) >> sh) & ((1u << R) - 1u);
        rank0 = (int)w0.x + __popc(w0.y & ((1u << sh) - 1u));
    }
    const int nf = nX - start < 0 ? 0 : (nX - start < R ? nX - start : R);
#pragma unroll 1
    for (int k = nf > 0 ? nf : R; k < R; ++k) xs[flatPad(start + k)] = Arith<T>::from_acc(negInf());
    const int len = nf > 0 ? R : 0;
    // 3. the maxima: each end's fold in smax at its rank (a run's first end completed below). A step
    //    loads its elements first; an end's slot address advances by one at each end (no per-element
    //    rank or slot arithmetic), its store predicated.
    float m = negInf();
    unsigned at = smemAddr(smax + rank0);
#pragma unroll 1
    for (int k = 0; k < len; k += kFlatSoftmaxUnroll) {
        const unsigned bits = bitsAll >> k;
        const T* const step = xs + flatPad(start + k); // 8 slots in one 32-block: consecutive
        float v[kFlatSoftmaxUnroll];
#pragma unroll
        for (int j = 0; j < kFlatSoftmaxUnroll; ++j) v[j] = Arith<T>::to_acc(step[j]);
#pragma unroll
        for (int j = 0; j < kFlatSoftmaxUnroll; ++j) {
            m = Max{}(m, v[j]);
            flatEndIf(bits, 1u << j, m, negInf(), at);
        }
    }
    // 4. the block scan of (ended, max) completes each run's first end (rank rank0; rank 0 for the
    //    tile's head: its max over the tile); smax[nEnds] gets the tail's (the elements past the last end)
    FlatCarry<float> allMax;
    const FlatCarry<float> maxBefore = flatBlockScan(FlatMaxOp{}, FlatCarry<float>{bitsAll != 0u, m}, &allMax);
    if (bitsAll != 0u) smax[rank0] = Max{}(maxBefore.v, smax[rank0]);
    if (threadIdx.x == kFlatThreads - 1) smax[nEnds] = allMax.v;
    __syncthreads();
    // 5. the sums of exp(x - max), each element against its segment's max in the tile (its rank's:
    //    loaded with the step's elements, no chain from one end to the next); each end's in ssum.
    //    The fast exp where the store pass takes its own: every term is at most 1 and the max's is
    //    1 exactly, so the sum's error stays within a few ulps.
    constexpr bool keepExp = SegFlatKeepExp<A>::value;
    float sum = 0.0f;
    unsigned sumAt = smemAddr(ssum + rank0);
#pragma unroll 1
    for (int k = 0, rank = rank0; k < len; k += kFlatSoftmaxUnroll) {
        const unsigned bits = bitsAll >> k;
        T* const step = xs + flatPad(start + k); // 8 slots in one 32-block: consecutive
        float v[kFlatSoftmaxUnroll], mx[kFlatSoftmaxUnroll];
#pragma unroll
        for (int j = 0; j < kFlatSoftmaxUnroll; ++j) {
            v[j] = Arith<T>::to_acc(step[j]);
            mx[j] = smax[rank];
            rank = flatCountIf(bits, 1u << j, rank);
        }
#pragma unroll
        for (int j = 0; j < kFlatSoftmaxUnroll; ++j) {
            const float x = expDiff<keepExp>(v[j], flatExpMax(mx[j]));
            if constexpr (keepExp) step[j] = x;
            sum += x;
            flatEndIf(bits, 1u << j, sum, 0.0f, sumAt);
        }
    }
    // 6. the block scan of (ended, sum) completes each run's first end: the tile's head (recorded
    //    for stage 2) or a segment of rank rank0; the tail's state recorded
    FlatCarry<float> allSum;
    const FlatCarry<float> sumBefore = flatBlockScan(FlatSumOp{}, FlatCarry<float>{bitsAll != 0u, sum}, &allSum);
    if (bitsAll != 0u) {
        const float v = sumBefore.v + ssum[rank0];
        if (!sumBefore.ended && headInTile) rec[tile].head = SoftmaxState{smax[rank0], v};
        else ssum[rank0] = v;
    }
    if (threadIdx.x == kFlatThreads - 1) rec[tile].tail = SoftmaxState{smax[nEnds], allSum.v};
    // 7. each state's factors in place, ranks threadIdx.x + 128 j by this thread, no branch that
    //    diverges (rank 0 of a head from before the tile holds a partial and is never read)
    const int lo = headInTile ? (int)(c1 - x0) : 0;
    __syncthreads();
    const int hi = nEnds > 0 ? lastEnd + 1 : 0;
    if (threadIdx.x == 0) defer[tile] = FlatDefer{FlatFactors{0.0f, 0.0f}, x0, lo, hi, nX};
    for (int r = (int)threadIdx.x; r < nEnds; r += kFlatThreads) {
        const FlatFactors f = flatFactors(a, SoftmaxState{smax[r], ssum[r]});
        smax[r] = f.max;
        ssum[r] = f.k;
    }
    __syncthreads();
    // 8. the elements between the head's end and the last end, one coalesced pass
    //    (i & 31 is the same for every i of a thread: kFlatThreads is a multiple of 32)
    const unsigned below = (1u << ((lo + (int)threadIdx.x) & 31)) - 1u;
    for (int i = lo + (int)threadIdx.x; i < hi; i += kFlatThreads) {
        const uint2 r = runs[i >> 5];
        const int q = (int)r.x + __popc(r.y & below);
        if constexpr (keepExp) a.y[x0 + i] = xs[flatPad(i)] * ssum[q]; // exp(x - max) * scale
        else a.store(flatExpand(FlatFactors{smax[q], ssum[q]}), x0 + i, xs[flatPad(i)]);
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
        if (!nextHead) f = defer[flatFirstTailPast(rec, m + 1, tiles - 1, s)].f; // s spans tiles
        writeRows<A, 8>(a, flatExpand(f), d.x0 + d.post, 0, 1, (long long)laneId(), d.n - d.post, 32);
    }
}

} // namespace detail
} // namespace warpkit
