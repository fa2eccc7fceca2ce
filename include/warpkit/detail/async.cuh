// warpkit/detail/async.cuh: thin wrappers over the PTX of asynchronous copies and of the
// barriers and memory orderings that go with them. Internal: the cluster exchange
// (cluster/reduce.cuh), the device scan and the device layer's row kernels use them.
//   - shared-memory barriers (mbarrier): mbarInit, mbarArrive, mbarWait, sm_80 and newer;
//   - Hopper (sm_90) bulk copies and their fences, cluster addresses, stagePieces;
//   - cp.async (sm_80 and newer; nothing on sm_75): asyncCopy16, asyncCopy4, asyncCopy4Fill, asyncCopyCommit,
//     asyncCopyWait;
//   - named barriers (bar.sync / bar.arrive), every architecture;
//   - relaxed GPU-scope 64-bit global loads and stores (coherent in L2, no fence); an acquire
//     load and a release add (a count that announces data).
#pragma once

#include "config.cuh"

namespace warpkit {
namespace detail {

/// The shared-memory (CTA window) address of a generic pointer into this block's shared memory.
WARPKIT_DEVICE unsigned smemAddr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

#if WARPKIT_ARCH >= 800
/// Initialise the mbarrier at `bar` for `count` arrivals a phase.
WARPKIT_DEVICE void mbarInit(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
/// Arrive once on the mbarrier at `bar` (release at CTA scope).
WARPKIT_DEVICE void mbarArrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
/// Wait until the phase of `parity` of the mbarrier at `bar` completes. Cluster (sm_90): acquire at
/// cluster scope (for data other blocks sent with st.async), else at CTA scope.
/// The wait does not spin: a waiting warp shares its scheduler with the warps it waits for. sm_90:
/// try_wait suspends the thread until the phase completes (or a time limit); sm_80: test_wait with
/// a 20 ns sleep between tries.
template <bool Cluster = false> WARPKIT_DEVICE void mbarWait(unsigned bar, unsigned parity) {
    // clang-format off
#if WARPKIT_ARCH >= 900
    if constexpr (Cluster)
        asm volatile("{\n.reg .pred P;\nWK_MBAR_WAITC:\n"
                     "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 P, [%0], %1;\n"
                     "@!P bra WK_MBAR_WAITC;\n}" ::"r"(bar), "r"(parity) : "memory");
    else
        asm volatile("{\n.reg .pred P;\nWK_MBAR_WAIT:\n"
                     "mbarrier.try_wait.parity.shared::cta.b64 P, [%0], %1;\n"
                     "@!P bra WK_MBAR_WAIT;\n}" ::"r"(bar), "r"(parity) : "memory");
#else
    static_assert(!Cluster, "Cluster: cluster-scope waits need sm_90; pass false on sm_80-89");
    for (;;) {
        unsigned done;
        asm volatile("{\n.reg .pred P;\nmbarrier.test_wait.parity.shared::cta.b64 P, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, P;\n}"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
        if (done) break;
        __nanosleep(20);
    }
#endif
    // clang-format on
}
#endif

#if WARPKIT_ARCH >= 900
/// Make mbarrier initialisations visible to the cluster (and to the async proxy).
WARPKIT_DEVICE void mbarInitFence() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
/// Arrive on the mbarrier at `bar` and add `bytes` to the bytes its current phase waits for.
WARPKIT_DEVICE void mbarArriveExpectTx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
/// Order this thread's earlier generic-proxy shared-memory accesses before later async-proxy ones.
WARPKIT_DEVICE void fenceProxyAsyncShared() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
/// Bulk copy `bytes` (a multiple of 16) from global `src` (16-byte aligned) into this block's shared
/// memory at `dst` (16-byte aligned); completes on the mbarrier at `bar`.
WARPKIT_DEVICE void bulkCopyToShared(unsigned dst, const void* src, unsigned bytes, unsigned bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}
/// The address of shared-memory address `addr` in block `rank` of this cluster.
WARPKIT_DEVICE unsigned mapToBlock(unsigned addr, unsigned rank) {
    unsigned r;
    asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(rank));
    return r;
}

/// Thread 0 of a block, alone: initialises the mbarriers full[k] of the nv / piece pieces (rounded
/// up) and bulk-copies piece k of each source src[i] (16-byte aligned, nv 16-byte vectors) to
/// dst + i * stride + k * piece in shared memory, completing on full[k]. Other barriers the block
/// uses are initialised before the call (its fence covers them). The block synchronises before
/// anyone waits on the barriers.
template <int NI> WARPKIT_DEVICE void stagePieces(uint4* dst, int stride, const uint4* const (&src)[NI], int nv,
                                                  int piece, unsigned long long* full) {
    const int np = (nv + piece - 1) / piece;
    for (int k = 0; k < np; ++k) mbarInit(smemAddr(&full[k]), 1);
    mbarInitFence();
    fenceProxyAsyncShared();
    for (int k = 0; k < np; ++k) {
        const int n = nv - k * piece < piece ? nv - k * piece : piece;
        const unsigned bar = smemAddr(&full[k]);
        mbarArriveExpectTx(bar, (unsigned)(n * 16 * NI));
#pragma unroll
        for (int i = 0; i < NI; ++i)
            bulkCopyToShared(smemAddr(dst + i * stride + k * piece), src[i] + k * piece, (unsigned)n * 16u, bar);
    }
}
#endif

/// Copies 16 bytes from global to shared memory without holding registers (cp.async, L2 only),
/// in the calling thread's current group. sm_80 and newer (nothing on sm_75).
WARPKIT_DEVICE void asyncCopy16(void* dst, const void* src) {
#if WARPKIT_ARCH >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smemAddr(dst)), "l"(src) : "memory");
#else
    (void)dst, (void)src;
#endif
}
/// Copies 4 bytes from global to shared memory without holding registers (cp.async, through L1),
/// in the calling thread's current group; both addresses 4-byte aligned. sm_80 and newer
/// (nothing on sm_75).
WARPKIT_DEVICE void asyncCopy4(void* dst, const void* src) {
#if WARPKIT_ARCH >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(smemAddr(dst)), "l"(src) : "memory");
#else
    (void)dst, (void)src;
#endif
}
/// asyncCopy4 when take, else 4 zero bytes to dst with no global read (src-size 0); src a valid
/// address either way. sm_80 and newer (nothing on sm_75).
WARPKIT_DEVICE void asyncCopy4Fill(void* dst, const void* src, bool take) {
#if WARPKIT_ARCH >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(smemAddr(dst)), "l"(src), "r"(take ? 4 : 0)
                 : "memory");
#else
    (void)dst, (void)src, (void)take;
#endif
}
/// Closes the calling thread's current group of async copies (an empty group when it issued none).
WARPKIT_DEVICE void asyncCopyCommit() {
#if WARPKIT_ARCH >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
/// Waits until at most n (0 to 7; more counts as 7) of the calling thread's groups are in flight;
/// its copies in the older groups are then visible to it.
WARPKIT_DEVICE void asyncCopyWait(int n) {
#if WARPKIT_ARCH >= 800
    // clang-format off
    switch (n) {
    case 0: asm volatile("cp.async.wait_group 0;" ::: "memory"); break;
    case 1: asm volatile("cp.async.wait_group 1;" ::: "memory"); break;
    case 2: asm volatile("cp.async.wait_group 2;" ::: "memory"); break;
    case 3: asm volatile("cp.async.wait_group 3;" ::: "memory"); break;
    case 4: asm volatile("cp.async.wait_group 4;" ::: "memory"); break;
    case 5: asm volatile("cp.async.wait_group 5;" ::: "memory"); break;
    case 6: asm volatile("cp.async.wait_group 6;" ::: "memory"); break;
    default: asm volatile("cp.async.wait_group 7;" ::: "memory"); break;
    }
    // clang-format on
#else
    (void)n;
#endif
}

/// Named barrier `id` (1 to 15; 0 is __syncthreads'): waits until `threads` (a multiple of 32)
/// have arrived, counting the caller's warp.
WARPKIT_DEVICE void namedBarrierSync(int id, int threads) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
/// Arrives at named barrier `id` for `threads` without waiting.
WARPKIT_DEVICE void namedBarrierArrive(int id, int threads) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

/// Relaxed GPU-scope 64-bit loads and stores of global memory (one word, or two adjacent words
/// 16-byte aligned): coherent in L2, no fence.
WARPKIT_DEVICE unsigned long long loadRelaxedGpu(const unsigned long long* p) {
    unsigned long long w;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
    return w;
}
WARPKIT_DEVICE void loadRelaxedGpu2(const unsigned long long* p, unsigned long long& a, unsigned long long& b) {
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
}
WARPKIT_DEVICE void storeRelaxedGpu(unsigned long long* p, unsigned long long w) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(w) : "memory");
}
WARPKIT_DEVICE void storeRelaxedGpu2(unsigned long long* p, unsigned long long a, unsigned long long b) {
    asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
}

/// An acquire GPU-scope 64-bit load of global memory: what the thread reads after it sees at
/// least what the releases it observes made visible (a flag's reader).
WARPKIT_DEVICE unsigned long long loadAcquireGpu(const unsigned long long* p) {
    unsigned long long w;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
    return w;
}
/// A release GPU-scope 64-bit atomic add to global memory: the thread's earlier writes are visible
/// to whoever acquires a value this add (or a later one) wrote (a count's writer).
WARPKIT_DEVICE void addReleaseGpu(unsigned long long* p, unsigned long long v) {
    asm volatile("red.release.gpu.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

} // namespace detail
} // namespace warpkit
