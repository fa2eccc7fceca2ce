// The torch binding of warpkit::rowSoftmax (include/warpkit/device/softmax.cuh): softmax and
// log-softmax over one dimension of a CUDA tensor, on PyTorch's current stream.
#include <torch/extension.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <warpkit/device/softmax.cuh>

namespace {

/// A 2-D view (rows of `cols` elements, unit element stride, `ld` elements apart) of x's elements,
/// when its strides allow one: every dimension but the last collapses into the row index.
bool rowsView(const at::Tensor& x, int64_t* rows, int64_t* ld) {
    const int64_t d = x.dim();
    if (x.stride(d - 1) != 1 && x.size(d - 1) > 1) return false;
    *rows = 1;
    *ld = x.size(d - 1);
    int64_t expect = -1; // the stride the next-outer dimension must have
    for (int64_t i = d - 2; i >= 0; --i) {
        if (x.size(i) == 1) continue;
        if (expect < 0) *ld = x.stride(i);
        else if (x.stride(i) != expect) return false;
        expect = x.stride(i) * x.size(i);
        *rows *= x.size(i);
    }
    return *ld >= x.size(d - 1);
}

at::Tensor softmaxImpl(const at::Tensor& input, int64_t dim, bool log) {
    TORCH_CHECK(input.is_cuda(), "warpkit.", log ? "log_softmax" : "softmax", ": input must be a CUDA tensor, got one on ",
                input.device());
    const auto st = input.scalar_type();
    TORCH_CHECK_TYPE(st == at::kFloat || st == at::kHalf || st == at::kBFloat16, "warpkit.", log ? "log_softmax" : "softmax",
                     ": dtype must be float32, float16 or bfloat16, got ", st);
    TORCH_CHECK(input.dim() >= 1, "warpkit softmax: input must have at least one dimension");
    dim = at::maybe_wrap_dim(dim, input.dim());
    TORCH_CHECK(input.size(dim) > 0, "warpkit softmax: dimension ", dim, " is empty");
    TORCH_CHECK(input.size(dim) <= INT32_MAX, "warpkit softmax: dimension ", dim, " is longer than 2^31 - 1");
    const c10::cuda::CUDAGuard guard(input.device());
    // The softmax dimension last; rows with a unit element stride and one row stride go as they
    // are, anything else is made contiguous first.
    at::Tensor x = dim == input.dim() - 1 ? input : input.transpose(dim, -1);
    int64_t rows = 0, ld = 0;
    if (!rowsView(x, &rows, &ld)) {
        x = x.contiguous();
        rowsView(x, &rows, &ld);
    }
    const int cols = (int)x.size(-1);
    at::Tensor y = at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
    if (x.numel() == 0) return dim == input.dim() - 1 ? y : y.transpose(dim, -1);
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const warpkit::SoftmaxKind kind = log ? warpkit::SoftmaxLog : warpkit::SoftmaxPlain;
    cudaError_t e;
    if (st == at::kFloat)
        e = warpkit::rowSoftmax(x.data_ptr<float>(), y.data_ptr<float>(), rows, cols, kind, ld, cols, stream);
    else if (st == at::kHalf)
        e = warpkit::rowSoftmax(reinterpret_cast<const __half*>(x.data_ptr<at::Half>()),
                                reinterpret_cast<__half*>(y.data_ptr<at::Half>()), rows, cols, kind, ld, cols, stream);
    else
        e = warpkit::rowSoftmax(reinterpret_cast<const __nv_bfloat16*>(x.data_ptr<at::BFloat16>()),
                                reinterpret_cast<__nv_bfloat16*>(y.data_ptr<at::BFloat16>()), rows, cols, kind, ld, cols, stream);
    TORCH_CHECK(e == cudaSuccess, "warpkit.rowSoftmax failed: ", cudaGetErrorString(e));
    return dim == input.dim() - 1 ? y : y.transpose(dim, -1);
}

} // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("softmax", [](const at::Tensor& x, int64_t dim) { return softmaxImpl(x, dim, false); }, "softmax over dim");
    m.def("log_softmax", [](const at::Tensor& x, int64_t dim) { return softmaxImpl(x, dim, true); }, "log-softmax over dim");
}
