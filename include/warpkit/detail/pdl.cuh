// warpkit/detail/pdl.cuh: Programmatic Dependent Launch (sm_90; nothing before). A kernel launched
// with cudaLaunchAttributeProgrammaticStreamSerialization (the dependent) may have its blocks placed
// once every block of the kernel before it in the stream (the primary) has called
// pdlLaunchDependents or exited; the dependent calls pdlWait before it reads anything the primary
// writes. pdlAllowed says on the host whether a kernel may be launched that way, kernelPtxArch what
// its code was compiled for, pdlLaunch launches it so. Internal: the device segment and norm backward calls use them.
#pragma once

#include "config.cuh"
#include "host.cuh"

namespace warpkit {
namespace detail {

/// Lets the stream's next kernel, if launched programmatically, be scheduled once every block of
/// this grid has called it or exited. It orders nothing: the dependent's pdlWait waits for this
/// whole grid's completion and memory. Any thread of a block; nothing before sm_90.
WARPKIT_DEVICE void pdlLaunchDependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/// Waits until the grid this one depends on programmatically has completed and its memory
/// operations are visible; returns at once in a launch without that dependency. Every thread that
/// reads the primary's results calls it first; nothing before sm_90.
WARPKIT_DEVICE void pdlWait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// The host caches' key (their `a`, beside the kernel and device) of a kernel's PTX architecture.
constexpr int kHostKeyPtxArch = -2;

/// The virtual architecture `kernel`'s code on device `dev` was compiled for (cudaFuncAttributes'
/// ptxVersion: 90 for compute_90), asked once per kernel and device: the __CUDA_ARCH__ its body
/// saw. Code JIT-compiled from older PTX runs on a newer device without the newer paths (no
/// pdlWait, no cp.async), which the device's own compute capability would not tell. Host.
template <typename K> inline cudaError_t kernelPtxArch(K kernel, int dev, int* arch) {
    const void* key = reinterpret_cast<const void*>(kernel);
    if (hostCacheGet(key, dev, kHostKeyPtxArch, 0, arch)) return cudaSuccess;
    cudaFuncAttributes a;
    WARPKIT_TRY(cudaFuncGetAttributes(&a, kernel));
    *arch = a.ptxVersion;
    hostCachePut(key, dev, kHostKeyPtxArch, 0, *arch);
    return cudaSuccess;
}

/// Whether `kernel` may be launched with programmatic stream serialisation on device `dev` of
/// compute capability `cc` (*yes): sm_90 or newer, its code compiled for compute_90 or newer (so it
/// holds pdlWait; kernelPtxArch), and a runtime that keeps the dependency in CUDA graphs (12.3).
/// Host.
template <typename K> inline cudaError_t pdlAllowed(K kernel, int dev, int cc, bool* yes) {
    *yes = false;
#if CUDART_VERSION >= 12030
    if (cc < 90) return cudaSuccess;
    int arch = 0;
    WARPKIT_TRY(kernelPtxArch(kernel, dev, &arch));
    *yes = arch >= 90;
#else
    (void)kernel, (void)dev, (void)cc;
#endif
    return cudaSuccess;
}

/// A launch of `kernel` on grid x block threads, with programmatic stream serialisation when
/// `early` (pdlAllowed): its blocks may be placed while the stream's previous kernel runs (once that
/// one calls pdlLaunchDependents) and wait for it in pdlWait. Returns the launch's own error. Host.
template <typename... Params, typename... Args> inline cudaError_t
pdlLaunch(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream, bool early, Args... args) {
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.stream = stream;
    if (early) cfg.attrs = at, cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, kernel, args...);
}

} // namespace detail
} // namespace warpkit
