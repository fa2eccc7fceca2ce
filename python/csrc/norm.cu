// LayerNorm and RMSNorm over the rows of a 2-D tensor, forward (warpkit::rowLayerNorm / rowRmsNorm,
// device/norm.cuh, each row's mean and rstd kept for the backward) and backward
// (warpkit::rowLayerNormBackward / rowRmsNormBackward, device/norm_backward.cuh: dx, and dw / db
// reduced over the rows deterministically, CUB's two-call workspace rule), and their residual-add
// forms (warpkit::rowAddLayerNorm / rowAddRmsNorm, device/add_norm.cuh: h = x + r written too;
// rowLayerNormBackwardAdd / rowRmsNormBackwardAdd: h's gradient added into dx). The add forms take
// a residual r of float16 / bfloat16 beside a float32 x (autocast's residual stream) without a cast:
// h = x + r in float32, and the backward writes r's gradient in r's dtype too (dr). The launches
// are norm_launch.cuh's, one file a dtype.
#include "common.h"

namespace {

/// A weight or bias (or its gradient) of cols contiguous elements of x's dtype, or none (empty).
bool vectorOk(const at::Tensor& v, const at::Tensor& x) {
    return !wkt::given(v) || (v.is_cuda() && v.device() == x.device() && v.scalar_type() == x.scalar_type() &&
                              v.dim() == 1 && v.size(0) == x.size(1) && v.stride(0) == 1);
}

/// A float vector of one value a row, or none (empty).
bool statsOk(const at::Tensor& s, const at::Tensor& x) { return !wkt::given(s) || wkt::rowValuesOk(s, x.size(0)); }

/// A residual (or its gradient) r beside x: x's dtype, or float16 / bfloat16 beside a float32 x.
bool residualTypeOk(const at::Tensor& r, const at::Tensor& x) {
    const at::ScalarType rt = r.scalar_type();
    return rt == x.scalar_type() || (x.scalar_type() == at::kFloat && (rt == at::kHalf || rt == at::kBFloat16));
}

/// f(B{}) with B the 16-bit torch element type of r (Half or BFloat16), under x's device guard: the
/// calls whose residual is narrower than their float32 x.
template <typename F> wkt::Status forNarrow(const at::Tensor& x, const at::Tensor& r, F&& f) {
    if (x.numel() == 0) return wkt::ok();
    const c10::cuda::CUDAGuard guard(x.device());
    if (r.scalar_type() == at::kHalf) return f(at::Half{});
    if (r.scalar_type() == at::kBFloat16) return f(at::BFloat16{});
    return wkt::fail("the residual must be float16 or bfloat16 beside a float32 x");
}

} // namespace

/// y = LayerNorm(x) (rms: RMSNorm; b and mean unused) of rows x cols; mean, rstd: float, a row each.
wkt::Status normForward(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, double eps, const at::Tensor& y,
                        const at::Tensor& mean, const at::Tensor& rstd, bool rms) {
    WKT_REQUIRE(wkt::rowsOk(x) && wkt::rowsOk(y), "x and out must be CUDA row matrices with a unit element stride");
    WKT_REQUIRE(x.sizes() == y.sizes() && x.scalar_type() == y.scalar_type(), "out must match x");
    WKT_REQUIRE(vectorOk(w, x) && vectorOk(b, x), "weight and bias must be contiguous vectors of a row, x's dtype");
    WKT_REQUIRE(statsOk(mean, x) && statsOk(rstd, x), "mean and rstd must be float32 vectors of a value a row");
    return wkt::forRows(
        x, [&](auto tag, long long, int) { return normForwardAs<decltype(tag)>(x, w, b, eps, y, mean, rstd, rms); });
}

namespace {

/// dx (and dw, db where given) from dy, x, w and the forward's mean / rstd (rms: RMSNorm's), plus
/// dres where given (the Add calls); dr where given: dx's values in a 16-bit residual's dtype too
/// (x float32, dres given).
wkt::Status normBackwardRes(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& w, const at::Tensor& mean,
                            const at::Tensor& rstd, const at::Tensor& dres, const at::Tensor& dx, const at::Tensor& dr,
                            const at::Tensor& dw, const at::Tensor& db, bool rms) {
    const bool res = wkt::given(dres);
    const bool mixed = wkt::given(dr) && dr.scalar_type() != x.scalar_type();
    WKT_REQUIRE(!mixed || (res && wkt::rowsOk(dr) && dr.sizes() == x.sizes() && residualTypeOk(dr, x)),
                "the residual's gradient must be a float16 / bfloat16 row matrix of x's shape beside a float32 x, "
                "with dres");
    WKT_REQUIRE(wkt::rowsOk(dy) && wkt::rowsOk(x) && wkt::rowsOk(dx) && (!res || wkt::rowsOk(dres)),
                "grads, x and out must be CUDA row matrices with a unit element stride");
    WKT_REQUIRE(dy.sizes() == x.sizes() && dx.sizes() == x.sizes() && dy.scalar_type() == x.scalar_type() &&
                    dx.scalar_type() == x.scalar_type() &&
                    (!res || (dres.sizes() == x.sizes() && dres.scalar_type() == x.scalar_type())),
                "grads and out must match x");
    WKT_REQUIRE(vectorOk(w, x) && vectorOk(dw, x) && vectorOk(db, x),
                "weight and its gradients must be contiguous vectors of a row, x's dtype");
    WKT_REQUIRE(statsOk(mean, x) && statsOk(rstd, x) && wkt::given(rstd) && (rms || wkt::given(mean)),
                "mean and rstd must be the forward's float32 statistics");
    if (mixed)
        return forNarrow(x, dr, [&](auto tag) {
            return normBackwardNarrowAs<decltype(tag)>(dy, x, w, mean, rstd, dres, dx, dr, dw, db, rms);
        });
    return wkt::forRows(x, [&](auto tag, long long, int) {
        return normBackwardAs<decltype(tag)>(dy, x, w, mean, rstd, dres, dx, dw, db, rms);
    });
}

} // namespace

/// dx (and dw, db where given) from dy, x, w and the forward's mean / rstd (rms: RMSNorm's).
wkt::Status normBackward(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& w, const at::Tensor& mean,
                         const at::Tensor& rstd, const at::Tensor& dx, const at::Tensor& dw, const at::Tensor& db,
                         bool rms) {
    return normBackwardRes(dy, x, w, mean, rstd, at::Tensor(), dx, at::Tensor(), dw, db, rms);
}

/// h = x + r and y = LayerNorm(h) (rms: RMSNorm) of rows x cols; mean, rstd: float, a row each.
wkt::Status normAddForward(const at::Tensor& x, const at::Tensor& r, const at::Tensor& w, const at::Tensor& b,
                           double eps, const at::Tensor& h, const at::Tensor& y, const at::Tensor& mean,
                           const at::Tensor& rstd, bool rms) {
    WKT_REQUIRE(wkt::rowsOk(x) && wkt::rowsOk(r) && wkt::rowsOk(h) && wkt::rowsOk(y),
                "x, residual and the outputs must be CUDA row matrices with a unit element stride");
    WKT_REQUIRE(x.sizes() == r.sizes() && x.sizes() == h.sizes() && x.sizes() == y.sizes() && residualTypeOk(r, x) &&
                    h.scalar_type() == x.scalar_type() && y.scalar_type() == x.scalar_type(),
                "residual and the outputs must match x (the residual: x's dtype, or 16-bit beside float32)");
    WKT_REQUIRE(vectorOk(w, x) && vectorOk(b, x), "weight and bias must be contiguous vectors of a row, x's dtype");
    WKT_REQUIRE(statsOk(mean, x) && statsOk(rstd, x), "mean and rstd must be float32 vectors of a value a row");
    if (r.scalar_type() != x.scalar_type())
        return forNarrow(x, r, [&](auto tag) {
            return normAddForwardAs<float, decltype(tag)>(x, r, w, b, eps, h, y, mean, rstd, rms);
        });
    return wkt::forRows(x, [&](auto tag, long long, int) {
        using A = decltype(tag);
        return normAddForwardAs<A, A>(x, r, w, b, eps, h, y, mean, rstd, rms);
    });
}

/// normBackward with dres (h's gradient from its other uses) added into dx; dr (none: empty) the
/// same values in a 16-bit residual's dtype (x float32).
wkt::Status normAddBackward(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& w, const at::Tensor& mean,
                            const at::Tensor& rstd, const at::Tensor& dres, const at::Tensor& dx, const at::Tensor& dr,
                            const at::Tensor& dw, const at::Tensor& db, bool rms) {
    WKT_REQUIRE(wkt::given(dres), "the residual gradient must be given");
    return normBackwardRes(dy, x, w, mean, rstd, dres, dx, dr, dw, db, rms);
}
