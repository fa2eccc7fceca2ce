// PTX shape of the row kernels' cache hints (docs/tuning.md K7; device/detail/row_kernels.cuh): LayerNorm's
// warp kernels (fp32, 32 lanes x 8 vectors; the full-row and the general form) read x with evict-first loads
// (ld.global.cs, 8 16-byte vectors a lane), none through the read-only path, and store y with plain stores;
// the softmax backward's reads y and dy the same way (16 vectors a lane); cross-entropy keeps the default
// hints (read-only loads). The kernels are templates, instantiated here; KERNEL is a pattern of their
// mangled PTX names.
// @arch sm_90
// @nolocal
// @expect [^(]*rowOpWarpKernelINS0_10NormParamsIfEELi32ELi8ELb1ELi128ELb1E[^(]* == 8 ld\.global\.cs\.v4
// @expect [^(]*rowOpWarpKernelINS0_10NormParamsIfEELi32ELi8ELb1ELi128ELb1E[^(]* == 0 ld\.global\.nc
// @expect [^(]*rowOpWarpKernelINS0_10NormParamsIfEELi32ELi8ELb1ELi128ELb1E[^(]* == 0 st\.global\.cs
// @expect [^(]*rowOpWarpKernelINS0_10NormParamsIfEELi32ELi8ELb1ELi128ELb0E[^(]* == 8 ld\.global\.cs\.v4
// @expect [^(]*rowOpWarpKernelINS0_10NormParamsIfEELi32ELi8ELb1ELi128ELb0E[^(]* == 0 ld\.global\.nc
// @expect [^(]*rowOpWarpKernelINS0_10NormParamsIfEELi32ELi8ELb1ELi128ELb0E[^(]* == 0 st\.global\.cs
// @expect [^(]*rowOpWarpKernelINS0_21SoftmaxBackwardParamsIfEELi32ELi8ELb1ELi128ELb0E[^(]* == 16 ld\.global\.cs\.v4
// @expect [^(]*rowOpWarpKernelINS0_21SoftmaxBackwardParamsIfEELi32ELi8ELb1ELi128ELb0E[^(]* == 0 ld\.global\.nc
// @expect [^(]*rowOpWarpKernelINS0_21SoftmaxBackwardParamsIfEELi32ELi8ELb1ELi128ELb0E[^(]* == 0 st\.global\.cs
// @expect [^(]*rowOpWarpKernelINS0_18CrossEntropyParamsIfEELi32ELi8ELb1ELi128ELb0E[^(]* == 0 ld\.global\.cs
// @expect [^(]*rowOpWarpKernelINS0_18CrossEntropyParamsIfEELi32ELi8ELb1ELi128ELb0E[^(]* >= 8 ld\.global\.nc\.v4
#include <warpkit/device/cross_entropy.cuh>
#include <warpkit/device/norm.cuh>
#include <warpkit/device/softmax_backward.cuh>

namespace warpkit {
namespace detail {
template __global__ void rowOpWarpKernel<NormParams<float>, 32, 8, true, 128, true>(NormParams<float>, long long, int);
template __global__ void rowOpWarpKernel<NormParams<float>, 32, 8, true, 128, false>(NormParams<float>, long long, int);
template __global__ void
rowOpWarpKernel<SoftmaxBackwardParams<float>, 32, 8, true, 128, false>(SoftmaxBackwardParams<float>, long long, int);
template __global__ void rowOpWarpKernel<CrossEntropyParams<float>, 32, 8, true, 128, false>(CrossEntropyParams<float>,
                                                                                             long long, int);
} // namespace detail
} // namespace warpkit
