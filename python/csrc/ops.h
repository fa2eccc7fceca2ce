// What the operators' host files (module.cpp, ops_select.cpp; the host compiler's, not nvcc's) share:
// a failed Status raised as a Python exception, the row view of a tensor, the argument checks of the
// registered operators' CUDA kernels, and their registration: each operator's CUDA kernel (a C++
// function taking its schema's arguments, warpkit/_ops_*.py and warpkit/distributed.py), the one
// AutogradCUDA kernel in front of them all, and the same function as warpkit._C.<op name> (the Python
// op's body, which CUDA tensors never reach once the CUDA kernel is registered).
#pragma once

#include "common.h"

#include <torch/library.h>

#include <optional>

namespace wkt {

using OptTensor = std::optional<at::Tensor>;

/// Raises RuntimeError "warpkit.<op>: <what failed>[ failed: <CUDA error>]" for a failed Status.
inline void raise(const Status& s, const char* op) {
    if (s.msg == nullptr) return;
    if (s.err != cudaSuccess) TORCH_CHECK(false, "warpkit.", op, ": ", s.msg, " failed: ", cudaGetErrorString(s.err));
    TORCH_CHECK(false, "warpkit.", op, ": ", s.msg);
}

/// t as a rows x cols matrix over its last dimension (cols = its last size; a view where torch's
/// reshape gives one), made contiguous where its strides are not what the row calls take.
inline at::Tensor lastRows(const at::Tensor& t, int64_t cols) {
    const at::Tensor t2 = t.dim() == 2 ? t : t.reshape({t.numel() / cols, cols});
    return rowsOk(t2) ? t2 : t2.contiguous();
}

/// *t, or the undefined tensor (the device calls' "none") where t holds none.
inline at::Tensor orNone(const OptTensor& t) { return t.has_value() ? *t : at::Tensor(); }

/// t is a CUDA tensor (the operators' CUDA kernels also run for a CUDA tensor beside CPU ones).
inline void checkCuda(const at::Tensor& t, const char* op) {
    TORCH_CHECK(t.is_cuda(), "warpkit.", op, ": expected CUDA tensors, got one on ", t.device());
}

/// x is a CUDA tensor of `dims` dimensions (2: rows).
inline void checkDims(const at::Tensor& x, int64_t dims, const char* op) {
    checkCuda(x, op);
    TORCH_CHECK(x.dim() == dims, "warpkit.", op, ": expected a ", dims, "-D tensor, got ", x.dim(), " dimensions");
}

/// The boxed AutogradCUDA kernel of every registered operator (module.cpp).
void autogradCuda(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack);

/// The end of registerOps's (name, f) pairs.
inline void registerOps(torch::Library&, torch::Library&, pybind11::module_&) {}

/// Registers each (name, f) pair's f as the CUDA kernel of warpkit::<name> in `cuda`, autogradCuda as
/// its AutogradCUDA kernel in `autograd`, and f as m.<name> (warpkit._C). The dispatcher checks f's
/// signature against the op's schema: a mismatch raises when warpkit._C imports.
template <typename F, typename... Rest> void registerOps(torch::Library& cuda, torch::Library& autograd,
                                                         pybind11::module_& m, const char* name, F* f, Rest... rest) {
    cuda.impl(name, f);
    autograd.impl(name, torch::CppFunction::makeFromBoxedFunction<&autogradCuda>());
    m.def(name, f);
    registerOps(cuda, autograd, m, rest...);
}

} // namespace wkt

/// Registers the selection, segment and sharded operators' kernels (ops_select.cpp) as registerOps does.
void registerSelectOps(torch::Library& cuda, torch::Library& autograd, pybind11::module_& m);
