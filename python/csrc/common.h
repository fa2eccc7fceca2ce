// What the binding files share: the element-type dispatch, the row view of a 2-D tensor, the
// workspace of a two-call C function, and the status a binding returns. The Python side
// (warpkit/_ops_*.py, warpkit/distributed.py) checks every argument and moves dimensions; the
// operators' kernels (module.cpp, ops_select.cpp: ops.h) allocate the outputs, take the row views and
// answer empty inputs; the functions here check again what they rely on and launch on PyTorch's
// current stream. They return a Status instead of throwing: the host compiler's files (ops.h's raise)
// turn a failed one into a Python exception.
#pragma once

#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace wkt {

/// What a binding returns: msg null on success; else what failed, with the CUDA error if any.
struct Status {
    const char* msg;
    cudaError_t err;
};
inline Status ok() { return Status{nullptr, cudaSuccess}; }
inline Status fail(const char* msg) { return Status{msg, cudaSuccess}; }
inline Status cudaStatus(cudaError_t e, const char* call) { return e == cudaSuccess ? ok() : Status{call, e}; }
#define WKT_REQUIRE(cond, msg)                \
    do {                                      \
        if (!(cond)) return ::wkt::fail(msg); \
    } while (0)
#define WKT_TRY(expr)                    \
    do {                                 \
        const ::wkt::Status s_ = (expr); \
        if (s_.msg) return s_;           \
    } while (0)

/// The CUDA element type of a torch element type.
template <typename A> struct Elem;
template <> struct Elem<float> { using type = float; };
template <> struct Elem<at::Half> { using type = __half; };
template <> struct Elem<at::BFloat16> { using type = __nv_bfloat16; };

/// t's data as the CUDA element type of A; nullptr for an undefined or empty tensor (none).
template <typename A> inline typename Elem<A>::type* ptr(const at::Tensor& t) {
    return t.defined() && t.numel() > 0 ? static_cast<typename Elem<A>::type*>(t.data_ptr()) : nullptr;
}
inline float* fptr(const at::Tensor& t) {
    return t.defined() && t.numel() > 0 ? static_cast<float*>(t.data_ptr()) : nullptr;
}
inline bool given(const at::Tensor& t) { return t.defined() && t.numel() > 0; }

/// f(A{}) with A the torch element type of st (float, Half, BFloat16); its Status.
template <typename F> inline Status dispatch(at::ScalarType st, F&& f) {
    if (st == at::kFloat) return f(float{});
    if (st == at::kHalf) return f(at::Half{});
    if (st == at::kBFloat16) return f(at::BFloat16{});
    return fail("dtype must be float32, float16 or bfloat16");
}

/// f(A{}, rows, cols) for the rows x cols tensor x under its device's guard, A its torch element
/// type; success without a call when x is empty.
template <typename F> inline Status forRows(const at::Tensor& x, F&& f) {
    if (x.numel() == 0) return ok();
    const c10::cuda::CUDAGuard guard(x.device());
    return dispatch(x.scalar_type(), [&](auto tag) { return f(tag, (long long)x.size(0), (int)x.size(1)); });
}

/// A 2-D CUDA tensor of rows with a unit element stride and a row stride of at least a row (what
/// the row calls take with a leading dimension), of at most 2^31 - 1 columns.
inline bool rowsOk(const at::Tensor& t) {
    return t.defined() && t.is_cuda() && t.dim() == 2 && t.size(1) <= INT32_MAX &&
           (t.stride(1) == 1 || t.size(1) <= 1) && (t.size(0) <= 1 || t.stride(0) >= t.size(1));
}

/// A contiguous float32 CUDA vector of `rows` values: a loss or a statistic a row.
inline bool rowValuesOk(const at::Tensor& t, int64_t rows) {
    return t.is_cuda() && t.scalar_type() == at::kFloat && t.numel() == rows && t.is_contiguous();
}

/// A contiguous int64 CUDA vector of `rows` class indices: the targets of the loss calls.
inline bool targetsOk(const at::Tensor& t, int64_t rows) {
    return t.is_cuda() && t.scalar_type() == at::kLong && t.dim() == 1 && t.size(0) == rows && t.is_contiguous();
}

/// A sampler's output and seed: out a contiguous int64 CUDA vector of `rows` tokens, seedOffset
/// none or a contiguous int64 CUDA tensor {seed, offset}.
inline Status samplerArgsOk(const at::Tensor& out, int64_t rows, const at::Tensor& seedOffset) {
    WKT_REQUIRE(out.is_cuda() && out.scalar_type() == at::kLong && out.is_contiguous() && out.numel() == rows,
                "out must be a contiguous int64 vector of a value a row");
    WKT_REQUIRE(!given(seedOffset) || (seedOffset.is_cuda() && seedOffset.scalar_type() == at::kLong &&
                                       seedOffset.numel() == 2 && seedOffset.is_contiguous()),
                "seed_offset must be a contiguous int64 CUDA tensor {seed, offset}");
    return ok();
}

/// The row stride of a rowsOk tensor (its row length when it has one row).
inline long long ld(const at::Tensor& t) { return t.size(0) > 1 ? t.stride(0) : t.size(1); }

/// An uninitialised byte buffer from PyTorch's caching allocator (on the current stream).
inline at::Tensor workspace(size_t bytes, const at::Tensor& like) {
    return at::empty({(int64_t)(bytes > 0 ? bytes : 1)}, like.options().dtype(at::kByte));
}

inline cudaStream_t stream() { return at::cuda::getCurrentCUDAStream(); }

/// Runs a two-call C function call(workspace, &bytes): the size query, a workspace from the
/// caching allocator, the call.
template <typename F> inline Status withWorkspace(const at::Tensor& like, const char* name, F&& call) {
    size_t bytes = 0;
    WKT_TRY(cudaStatus(call(nullptr, &bytes), name));
    const at::Tensor ws = workspace(bytes, like);
    return cudaStatus(call(ws.data_ptr(), &bytes), name);
}

} // namespace wkt

// The bindings (one file each; the operators' kernels and module.cpp's eager forms call them). Tensors of
// size 0 stand for "none".
wkt::Status softmaxForward(const at::Tensor& x, const at::Tensor& y, bool log);
wkt::Status softmaxBackward(const at::Tensor& y, const at::Tensor& dy, const at::Tensor& dx, bool log);
wkt::Status normForward(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, double eps, const at::Tensor& y,
                        const at::Tensor& mean, const at::Tensor& rstd, bool rms);
wkt::Status normBackward(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& w, const at::Tensor& mean,
                         const at::Tensor& rstd, const at::Tensor& dx, const at::Tensor& dw, const at::Tensor& db,
                         bool rms);
wkt::Status normAddForward(const at::Tensor& x, const at::Tensor& r, const at::Tensor& w, const at::Tensor& b,
                           double eps, const at::Tensor& h, const at::Tensor& y, const at::Tensor& mean,
                           const at::Tensor& rstd, bool rms);
wkt::Status normAddBackward(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& w, const at::Tensor& mean,
                            const at::Tensor& rstd, const at::Tensor& dres, const at::Tensor& dx, const at::Tensor& dr,
                            const at::Tensor& dw, const at::Tensor& db, bool rms);
wkt::Status crossEntropyForward(const at::Tensor& logits, const at::Tensor& target, int64_t ignoreIndex,
                                double smoothing, const at::Tensor& loss, const at::Tensor& grad);
wkt::Status crossEntropyScale(const at::Tensor& grad, const at::Tensor& scale, const at::Tensor& divisor,
                              const at::Tensor& out);
wkt::Status crossEntropyReduce(const at::Tensor& loss, const at::Tensor& target, int64_t ignoreIndex,
                               const at::Tensor& out, const at::Tensor& count);
wkt::Status topk(const at::Tensor& x, int64_t k, bool largest, const at::Tensor& values, const at::Tensor& indices);
wkt::Status sample(const at::Tensor& logits, double temperature, int64_t topK, double topP, double minP, int64_t seed,
                   int64_t offset, const at::Tensor& seedOffset, const at::Tensor& out);
wkt::Status segmentSoftmax(const at::Tensor& x, const at::Tensor& dy, const at::Tensor& offsets, bool log,
                           const at::Tensor& out);
wkt::Status segmentReduce(const at::Tensor& x, const at::Tensor& offsets, int64_t op, const at::Tensor& out);
wkt::Status shardStats(const at::Tensor& x, const at::Tensor& target, int64_t shardBegin, const at::Tensor& stats);
wkt::Status statsMerge(const at::Tensor& gathered, const at::Tensor& stats);
wkt::Status shardSoftmaxApply(const at::Tensor& x, const at::Tensor& stats, bool log, const at::Tensor& y);
wkt::Status shardCrossEntropyFinish(const at::Tensor& logits, const at::Tensor& target, const at::Tensor& stats,
                                    int64_t shardBegin, int64_t vocab, int64_t ignoreIndex, const at::Tensor& loss,
                                    const at::Tensor& grad);
wkt::Status shardTopK(const at::Tensor& x, int64_t k, bool largest, int64_t shardBegin, const at::Tensor& values,
                      const at::Tensor& indices);
wkt::Status topkMerge(const at::Tensor& gv, const at::Tensor& gi, bool largest, const at::Tensor& values,
                      const at::Tensor& indices);
wkt::Status sampleMerge(const at::Tensor& gv, const at::Tensor& gi, double temperature, double topP, double minP,
                        int64_t seed, int64_t offset, const at::Tensor& seedOffset, const at::Tensor& out);

// The per-dtype launches behind those bindings (A: float, at::Half or at::BFloat16; B: a 16-bit
// residual's beside a float32 x). Each binding checks its arguments, takes the device guard and
// dispatches on the dtype; <family>_launch.cuh defines its family's launches and
// <family>_f32.cu, _f16.cu and _bf16.cu instantiate them, one dtype a translation unit, so that
// the extension's parallel build waits on no file holding every dtype's kernels.
#define WKT_INSTANTIATE(fn, ...) template decltype(fn<__VA_ARGS__>) fn<__VA_ARGS__>;
template <typename A> wkt::Status softmaxForwardAs(const at::Tensor& x, const at::Tensor& y, bool log);
template <typename A>
wkt::Status softmaxBackwardAs(const at::Tensor& y, const at::Tensor& dy, const at::Tensor& dx, bool log);
template <typename A> wkt::Status normForwardAs(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b,
                                                double eps, const at::Tensor& y, const at::Tensor& mean,
                                                const at::Tensor& rstd, bool rms);
template <typename A> wkt::Status normBackwardAs(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& w,
                                                 const at::Tensor& mean, const at::Tensor& rstd, const at::Tensor& dres,
                                                 const at::Tensor& dx, const at::Tensor& dw, const at::Tensor& db,
                                                 bool rms);
template <typename B>
wkt::Status normBackwardNarrowAs(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& w, const at::Tensor& mean,
                                 const at::Tensor& rstd, const at::Tensor& dres, const at::Tensor& dx,
                                 const at::Tensor& dr, const at::Tensor& dw, const at::Tensor& db, bool rms);
template <typename A, typename B>
wkt::Status normAddForwardAs(const at::Tensor& x, const at::Tensor& r, const at::Tensor& w, const at::Tensor& b,
                             double eps, const at::Tensor& h, const at::Tensor& y, const at::Tensor& mean,
                             const at::Tensor& rstd, bool rms);
template <typename A>
wkt::Status topkAs(const at::Tensor& x, int64_t k, bool largest, const at::Tensor& values, const at::Tensor& indices);
template <typename A> wkt::Status sampleAs(const at::Tensor& logits, double temperature, int64_t topK, double topP,
                                           double minP, int64_t seed, int64_t offset, const at::Tensor& seedOffset,
                                           const at::Tensor& out);
template <typename A> wkt::Status segmentSoftmaxAs(const at::Tensor& x, const at::Tensor& dy, const at::Tensor& offsets,
                                                   bool log, const at::Tensor& out);
template <typename A>
wkt::Status segmentReduceAs(const at::Tensor& x, const at::Tensor& offsets, int64_t op, const at::Tensor& out);
template <typename A>
wkt::Status shardStatsAs(const at::Tensor& x, const at::Tensor& target, int64_t shardBegin, const at::Tensor& stats);
template <typename A>
wkt::Status shardSoftmaxApplyAs(const at::Tensor& x, const at::Tensor& stats, bool log, const at::Tensor& y);
template <typename A> wkt::Status shardCrossEntropyFinishAs(const at::Tensor& logits, const at::Tensor& target,
                                                            const at::Tensor& stats, int64_t shardBegin, int64_t vocab,
                                                            int64_t ignoreIndex, const at::Tensor& loss,
                                                            const at::Tensor& grad);
template <typename A> wkt::Status shardTopKAs(const at::Tensor& x, int64_t k, bool largest, int64_t shardBegin,
                                              const at::Tensor& values, const at::Tensor& indices);
template <typename A> wkt::Status topkMergeAs(const at::Tensor& gv, const at::Tensor& gi, bool largest,
                                              const at::Tensor& values, const at::Tensor& indices);
template <typename A> wkt::Status sampleMergeAs(const at::Tensor& gv, const at::Tensor& gi, double temperature,
                                                double topP, double minP, int64_t seed, int64_t offset,
                                                const at::Tensor& seedOffset, const at::Tensor& out);
