// PTX shape of the row kernels' cache hints (docs/tuning.md K7; device/detail/row_kernels.cuh): LayerNorm's
// full-row warp kernel (fp32, 32 lanes x 8 vectors) reads x through the read-only path with an L2 evict-first
// policy (ld.global.nc.L2::cache_hint, 8 16-byte vectors a lane; createpolicy makes the policy, which ptxas
// folds into one uniform register), with no evict-first (.cs) load, and stores y with plain stores; its
// general kernel, AddNorm's, the softmax backward's full-row kernel and cross-entropy's keep the read-only
// loads without a policy. The kernels are templates, instantiated here; KERNEL is a pattern of their
// mangled PTX names.
// @arch sm_90
// @nolocal
// @expect [^(]*rowOpWarpKernelINS0_10NormParamsIfEELi32ELi8ELb1ELi128ELb1E[^(]* == 8 ld\.global\.nc\.L2::cache_hint\.v4
// @expect [^(]*rowOpWarpKernelINS0_10NormParamsIfEELi32ELi8ELb1ELi128ELb1E[^(]* >= 1 createpolicy\.fractional\.L2::evict_first
// @expect [^(]*rowOpWarpKernelINS0_10NormParamsIfEELi32ELi8ELb1ELi128ELb1E[^(]* == 0 ld\.global\.cs
// @expect [^(]*rowOpWarpKernelINS0_10NormParamsIfEELi32ELi8ELb1ELi128ELb1E[^(]* == 0 st\.global\.cs
// @expect [^(]*rowOpWarpKernelINS0_10NormParamsIfEELi32ELi8ELb1ELi128ELb0E[^(]* == 0 cache_hint
// @expect [^(]*rowOpWarpKernelINS0_10NormParamsIfEELi32ELi8ELb1ELi128ELb0E[^(]* == 8 ld\.global\.nc\.v4
// @expect [^(]*rowOpWarpKernelINS0_13AddNormParamsIffEELi32ELi8ELb1ELi128ELb0E[^(]* == 0 cache_hint
// @expect [^(]*rowOpWarpKernelINS0_13AddNormParamsIffEELi32ELi8ELb1ELi128ELb0E[^(]* == 16 ld\.global\.nc\.v4
// @expect [^(]*rowOpWarpKernelINS0_21SoftmaxBackwardParamsIfEELi32ELi8ELb1ELi128ELb1E[^(]* == 16 ld\.global\.nc\.v4
// @expect [^(]*rowOpWarpKernelINS0_21SoftmaxBackwardParamsIfEELi32ELi8ELb1ELi128ELb1E[^(]* == 0 cache_hint
// @expect [^(]*rowOpWarpKernelINS0_21SoftmaxBackwardParamsIfEELi32ELi8ELb1ELi128ELb1E[^(]* == 0 st\.global\.cs
// @expect [^(]*rowOpWarpKernelINS0_18CrossEntropyParamsIfEELi32ELi8ELb1ELi128ELb0E[^(]* == 0 cache_hint
// @expect [^(]*rowOpWarpKernelINS0_18CrossEntropyParamsIfEELi32ELi8ELb1ELi128ELb0E[^(]* >= 8 ld\.global\.nc\.v4
#include <warpkit/device/add_norm.cuh>
#include <warpkit/device/cross_entropy.cuh>
#include <warpkit/device/norm.cuh>
#include <warpkit/device/softmax_backward.cuh>

namespace warpkit {
namespace detail {
template __global__ void rowOpWarpKernel<NormParams<float>, 32, 8, true, 128, true>(NormParams<float>, long long, int);
template __global__ void rowOpWarpKernel<NormParams<float>, 32, 8, true, 128, false>(NormParams<float>, long long, int);
template __global__ void rowOpWarpKernel<AddNormParams<float>, 32, 8, true, 128, false>(AddNormParams<float>, long long,
                                                                                        int);
template __global__ void
rowOpWarpKernel<SoftmaxBackwardParams<float>, 32, 8, true, 128, true>(SoftmaxBackwardParams<float>, long long, int);
template __global__ void rowOpWarpKernel<CrossEntropyParams<float>, 32, 8, true, 128, false>(CrossEntropyParams<float>,
                                                                                             long long, int);
} // namespace detail
} // namespace warpkit
