// PTX shape of include/warpkit/device/detail/norm_backward_split.cuh's one-pass split kernel
// (sm_90, vector slots, bf16 and fp32): the row sums are exchanged through flagged records (one
// relaxed 16-byte store a slice, relaxed 16-byte polls), with no fence, no atomic and no count.
// The kernels are templates, instantiated here; KERNEL is a pattern of their mangled PTX names.
// @arch sm_90
// @nolocal
// @expect [^(]*OnePassKernelI13__nv_bfloat16Lb1ELb0E[^(]* == 0 (membar|fence)\.
// @expect [^(]*OnePassKernelI13__nv_bfloat16Lb1ELb0E[^(]* == 0 ^[[:space:]]*(red|atom)\.
// @expect [^(]*OnePassKernelI13__nv_bfloat16Lb1ELb0E[^(]* >= 1 st\.relaxed\.gpu\.global\.v2\.u64
// @expect [^(]*OnePassKernelI13__nv_bfloat16Lb1ELb0E[^(]* >= 1 ld\.relaxed\.gpu\.global\.v2\.u64
// @expect [^(]*OnePassKernelIfLb1ELb0E[^(]* == 0 (membar|fence)\.
// @expect [^(]*OnePassKernelIfLb1ELb0E[^(]* == 0 ^[[:space:]]*(red|atom)\.
// @expect [^(]*OnePassKernelIfLb1ELb0E[^(]* >= 1 st\.relaxed\.gpu\.global\.v2\.u64
// @expect [^(]*OnePassKernelIfLb1ELb0E[^(]* >= 1 ld\.relaxed\.gpu\.global\.v2\.u64
#include <warpkit/device/norm_backward.cuh>

namespace warpkit {
namespace detail {
template __global__ void normBackwardOnePassKernel<__nv_bfloat16, true, false>(NormBackwardParams<__nv_bfloat16>,
                                                                               NbRes<__nv_bfloat16, false>);
template __global__ void normBackwardOnePassKernel<float, true, false>(NormBackwardParams<float>, NbRes<float, false>);
} // namespace detail
} // namespace warpkit
