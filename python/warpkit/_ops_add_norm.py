"""warpkit::add_layer_norm, warpkit::add_rms_norm and their backward ops: the residual add fused into
the norms (rowAddLayerNorm / rowAddRmsNorm, rowLayerNormBackwardAdd / rowRmsNormBackwardAdd), and
the public add_layer_norm / add_rms_norm, which return (y, h) with h = x + residual. A float16 /
bfloat16 residual of a float32 x (autocast's residual stream) is read as it is, with no cast op: h
is float32, and the residual's gradient comes back in its own dtype from the same backward kernel
(warpkit::norm_backward_add_mixed)."""
from typing import Optional, Tuple

import torch

from . import _common as c
from ._ext import ext
from ._ops_norm import (NARROW, _eager_backward, _fast, _finfo_eps, _grads_alloc, _needs_grad, _norm_backward, _prepare,
                        _shaped)


# The ops' bodies: warpkit._C's functions of their names, also their CUDA kernels (as _ops_norm's).


def _fake_add_forward(x, residual, rms):
    rows, dt = x.shape[0], torch.promote_types(x.dtype, residual.dtype)  # h and y: x + residual's dtype
    return (torch.empty(x.shape, dtype=dt, device=x.device), torch.empty(x.shape, dtype=dt, device=x.device),
            torch.empty(0 if rms else rows, dtype=torch.float32, device=x.device),
            torch.empty(rows, dtype=torch.float32, device=x.device))


@torch.library.custom_op("warpkit::add_layer_norm", mutates_args=())
def _add_layer_norm(x: torch.Tensor, residual: torch.Tensor, weight: Optional[torch.Tensor],
                    bias: Optional[torch.Tensor],
                    eps: float) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return ext().add_layer_norm(x, residual, weight, bias, eps)


@_add_layer_norm.register_fake
def _(x, residual, weight, bias, eps):
    return _fake_add_forward(x, residual, False)


@torch.library.custom_op("warpkit::add_rms_norm", mutates_args=())
def _add_rms_norm(x: torch.Tensor, residual: torch.Tensor, weight: Optional[torch.Tensor],
                  eps: float) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return ext().add_rms_norm(x, residual, weight, eps)


@_add_rms_norm.register_fake
def _(x, residual, weight, eps):
    y, h, _, rstd = _fake_add_forward(x, residual, True)
    return y, h, rstd


@torch.library.custom_op("warpkit::norm_backward_add", mutates_args=())
def _norm_backward_add(dy: torch.Tensor, h: torch.Tensor, weight: Optional[torch.Tensor], mean: torch.Tensor,
                       rstd: torch.Tensor, dres: torch.Tensor, need_w: bool, need_b: bool,
                       rms: bool) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return ext().norm_backward_add(dy, h, weight, mean, rstd, dres, need_w, need_b, rms)


@_norm_backward_add.register_fake
def _(dy, h, weight, mean, rstd, dres, need_w, need_b, rms):
    return _grads_alloc(h, need_w, need_b)


@torch.library.custom_op("warpkit::norm_backward_add_mixed", mutates_args=())
def _norm_backward_add_mixed(dy: torch.Tensor, h: torch.Tensor, weight: Optional[torch.Tensor], mean: torch.Tensor,
                             rstd: torch.Tensor, dres: torch.Tensor, res_dtype: torch.dtype, need_w: bool, need_b: bool,
                             rms: bool) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dx, dr, dw, db): norm_backward_add's, and dr, the residual's gradient in its dtype res_dtype
    (16-bit beside a float32 h): dx's values rounded once, written by the same kernel."""
    return ext().norm_backward_add_mixed(dy, h, weight, mean, rstd, dres, res_dtype, need_w, need_b, rms)


@_norm_backward_add_mixed.register_fake
def _(dy, h, weight, mean, rstd, dres, res_dtype, need_w, need_b, rms):
    dx, dw, db = _grads_alloc(h, need_w, need_b)
    return dx, torch.empty(h.shape, dtype=res_dtype, device=h.device), dw, db


def _setup(ctx, inputs, output, rms):
    # h without a gradient (its only use the norm, as the last block's): None, not zeros, so the
    # backward takes the plain op (no zeros kernel, no dres read).
    ctx.set_materialize_grads(False)
    weight = inputs[2]
    bias = None if rms else inputs[3]
    ctx.rms = rms
    ctx.has_weight = weight is not None
    ctx.has_bias = bias is not None
    h = output[1]
    ctx.res_dtype = inputs[1].dtype  # a 16-bit residual of a float32 h: its gradient from the kernel too
    ctx.mixed = ctx.res_dtype != h.dtype
    mean, rstd = (None, output[2]) if rms else (output[2], output[3])
    ctx.save_for_backward(h, weight, mean, rstd)


def _grads(ctx, dy, dh, plain, fused, mixed):
    """(dx, dr, dw, db): dx = dresidual = the norm's gradient at h plus h's own gradient dh (one
    kernel, fused, when both; plain when h has no gradient), dr that gradient in the residual's
    dtype (mixed: by the same kernel, for a 16-bit residual of a float32 h; else dx itself, which
    autograd casts where the dtypes differ); the ops, or the fast path's extension calls."""
    h, weight, mean, rstd = ctx.saved_tensors
    need = ctx.needs_input_grad
    need_w = ctx.has_weight and need[2]
    need_b = ctx.has_bias and need[3]
    if mean is None:
        mean = c.none_tensor(rstd)
    if dy is None:
        dy = torch.zeros_like(h)
    if dh is None:
        dx, dw, db = plain(dy, h, weight, mean, rstd, need_w, need_b, ctx.rms)
        dr = dx
    elif ctx.mixed:
        dx, dr, dw, db = mixed(dy, h, weight, mean, rstd, dh, ctx.res_dtype, need_w, need_b, ctx.rms)
    else:
        dx, dw, db = fused(dy, h, weight, mean, rstd, dh, need_w, need_b, ctx.rms)
        dr = dx
    return dx, dr, (dw if need_w else None), (db if need_b else None)


def _backward(ctx, dy, dh, *unused):
    dx, dr, dw, db = _grads(ctx, dy, dh, _norm_backward, _norm_backward_add, _norm_backward_add_mixed)
    return (dx, dr, dw, None) if ctx.rms else (dx, dr, dw, db, None)


_add_layer_norm.register_autograd(lambda ctx, *g: _backward(ctx, *g),
                                  setup_context=lambda ctx, inputs, output: _setup(ctx, inputs, output, False))
_add_rms_norm.register_autograd(lambda ctx, *g: _backward(ctx, *g),
                                setup_context=lambda ctx, inputs, output: _setup(ctx, inputs, output, True))


class _AddNormEagerFn(torch.autograd.Function):
    """The eager form for inputs of any shape that _fast takes, in one extension call a way
    (norm_add_eager; norm_backward_eager with dh as dres, or without it when h has no gradient)."""

    @staticmethod
    def forward(ctx, x, residual, weight, bias, eps, rms):
        y, h, mean, rstd = ext().norm_add_eager(x, residual, weight, bias, eps, rms, True)
        _setup(ctx, (x, residual, weight, bias), (y, h, rstd) if rms else (y, h, mean, rstd), rms)
        return y, h

    @staticmethod
    def backward(ctx, dy, dh):
        dx, dr, dw, db = _grads(ctx, dy, dh, _eager_backward, _eager_backward_add, ext().norm_backward_add_eager)
        return dx, dr, dw, db, None, None


def _eager_backward_add(dy, h, weight, mean, rstd, dres, need_w, need_b, rms):
    """The norm_backward_add op's results for the fast path's saved tensors (h of any shape)."""
    return ext().norm_backward_eager(dy, h, weight, mean, rstd, dres, need_w, need_b, rms)


def _wide_first(x, residual):
    """(x, residual), swapped where residual is the float32 one of a float32 / 16-bit pair (h = x +
    residual either way: the add commutes), so that the device's mixed form (a 16-bit residual of a
    float32 x) takes it and the outputs have the promoted dtype."""
    if (isinstance(x, torch.Tensor) and isinstance(residual, torch.Tensor) and residual.dtype == torch.float32
            and x.dtype in NARROW):
        return residual, x
    return x, residual


def _pair(x, residual, name):
    """x and residual for the ops, of one shape: x in their promoted dtype (as torch's x +
    residual); residual in it too, or left 16-bit beside a float32 x (no cast: the mixed form)."""
    c.check_tensor(residual, name, "residual")
    if tuple(residual.shape) != tuple(x.shape):
        raise RuntimeError(f"warpkit.{name}: residual of shape {list(residual.shape)} must match x's "
                           f"{list(x.shape)}")
    dt = torch.promote_types(x.dtype, residual.dtype)
    if x.dtype == dt == torch.float32 and residual.dtype in NARROW:
        return x, residual
    return c.same_dtype(x, dt), c.same_dtype(residual, dt)


def add_layer_norm(x, residual, normalized_shape, weight=None, bias=None, eps=1e-5):
    """(y, h) with h = x + residual and y = torch.nn.functional.layer_norm(h, normalized_shape, weight,
    bias, eps), by one kernel (rowAddLayerNorm) and one backward kernel (h's gradient from its other
    uses added into the norm's: rowLayerNormBackwardAdd). h is x + residual rounded once to the
    promoted dtype, bit for bit as torch's; y normalises that h. x and residual of one shape; a
    16-bit one beside a float32 one is read without a cast, and its gradient comes back in its dtype
    from the backward kernel. Other rules as layer_norm."""
    x, residual = _wide_first(x, residual)
    if _fast(x, normalized_shape, (weight, bias), eps, (residual,)):
        if _needs_grad(x, residual, weight, bias):
            return _AddNormEagerFn.apply(x, residual, weight, bias, float(eps), False)
        y, h, _, _ = ext().norm_add_eager(x, residual, weight, bias, float(eps), False, False)
        return y, h
    x, residual = _pair(x, residual, "add_layer_norm")
    x2, w, b = _prepare(x, normalized_shape, weight, bias, "add_layer_norm")
    y, h, _, _ = _add_layer_norm(x2, residual.reshape(x2.shape), w, b, float(eps))
    return _shaped(y, x), _shaped(h, x)


def add_rms_norm(x, residual, normalized_shape, weight=None, eps=None):
    """(y, h) with h = x + residual and y = torch.nn.functional.rms_norm(h, normalized_shape, weight,
    eps), fused as add_layer_norm (rowAddRmsNorm, rowRmsNormBackwardAdd). eps=None is
    torch.finfo(dtype).eps (h's dtype), as torch."""
    x, residual = _wide_first(x, residual)
    if _fast(x, normalized_shape, (weight,), 0.0 if eps is None else eps, (residual,)):
        e = float(_finfo_eps(x.dtype) if eps is None else eps)
        if _needs_grad(x, residual, weight):
            return _AddNormEagerFn.apply(x, residual, weight, None, e, True)
        y, h, _, _ = ext().norm_add_eager(x, residual, weight, None, e, True, False)
        return y, h
    x, residual = _pair(x, residual, "add_rms_norm")
    x2, w, _ = _prepare(x, normalized_shape, weight, None, "add_rms_norm")
    if eps is None:
        eps = torch.finfo(x.dtype).eps
    y, h, _ = _add_rms_norm(x2, residual.reshape(x2.shape), w, float(eps))
    return _shaped(y, x), _shaped(h, x)
