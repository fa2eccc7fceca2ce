// warpkit/cluster/topk.cuh: the k best packed keys of a row spread over the blocks of a
// thread-block cluster (sm_90), merged through distributed shared memory.
//
//   clusterTopK<BT, K, MaxK[, MaxBlocks]>(keys[K], k, scratch)   every block: the cluster's ranked keys
//
// Keys are warp/topk.cuh's packed keys (topkPack of a value and its index in the whole row; 0 is an
// empty slot), K a thread in registers. Stages:
//   1. each block selects its own k best (blockTopKSelect) into its scratch;
//   2. a cluster barrier (release / acquire) publishes every block's candidates;
//   3. every block reads all blocks' candidates (k <= MaxK a block, MaxBlocks x MaxK / BT a thread)
//      from their shared memory (ld.shared::cluster on mapa addresses);
//   4. a second cluster barrier: no block changes its scratch while another still reads it;
//   5. each block selects the k best of the gathered keys and sorts them (blockTopKSort).
// Every block ends with the same answer (the keys are distinct, so the set and the order are one
// fixed answer): n = min(k, keys) returned, scratch.keys[0 .. n) largest first.
//
// Without clusters (before sm_90, or a launch without a cluster) each block is its own cluster and
// gets its own block's top k. Participation: every thread of every block of the cluster calls
// (converged), with the same k <= MaxK; BT is the block size (compile-time); the cluster has at
// most MaxBlocks blocks (default 8, the portable cluster size; at most kClusterMaxBlocks).
#pragma once

#include "reduce.cuh"
#include "../block/topk.cuh"

namespace warpkit {
namespace detail {

/// A barrier of the whole cluster that orders shared-memory writes before it with reads after it
/// (__syncthreads without clusters). Every thread of every block calls.
WARPKIT_DEVICE void clusterSyncAcqRel() {
#if WARPKIT_ARCH >= 900
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
#else
    __syncthreads();
#endif
}

/// The 32-bit (clusterLoadInt) or 64-bit word at shared pointer p of block `rank` of this cluster.
WARPKIT_DEVICE int clusterLoadInt(const int* p, unsigned rank) {
#if WARPKIT_ARCH >= 900
    int v;
    asm volatile("ld.shared::cluster.s32 %0, [%1];" : "=r"(v) : "r"(mapToBlock(smemAddr(p), rank)) : "memory");
    return v;
#else
    return rank == 0 ? *p : 0;
#endif
}
WARPKIT_DEVICE unsigned long long clusterLoadU64(const unsigned long long* p, unsigned rank) {
#if WARPKIT_ARCH >= 900
    unsigned long long v;
    asm volatile("ld.shared::cluster.u64 %0, [%1];" : "=l"(v) : "r"(mapToBlock(smemAddr(p), rank)) : "memory");
    return v;
#else
    return rank == 0 ? *p : 0;
#endif
}

} // namespace detail

/// The k best packed keys of the whole cluster (each thread's keys[K]), ranked, in every block's
/// scratch.keys[0 .. n), n = min(k, nonzero keys) returned (see the header comment). Every thread of
/// every block of the cluster calls (converged) with the same k; every thread gets n.
template <int BlockThreads, int K, int MaxK, int MaxBlocks = 8>
WARPKIT_DEVICE int clusterTopK(const unsigned long long (&keys)[K], int k, BlockTopKScratch<MaxK>& s) {
    WARPKIT_CHECK_BLOCK_TOPK(BlockThreads, K, MaxK, "clusterTopK");
    static_assert(BlockThreads > 0, "clusterTopK: template parameter BlockThreads must be the block size "
                                    "(compile-time: it sizes the gathered keys a thread holds)");
    static_assert(MaxBlocks >= 1 && MaxBlocks <= kClusterMaxBlocks,
                  "clusterTopK: template parameter MaxBlocks must be 1 .. kClusterMaxBlocks (16)");
    constexpr int G = (MaxBlocks * MaxK + BlockThreads - 1) / BlockThreads; // gathered keys a thread
    static_assert(G <= 64, "clusterTopK: MaxBlocks x MaxK / BlockThreads must be at most 64 keys a thread");
    // 1. this block's k best (s.count of them in s.keys)
    blockTopKSelect<BlockThreads>(keys, k, s);
    // 2. publish
    detail::clusterSyncAcqRel();
    // 3. gather: slot c = b x MaxK + i holds block b's candidate i
    const unsigned nb = clusterBlocks(), t = linearThreadId();
    unsigned long long all[G];
#pragma unroll
    for (int g = 0; g < G; ++g) {
        const unsigned c = t + (unsigned)g * BlockThreads, b = c / MaxK, i = c % MaxK;
        all[g] = kTopKEmpty;
        if (b < nb && (int)i < detail::clusterLoadInt(&s.count, b)) all[g] = detail::clusterLoadU64(&s.keys[i], b);
    }
    // 4. every block has read every scratch
    detail::clusterSyncAcqRel();
    // 5. the cluster's k best, ranked
    const int n = blockTopKSelect<BlockThreads>(all, k, s).selected;
    blockTopKSort<BlockThreads>(s, n);
    return n;
}

} // namespace warpkit
