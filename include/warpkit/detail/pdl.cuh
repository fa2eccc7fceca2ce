// warpkit/detail/pdl.cuh: Programmatic Dependent Launch (sm_90; nothing before). A kernel launched
// with cudaLaunchAttributeProgrammaticStreamSerialization (the dependent) may have its blocks placed
// once every block of the kernel before it in the stream (the primary) has called
// pdlLaunchDependents or exited; the dependent calls pdlWait before it reads anything the primary
// writes. Internal: the device segment and norm backward kernels use them.
#pragma once

#include "config.cuh"

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

} // namespace detail
} // namespace warpkit
