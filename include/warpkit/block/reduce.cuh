// warpkit/block/reduce.cuh: block reductions.
//
// Every thread of a block contributes one value. Any block shape: 1 to 1024 threads, a partial
// last warp, 1-D, 2-D or 3-D blocks (threads are taken in linear order x + Dx*(y + Dy*z), the
// order the hardware forms warps in).
//
// BlockThreads (template parameter): the block size when it is known at compile time (1..1024),
// which lets the compiler drop dead steps (a block of <= 32 threads needs no barrier and no
// shared memory); 0, the default, reads blockDim at run time.
//
// Participation: EVERY thread of the block must call, none returned early or branched away (the
// functions hold __syncthreads barriers). With WARPKIT_DEBUG defined they trap, with a message,
// when a thread of the block did not arrive or BlockThreads disagrees with blockDim.
//
// Who gets the result: blockReduce* give it to every thread of the block; the cheaper
// blockReduce*ToThread0 give it to thread 0 only (other threads get unspecified values) and let
// every warp but warp 0 leave after the second barrier.
//
// Shared memory: each function declares its own __shared__ scratch, unless you pass a
// BlockReduceScratch<T, BlockThreads> (declare it __shared__; its size in bytes is
// blockReduceScratchBytes<T, BlockThreads>(), at most 33 slots of T). Back-to-back calls, calls
// in loops and calls sharing one caller scratch are race-free without any barrier of yours: each
// call begins with a barrier that no thread passes before every thread has finished reading the
// previous call's scratch.
//
// Types, operators and NaN as for the warp reductions: the named forms take int, unsigned,
// long long, unsigned long long, float, double, __half and __nv_bfloat16 (16-bit floats are
// reduced in float and rounded once); Max/Min propagate NaN; ArgMax/ArgMin keep the lowest index
// on ties and return a NaN's index. The generic blockReduce takes any trivially copyable T and any
// associative op; it need not be commutative (lower threads always go on the left).
//
// Cost beyond the warp reductions: two barriers (three for blockReduce* when the block has a
// partial last warp, which needs a broadcast), one shared store per warp, <= 32 shared loads.
//
// Several values at once: blockReduceSum/Max/Min<BlockThreads>(T (&v)[N]) reduce N values per
// thread (a sum and a sum of squares, say) in place, every thread getting all N totals, for the
// barriers of one reduction. Each warp reduces its N values with warpReduceBatched (about N
// shuffles, not 5 N), one store per value and warp; then each warp reduces the N x warps partials
// split over its lanes (ceil(N / (32 / P)) values a lane, P = the warp count rounded up to a power
// of two) and gathers the N totals (N more shuffles). Scratch: BlockReduceScratch<T[N], BlockThreads>.
//
// Generic operators on structs: a struct of W 32-bit words costs W shuffles a step, as W single
// values do, for the barriers of one reduction. Only lane 0 of each warp needs the warp's value, so
// a non-commutative operator slides the partial values down to it (shfl.down, op once a step, no
// selects), and the slot stage broadcasts its result with one more shuffle; an operator that
// declares `commutative` (warp/reduce.cuh) uses butterflies.

#pragma once

#include "../warp/reduce.cuh"
#include "../warp/packed.cuh"

namespace warpkit {
namespace detail {

template <bool C, typename X, typename Y> struct Cond { using type = X; };
template <typename X, typename Y> struct Cond<false, X, Y> { using type = Y; };

/// Compile-time facts about a block of BlockThreads threads (0: known only at run time).
template <int BlockThreads> struct BlockShape {
    static constexpr bool known = BlockThreads > 0;
    static constexpr int warps = known ? (BlockThreads + 31) / 32 : 32;
    static constexpr bool maybePartial = !known || BlockThreads % 32 != 0;
    /// One slot per warp, plus one for the broadcast when the last warp may be partial.
    static constexpr int slots = (known && BlockThreads <= 32) ? 1 : warps + (maybePartial ? 1 : 0);
    /// Lanes that combine the per-warp slots: `warps` rounded up to a power of two (2..32).
    static constexpr int slotLanes = warps <= 2 ? 2 : warps <= 4 ? 4 : warps <= 8 ? 8 : warps <= 16 ? 16 : 32;
};

/// The type a block reduction with `Op` works in: float for 16-bit floats under Sum/Max/Min.
template <typename T, typename Op> struct BlockAcc {
    static constexpr bool builtin = IsBuiltinOp<Op>::value && Arith<T>::supported;
    using type = typename Cond<builtin, typename Arith<T>::Acc, T>::type;
};

template <typename T> struct ScratchElem {
    using Acc = typename Arith<T>::Acc;
    static constexpr int size = (int)(sizeof(T) > sizeof(Acc) ? sizeof(T) : sizeof(Acc));
    static constexpr int align0 = (int)(alignof(T) > alignof(Acc) ? alignof(T) : alignof(Acc));
    static constexpr int align = align0 > 4 ? align0 : 4;
};
/// A slot of the multi-value reductions: N values of T's working type.
template <typename T, int N> struct ScratchElem<T[N]> {
    static constexpr int size = N * ScratchElem<T>::size;
    static constexpr int align = ScratchElem<T>::align;
};

/// Threads in the block.
template <int BlockThreads> WARPKIT_DEVICE int blockThreads() {
    if constexpr (BlockThreads > 0) return BlockThreads;
    else return (int)(blockDim.x * blockDim.y * blockDim.z);
}

/// The barrier that opens every block-level call. Under WARPKIT_DEBUG it also counts arrivals.
template <int BlockThreads> WARPKIT_DEVICE void blockEntryBarrier(int n) {
#if defined(WARPKIT_DEBUG)
    WARPKIT_DEBUG_CHECK(BlockThreads == 0 || (int)(blockDim.x * blockDim.y * blockDim.z) == BlockThreads,
                        "block function: BlockThreads differs from blockDim.x*blockDim.y*blockDim.z");
    const int arrived = __syncthreads_count(1);
    WARPKIT_DEBUG_CHECK(arrived == n, "block function: every thread of the block must call it");
#else
    (void)n;
    __syncthreads();
#endif
}

/// Stage 1: each warp reduces its own lanes; every lane of the warp gets its warp's value (Lead:
/// lane 0 of a full warp at least; an ordered operator then skips the broadcast).
/// A partial last warp reduces over its `valid` existing lanes only, with a mask naming them.
template <int BlockThreads, bool Lead, typename A, typename Op>
WARPKIT_DEVICE A blockWarpStage(A v, Op op, int n, int tid) {
    if constexpr (BlockThreads > 0 && BlockThreads % 32 == 0) {
        return warpReduceAny<32, Lead>(v, op);
    } else {
        const int valid = n - (tid & ~31);
        if (valid >= 32) return warpReduceAny<32, Lead>(v, op);
        const unsigned mask = (1u << valid) - 1u;
        __syncwarp(mask);
        WARPKIT_DEBUG_CHECK(__activemask() == mask, "block function: every thread of the block must call it");
        return warpReduceActive(v, op);
    }
}

/// Stage 2: one full warp reduces the `nw` warp values in slots[0..nw); all its lanes get it
/// (Lead: lane 0 at least).
template <int BlockThreads, bool Lead, typename A, typename Op>
WARPKIT_DEVICE A blockSlotStage(const A* slots, int nw, Op op) {
    const int lane = (int)laneId();
    if constexpr (BlockThreads > 0) {
        constexpr int NW = BlockShape<BlockThreads>::warps;
        constexpr int P0 = BlockShape<BlockThreads>::slotLanes;
#if WARPKIT_ARCH >= 800
        // 32-bit integer Sum/Max/Min: one redux.sync beats log2(P0) shuffles.
        constexpr int P = (IsBuiltinOp<Op>::value && IsInt32<A>::value) ? 32 : P0;
#else
        constexpr int P = P0;
#endif
        const int s = lane & (P - 1);
        const A x = slots[s < NW ? s : NW - 1];
        if constexpr (NW == P) return warpReduceAny<P, Lead>(x, op);
        else return warpReduceAny<P, Lead>(x, op, NW);
    } else {
        const A x = slots[lane < nw ? lane : 0];
        return warpReduceAny<32, Lead>(x, op, nw);
    }
}

template <int BlockThreads, bool AllThreads, typename A, typename Op>
WARPKIT_DEVICE A blockReduceCore(A v, Op op, A* slots) {
    const int n = blockThreads<BlockThreads>();
    const int tid = (int)linearThreadId();
    if constexpr (BlockThreads > 0 && BlockThreads <= 32) {
        const A w = blockWarpStage<BlockThreads, false>(v, op, n, tid);
#if defined(WARPKIT_DEBUG)
        blockEntryBarrier<BlockThreads>(n);
#endif
        return w;
    } else {
        // Only lane 0's warp value goes to the slots (a partial warp's lanes all get it).
        const A w = blockWarpStage<BlockThreads, true>(v, op, n, tid);
        if constexpr (BlockThreads == 0) {
            // One warp: no barrier, no scratch (the same branch in every thread); an ordered
            // operator left the value of a full warp in lane 0 only.
            if (n <= 32) return (!AnyOrder<Op, A>::value && n == 32) ? shflIdx(w, 0) : w;
        }
        const int warp = tid >> 5, lane = tid & 31;
        const int nw = BlockThreads > 0 ? BlockShape<BlockThreads>::warps : (n + 31) >> 5;
        blockEntryBarrier<BlockThreads>(n); // previous call's reads of `slots` are finished
        if (lane == 0) slots[warp] = w;
        __syncthreads();
        if constexpr (!AllThreads) {
            if (warp == 0) return blockSlotStage<BlockThreads, true>(slots, nw, op);
            return w;
        } else {
            if (!BlockShape<BlockThreads>::maybePartial || (n & 31) == 0)
                return blockSlotStage<BlockThreads, false>(slots, nw, op); // every warp is full
            // A partial warp cannot run the slot stage itself: warp 0 broadcasts through slot nw.
            if (warp == 0) {
                const A r = blockSlotStage<BlockThreads, true>(slots, nw, op);
                if (lane == 0) slots[nw] = r;
            }
            __syncthreads();
            return slots[nw];
        }
    }
}

template <int BlockThreads, bool AllThreads, typename T, typename Op>
WARPKIT_DEVICE T blockReduceDispatch(T v, Op op, unsigned char* bytes) {
    if constexpr (BlockAcc<T, Op>::builtin) {
        using A = typename Arith<T>::Acc;
        return Arith<T>::from_acc(
            blockReduceCore<BlockThreads, AllThreads>(Arith<T>::to_acc(v), op, reinterpret_cast<A*>(bytes)));
    } else {
        return blockReduceCore<BlockThreads, AllThreads>(v, op, reinterpret_cast<T*>(bytes));
    }
}

/// Stage 2 of the multi-value reduction: the warps' N partials in slots[w * N + k] (w < nw), reduced
/// by one full warp; every lane gets the N totals in v. Lane (g, s) = (lane / P, lane % P) reduces
/// values g, g + G, ... of warp s with the other lanes of its group, then the N totals are gathered.
template <int BlockThreads, typename Op, int N, typename A>
WARPKIT_DEVICE void blockMultiSlotStage(A (&v)[N], const A* slots, int nw) {
    constexpr int P = BlockThreads > 0 ? BlockShape<BlockThreads>::slotLanes : 32;
    constexpr int G = 32 / P;            // groups of P lanes
    constexpr int C = (N + G - 1) / G;   // values per lane
    const int lane = (int)laneId();
    const int g = lane / P, s = lane % P;
    const int warps = BlockThreads > 0 ? BlockShape<BlockThreads>::warps : nw;
    A x[C];
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const int k = g + c * G;
        x[c] = (s < warps && k < N) ? slots[s * N + k] : Identity<Op, A>::value();
    }
    warpReduceBatchedImpl<P, false>(x, Op{}); // value g + c*G: group g, lane c % P, slot c / P
#pragma unroll
    for (int k = 0; k < N; ++k) v[k] = shflIdx(x[(k / G) / P], (k % G) * P + (k / G) % P);
}

/// Every thread's N values of v reduced with the built-in Op over the block, in place: every thread
/// gets the N totals. slots: (warps + 1) x N values of A (BlockReduceScratch<T[N], BlockThreads>).
template <int BlockThreads, typename Op, int N, typename A>
WARPKIT_DEVICE void blockReduceMultiCore(A (&v)[N], A* slots) {
    const int n = blockThreads<BlockThreads>();
    const int tid = (int)linearThreadId();
    const int warp = tid >> 5, lane = tid & 31;
    const bool full = (BlockThreads > 0 && BlockThreads % 32 == 0) || n - (tid & ~31) >= 32;
    // Stage 1: full warps end in the batched layout (lane l, slot j: value l + 32 j); a partial
    // last warp reduces value by value over its lanes, every lane getting all N.
    if (full) {
        warpReduceBatchedImpl<32, false>(v, Op{});
    } else {
        const unsigned mask = (1u << (n - (tid & ~31))) - 1u;
        __syncwarp(mask);
        WARPKIT_DEBUG_CHECK(__activemask() == mask, "block function: every thread of the block must call it");
#pragma unroll
        for (int k = 0; k < N; ++k) v[k] = builtinReduceMask<Op>(v[k], mask);
    }
    bool oneWarp = BlockThreads > 0 && BlockThreads <= 32;
    if constexpr (BlockThreads == 0) oneWarp = n <= 32; // same branch in every thread
    if (oneWarp) {
#if defined(WARPKIT_DEBUG)
        if constexpr (BlockThreads > 0) blockEntryBarrier<BlockThreads>(n);
#endif
        if (full) {
            A t[N];
#pragma unroll
            for (int k = 0; k < N; ++k) t[k] = shflIdx(v[k / 32], k % 32);
#pragma unroll
            for (int k = 0; k < N; ++k) v[k] = t[k];
        }
        return;
    }
    const int nw = BlockThreads > 0 ? BlockShape<BlockThreads>::warps : (n + 31) >> 5;
    blockEntryBarrier<BlockThreads>(n); // previous call's reads of `slots` are finished
    A* row = slots + warp * N;
    if (full) {
#pragma unroll
        for (int j = 0; j < (N + 31) / 32; ++j)
            if (lane + 32 * j < N) row[lane + 32 * j] = v[j];
    } else if (lane == 0) {
#pragma unroll
        for (int k = 0; k < N; ++k) row[k] = v[k];
    }
    __syncthreads();
    if (!BlockShape<BlockThreads>::maybePartial || (n & 31) == 0) {
        blockMultiSlotStage<BlockThreads, Op>(v, slots, nw); // every warp is full
        return;
    }
    // A partial warp cannot run the slot stage itself: warp 0 broadcasts through row nw.
    if (warp == 0) {
        blockMultiSlotStage<BlockThreads, Op>(v, slots, nw);
        if (lane == 0) {
#pragma unroll
            for (int k = 0; k < N; ++k) slots[nw * N + k] = v[k];
        }
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < N; ++k) v[k] = slots[nw * N + k];
}

template <int BlockThreads, typename Op, int N, typename T>
WARPKIT_DEVICE void blockReduceMultiDispatch(T (&v)[N], unsigned char* bytes) {
    using A = typename Arith<T>::Acc;
    if constexpr (IsSame<A, T>::value) {
        blockReduceMultiCore<BlockThreads, Op>(v, reinterpret_cast<A*>(bytes));
    } else {
        A a[N];
#pragma unroll
        for (int k = 0; k < N; ++k) a[k] = Arith<T>::to_acc(v[k]);
        blockReduceMultiCore<BlockThreads, Op>(a, reinterpret_cast<A*>(bytes));
#pragma unroll
        for (int k = 0; k < N; ++k) v[k] = Arith<T>::from_acc(a[k]);
    }
}

} // namespace detail

/// Caller-provided scratch for the block reductions (and block scans) of T over blocks of
/// BlockThreads threads (0: any block size); BlockReduceScratch<T[N], BlockThreads> serves the
/// N-value forms. Declare it __shared__; one scratch may serve any number of calls, back to back,
/// with no barrier in between.
template <typename T, int BlockThreads = 0> struct BlockReduceScratch {
    alignas(detail::ScratchElem<T>::align) unsigned char
        bytes[detail::BlockShape<BlockThreads>::slots * detail::ScratchElem<T>::size];
};

/// Size in bytes of BlockReduceScratch<T, BlockThreads>: for budgeting shared memory.
template <typename T, int BlockThreads = 0> __host__ __device__ constexpr int blockReduceScratchBytes() {
    return (int)sizeof(BlockReduceScratch<T, BlockThreads>);
}

// ---- generic operator ----

/// Reduce `v` with `op` over the whole block. Every thread of the block must call; every thread
/// gets the result. T: any trivially copyable type; op: associative (lower threads on the left).
template <int BlockThreads = 0, typename T, typename Op>
WARPKIT_DEVICE T blockReduce(T v, Op op, BlockReduceScratch<T, BlockThreads>& scratch) {
    WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockReduce");
    WARPKIT_CHECK_SHUFFLABLE(T, "blockReduce");
    if constexpr (BlockThreads >= 0 && BlockThreads <= 1024 && detail::IsShufflable<T>::value)
        return detail::blockReduceDispatch<BlockThreads, true>(v, op, scratch.bytes);
    else
        return v;
}
/// blockReduce with its own __shared__ scratch.
template <int BlockThreads = 0, typename T, typename Op> WARPKIT_DEVICE T blockReduce(T v, Op op) {
    __shared__ BlockReduceScratch<T, BlockThreads> scratch;
    return blockReduce<BlockThreads>(v, op, scratch);
}

/// Like blockReduce, but only thread 0 gets the result (others: unspecified). Every thread of
/// the block must call. Cheaper: no broadcast; warps other than warp 0 leave after the barrier.
template <int BlockThreads = 0, typename T, typename Op>
WARPKIT_DEVICE T blockReduceToThread0(T v, Op op, BlockReduceScratch<T, BlockThreads>& scratch) {
    WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockReduceToThread0");
    WARPKIT_CHECK_SHUFFLABLE(T, "blockReduceToThread0");
    if constexpr (BlockThreads >= 0 && BlockThreads <= 1024 && detail::IsShufflable<T>::value)
        return detail::blockReduceDispatch<BlockThreads, false>(v, op, scratch.bytes);
    else
        return v;
}
/// blockReduceToThread0 with its own __shared__ scratch.
template <int BlockThreads = 0, typename T, typename Op> WARPKIT_DEVICE T blockReduceToThread0(T v, Op op) {
    __shared__ BlockReduceScratch<T, BlockThreads> scratch;
    return blockReduceToThread0<BlockThreads>(v, op, scratch);
}

// ---- named block reductions ----
// Generated for Sum, Max and Min: blockReduceX<BlockThreads>(v[, scratch]) (every thread gets the
// result) and blockReduceXToThread0<BlockThreads>(v[, scratch]) (thread 0 gets it). Every thread
// of the block must call.

#define WARPKIT_DETAIL_BLOCK_NAMED(NAME, OP)                                                           \
    template <int BlockThreads = 0, typename T>                                                        \
    WARPKIT_DEVICE T blockReduce##NAME(T v, BlockReduceScratch<T, BlockThreads>& scratch) {            \
        WARPKIT_CHECK_ARITH_TYPE(T, "blockReduce" #NAME);                                              \
        WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockReduce" #NAME);                                \
        return blockReduce<BlockThreads>(v, OP{}, scratch);                                            \
    }                                                                                                  \
    template <int BlockThreads = 0, typename T> WARPKIT_DEVICE T blockReduce##NAME(T v) {              \
        WARPKIT_CHECK_ARITH_TYPE(T, "blockReduce" #NAME);                                              \
        WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockReduce" #NAME);                                \
        return blockReduce<BlockThreads>(v, OP{});                                                     \
    }                                                                                                  \
    template <int BlockThreads = 0, typename T>                                                        \
    WARPKIT_DEVICE T blockReduce##NAME##ToThread0(T v, BlockReduceScratch<T, BlockThreads>& scratch) { \
        WARPKIT_CHECK_ARITH_TYPE(T, "blockReduce" #NAME "ToThread0");                                  \
        WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockReduce" #NAME "ToThread0");                    \
        return blockReduceToThread0<BlockThreads>(v, OP{}, scratch);                                   \
    }                                                                                                  \
    template <int BlockThreads = 0, typename T> WARPKIT_DEVICE T blockReduce##NAME##ToThread0(T v) {   \
        WARPKIT_CHECK_ARITH_TYPE(T, "blockReduce" #NAME "ToThread0");                                  \
        WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockReduce" #NAME "ToThread0");                    \
        return blockReduceToThread0<BlockThreads>(v, OP{});                                            \
    }

/// Sum over the block (see the section comment for participation and result threads).
WARPKIT_DETAIL_BLOCK_NAMED(Sum, Sum)
/// Maximum over the block; NaN if any thread holds NaN.
WARPKIT_DETAIL_BLOCK_NAMED(Max, Max)
/// Minimum over the block; NaN if any thread holds NaN.
WARPKIT_DETAIL_BLOCK_NAMED(Min, Min)
#undef WARPKIT_DETAIL_BLOCK_NAMED

// ---- several values at once ----
// Generated for Sum, Max and Min: blockReduceX<BlockThreads>(T (&v)[N][, scratch]) reduces each of
// the N values over the block in place; every thread of the block must call, and every thread gets
// all N totals. Types as for the single-value forms; the cost is in the header comment.

#define WARPKIT_DETAIL_BLOCK_MULTI(NAME, OP)                                              \
    template <int BlockThreads = 0, int N, typename T>                                    \
    WARPKIT_DEVICE void blockReduce##NAME(T (&v)[N], BlockReduceScratch<T[N], BlockThreads>& scratch) { \
        WARPKIT_CHECK_ARITH_TYPE(T, "blockReduce" #NAME);                                 \
        WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockReduce" #NAME);                   \
        if constexpr (BlockThreads >= 0 && BlockThreads <= 1024 && detail::Arith<T>::supported) \
            detail::blockReduceMultiDispatch<BlockThreads, OP>(v, scratch.bytes);         \
    }                                                                                     \
    template <int BlockThreads = 0, int N, typename T> WARPKIT_DEVICE void blockReduce##NAME(T (&v)[N]) { \
        WARPKIT_CHECK_ARITH_TYPE(T, "blockReduce" #NAME);                                 \
        WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockReduce" #NAME);                   \
        constexpr int B = (BlockThreads >= 0 && BlockThreads <= 1024) ? BlockThreads : 0; \
        __shared__ BlockReduceScratch<T[N], B> scratch;                                   \
        if constexpr (B == BlockThreads && detail::Arith<T>::supported)                  \
            detail::blockReduceMultiDispatch<B, OP>(v, scratch.bytes);                    \
    }

/// Sums of N values over the block, in place (every thread gets the N sums).
WARPKIT_DETAIL_BLOCK_MULTI(Sum, Sum)
/// Maxima of N values over the block, in place; NaN where any thread holds NaN.
WARPKIT_DETAIL_BLOCK_MULTI(Max, Max)
/// Minima of N values over the block, in place; NaN where any thread holds NaN.
WARPKIT_DETAIL_BLOCK_MULTI(Min, Min)
#undef WARPKIT_DETAIL_BLOCK_MULTI

/// Largest value in the block with the index that came with it (lowest index on ties; NaN wins,
/// as torch.argmax). Every thread must call; every thread gets the pair. Scratch form:
/// BlockReduceScratch<ValueIndex<T>, BlockThreads>.
template <int BlockThreads = 0, typename T> WARPKIT_DEVICE ValueIndex<T> blockReduceArgMax(T value, int index) {
    WARPKIT_CHECK_ARITH_TYPE(T, "blockReduceArgMax"); WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockReduceArgMax");
    return blockReduce<BlockThreads>(ValueIndex<T>{value, index}, ArgMax{});
}
/// blockReduceArgMax with caller-provided scratch. Every thread must call; every thread gets the pair.
template <int BlockThreads = 0, typename T> WARPKIT_DEVICE ValueIndex<T>
blockReduceArgMax(T value, int index, BlockReduceScratch<ValueIndex<T>, BlockThreads>& scratch) {
    WARPKIT_CHECK_ARITH_TYPE(T, "blockReduceArgMax"); WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockReduceArgMax");
    return blockReduce<BlockThreads>(ValueIndex<T>{value, index}, ArgMax{}, scratch);
}
/// blockReduceArgMax with the pair in thread 0 only. Every thread must call; thread 0 gets the pair.
template <int BlockThreads = 0, typename T>
WARPKIT_DEVICE ValueIndex<T> blockReduceArgMaxToThread0(T value, int index) {
    WARPKIT_CHECK_ARITH_TYPE(T, "blockReduceArgMaxToThread0");
    return blockReduceToThread0<BlockThreads>(ValueIndex<T>{value, index}, ArgMax{});
}
/// Smallest value in the block and its index (lowest index on ties; NaN wins, as torch.argmin).
/// Every thread must call; every thread gets the pair.
template <int BlockThreads = 0, typename T> WARPKIT_DEVICE ValueIndex<T> blockReduceArgMin(T value, int index) {
    WARPKIT_CHECK_ARITH_TYPE(T, "blockReduceArgMin"); WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockReduceArgMin");
    return blockReduce<BlockThreads>(ValueIndex<T>{value, index}, ArgMin{});
}
/// blockReduceArgMin with caller-provided scratch. Every thread must call; every thread gets the pair.
template <int BlockThreads = 0, typename T> WARPKIT_DEVICE ValueIndex<T>
blockReduceArgMin(T value, int index, BlockReduceScratch<ValueIndex<T>, BlockThreads>& scratch) {
    WARPKIT_CHECK_ARITH_TYPE(T, "blockReduceArgMin"); WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockReduceArgMin");
    return blockReduce<BlockThreads>(ValueIndex<T>{value, index}, ArgMin{}, scratch);
}
/// blockReduceArgMin with the pair in thread 0 only. Every thread must call; thread 0 gets the pair.
template <int BlockThreads = 0, typename T>
WARPKIT_DEVICE ValueIndex<T> blockReduceArgMinToThread0(T value, int index) {
    WARPKIT_CHECK_ARITH_TYPE(T, "blockReduceArgMinToThread0");
    return blockReduceToThread0<BlockThreads>(ValueIndex<T>{value, index}, ArgMin{});
}

// ---- packed 16-bit pairs ----
// blockReduceSum/Max/Min<BlockThreads>(P v) for P = __half2 and __nv_bfloat162: lane-wise, the .x
// halves and the .y halves reduced separately over the block, in float2, rounded once (see
// warp/packed.cuh). Every thread of the block must call; every thread gets the pair.

#define WARPKIT_DETAIL_BLOCK_PACKED(P, OP)                                                                   \
    template <int BlockThreads = 0> WARPKIT_DEVICE P blockReduce##OP(P v) {                                  \
        WARPKIT_CHECK_BLOCK_THREADS(BlockThreads, "blockReduce" #OP);                                        \
        return detail::Packed16<P>::from_acc(                                                                \
            blockReduce<BlockThreads>(detail::Packed16<P>::to_acc(v), typename detail::PairOf<OP>::Pair{})); \
    }

/// Lane-wise sums, maxima and minima of __half2 and of __nv_bfloat162 pairs over the block
/// (every thread of the block must call; every thread gets the pair).
WARPKIT_DETAIL_PACKED_OPS(WARPKIT_DETAIL_BLOCK_PACKED, __half2)
WARPKIT_DETAIL_PACKED_OPS(WARPKIT_DETAIL_BLOCK_PACKED, __nv_bfloat162)
#undef WARPKIT_DETAIL_BLOCK_PACKED

} // namespace warpkit
