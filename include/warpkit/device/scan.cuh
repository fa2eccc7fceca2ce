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
// n above 2^44 for 4-byte types) return cudaErrorInvalidValue, and nothing is launched or
// written. No host cache is needed: nothing is queried from the device.
//
// Workspace (CUB's two-call rule). With workspace == nullptr the call writes the bytes it needs for
// this n and T to *workspaceBytes and returns (0 for n = 0); otherwise *workspaceBytes must be at
// least that. The workspace holds a tile counter and one status record per tile (8 bytes for types
// of up to 4 bytes); it may hold anything on entry and needs no alignment: each call clears it
// with one cudaMemsetAsync on `stream` before its kernel. Calls on different streams with
// different workspaces are independent; two calls in flight at once must not share one.
//
// Method: Merrill and Garland's decoupled look-back, one block per tile of 512 threads x 128 bytes
// (16384 int or float, 8192 double). A block takes the next tile number from the counter (so every
// tile before it belongs to a block already running, and waiting on it cannot deadlock), then:
//   1. loads the tile: row c (of C) of the tile is 512 consecutive 16-byte slots, thread g holding
//      slot g of each row, so every load and store instruction of a warp covers 512 contiguous
//      bytes (a blocked arrangement, 128 consecutive bytes a thread, would touch 32 cache lines
//      per instruction: 8x the L1 wavefronts). The slots lie on `in`'s 16-byte grid, so only the
//      array's first and last slots are partial (element by element); every other tile issues
//      its C 16-byte loads back to back;
//   2. scans each slot in registers, then all C rows at once with ONE block scan of the C slot
//      totals per thread (block/scan.cuh's scan core on a C-tuple), and chains the row totals;
//   3. publishes the tile's aggregate, and warp 0 looks back over the status records of the 32
//      tiles before it, then the 32 before those, ... (up to `keep` windows, restarting when none
//      holds an inclusive prefix), to form the tile's exclusive prefix; publishes the inclusive one;
//   4. combines the prefix into every element and stores the tile.
// A status record is one 64-bit word per 4 bytes of T, each word holding a 32-bit piece of the
// value and the record's flag (0 invalid, 1 aggregate, 2 inclusive prefix): one relaxed 64-bit
// store publishes a piece together with its flag, and a reader accepts a record only when all its
// words carry the same flag. So no fence is needed (a release at GPU scope waits for the SM's
// output stores to drain), and no 16-byte atomicity is assumed.
//
// Determinism: for a given input at a given address modulo 16 bytes, op, T, GPU and build, the
// output is the same bits on every run, whatever the timing: stream, concurrent work, which tiles
// happen to have published what (it does not depend on `out`'s address or on in == out). Why:
//   - Within a tile everything is in a fixed order: the slot's left fold, the block scan's fixed
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
// that gather the window do not depend on the running value, so a window of 32 costs about 32 op
// latencies (~130 cycles for a float sum), about what the tree's shuffle latencies cost. The
// aggregates of the windows looked past are kept in shared memory (keep x 32 x sizeof(T) bytes,
// 1 KB for 4-byte types), and a tile that finds no inclusive prefix within keep + 1 windows waits
// and looks again. Integer, max and min scans gain nothing from the fixed order but pay no more.
// The tile counter costs each block one atomic (an L2 round trip before its loads): the price of
// not relying on blocks starting in index order, as a blockIdx tile number would.
//
// Segmented scans. SegmentedPair<T>{value, head} with SegmentedOp<Op>{op}:
//   (a, ha) (+) (b, hb) = (hb ? b : a op b, ha | hb)
// is associative (not commutative), so deviceInclusiveScan over pairs gives, for each element,
// op over its segment up to and including it, a segment starting at every element whose head is
// nonzero (and at element 0). For an exclusive segmented scan, scan the pairs inclusively and
// read, at each element, the previous element's value (init at segment heads).
#pragma once

#include "../block/scan.cuh"
#include "../thread/vector.cuh"
#include "../detail/host.cuh"

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

constexpr int kScanThreads = 512; // threads per block, one tile a block (2^28 int on H100: 0.81x copy; 256 threads 0.75x)

/// Tile geometry and status layout for T.
template <typename T> struct ScanShape {
    /// 16-byte vector I/O for sizes that divide 16, element I/O otherwise.
    static constexpr bool vec = sizeof(T) <= 16 && 16 % sizeof(T) == 0;
    /// Elements per slot (one 16-byte vector, or one element).
    static constexpr int V = vec ? (int)(16 / sizeof(T)) : 1;
    /// 32-bit words an element occupies in registers (1- and 2-byte types take a whole one).
    static constexpr int regWords = (int)((sizeof(T) + 3) / 4);
    /// Rows: slots per thread. 32 register words of items (C = 8 for 4- and 8-byte types, 128
    /// bytes a thread), 16 for types of 16 bytes and more (their tuple scan moves C words a step).
    static constexpr int C0 = regWords >= 4 ? 16 / regWords : 32 / (V * regWords);
    static constexpr int C = C0 < 1 ? 1 : (C0 > 8 ? 8 : C0);
    static constexpr long long tileSlots = (long long)C * kScanThreads;
    static constexpr long long tileElems = tileSlots * V;
    /// Blocks an SM must hold at once (registers: 64 a thread for 2): 2 for types of up to 4
    /// bytes, whose 32 items and C-tuples fit; larger types take what they need.
    static constexpr int minBlocks = regWords == 1 ? 2 : 1;
    /// 64-bit words of a status record: one per 32-bit piece of T, an even count above one (so a
    /// record moves as 16-byte accesses).
    static constexpr int statusWords = regWords == 1 ? 1 : (regWords + 1) / 2 * 2;
    /// Look-back windows of 32 aggregates kept in shared memory (2 KB at most).
    static constexpr int keep0 = (int)(2048 / (32 * sizeof(T)));
    static constexpr int keep = keep0 < 2 ? 2 : (keep0 > 8 ? 8 : keep0);
};

/// C values of T: one slot total per row, scanned together by one block scan.
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

/// Relaxed GPU-scope loads and stores of status words: coherent in L2, no fence.
WARPKIT_DEVICE unsigned long long scanLoadWord(const unsigned long long* p) {
    unsigned long long w;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
    return w;
}
WARPKIT_DEVICE void scanLoadWords(const unsigned long long* p, unsigned long long& a, unsigned long long& b) {
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
}
WARPKIT_DEVICE void scanStoreWord(unsigned long long* p, unsigned long long w) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(w) : "memory");
}
WARPKIT_DEVICE void scanStoreWords(unsigned long long* p, unsigned long long a, unsigned long long b) {
    asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
}

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
        scanStoreWord(p, w[0]);
    } else {
#pragma unroll
        for (int k = 0; k < SW; k += 2) scanStoreWords(p + k, w[k], w[k + 1]);
    }
}

/// Reads the status record at p: returns its flag (kScanMixed when its words disagree) and its
/// value in v. Any thread.
template <typename T> WARPKIT_DEVICE unsigned scanRead(const unsigned long long* p, T& v) {
    constexpr int SW = ScanShape<T>::statusWords;
    unsigned long long w[SW];
    if constexpr (SW == 1) {
        w[0] = scanLoadWord(p);
    } else {
#pragma unroll
        for (int k = 0; k < SW; k += 2) scanLoadWords(p + k, w[k], w[k + 1]);
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

/// The exclusive prefix of tile `tile` (>= 1): incl(tile - 1), formed by the deterministic
/// look-back (header comment). Warp 0 calls, all 32 lanes; all get it. kept: shared memory for
/// ScanShape<T>::keep windows of 32 values.
template <typename T, typename Op>
WARPKIT_DEVICE T scanLookBack(const unsigned long long* status, long long tile, Op op, T* kept) {
    using S = ScanShape<T>;
    const int lane = (int)laneId();
    unsigned sleep = 0;
    for (;;) {
        long long base = tile; // this window: tiles base - 32 .. base - 1, lane l on base - 32 + l
        int depth = 0;         // windows of aggregates stepped past, kept in kept[0 .. depth)
        for (;;) {
            const long long t = base - 32 + lane;
            T v;
            const unsigned flag = t >= 0 ? scanRead<T>(status + t * S::statusWords, v) : kScanNone;
            const unsigned prefix = __ballot_sync(WARPKIT_FULL_MASK, flag == kScanPrefix);
            const unsigned wait = __ballot_sync(WARPKIT_FULL_MASK, flag == kScanInvalid || flag == kScanMixed);
            const int p = prefix ? 31 - __clz((int)prefix) : -1; // nearest inclusive prefix
            const int q = wait ? 31 - __clz((int)wait) : -1;     // nearest tile not ready
            if (q > p) {
                // A tile after the nearest prefix has published nothing yet: wait, read again.
                sleep = sleep < 32 ? 32 : (sleep < 512 ? sleep * 2 : 512);
                __nanosleep(sleep);
                continue;
            }
            if (p >= 0) {
                // incl(j) at lane p, aggregates above it, then the kept windows nearest last.
                T acc = scanFoldWindow(shflIdx(v, p), v, p + 1, op);
                for (int d = depth - 1; d >= 0; --d) acc = scanFoldWindow(acc, kept[d * 32 + lane], 0, op);
                return acc;
            }
            // 32 aggregates: keep them and step back a window, or start over when none is left.
            if (depth == S::keep || base <= 32) break;
            kept[depth * 32 + lane] = v;
            ++depth;
            base -= 32;
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

/// The one-pass scan (header comment). Element e of the array is slot position e + head of the
/// 16-byte grid of `in` (head: in's misalignment in elements). ticket and status: the cleared
/// workspace. flags: bit 0 vector loads, bit 1 vector stores.
// Exclusive scans carry init through the tile and need a few more registers than two blocks an
// SM leave (they spilled at 64): they ask for one.
template <typename T, typename Op, bool Exclusive>
__global__ void __launch_bounds__(kScanThreads, Exclusive ? 1 : ScanShape<T>::minBlocks)
    deviceScanKernel(const T* in, T* out, long long n, Op op, T init, int head, int flags, unsigned* ticket,
                     unsigned long long* status) {
    using S = ScanShape<T>;
    constexpr int V = S::V, C = S::C, G = kScanThreads;
    using Row = ScanRow<T, C>;
    __shared__ unsigned tileShared;
    __shared__ BlockReduceScratch<Row, G> scratch;
    __shared__ alignas(16) unsigned char prefixShared[sizeof(T)];
    __shared__ alignas(16) unsigned char keptShared[S::keep * 32 * sizeof(T)];

    const int g = (int)threadIdx.x, lane = g & 31;
    if (g == 0) tileShared = atomicAdd(ticket, 1u);
    __syncthreads();
    const long long tile = tileShared;

    // 1. load: row c, thread g holds slot tile * C * G + c * G + g, whose first element is
    //    first + (c * G + g) * V. A tile of whole slots (all but the first and the last tile)
    //    issues its C 16-byte loads back to back, with no branch between them to wait on a load.
    T x[C][V];
    const long long first = tile * S::tileElems - head;
    const bool whole = first >= 0 && first + S::tileElems <= n;
    if constexpr (S::vec) {
        if (whole && (flags & 1)) {
#pragma unroll
            for (int c = 0; c < C; ++c) {
                const Vector16<T> w = loadVector<LoadStreaming>(in + first + (long long)(c * G + g) * V);
#pragma unroll
                for (int k = 0; k < V; ++k) x[c][k] = w.e[k];
            }
        }
    }
    if (!(S::vec && whole && (flags & 1))) {
#pragma unroll
        for (int c = 0; c < C; ++c) scanLoadSlot(x[c], in, first + (long long)(c * G + g) * V, n, flags & 1);
    }

    // 2. each slot in registers (the array's first `head` positions, in tile 0's first slot, are
    //    not elements and stay out of it), then the C slot totals by one block scan.
    const int skip = (tile == 0 && g == 0) ? head : 0;
#pragma unroll
    for (int c = 0; c < C; ++c)
#pragma unroll
        for (int k = 1; k < V; ++k)
            if (c > 0 || k > skip) x[c][k] = op(x[c][k - 1], x[c][k]);
    Row tot;
#pragma unroll
    for (int c = 0; c < C; ++c) tot.v[c] = x[c][V - 1];
    const ScanRowOp<Op> rowOp{op};
    const BlockScanParts<Row> parts = blockScanCore<G>(tot, rowOp, reinterpret_cast<Row*>(scratch.bytes));
    // Row c's totals of threads 0 .. g-1 (none for thread 0): the warps before, then the lanes before.
    const Row below = shflUp(parts.incl, 1);
    Row ex = parts.warpPrefix;
    if (lane > 0) ex = parts.hasPrefix ? rowOp(parts.warpPrefix, below) : below;

    // The prefix of each slot inside the tile: the rows before (a left chain of row totals), then
    // the threads before in this row. The chain through all rows is the tile's aggregate.
    T pre[C];
    T agg = parts.total.v[0];
    pre[0] = ex.v[0];
#pragma unroll
    for (int c = 1; c < C; ++c) {
        pre[c] = g > 0 ? op(agg, ex.v[c]) : agg;
        agg = op(agg, parts.total.v[c]);
    }

    // 3. publish, so that later tiles can look past this one as early as possible
    if (g == 0) scanPublish(status + tile * S::statusWords, tile == 0 ? kScanPrefix : kScanAggregate,
                            (tile == 0 && Exclusive) ? op(init, agg) : agg);

    // The in-tile part of every output, before the look-back: y = pre op (slot prefix), with the
    // slot prefix inclusive, or exclusive (shifted by one; the tile's first element has none).
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const bool hasPre = c > 0 || g > 0;
        if constexpr (Exclusive) {
#pragma unroll
            for (int k = V - 1; k > 0; --k) x[c][k] = hasPre ? op(pre[c], x[c][k - 1]) : x[c][k - 1];
            x[c][0] = pre[c];
            if (c == 0 && skip > 0) {
#pragma unroll
                for (int k = 1; k < V; ++k)
                    if (k == skip) x[c][k] = pre[c];
            }
        } else {
#pragma unroll
            for (int k = 0; k < V; ++k)
                if (hasPre) x[c][k] = op(pre[c], x[c][k]);
        }
    }

    // The tile's exclusive prefix P: init for tile 0 of an exclusive scan, none for tile 0 of an
    // inclusive one, else the look-back by warp 0, which also publishes P op agg.
    T P = init;
    if (tile > 0) {
        if (g < 32) {
            P = scanLookBack(status, tile, op, reinterpret_cast<T*>(keptShared));
            if (g == 0) {
                scanPublish(status + tile * S::statusWords, kScanPrefix, op(P, agg));
                __builtin_memcpy(prefixShared, &P, sizeof(T));
            }
        }
        __syncthreads();
        __builtin_memcpy(&P, prefixShared, sizeof(T));
    }

    // 4. out = P op y (y alone in tile 0 of an inclusive scan; P alone at the tile's first
    //    element of an exclusive scan), then store
    const bool hasP = Exclusive || tile > 0;
#pragma unroll
    for (int c = 0; c < C; ++c) {
#pragma unroll
        for (int k = 0; k < V; ++k) {
            if constexpr (Exclusive) x[c][k] = (c == 0 && g == 0 && k == skip) ? P : op(P, x[c][k]);
            else if (hasP) x[c][k] = op(P, x[c][k]);
        }
    }
    if constexpr (S::vec) {
        if (whole && (flags & 2)) {
#pragma unroll
            for (int c = 0; c < C; ++c) {
                Vector16<T> w;
#pragma unroll
                for (int k = 0; k < V; ++k) w.e[k] = x[c][k];
                storeVector<StoreStreaming>(out + first + (long long)(c * G + g) * V, w);
            }
            return;
        }
    }
#pragma unroll
    for (int c = 0; c < C; ++c) scanStoreSlot(out, first + (long long)(c * G + g) * V, n, x[c], (flags & 2) != 0);
}

/// Tiles of a call on n elements when in's misalignment is `head` elements.
template <typename T> constexpr long long scanTiles(long long n, int head) {
    using S = ScanShape<T>;
    const long long slots = (n + head + S::V - 1) / S::V;
    return (slots + S::tileSlots - 1) / S::tileSlots;
}

/// The largest n a call takes: tile numbers must fit the 32-bit counter and a grid (2^31 - 1).
template <typename T> constexpr long long scanMaxElems() {
    return 2147483647LL * ScanShape<T>::tileElems - ScanShape<T>::V;
}

/// Workspace bytes for n elements: 16 bytes of alignment slack, the counter (16), the records.
template <typename T> constexpr size_t scanWorkspaceBytes(long long n) {
    return n == 0 ? 0 : 32 + (size_t)scanTiles<T>(n, ScanShape<T>::V - 1) * ScanShape<T>::statusWords * 8;
}

template <bool Exclusive, typename T, typename Op>
inline cudaError_t deviceScanLaunch(const T* in, T* out, long long n, Op op, T init, void* workspace,
                                    size_t* workspaceBytes, cudaStream_t stream) {
    using S = ScanShape<T>;
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
    // The slot grid: in's 16-byte grid when in is aligned as T's size, else element by element.
    const bool vecIn = S::vec && a % sizeof(T) == 0;
    const int head = vecIn ? (int)((a % 16) / sizeof(T)) : 0;
    const bool vecOut = S::vec && (b - (size_t)head * sizeof(T)) % 16 == 0;
    const long long tiles = scanTiles<T>(n, head);
    char* w = reinterpret_cast<char*>(((size_t)workspace + 15) / 16 * 16);
    WARPKIT_TRY(cudaMemsetAsync(w, 0, 16 + (size_t)tiles * S::statusWords * 8, stream));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)tiles);
    cfg.blockDim = dim3((unsigned)kScanThreads);
    cfg.stream = stream;
    return cudaLaunchKernelEx(&cfg, deviceScanKernel<T, Op, Exclusive>, in, out, n, op, init, head,
                              (vecIn ? 1 : 0) | (vecOut ? 2 : 0), reinterpret_cast<unsigned*>(w),
                              reinterpret_cast<unsigned long long*>(w + 16));
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
