// warpkit/device/detail/segment_fold.cuh: a pair's rows and their folds, shared by the segment
// kernels (segment_kernels.cuh, segment_long.cuh, segment_direct.cuh, segment_flat.cuh): the
// offsets, the rows' bounds and clipping, the batched row loops (forRows: foldRows, writeRows) with
// their batch sizes, and the ordered warp and block trees. Internal: include
// warpkit/device/segment.cuh.
//
// Pairs. The work items are (segment, head) pairs p = s * heads + h; pair p's rows are those of
// segment s, clipped to [0, items), and its element of row r sits at index (begin + r) * heads + h.
#pragma once

#include "../../warp/segmented.cuh"

namespace warpkit {
namespace detail {

/// Where a segment's rows are: CSR (end = begin + 1, one array) or CUB's begin/end arrays.
template <typename O> struct SegOffsets {
    const O* begin;
    const O* end;
};

/// Segment s's offsets as given, (0, 0) for s at or past `segments` (rows then clip to none).
template <typename O>
WARPKIT_DEVICE void segmentBoundsAt(SegOffsets<O> o, long long s, long long segments, long long* b, long long* e) {
    *b = s < segments ? (long long)o.begin[s] : 0;
    *e = s < segments ? (long long)o.end[s] : 0;
}

/// Pair p's segment, p / heads: no division for one head, a 32-bit one while p < 2^32 (the 64-bit
/// routine is a call of about 85 instructions).
WARPKIT_DEVICE long long segmentOfPair(long long p, int heads) {
    if (heads == 1) return p;
    if (p < (1ll << 32)) return (long long)((unsigned)p / (unsigned)heads);
    return p / heads;
}

/// ceil(n / d) for n >= 0 and d >= 1, in 32 bits when both fit (the 64-bit division is a call of
/// about 85 instructions).
WARPKIT_DEVICE long long segCeilDiv(long long n, long long d) {
    if (n < (1ll << 31) && d < (1ll << 31)) return (long long)(((unsigned)n + (unsigned)d - 1u) / (unsigned)d);
    return (n + d - 1) / d;
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

/// forRows' last batch: rows i, i + step, ..., i + n step (n < kB) at element indices idx, idx +
/// di, ...; every load clamped to the last of them (in bounds, the same sectors), only the visits
/// predicated. Returns v.
template <int kB, typename A, typename V>
WARPKIT_DEVICE V forLastRows(const A& a, long long i, long long idx, long long step, long long di, int n, V v) {
    const long long last = idx + n * di;
    typename A::Elem x[kB];
    long long r = i, j = idx;
#pragma unroll
    for (int k = 0; k < kB; ++k, j += di) x[k] = a.load(k < n ? j : last);
    j = idx;
#pragma unroll
    for (int k = 0; k < kB; ++k, r += step, j += di)
        if (k <= n) v(x[k], j, r);
    return v;
}

/// Runs v(element, index, row) for rows first, first + step, ... below `end` of the pair at
/// (base, h), in row order, kBatch rows a batch with every load of a batch in flight before its
/// first visit: full batches load unpredicated; the last batch clamps its loads (forLastRows; half
/// a batch when it holds at most kBatch / 2 rows and kBatch >= 16, so a short pair does not issue
/// 16 loads for a few rows). (A predicate on each load leaves too few predicate registers, and
/// ptxas then visits half a batch before issuing the rest of its loads.) Returns v (a visitor
/// holds its state by value, so nothing of it needs an address). Rows and element indices advance
/// by additions: no 64-bit multiply an element. kBatch * step < 2^31 (step is a block or a lane
/// group).
template <int kBatch, typename A, typename V> WARPKIT_DEVICE V forRows(const A& a, long long base, int h, int heads,
                                                                       long long first, long long end, long long step,
                                                                       V v) {
    const long long di = step * heads;
    long long i = first, idx = (base + first) * heads + h;
#pragma unroll 1 // one batch in flight at a time: unrolled batches cost registers, so blocks an SM
    for (; i + (kBatch - 1) * step < end; i += kBatch * step, idx += kBatch * di) {
        typename A::Elem x[kBatch];
        long long r = i, j = idx;
#pragma unroll
        for (int k = 0; k < kBatch; ++k, j += di) x[k] = a.load(j);
        j = idx;
#pragma unroll
        for (int k = 0; k < kBatch; ++k, r += step, j += di) v(x[k], j, r);
    }
    if (i >= end) return v;
    // the last batch's rows, less one: at most kBatch - 2 (kBatch rows are a full batch)
    const int n = (int)((unsigned)(end - 1 - i) / (unsigned)step);
    if constexpr (kBatch >= 16)
        if (n < kBatch / 2) return forLastRows<kBatch / 2>(a, i, idx, step, di, n, v);
    return forLastRows<kBatch>(a, i, idx, step, di, n, v);
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

/// Left fold of those rows from the identity, kBatch loads in flight (the batch never changes the
/// order, so never the bits).
template <typename A, int kBatch = 8> WARPKIT_DEVICE typename A::State
foldRows(const A& a, long long base, int h, int heads, long long first, long long end, long long step) {
    return forRows<kBatch>(a, base, h, heads, first, end, step, FoldVisitor<A>{a, a.identity()}).st;
}

/// The chunk kernel's loads in flight a thread: for a one-word state and element 16 on sm_90 (a
/// block then has 16 KB of fp32 in flight a round trip, and a chunk of 16384 rows takes 4 round
/// trips, not 8), 32 there for 16-bit elements (the same 16 KB: 56 registers, no spills, where 16
/// took 64), and 12 before sm_90 (16 spill there at 64 registers); 12 for a two-word state (the
/// softmax state, ArgMax of 32-bit values); 8 otherwise. `direct`: the direct kernel's (at most 16:
/// 32 spill at its 40 registers).
template <typename A> struct SegChunkBatch {
    static constexpr bool kOneWord = sizeof(typename A::State) <= 4 && sizeof(typename A::Elem) <= 4;
    static constexpr bool kTwoWords = sizeof(typename A::State) <= 8 && sizeof(typename A::Elem) <= 4;
    static constexpr int kOneWordBatch = WARPKIT_ARCH < 900 ? 12 : sizeof(typename A::Elem) == 2 ? 32 : 16;
    static constexpr int value = kOneWord ? kOneWordBatch : kTwoWords ? 12 : 8;
    static constexpr int direct = value < 16 ? value : 16;
};

/// The lane-group fold's loads in flight a lane (segmentTier): 16 for a one-word state and element
/// (a lane's 9-16 rows of a 32-lane pair, 257-512 rows, in one round trip, not two), else 8 (the
/// group kernel's 80 registers).
template <typename A> struct SegTierBatch { static constexpr int value = SegChunkBatch<A>::kOneWord ? 16 : 8; };

/// The outputs of those rows (two-pass algorithms), 4 loads in flight (8 spill in the write kernel).
template <typename A, int kBatch = 4, typename F> WARPKIT_DEVICE void
writeRows(const A& a, const F& f, long long base, int h, int heads, long long first, long long end, long long step) {
    forRows<kBatch>(a, base, h, heads, first, end, step, WriteVisitor<A, F>{a, f});
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

} // namespace detail
} // namespace warpkit
