// warpkit/device/scan.cuh: prefix scans of a whole array, called from the host, in ONE pass over
// the data (every element read once and written once), bitwise deterministic for floats.
//
//   warpkit::deviceInclusiveScan(in, out, n, op, workspace, &bytes, stream)        out[i] = in[0] op ... op in[i]
//   warpkit::deviceExclusiveScan(in, out, n, op, init, workspace, &bytes, stream)  out[0] = init,
//                                                  out[i] = init op in[0] op ... op in[i-1]
//   warpkit::deviceInclusiveSum / deviceExclusiveSum(in, out, n, workspace, &bytes, stream)
//   warpkit::SegmentedPair<T>, SegmentedOp<Op>    a scan restarting at head flags (see below)
//
// This is the way to scan a long array. Write your own tile loop (block/scan.cuh's ...Running
// forms, samples/tiled_scan.cu) only to fuse a scan into other work of one block.
//
// Operators and types. op: any associative `T op(T, T)`, commutative or not (the left operand
// always comes from lower indices); it must be a function of its operands (same operands, same
// bits). T: any trivially copyable, default-constructible type: int, unsigned, long long, float,
// double, structs. Types of 1, 2, 4, 8 or 16 bytes move as 16-byte vectors (thread/vector.cuh);
// others element by element. The Sum forms take int, unsigned, long long, unsigned long long,
// float, double, __half and __nv_bfloat16 and add in T (integers wrap); the exclusive sum's init is 0.
//
// Conventions (docs/design.md). Host; returns cudaError_t; asynchronous on `stream`; allocates
// nothing. Any n >= 0 (64-bit; above 2^32 included; n = 0 does nothing); any element alignment of
// `in` and `out`, independently; in == out (in place) is allowed, any other overlap is not. Bad
// arguments (n < 0, a null workspaceBytes, a null in or out with n > 0, in and out overlapping
// without being equal, *workspaceBytes smaller than the size asked for, more than 2^31 - 1 tiles:
// n above about 2^44 for 4-byte types) return cudaErrorInvalidValue, and nothing is launched or
// written. The device's SM count and shared memory are queried once per device (detail/host.cuh).
// The kernel is a cooperative launch of at most one block an SM: a device too small for even one
// stage (below) gets cudaErrorInvalidConfiguration, and a launch the device cannot make resident
// at all (another context holding every SM) gets the launch's own error.
//
// Workspace (CUB's two-call rule). With workspace == nullptr the call writes the bytes it needs for
// this n and T to *workspaceBytes and returns (0 for n = 0); otherwise *workspaceBytes must be at
// least that. The workspace holds one status record per tile (8 bytes for types of up to 4
// bytes); it may hold anything on entry and needs no alignment: each call clears it with one
// cudaMemsetAsync on `stream` before its kernel. Calls on different streams with different
// workspaces are independent; two calls in flight at once must not share one.
//
// Method: Merrill and Garland's decoupled look-back over tiles of 480 threads x 80 bytes (9600
// int or float, 4800 double), with a persistent, software-pipelined grid: block b of a grid of
// one block an SM takes tiles b, b + grid, b + 2 grid, ... The launch is cooperative, so the
// whole grid is resident and a block waiting on any earlier tile cannot deadlock. A block is 15
// tile warps and one look-back warp, and keeps `stages` tiles in shared memory (5 of 38 KB on
// H100). For its tile j, the tile threads:
//   1. take the tile from its stage, where async copies (cp.async, sm_80 and newer) put it while
//      earlier tiles were scanned. Row c (of C) of the tile is 480 consecutive 16-byte slots,
//      thread g holding slot g of each row, so every copy and store instruction of a warp covers
//      512 contiguous bytes. The slots lie on `in`'s 16-byte grid, so only the array's first
//      and last slots are partial; partial tiles, and misaligned or sm_75 inputs, load directly;
//   2. scan each slot in registers, then all C rows at once with ONE tile scan of the C slot
//      totals per thread (warp scans, warp totals through shared memory), and chain the row
//      totals; publish the tile's aggregate and hand it to the look-back warp;
//   3. put the in-tile results back in the stage, and finish tile j - lag: combine the prefix
//      the look-back warp has formed for it into every element, store it, and refill its stage
//      with the block's tile `stages` later.
// Meanwhile the look-back warp, tile by tile, reads the status records of the 32 tiles before
// the tile, then (when those hold only aggregates) the 32 x (keep - 1) before them in one round
// trip, waiting and starting over when a tile after the nearest inclusive prefix has published
// nothing yet; forms the tile's exclusive prefix, publishes its inclusive prefix, and hands the
// exclusive one to the tile threads. So each look-back has `lag` tiles' time (3 on H100) to
// wait for the blocks before it, and stages - lag - 1 tiles are loading while a block scans.
// Devices with less shared memory get fewer stages and a smaller lag (scanPlan); every pipeline
// gives the same bits. H100, 2^28 int or float: 0.92x a copy's bandwidth (one tile a block,
// no pipeline, as CUB: 0.81x).
// A status record is one 64-bit word per 4 bytes of T, each word holding a 32-bit piece of the
// value and the record's flag (0 invalid, 1 aggregate, 2 inclusive prefix): one relaxed 64-bit
// store publishes a piece together with its flag, and a reader accepts a record only when all its
// words carry the same flag. So no fence is needed (a release at GPU scope waits for the SM's
// output stores to drain), and no 16-byte atomicity is assumed.
//
// Determinism: for a given input at a given address modulo 16 bytes, op, T, GPU and build, the
// output is the same bits on every run, whatever the timing: stream, concurrent work, which tiles
// happen to have published what (it does not depend on `out`'s address or on in == out). Why:
//   - Within a tile everything is in a fixed order: the slot's left fold, the tile scan's fixed
//     tree, the row chain; so the tile aggregate agg(t) and every in-tile partial are fixed bits.
//   - The inclusive prefix of tile t is DEFINED as the left chain incl(t) = incl(t-1) op agg(t)
//     (incl(0) = agg(0), or init op agg(0) for the exclusive scan), and a status record only ever
//     holds agg(t) or incl(t).
//   - The look-back of tile i finds the nearest j < i whose record holds incl(j), with every tile
//     between holding agg(k), and folds LEFT to right: ((incl(j) op agg(j+1)) op agg(j+2)) ...
//     op agg(i-1). Each step is exactly the chain's definition of the next incl, so the result is
//     incl(i-1) bit for bit, whichever j the timing gave (by induction over i, since incl(j) is
//     itself the chain value). A CUB-style tree over the window would change the association,
//     and the rounding, with j.
// Cost: the fold is serial, one op per tile looked past instead of a 5-step tree; the shuffles
// that gather a window do not depend on the running value, so a window of 32 costs about 32 op
// latencies (~130 cycles for a float sum), in the look-back warp, off the tile threads' path.
// The aggregates of the windows looked past are kept in shared memory (keep x 32 x sizeof(T)
// bytes, 1 KB for 4-byte types). Integer, max and min scans gain nothing from the fixed order but
// pay no more.
//
// Segmented scans. SegmentedPair<T>{value, head} with SegmentedOp<Op>{op}:
//   (a, ha) (+) (b, hb) = (hb ? b : a op b, ha | hb)
// is associative (not commutative), so deviceInclusiveScan over pairs gives, for each element,
// op over its segment up to and including it, a segment starting at every element whose head is
// nonzero (and at element 0). For an exclusive segmented scan, scan the pairs inclusively and
// read, at each element, the previous element's value (init at segment heads).
#pragma once

#include "../warp/scan.cuh"
#include "../thread/vector.cuh"
#include "../detail/host.cuh"
#include "../detail/async.cuh"

namespace warpkit {

/// An element of a segmented scan: a value and its head flag (nonzero: a segment starts here).
template <typename T> struct SegmentedPair {
    T value;
    int head;
};

/// The segmented-scan operator over SegmentedPair: (a, ha) (+) (b, hb) = (hb ? b : a op b, ha | hb).
/// Associative whenever op is; host and device.
template <typename Op> struct SegmentedOp {
    Op op;
    template <typename T>
    WARPKIT_HD SegmentedPair<T> operator()(const SegmentedPair<T>& a, const SegmentedPair<T>& b) const {
        SegmentedPair<T> r;
        r.value = b.head ? b.value : op(a.value, b.value);
        r.head = a.head | b.head;
        return r;
    }
};

namespace detail {

// A block is 16 warps (each of an SM's four register files holds 4 warps of up to 128 registers
// a thread; 17 warps would cap them at 96): 15 tile warps and one look-back warp. (Two look-back
// warps taking the block's tiles in turn measured 20% slower: twice the polling of the same few
// status lines.)
constexpr int kScanThreads = 480;      // tile threads: a tile is C rows of 480 slots
constexpr int kScanBlockThreads = 512; // and the look-back warp

/// Tile geometry and status layout for T.
template <typename T> struct ScanShape {
    /// 16-byte vector I/O for sizes that divide 16, element I/O otherwise.
    static constexpr bool vec = sizeof(T) <= 16 && 16 % sizeof(T) == 0;
    /// Elements per slot (one 16-byte vector, or one element).
    static constexpr int V = vec ? (int)(16 / sizeof(T)) : 1;
    /// 32-bit words an element occupies in registers (1- and 2-byte types take a whole one).
    static constexpr int regWords = (int)((sizeof(T) + 3) / 4);
    /// Rows: slots per thread. 5 for types of up to 8 bytes (80 bytes a thread: 38 KB tiles for
    /// 4-byte types, measured best against 30 and 45 KB), at most 40 register words of items; 2
    /// for types of 16 bytes and more, whose C-tuple scan moves C x regWords words a step.
    static constexpr int C1 = 40 / (V * regWords);
    static constexpr int C0 = regWords >= 4 ? 8 / regWords : (C1 < 5 ? C1 : 5);
    static constexpr int C = C0 < 1 ? 1 : (C0 > 8 ? 8 : C0);
    static constexpr long long tileSlots = (long long)C * kScanThreads;
    static constexpr long long tileElems = tileSlots * V;
    /// 64-bit words of a status record: one per 32-bit piece of T, an even count above one (so a
    /// record moves as 16-byte accesses).
    static constexpr int statusWords = regWords == 1 ? 1 : (regWords + 1) / 2 * 2;
    /// Look-back windows of 32 aggregates kept in shared memory (2 KB at most).
    static constexpr int keep0 = (int)(2048 / (32 * sizeof(T)));
    static constexpr int keep = keep0 < 2 ? 2 : (keep0 > 8 ? 8 : keep0);
};

/// The tile pipeline: each shared-memory stage holds one tile from its load until its store. A
/// tile waits `lag` tiles for its prefix after its scan (at most kScanLagMax), and, with async
/// copies, stages - lag - 1 tiles are loading while a block scans. scanPlan picks them from the
/// shared memory a block may have.
constexpr int kScanLagMax = 3;
template <typename T> struct ScanStage {
    static constexpr int bytes = ScanShape<T>::C * kScanThreads * ScanShape<T>::V * (int)sizeof(T);
};

/// C values of T: one slot total per row, scanned together by one tile scan.
template <typename T, int C> struct ScanRow {
    T v[C];
};

/// op applied to each of the C components.
template <typename Op> struct ScanRowOp {
    Op op;
    template <typename T, int C> WARPKIT_DEVICE ScanRow<T, C> operator()(const ScanRow<T, C>& a, const ScanRow<T, C>& b) const {
        ScanRow<T, C> r;
#pragma unroll
        for (int c = 0; c < C; ++c) r.v[c] = op(a.v[c], b.v[c]);
        return r;
    }
};

constexpr unsigned kScanInvalid = 0;   // status flag: nothing published (the memset's zeros)
constexpr unsigned kScanAggregate = 1; // the tile's aggregate
constexpr unsigned kScanPrefix = 2;    // the inclusive prefix through the tile
constexpr unsigned kScanMixed = 3;     // (read only) the words disagree: a record being rewritten
constexpr unsigned kScanNone = 4;      // (read only) a tile before tile 0

/// Publishes `flag` and `v` in the status record at p. One thread.
template <typename T> WARPKIT_DEVICE void scanPublish(unsigned long long* p, unsigned flag, const T& v) {
    constexpr int SW = ScanShape<T>::statusWords;
    unsigned piece[SW];
#pragma unroll
    for (int k = 0; k < SW; ++k) piece[k] = 0;
    __builtin_memcpy(piece, &v, sizeof(T));
    unsigned long long w[SW];
#pragma unroll
    for (int k = 0; k < SW; ++k) w[k] = (unsigned long long)flag << 32 | piece[k];
    if constexpr (SW == 1) {
        storeRelaxedGpu(p, w[0]);
    } else {
#pragma unroll
        for (int k = 0; k < SW; k += 2) storeRelaxedGpu2(p + k, w[k], w[k + 1]);
    }
}

/// Reads the status record at p: returns its flag (kScanMixed when its words disagree) and its
/// value in v. Any thread.
template <typename T> WARPKIT_DEVICE unsigned scanRead(const unsigned long long* p, T& v) {
    constexpr int SW = ScanShape<T>::statusWords;
    unsigned long long w[SW];
    if constexpr (SW == 1) {
        w[0] = loadRelaxedGpu(p);
    } else {
#pragma unroll
        for (int k = 0; k < SW; k += 2) loadRelaxedGpu2(p + k, w[k], w[k + 1]);
    }
    unsigned flag = (unsigned)(w[0] >> 32);
    unsigned piece[SW];
#pragma unroll
    for (int k = 0; k < SW; ++k) {
        piece[k] = (unsigned)w[k];
        if ((unsigned)(w[k] >> 32) != flag) flag = kScanMixed;
    }
    __builtin_memcpy(&v, piece, sizeof(T));
    return flag;
}

/// acc op v(lane from) op v(lane from + 1) ... op v(lane 31), left to right. All 32 lanes call with
/// the same acc and from; all get the result.
template <typename T, typename Op> WARPKIT_DEVICE T scanFoldWindow(T acc, const T& v, int from, Op op) {
#pragma unroll
    for (int k = 0; k < 32; ++k) {
        const T x = shflIdx(v, k);
        if (k >= from) acc = op(acc, x);
    }
    return acc;
}

/// Reads the status records of N windows of 32 tiles, window d holding tiles base - 32 (d + 1)
/// + lane, and finds the nearest inclusive prefix: *found = its window and *p its lane, or
/// *found = -1; *wait = true when a tile after it (or, with none, any tile) has published
/// nothing yet. The whole warp calls.
template <int N, typename T>
WARPKIT_DEVICE void scanReadWindows(const unsigned long long* status, long long base, T (&v)[N], int* found, int* p,
                                    bool* wait) {
    using S = ScanShape<T>;
    const int lane = (int)laneId();
    unsigned flag[N];
#pragma unroll
    for (int d = 0; d < N; ++d) {
        const long long t = base - 32 * (d + 1) + lane;
        flag[d] = t >= 0 ? scanRead<T>(status + t * S::statusWords, v[d]) : kScanNone;
    }
    *found = -1;
    *wait = false;
#pragma unroll
    for (int d = 0; d < N; ++d) {
        if (*found < 0 && !*wait) {
            const unsigned prefix = __ballot_sync(WARPKIT_FULL_MASK, flag[d] == kScanPrefix);
            const unsigned stall = __ballot_sync(WARPKIT_FULL_MASK, flag[d] == kScanInvalid || flag[d] == kScanMixed);
            const int pd = prefix ? 31 - __clz((int)prefix) : -1; // nearest inclusive prefix
            const int q = stall ? 31 - __clz((int)stall) : -1;    // nearest tile not ready
            if (q > pd) *wait = true;
            else if (pd >= 0) *found = d, *p = pd;
        }
    }
}

/// incl(j) at lane p of window `found` of v, op the aggregates after it, op the nearer windows of
/// v, op the K windows of aggregates in kept (nearest first), left to right. The whole warp calls.
template <int N, typename T, typename Op>
WARPKIT_DEVICE T scanFoldFound(const T (&v)[N], int found, int p, const T* kept, int K, Op op) {
    const int lane = (int)laneId();
    T acc = T{};
#pragma unroll
    for (int d = N - 1; d >= 0; --d) {
        if (d == found) acc = scanFoldWindow(shflIdx(v[d], p), v[d], p + 1, op);
        else if (d < found) acc = scanFoldWindow(acc, v[d], 0, op);
    }
    for (int d = K - 1; d >= 0; --d) acc = scanFoldWindow(acc, kept[d * 32 + lane], 0, op);
    return acc;
}

/// The exclusive prefix of tile `tile` (>= 1): incl(tile - 1), formed by the deterministic
/// look-back (header comment). One warp calls, all 32 lanes; all get it. It reads the window of
/// the 32 tiles before `tile`; when that holds only aggregates, it keeps them in `kept` (shared
/// memory for ScanShape<T>::keep windows of 32 values) and reads the keep - 1 windows before it
/// at once (one round trip); when those hold only aggregates too, or a tile after the nearest
/// prefix has published nothing yet, it waits and starts over.
template <typename T, typename Op>
WARPKIT_DEVICE T scanLookBack(const unsigned long long* status, long long tile, Op op, T* kept) {
    constexpr int D = ScanShape<T>::keep - 1;
    const int lane = (int)laneId();
    unsigned sleep = 0;
    for (;;) {
        int found, p;
        bool wait;
        T v0[1];
        scanReadWindows(status, tile, v0, &found, &p, &wait);
        if (!wait) {
            if (found >= 0) return scanFoldFound(v0, found, p, kept, 0, op);
            if (tile > 32) {
                kept[lane] = v0[0];
                __syncwarp();
                T v[D];
                scanReadWindows(status, tile - 32, v, &found, &p, &wait);
                if (!wait && found >= 0) return scanFoldFound(v, found, p, kept, 1, op);
            }
        }
        sleep = sleep < 32 ? 32 : (sleep < 512 ? sleep * 2 : 512);
        __nanosleep(sleep);
    }
}

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

/// The look-back warp and the tile threads hand each other tile j's aggregate and exclusive
/// prefix through shared-memory slots j % kScanSlots. On sm_80 and newer each slot has a full and
/// an empty mbarrier a direction (the writer waits for the slot's previous reader, then arrives
/// on full; the reader waits on full, then arrives on empty): compute-sanitizer's racecheck
/// (2025.3) follows that order, where it reported the same hand-offs made with bar.arrive and
/// bar.sync as races. The protocol never makes either side wait on an empty mbarrier (a slot is
/// read kScanLagMax tiles at most after it is written).
/// sm_75 (no mbarriers) uses named barriers, lag + 1 of each direction used in turn (by tile
/// index) so that none is arrived at twice before it completes.
constexpr int kScanSlots = kScanLagMax + 1;
constexpr int kScanBarTile = 1;                     // the tile threads
constexpr int kScanBarAgg = 2;                      // sm_75, + j % (lag + 1): tile j's aggregate to the look-back warp
constexpr int kScanBarPrefix = 2 + kScanLagMax + 1; // sm_75, + j % (lag + 1): tile j's prefix to the tile threads
static_assert(kScanBarPrefix + kScanLagMax < 16, "kScanLagMax: at most 6 (16 named barriers)");

/// Puts v, the `use`-th value through its slot, in the slot (after its previous value was taken:
/// the empty mbarrier's phase use - 1), and marks it full. One thread. sm_75: only the copy (the
/// caller's named barriers order it).
template <typename T>
WARPKIT_DEVICE void scanHandPut(unsigned char* slot, const T& v, unsigned long long* full, unsigned long long* empty,
                                unsigned use) {
#if WARPKIT_ARCH >= 800
    if (use > 0) mbarWait(smemAddr(empty), (use - 1) & 1);
#endif
    __builtin_memcpy(slot, &v, sizeof(T));
#if WARPKIT_ARCH >= 800
    mbarArrive(smemAddr(full));
#else
    (void)full, (void)empty, (void)use;
#endif
}
/// Takes the `use`-th value from its slot (once full), and marks the slot empty (one arrival of
/// those the empty mbarrier counts). One thread a taker.
template <typename T>
WARPKIT_DEVICE T scanHandTake(const unsigned char* slot, unsigned long long* full, unsigned long long* empty,
                              unsigned use) {
#if WARPKIT_ARCH >= 800
    mbarWait(smemAddr(full), use & 1);
#endif
    T v;
    __builtin_memcpy(&v, slot, sizeof(T));
#if WARPKIT_ARCH >= 800
    mbarArrive(smemAddr(empty));
#else
    (void)full, (void)empty, (void)use;
#endif
    return v;
}

/// The one-pass scan (header comment). Element e of the array is slot position e + head of the
/// 16-byte grid of `in` (head: in's misalignment in elements). status: the cleared records.
/// flags: bit 0 vector loads, bit 1 vector stores, bit 2 prefetch by async copies (stages >=
/// lag + 2). tiles: the call's tile count. stages, lag: the pipeline (scanPlan).
//
// Block b scans tiles b, b + grid, b + 2 grid, ... (a cooperative launch: the whole grid is
// resident, so waiting on any earlier tile cannot deadlock). Its tile threads, for tile j: take
// it from its stage (loaded stages - lag - 1 tiles ahead by async copies), scan it, publish its
// aggregate and put the in-tile results back in the stage; then finish tile j - lag with the
// prefix the look-back warp has formed for it meanwhile, store it and refill its stage. So each
// look-back has `lag` tiles' time to wait for the blocks before it, and loads are always in flight.
template <typename T, typename Op, bool Exclusive>
__global__ void __launch_bounds__(kScanBlockThreads, 1)
    deviceScanKernel(const T* in, T* out, long long n, Op op, T init, int head, int flags, long long tiles, int stages,
                     int lag, unsigned long long* status) {
    using S = ScanShape<T>;
    constexpr int V = S::V, C = S::C, G = kScanThreads, NW = G / 32;
    using Row = ScanRow<T, C>;
    extern __shared__ uint4 stageShared[]; // stages x C x G slots of V elements: slot (s, c, g) at (s * C + c) * G + g
    __shared__ Row warpShared[2][NW];      // the tile scan's warp totals, by tile parity
    __shared__ alignas(16) unsigned char aggShared[kScanSlots][sizeof(T)];    // tile j's aggregate at j % kScanSlots
    __shared__ alignas(16) unsigned char prefixShared[kScanSlots][sizeof(T)]; // and its exclusive prefix
    // sm_80 and newer: full and empty mbarriers of each slot, aggregate then prefix
    __shared__ unsigned long long handShared[4][kScanSlots];
    __shared__ alignas(16) unsigned char keptShared[S::keep * 32 * sizeof(T)];

    const int g = (int)threadIdx.x, lane = g & 31, warp = g >> 5;
    const long long step = gridDim.x;
    const long long count = (tiles - (long long)blockIdx.x + step - 1) / step; // tiles of this block
    unsigned long long* aggFull = handShared[0];
    unsigned long long* aggEmpty = handShared[1];
    unsigned long long* prefixFull = handShared[2];
    unsigned long long* prefixEmpty = handShared[3];
#if WARPKIT_ARCH >= 800
    if (g == 0) {
        for (int q = 0; q < kScanSlots; ++q) {
            mbarInit(smemAddr(&aggFull[q]), 1);
            mbarInit(smemAddr(&aggEmpty[q]), 1);
            mbarInit(smemAddr(&prefixFull[q]), 1);
            mbarInit(smemAddr(&prefixEmpty[q]), NW); // lane 0 of each tile warp
        }
    }
    __syncthreads();
#endif

    if (g >= G) {
        // The look-back warp: for each tile j of the block, its exclusive prefix P (init for tile
        // 0 of an exclusive scan), and incl = P op agg.
        T* kept = reinterpret_cast<T*>(keptShared);
        for (long long j = 0; j < count; ++j) {
            const long long tile = blockIdx.x + j * step;
            const int q = (int)(j % kScanSlots);
            const unsigned use = (unsigned)(j / kScanSlots); // this slot's use number
            T P = init;
            if (tile > 0) P = scanLookBack(status, tile, op, kept);
#if WARPKIT_ARCH < 800
            namedBarrierSync(kScanBarAgg + (int)(j % (lag + 1)), 64);
#endif
            if (lane == 0) {
                const T agg = scanHandTake<T>(aggShared[q], &aggFull[q], &aggEmpty[q], use);
                if (tile > 0) scanPublish(status + tile * S::statusWords, kScanPrefix, op(P, agg));
                scanHandPut(prefixShared[q], P, &prefixFull[q], &prefixEmpty[q], use);
            }
#if WARPKIT_ARCH < 800
            namedBarrierArrive(kScanBarPrefix + (int)(j % (lag + 1)), G + 32);
#endif
        }
        return;
    }

    // The thread's slot c of stage s, and its in-tile results there.
    auto slot = [&](int s, int c) { return reinterpret_cast<T*>(stageShared) + ((long long)(s * C + c) * G + g) * V; };
    auto toStage = [&](int s, const T (&x)[C][V]) {
#pragma unroll
        for (int c = 0; c < C; ++c) {
            if constexpr (S::vec) {
                Vector16<T> w;
#pragma unroll
                for (int e = 0; e < V; ++e) w.e[e] = x[c][e];
                *reinterpret_cast<Vector16<T>*>(slot(s, c)) = w;
            } else {
                *slot(s, c) = x[c][0];
            }
        }
    };
    auto fromStage = [&](int s, T (&x)[C][V]) {
#pragma unroll
        for (int c = 0; c < C; ++c) {
            if constexpr (S::vec) {
                const Vector16<T> w = *reinterpret_cast<const Vector16<T>*>(slot(s, c));
#pragma unroll
                for (int e = 0; e < V; ++e) x[c][e] = w.e[e];
            } else {
                x[c][0] = *slot(s, c);
            }
        }
    };

    // Whole tiles with vector loads go through shared memory by async copies on sm_80 and newer.
    const bool async = WARPKIT_ARCH >= 800 && S::vec && (flags & 1) && (flags & 4);
    auto isWhole = [&](long long t) {
        const long long f = t * S::tileElems - head;
        return f >= 0 && f + S::tileElems <= n;
    };
    // Starts loading tile t into stage s (nothing when t is past the end or not whole) and closes
    // the group: every thread commits one group per call, in the prologue and once per tile.
    auto prefetch = [&](long long t, int s) {
        if (async && t < tiles && isWhole(t)) {
            const T* src = in + t * S::tileElems - head;
#pragma unroll
            for (int c = 0; c < C; ++c) asyncCopy16(slot(s, c), src + (long long)(c * G + g) * V);
        }
        asyncCopyCommit();
    };
#pragma unroll
    for (int st = 0; st < stages; ++st) prefetch(blockIdx.x + st * step, st);

    // Tile j of the block (in stage j % stages): out = P op y, y its in-tile results in the
    // stage (y alone in tile 0 of an inclusive scan; P alone at the first element of an exclusive
    // scan's tile); stores it, then refills the stage with tile j + stages.
    auto finish = [&](long long j) {
        const long long tile = blockIdx.x + j * step;
        const int s = (int)(j % stages), q = (int)(j % kScanSlots);
        // Lane 0 of each warp takes the prefix from its slot and hands the slot back; the warp
        // gets it by a shuffle.
#if WARPKIT_ARCH < 800
        namedBarrierSync(kScanBarPrefix + (int)(j % (lag + 1)), G + 32);
#endif
        T P = init;
        if (lane == 0)
            P = scanHandTake<T>(prefixShared[q], &prefixFull[q], &prefixEmpty[q], (unsigned)(j / kScanSlots));
        P = shflIdx(P, 0);
        T x[C][V];
        fromStage(s, x);
        const int skip = (tile == 0 && g == 0) ? head : 0;
        const bool hasP = Exclusive || tile > 0;
#pragma unroll
        for (int c = 0; c < C; ++c) {
#pragma unroll
            for (int e = 0; e < V; ++e) {
                if constexpr (Exclusive) x[c][e] = (c == 0 && g == 0 && e == skip) ? P : op(P, x[c][e]);
                else if (hasP) x[c][e] = op(P, x[c][e]);
            }
        }
        const long long first = tile * S::tileElems - head;
        bool stored = false;
        if constexpr (S::vec) {
            if (isWhole(tile) && (flags & 2)) {
#pragma unroll
                for (int c = 0; c < C; ++c) {
                    Vector16<T> w;
#pragma unroll
                    for (int e = 0; e < V; ++e) w.e[e] = x[c][e];
                    storeVector<StoreStreaming>(out + first + (long long)(c * G + g) * V, w);
                }
                stored = true;
            }
        }
        if (!stored) {
#pragma unroll
            for (int c = 0; c < C; ++c)
                scanStoreSlot(out, first + (long long)(c * G + g) * V, n, x[c], (flags & 2) != 0);
        }
        prefetch(tile + stages * step, s);
    };

    for (long long j = 0; j < count; ++j) {
        const long long tile = blockIdx.x + j * step;
        const int s = (int)(j % stages);
        // 1. load: row c, thread g holds slot tile * C * G + c * G + g, whose first element is
        //    first + (c * G + g) * V: from the stage when it was prefetched (its copies are the
        //    thread's own, in its group for this tile), else from global memory.
        T x[C][V];
        const long long first = tile * S::tileElems - head;
        const bool whole = isWhole(tile);
        bool loaded = false;
        if constexpr (S::vec) {
            if (async && whole) {
                asyncCopyWait(stages - lag - 1);
                fromStage(s, x);
                loaded = true;
            } else if (whole && (flags & 1)) { // sm_75: no async copies
#pragma unroll
                for (int c = 0; c < C; ++c) {
                    const Vector16<T> w = loadVector<LoadStreaming>(in + first + (long long)(c * G + g) * V);
#pragma unroll
                    for (int e = 0; e < V; ++e) x[c][e] = w.e[e];
                }
                loaded = true;
            }
        }
        if (!loaded) {
#pragma unroll
            for (int c = 0; c < C; ++c) scanLoadSlot(x[c], in, first + (long long)(c * G + g) * V, n, flags & 1);
        }

        // 2. each slot in registers (the array's first `head` positions, in tile 0's first slot,
        //    are not elements and stay out of it), then the C slot totals by one tile scan: the
        //    warps' scans, their totals through shared memory, and a scan of those.
        const int skip = (tile == 0 && g == 0) ? head : 0;
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
        if (lane == 31) warpShared[j & 1][warp] = incl;
        namedBarrierSync(kScanBarTile, G);
        const Row warps = warpInclusiveScan<32>(warpShared[j & 1][lane < NW ? lane : NW - 1], rowOp);
        const Row warpPrefix = shflIdx(warps, warp > 0 ? warp - 1 : 0);
        const Row total = shflIdx(warps, NW - 1);
        // Row c's totals of threads 0 .. g-1 (none for thread 0): the warps before, then the lanes before.
        const Row below = shflUp(incl, 1);
        Row ex = warpPrefix;
        if (lane > 0) ex = warp > 0 ? rowOp(warpPrefix, below) : below;

        // The prefix of each slot inside the tile: the rows before (a left chain of row totals),
        // then the threads before in this row. The chain through all rows is the tile's aggregate.
        T pre[C];
        T agg = total.v[0];
        pre[0] = ex.v[0];
#pragma unroll
        for (int c = 1; c < C; ++c) {
            pre[c] = g > 0 ? op(agg, ex.v[c]) : agg;
            agg = op(agg, total.v[c]);
        }

        // 3. publish the aggregate (tile 0: its inclusive prefix), and hand it to the look-back warp
        if (g == 0) {
            scanPublish(status + tile * S::statusWords, tile == 0 ? kScanPrefix : kScanAggregate,
                        (tile == 0 && Exclusive) ? op(init, agg) : agg);
            const int q = (int)(j % kScanSlots);
            scanHandPut(aggShared[q], agg, &aggFull[q], &aggEmpty[q], (unsigned)(j / kScanSlots));
        }
#if WARPKIT_ARCH < 800
        if (warp == 0) namedBarrierArrive(kScanBarAgg + (int)(j % (lag + 1)), 64);
#endif

        // The in-tile part of every output: y = pre op (slot prefix), with the slot prefix
        // inclusive, or exclusive (shifted by one; the tile's first element has none), kept in
        // the tile's stage (the thread's own slots) until its prefix comes.
#pragma unroll
        for (int c = 0; c < C; ++c) {
            const bool hasPre = c > 0 || g > 0;
            if constexpr (Exclusive) {
#pragma unroll
                for (int e = V - 1; e > 0; --e) x[c][e] = hasPre ? op(pre[c], x[c][e - 1]) : x[c][e - 1];
                x[c][0] = pre[c];
                if (c == 0 && skip > 0) {
#pragma unroll
                    for (int e = 1; e < V; ++e)
                        if (e == skip) x[c][e] = pre[c];
                }
            } else {
#pragma unroll
                for (int e = 0; e < V; ++e)
                    if (hasPre) x[c][e] = op(pre[c], x[c][e]);
            }
        }
        toStage(s, x);

        // 4. the tile `lag` before: its prefix has had `lag` tiles' time to arrive
        if (j >= lag) finish(j - lag);
        else asyncCopyCommit(); // one group a tile, as finish's refill
    }
    for (long long j = count > lag ? count - lag : 0; j < count; ++j) finish(j);
}

/// Tiles of a call on n elements when in's misalignment is `head` elements.
template <typename T> constexpr long long scanTiles(long long n, int head) {
    using S = ScanShape<T>;
    const long long slots = (n + head + S::V - 1) / S::V;
    return (slots + S::tileSlots - 1) / S::tileSlots;
}

/// The largest n a call takes: 2^31 - 1 tiles.
template <typename T> constexpr long long scanMaxElems() {
    return 2147483647LL * ScanShape<T>::tileElems - ScanShape<T>::V;
}

/// Workspace bytes for n elements: 16 bytes of alignment slack and the status records.
template <typename T> constexpr size_t scanWorkspaceBytes(long long n) {
    return n == 0 ? 0 : 16 + (size_t)scanTiles<T>(n, ScanShape<T>::V - 1) * ScanShape<T>::statusWords * 8;
}

/// The pipeline for a block with at most smemOptin bytes of shared memory (8 KB left for the
/// kernel's own): as many stages as fit (at most 8), and lag = stages - 2 (at most kScanLagMax,
/// at least 0), which leaves one stage loading ahead of the one scanned. H100, 4-byte types: 5
/// stages of 38 KB, lag 3 (2^28 int: 0.92x a copy; lag 2: 0.90x; 30 KB tiles, lag 1: 0.79x).
/// stages = 0 when not even one fits.
template <typename T> inline void scanPlan(int smemOptin, int* stages, int* lag) {
    const int fit = (smemOptin - 8 * 1024) / ScanStage<T>::bytes;
    *stages = fit < 0 ? 0 : (fit > 8 ? 8 : fit);
    *lag = *stages - 2 < 0 ? 0 : (*stages - 2 > kScanLagMax ? kScanLagMax : *stages - 2);
}

/// Scans n >= 1 elements with the pipeline (stages, lag) on at most maxBlocks blocks (0: as many
/// as are resident), the status records at `status` (16-byte aligned, scanWorkspaceBytes - 16
/// bytes): clears them on `stream`, then launches. The arguments are checked by the caller;
/// cudaErrorInvalidValue for a pipeline that is not one (lag above kScanLagMax, stages <= lag).
template <bool Exclusive, typename T, typename Op>
inline cudaError_t deviceScanRun(const T* in, T* out, long long n, Op op, T init, unsigned long long* status,
                                 int stages, int lag, int maxBlocks, cudaStream_t stream) {
    using S = ScanShape<T>;
    if (lag < 0 || lag > kScanLagMax || stages <= lag || maxBlocks < 0) return cudaErrorInvalidValue;
    // The slot grid: in's 16-byte grid when in is aligned as T's size, else element by element.
    const size_t a = (size_t)in, b = (size_t)out;
    const bool vecIn = S::vec && a % sizeof(T) == 0;
    const int head = vecIn ? (int)((a % 16) / sizeof(T)) : 0;
    const bool vecOut = S::vec && (b - (size_t)head * sizeof(T)) % 16 == 0;
    const long long tiles = scanTiles<T>(n, head);
    const auto kernel = deviceScanKernel<T, Op, Exclusive>;
    const int smem = stages * ScanStage<T>::bytes;
    int dev = 0, resident = 0;
    DeviceProps d;
    WARPKIT_TRY(currentDevice(&dev, &d));
    WARPKIT_TRY(allowDynamicSmem(kernel, dev, smem));
    WARPKIT_TRY(residentBlocks(kernel, kScanBlockThreads, dev, d.sms, &resident, smem));
    long long blocks = tiles < resident ? tiles : resident;
    if (maxBlocks > 0 && blocks > maxBlocks) blocks = maxBlocks;
    WARPKIT_TRY(cudaMemsetAsync(status, 0, (size_t)tiles * S::statusWords * 8, stream));
    // Cooperative: every block of the grid (at most the resident blocks) runs at once.
    cudaLaunchAttribute coop;
    coop.id = cudaLaunchAttributeCooperative;
    coop.val.cooperative = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)blocks);
    cfg.blockDim = dim3((unsigned)kScanBlockThreads);
    cfg.dynamicSmemBytes = (size_t)smem;
    cfg.stream = stream;
    cfg.attrs = &coop;
    cfg.numAttrs = 1;
    const int flags = (vecIn ? 1 : 0) | (vecOut ? 2 : 0) | (stages >= lag + 2 ? 4 : 0);
    return cudaLaunchKernelEx(&cfg, kernel, in, out, n, op, init, head, flags, tiles, stages, lag, status);
}

template <bool Exclusive, typename T, typename Op>
inline cudaError_t deviceScanLaunch(const T* in, T* out, long long n, Op op, T init, void* workspace,
                                    size_t* workspaceBytes, cudaStream_t stream) {
    if (workspaceBytes == nullptr || n < 0 || n > scanMaxElems<T>()) return cudaErrorInvalidValue;
    const size_t need = scanWorkspaceBytes<T>(n);
    if (workspace == nullptr) {
        *workspaceBytes = need;
        return cudaSuccess;
    }
    if (n == 0) return cudaSuccess;
    const size_t a = (size_t)in, b = (size_t)out, bytes = (size_t)n * sizeof(T);
    if (in == nullptr || out == nullptr || *workspaceBytes < need) return cudaErrorInvalidValue;
    if (a != b && a < b + bytes && b < a + bytes) return cudaErrorInvalidValue;
    int dev = 0, stages = 0, lag = 0;
    DeviceProps d;
    WARPKIT_TRY(currentDevice(&dev, &d));
    scanPlan<T>(d.smemOptin, &stages, &lag);
    if (stages < 1) return cudaErrorInvalidConfiguration;
    unsigned long long* status = reinterpret_cast<unsigned long long*>(((size_t)workspace + 15) / 16 * 16);
    return deviceScanRun<Exclusive>(in, out, n, op, init, status, stages, lag, 0, stream);
}

} // namespace detail

#define WARPKIT_CHECK_DEVICE_SCAN_TYPE(T, fn)                                             \
    static_assert(__is_trivially_copyable(T) && __is_constructible(T),                    \
                  fn ": element type T must be trivially copyable and default-constructible " \
                  "(a scalar or a plain struct)")

/// out[i] = in[0] op in[1] op ... op in[i] for i in [0, n), in one pass on `stream`. Host.
/// op: associative (need not be commutative). Workspace, errors, determinism: header comment.
template <typename T, typename Op>
inline cudaError_t deviceInclusiveScan(const T* in, T* out, long long n, Op op, void* workspace,
                                       size_t* workspaceBytes, cudaStream_t stream = 0) {
    WARPKIT_CHECK_DEVICE_SCAN_TYPE(T, "deviceInclusiveScan");
    return detail::deviceScanLaunch<false>(in, out, n, op, T{}, workspace, workspaceBytes, stream);
}

/// out[0] = init, out[i] = init op in[0] op ... op in[i-1] for i in [1, n), in one pass on
/// `stream`. Host. op: associative (need not be commutative); init: any value (a seed, as CUB's).
template <typename T, typename Op>
inline cudaError_t deviceExclusiveScan(const T* in, T* out, long long n, Op op,
                                       typename detail::NonDeduced<T>::type init, void* workspace,
                                       size_t* workspaceBytes, cudaStream_t stream = 0) {
    WARPKIT_CHECK_DEVICE_SCAN_TYPE(T, "deviceExclusiveScan");
    return detail::deviceScanLaunch<true>(in, out, n, op, init, workspace, workspaceBytes, stream);
}

/// Inclusive prefix sums: out[i] = in[0] + ... + in[i], added in T (integers wrap). Host.
template <typename T>
inline cudaError_t deviceInclusiveSum(const T* in, T* out, long long n, void* workspace, size_t* workspaceBytes,
                                      cudaStream_t stream = 0) {
    WARPKIT_CHECK_ARITH_TYPE(T, "deviceInclusiveSum");
    return detail::deviceScanLaunch<false>(in, out, n, Sum{}, T{}, workspace, workspaceBytes, stream);
}

/// Exclusive prefix sums: out[0] = 0, out[i] = in[0] + ... + in[i-1], added in T. Host.
template <typename T>
inline cudaError_t deviceExclusiveSum(const T* in, T* out, long long n, void* workspace, size_t* workspaceBytes,
                                      cudaStream_t stream = 0) {
    WARPKIT_CHECK_ARITH_TYPE(T, "deviceExclusiveSum");
    using A = typename detail::Arith<T>::Acc;
    return detail::deviceScanLaunch<true>(in, out, n, Sum{}, detail::Arith<T>::from_acc(A(0)), workspace,
                                          workspaceBytes, stream);
}

#undef WARPKIT_CHECK_DEVICE_SCAN_TYPE

} // namespace warpkit
