// PTX shape of include/warpkit/device/detail/norm_backward_kernels.cuh before sm_90 (sm_80, bf16):
// no griddepcontrol instruction in the final sum (N5) or the register path's kernel (sm_90 only;
// norm_backward.cuh sets Programmatic Dependent Launch only for code built for compute_90 or newer,
// see tests/ptx/norm_backward_finish.cu), and the final sum's 16 loads a thread bypass L1 here too.
// The kernels are templates, instantiated here; KERNEL is a pattern of their mangled PTX names.
// @arch sm_80
// @nolocal
// @expect [^(]*normBackwardFinishKernelI13__nv_bfloat16[^(]* == 0 griddepcontrol\.
// @expect [^(]*normBackwardFinishKernelI13__nv_bfloat16[^(]* >= 16 ld\.global\.cg\.
// @expect [^(]*18normBackwardKernelI13__nv_bfloat16[^(]* == 0 griddepcontrol\.
#include <warpkit/device/norm_backward.cuh>

namespace warpkit {
namespace detail {
template __global__ void normBackwardFinishKernel<__nv_bfloat16>(NbFinish<__nv_bfloat16>);
template __global__ void normBackwardKernel<__nv_bfloat16, 256, 128, true, false>(NormBackwardParams<__nv_bfloat16>,
                                                                                   NbRes<__nv_bfloat16, false>);
} // namespace detail
} // namespace warpkit
