// The extension module warpkit._C: the bindings of csrc/*.cu (common.h), each raising RuntimeError
// when it returns a failed Status; the eager operators' one-call forms; and the CUDA and AutogradCUDA
// kernels of every registered operator (these and ops_select.cpp's, ops.h), whose schemas, fake
// kernels and autograd formulas warpkit/_ops_*.py and warpkit/distributed.py register, so that
// torch.ops.warpkit.* on CUDA tensors (what a compiled graph calls) runs no Python.
#include "ops.h"

#include <ATen/core/LegacyTypeDispatch.h>
#include <c10/core/GradMode.h>

#include <cmath>

namespace {

using wkt::lastRows;
using wkt::OptTensor;
using wkt::orNone;
using wkt::raise;

/// f as a Python function that raises on a failed Status.
template <typename... A> auto raising(wkt::Status (*f)(A...), const char* op) {
    return [f, op](A... a) { raise(f(a...), op); };
}

// ---- the eager operators' one-call forms ---------------------------------------------------------
// warpkit's eager operators (warpkit/_ops_*.py, on plain CUDA tensors that their Python side has
// found fit: a supported dtype, no empty dimension, the dimension in range) call these once a call:
// the row view, the outputs' allocation and the launch in C++, rather than a Python-level torch
// call for each. Their backward forms take the forward's tensors as saved (any shape).

/// t in dtype st (t itself when it has it).
at::Tensor asType(const at::Tensor& t, at::ScalarType st) { return t.scalar_type() == st ? t : t.to(st); }

/// A new contiguous tensor of t2's shape, dtype and device.
at::Tensor emptyRows(const at::Tensor& t2) { return at::empty(t2.sizes(), t2.options()); }

/// The rows result y2 in the shape `like` has (y2 itself when it has it).
at::Tensor shapedAs(const at::Tensor& y2, const at::Tensor& like) {
    return like.dim() == 2 ? y2 : y2.view(like.sizes());
}

/// softmax (log: log-softmax) of x over dimension dim.
at::Tensor softmaxEager(const at::Tensor& x, int64_t dim, bool log) {
    const int64_t nd = x.dim();
    dim = dim < 0 ? dim + nd : dim;
    const bool last = dim == nd - 1;
    const at::Tensor xm = last ? x : x.movedim(dim, -1);
    const at::Tensor x2 = lastRows(xm, xm.size(-1));
    const at::Tensor y2 = emptyRows(x2);
    raise(softmaxForward(x2, y2, log), "softmax");
    const at::Tensor y = shapedAs(y2, xm);
    return last ? y : y.movedim(-1, dim);
}

/// The gradient of softmaxEager's x from its output y and y's gradient dy.
at::Tensor softmaxBackwardEager(const at::Tensor& y, const at::Tensor& dy, int64_t dim, bool log) {
    const int64_t nd = y.dim();
    dim = dim < 0 ? dim + nd : dim;
    const bool last = dim == nd - 1;
    const at::Tensor ym = last ? y : y.movedim(dim, -1);
    const at::Tensor dym = last ? dy : dy.movedim(dim, -1);
    const int64_t cols = ym.size(-1);
    const at::Tensor y2 = lastRows(ym, cols);
    const at::Tensor dy2 = lastRows(asType(dym, y.scalar_type()), cols);
    const at::Tensor dx2 = emptyRows(y2);
    raise(softmaxBackward(y2, dy2, dx2, log), "softmax_backward");
    const at::Tensor dx = shapedAs(dx2, ym);
    return last ? dx : dx.movedim(-1, dim);
}

/// The forward's statistics: (mean, rstd), float32 vectors of a value a row where wanted (mean
/// empty for RMSNorm), both undefined (none; None in Python) where not (a forward without a
/// backward: no allocation).
std::pair<at::Tensor, at::Tensor> normStats(const at::Tensor& x2, bool rms, bool stats) {
    if (!stats) return {at::Tensor(), at::Tensor()};
    const auto fo = x2.options().dtype(at::kFloat);
    return {at::empty({rms ? 0 : x2.size(0)}, fo), at::empty({x2.size(0)}, fo)};
}

/// (y, mean, rstd) of LayerNorm (rms: RMSNorm) of x over its last dimension (statistics as
/// normStats); w and b none or contiguous vectors of x's dtype.
std::tuple<at::Tensor, at::Tensor, at::Tensor> normEager(const at::Tensor& x, const OptTensor& w, const OptTensor& b,
                                                         double eps, bool rms, bool stats) {
    const at::Tensor x2 = lastRows(x, x.size(-1));
    const at::Tensor y2 = emptyRows(x2);
    const auto [mean, rstd] = normStats(x2, rms, stats);
    raise(normForward(x2, orNone(w), orNone(b), eps, y2, mean, rstd, rms), "norm");
    return {shapedAs(y2, x), mean, rstd};
}

/// (y, h, mean, rstd): h = x + r in their promoted dtype (as torch's x + r) and normEager of h. A
/// 16-bit operand of a float32 one is read as it is (the device call's mixed form; x and r swap
/// where r is the float32 one: the add commutes); otherwise both are cast to the promoted dtype.
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> normAddEager(const at::Tensor& x, const at::Tensor& r,
                                                                        const OptTensor& w, const OptTensor& b,
                                                                        double eps, bool rms, bool stats) {
    const int64_t cols = x.size(-1);
    const at::ScalarType pt = at::promoteTypes(x.scalar_type(), r.scalar_type());
    const bool swap = x.scalar_type() != pt && r.scalar_type() == pt;
    const at::Tensor& a = swap ? r : x;
    const at::Tensor& c = swap ? x : r;
    const bool narrow = pt == at::kFloat && (c.scalar_type() == at::kHalf || c.scalar_type() == at::kBFloat16);
    const at::Tensor x2 = lastRows(asType(a, pt), cols);
    const at::Tensor r2 = lastRows(narrow ? c : asType(c, pt), cols);
    const at::Tensor h2 = emptyRows(x2), y2 = emptyRows(x2);
    const auto [mean, rstd] = normStats(x2, rms, stats);
    raise(normAddForward(x2, r2, orNone(w), orNone(b), eps, h2, y2, mean, rstd, rms), "add_norm");
    return {shapedAs(y2, x), shapedAs(h2, x), mean, rstd};
}

/// (dx, dr, dw, db) of normEager's x (of any shape; x is h for the add forms) from y's gradient dy,
/// plus dres (h's gradient from its other uses: an add form's) where defined; dr: dx itself where
/// the residual's dtype `rt` is x's, else the same values rounded once to rt by the same kernel (a
/// 16-bit residual of a float32 h, with dres); dw / db empty where not needed.
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor>
normBackwardAddEager(const at::Tensor& dy, const at::Tensor& x, const OptTensor& w, const at::Tensor& mean,
                     const at::Tensor& rstd, const at::Tensor& dres, at::ScalarType rt, bool needW, bool needB,
                     bool rms) {
    const int64_t cols = x.size(-1);
    const at::Tensor x2 = lastRows(x, cols);
    const at::Tensor dy2 = lastRows(asType(dy, x.scalar_type()), cols);
    const at::Tensor dx2 = emptyRows(x2);
    const bool mixed = rt != x.scalar_type();
    const at::Tensor dr2 = mixed ? at::empty(x2.sizes(), x2.options().dtype(rt)) : at::Tensor();
    const at::Tensor dw = at::empty({needW ? cols : 0}, x2.options());
    const at::Tensor db = at::empty({needB ? cols : 0}, x2.options());
    if (dres.defined()) {
        const at::Tensor r2 = lastRows(asType(dres, x.scalar_type()), cols);
        raise(normAddBackward(dy2, x2, orNone(w), mean, rstd, r2, dx2, dr2, dw, db, rms), "add_norm_backward");
    } else {
        raise(normBackward(dy2, x2, orNone(w), mean, rstd, dx2, dw, db, rms), "norm_backward");
    }
    const at::Tensor dx = shapedAs(dx2, x);
    return {dx, mixed ? shapedAs(dr2, x) : dx, dw, db};
}

/// (dx, dw, db): normBackwardAddEager in x's dtype, with dres where given.
std::tuple<at::Tensor, at::Tensor, at::Tensor> normBackwardEager(const at::Tensor& dy, const at::Tensor& x,
                                                                 const OptTensor& w, const at::Tensor& mean,
                                                                 const at::Tensor& rstd, const OptTensor& dres,
                                                                 bool needW, bool needB, bool rms) {
    const auto [dx, dr, dw, db] =
        normBackwardAddEager(dy, x, w, mean, rstd, orNone(dres), x.scalar_type(), needW, needB, rms);
    return {dx, dw, db};
}

// ---- the registered operators' CUDA kernels ------------------------------------------------------
// Each takes its schema's arguments (warpkit/_ops_*.py) and every input the schema admits: 2-D rows,
// empty ones, a negative or NaN eps (computed by torch's own ops: the device calls refuse it). The
// Python ops' bodies call the same functions (warpkit._C's entries of the op's name).

using Tensors2 = std::tuple<at::Tensor, at::Tensor>;
using Tensors3 = std::tuple<at::Tensor, at::Tensor, at::Tensor>;
using Tensors4 = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor>;

void checkRows(const at::Tensor& x, const char* op) { wkt::checkDims(x, 2, op); }

at::Tensor softmaxOp(const at::Tensor& x, bool log) {
    checkRows(x, "softmax");
    return x.numel() ? softmaxEager(x, 1, log) : at::empty(x.sizes(), x.options());
}

at::Tensor softmaxBackwardOp(const at::Tensor& y, const at::Tensor& dy, bool log) {
    checkRows(y, "softmax_backward");
    return y.numel() ? softmaxBackwardEager(y, dy, 1, log) : at::empty(y.sizes(), y.options());
}

/// (y, mean, rstd) of x's rows (mean empty for RMSNorm). Empty rows: NaN statistics, as torch's.
Tensors3 normOp(const at::Tensor& x, const OptTensor& w, const OptTensor& b, double eps, bool rms) {
    checkRows(x, "norm");
    if (x.numel() && eps >= 0) return normEager(x, w, b, eps, rms, true);
    const int64_t rows = x.size(0);
    const auto fo = x.options().dtype(at::kFloat);
    const at::Tensor y = at::empty(x.sizes(), x.options());
    if (x.numel() == 0) return {y, at::full({rms ? 0 : rows}, NAN, fo), at::full({rows}, NAN, fo)};
    const at::Tensor xf = x.to(at::kFloat);
    const at::Tensor mean = rms ? at::empty({0}, fo) : xf.mean(1);
    const at::Tensor rstd = at::rsqrt((rms ? xf.square().mean(1) : at::var(xf, {1}, false, false)) + eps);
    at::Tensor yf = (rms ? xf : xf - mean.unsqueeze(1)) * rstd.unsqueeze(1);
    if (w.has_value()) yf = yf * w->to(at::kFloat);
    if (b.has_value()) yf = yf + b->to(at::kFloat);
    y.copy_(yf);
    return {y, mean, rstd};
}

Tensors3 layerNormOp(const at::Tensor& x, const OptTensor& w, const OptTensor& b, double eps) {
    return normOp(x, w, b, eps, false);
}

Tensors2 rmsNormOp(const at::Tensor& x, const OptTensor& w, double eps) {
    auto [y, mean, rstd] = normOp(x, w, std::nullopt, eps, true);
    return {y, rstd};
}

/// (y, h, mean, rstd): normAddEager's, or torch's add and normOp where the device call does not
/// take the rows (empty, a negative eps).
Tensors4 addNormOp(const at::Tensor& x, const at::Tensor& r, const OptTensor& w, const OptTensor& b, double eps,
                   bool rms) {
    checkRows(x, "add_norm");
    TORCH_CHECK(r.sizes() == x.sizes(), "warpkit.add_norm: residual of shape ", r.sizes(), " must match x's ",
                x.sizes());
    if (x.numel() && eps >= 0) return normAddEager(x, r, w, b, eps, rms, true);
    const at::Tensor h = (x + r).contiguous();
    auto [y, mean, rstd] = normOp(h, w, b, eps, rms);
    return {y, h, mean, rstd};
}

Tensors4 addLayerNormOp(const at::Tensor& x, const at::Tensor& r, const OptTensor& w, const OptTensor& b, double eps) {
    return addNormOp(x, r, w, b, eps, false);
}

Tensors3 addRmsNormOp(const at::Tensor& x, const at::Tensor& r, const OptTensor& w, double eps) {
    auto [y, h, mean, rstd] = addNormOp(x, r, w, std::nullopt, eps, true);
    return {y, h, rstd};
}

/// The gradients of rows of none: dx of x's shape; dw and db (zeros: no row adds to them) of a
/// row's length where needed, else empty.
Tensors3 emptyGrads(const at::Tensor& x, bool needW, bool needB) {
    const int64_t cols = x.size(1);
    const auto make = [&](bool need) {
        return x.size(0) ? at::empty({need ? cols : 0}, x.options()) : at::zeros({need ? cols : 0}, x.options());
    };
    return {at::empty(x.sizes(), x.options()), make(needW), make(needB)};
}

Tensors3 normBackwardOp(const at::Tensor& dy, const at::Tensor& x, const OptTensor& w, const at::Tensor& mean,
                        const at::Tensor& rstd, bool needW, bool needB, bool rms) {
    checkRows(x, "norm_backward");
    if (x.numel() == 0) return emptyGrads(x, needW, needB);
    return normBackwardEager(dy, x, w, mean, rstd, std::nullopt, needW, needB, rms);
}

Tensors3 normBackwardAddOp(const at::Tensor& dy, const at::Tensor& h, const OptTensor& w, const at::Tensor& mean,
                           const at::Tensor& rstd, const at::Tensor& dres, bool needW, bool needB, bool rms) {
    checkRows(h, "norm_backward_add");
    if (h.numel() == 0) return emptyGrads(h, needW, needB);
    return normBackwardEager(dy, h, w, mean, rstd, dres, needW, needB, rms);
}

Tensors4 normBackwardAddMixedOp(const at::Tensor& dy, const at::Tensor& h, const OptTensor& w, const at::Tensor& mean,
                                const at::Tensor& rstd, const at::Tensor& dres, at::ScalarType rt, bool needW,
                                bool needB, bool rms) {
    checkRows(h, "norm_backward_add_mixed");
    if (h.numel()) return normBackwardAddEager(dy, h, w, mean, rstd, dres, rt, needW, needB, rms);
    auto [dx, dw, db] = emptyGrads(h, needW, needB);
    return {dx, at::empty(h.sizes(), h.options().dtype(rt)), dw, db};
}

/// (loss, grad): each row's loss (float32) and, withGrad, d loss[r] / d logits (else empty). Rows
/// of no classes: NaN for a kept row (its target is out of range), 0 for an ignored one, as torch.
Tensors2 crossEntropyOp(const at::Tensor& logits, const at::Tensor& target, int64_t ignoreIndex, double smoothing,
                        bool withGrad) {
    checkRows(logits, "cross_entropy");
    const int64_t rows = logits.size(0), cols = logits.size(1);
    const at::Tensor loss = at::empty({rows}, logits.options().dtype(at::kFloat));
    const at::Tensor grad = withGrad ? at::empty(logits.sizes(), logits.options()) : at::empty({0}, logits.options());
    if (rows && cols == 0) {
        loss.copy_(at::where(target == ignoreIndex, 0.0, NAN));
    } else if (rows) {
        raise(crossEntropyForward(lastRows(logits, cols), target.contiguous(), ignoreIndex, smoothing, loss,
                                  withGrad ? grad : at::Tensor()),
              "cross_entropy");
    }
    return {loss, grad};
}

/// Registers the row operators' kernels (ops.h's registerOps).
void registerRowOps(torch::Library& cuda, torch::Library& autograd, pybind11::module_& m) {
    wkt::registerOps(cuda, autograd, m, "softmax", &softmaxOp, "softmax_backward", &softmaxBackwardOp, "layer_norm",
                     &layerNormOp, "rms_norm", &rmsNormOp, "norm_backward", &normBackwardOp, "add_layer_norm",
                     &addLayerNormOp, "add_rms_norm", &addRmsNormOp, "norm_backward_add", &normBackwardAddOp,
                     "norm_backward_add_mixed", &normBackwardAddMixedOp, "cross_entropy", &crossEntropyOp);
}

} // namespace

/// The operators' autograd kernel for CUDA tensors. A call that records no graph (grad mode off, or
/// no tensor argument requiring grad: every call of a compiled graph) goes on to the CUDA kernel in
/// C++, as torch.library's own autograd kernel does in Python; one that records goes to that Python
/// kernel (registered for the Autograd alias key, so AutogradOther's entry holds it), which applies
/// the op's autograd.Function with the formulas of warpkit/_ops_*.py (or, for an op without a
/// backward, marks its outputs as torch.library does).
void wkt::autogradCuda(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
    bool record = false;
    if (c10::GradMode::is_enabled()) {
        for (const c10::IValue& v : torch::jit::last(*stack, op.schema().arguments().size()))
            record = record || (v.isTensor() && v.toTensor().requires_grad());
    }
    if (!record) {
        const at::AutoDispatchBelowAutograd below;
        op.redispatchBoxed(ks & c10::after_autograd_keyset, stack);
        return;
    }
    op.redispatchBoxed((ks & c10::after_autograd_keyset) | c10::DispatchKeySet(c10::DispatchKey::AutogradOther), stack);
}

// The module's import registers the operators' CUDA and AutogradCUDA kernels for the schemas the
// warpkit package defined before importing it (not at static initialisation, as TORCH_LIBRARY_IMPL
// would), so that a registration the dispatcher refuses (a kernel whose signature differs from the
// op's schema) raises in Python, where warpkit._ext reports it, rather than aborting the process. The
// Library objects are kept for the process's life.
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.doc() = "warpkit's device calls on torch tensors; use the operators of the warpkit package";
    auto* cuda = new torch::Library(torch::Library::IMPL, "warpkit", c10::DispatchKey::CUDA, __FILE__, __LINE__);
    auto* autograd =
        new torch::Library(torch::Library::IMPL, "warpkit", c10::DispatchKey::AutogradCUDA, __FILE__, __LINE__);
    registerRowOps(*cuda, *autograd, m);    // softmax, norms, cross_entropy
    registerSelectOps(*cuda, *autograd, m); // topk, argmax, sample, segment ops, sharded ops
    m.def("softmax_eager", &softmaxEager);
    m.def("softmax_backward_eager", &softmaxBackwardEager);
    m.def("norm_eager", &normEager);
    m.def("norm_add_eager", &normAddEager);
    m.def("norm_backward_eager", &normBackwardEager);
    m.def("norm_backward_add_eager", &normBackwardAddEager);
    m.def("cross_entropy_scale", raising(&crossEntropyScale, "cross_entropy"));
    m.def("cross_entropy_reduce", raising(&crossEntropyReduce, "cross_entropy"));
}
