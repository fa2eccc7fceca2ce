// warpkit/device/detail/segment_flat_run.cuh: the flat pass's kernels: stage 0 (the tiles' splits),
// stage 1 (the tile loop, each tile's first ends loaded a tile ahead), stages 2a and 2 (the folds of
// the segments that span tiles), stage 3 of the softmax (segment_flat_softmax.cuh) and the host
// launcher; the pass is described, and stage 1's tile defined, in segment_flat.cuh and
// segment_flat_stage.cuh (the softmax's in segment_flat_softmax.cuh). Internal: include
// warpkit/device/segment.cuh.
#pragma once

#include "../../detail/pdl.cuh"
#include "segment_flat_softmax.cuh"

namespace warpkit {
namespace detail {

/// The merge-path split of diagonal d: the number of segment ends taken before path item d (the
/// smallest s with E[s] > c[0] + d - 1 - s, in [max(0, d - elems), min(d, segments)]). A warp
/// searches together, 32 probes a round, on a grid of positions fixed by `segments` alone: the
/// split lies in [base, base + 32 step), lane l probes base + (l + 1) step - 1, and the first probe
/// not taken leaves a range of `step` (its last probe, never taken, is the range's top). So the
/// first rounds of every boundary probe the same few offsets (L2 hits), and only the last two of a
/// search read offsets of their own (about 40 sectors a boundary, where probes spread over
/// [max(0, d - elems), min(d, segments)] read about 130). Probes outside that range are not loaded
/// (taken below it, not taken from its top up), so the result lies in it for any offsets, and is
/// the exact split for offsets in order. Every lane calls; every lane gets it.
template <typename O> WARPKIT_DEVICE long long flatSplit(SegOffsets<O> o, long long segments, long long items,
                                                         long long e0, long long elems, long long d) {
    const long long lo = d - elems > 0 ? d - elems : 0, hi = d < segments ? d : segments;
    long long step = 1, base = 0;
    while (step <= segments / 32) step *= 32; // 32 step > segments: [0, 32 step) holds every split
    const long long lane = laneId();
    for (;; step /= 32) {
        const long long p = base + (lane + 1) * step - 1;
        const bool taken = p < lo || (p < hi && flatOffset(o, p + 1, items) <= e0 + d - 1 - p);
        const unsigned notTaken = ~__ballot_sync(WARPKIT_FULL_MASK, taken); // lane 31's probe never is
        base += (long long)(__ffs((int)notTaken) - 1) * step;
        if (step == 1) return base;
    }
}

/// Stage 0 kernel: splits[t] = the split of tile boundary t, t in [0, tiles], a warp each; clears
/// the flag of offsets out of order (*bad), which the later stages read. Lets stage 1's blocks in
/// at once (pdlLaunchDependents: they wait for this grid in pdlWait).
template <typename O> __global__ void __launch_bounds__(kFlatThreads)
    segmentFlatSplitKernel(SegOffsets<O> o, long long segments, long long items, long long tiles, long long* splits,
                           unsigned* bad) {
    pdlLaunchDependents();
    if (blockIdx.x == 0 && threadIdx.x == 0) *bad = 0u;
    const long long e0 = flatOffset(o, 0, items), eN = flatOffset(o, segments, items);
    const long long elems = eN > e0 ? eN - e0 : 0, path = segments + elems;
    const long long warps = (long long)gridDim.x * (kFlatThreads / 32);
    for (long long t = ((long long)blockIdx.x * kFlatThreads + threadIdx.x) / 32; t <= tiles; t += warps) {
        const long long s = flatSplit(o, segments, items, e0, elems, flatDiagonal(t, path));
        if (laneId() == 0) splits[t] = s;
    }
}

/// Tile `tile`'s FlatAhead (nothing past the last tile). Every thread of the block calls.
template <typename O> WARPKIT_DEVICE FlatAhead<O> flatAhead(SegOffsets<O> o, long long items, long long e0,
                                                            long long path, long long tiles, long long tile,
                                                            long long s0, long long s1) {
    long long x0 = 0;
    int nS = 0, nX = 0;
    if (tile < tiles) flatSpan(e0, path, tile, s0, s1, &x0, &nS, &nX);
    FlatAhead<O> h;
    if (nS > 0) {
        flatEndLoads<kFlatAheadEnds>(o.begin + s0, nS, 0, h.v);
        h.c0 = flatOffset(o, s0, items);
        h.c1 = flatOffset(o, s0 + 1, items);
    } else {
        for (int u = 0; u <= kFlatAheadEnds; ++u) h.v[u] = O(0);
        h.c0 = tile < tiles ? flatOffset(o, s0, items) : 0;
        h.c1 = x0;
    }
    return h;
}

/// Stage 1 kernel: tiles blockIdx.x, blockIdx.x + gridDim.x, ... of the path. Before a tile is
/// done, the next one's first ends and head offsets (flatAhead) are asked for, so they are in
/// flight while the tile is folded and scanned; the splits load two tiles ahead. The softmax's
/// tiles (flatSoftmaxTile) record their deferred elements in defer (unused otherwise). On sm_90 it
/// may start while stage 0 runs (pdlLaunch): its first steps read only the offsets, then every
/// thread waits for stage 0 (pdlWait) before the splits and the flag.
template <typename A, typename O> __global__ void __launch_bounds__(kFlatThreads, flatMinBlocks<A>())
    segmentFlatKernel(A a, SegOffsets<O> o, long long segments, long long items, long long tiles,
                      const long long* splits, SegFlatTile<typename A::State>* rec, FlatDefer* defer, unsigned* bad) {
    WARPKIT_CHECK_SEGMENT_ALGO(A, "segmentFlatKernel");
    using T = typename A::Elem;
    constexpr int kMarkBytes = SegFlatSoftmax<A>::value ? kFlatTile : kFlatMarkBytes; // the softmax's run table
    __shared__ alignas(16) unsigned char marks[kMarkBytes];
    __shared__ alignas(16) unsigned char raw[flatPad(kFlatTile) * sizeof(T)];
    T* const xs = reinterpret_cast<T*>(raw);
    const long long e0 = flatOffset(o, 0, items), eN = flatOffset(o, segments, items);
    const long long path = segments + (eN > e0 ? eN - e0 : 0);
    for (int i = (int)threadIdx.x; i < kMarkBytes / 16; i += kFlatThreads)
        reinterpret_cast<uint4*>(marks)[i] = make_uint4(0u, 0u, 0u, 0u);
    pdlLaunchDependents(); // the next stage's blocks wait for this grid in pdlWait
    pdlWait();             // the splits and the cleared flag of stage 0
    long long t = blockIdx.x, s0 = t < tiles ? splits[t] : 0, s1 = t < tiles ? splits[t + 1] : 0;
    long long n = t + gridDim.x, n0 = n < tiles ? splits[n] : 0, n1 = n < tiles ? splits[n + 1] : 0;
    FlatAhead<O> ah = flatAhead(o, items, e0, path, tiles, t, s0, s1);
    __syncthreads();
    for (; t < tiles; t = n, n += gridDim.x) {
        const long long m = n + gridDim.x, m0 = m < tiles ? splits[m] : 0, m1 = m < tiles ? splits[m + 1] : 0;
        const FlatAhead<O> next = flatAhead(o, items, e0, path, tiles, n, n0, n1);
        if constexpr (SegFlatSoftmax<A>::value)
            flatSoftmaxTile(a, o, items, e0, path, t, s0, s1, ah, rec, defer, bad, marks, xs);
        else flatTile(a, o, items, e0, path, t, s0, s1, ah, rec, bad, marks, xs);
        __syncthreads(); // shared memory is written again by the next tile
        ah = next;
        s0 = n0;
        s1 = n1;
        n0 = m0;
        n1 = m1;
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
/// went back (stage 2 then reads none). Waits for stage 1 (pdlWait) and lets stage 2 in at once.
template <typename A> __global__ void __launch_bounds__(kFlatThreads)
    segmentFlatGroupKernel(A a, long long tiles, const SegFlatTile<typename A::State>* rec, typename A::State* groups,
                           const unsigned* bad) {
    const long long warps = (long long)gridDim.x * (kFlatThreads / 32);
    pdlLaunchDependents();
    pdlWait(); // stage 1's records (every thread, so that this grid's end implies stage 1's)
    if (*bad != 0u) return;
    for (long long g = ((long long)blockIdx.x * kFlatThreads + threadIdx.x) / 32; g < tiles / kFlatGroup; g += warps)
        flatGroup(a, rec, g, groups);
}

/// Stage 2 for a run of several tiles: tile m's head segment s (m > 1, s = rec[m].headSeg >= 0)
/// gets the tails of the tiles before it whose open segment is s (tiles k .. m - 1; tailSeg never
/// decreases along the tiles; each whole group among them as its fold), then its head: out[s]'s
/// value, in every lane. A warp; every lane calls.
template <typename A> WARPKIT_DEVICE typename A::State
flatFixupRun(const A& a, const SegFlatTile<typename A::State>* rec, const typename A::State* groups, long long m) {
    using S = typename A::State;
    const long long s = rec[m].headSeg;
    long long k = m - 1;
    if (k > 0 && rec[k - 1].tailSeg == s)
        k = flatFirstTailPast(rec, 0, k - 1, s - 1); // a long segment: the run's first tile
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
    return a.merge(warpTree(a, acc), rec[m].head);
}

/// Stage 2, a thread a tile: *seg = tile m's head segment s (-1 for none). When s's run is the one
/// tile before m (the usual case of short segments), *v = out[s]'s value from that tile's tail and
/// m's head, all loads in one round trip (stage 1 writes every record's head); the merges are
/// flatFixupRun's for a run of one item (lane 0's fold of it, the identities of the other lanes,
/// the head), so the bits are the same for operators where merge(x, identity) keeps a merged x.
/// Returns whether m needs flatFixupRun (a longer run).
template <typename A> WARPKIT_DEVICE bool flatFixupShort(const A& a, const SegFlatTile<typename A::State>* rec,
                                                         long long m, long long* seg, typename A::State* v) {
    const long long s = rec[m].headSeg, before = m > 1 ? rec[m - 2].tailSeg : -1;
    const typename A::State head = rec[m].head, tail = m > 0 ? rec[m - 1].tail : a.identity();
    *seg = s;
    if (s < 0 || (m > 1 && before == s)) return s >= 0;
    *v = m == 0 ? head : a.merge(a.merge(a.merge(a.identity(), tail), a.identity()), head);
    return false;
}

/// Stage 2 kernel: the fixups (a thread a tile, flatFixupShort; the warp together for each longer
/// run among its 32 tiles, flatFixupRun, one after the other), or, when a tile found the offsets out
/// of order, every segment by a warp (lanes strided, warpTree in lane order; the softmax then a
/// write pass). A tile's head result goes out, or, for the softmax, its factors to defer[m]. Waits
/// for the stage before it first (pdlWait).
template <typename A, typename O> __global__ void __launch_bounds__(kFlatThreads)
    segmentFlatFixupKernel(A a, SegOffsets<O> o, long long segments, long long items, long long tiles,
                           const SegFlatTile<typename A::State>* rec, const typename A::State* groups, FlatDefer* defer,
                           const unsigned* bad) {
    WARPKIT_CHECK_SEGMENT_ALGO(A, "segmentFlatFixupKernel");
    pdlWait(); // the records of stages 1 and 2a
    const long long warps = (long long)gridDim.x * (kFlatThreads / 32);
    const long long w0 = ((long long)blockIdx.x * kFlatThreads + threadIdx.x) / 32;
    if (*bad == 0u) {
        for (long long m0 = w0 * 32; m0 < tiles; m0 += warps * 32) { // the same trip count in a warp
            const long long m = m0 + laneId();
            long long seg = -1;
            typename A::State v = a.identity();
            const bool longRun = m < tiles && flatFixupShort(a, rec, m, &seg, &v);
            for (unsigned l = __ballot_sync(WARPKIT_FULL_MASK, longRun); l != 0u; l &= l - 1u) {
                const int src = __ffs((int)l) - 1;
                const typename A::State r = flatFixupRun(a, rec, groups, m0 + src);
                if ((int)laneId() == src) v = r;
            }
            if constexpr (SegFlatSoftmax<A>::value) {
                if (seg >= 0) defer[m].f = flatFactors(a, v);
            } else if (seg >= 0) {
                a.finish(seg, v);
            }
        }
        return;
    }
    for (long long s = w0; s < segments; s += warps) {
        long long b = 0;
        const long long rows = segmentClip((long long)o.begin[s], (long long)o.end[s], items, &b);
        const typename A::State v = warpTree(a, foldRows(a, b, 0, 1, laneId(), rows, 32));
        if constexpr (SegFlatSoftmax<A>::value) writeRows(a, a.prepare(v), b, 0, 1, laneId(), rows, 32);
        if (laneId() == 0) {
            if (rows == 0) a.empty(s);
            else a.finish(s, v);
        }
    }
}

/// Whether algorithm A has a flat pass: the reductions and the softmax of elements of at most 4
/// bytes (a tile's elements and ends, and the softmax's factors, then fit the 48 KB of static
/// shared memory).
template <typename A> struct SegFlatAlgo { static constexpr bool value = false; };
template <typename T, typename V, typename Out, typename Op, bool Arg>
struct SegFlatAlgo<SegReduceAlgo<T, V, Out, Op, Arg>> {
    static constexpr bool value = sizeof(T) <= 4;
};
template <typename T, int Kind> struct SegFlatAlgo<SegSoftmaxAlgo<T, Kind>> {
    static constexpr bool value = sizeof(T) <= 4;
};

/// The tiles of a call: enough for the longest path, segments + items (both below 2^61).
inline long long segFlatTiles(long long segments, long long items) {
    const long long cap = 1ll << 61;
    return ((segments < cap ? segments : cap) + (items < cap ? items : cap)) / kFlatTile + 1;
}
/// The flat pass's workspace: the flag, then a record a tile, the tiles' splits (tiles + 1) and
/// the groups' folds, from its first 16-byte boundary; for the softmax (defer) then a FlatDefer a
/// tile.
template <typename S> inline size_t segFlatBytes(long long segments, long long items, bool defer = false) {
    const size_t tiles = (size_t)segFlatTiles(segments, items), groups = (tiles / kFlatGroup + 1) * sizeof(S);
    return 15 + 16 + alignUp16(tiles * sizeof(SegFlatTile<S>)) + alignUp16((tiles + 1) * sizeof(long long)) +
           (defer ? alignUp16(groups) + tiles * sizeof(FlatDefer) : groups);
}

/// Runs the flat pass (CSR offsets): stages 0 (which clears the flag), 1, 2a, 2 and for the softmax
/// 3. maxBlocks caps every grid (tests use it to show the bits do not depend on the grid). On sm_90
/// (code compiled for it: pdlAllowed) stages 1, 2a and 2 are launched programmatically: each one's
/// blocks are placed as the kernel before ends and wait for it (pdlWait), so a launch's latency
/// overlaps the kernel before it. Host.
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
    FlatDefer* defer = reinterpret_cast<FlatDefer*>(reinterpret_cast<char*>(groups) +
                                                    alignUp16((size_t)(tiles / kFlatGroup + 1) * sizeof(S)));
    int blocks = 0, dev = 0;
    bool early = false;
    DeviceProps props;
    WARPKIT_TRY(currentDevice(&dev, &props));
    auto splitKernel = segmentFlatSplitKernel<O>;
    WARPKIT_TRY(gridBlocks(splitKernel, kFlatThreads, tiles + 1, kFlatThreads / 32, maxBlocks, &blocks));
    WARPKIT_TRY(launchKernel(splitKernel, blocks, kFlatThreads, stream, off, segments, items, tiles, splits, bad));
    auto tileKernel = segmentFlatKernel<A, O>;
    WARPKIT_TRY(gridBlocks(tileKernel, kFlatThreads, tiles, 1, maxBlocks, &blocks));
    // as many tiles a block (give or take one) in as many rounds: no short last round, whose few
    // blocks would take a second slow tile (runs of empty segments at both ends of the path)
    const long long rounds = (tiles + blocks - 1) / blocks;
    blocks = (int)((tiles + rounds - 1) / rounds);
    WARPKIT_TRY(pdlAllowed(tileKernel, dev, props.cc, &early));
    WARPKIT_TRY(pdlLaunch(tileKernel, dim3((unsigned)blocks), dim3(kFlatThreads), stream, early, a, off, segments,
                          items, tiles, (const long long*)splits, rec, defer, bad));
    if (tiles > kFlatGroup) { // a run can hold a whole group
        auto group = segmentFlatGroupKernel<A>;
        WARPKIT_TRY(gridBlocks(group, kFlatThreads, tiles / kFlatGroup, kFlatThreads / 32, maxBlocks, &blocks));
        WARPKIT_TRY(pdlAllowed(group, dev, props.cc, &early));
        WARPKIT_TRY(pdlLaunch(group, dim3((unsigned)blocks), dim3(kFlatThreads), stream, early, a, tiles,
                              (const SegFlatTile<S>*)rec, groups, (const unsigned*)bad));
    }
    auto fixup = segmentFlatFixupKernel<A, O>;
    // a thread a tile needs tiles / 128 blocks; 4 times that keeps warps for the per-segment fallback
    WARPKIT_TRY(gridBlocks(fixup, kFlatThreads, tiles, 32, maxBlocks, &blocks));
    WARPKIT_TRY(pdlAllowed(fixup, dev, props.cc, &early));
    WARPKIT_TRY(pdlLaunch(fixup, dim3((unsigned)blocks), dim3(kFlatThreads), stream, early, a, off, segments, items,
                          tiles, (const SegFlatTile<S>*)rec, (const S*)groups, defer, (const unsigned*)bad));
    if constexpr (SegFlatSoftmax<A>::value) { // stage 3: a warp a tile
        auto write = segmentFlatWriteKernel<A>;
        WARPKIT_TRY(gridBlocks(write, kFlatThreads, tiles, kFlatThreads / 32, maxBlocks, &blocks));
        return launchKernel(write, blocks, kFlatThreads, stream, a, tiles, (const SegFlatTile<S>*)rec,
                            (const FlatDefer*)defer, (const unsigned*)bad);
    }
    return cudaSuccess;
}

} // namespace detail
} // namespace warpkit
