// warpkit/device/detail/segment_long.cuh: the kernels of the long pairs behind device/segment.cuh:
// stage 1c (the pairs that found no room, a warp each), stage 2 (the listed chunks' partials and
// totals), stage 3 (two-pass algorithms: the chunks' outputs) and stage 4 (the softmax's block
// tier: a segment a block, segment_block.cuh), and the no-room warps' emulation of the chunk
// kernels (chunkByWarp, longPairByWarp). Stage 1 and the long-pair math they share are in
// segment_kernels.cuh; stage 1b (rule G6's direct kernel) in segment_direct.cuh. Internal: include
// warpkit/device/segment.cuh.
#pragma once

#include "segment_slice.cuh"
#include "../../detail/async.cuh"

namespace warpkit {
namespace detail {

/// A chunk's partial computed by one warp as blockTree<LT> over LT threads would: lane l of pass w
/// stands for thread 32 w + l, and lane w keeps virtual warp w's value; kBatch loads in flight (never
/// the bits). Every lane gets it.
template <int LT, typename A, int kBatch = 8>
WARPKIT_DEVICE typename A::State chunkByWarp(const A& a, long long base, int h, int heads, long long r0, long long r1) {
    typename A::State top = a.identity();
#pragma unroll 1
    for (int w = 0; w < LT / 32; ++w) {
        const typename A::State t =
            warpTree(a, foldRows<A, kBatch>(a, base, h, heads, r0 + 32 * w + (int)laneId(), r1, LT));
        if ((int)laneId() == w) top = t;
    }
    return warpTree(a, top);
}

/// A long pair done by one warp with the chunk kernels' math (no room in the workspace): virtual
/// thread t folds the partials of chunks [t * per, (t + 1) * per) in order, then the LT values go
/// through the same tree. The chunks of one virtual thread are consecutive, so the threads are
/// taken in turn and nothing is stored. kBatch: chunkByWarp's.
template <int LT, typename A, int kBatch = 8> WARPKIT_DEVICE void
longPairByWarp(const A& a, long long pair, long long base, long long rows, int heads, long long chunkRows) {
    using S = typename A::State;
    const int lane = (int)laneId(), h = (int)(pair % heads);
    const long long chunks = segCeilDiv(rows, chunkRows), per = (chunks + LT - 1) / LT;
    S top = a.identity();
#pragma unroll 1
    for (int w = 0; w < LT / 32; ++w) {
        S mine = a.identity();
#pragma unroll 1
        for (int l = 0; l < 32; ++l) {
            S acc = a.identity();
            for (long long c = (32 * w + l) * per; c < (32 * w + l + 1) * per && c < chunks; ++c) {
                const long long r0 = c * chunkRows, r1 = r0 + chunkRows < rows ? r0 + chunkRows : rows;
                acc = a.merge(acc, chunkByWarp<LT, A, kBatch>(a, base, h, heads, r0, r1));
            }
            if (lane == l) mine = acc;
        }
        const S t = warpTree(a, mine);
        if (lane == w) top = t;
    }
    const S total = warpTree(a, top);
    if (lane == 0) a.finish(pair, total);
    if constexpr (A::kTwoPass) writeRows(a, a.prepare(total), base, h, heads, lane, rows, 32);
}

/// Stage 1c (when pairs can be long): the long pairs that found no room in the list (only
/// segments that overlap), each by a whole warp (longPairByWarp); warp w takes the no-room steps
/// w, w + warps, ... the group kernel appended. With none (every call whose segments do not
/// overlap) each warp reads the count and exits. Apart from the group kernel, whose steps then
/// carry no registers for this path.
template <int BT, int LT, typename A, typename O> __global__ void __launch_bounds__(BT, 1)
    segmentNoRoomKernel(A a, SegOffsets<O> off, long long segments, int heads, long long items, long long chunkRows,
                        SegList<typename A::State> list) {
    WARPKIT_CHECK_SEGMENT_ALGO(A, "segmentNoRoomKernel");
    pdlLaunchDependents();
    pdlWait(); // the group kernel's list (when launched programmatically: segmentLaunch)
    const long long steps = (long long)list.counter[2], warps = (long long)gridDim.x * (BT / 32);
    for (long long w = ((long long)blockIdx.x * BT + threadIdx.x) / 32; w < steps; w += warps) {
        const SegNoRoom r = list.noRoom[w];
        for (unsigned m = r.mask; m; m &= m - 1) {
            const long long p = r.first + __ffs(m) - 1;
            long long ob = 0, oe = 0, b = 0;
            segmentBoundsAt(off, p / heads, segments, &ob, &oe);
            const long long rows = segmentClip(ob, oe, items, &b);
            longPairByWarp<LT>(a, p, b, rows, heads, chunkRows);
        }
    }
}

/// A listed chunk's owner entry, e < 0 for none (past the list's end, or handed to a pair that
/// found no room: a warp of the no-room kernel does that pair).
struct SegChunkRef {
    int e;
    SegEntry en;
};
template <typename S> WARPKIT_DEVICE int segmentOwnerAt(const SegList<S>& l, long long c, long long chunks) {
    return c < chunks ? l.owner[c] : -1;
}
template <typename S> WARPKIT_DEVICE SegChunkRef segmentChunkRef(const SegList<S>& l, int e) {
    SegChunkRef r{e, SegEntry{}};
    if (e >= 0) r.en = l.entries[e];
    return r;
}

/// Chunk c's partial `part` (thread 0's) of a pair of n > 1 chunks: the last chunk of the pair to
/// finish folds the partials in chunk order and writes the pair's result and total. Every thread
/// calls.
template <int LT, typename A> WARPKIT_DEVICE void segmentChunkJoin(const A& a, const SegList<typename A::State>& list,
                                                                   long long c, int e, const SegEntry& en, long long n,
                                                                   typename A::State part) {
    using S = typename A::State;
    __shared__ bool last;
    if (threadIdx.x == 0) {
        list.partials[c] = part;
        __threadfence(); // the partial is visible before the count that announces it
        last = atomicAdd(&list.entries[e].done, 1u) == (unsigned)(n - 1);
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    const long long per = (n + LT - 1) / LT;
    S acc = a.identity();
    for (long long k = threadIdx.x * per; k < (threadIdx.x + 1) * per && k < n; ++k)
        acc = a.merge(acc, loadFromL2(list.partials + en.chunkBase + k * en.stride));
    const S total = blockTree<LT>(a, acc);
    if (threadIdx.x == 0) {
        a.finish(en.pair, total);
        list.totals[e] = total;
    }
}

/// Chunk c's partial (blockTree of the LT threads' folds); the last chunk of its pair to finish
/// folds the partials in chunk order and writes the pair's result and total. Every thread calls.
template <int LT, typename A> WARPKIT_DEVICE void segmentChunkFold(const A& a, int heads, long long chunkRows,
                                                                   const SegList<typename A::State>& list, long long c,
                                                                   int e, const SegEntry& en) {
    using S = typename A::State;
    const long long r0 = segmentChunkIndex(c, en) * chunkRows;
    const long long r1 = r0 + chunkRows < en.rows ? r0 + chunkRows : en.rows;
    const S part =
        blockTree<LT>(a, foldRows<A, SegChunkBatch<A>::value>(a, en.begin, en.head, heads, r0 + threadIdx.x, r1, LT));
    const long long n = segCeilDiv(en.rows, chunkRows);
    if (n > 1) return segmentChunkJoin<LT>(a, list, c, e, en, n, part);
    // a pair of one chunk: the join's fold over its one partial, with no count and no round trip
    // through L2 (the same bits)
    const S total = blockTree<LT>(a, threadIdx.x == 0 ? a.merge(a.identity(), part) : a.identity());
    if (threadIdx.x == 0) {
        a.finish(en.pair, total);
        list.totals[e] = total;
    }
}

/// Blocks of the chunk kernel an SM holds at least: for a one-word state and element 1024 threads
/// (64 registers a thread: 12-16 loads in flight and the loads ahead), else 768 (80 registers; the
/// softmax state took 96 without the bound, and an SM then held 512 threads).
template <int LT, typename A> struct SegChunkMinBlocks {
    static constexpr int value = SegChunkBatch<A>::kOneWord ? 1024 / LT : 768 / LT;
};

/// Runs f(c, e, entry) for this block's listed chunks c = blockIdx.x, blockIdx.x + gridDim.x, ...
/// that have an owner e, loading the next chunk's entry and the owner of the one after while f
/// runs, so those two dependent round trips overlap f's work. Every thread of the block calls.
template <typename S, typename F> WARPKIT_DEVICE void forListedChunks(const SegList<S>& list, F f) {
    const long long chunks = segListChunks(list), step = gridDim.x;
    int owner = segmentOwnerAt(list, blockIdx.x + step, chunks);
    SegChunkRef cur = segmentChunkRef(list, segmentOwnerAt(list, blockIdx.x, chunks));
    for (long long c = blockIdx.x; c < chunks; c += step) {
        const SegChunkRef next = segmentChunkRef(list, owner);
        owner = segmentOwnerAt(list, c + 2 * step, chunks);
        if (cur.e >= 0) f(c, cur.e, cur.en);
        cur = next;
    }
}

/// Stage 2: the listed chunks' partials; the last chunk of a pair to finish forms its total.
template <int LT, typename A> __global__ void __launch_bounds__(LT, SegChunkMinBlocks<LT, A>::value)
    segmentChunkKernel(A a, int heads, long long chunkRows, SegList<typename A::State> list) {
    WARPKIT_CHECK_SEGMENT_ALGO(A, "segmentChunkKernel");
    pdlWait(); // the list of the kernel before (no-room or direct: segmentLaunch)
    forListedChunks(list, [&](long long c, int e, const SegEntry& en) {
        segmentChunkFold<LT>(a, heads, chunkRows, list, c, e, en);
    });
}

/// The staged chunk kernel's pieces: kSegPieceRows rows a thread (two 16-byte copies), kSegStages
/// pieces in shared memory, so that kSegStages - 1 pieces are in flight while one is folded.
constexpr int kSegPieceRows = 8, kSegStages = 4;

/// What the staged chunk kernel's producer needs of a chunk's entry e (e < 0: none).
struct SegChunkRows {
    int e;
    long long begin, rows, base;
};
template <typename S> WARPKIT_DEVICE SegChunkRows segChunkRows(const SegList<S>& l, int e) {
    SegChunkRows r{e, 0, 0, 0};
    if (e >= 0) {
        r.begin = l.entries[e].begin;
        r.rows = l.entries[e].rows;
        r.base = l.entries[e].chunkBase;
    }
    return r;
}

/// A staged piece: rows [row0, row0 + n) of entry e's pair (e == -1: no piece, the block is done),
/// part of chunk c; row row0 + i sits at slot mis + i of its stage; `last` when it ends the chunk.
struct SegPiece {
    long long c, row0;
    int e, n, mis, last;
};

/// A pair of one chunk: segmentChunkFold's block tree over thread 0's partial `part`, by warp 0
/// alone with no barrier (each other warp's value is the tree of 32 identities): the same bits, and
/// the other warps need not wait. The threads of warp 0 call; thread 0 gets the pair's total.
template <int LT, typename A> WARPKIT_DEVICE typename A::State segOneChunkTotal(const A& a, typename A::State part) {
    using S = typename A::State;
    const S id = a.identity(), ids = warpTree(a, id);
    const S t0 = warpTree(a, threadIdx.x == 0 ? a.merge(id, part) : id);
    return warpTree(a, threadIdx.x == 0 ? t0 : (threadIdx.x < LT / 32 ? ids : id));
}

/// Stage 2 for one head (SegChunkStaged, sm_80 and newer): the same chunks, folds and bits as
/// segmentChunkKernel, the rows brought to shared memory by 16-byte cp.async (4-byte ones for the
/// run's unaligned ends) in pieces of kSegPieceRows x LT rows, kSegStages - 1 pieces ahead across
/// the block's chunks, so the loads of the next pieces (of this chunk or the next) are in flight
/// during a piece's fold and a chunk's block tree. Thread t folds rows t, t + LT, ... of each piece
/// in order from the stage, so thread t of a chunk folds the rows foldRows gives it, in its order.
/// Before sm_80: segmentChunkKernel's body.
template <int LT, typename A> __global__ void __launch_bounds__(LT, SegChunkMinBlocks<LT, A>::value)
    segmentChunkStagedKernel(A a, long long chunkRows, SegList<typename A::State> list) {
    WARPKIT_CHECK_SEGMENT_ALGO(A, "segmentChunkStagedKernel");
    static_assert(SegChunkStaged<A>::value, "segmentChunkStagedKernel: A must read one array of 4-byte elements");
    pdlWait(); // the list of the kernel before (no-room or direct: segmentLaunch)
#if WARPKIT_ARCH >= 800
    using S = typename A::State;
    using T = typename A::Elem;
    constexpr int PR = kSegPieceRows * LT;
    __shared__ alignas(16) T stage[kSegStages][PR + 4];
    __shared__ SegPiece piece[kSegStages];
    const T* src = segStageSource(a);
    // the producer: chunk c, rows [r, r1) of its pair from element `base` still to stage; the next
    // chunk's entry and the owner of the one after loaded a chunk ahead (forListedChunks' order);
    // one head, so a pair's chunks are consecutive in the list
    const long long step = gridDim.x, chunks = segListChunks(list);
    long long c = blockIdx.x, r = 0, r1 = 0, base = 0;
    SegChunkRows cur = segChunkRows(list, segmentOwnerAt(list, c, chunks));
    SegChunkRows next = segChunkRows(list, segmentOwnerAt(list, c + step, chunks));
    int owner = segmentOwnerAt(list, c + 2 * step, chunks);
    auto chunkRowsOf = [&] { // the rows of chunk c, none past the list or without an owner
        r = c < chunks && cur.e >= 0 ? (c - cur.base) * chunkRows : 0;
        r1 = c < chunks && cur.e >= 0 ? (r + chunkRows < cur.rows ? r + chunkRows : cur.rows) : 0;
        base = cur.begin;
    };
    chunkRowsOf();
    auto issue = [&](int k) { // the next piece into stage k, then one group (empty when done)
        while (r >= r1 && c < chunks) {
            c += step;
            cur = next;
            next = segChunkRows(list, owner);
            owner = segmentOwnerAt(list, c + 2 * step, chunks);
            chunkRowsOf();
        }
        if (r < r1) {
            const int n = r1 - r < PR ? (int)(r1 - r) : PR;
            const T* q = src + base + r;
            const int mis = (int)((reinterpret_cast<size_t>(q) / sizeof(T)) & 3u), vecs = (mis + n + 3) / 4;
            T* b = stage[k];
            for (int j = (int)threadIdx.x; j < vecs; j += LT) {
                const int lo = 4 * j - mis; // the vector's first row, relative to r
                if (lo >= 0 && lo + 4 <= n) asyncCopy16(b + 4 * j, q + lo);
                else
                    for (int i = lo < 0 ? 0 : lo; i < lo + 4 && i < n; ++i) asyncCopy4(b + mis + i, q + i);
            }
            if (threadIdx.x == 0) piece[k] = SegPiece{c, r, cur.e, n, mis, r + n >= r1};
            r += n;
        } else if (threadIdx.x == 0) {
            piece[k].e = -1;
        }
        asyncCopyCommit();
    };
#pragma unroll 1
    for (int k = 0; k < kSegStages - 1; ++k) issue(k);
    S acc = a.identity();
#pragma unroll 1
    for (int k = 0;; k = k + 1 < kSegStages ? k + 1 : 0) {
        asyncCopyWait(kSegStages - 2);
        __syncthreads(); // stage k is visible, and every thread is past stage k - 1's reads
        const SegPiece& p = piece[k];
        if (p.e < 0) break;
        issue(k == 0 ? kSegStages - 1 : k - 1);
        const T* b = stage[k] + p.mis;
        const int n = p.n;
        const long long row0 = p.row0;
        SegEntry en{}; // the entry of the chunk this piece ends, loaded during the fold
        if (p.last) en = list.entries[p.e];
#pragma unroll
        for (int j = 0; j < kSegPieceRows; ++j) {
            const int i = (int)threadIdx.x + j * LT;
            if (i < n) acc = a.take(acc, b[i], row0 + i);
        }
        if (p.last) {
            const S part = blockTree<LT>(a, acc);
            acc = a.identity();
            if (en.rows > chunkRows) {
                segmentChunkJoin<LT>(a, list, p.c, p.e, en, segCeilDiv(en.rows, chunkRows), part);
            } else if (threadIdx.x < 32) { // a pair of one chunk: the other warps go on to the next piece
                const S total = segOneChunkTotal<LT>(a, part);
                if (threadIdx.x == 0) {
                    a.finish(en.pair, total);
                    list.totals[p.e] = total;
                }
            }
        }
    }
#else
    forListedChunks(
        list, [&](long long c, int e, const SegEntry& en) { segmentChunkFold<LT>(a, 1, chunkRows, list, c, e, en); });
#endif
}

/// The write kernel's loads in flight a thread: 8 for the plain fp32 softmax (64 registers, 1024
/// threads an SM: 1.6x the bytes in flight of 4 at 48 registers and 1280 threads), else 4 (the log
/// kinds and the 16-bit backward spill at 64, the 16-bit softmax takes 98 registers at 8).
template <typename A> struct SegWriteBatch { static constexpr int value = 4; };
template <int Kind> struct SegWriteBatch<SegSoftmaxAlgo<float, Kind>> {
    static constexpr int value = (Kind & SoftmaxLog) ? 4 : 8;
};

/// Stage 3 (two-pass algorithms): the listed chunks' outputs from their pairs' totals.
template <int LT, typename A> __global__ void __launch_bounds__(LT, SegWriteBatch<A>::value == 8 ? 1024 / LT : 1)
    segmentWriteKernel(A a, int heads, long long chunkRows, SegList<typename A::State> list) {
    WARPKIT_CHECK_SEGMENT_ALGO(A, "segmentWriteKernel");
    if constexpr (A::kTwoPass) {
        forListedChunks(list, [&](long long c, int e, const SegEntry& en) {
            const long long r0 = segmentChunkIndex(c, en) * chunkRows;
            const long long r1 = r0 + chunkRows < en.rows ? r0 + chunkRows : en.rows;
            writeRows<A, SegWriteBatch<A>::value>(a, a.prepare(loadFromL2(list.totals + e)), en.begin, en.head, heads,
                                                  r0 + threadIdx.x, r1, LT);
        });
    }
}

/// Entry e of the list's first `entries` for the block kernel: its stride (0: a block-tier segment)
/// and, for a block-tier one only, its begin and rows (a listed pair that found no room for its
/// chunks wrote only its stride); e past them: stride 1.
template <typename S> WARPKIT_DEVICE SegEntry segBlockEntry(const SegList<S>& l, long long e, long long entries) {
    SegEntry en{};
    en.stride = e < entries ? l.entries[e].stride : 1;
    if (en.stride == 0) {
        en.begin = l.entries[e].begin;
        en.rows = l.entries[e].rows;
    }
    return en;
}

/// A ticket from `counter` below `limit`, or `limit` once a plain read shows them all taken: the
/// counter only grows, so a read at or past the limit is final, and a grid that finds little or
/// nothing listed skips most of its atomics on one address (each block took two or four of them).
/// One thread calls.
WARPKIT_DEVICE long long segTicket(unsigned long long* counter, long long limit) {
    if (*(volatile unsigned long long*)counter >= (unsigned long long)limit) return limit;
    return (long long)atomicAdd(counter, 1ull);
}

/// Stage 4 (the softmax, when segments can be long): the block tier (segment_block.cuh), the list's
/// block-tier entries one segment a block at a time, taken in turn (counter[3]); the next segment's
/// first lines are started toward L2 while this one runs. Then the slice tier (segment_slice.cuh):
/// the slice tickets, taken in turn (counter[5]: every segment's A items, then the B items); the
/// next ticket's owner and entry are loaded and its window started toward L2 once this one's loads
/// are in flight, so those two dependent round trips overlap the window's.
template <int BT, typename A> __global__ void __launch_bounds__(BT, 2)
    segmentBlockKernel(A a, int heads, int sliceGroup, SegList<typename A::State> list) {
    WARPKIT_CHECK_SEGMENT_ALGO(A, "segmentBlockKernel");
    if constexpr (SegBlockSoftmax<A>::value) {
        __shared__ float red[2][BT / 32][4][8];
        __shared__ long long taken[2];
        pdlWait(); // the kernel that listed (launched programmatically behind it under G10)
        const unsigned long long listed = list.counter[0];
        const long long entries = listed < (unsigned long long)list.maxEntries ? (long long)listed : list.maxEntries;
        if (threadIdx.x == 0) {
            taken[0] = segTicket(list.counter + 3, entries);
            taken[1] = segTicket(list.counter + 3, entries);
        }
        __syncthreads();
        long long cur = taken[0], next = taken[1];
        SegEntry en = segBlockEntry(list, cur, entries);
        while (cur < entries) {
            __syncthreads(); // every thread has read `taken` before it changes
            if (threadIdx.x == 0) taken[0] = segTicket(list.counter + 3, entries);
            const SegEntry nx = segBlockEntry(list, next, entries); // a segment ahead
            // its first 128 bytes a thread toward L2, once this segment's first loads are issued
            auto ahead = [&] {
                const long long bytes = nx.stride == 0 ? nx.rows * heads * (long long)sizeof(typename A::Elem) : 0;
                if ((long long)threadIdx.x * 128 < bytes)
                    prefetchL2(reinterpret_cast<const char*>(a.x + nx.begin * heads) + threadIdx.x * 128);
            };
            if (en.stride == 0) segBlockSoftmax<BT>(a, en.begin, (int)en.rows, heads, red, ahead);
            else ahead();
            __syncthreads(); // taken[0] is visible
            cur = next;
            next = taken[0];
            en = nx;
        }
        if (sliceGroup <= 0) return;
        const int lg = segLog2((unsigned)sliceGroup);
        const unsigned long long handed = list.counter[4];
        const long long slots = handed < (unsigned long long)list.maxSlots ? (long long)handed : list.maxSlots;
        __syncthreads(); // every thread has read `taken`
        if (threadIdx.x == 0) {
            taken[0] = segTicket(list.counter + 5, 2 * slots);
            taken[1] = segTicket(list.counter + 5, 2 * slots);
        }
        __syncthreads();
        cur = taken[0];
        next = taken[1];
        SegSliceRef r = segSliceRef(list, cur, slots);
        while (cur < 2 * slots) {
            // the ticket after next: thread 0 stores it only once this ticket is done, so that its
            // round trip does not hold up warp 0's window loads
            const long long after = threadIdx.x == 0 ? segTicket(list.counter + 5, 2 * slots) : 0;
            SegSliceRef nr{};
            auto ahead = [&] { // the next ticket (two dependent loads) and its window toward L2
                nr = segSliceRef(list, next, slots);
                if (nr.e >= 0) segSlicePrefetch(segSliceGeom(a, nr.en, heads, lg), nr.k);
            };
            if (r.e >= 0)
                segSliceItem<BT>(a, list, r.e, segSliceGeom(a, r.en, heads, lg), r.k, cur >= slots, heads, red,
                                 ahead); // B items from ticket `slots` on (segSliceRef)
            else ahead();
            __syncthreads(); // every thread has read `taken` before it changes
            if (threadIdx.x == 0) taken[0] = after;
            __syncthreads(); // taken[0] is visible
            cur = next;
            next = taken[0];
            r = nr;
        }
    }
}

/// Stage 4's launch (the softmax): the block kernel over the list's block-tier entries and slice
/// tickets (room for `entries` entries and `slots` slots: two tickets a slot), programmatically
/// behind the kernel before where `programmatic` and pdlAllowed (G10's team kernel), else plainly.
/// Host.
template <typename A> inline cudaError_t segmentBlockLaunch(const A& a, int heads, int sliceGroup, long long entries,
                                                            long long slots, const SegList<typename A::State>& list,
                                                            int dev, int cc, bool programmatic, cudaStream_t stream) {
    auto block = segmentBlockKernel<kSegBlockThreads, A>;
    const long long work = entries > 2 * slots ? entries : 2 * slots;
    int blocks = 0;
    bool early = false;
    WARPKIT_TRY(gridBlocks(block, kSegBlockThreads, work, 1, 1ll << 30, &blocks));
    if (programmatic) WARPKIT_TRY(pdlAllowed(block, dev, cc, &early));
    return pdlLaunch(block, dim3((unsigned)blocks), dim3(kSegBlockThreads), stream, early, a, heads, sliceGroup, list);
}

} // namespace detail
} // namespace warpkit
