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
// Stage 0 (segmentFlatSplitKernel, a warp a tile boundary): the split of every tile boundary, by a
// search of the offsets, into the workspace, so that a tile starts with one load of its two splits
// (loaded a tile ahead) and not with a chain of dependent searches of its own.
// Stage 1 (segmentFlatKernel, one block a tile, grid-stride): the tile's ends and elements go to
// shared memory (elements with 16-byte loads where the alignment allows); each thread takes
// kFlatItems path items, folds its elements left to right from the identity and writes every
// segment that starts and ends inside its items; a block scan of (ended, partial) pairs, in thread
// order, gives each thread the partial of the segment it starts inside. The segment open at the
// tile's start and ending in it is written to the workspace as the tile's head; the fold of the
// elements after the tile's last end is the tile's tail.
// Stage 2a (segmentFlatGroupKernel, a warp a group of kFlatGroup tiles, only with more tiles than
// that): a group whose tiles all end inside one segment gets the fold of their tails in order.
// Stage 2 (segmentFlatFixupKernel, a warp a tile): a tile's head segment s gets the tails of the
// run of tiles before it whose open segment is s, then its head: out[s]. The run is a list of items
// in order: its tiles' tails, except that each whole group inside it is one item (its stage-2a
// fold), so a segment over a million tiles is a few thousand items; 32 lanes fold consecutive
// items (8 loads in flight), then warpTree in lane order.
//
// Determinism: every combining order depends only on the clipped offsets (through the tiles of
// the path) and the constants here, never on the device, grid, stream or timing.
//
// Offsets that go back. The flat pass needs nondecreasing clipped offsets; every tile checks the
// pairs of offsets it reads and its split points, and one that finds them out of order sets a flag
// in the workspace (cleared before stage 0). Stage 2 then does every segment again by a warp each
// (lanes strided, warpTree), so decreasing or overlapping CSR offsets give each segment's own
// result, in a fixed order.
#pragma once

#include "../../thread/vector.cuh"
#include "segment_kernels.cuh"

namespace warpkit {
namespace detail {

constexpr int kFlatThreads = 256, kFlatItems = 16;
constexpr int kFlatTile = kFlatThreads * kFlatItems; // path items a tile: fixed, so the bits are too
constexpr int kFlatGroup = 256;                      // tiles a group (stage 2a): fixed too

/// Where shared-memory slot i of a tile's ends or elements lives: a word of padding every 32, so
/// the threads of a warp, each at its own 16 path items (slots about 16 apart), fall in different
/// banks (unpadded: 16-way conflicts on every fold step).
WARPKIT_HD constexpr int flatPad(int i) { return i + (i >> 5); }

/// A tile's record in the workspace: its head (the segment open at its start that ends in it, -1
/// for none, and that segment's partial over the tile) and its tail (the segment open at its end,
/// `segments` for none, and the fold of the tile's elements after its last end).
template <typename S> struct SegFlatTile {
    long long headSeg, tailSeg;
    S head, tail;
};

/// The clipped offset c[j] (j in [0, segments]); CSR offsets only (end = begin + 1).
template <typename O> WARPKIT_DEVICE long long flatOffset(SegOffsets<O> o, long long j, long long items) {
    const long long v = (long long)o.begin[j];
    return v < 0 ? 0 : (v > items ? items : v);
}

/// The merge-path split of diagonal d: the number of segment ends taken before path item d (the
/// smallest s with E[s] > c[0] + d - 1 - s). A warp searches together, 32 probes a round. Every
/// lane calls; every lane gets it.
template <typename O> WARPKIT_DEVICE long long flatSplit(SegOffsets<O> o, long long segments, long long items,
                                                         long long e0, long long elems, long long d) {
    long long lo = d - elems > 0 ? d - elems : 0, hi = d < segments ? d : segments;
    const int lane = (int)laneId();
    while (lo < hi) {
        const long long step = (hi - lo + 31) / 32, p = lo + lane * step;
        const bool probe = p < hi;
        const bool taken = probe && flatOffset(o, p + 1, items) <= e0 + d - 1 - p;
        const unsigned notTaken = __ballot_sync(WARPKIT_FULL_MASK, probe && !taken);
        const unsigned probes = __ballot_sync(WARPKIT_FULL_MASK, probe);
        const int first = notTaken ? __ffs(notTaken) - 1 : __popc(probes); // the first probe not taken
        const long long pFirst = shflIdx(p, first < 32 ? first : 0);
        if (first > 0) lo += (first - 1) * step + 1;
        if (notTaken) hi = pFirst;
    }
    return lo;
}

/// A thread's (ended, partial) pair for the block scan: `ended` when an end lies in its items.
template <typename S> struct FlatCarry {
    bool ended;
    S v;
};
/// a then b (b's items after a's): b's partial restarts at b's first end.
template <typename A> WARPKIT_DEVICE FlatCarry<typename A::State> flatJoin(const A& a, FlatCarry<typename A::State> x,
                                                                           FlatCarry<typename A::State> y) {
    return FlatCarry<typename A::State>{x.ended || y.ended, y.ended ? y.v : a.merge(x.v, y.v)};
}

/// Exclusive scan of the pairs over the block in thread order (*all: the whole block's). Every
/// thread calls.
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
    C total = before;
    for (int w = warp; w < kFlatThreads / 32; ++w) total = flatJoin(a, total, warps[w]);
    *all = total;
    __syncthreads(); // warps[] is written again by the next tile
    return flatJoin(a, before, excl);
}

/// Stage 1, part 1: the tile's segment ends (shifted by one: ends[0] is the end before the tile's
/// first, so ends[j] is where segment s0 + j starts), relative to the tile's first element and
/// clamped to [-1, kFlatTile + 1], and its elements, into shared memory (slot i at flatPad(i)).
/// Returns whether the offsets read are in order.
template <typename A, typename O> WARPKIT_DEVICE bool flatStage(const A& a, SegOffsets<O> o, long long items,
                                                                long long s0, int nS, long long x0, int nX, int* ends,
                                                                typename A::Elem* elems) {
    using T = typename A::Elem;
    bool ok = true;
    for (int j = (int)threadIdx.x; j <= nS; j += kFlatThreads) {
        const long long e = flatOffset(o, s0 + j, items), rel = e - x0;
        if (j > 0) ok = ok && flatOffset(o, s0 + j - 1, items) <= e;
        ends[flatPad(j)] = rel < -1 ? -1 : (rel > kFlatTile + 1 ? kFlatTile + 1 : (int)rel);
    }
    const T* p = a.in + x0;
    constexpr int V = vectorElems<T>();
    const VectorSplit sp = vectorSplit(p, nX);
    const int head = sp.head, body = (int)sp.vectors;
    for (int i = (int)threadIdx.x; i < head; i += kFlatThreads) elems[flatPad(i)] = p[i];
#pragma unroll 4
    for (int j = (int)threadIdx.x; j < body; j += kFlatThreads) {
        const Vector16<T> v = loadVector(p + head + j * V);
#pragma unroll
        for (int k = 0; k < V; ++k) elems[flatPad(head + j * V + k)] = v.e[k];
    }
    for (int i = head + body * V + (int)threadIdx.x; i < nX; i += kFlatThreads) elems[flatPad(i)] = p[i];
    return ok;
}

/// The path item where tile boundary t lies (t = tiles: the path's end).
WARPKIT_DEVICE long long flatDiagonal(long long t, long long path) {
    return t * kFlatTile < path ? t * kFlatTile : path;
}

/// Stage 0 kernel: splits[t] = the split of tile boundary t, t in [0, tiles], a warp each.
template <typename O> __global__ void __launch_bounds__(kFlatThreads)
    segmentFlatSplitKernel(SegOffsets<O> o, long long segments, long long items, long long tiles, long long* splits) {
    const long long e0 = flatOffset(o, 0, items), eN = flatOffset(o, segments, items);
    const long long elems = eN > e0 ? eN - e0 : 0, path = segments + elems;
    const long long warps = (long long)gridDim.x * (kFlatThreads / 32);
    for (long long t = ((long long)blockIdx.x * kFlatThreads + threadIdx.x) / 32; t <= tiles; t += warps) {
        const long long s = flatSplit(o, segments, items, e0, elems, flatDiagonal(t, path));
        if (laneId() == 0) splits[t] = s;
    }
}

/// Stage 1: one tile (see the header comment), s0 and s1 the splits of its two boundaries. Every
/// thread of the block calls.
template <typename A, typename O>
WARPKIT_DEVICE void flatTile(const A& a, SegOffsets<O> o, long long items, long long e0, long long path, long long tile,
                             long long s0, long long s1, SegFlatTile<typename A::State>* rec, unsigned* bad) {
    using S = typename A::State;
    using T = typename A::Elem;
    __shared__ int ends[flatPad(kFlatTile + 1) + 1];
    __shared__ alignas(16) unsigned char raw[flatPad(kFlatTile) * sizeof(T)];
    T* xs = reinterpret_cast<T*>(raw);
    // 1. the tile's path items: [d0, d1), s1 - s0 segment ends and x1 - x0 elements
    const long long d0 = flatDiagonal(tile, path), d1 = flatDiagonal(tile + 1, path);
    const long long x0 = e0 + d0 - s0, x1 = e0 + d1 - s1;
    bool inOrder = s1 >= s0 && x1 >= x0;
    // 2. ends and elements into shared memory; a tile with offsets out of order flags the call
    const int nS = inOrder ? (int)(s1 - s0) : 0, nX = inOrder ? (int)(x1 - x0) : 0;
    inOrder = flatStage(a, o, items, s0, nS, x0, nX, ends, xs) && inOrder;
    if (!__syncthreads_and(inOrder)) {
        if (threadIdx.x == 0) *bad = 1u;
        return;
    }
    // 3. this thread's items: its split in shared memory, then the fold; segments that start and
    //    end inside the items are written here
    const int dt = (int)threadIdx.x * kFlatItems < nS + nX ? (int)threadIdx.x * kFlatItems : nS + nX;
    int lo = dt - nX > 0 ? dt - nX : 0, hi = dt < nS ? dt : nS;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (ends[flatPad(mid + 1)] <= dt - 1 - mid) lo = mid + 1;
        else hi = mid;
    }
    int st = lo, xt = dt - lo;
    long long segStart = st == 0 ? flatOffset(o, s0, items) : x0 + ends[flatPad(st)]; // rows of ArgMax / ArgMin
    S acc = a.identity(), first = a.identity();
    bool ended = false, pending = false;
    long long firstSeg = -1;
    const int n = nS + nX - dt < kFlatItems ? nS + nX - dt : kFlatItems;
    for (int i = 0; i < n; ++i) {
        if (st < nS && (xt >= nX || ends[flatPad(st + 1)] <= xt)) { // segment s0 + st ends here
            const long long s = s0 + st;
            if (ends[flatPad(st + 1)] == ends[flatPad(st)]) {
                a.empty(s);
            } else if (!ended) { // may have started before this thread: finished after the scan
                pending = true;
                firstSeg = s;
                first = acc;
            } else {
                a.finish(s, acc);
            }
            ended = true;
            acc = a.identity();
            ++st;
            segStart = x0 + xt;
        } else {
            acc = a.take(acc, xs[flatPad(xt)], x0 + xt - segStart);
            ++xt;
        }
    }
    // 4. the block scan: the partial before this thread's first end; the tile's head and tail
    FlatCarry<S> all;
    const FlatCarry<S> before = flatBlockScan(a, FlatCarry<S>{ended, acc}, &all);
    if (ended && !before.ended) { // the tile's first end: its segment is open at the tile's start
        rec[tile].headSeg = pending ? firstSeg : -1;
        if (pending) rec[tile].head = a.merge(before.v, first);
    } else if (pending) {
        a.finish(firstSeg, a.merge(before.v, first));
    }
    if (threadIdx.x == kFlatThreads - 1) {
        if (!all.ended) rec[tile].headSeg = -1;
        rec[tile].tailSeg = s1;
        rec[tile].tail = all.v;
    }
}

/// Stage 1 kernel: tiles blockIdx.x, blockIdx.x + gridDim.x, ... of the path; the next tile's
/// splits load while a tile runs.
template <typename A, typename O> __global__ void __launch_bounds__(kFlatThreads)
    segmentFlatKernel(A a, SegOffsets<O> o, long long segments, long long items, long long tiles,
                      const long long* splits, SegFlatTile<typename A::State>* rec, unsigned* bad) {
    WARPKIT_CHECK_SEGMENT_ALGO(A, "segmentFlatKernel");
    const long long e0 = flatOffset(o, 0, items), eN = flatOffset(o, segments, items);
    const long long path = segments + (eN > e0 ? eN - e0 : 0);
    long long t = blockIdx.x, s0 = t < tiles ? splits[t] : 0, s1 = t < tiles ? splits[t + 1] : 0;
    for (; t < tiles; t += gridDim.x) {
        const long long n = t + gridDim.x, n0 = n < tiles ? splits[n] : 0, n1 = n < tiles ? splits[n + 1] : 0;
        flatTile(a, o, items, e0, path, t, s0, s1, rec, bad);
        __syncthreads(); // shared memory is written again by the next tile
        s0 = n0;
        s1 = n1;
    }
}

/// The fold, in order, of item(i) for i in [first, end), 8 loads in flight (the batch never
/// changes the order).
template <typename A, typename F>
WARPKIT_DEVICE typename A::State flatFoldItems(const A& a, long long first, long long end, F item) {
    typename A::State acc = a.identity();
    for (long long j = first; j < end; j += 8) {
        typename A::State v[8];
#pragma unroll
        for (int k = 0; k < 8; ++k)
            if (j + k < end) v[k] = item(j + k);
#pragma unroll
        for (int k = 0; k < 8; ++k)
            if (j + k < end) acc = a.merge(acc, v[k]);
    }
    return acc;
}

/// Stage 2a: group g's fold (its tails in order: lane l folds 8, then warpTree) when all its
/// tiles end inside one segment. A warp a group; every lane calls.
template <typename A> WARPKIT_DEVICE void flatGroup(const A& a, const SegFlatTile<typename A::State>* rec, long long g,
                                                    typename A::State* groups) {
    const long long t0 = g * kFlatGroup, per = kFlatGroup / 32;
    if (rec[t0].tailSeg != rec[t0 + kFlatGroup - 1].tailSeg) return; // never inside one run
    const long long f = t0 + per * laneId();
    const typename A::State v = warpTree(a, flatFoldItems(a, f, f + per, [&](long long j) { return rec[j].tail; }));
    if (laneId() == 0) groups[g] = v;
}

/// Stage 2a kernel: the whole groups (tiles / kFlatGroup), a warp each; nothing when the offsets
/// went back (stage 2 then reads none).
template <typename A> __global__ void __launch_bounds__(kFlatThreads)
    segmentFlatGroupKernel(A a, long long tiles, const SegFlatTile<typename A::State>* rec, typename A::State* groups,
                           const unsigned* bad) {
    const long long warps = (long long)gridDim.x * (kFlatThreads / 32);
    if (*bad != 0u) return;
    for (long long g = ((long long)blockIdx.x * kFlatThreads + threadIdx.x) / 32; g < tiles / kFlatGroup; g += warps)
        flatGroup(a, rec, g, groups);
}

/// Stage 2: tile m's head segment s gets the tails of the tiles before it whose open segment is s
/// (tiles k .. m - 1; tailSeg never decreases along the tiles; each whole group among them as its
/// fold), then its head. A warp a tile.
template <typename A> WARPKIT_DEVICE void flatFixup(const A& a, const SegFlatTile<typename A::State>* rec,
                                                    const typename A::State* groups, long long m) {
    using S = typename A::State;
    const long long s = rec[m].headSeg;
    if (s < 0) return;
    if (m == 0) {
        if (laneId() == 0) a.finish(s, rec[0].head);
        return;
    }
    long long k = m - 1;
    if (k > 0 && rec[k - 1].tailSeg == s) { // a long segment: the first tile of the run by a search
        long long lo = 0, hi = k - 1;
        while (lo < hi) {
            const long long mid = (lo + hi) / 2;
            if (rec[mid].tailSeg < s) lo = mid + 1;
            else hi = mid;
        }
        k = lo;
    }
    // the run's items: nL tails, then the whole groups [ga, gb), then nR tails
    const long long ga = (k + kFlatGroup - 1) / kFlatGroup, gb = m / kFlatGroup, whole = ga < gb ? gb - ga : 0;
    const long long nL = whole ? ga * kFlatGroup - k : m - k, nR = whole ? m - gb * kFlatGroup : 0;
    const long long n = nL + whole + nR, per = (n + 31) / 32, lane = laneId();
    const long long f = lane * per < n ? lane * per : n, e = f + per < n ? f + per : n;
    const S acc = flatFoldItems(a, f, e, [&](long long i) {
        if (i < nL) return rec[k + i].tail;
        if (i < nL + whole) return groups[ga + i - nL];
        return rec[gb * kFlatGroup + i - nL - whole].tail;
    });
    const S total = warpTree(a, acc);
    if (lane == 0) a.finish(s, a.merge(total, rec[m].head));
}

/// Stage 2 kernel: the fixups (a warp a tile), or, when a tile found the offsets out of order,
/// every segment by a warp (lanes strided, warpTree in lane order).
template <typename A, typename O> __global__ void __launch_bounds__(kFlatThreads)
    segmentFlatFixupKernel(A a, SegOffsets<O> o, long long segments, long long items, long long tiles,
                           const SegFlatTile<typename A::State>* rec, const typename A::State* groups,
                           const unsigned* bad) {
    WARPKIT_CHECK_SEGMENT_ALGO(A, "segmentFlatFixupKernel");
    const long long warps = (long long)gridDim.x * (kFlatThreads / 32);
    const long long w0 = ((long long)blockIdx.x * kFlatThreads + threadIdx.x) / 32;
    if (*bad == 0u) {
        for (long long m = w0; m < tiles; m += warps) flatFixup(a, rec, groups, m);
        return;
    }
    for (long long s = w0; s < segments; s += warps) {
        long long b = 0;
        const long long rows = segmentClip((long long)o.begin[s], (long long)o.end[s], items, &b);
        const typename A::State v = warpTree(a, foldRows(a, b, 0, 1, laneId(), rows, 32));
        if (laneId() == 0) {
            if (rows == 0) a.empty(s);
            else a.finish(s, v);
        }
    }
}

/// Whether algorithm A has a flat pass: the reductions of elements of at most 4 bytes (a tile's
/// elements and ends then fit the 48 KB of static shared memory).
template <typename A> struct SegFlatAlgo { static constexpr bool value = false; };
template <typename T, typename V, typename Out, typename Op, bool Arg>
struct SegFlatAlgo<SegReduceAlgo<T, V, Out, Op, Arg>> {
    static constexpr bool value = sizeof(T) <= 4;
};

/// The tiles of a call: enough for the longest path, segments + items (both below 2^61).
inline long long segFlatTiles(long long segments, long long items) {
    const long long cap = 1ll << 61;
    return ((segments < cap ? segments : cap) + (items < cap ? items : cap)) / kFlatTile + 1;
}
/// The flat pass's workspace: the flag, then a record a tile, the tiles' splits (tiles + 1) and
/// the groups' folds, from its first 16-byte boundary.
template <typename S> inline size_t segFlatBytes(long long segments, long long items) {
    const size_t tiles = (size_t)segFlatTiles(segments, items);
    return 15 + 16 + alignUp16(tiles * sizeof(SegFlatTile<S>)) + alignUp16((tiles + 1) * sizeof(long long)) +
           (tiles / kFlatGroup + 1) * sizeof(S);
}

/// Runs the flat pass (CSR offsets): clears the flag, then the stages (0, 1, 2a, 2). maxBlocks caps every
/// grid (tests use it to show the bits do not depend on the grid). Host.
template <typename A, typename O>
inline cudaError_t segmentFlatLaunch(const A& a, SegOffsets<O> off, long long segments, long long items, void* ws,
                                     cudaStream_t stream, long long maxBlocks = 1ll << 30) {
    using S = typename A::State;
    char* p = alignUp16(ws);
    unsigned* bad = reinterpret_cast<unsigned*>(p);
    SegFlatTile<S>* rec = reinterpret_cast<SegFlatTile<S>*>(p + 16);
    const long long tiles = segFlatTiles(segments, items);
    long long* splits = reinterpret_cast<long long*>(p + 16 + alignUp16((size_t)tiles * sizeof(SegFlatTile<S>)));
    S* groups = reinterpret_cast<S*>(reinterpret_cast<char*>(splits) + alignUp16((size_t)(tiles + 1) * 8));
    WARPKIT_TRY(cudaMemsetAsync(bad, 0, sizeof(unsigned), stream));
    int blocks = 0;
    auto splitKernel = segmentFlatSplitKernel<O>;
    WARPKIT_TRY(gridBlocks(splitKernel, kFlatThreads, tiles + 1, kFlatThreads / 32, maxBlocks, &blocks));
    WARPKIT_TRY(launchKernel(splitKernel, blocks, kFlatThreads, stream, off, segments, items, tiles, splits));
    auto tileKernel = segmentFlatKernel<A, O>;
    WARPKIT_TRY(gridBlocks(tileKernel, kFlatThreads, tiles, 1, maxBlocks, &blocks));
    WARPKIT_TRY(launchKernel(tileKernel, blocks, kFlatThreads, stream, a, off, segments, items, tiles,
                             (const long long*)splits, rec, bad));
    if (tiles > kFlatGroup) { // a run can hold a whole group
        auto group = segmentFlatGroupKernel<A>;
        WARPKIT_TRY(gridBlocks(group, kFlatThreads, tiles / kFlatGroup, kFlatThreads / 32, maxBlocks, &blocks));
        WARPKIT_TRY(launchKernel(group, blocks, kFlatThreads, stream, a, tiles, (const SegFlatTile<S>*)rec, groups,
                                 (const unsigned*)bad));
    }
    auto fixup = segmentFlatFixupKernel<A, O>;
    WARPKIT_TRY(gridBlocks(fixup, kFlatThreads, tiles, kFlatThreads / 32, maxBlocks, &blocks));
    return launchKernel(fixup, blocks, kFlatThreads, stream, a, off, segments, items, tiles, (const SegFlatTile<S>*)rec,
                        (const S*)groups, (const unsigned*)bad);
}

} // namespace detail
} // namespace warpkit
