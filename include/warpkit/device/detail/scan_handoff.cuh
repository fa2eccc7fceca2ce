// warpkit/device/detail/scan_handoff.cuh: the device scan's tile geometry, kernel arguments and
// static shared memory, and the hand-offs between its tile threads and its look-back warp.
// Internal: device/detail/scan_tile.cuh and device/scan.cuh use it.
//
// The hand-off slots, named by what passes and who calls:
//   scanPutAggregate / scanTakeAggregate   tile j's aggregate: tile thread 0 -> look-back lane 0
//   scanPutPrefix / scanTakePrefix         its exclusive prefix: look-back lane 0 -> lane 0 of each
//                                          tile warp
//   scanHandSent / scanHandReady           the named barriers that order them on sm_75
// and the look-back warp's loop over the block's tiles (scanLookBackWarp).
#pragma once

#include "lookback.cuh"
#include "../../thread/vector.cuh"

namespace warpkit {
namespace detail {

// Rule S1 (docs/tuning.md): a block is 16 warps, 15 tile warps and one look-back warp.
constexpr int kScanThreads = 480;             // tile threads: a tile is C rows of 480 slots
constexpr int kScanBlockThreads = 512;        // and the look-back warp
constexpr int kScanWarps = kScanThreads / 32; // tile warps

/// Tile geometry for T.
template <typename T> struct ScanShape {
    /// 16-byte vector I/O for sizes that divide 16, element I/O otherwise.
    static constexpr bool vec = sizeof(T) <= 16 && 16 % sizeof(T) == 0;
    /// Elements per slot (one 16-byte vector, or one element).
    static constexpr int V = vec ? (int)(16 / sizeof(T)) : 1;
    /// 32-bit words an element occupies in registers (1- and 2-byte types take a whole one).
    static constexpr int regWords = (int)((sizeof(T) + 3) / 4);
    /// Rows: slots per thread (rule S2). 5 for types of up to 8 bytes, at most 40 register words of
    /// items; 2 for types of 16 bytes and more, whose C-tuple scan moves C x regWords words a step.
    static constexpr int C1 = 40 / (V * regWords);
    static constexpr int C0 = regWords >= 4 ? 8 / regWords : (C1 < 5 ? C1 : 5);
    static constexpr int C = C0 < 1 ? 1 : (C0 > 8 ? 8 : C0);
    static constexpr long long tileSlots = (long long)C * kScanThreads;
    static constexpr long long tileElems = tileSlots * V;
};

/// The tile pipeline: each shared-memory stage holds one tile from its load until its store. A
/// tile waits `lag` tiles for its prefix after its scan (at most kScanLagMax), and, with async
/// copies, stages - lag - 1 tiles are loading while a block scans (scanPlan).
constexpr int kScanLagMax = 3;
template <typename T> struct ScanStage {
    static constexpr int bytes = ScanShape<T>::C * kScanThreads * ScanShape<T>::V * (int)sizeof(T);
};

/// C values of T: one slot total per row, scanned together by one tile scan.
template <typename T, int C> struct ScanRow { T v[C]; };

/// op applied to each of the C components.
template <typename Op> struct ScanRowOp {
    Op op;
    template <typename T, int C>
    WARPKIT_DEVICE ScanRow<T, C> operator()(const ScanRow<T, C>& a, const ScanRow<T, C>& b) const {
        ScanRow<T, C> r;
#pragma unroll
        for (int c = 0; c < C; ++c) r.v[c] = op(a.v[c], b.v[c]);
        return r;
    }
};

/// How a call moves its data (deviceScanRun decides). One bit each, in one word: the kernel tests
/// them together (async copies need vecIn and prefetch).
struct ScanFlags {
    unsigned vecIn : 1;    // in + e is 16-byte aligned for the first element e of every slot: vector loads
    unsigned vecOut : 1;   // the same for out: vector stores
    unsigned prefetch : 1; // stages >= lag + 2: whole tiles are loaded ahead by async copies (sm_80 and newer)
};

/// The kernel's arguments. Element e of the array is slot position e + head of the 16-byte grid
/// of `in`.
template <typename T, typename Op> struct ScanParams {
    const T* in;
    T* out;
    long long n;
    Op op;
    T init;   // the exclusive scan's seed
    int head; // in's misalignment in elements
    ScanFlags flags;
    long long tiles;            // the call's tile count
    int stages, lag;            // the pipeline (scanPlan)
    unsigned long long* status; // the cleared status records (lookback.cuh)
};

// ---- hand-off slots between the tile threads and the look-back warp -----------------------------
// Tile j's aggregate and exclusive prefix go through shared-memory slots j % kScanSlots. On sm_80
// and newer each slot has a full and an empty mbarrier a direction (the writer waits for the slot's
// previous reader, then arrives on full; the reader waits on full, then arrives on empty):
// compute-sanitizer's racecheck (2025.3) follows that order, where it reported the same hand-offs
// made with bar.arrive and bar.sync as races. The protocol never makes either side wait on an empty
// mbarrier (a slot is read kScanLagMax tiles at most after it is written). sm_75 (no mbarriers)
// uses named barriers, lag + 1 of each direction used in turn (by tile index) so that none is
// arrived at twice before it completes.
constexpr int kScanSlots = kScanLagMax + 1;
constexpr int kScanBarTile = 1; // the tile threads

/// sm_75: the named barriers of one direction, base + j % (lag + 1) for tile j, each met by
/// `threads` threads (the writer's warps and the reader's).
struct ScanHandBar {
    int base;
    int threads;
};
constexpr ScanHandBar kScanBarAgg{2, 64}; // tile j's aggregate: tile warp 0 to the look-back warp
constexpr ScanHandBar kScanBarPrefix{2 + kScanLagMax + 1, kScanThreads + 32}; // its prefix: to every tile thread
static_assert(kScanBarPrefix.base + kScanLagMax < 16, "kScanLagMax: at most 6 (16 named barriers)");

/// The kernel's static shared memory. The hand-off values lie together, apart from the slots'
/// mbarriers (sm_80 and newer: a full and an empty one a slot and direction), which the waiting
/// side polls: for 4-byte types the whole is 1792 bytes, so the stages (the dynamic shared memory
/// that follows it) start on a 128-byte line.
template <typename T> struct ScanShared {
    ScanRow<T, ScanShape<T>::C> warpTotals[2][kScanWarps];        // the tile scan's warp totals, by tile parity
    alignas(16) unsigned char aggValue[kScanSlots][sizeof(T)];    // tile j's aggregate at j % kScanSlots
    alignas(16) unsigned char prefixValue[kScanSlots][sizeof(T)]; // and its exclusive prefix
    unsigned long long aggFull[kScanSlots], aggEmpty[kScanSlots];
    unsigned long long prefixFull[kScanSlots], prefixEmpty[kScanSlots];
    alignas(16) unsigned char kept[LookbackShape<T>::keptBytes]; // the look-back's windows
};

/// Initialises the slots' mbarriers (sm_80 and newer; nothing on sm_75). Every thread of the block.
template <typename T> WARPKIT_DEVICE void scanHandInit(ScanShared<T>& sh) {
#if WARPKIT_ARCH >= 800
    if (threadIdx.x == 0) {
        for (int q = 0; q < kScanSlots; ++q) {
            mbarInit(smemAddr(&sh.aggFull[q]), 1);
            mbarInit(smemAddr(&sh.aggEmpty[q]), 1);
            mbarInit(smemAddr(&sh.prefixFull[q]), 1);
            mbarInit(smemAddr(&sh.prefixEmpty[q]), kScanWarps); // lane 0 of each tile warp
        }
    }
    __syncthreads();
#else
    (void)sh;
#endif
}

/// Puts v, the `use`-th value through its slot, in the slot's value (after its previous value was
/// taken: the empty mbarrier's phase use - 1), and marks it full. One thread. sm_75: only the copy
/// (the caller's named barriers order it).
template <typename T> WARPKIT_DEVICE void scanHandPut(unsigned char* value, unsigned long long* full,
                                                      unsigned long long* empty, const T& v, unsigned use) {
#if WARPKIT_ARCH >= 800
    if (use > 0) mbarWait(smemAddr(empty), (use - 1) & 1);
#endif
    __builtin_memcpy(value, &v, sizeof(T));
#if WARPKIT_ARCH >= 800
    mbarArrive(smemAddr(full));
#else
    (void)full, (void)empty, (void)use;
#endif
}
/// Takes the `use`-th value from its slot (once full), and marks the slot empty (one arrival of
/// those the empty mbarrier counts). One thread a taker.
template <typename T> WARPKIT_DEVICE T scanHandTake(const unsigned char* value, unsigned long long* full,
                                                    unsigned long long* empty, unsigned use) {
#if WARPKIT_ARCH >= 800
    mbarWait(smemAddr(full), use & 1);
#endif
    T v;
    __builtin_memcpy(&v, value, sizeof(T));
#if WARPKIT_ARCH >= 800
    mbarArrive(smemAddr(empty));
#else
    (void)full, (void)empty, (void)use;
#endif
    return v;
}

/// Tile j's aggregate, from tile thread 0 to the look-back warp (slot j % kScanSlots, its use
/// j / kScanSlots); the look-back warp's lane 0 takes it.
template <typename T> WARPKIT_DEVICE void scanPutAggregate(ScanShared<T>& sh, long long j, const T& agg) {
    const int q = (int)(j % kScanSlots);
    scanHandPut(sh.aggValue[q], &sh.aggFull[q], &sh.aggEmpty[q], agg, (unsigned)(j / kScanSlots));
}
template <typename T> WARPKIT_DEVICE T scanTakeAggregate(ScanShared<T>& sh, long long j) {
    const int q = (int)(j % kScanSlots);
    return scanHandTake<T>(sh.aggValue[q], &sh.aggFull[q], &sh.aggEmpty[q], (unsigned)(j / kScanSlots));
}
/// Tile j's exclusive prefix, from the look-back warp's lane 0 to the tile threads; lane 0 of each
/// tile warp takes it.
template <typename T> WARPKIT_DEVICE void scanPutPrefix(ScanShared<T>& sh, long long j, const T& prefix) {
    const int q = (int)(j % kScanSlots);
    scanHandPut(sh.prefixValue[q], &sh.prefixFull[q], &sh.prefixEmpty[q], prefix, (unsigned)(j / kScanSlots));
}
template <typename T> WARPKIT_DEVICE T scanTakePrefix(ScanShared<T>& sh, long long j) {
    const int q = (int)(j % kScanSlots);
    return scanHandTake<T>(sh.prefixValue[q], &sh.prefixFull[q], &sh.prefixEmpty[q], (unsigned)(j / kScanSlots));
}

/// sm_75's order of a slot: the writer's side arrives at the direction's barrier for tile j after
/// its put (scanHandSent), the reader's side waits there before its take (scanHandReady). Nothing
/// on sm_80 and newer, where the slot's mbarriers order it.
WARPKIT_DEVICE void scanHandSent(ScanHandBar b, long long j, int lag) {
#if WARPKIT_ARCH < 800
    namedBarrierArrive(b.base + (int)(j % (lag + 1)), b.threads);
#else
    (void)b, (void)j, (void)lag;
#endif
}
WARPKIT_DEVICE void scanHandReady(ScanHandBar b, long long j, int lag) {
#if WARPKIT_ARCH < 800
    namedBarrierSync(b.base + (int)(j % (lag + 1)), b.threads);
#else
    (void)b, (void)j, (void)lag;
#endif
}

// ---- the look-back warp ---------------------------------------------------------------------------

/// For each of the block's `count` tiles, its exclusive prefix P (init for tile 0 of an exclusive
/// scan), then incl = P op agg published, and P handed to the tile threads. The look-back warp.
template <typename T, typename Op> WARPKIT_DEVICE void scanLookBackWarp(const ScanParams<T, Op>& p, ScanShared<T>& sh,
                                                                        int lane, long long step, long long count) {
    T* kept = reinterpret_cast<T*>(sh.kept);
    for (long long j = 0; j < count; ++j) {
        const long long tile = blockIdx.x + j * step;
        T P = p.init;
        if (tile > 0) P = lookbackExclusivePrefix(p.status, tile, p.op, kept);
        scanHandReady(kScanBarAgg, j, p.lag);
        if (lane == 0) {
            const T agg = scanTakeAggregate(sh, j);
            if (tile > 0) lookbackPublishPrefix(p.status, tile, p.op(P, agg));
            scanPutPrefix(sh, j, P);
        }
        scanHandSent(kScanBarPrefix, j, p.lag);
    }
}

} // namespace detail
} // namespace warpkit
