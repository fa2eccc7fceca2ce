// warpkit/cluster/reduce.cuh: reductions across the blocks of a thread-block cluster (sm_90).
//
//   ClusterExchange<T>                 __shared__ storage for exchanging values of T
//   clusterExchangeInit(x)             every thread, once, at the top of the kernel; returns the round
//                                      counter (0) that each thread keeps and passes to clusterReduce
//   clusterReduce(x, round, v, op)     op over the blocks' values, in block-rank order, to every thread
//   clusterGather(x, round, v)         the exchange alone: every block's value lands in every block;
//   clusterPart(x, round, k)           then block k's value, read from this block's shared memory
//   clusterBlockRank(), clusterBlocks() this block's rank in its cluster and the cluster's size
//
// How. Each block pushes its value into every block's shared memory with st.async, which
// completes on the receiver's mbarrier, and each block waits only for its own parts to land: no
// cluster-wide barrier and no memory fence. (cluster.sync() is an arrive with release semantics:
// on an SM busy with other blocks' stores, that release waited ~5 us per row on H100, a third of
// a long softmax row's time; this exchange took 1.9-2.8 us, half of it partner skew.) The one
// cluster barrier is a relaxed arrive in clusterExchangeInit, waited on by the first round, so no
// block sends before every receiver's mbarriers are initialised. Two part buffers and two mbarriers
// alternate between rounds, so any number of rounds can follow each other with nothing but a block
// barrier between them. Each round arms its own mbarrier as it starts (bytes a partner sent early
// count against the armed total, which PTX allows), so no phase is left armed when a block exits:
// shared memory that the next block on the SM reuses holds no pending barrier phase.
//
// Participation: every thread of every block of the cluster calls clusterExchangeInit once, then
// each clusterReduce, in the same order. Blocks must be whole warps (a multiple of 32 threads):
// each warp reduces the parts with full-warp shuffles. The value passed must be the same in every thread of a
// block (a block reduction's result). A block may exit as soon as its last clusterReduce returns:
// nothing is sent to it afterwards. Clusters of up to 16 blocks (kClusterMaxBlocks).
//
// Without clusters (before sm_90, or a launch without a cluster dimension) a block is a cluster of
// one: clusterReduce returns the block's own value and nothing is exchanged.
//
// T: any trivially copyable type of at most 64 bytes. Cost per round: one st.async per partner
// (16 bytes at a time), one mbarrier wait, one shared load and a 16-lane warp reduction.
#pragma once

#include "../warp/reduce.cuh"
#include "../detail/async.cuh"

namespace warpkit {

/// The most blocks a cluster may have for the cluster functions (H100's non-portable maximum).
constexpr int kClusterMaxBlocks = 16;

/// This block's rank in its thread-block cluster (0..clusterBlocks()-1; 0 without clusters).
/// Any thread may call.
WARPKIT_DEVICE unsigned clusterBlockRank() {
#if WARPKIT_ARCH >= 900
    unsigned r;
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
#else
    return 0;
#endif
}

/// Blocks in this block's cluster (1 without clusters). Any thread may call.
WARPKIT_DEVICE unsigned clusterBlocks() {
#if WARPKIT_ARCH >= 900
    unsigned n;
    asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
    return n;
#else
    return 1;
#endif
}

namespace detail {
/// 32-bit words a value of T travels in: 1, 2, or a multiple of 4 (one st.async per 16 bytes).
template <typename T> struct ExchangeWords {
    static constexpr int raw = (int)((sizeof(T) + 3) / 4);
    static constexpr int value = raw <= 2 ? raw : (raw + 3) / 4 * 4;
};
} // namespace detail

/// Shared-memory storage for clusterReduce of values of T. Declare it __shared__; one ClusterExchange
/// serves any number of rounds.
template <typename T> struct ClusterExchange {
    alignas(16) unsigned parts[2][kClusterMaxBlocks][detail::ExchangeWords<T>::value];
    alignas(8) unsigned long long bar[2];
};

#define WARPKIT_CHECK_EXCHANGE_TYPE(T, fn)                                                \
    static_assert(__is_trivially_copyable(T) && sizeof(T) <= 64,                          \
                  fn ": value type T must be trivially copyable and at most 64 bytes")

/// Every thread of every block of the cluster, once, before any clusterReduce on `x` (at the top of
/// the kernel is best: the cluster barrier it arrives on is waited on by the first round). Returns
/// the round counter, 0: keep it in a variable and pass it to each clusterReduce.
template <typename T> WARPKIT_DEVICE unsigned clusterExchangeInit(ClusterExchange<T>& x) {
    WARPKIT_CHECK_EXCHANGE_TYPE(T, "clusterExchangeInit");
#if WARPKIT_ARCH >= 900
    if (clusterBlocks() > 1) {
        constexpr unsigned kBytes = detail::ExchangeWords<T>::value * 4u;
        const unsigned nb = clusterBlocks();
        if (linearThreadId() == 0) {
            detail::mbarInit(detail::smemAddr(&x.bar[0]), 1);
            detail::mbarInit(detail::smemAddr(&x.bar[1]), 1);
            detail::mbarInitFence();
        }
        __syncthreads(); // the inits before anyone's use of the barriers
        if (linearThreadId() == 0) detail::mbarArriveExpectTx(detail::smemAddr(&x.bar[0]), nb * kBytes); // arm round 0
        __syncwarp(); // .aligned: the warp's threads execute the arrive together
        asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
    }
#else
    (void)x;
#endif
    return 0u;
}

/// clusterReduce's exchange without the reduction: each block's value lands in every block's
/// shared memory; then clusterPart(x, round, k) reads block k's. Participation as for
/// clusterReduce, in a cluster of more than one block (clusterBlocks() > 1); the value need only
/// be right in this block's threads 0..clusterBlocks()-1 (they send it).
template <typename T> WARPKIT_DEVICE void clusterGather(ClusterExchange<T>& x, unsigned& round, T v) {
    WARPKIT_CHECK_EXCHANGE_TYPE(T, "clusterGather");
#if WARPKIT_ARCH >= 900
    const unsigned nb = clusterBlocks();
    constexpr int W = detail::ExchangeWords<T>::value;
    WARPKIT_DEBUG_CHECK(nb > 1, "clusterGather: the block must be in a cluster of more than one block");
    WARPKIT_DEBUG_CHECK((blockDim.x * blockDim.y * blockDim.z) % 32 == 0,
                        "clusterGather: blocks must be a whole number of warps (a multiple of 32 threads)");
    const unsigned r = round++, b = r & 1u, t = linearThreadId();
    if (r == 0) {
        __syncwarp(); // .aligned: the warp's threads execute the wait together
        asm volatile("barrier.cluster.wait.aligned;" ::: "memory"); // every receiver is armed
    } else {
        // Arm this round's mbarrier (its previous phase, round r - 2, completed: thread 0 waited on
        // it), then a block barrier: every thread has read the previous round's parts before this
        // block's value goes out, and so before any partner can send into them again.
        if (t == 0) detail::mbarArriveExpectTx(detail::smemAddr(&x.bar[b]), nb * (unsigned)W * 4u);
        __syncthreads();
    }
    if (t < nb) { // thread k sends this block's value to block k
        unsigned w[W];
        w[W - 1] = 0u;
        __builtin_memcpy(w, &v, sizeof(T));
        const unsigned rank = clusterBlockRank();
        const unsigned dst = detail::mapToBlock(detail::smemAddr(&x.parts[b][rank][0]), t);
        const unsigned bar = detail::mapToBlock(detail::smemAddr(&x.bar[b]), t);
        if constexpr (W == 1) {
            asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];"
                         ::"r"(dst), "r"(w[0]), "r"(bar) : "memory");
        } else if constexpr (W == 2) {
            asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b32 [%0], {%1, %2}, [%3];"
                         ::"r"(dst), "r"(w[0]), "r"(w[1]), "r"(bar) : "memory");
        } else {
#pragma unroll
            for (int k = 0; k < W; k += 4)
                asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];"
                             ::"r"(dst + 4u * k), "r"(w[k]), "r"(w[k + 1]), "r"(w[k + 2]), "r"(w[k + 3]), "r"(bar) : "memory");
        }
    }
    detail::mbarWait<true>(detail::smemAddr(&x.bar[b]), (r >> 1) & 1u);
#else
    (void)x;
    (void)round;
    (void)v;
#endif
}

/// Block k's value (k < clusterBlocks()) of the last clusterGather on x (`round` as it returned).
template <typename T> WARPKIT_DEVICE T clusterPart(const ClusterExchange<T>& x, unsigned round, int k) {
    T p;
    __builtin_memcpy(&p, &x.parts[(round - 1u) & 1u][k][0], sizeof(T));
    return p;
}

/// op over the values of the cluster's blocks, in block-rank order (op need not be commutative),
/// handed to every thread of every block. Every thread of every block must call, each block with
/// its own value (the same in all its threads); `round` is the counter clusterExchangeInit
/// returned, advanced here. Without a cluster: returns v.
template <typename T, typename Op> WARPKIT_DEVICE T clusterReduce(ClusterExchange<T>& x, unsigned& round, T v, Op op) {
    WARPKIT_CHECK_EXCHANGE_TYPE(T, "clusterReduce");
#if WARPKIT_ARCH >= 900
    const unsigned nb = clusterBlocks();
    if (nb <= 1) return v;
    clusterGather(x, round, v);
    const int k = (int)(laneId() & 15u);
    return warpReduce<16>(clusterPart(x, round, k < (int)nb ? k : 0), op, (int)nb);
#else
    (void)x;
    (void)round;
    (void)op;
    return v;
#endif
}

} // namespace warpkit
