// Selection over the rows of a 2-D tensor: the k largest or smallest (warpkit::rowTopK; k = 1:
// rowArgMax / rowArgMin, the same answer) and a sampled column (rowSample), device/topk.cuh, CUB's
// two-call workspace rule. The launches are select_launch.cuh's, one file a dtype.
#include "common.h"

/// values (optional), indices (int64): rows x k, contiguous: each row's k largest (or smallest),
/// ranked.
wkt::Status topk(const at::Tensor& x, int64_t k, bool largest, const at::Tensor& values, const at::Tensor& indices) {
    WKT_REQUIRE(wkt::rowsOk(x), "x must be a CUDA row matrix with a unit element stride");
    WKT_REQUIRE(indices.is_cuda() && indices.scalar_type() == at::kLong && indices.is_contiguous() &&
                    indices.numel() == x.size(0) * k,
                "indices must be a contiguous int64 rows x k matrix");
    WKT_REQUIRE(!wkt::given(values) || (values.is_contiguous() && values.scalar_type() == x.scalar_type() &&
                                        values.numel() == x.size(0) * k),
                "values must be a contiguous rows x k matrix of x's dtype");
    if (x.size(0) == 0 || k == 0) return wkt::ok();
    WKT_REQUIRE(k >= 1 && k <= x.size(1), "k out of range for the row length");
    const c10::cuda::CUDAGuard guard(x.device());
    return wkt::dispatch(x.scalar_type(),
                         [&](auto tag) { return topkAs<decltype(tag)>(x, k, largest, values, indices); });
}

/// out[r] (int64) = a column of row r drawn from softmax(logits / temperature) restricted by top-k,
/// min-p and top-p. seedOffset: none (seed and offset by value) or an int64 CUDA tensor {seed,
/// offset} read when the kernel runs (a CUDA graph draws anew on each replay once it is advanced).
wkt::Status sample(const at::Tensor& logits, double temperature, int64_t topK, double topP, double minP, int64_t seed,
                   int64_t offset, const at::Tensor& seedOffset, const at::Tensor& out) {
    WKT_REQUIRE(wkt::rowsOk(logits), "logits must be a CUDA row matrix with a unit element stride");
    WKT_TRY(wkt::samplerArgsOk(out, logits.size(0), seedOffset));
    if (logits.size(0) == 0) return wkt::ok();
    const c10::cuda::CUDAGuard guard(logits.device());
    return wkt::dispatch(logits.scalar_type(), [&](auto tag) {
        return sampleAs<decltype(tag)>(logits, temperature, topK, topP, minP, seed, offset, seedOffset, out);
    });
}
