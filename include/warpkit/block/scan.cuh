// warpkit/block/scan.cuh: block scans.
//
// Block scans: every thread of a block contributes one value, in linear thread order
// x + Dx*(y + Dy*z). Any block shape: 1 to 1024 threads, partial last warp, 1-D/2-D/3-D.
// BlockThreads, participation, scratch (BlockReduceScratch<T, BlockThreads>, declared by the
// function when you pass none), back-to-back safety, WARPKIT_DEBUG traps and types are exactly as
// for the block reductions in reduce.cuh. EVERY thread of the block must call.
//
// Every thread gets its own prefix:
//   inclusive: thread i gets x0 op ... op xi;
//   exclusive: thread 0 gets init, thread i gets init op x0 op ... op x(i-1);
//   `total`  : every thread also gets x0 op ... op x(n-1) (init NOT included);
//   running  : the ...Running forms take `running` (the prefix of everything before this tile),
//              seed the scan with it, and on return every thread holds running op total: the
//              carry for the next tile, so a tile loop needs no other bookkeeping.
// Named forms blockInclusive/ExclusiveSum/Max/Min use the identity as init (0, lowest, highest);
// 16-bit floats are scanned in float and each output rounded once; Max/Min propagate NaN.
// Cost: one warp scan, two barriers (three with a partial last warp), one shared store per warp,
// one shared load and a log2(warps)-step warp scan of the warp totals per warp.

#pragma once

#include "../warp/scan.cuh"
#include "reduce.cuh"

namespace warpkit {
namespace detail {

/// What a block scan hands each thread: its in-warp inclusive prefix, the combined totals of
/// the warps before its own (when it has any), and the block total.
template <typename A> struct BlockScanParts {
    A incl, warpPrefix, total;
    bool hasPrefix;
};

/// Inclusive scan of the `nw` warp totals in slots[0..nw) by one full warp; lane j gets slots 0..j.
template <int BlockThreads, typename A, typename Op>
WARPKIT_DEVICE A blockSlotScan(const A* slots, int nw, Op op) {
    const int lane = (int)laneId();
    if constexpr (BlockThreads > 0) {
        constexpr int NW = BlockShape<BlockThreads>::warps;
        constexpr int P = BlockShape<BlockThreads>::slotLanes;
        const int s = lane & (P - 1);
        return warpInclusiveScan<P>(slots[s < NW ? s : NW - 1], op);
    } else {
        return warpInclusiveScan<32>(slots[lane < nw ? lane : nw - 1], op);
    }
}

template <int BlockThreads, typename A, typename Op>
WARPKIT_DEVICE BlockScanParts<A> blockScanCore(A v, Op op, A* slots) {
    BlockScanParts<A> r;
    const int n = blockThreads<BlockThreads>();
    const int tid = (int)linearThreadId();
    const int warp = tid >> 5, lane = tid & 31;
    // Shuffle-up scans read only lower lanes, so a partial last warp never reads a missing lane.
    r.incl = warpInclusiveScan<32>(v, op);
    r.hasPrefix = false;
    r.warpPrefix = r.incl;
    const int lastLane = (n - (tid & ~31)) < 32 ? n - 1 - (tid & ~31) : 31; // last lane of my warp
    if constexpr (BlockThreads > 0 && BlockThreads <= 32) {
#if defined(WARPKIT_DEBUG)
        blockEntryBarrier<BlockThreads>(n);
#endif
        r.total = shflIdx(r.incl, lastLane);
        return r;
    } else {
        if constexpr (BlockThreads == 0) {
            if (n <= 32) { r.total = shflIdx(r.incl, lastLane); return r; }
        }
        const int nw = BlockThreads > 0 ? BlockShape<BlockThreads>::warps : (n + 31) >> 5;
        blockEntryBarrier<BlockThreads>(n); // previous call's reads of `slots` are finished
        if (lane == lastLane) slots[warp] = r.incl;
        __syncthreads();
        r.hasPrefix = warp > 0;
        if (!BlockShape<BlockThreads>::maybePartial || (n & 31) == 0) {
            const A s = blockSlotScan<BlockThreads>(slots, nw, op);
            r.warpPrefix = shflIdx(s, warp > 0 ? warp - 1 : 0);
            r.total = shflIdx(s, nw - 1);
        } else {
            // A partial last warp may have fewer lanes than there are warps: warp 0 hands it
            // the prefix of the full warps through slot nw.
            const bool partial = warp == nw - 1;
            if (!partial) {
                const A s = blockSlotScan<BlockThreads>(slots, nw, op);
                r.warpPrefix = shflIdx(s, warp > 0 ? warp - 1 : 0);
                r.total = shflIdx(s, nw - 1);
                const A p = shflIdx(s, nw - 2);
                if (tid == 0) slots[nw] = p;
            }
            __syncthreads();
            if (partial) {
                r.warpPrefix = slots[nw];
                r.total = op(r.warpPrefix, shflIdx(r.incl, lastLane));
            }
        }
        return r;
    }
}

/// Inclusive: seed (when HasSeed) op warp prefix op in-warp inclusive value.
template <bool HasSeed, typename A, typename Op>
WARPKIT_DEVICE A blockComposeInclusive(const BlockScanParts<A>& p, Op op, A seed) {
    if constexpr (HasSeed) {
        const A s = p.hasPrefix ? op(seed, p.warpPrefix) : seed;
        return op(s, p.incl);
    } else {
        return p.hasPrefix ? op(p.warpPrefix, p.incl) : p.incl;
    }
}

/// Exclusive: seed op warp prefix op (in-warp inclusive value of the lane below).
template <typename A, typename Op> WARPKIT_DEVICE A blockComposeExclusive(const BlockScanParts<A>& p, Op op, A seed) {
    const A below = shflUp(p.incl, 1);
    const A s = p.hasPrefix ? op(seed, p.warpPrefix) : seed;
    return laneId() == 0 ? s : op(s, below);
}

/// Kind: 0 inclusive, 1 inclusive seeded by `seed` (running), 2 exclusive seeded by `seed`.
template <int BlockThreads, int Kind, typename T, typename Op>
WARPKIT_DEVICE T blockScanDispatch(T v, Op op, T seed, T* total, unsigned char* bytes) {
    using A = typename BlockAcc<T, Op>::type;
    A a, s;
    if constexpr (BlockAcc<T, Op>::builtin) { a = Arith<T>::to_acc(v); s = Arith<T>::to_acc(seed); }
    else { a = v; s = seed; }
    const BlockScanParts<A> p = blockScanCore<BlockThreads>(a, op, reinterpret_cast<A*>(bytes));
    A out;
    if constexpr (Kind == 0) out = blockComposeInclusive<false>(p, op, s);
    else if constexpr (Kind == 1) out = blockComposeInclusive<true>(p, op, s);
    else out = blockComposeExclusive(p, op, s);
    if constexpr (BlockAcc<T, Op>::builtin) {
        if (total) *total = Arith<T>::from_acc(p.total);
        return Arith<T>::from_acc(out);
    } else {
        if (total) *total = p.total;
        return out;
    }
}

} // namespace detail

#define WARPKIT_DETAIL_BLOCK_SCAN_OK                                                      \
    (BlockThreads >= 0 && BlockThreads <= 1024 && detail::IsShufflable<T>::value)
#define WARPKIT_DETAIL_BLOCK_SCAN_CHECKS(fn)                                              \
    WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, fn);                                        \
    WARPKIT_CHECK_SHUFFLABLE(T, fn)

// ---- generic operator, caller scratch ----

/// Block inclusive scan: thread i gets x0 op ... op xi; `total` (every thread) gets the block's
/// total. Every thread of the block must call. T: any trivially copyable type; op: associative.
template <int BlockThreads = 0, typename T, typename Op>
WARPKIT_DEVICE T blockInclusiveScan(T v, Op op, T& total, BlockReduceScratch<T, BlockThreads>& scratch) {
    WARPKIT_DETAIL_BLOCK_SCAN_CHECKS("blockInclusiveScan");
    if constexpr (WARPKIT_DETAIL_BLOCK_SCAN_OK)
        return detail::blockScanDispatch<BlockThreads, 0>(v, op, v, &total, scratch.bytes);
    else return v;
}
/// Block exclusive scan seeded by `init`: thread 0 gets init, thread i init op x0 op ... op
/// x(i-1); `total` (every thread) gets x0 op ... op x(n-1), init not included. Every thread calls.
template <int BlockThreads = 0, typename T, typename Op>
WARPKIT_DEVICE T blockExclusiveScan(T v, Op op, T init, T& total, BlockReduceScratch<T, BlockThreads>& scratch) {
    WARPKIT_DETAIL_BLOCK_SCAN_CHECKS("blockExclusiveScan");
    if constexpr (WARPKIT_DETAIL_BLOCK_SCAN_OK)
        return detail::blockScanDispatch<BlockThreads, 2>(v, op, init, &total, scratch.bytes);
    else return v;
}
/// Tile step of an inclusive scan: thread i gets running op x0 op ... op xi; on return every
/// thread's `running` is running op (block total), the seed for the next tile. Every thread calls.
template <int BlockThreads = 0, typename T, typename Op>
WARPKIT_DEVICE T blockInclusiveScanRunning(T v, Op op, T& running, BlockReduceScratch<T, BlockThreads>& scratch) {
    WARPKIT_DETAIL_BLOCK_SCAN_CHECKS("blockInclusiveScanRunning");
    if constexpr (WARPKIT_DETAIL_BLOCK_SCAN_OK) {
        T total;
        const T r = detail::blockScanDispatch<BlockThreads, 1>(v, op, running, &total, scratch.bytes);
        running = op(running, total);
        return r;
    } else {
        return v;
    }
}
/// Tile step of an exclusive scan: thread i gets running op x0 op ... op x(i-1) (thread 0 gets
/// running); on return every thread's `running` is running op (block total). Every thread calls.
template <int BlockThreads = 0, typename T, typename Op>
WARPKIT_DEVICE T blockExclusiveScanRunning(T v, Op op, T& running, BlockReduceScratch<T, BlockThreads>& scratch) {
    WARPKIT_DETAIL_BLOCK_SCAN_CHECKS("blockExclusiveScanRunning");
    if constexpr (WARPKIT_DETAIL_BLOCK_SCAN_OK) {
        T total;
        const T r = detail::blockScanDispatch<BlockThreads, 2>(v, op, running, &total, scratch.bytes);
        running = op(running, total);
        return r;
    } else {
        return v;
    }
}

// ---- generic operator, own scratch ----

/// Block inclusive scan (see above) with the function's own __shared__ scratch.
template <int BlockThreads = 0, typename T, typename Op> WARPKIT_DEVICE T blockInclusiveScan(T v, Op op) {
    __shared__ BlockReduceScratch<T, BlockThreads> scratch;
    T total;
    return blockInclusiveScan<BlockThreads>(v, op, total, scratch);
}
/// Block inclusive scan with the block total in `total` (every thread).
template <int BlockThreads = 0, typename T, typename Op> WARPKIT_DEVICE T blockInclusiveScan(T v, Op op, T& total) {
    __shared__ BlockReduceScratch<T, BlockThreads> scratch;
    return blockInclusiveScan<BlockThreads>(v, op, total, scratch);
}
/// Block exclusive scan seeded by `init` (thread 0 gets init).
template <int BlockThreads = 0, typename T, typename Op> WARPKIT_DEVICE T blockExclusiveScan(T v, Op op, T init) {
    __shared__ BlockReduceScratch<T, BlockThreads> scratch;
    T total;
    return blockExclusiveScan<BlockThreads>(v, op, init, total, scratch);
}
/// Block exclusive scan seeded by `init`, with the block total (init not included) in `total`.
template <int BlockThreads = 0, typename T, typename Op>
WARPKIT_DEVICE T blockExclusiveScan(T v, Op op, T init, T& total) {
    __shared__ BlockReduceScratch<T, BlockThreads> scratch;
    return blockExclusiveScan<BlockThreads>(v, op, init, total, scratch);
}
/// Tile step of an inclusive scan carrying `running` (see above), own scratch.
template <int BlockThreads = 0, typename T, typename Op>
WARPKIT_DEVICE T blockInclusiveScanRunning(T v, Op op, T& running) {
    __shared__ BlockReduceScratch<T, BlockThreads> scratch;
    return blockInclusiveScanRunning<BlockThreads>(v, op, running, scratch);
}
/// Tile step of an exclusive scan carrying `running` (see above), own scratch.
template <int BlockThreads = 0, typename T, typename Op>
WARPKIT_DEVICE T blockExclusiveScanRunning(T v, Op op, T& running) {
    __shared__ BlockReduceScratch<T, BlockThreads> scratch;
    return blockExclusiveScanRunning<BlockThreads>(v, op, running, scratch);
}

#undef WARPKIT_DETAIL_BLOCK_SCAN_OK
#undef WARPKIT_DETAIL_BLOCK_SCAN_CHECKS

// ---- named block scans ----
// blockInclusiveX<BlockThreads>(v[, total]) and blockExclusiveX<BlockThreads>(v[, total]) for
// X = Sum, Max, Min (exclusive init = the identity: 0, lowest / -inf, highest / +inf), and
// blockInclusiveSumRunning / blockExclusiveSumRunning(v, running) for tile loops. Every thread
// of the block must call; every thread gets its own prefix (and the total).

#define WARPKIT_DETAIL_BLOCK_NAMED_SCAN(NAME, OP)                                                      \
    template <int BlockThreads = 0, typename T> WARPKIT_DEVICE T blockInclusive##NAME(T v) {           \
        WARPKIT_CHECK_ARITH_TYPE(T, "blockInclusive" #NAME);                                           \
        WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockInclusive" #NAME);                             \
        return blockInclusiveScan<BlockThreads>(v, OP{});                                              \
    }                                                                                                  \
    template <int BlockThreads = 0, typename T> WARPKIT_DEVICE T blockInclusive##NAME(T v, T& total) { \
        WARPKIT_CHECK_ARITH_TYPE(T, "blockInclusive" #NAME);                                           \
        WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockInclusive" #NAME);                             \
        return blockInclusiveScan<BlockThreads>(v, OP{}, total);                                       \
    }                                                                                                  \
    template <int BlockThreads = 0, typename T> WARPKIT_DEVICE T blockExclusive##NAME(T v) {           \
        WARPKIT_CHECK_ARITH_TYPE(T, "blockExclusive" #NAME);                                           \
        WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockExclusive" #NAME);                             \
        return blockExclusiveScan<BlockThreads>(v, OP{}, detail::blockScanInit<OP, T>());              \
    }                                                                                                  \
    template <int BlockThreads = 0, typename T> WARPKIT_DEVICE T blockExclusive##NAME(T v, T& total) { \
        WARPKIT_CHECK_ARITH_TYPE(T, "blockExclusive" #NAME);                                           \
        WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockExclusive" #NAME);                             \
        return blockExclusiveScan<BlockThreads>(v, OP{}, detail::blockScanInit<OP, T>(), total);       \
    }

namespace detail {
/// Init of the named exclusive scans: 0 (+0 for floats), lowest, highest.
template <typename Op, typename T> WARPKIT_DEVICE T blockScanInit() {
    if constexpr (!Arith<T>::supported) return T{};
    else if constexpr (IsSame<Op, Sum>::value) return Arith<T>::from_acc(typename Arith<T>::Acc(0));
    else return Arith<T>::from_acc(Identity<Op, typename Arith<T>::Acc>::value());
}
} // namespace detail

/// Block prefix sums.
WARPKIT_DETAIL_BLOCK_NAMED_SCAN(Sum, Sum)
/// Block prefix maxima; NaN from the first NaN on.
WARPKIT_DETAIL_BLOCK_NAMED_SCAN(Max, Max)
/// Block prefix minima; NaN from the first NaN on.
WARPKIT_DETAIL_BLOCK_NAMED_SCAN(Min, Min)
#undef WARPKIT_DETAIL_BLOCK_NAMED_SCAN

// ---- packed 16-bit pairs ----
// blockInclusiveX<BlockThreads>(P v) and blockExclusiveX<BlockThreads>(P v) for P = __half2 and
// __nv_bfloat162, X = Sum, Max, Min: lane-wise scans (the .x halves and the .y halves apart) in
// float2, each output rounded once (see warp/packed.cuh); exclusive: thread 0 gets the identity.
// Every thread of the block must call; every thread gets its own prefix.
#define WARPKIT_DETAIL_BLOCK_PACKED_SCAN(P, OP)                                                                     \
    template <int BlockThreads = 0> WARPKIT_DEVICE P blockInclusive##OP(P v) {                                      \
        WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockInclusive" #OP);                                            \
        return detail::Packed16<P>::from_acc(                                                                       \
            blockInclusiveScan<BlockThreads>(detail::Packed16<P>::to_acc(v), typename detail::PairOf<OP>::Pair{})); \
    }                                                                                                               \
    template <int BlockThreads = 0> WARPKIT_DEVICE P blockExclusive##OP(P v) {                                      \
        WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockExclusive" #OP);                                            \
        return detail::Packed16<P>::from_acc(blockExclusiveScan<BlockThreads>(                                      \
            detail::Packed16<P>::to_acc(v), typename detail::PairOf<OP>::Pair{}, detail::PairOf<OP>::init()));      \
    }
/// Lane-wise block prefix sums, maxima and minima of __half2 and of __nv_bfloat162 pairs (every
/// thread of the block must call; every thread gets its own prefix).
WARPKIT_DETAIL_PACKED_OPS(WARPKIT_DETAIL_BLOCK_PACKED_SCAN, __half2)
WARPKIT_DETAIL_PACKED_OPS(WARPKIT_DETAIL_BLOCK_PACKED_SCAN, __nv_bfloat162)
#undef WARPKIT_DETAIL_BLOCK_PACKED_SCAN

/// Tile step of an inclusive prefix sum: thread i gets running + x0 + ... + xi; `running`
/// becomes running + (block total) in every thread. Every thread of the block must call.
template <int BlockThreads = 0, typename T> WARPKIT_DEVICE T blockInclusiveSumRunning(T v, T& running) {
    WARPKIT_CHECK_ARITH_TYPE(T, "blockInclusiveSumRunning");
    WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockInclusiveSumRunning");
    return blockInclusiveScanRunning<BlockThreads>(v, Sum{}, running);
}
/// Tile step of an exclusive prefix sum: thread i gets running + x0 + ... + x(i-1); `running`
/// becomes running + (block total) in every thread. Every thread of the block must call.
template <int BlockThreads = 0, typename T> WARPKIT_DEVICE T blockExclusiveSumRunning(T v, T& running) {
    WARPKIT_CHECK_ARITH_TYPE(T, "blockExclusiveSumRunning");
    WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockExclusiveSumRunning");
    return blockExclusiveScanRunning<BlockThreads>(v, Sum{}, running);
}

} // namespace warpkit
