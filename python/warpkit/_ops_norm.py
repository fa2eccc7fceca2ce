"""warpkit::layer_norm, warpkit::rms_norm and their backward ops over the rows of a 2-D tensor
(rowLayerNorm / rowRmsNorm, rowLayerNormBackward / rowRmsNormBackward), and the public layer_norm /
rms_norm with torch's signatures."""
import math
from typing import Optional, Tuple

import torch

from . import _common as c
from ._ext import ext


# Each op's body is warpkit._C's function of the op's name, which the extension also registers as the
# op's CUDA kernel (python/csrc/module.cpp), so that on CUDA tensors the dispatcher runs it without a
# Python frame; the body runs where that kernel is absent (no extension: ext() says how to build it).


def _fake_forward(x, rms):
    rows = x.shape[0]
    return (torch.empty(x.shape, dtype=x.dtype, device=x.device),
            torch.empty(0 if rms else rows, dtype=torch.float32, device=x.device),
            torch.empty(rows, dtype=torch.float32, device=x.device))


@torch.library.custom_op("warpkit::layer_norm", mutates_args=())
def _layer_norm(x: torch.Tensor, weight: Optional[torch.Tensor], bias: Optional[torch.Tensor],
                eps: float) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return ext().layer_norm(x, weight, bias, eps)


@_layer_norm.register_fake
def _(x, weight, bias, eps):
    return _fake_forward(x, False)


@torch.library.custom_op("warpkit::rms_norm", mutates_args=())
def _rms_norm(x: torch.Tensor, weight: Optional[torch.Tensor], eps: float) -> Tuple[torch.Tensor, torch.Tensor]:
    return ext().rms_norm(x, weight, eps)


@_rms_norm.register_fake
def _(x, weight, eps):
    y, _, rstd = _fake_forward(x, True)
    return y, rstd


def _grads_alloc(x, need_w, need_b):
    rows, cols = x.shape
    make = x.new_zeros if rows == 0 else x.new_empty  # no rows: a zero gradient
    return c.empty_as(x), make(cols if need_w else 0), make(cols if need_b else 0)


@torch.library.custom_op("warpkit::norm_backward", mutates_args=())
def _norm_backward(dy: torch.Tensor, x: torch.Tensor, weight: Optional[torch.Tensor], mean: torch.Tensor,
                   rstd: torch.Tensor, need_w: bool, need_b: bool,
                   rms: bool) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return ext().norm_backward(dy, x, weight, mean, rstd, need_w, need_b, rms)


@_norm_backward.register_fake
def _(dy, x, weight, mean, rstd, need_w, need_b, rms):
    return _grads_alloc(x, need_w, need_b)


def _setup(ctx, inputs, output, rms):
    x, weight = inputs[0], inputs[1]
    bias = None if rms else inputs[2]
    ctx.rms = rms
    ctx.has_bias = bias is not None
    ctx.has_weight = weight is not None
    mean, rstd = (None, output[1]) if rms else (output[1], output[2])
    ctx.save_for_backward(x, weight, mean, rstd)


def _grads(ctx, dy, backward):
    """(dx, dw, db) by backward (the op, or the fast path's extension call), None where not needed."""
    x, weight, mean, rstd = ctx.saved_tensors
    need = ctx.needs_input_grad
    need_w = ctx.has_weight and need[1]
    need_b = ctx.has_bias and need[2]
    if mean is None:
        mean = c.none_tensor(rstd)
    dx, dw, db = backward(dy, x, weight, mean, rstd, need_w, need_b, ctx.rms)
    return dx, (dw if need_w else None), (db if need_b else None)


def _backward(ctx, dy, *unused):
    dx, dw, db = _grads(ctx, dy, _norm_backward)
    return (dx, dw, None) if ctx.rms else (dx, dw, db, None)


_layer_norm.register_autograd(lambda ctx, *g: _backward(ctx, *g),
                              setup_context=lambda ctx, inputs, output: _setup(ctx, inputs, output, False))
_rms_norm.register_autograd(lambda ctx, *g: _backward(ctx, *g),
                            setup_context=lambda ctx, inputs, output: _setup(ctx, inputs, output, True))


class _NormEagerFn(torch.autograd.Function):
    """The eager form for inputs of any shape that _fast takes, in one extension call a way
    (norm_eager and norm_backward_eager: the row views and allocations in C++)."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps, rms):
        y, mean, rstd = ext().norm_eager(x, weight, bias, eps, rms, True)
        _setup(ctx, (x, weight, bias), (y, rstd) if rms else (y, mean, rstd), rms)
        return y

    @staticmethod
    def backward(ctx, dy):
        return (*_grads(ctx, dy, _eager_backward), None, None)


def _eager_backward(dy, x, weight, mean, rstd, need_w, need_b, rms):
    """The norm_backward op's results for the fast path's saved tensors (x of any shape)."""
    return ext().norm_backward_eager(dy, x, weight, mean, rstd, None, need_w, need_b, rms)


def _fast(x, normalized_shape, params, eps, others=()):
    """Whether the eager fast path (_NormEagerFn, or norm_eager alone without gradients; the add
    forms' too) takes a call: plain CUDA tensors (c.eager) of one supported dtype, a non-empty x
    normalised over its last dimension, `others` (the residual) of x's shape and dtype (or a 16-bit
    one beside a float32 x: the extension reads it as it is), the params (w and b) none or
    contiguous vectors of that length, eps >= 0. Everything else (and every error) takes the
    general path. Loops rather than generators, each tensor attribute read once: this runs on every
    eager call."""
    if not c.eager(x, *others, *params):  # first: under torch.compile nothing else is traced
        return False
    ns = normalized_shape
    if type(ns) is not int:
        if type(ns) not in _SHAPES or len(ns) != 1:
            return False
        ns = ns[0]
    dt = x.dtype
    if not eps >= 0 or dt not in c.DTYPES or not x.numel():
        return False
    shape = x.shape
    if not shape or shape[-1] != ns:
        return False
    for o in others:
        if o.shape != shape:
            return False
        odt = o.dtype
        if odt != dt and (dt != torch.float32 or odt not in NARROW):
            return False
    for t in params:
        if t is not None and (t.dtype != dt or t.dim() != 1 or t.shape[0] != ns or not t.is_contiguous()):
            return False
    return True


_SHAPES = (tuple, list, torch.Size)
NARROW = (torch.float16, torch.bfloat16)


def _needs_grad(*tensors):
    if torch.is_grad_enabled():
        for t in tensors:
            if t is not None and t.requires_grad:
                return True
    return False


def _prepare(x, normalized_shape, weight, bias, name):
    c.check_tensor(x, name)
    ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    n = len(ns)
    if n == 0:  # as torch: a norm over no elements is refused, not computed
        raise RuntimeError(f"warpkit.{name}: Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    if n > x.dim() or tuple(x.shape[x.dim() - n:]) != ns:
        raise RuntimeError(f"warpkit.{name}: Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*, {', '.join(map(str, ns))}], but got input of size {list(x.shape)}")
    cols = math.prod(ns)
    rows = math.prod(x.shape[:x.dim() - n])
    params = []
    for t, what in ((weight, "weight"), (bias, "bias")):
        if t is None:
            params.append(None)
            continue
        c.check_tensor(t, name, what)
        if tuple(t.shape) != ns:
            raise RuntimeError(f"warpkit.{name}: Expected {what} to be of same shape as normalized_shape, but got "
                               f"{what} of shape {list(t.shape)} and normalized_shape = {list(ns)}")
        # A weight of another dtype (float32 parameters under autocast) is cast to x's: the output
        # has x's dtype, as torch's mixed-type layer_norm. A 1-D weight of x's dtype is passed itself
        # (no view, so no autograd node).
        if n > 1:
            t = t.reshape(cols)
        params.append(c.same_dtype(t, x.dtype).contiguous())
    return (x if x.dim() == 2 and n == 1 else x.reshape(rows, cols)), params[0], params[1]


def _finfo_eps(dtype):
    """torch.finfo(dtype).eps (rms_norm's default eps), kept a dtype: the eager fast paths' (whose
    dtypes are the supported floating ones)."""
    e = _EPS.get(dtype)
    if e is None:
        e = _EPS.setdefault(dtype, torch.finfo(dtype).eps)
    return e


_EPS = {}


def _shaped(y2, x):
    """The rows y2 in x's shape (y2 itself when it has it)."""
    return y2 if y2.shape == x.shape else y2.reshape(x.shape)


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    """torch.nn.functional.layer_norm(x, normalized_shape, weight, bias, eps) with warpkit's
    rowLayerNorm, and a backward (dx, and dw / db reduced over the rows deterministically).

    float32, float16, bfloat16 CUDA tensors, statistics in float32; weight and bias of another dtype
    are cast to x's (the output has x's dtype). Empty rows, strided and expanded inputs as torch; an
    empty normalized_shape (so any 0-d input) raises RuntimeError, as torch. A negative or NaN eps
    is computed with, as torch does (by torch's own ops: the device call refuses it). A row holding
    an infinity gives NaN outputs as torch's CUDA kernel; the saved mean is then +-inf where torch's
    is NaN (not visible in the results)."""
    if _fast(x, normalized_shape, (weight, bias), eps):
        if _needs_grad(x, weight, bias):
            return _NormEagerFn.apply(x, weight, bias, float(eps), False)
        return ext().norm_eager(x, weight, bias, float(eps), False, False)[0]
    x2, w, b = _prepare(x, normalized_shape, weight, bias, "layer_norm")
    y, _, _ = _layer_norm(x2, w, b, float(eps))
    return _shaped(y, x)


def rms_norm(x, normalized_shape, weight=None, eps=None):
    """torch.nn.functional.rms_norm(x, normalized_shape, weight, eps) with warpkit's rowRmsNorm, and
    a backward. eps=None is torch.finfo(x.dtype).eps, as torch. Types and shapes as layer_norm.

    A row holding an infinity (and no NaN) has rstd 0: its finite elements give 0 and its infinite
    ones NaN, as torch's composite rms_norm (x * rsqrt(mean(x^2) + eps) * w); torch builds with a
    fused CUDA rms_norm kernel write NaN across such a row instead."""
    if _fast(x, normalized_shape, (weight,), 0.0 if eps is None else eps):
        e = float(_finfo_eps(x.dtype) if eps is None else eps)
        if _needs_grad(x, weight):
            return _NormEagerFn.apply(x, weight, None, e, True)
        return ext().norm_eager(x, weight, None, e, True, False)[0]
    x2, w, _ = _prepare(x, normalized_shape, weight, None, "rms_norm")
    if eps is None:
        eps = torch.finfo(x.dtype).eps
    y, _ = _rms_norm(x2, w, float(eps))
    return _shaped(y, x)
