// warpkit/scan.cuh: warp prefix scans over segments of any width (block scans at the end).
//
// Segments: as in reduce.cuh. A warp is split into segments of `Width` consecutive lanes
// (Width = 1..32, template parameter, default 32): lanes [k*Width, (k+1)*Width) form segment k;
// when Width does not divide 32 the last 32 % Width lanes form one shorter segment. Each segment
// scans on its own, in lane order (the lower lane's value is always the left operand), so the
// generic forms accept any associative operator, commutative or not.
//
// Participation: all 32 lanes of the warp must call together (converged). Every lane gets its
// own result. Forms with `T& total` also hand every lane the segment's total (the reduction of
// the segment's inputs, NOT including an exclusive scan's `init`), so no second reduction is
// needed to chain segments.
//
// Inclusive: lane i of a segment gets x0 op x1 op ... op xi.
// Exclusive: lane 0 of a segment gets `init`; lane i > 0 gets init op x0 op ... op x(i-1)
//   (init is a seed, as cub::WarpScan::ExclusiveScan). The named exclusive forms use the
//   identity (0 for Sum, lowest/-inf for Max, highest/+inf for Min), so lane 0 gets exactly that.
//
// Valid-lane forms, named with a `Valid` suffix (warpInclusiveScanValid, warpExclusiveSumValid, ...)
// and taking `int valid`: only the first `valid` lanes of each segment (1 <= valid; valid >= Width
// means the whole segment) contribute; inputs of later lanes are ignored (they may hold anything,
// NaN included). Lanes at positions >= valid get what they would get if their inputs were the
// identity: an inclusive scan hands them the total of the valid lanes, an exclusive scan hands
// them init op (total of the valid lanes). `total` is the valid lanes' total. (They have their own
// names because, for T = int, an overload `(v, int valid)` next to `(v, T& total)` would let a
// count held in an int variable silently bind to `total`.)
//
// Types of the named forms (Sum/Max/Min): int, unsigned, long long, unsigned long long, float,
// double, __half, __nv_bfloat16. __half and __nv_bfloat16 are scanned in float and each output is
// rounded once. Integer sums wrap (two's complement). The generic forms take any trivially
// copyable T and any associative `T op(T, T)`.
//
// NaN: Max and Min scans propagate NaN: from the first NaN on, every inclusive prefix is NaN.
// Sum follows IEEE.
//
// Cost: a scan over Width lanes takes ceil(log2(Width)) shuffle-up steps (__shfl_up_sync through
// detail::shflUp); `total` adds one shuffle, an exclusive scan one more, a valid-lane form of a
// generic operator one more. A float sum over a power-of-two Width uses exactly log2(Width)
// shuffles and no local memory.
#pragma once

#include "ops.cuh"
#include "detail/shfl.cuh"

namespace warpkit {
namespace detail {

/// Position of this lane in its segment.
template <int Width> WARPKIT_DEVICE int segLane() {
    if constexpr (isPow2(Width)) return (int)(laneId() & (Width - 1));
    else return (int)(laneId() % Width);
}

/// Lane (0..31) of the last lane of this lane's segment.
template <int Width> WARPKIT_DEVICE int segLastLane() {
    if constexpr (isPow2(Width)) {
        return (int)(laneId() | (Width - 1));
    } else {
        const int start = (int)laneId() - segLane<Width>();
        return start + Width <= 32 ? start + Width - 1 : 31;
    }
}

/// Broadcast lane `src` (an absolute lane 0..31 inside this lane's segment) to the segment.
template <int Width, typename T> WARPKIT_DEVICE T segBroadcast(T v, int src) {
    if constexpr (isPow2(Width)) return shflIdx(v, src & (Width - 1), Width);
    else return shflIdx(v, src);
}

/// Inclusive scan over each segment, every lane contributing (Hillis-Steele on shfl.up).
template <int Width, typename T, typename Op> WARPKIT_DEVICE T inclusiveFull(T v, Op op) {
    if constexpr (Width > 1) {
        const int slane = segLane<Width>();
#pragma unroll
        for (int o = 1; o < Width; o <<= 1) {
            // Power-of-two Width: the shuffle's own width keeps reads inside the segment.
            // Otherwise read across the warp and keep only lanes whose source is in the segment.
            T other = shflUp(v, o, isPow2(Width) ? Width : 32);
            if (slane >= o) v = op(other, v);
        }
    }
    return v;
}

/// Shift an inclusive scan up by one lane within the segment; lane 0 of a segment gets `init`,
/// the others init op (their left neighbour's inclusive value), or that value alone if !Seed.
template <int Width, bool Seed, typename T, typename Op>
WARPKIT_DEVICE T exclusiveFromInclusive(T incl, Op op, T init) {
    if constexpr (Width == 1) {
        return init;
    } else {
        T up = shflUp(incl, 1, isPow2(Width) ? Width : 32);
        if constexpr (Seed) up = op(init, up);
        return segLane<Width>() == 0 ? init : up;
    }
}

/// Generic scan driver. Returns the inclusive scan; fills `total` when WantTotal.
/// Valid: lanes past `valid` are replaced by the valid lanes' total after the scan.
template <int Width, bool WantTotal, bool Valid, typename T, typename Op>
WARPKIT_DEVICE T inclusiveGeneric(T v, Op op, int valid, T& total) {
    T incl = inclusiveFull<Width>(v, op);
    if constexpr (Valid) {
        WARPKIT_DEBUG_CHECK(valid >= 1, "warpkit scan: valid lane count must be at least 1");
        const int slane = segLane<Width>();
        const int last = segLastLane<Width>();
        const int lastValid = (int)laneId() - slane + valid - 1;
        const T t = segBroadcast<Width>(incl, lastValid < last ? lastValid : last);
        if (slane >= valid) incl = t;
        if constexpr (WantTotal) total = t;
    } else if constexpr (WantTotal) {
        total = Width == 1 ? incl : segBroadcast<Width>(incl, segLastLane<Width>());
    }
    return incl;
}

/// Built-in Sum/Max/Min on a supported type: inclusive scan in the accumulation type (float
/// for 16-bit floats); lanes past `valid` contribute the identity, so they need no extra shuffle.
template <int Width, typename Op, bool WantTotal, bool Valid, typename T>
WARPKIT_DEVICE typename Arith<T>::Acc inclusiveAcc(T v, int valid, T& total) {
    using Acc = typename Arith<T>::Acc;
    Acc a = Arith<T>::to_acc(v);
    if constexpr (Valid) {
        WARPKIT_DEBUG_CHECK(valid >= 1, "warpkit scan: valid lane count must be at least 1");
        if (segLane<Width>() >= valid) a = Identity<Op, Acc>::value();
    }
    Acc incl = inclusiveFull<Width>(a, Op{});
    if constexpr (WantTotal)
        total = Arith<T>::from_acc(Width == 1 ? incl : segBroadcast<Width>(incl, segLastLane<Width>()));
    return incl;
}

template <int Width, typename Op, bool WantTotal, bool Valid, typename T>
WARPKIT_DEVICE T inclusiveBuiltin(T v, int valid, T& total) {
    return Arith<T>::from_acc(inclusiveAcc<Width, Op, WantTotal, Valid>(v, valid, total));
}

/// Built-in exclusive scan with the identity as init (no seeding op needed).
template <int Width, typename Op, bool WantTotal, bool Valid, typename T>
WARPKIT_DEVICE T exclusiveBuiltin(T v, int valid, T& total) {
    using Acc = typename Arith<T>::Acc;
    const Acc incl = inclusiveAcc<Width, Op, WantTotal, Valid>(v, valid, total);
    Acc id = Identity<Op, Acc>::value();
    if constexpr (IsSame<Op, Sum>::value && Arith<T>::is_float) id = Acc(0); // lane 0 gets +0
    return Arith<T>::from_acc(exclusiveFromInclusive<Width, false>(incl, Op{}, id));
}

template <typename Op, typename T> struct UseBuiltinScan {
    static constexpr bool value = (IsSame<Op, Sum>::value || IsSame<Op, Max>::value ||
                                   IsSame<Op, Min>::value) && Arith<T>::supported;
};

template <int Width, bool WantTotal, bool Valid, typename T, typename Op>
WARPKIT_DEVICE T inclusiveDispatch(T v, Op op, int valid, T& total) {
    if constexpr (UseBuiltinScan<Op, T>::value) return inclusiveBuiltin<Width, Op, WantTotal, Valid>(v, valid, total);
    else return inclusiveGeneric<Width, WantTotal, Valid>(v, op, valid, total);
}

template <int Width, bool WantTotal, bool Valid, typename T, typename Op>
WARPKIT_DEVICE T exclusiveDispatch(T v, Op op, T init, int valid, T& total) {
    if constexpr (UseBuiltinScan<Op, T>::value) {
        // Built-in operator with an arbitrary init: scan in Acc, seed in Acc, round once.
        const auto incl = inclusiveAcc<Width, Op, WantTotal, Valid>(v, valid, total);
        return Arith<T>::from_acc(exclusiveFromInclusive<Width, true>(incl, Op{}, Arith<T>::to_acc(init)));
    } else {
        T incl = inclusiveGeneric<Width, WantTotal, Valid>(v, op, valid, total);
        return exclusiveFromInclusive<Width, true>(incl, op, init);
    }
}

} // namespace detail

#define WARPKIT_DETAIL_SCAN_CHECKS(fn)                                                    \
    WARPKIT_CHECK_WIDTH(Width, fn);                                                       \
    WARPKIT_CHECK_SHUFFLABLE(T, fn)
#define WARPKIT_DETAIL_SCAN_OK (Width >= 1 && Width <= 32 && detail::IsShufflable<T>::value)

// ---- generic operator ----------------------------------------------------------------------

/// Inclusive scan of `v` with `op` over each segment of Width lanes (1..32). All 32 lanes must
/// call; every lane gets x0 op ... op x(own position). T: any trivially copyable type; op:
/// associative (need not be commutative). Sum/Max/Min on arithmetic types take the fast path.
template <int Width = 32, typename T, typename Op> WARPKIT_DEVICE T warpInclusiveScan(T v, Op op) {
    WARPKIT_DETAIL_SCAN_CHECKS("warpInclusiveScan");
    T unused;
    if constexpr (WARPKIT_DETAIL_SCAN_OK) return detail::inclusiveDispatch<Width, false, false>(v, op, 32, unused);
    else return v;
}
/// warpInclusiveScan that also gives every lane its segment's total in `total`.
template <int Width = 32, typename T, typename Op> WARPKIT_DEVICE T warpInclusiveScan(T v, Op op, T& total) {
    WARPKIT_DETAIL_SCAN_CHECKS("warpInclusiveScan");
    if constexpr (WARPKIT_DETAIL_SCAN_OK) return detail::inclusiveDispatch<Width, true, false>(v, op, 32, total);
    else return v;
}
/// warpInclusiveScan over the first `valid` (>= 1) lanes of each segment; later lanes' inputs
/// are ignored and they get the valid lanes' total. All 32 lanes must call.
template <int Width = 32, typename T, typename Op> WARPKIT_DEVICE T warpInclusiveScanValid(T v, Op op, int valid) {
    WARPKIT_DETAIL_SCAN_CHECKS("warpInclusiveScanValid");
    T unused;
    if constexpr (WARPKIT_DETAIL_SCAN_OK) return detail::inclusiveDispatch<Width, false, true>(v, op, valid, unused);
    else return v;
}
/// warpInclusiveScanValid with the valid lanes' total in `total` (every lane).
template <int Width = 32, typename T, typename Op>
WARPKIT_DEVICE T warpInclusiveScanValid(T v, Op op, int valid, T& total) {
    WARPKIT_DETAIL_SCAN_CHECKS("warpInclusiveScanValid");
    if constexpr (WARPKIT_DETAIL_SCAN_OK) return detail::inclusiveDispatch<Width, true, true>(v, op, valid, total);
    else return v;
}

/// Exclusive scan of `v` with `op` seeded by `init` over each segment. All 32 lanes must call;
/// lane 0 of a segment gets init, lane i gets init op x0 op ... op x(i-1).
template <int Width = 32, typename T, typename Op> WARPKIT_DEVICE T warpExclusiveScan(T v, Op op, T init) {
    WARPKIT_DETAIL_SCAN_CHECKS("warpExclusiveScan");
    T unused;
    if constexpr (WARPKIT_DETAIL_SCAN_OK) return detail::exclusiveDispatch<Width, false, false>(v, op, init, 32, unused);
    else return v;
}
/// warpExclusiveScan that also gives every lane the segment's total (init not included).
template <int Width = 32, typename T, typename Op>
WARPKIT_DEVICE T warpExclusiveScan(T v, Op op, T init, T& total) {
    WARPKIT_DETAIL_SCAN_CHECKS("warpExclusiveScan");
    if constexpr (WARPKIT_DETAIL_SCAN_OK) return detail::exclusiveDispatch<Width, true, false>(v, op, init, 32, total);
    else return v;
}
/// warpExclusiveScan over the first `valid` (>= 1) lanes of each segment; lanes at positions
/// >= valid get init op (the valid lanes' total). All 32 lanes must call.
template <int Width = 32, typename T, typename Op>
WARPKIT_DEVICE T warpExclusiveScanValid(T v, Op op, T init, int valid) {
    WARPKIT_DETAIL_SCAN_CHECKS("warpExclusiveScanValid");
    T unused;
    if constexpr (WARPKIT_DETAIL_SCAN_OK) return detail::exclusiveDispatch<Width, false, true>(v, op, init, valid, unused);
    else return v;
}
/// warpExclusiveScanValid with the valid lanes' total (init not included) in `total` (every lane).
template <int Width = 32, typename T, typename Op>
WARPKIT_DEVICE T warpExclusiveScanValid(T v, Op op, T init, int valid, T& total) {
    WARPKIT_DETAIL_SCAN_CHECKS("warpExclusiveScanValid");
    if constexpr (WARPKIT_DETAIL_SCAN_OK) return detail::exclusiveDispatch<Width, true, true>(v, op, init, valid, total);
    else return v;
}

#undef WARPKIT_DETAIL_SCAN_CHECKS
#undef WARPKIT_DETAIL_SCAN_OK

// ---- named scans ---------------------------------------------------------------------------
// warpInclusiveX<Width>(v[, total]), warpInclusiveXValid<Width>(v, valid[, total]) for X = Sum,
// Max, Min; warpExclusiveX<Width>(...) and warpExclusiveXValid<Width>(...) likewise, init = the identity (0 for Sum, the
// lowest value / -inf for Max, the highest / +inf for Min). All 32 lanes must call; every lane
// gets its own prefix (and the segment total). Types: see the header comment.

#define WARPKIT_DETAIL_NAMED_SCAN(KIND, IMPL, NAME, OP)                                          \
    template <int Width = 32, typename T> WARPKIT_DEVICE T warp##KIND##NAME(T v) {         \
        WARPKIT_CHECK_WIDTH(Width, "warp" #KIND #NAME);                                    \
        WARPKIT_CHECK_ARITH_TYPE(T, "warp" #KIND #NAME);                                   \
        T unused;                                                                          \
        if constexpr (Width >= 1 && Width <= 32 && detail::Arith<T>::supported)            \
            return detail::IMPL##Builtin<Width, OP, false, false>(v, 32, unused);          \
        else                                                                               \
            return v;                                                                      \
    }                                                                                      \
    template <int Width = 32, typename T> WARPKIT_DEVICE T warp##KIND##NAME(T v, T& total) { \
        WARPKIT_CHECK_WIDTH(Width, "warp" #KIND #NAME);                                    \
        WARPKIT_CHECK_ARITH_TYPE(T, "warp" #KIND #NAME);                                   \
        if constexpr (Width >= 1 && Width <= 32 && detail::Arith<T>::supported)            \
            return detail::IMPL##Builtin<Width, OP, true, false>(v, 32, total);            \
        else                                                                               \
            return v;                                                                      \
    }                                                                                      \
    template <int Width = 32, typename T> WARPKIT_DEVICE T warp##KIND##NAME##Valid(T v, int valid) { \
        WARPKIT_CHECK_WIDTH(Width, "warp" #KIND #NAME "Valid");                            \
        WARPKIT_CHECK_ARITH_TYPE(T, "warp" #KIND #NAME "Valid");                           \
        T unused;                                                                          \
        if constexpr (Width >= 1 && Width <= 32 && detail::Arith<T>::supported)            \
            return detail::IMPL##Builtin<Width, OP, false, true>(v, valid, unused);        \
        else                                                                               \
            return v;                                                                      \
    }                                                                                      \
    template <int Width = 32, typename T>                                                  \
    WARPKIT_DEVICE T warp##KIND##NAME##Valid(T v, int valid, T& total) {                   \
        WARPKIT_CHECK_WIDTH(Width, "warp" #KIND #NAME "Valid");                            \
        WARPKIT_CHECK_ARITH_TYPE(T, "warp" #KIND #NAME "Valid");                           \
        if constexpr (Width >= 1 && Width <= 32 && detail::Arith<T>::supported)            \
            return detail::IMPL##Builtin<Width, OP, true, true>(v, valid, total);          \
        else                                                                               \
            return v;                                                                      \
    }

/// Inclusive prefix sums (see above).
WARPKIT_DETAIL_NAMED_SCAN(Inclusive, inclusive, Sum, Sum)
/// Inclusive prefix maxima; NaN from the first NaN on.
WARPKIT_DETAIL_NAMED_SCAN(Inclusive, inclusive, Max, Max)
/// Inclusive prefix minima; NaN from the first NaN on.
WARPKIT_DETAIL_NAMED_SCAN(Inclusive, inclusive, Min, Min)
/// Exclusive prefix sums: lane 0 of a segment gets 0.
WARPKIT_DETAIL_NAMED_SCAN(Exclusive, exclusive, Sum, Sum)
/// Exclusive prefix maxima: lane 0 of a segment gets the lowest value (-inf for floats).
WARPKIT_DETAIL_NAMED_SCAN(Exclusive, exclusive, Max, Max)
/// Exclusive prefix minima: lane 0 of a segment gets the highest value (+inf for floats).
WARPKIT_DETAIL_NAMED_SCAN(Exclusive, exclusive, Min, Min)
#undef WARPKIT_DETAIL_NAMED_SCAN

} // namespace warpkit

// ---- block scans ----
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
    const int tid = blockThreadRank();
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
    if constexpr (WARPKIT_DETAIL_BLOCK_SCAN_OK) return detail::blockScanDispatch<BlockThreads, 0>(v, op, v, &total, scratch.bytes);
    else return v;
}
/// Block exclusive scan seeded by `init`: thread 0 gets init, thread i init op x0 op ... op
/// x(i-1); `total` (every thread) gets x0 op ... op x(n-1), init not included. Every thread calls.
template <int BlockThreads = 0, typename T, typename Op>
WARPKIT_DEVICE T blockExclusiveScan(T v, Op op, T init, T& total, BlockReduceScratch<T, BlockThreads>& scratch) {
    WARPKIT_DETAIL_BLOCK_SCAN_CHECKS("blockExclusiveScan");
    if constexpr (WARPKIT_DETAIL_BLOCK_SCAN_OK) return detail::blockScanDispatch<BlockThreads, 2>(v, op, init, &total, scratch.bytes);
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
template <int BlockThreads = 0, typename T, typename Op> WARPKIT_DEVICE T blockInclusiveScanRunning(T v, Op op, T& running) {
    __shared__ BlockReduceScratch<T, BlockThreads> scratch;
    return blockInclusiveScanRunning<BlockThreads>(v, op, running, scratch);
}
/// Tile step of an exclusive scan carrying `running` (see above), own scratch.
template <int BlockThreads = 0, typename T, typename Op> WARPKIT_DEVICE T blockExclusiveScanRunning(T v, Op op, T& running) {
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

#define WARPKIT_DETAIL_BLOCK_NAMED_SCAN(NAME, OP)                                         \
    template <int BlockThreads = 0, typename T> WARPKIT_DEVICE T blockInclusive##NAME(T v) { \
        WARPKIT_CHECK_ARITH_TYPE(T, "blockInclusive" #NAME); WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockInclusive" #NAME);                              \
        return blockInclusiveScan<BlockThreads>(v, OP{});                                 \
    }                                                                                     \
    template <int BlockThreads = 0, typename T> WARPKIT_DEVICE T blockInclusive##NAME(T v, T& total) { \
        WARPKIT_CHECK_ARITH_TYPE(T, "blockInclusive" #NAME); WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockInclusive" #NAME);                              \
        return blockInclusiveScan<BlockThreads>(v, OP{}, total);                          \
    }                                                                                     \
    template <int BlockThreads = 0, typename T> WARPKIT_DEVICE T blockExclusive##NAME(T v) { \
        WARPKIT_CHECK_ARITH_TYPE(T, "blockExclusive" #NAME); WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockExclusive" #NAME);                              \
        return blockExclusiveScan<BlockThreads>(v, OP{}, detail::blockScanInit<OP, T>()); \
    }                                                                                     \
    template <int BlockThreads = 0, typename T> WARPKIT_DEVICE T blockExclusive##NAME(T v, T& total) { \
        WARPKIT_CHECK_ARITH_TYPE(T, "blockExclusive" #NAME); WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockExclusive" #NAME);                              \
        return blockExclusiveScan<BlockThreads>(v, OP{}, detail::blockScanInit<OP, T>(), total); \
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

/// Tile step of an inclusive prefix sum: thread i gets running + x0 + ... + xi; `running`
/// becomes running + (block total) in every thread. Every thread of the block must call.
template <int BlockThreads = 0, typename T> WARPKIT_DEVICE T blockInclusiveSumRunning(T v, T& running) {
    WARPKIT_CHECK_ARITH_TYPE(T, "blockInclusiveSumRunning"); WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockInclusiveSumRunning");
    return blockInclusiveScanRunning<BlockThreads>(v, Sum{}, running);
}
/// Tile step of an exclusive prefix sum: thread i gets running + x0 + ... + x(i-1); `running`
/// becomes running + (block total) in every thread. Every thread of the block must call.
template <int BlockThreads = 0, typename T> WARPKIT_DEVICE T blockExclusiveSumRunning(T v, T& running) {
    WARPKIT_CHECK_ARITH_TYPE(T, "blockExclusiveSumRunning"); WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockExclusiveSumRunning");
    return blockExclusiveScanRunning<BlockThreads>(v, Sum{}, running);
}

} // namespace warpkit
