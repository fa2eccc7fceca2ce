// warpkit/detail/config.cuh: build-wide macros shared by every warpkit header.
// Internal: include a public header instead.
#pragma once

#include <cuda_runtime.h>

#if !defined(__CUDACC__)
#error "warpkit headers hold __device__ code: compile them with nvcc (or clang in CUDA mode)"
#endif

#if defined(__CUDACC_VER_MAJOR__) && (__cplusplus < 201703L) && !defined(_MSVC_LANG)
#error "warpkit needs C++17 (nvcc's default since CUDA 11): do not pass -std=c++14 or older"
#endif

// sm_90 code needs CUDA 12.1 or newer: the cluster exchange uses st.async (PTX ISA 8.1), which
// CUDA 12.0's ptxas cannot assemble. Stop here with that reason rather than at a ptxas error.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDACC_VER_MAJOR__) && \
    (__CUDACC_VER_MAJOR__ < 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ < 1))
#error "warpkit: sm_90 targets need CUDA 12.1 or newer (st.async: PTX ISA 8.1); CUDA 12.0 builds sm_75/sm_80 only"
#endif

/// Every warpkit device function is a free, always-inlined function.
#define WARPKIT_DEVICE __device__ __forceinline__
/// Small helpers that also run on the host (operators, online-softmax state updates).
#define WARPKIT_HD __host__ __device__ __forceinline__

/// Mask naming all 32 lanes of a warp.
#define WARPKIT_FULL_MASK 0xffffffffu

/// WARPKIT_ARCH: __CUDA_ARCH__ in device passes, 0 in the host pass.
#if defined(__CUDA_ARCH__)
#define WARPKIT_ARCH __CUDA_ARCH__
#else
#define WARPKIT_ARCH 0
#endif

/// WARPKIT_SM_THREADS: the threads an SM holds on the architecture compiled for (sm_75 1024; sm_86
/// and sm_89 1536; 2048 on the others and in the host pass), for launch bounds' blocks an SM.
#define WARPKIT_SM_THREADS \
    (WARPKIT_ARCH >= 750 && WARPKIT_ARCH < 800 ? 1024 : WARPKIT_ARCH == 860 || WARPKIT_ARCH == 890 ? 1536 : 2048)

/// Debug checks: define WARPKIT_DEBUG to make misuse that is cheap to detect trap with a message.
#if defined(WARPKIT_DEBUG)
#include <stdio.h> // device printf for the trap message
#define WARPKIT_DEBUG_CHECK(cond, msg)                                                    \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            printf("warpkit: %s (block %d,%d,%d thread %d,%d,%d)\n", msg, blockIdx.x,     \
                   blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z);        \
            __trap();                                                                     \
        }                                                                                 \
    } while (0)
#else
#define WARPKIT_DEBUG_CHECK(cond, msg) ((void)0)
#endif

/// Compile-time check of a segment width: 1..32 lanes.
#define WARPKIT_CHECK_WIDTH(W, fn)                                                        \
    static_assert((W) >= 1 && (W) <= 32,                                                  \
                  fn ": template parameter Width must be between 1 and 32 (lanes per segment)")

/// Compile-time check of a segment width that must divide the warp: 1, 2, 4, 8, 16 or 32.
#define WARPKIT_CHECK_POW2_WIDTH(W, fn)                                                   \
    static_assert((W) >= 1 && (W) <= 32 && ((W) & ((W) - 1)) == 0,                        \
                  fn ": template parameter Width must divide the warp: 1, 2, 4, 8, 16 or 32")

/// Readable compile-time error for a bad BlockThreads.
#define WARPKIT_CHECK_BLOCK_THREADS(B, fn)                                                \
    static_assert((B) >= 0 && (B) <= 1024,                                                \
                  fn ": template parameter BlockThreads must be the block size (1..1024) or " \
                  "0 (read blockDim at run time)")
