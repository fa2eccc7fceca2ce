// warpkit/device/detail/scan_tile.cuh: the stages the device scan's tile threads run (the kernel
// is in device/scan.cuh). Internal.
//
// For each of its tiles j, a block's tile threads run, in order:
//   scanTileLoad     the tile into registers: from its shared-memory stage (async copies put it
//                    there while earlier tiles were scanned), or from global memory
//   scanTileScan     each slot in registers, then one tile scan of the C slot totals per thread:
//                    the in-tile prefix of each slot and the tile's aggregate
//   scanTilePublish  the aggregate to the look-back (tile 0: its inclusive prefix), and to the
//                    look-back warp through a hand-off slot (scan_handoff.cuh)
//   scanTileStash    the in-tile results back into the stage, until the tile's prefix comes
//   scanTileFinish   of tile j - lag: take its exclusive prefix from the look-back warp, combine
//                    it into every element, store (scanTileStore), refill the stage with the
//                    block's tile `stages` later (scanPrefetch)
// while the look-back warp (scanLookBackWarp) forms each tile's exclusive prefix.
#pragma once

#include "scan_handoff.cuh"
#include "../../warp/scan.cuh"

namespace warpkit {
namespace detail {

/// A tile thread's place: its index g in the tile (lane, warp), the grid's size (the block's tiles
/// are blockIdx.x + j * step), the stages (dynamic shared memory: slot (s, c, g) at (s * C + c) * G
/// + g, V elements each), and whether whole tiles come through the stages by async copies.
template <typename T> struct ScanThread {
    int g, lane, warp;
    long long step;
    T* stage;
    bool async;
};

// ---- global and stage I/O of one thread's slots ---------------------------------------------------

/// One element from global memory: a streaming scalar load when T is naturally aligned and its
/// size divides 16, else a plain load (T's own alignment).
template <typename T> WARPKIT_DEVICE T scanLoadElem(const T* p) {
    if constexpr (ScanShape<T>::vec && alignof(T) >= sizeof(T)) return loadScalar<LoadStreaming>(p);
    else return *p;
}
template <typename T> WARPKIT_DEVICE void scanStoreElem(T* p, const T& x) {
    if constexpr (ScanShape<T>::vec && alignof(T) >= sizeof(T)) storeScalar<StoreStreaming>(p, x);
    else *p = x;
}

/// The slot whose first element is e0 (elements e0 .. e0 + V - 1, those outside [0, n) filled
/// with zero bytes). vecIn: in + e0 is 16-byte aligned for every slot.
template <typename T, int V>
WARPKIT_DEVICE void scanLoadSlot(T (&x)[V], const T* in, long long e0, long long n, bool vecIn) {
    if (e0 >= 0 && e0 + V <= n) {
        if constexpr (ScanShape<T>::vec) {
            if (vecIn) {
                const Vector16<T> w = loadVector<LoadStreaming>(in + e0);
#pragma unroll
                for (int k = 0; k < V; ++k) x[k] = w.e[k];
                return;
            }
        }
#pragma unroll
        for (int k = 0; k < V; ++k) x[k] = scanLoadElem(in + e0 + k);
    } else {
#pragma unroll
        for (int k = 0; k < V; ++k) {
            if (e0 + k >= 0 && e0 + k < n) x[k] = scanLoadElem(in + e0 + k);
            else __builtin_memset(&x[k], 0, sizeof(T));
        }
    }
}

/// Stores the elements of the slot starting at e0 that lie in [0, n). vecOut: out + e0 is
/// 16-byte aligned for every slot.
template <typename T, int V>
WARPKIT_DEVICE void scanStoreSlot(T* out, long long e0, long long n, const T (&x)[V], bool vecOut) {
    if (e0 >= 0 && e0 + V <= n) {
        if constexpr (ScanShape<T>::vec) {
            if (vecOut) {
                Vector16<T> w;
#pragma unroll
                for (int k = 0; k < V; ++k) w.e[k] = x[k];
                storeVector<StoreStreaming>(out + e0, w);
                return;
            }
        }
#pragma unroll
        for (int k = 0; k < V; ++k) scanStoreElem(out + e0 + k, x[k]);
    } else {
#pragma unroll
        for (int k = 0; k < V; ++k)
            if (e0 + k >= 0 && e0 + k < n) scanStoreElem(out + e0 + k, x[k]);
    }
}

/// The thread's slot c of stage s.
template <typename T> WARPKIT_DEVICE T* scanSlot(const ScanThread<T>& th, int s, int c) {
    using S = ScanShape<T>;
    return th.stage + ((long long)(s * S::C + c) * kScanThreads + th.g) * S::V;
}

/// The thread's C slots x into stage s, or out of it.
template <typename T, int C, int V>
WARPKIT_DEVICE void scanToStage(const ScanThread<T>& th, int s, const T (&x)[C][V]) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
        if constexpr (ScanShape<T>::vec) {
            Vector16<T> w;
#pragma unroll
            for (int e = 0; e < V; ++e) w.e[e] = x[c][e];
            *reinterpret_cast<Vector16<T>*>(scanSlot(th, s, c)) = w;
        } else {
            *scanSlot(th, s, c) = x[c][0];
        }
    }
}
template <typename T, int C, int V> WARPKIT_DEVICE void scanFromStage(const ScanThread<T>& th, int s, T (&x)[C][V]) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
        if constexpr (ScanShape<T>::vec) {
            const Vector16<T> w = *reinterpret_cast<const Vector16<T>*>(scanSlot(th, s, c));
#pragma unroll
            for (int e = 0; e < V; ++e) x[c][e] = w.e[e];
        } else {
            x[c][0] = *scanSlot(th, s, c);
        }
    }
}

/// The first element of tile t (negative in tile 0 when in is misaligned).
template <typename T, typename Op> WARPKIT_DEVICE long long scanTileFirst(const ScanParams<T, Op>& p, long long t) {
    return t * ScanShape<T>::tileElems - p.head;
}
/// Tile t lies wholly in [0, n).
template <typename T, typename Op> WARPKIT_DEVICE bool scanTileWhole(const ScanParams<T, Op>& p, long long t) {
    const long long f = scanTileFirst(p, t);
    return f >= 0 && f + ScanShape<T>::tileElems <= p.n;
}

/// Starts loading tile t into stage s (nothing when t is past the end or not whole) and closes the
/// group: every thread commits one group per call, in the prologue and once per tile.
template <typename T, typename Op>
WARPKIT_DEVICE void scanPrefetch(const ScanParams<T, Op>& p, const ScanThread<T>& th, long long t, int s) {
    using S = ScanShape<T>;
    if (th.async && t < p.tiles && scanTileWhole(p, t)) {
        const T* src = p.in + scanTileFirst(p, t);
#pragma unroll
        for (int c = 0; c < S::C; ++c)
            asyncCopy16(scanSlot(th, s, c), src + (long long)(c * kScanThreads + th.g) * S::V);
    }
    asyncCopyCommit();
}

// ---- the tile threads' stages ---------------------------------------------------------------------

/// The thread's copy groups committed after the one holding the block's tile j, when tile j is
/// loaded (before that iteration's own commit): a group a prologue stage, then one an iteration.
/// Tiles 0 .. stages - 1 are the prologue's groups, stages - 1 after them; tile j >= stages is the
/// refill committed in iteration j - stages + lag, stages - lag - 1 before tile j's load.
template <typename T, typename Op> WARPKIT_DEVICE int scanGroupsAfter(const ScanParams<T, Op>& p, long long j) {
    return j < p.stages ? p.stages - 1 : p.stages - p.lag - 1;
}

/// 1. load the block's tile j: row c, thread g holds slot tile * C * G + c * G + g, whose first
///    element is first + (c * G + g) * V: from stage s when it was prefetched (its copies are the
///    thread's own, in its group for this tile, waited for alone), else from global memory.
template <typename T, typename Op, int C, int V> WARPKIT_DEVICE void
scanTileLoad(const ScanParams<T, Op>& p, const ScanThread<T>& th, long long tile, long long j, int s, T (&x)[C][V]) {
    constexpr int G = kScanThreads;
    const long long first = scanTileFirst(p, tile);
    const bool whole = scanTileWhole(p, tile);
    if constexpr (ScanShape<T>::vec) {
        if (th.async && whole) {
            asyncCopyWait(scanGroupsAfter(p, j));
            scanFromStage(th, s, x);
            return;
        }
        if (whole && p.flags.vecIn) { // sm_75: no async copies
#pragma unroll
            for (int c = 0; c < C; ++c) {
                const Vector16<T> w = loadVector<LoadStreaming>(p.in + first + (long long)(c * G + th.g) * V);
#pragma unroll
                for (int e = 0; e < V; ++e) x[c][e] = w.e[e];
            }
            return;
        }
    }
#pragma unroll
    for (int c = 0; c < C; ++c) scanLoadSlot(x[c], p.in, first + (long long)(c * G + th.g) * V, p.n, p.flags.vecIn);
}

/// 2. local scan: each slot in registers (the array's first `skip` positions, in tile 0's first
///    slot, are not elements and stay out of it), then the C slot totals by one tile scan (the
///    warps' scans, their totals through shared memory, a scan of those). pre[c]: the prefix of
///    the thread's slot c inside the tile (the rows before, a left chain of row totals, then the
///    threads before in this row). Returns the tile's aggregate: the chain through all rows.
template <typename T, typename Op, int C, int V>
WARPKIT_DEVICE T scanTileScan(const ScanParams<T, Op>& p, const ScanThread<T>& th, ScanShared<T>& sh, long long j,
                              int skip, T (&x)[C][V], T (&pre)[C]) {
    using Row = ScanRow<T, C>;
    const Op op = p.op;
#pragma unroll
    for (int c = 0; c < C; ++c)
#pragma unroll
        for (int e = 1; e < V; ++e)
            if (c > 0 || e > skip) x[c][e] = op(x[c][e - 1], x[c][e]);
    Row tot;
#pragma unroll
    for (int c = 0; c < C; ++c) tot.v[c] = x[c][V - 1];
    const ScanRowOp<Op> rowOp{op};
    const Row incl = warpInclusiveScan<32>(tot, rowOp);
    if (th.lane == 31) sh.warpTotals[j & 1][th.warp] = incl;
    namedBarrierSync(kScanBarTile, kScanThreads);
    const Row warps =
        warpInclusiveScan<32>(sh.warpTotals[j & 1][th.lane < kScanWarps ? th.lane : kScanWarps - 1], rowOp);
    const Row warpPrefix = shflIdx(warps, th.warp > 0 ? th.warp - 1 : 0);
    const Row total = shflIdx(warps, kScanWarps - 1);
    // Row c's totals of threads 0 .. g-1 (none for thread 0): the warps before, then the lanes before.
    const Row below = shflUp(incl, 1);
    Row ex = warpPrefix;
    if (th.lane > 0) ex = th.warp > 0 ? rowOp(warpPrefix, below) : below;
    T agg = total.v[0];
    pre[0] = ex.v[0];
#pragma unroll
    for (int c = 1; c < C; ++c) {
        pre[c] = th.g > 0 ? op(agg, ex.v[c]) : agg;
        agg = op(agg, total.v[c]);
    }
    return agg;
}

/// 3. publish the aggregate (tile 0: its inclusive prefix, init op it for an exclusive scan), and
///    hand it to the look-back warp. Every tile thread calls.
template <bool Exclusive, typename T, typename Op>
WARPKIT_DEVICE void scanTilePublish(const ScanParams<T, Op>& p, const ScanThread<T>& th, ScanShared<T>& sh,
                                    long long tile, long long j, const T& agg) {
    if (th.g == 0) {
        if (tile == 0) lookbackPublishPrefix(p.status, tile, Exclusive ? p.op(p.init, agg) : agg);
        else lookbackPublishAggregate(p.status, tile, agg);
        scanPutAggregate(sh, j, agg);
    }
    if (th.warp == 0) scanHandSent(kScanBarAgg, j, p.lag);
}

/// The in-tile part of every output, into stage s until the tile's prefix comes: y = pre op (slot
/// prefix), with the slot prefix inclusive, or exclusive (shifted by one; the tile's first element
/// has none).
template <bool Exclusive, typename T, typename Op, int C, int V> WARPKIT_DEVICE void
scanTileStash(const ScanParams<T, Op>& p, const ScanThread<T>& th, int s, int skip, T (&x)[C][V], const T (&pre)[C]) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const bool hasPre = c > 0 || th.g > 0;
        if constexpr (Exclusive) {
#pragma unroll
            for (int e = V - 1; e > 0; --e) x[c][e] = hasPre ? p.op(pre[c], x[c][e - 1]) : x[c][e - 1];
            x[c][0] = pre[c];
            if (c == 0 && skip > 0) {
#pragma unroll
                for (int e = 1; e < V; ++e)
                    if (e == skip) x[c][e] = pre[c];
            }
        } else {
#pragma unroll
            for (int e = 0; e < V; ++e)
                if (hasPre) x[c][e] = p.op(pre[c], x[c][e]);
        }
    }
    scanToStage(th, s, x);
}

/// The thread's C slots of tile `tile` into out: 16-byte stores for a whole tile when out is on the
/// slot grid, else slot by slot (only the elements in [0, n)).
template <typename T, typename Op, int C, int V> WARPKIT_DEVICE void
scanTileStore(const ScanParams<T, Op>& p, const ScanThread<T>& th, long long tile, const T (&x)[C][V]) {
    constexpr int G = kScanThreads;
    const long long first = scanTileFirst(p, tile);
    if constexpr (ScanShape<T>::vec) {
        if (scanTileWhole(p, tile) && p.flags.vecOut) {
#pragma unroll
            for (int c = 0; c < C; ++c) {
                Vector16<T> w;
#pragma unroll
                for (int e = 0; e < V; ++e) w.e[e] = x[c][e];
                storeVector<StoreStreaming>(p.out + first + (long long)(c * G + th.g) * V, w);
            }
            return;
        }
    }
#pragma unroll
    for (int c = 0; c < C; ++c) scanStoreSlot(p.out, first + (long long)(c * G + th.g) * V, p.n, x[c], p.flags.vecOut);
}

/// 4. finish the block's tile j (in stage j % stages): out = P op y, y its in-tile results in the
///    stage (y alone in tile 0 of an inclusive scan; P alone at the first element of an exclusive
///    scan's tile), P the exclusive prefix lane 0 of each warp takes from its slot (the warp gets it
///    by a shuffle); stores it, then refills the stage with the block's tile j + stages.
template <bool Exclusive, typename T, typename Op> WARPKIT_DEVICE void
scanTileFinish(const ScanParams<T, Op>& p, const ScanThread<T>& th, ScanShared<T>& sh, long long j) {
    using S = ScanShape<T>;
    constexpr int C = S::C, V = S::V;
    const long long tile = blockIdx.x + j * th.step;
    const int s = (int)(j % p.stages);
    scanHandReady(kScanBarPrefix, j, p.lag);
    T P = p.init;
    if (th.lane == 0) P = scanTakePrefix(sh, j);
    P = shflIdx(P, 0);
    T x[C][V];
    scanFromStage(th, s, x);
    const int skip = (tile == 0 && th.g == 0) ? p.head : 0;
    const bool hasP = Exclusive || tile > 0;
#pragma unroll
    for (int c = 0; c < C; ++c) {
#pragma unroll
        for (int e = 0; e < V; ++e) {
            if constexpr (Exclusive) x[c][e] = (c == 0 && th.g == 0 && e == skip) ? P : p.op(P, x[c][e]);
            else if (hasP) x[c][e] = p.op(P, x[c][e]);
        }
    }
    scanTileStore(p, th, tile, x);
    scanPrefetch(p, th, tile + p.stages * th.step, s);
}

} // namespace detail
} // namespace warpkit
