// PTX shape of include/warpkit/device/detail/norm_backward_kernels.cuh's final sum (N5) and its
// Programmatic Dependent Launch on sm_90 (bf16): norm_backward.cuh launches the final sum with
// cudaLaunchAttributeProgrammaticStreamSerialization on sm_90 whenever this code is built for it,
// so the final sum must wait for the main grid (griddepcontrol.wait) before it reads a partial; the
// register path's kernel lets it be scheduled early (launch_dependents); each thread's 16 loads of
// partials bypass L1 (ld.global.cg).
// The kernels are templates, instantiated here; KERNEL is a pattern of their mangled PTX names.
// @arch sm_90
// @nolocal
// @expect [^(]*normBackwardFinishKernelI13__nv_bfloat16[^(]* == 1 griddepcontrol\.wait
// @expect [^(]*normBackwardFinishKernelI13__nv_bfloat16[^(]* >= 16 ld\.global\.cg\.
// @expect [^(]*normBackwardFinishKernelI13__nv_bfloat16[^(]* == 0 griddepcontrol\.launch_dependents
// @expect [^(]*18normBackwardKernelI13__nv_bfloat16[^(]* == 1 griddepcontrol\.launch_dependents
// @expect [^(]*18normBackwardKernelI13__nv_bfloat16[^(]* == 0 griddepcontrol\.wait
#include <warpkit/device/norm_backward.cuh>

namespace warpkit {
namespace detail {
template __global__ void normBackwardFinishKernel<__nv_bfloat16>(NbFinish<__nv_bfloat16>);
template __global__ void normBackwardKernel<__nv_bfloat16, 256, 128, true, false>(NormBackwardParams<__nv_bfloat16>,
                                                                                  NbRes<__nv_bfloat16, false>);
} // namespace detail
} // namespace warpkit
