// warpkit/detail/mbarrier.cuh: shared-memory barriers (mbarrier, sm_80 and newer) and Hopper
// (sm_90) bulk copies, as thin wrappers over their PTX. Internal: the cluster exchange
// (cluster/reduce.cuh), the device scan's hand-offs and the device layer's staged kernels use them.
// mbarInit, mbarArrive and mbarWait are compiled for sm_80 and newer; the rest for sm_90 and newer.
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
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}
/// The address of shared-memory address `addr` in block `rank` of this cluster.
WARPKIT_DEVICE unsigned mapToBlock(unsigned addr, unsigned rank) {
    unsigned r;
    asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(rank));
    return r;
}
#endif

} // namespace detail
} // namespace warpkit
