"""warpkit::cross_entropy: each row's loss and, from the same pass over the logits, its gradient
(rowCrossEntropy), and the public cross_entropy with torch's reductions."""
from typing import Tuple

import torch

from . import _common as c
from ._ext import ext


@torch.library.custom_op("warpkit::cross_entropy", mutates_args=())
def _cross_entropy(logits: torch.Tensor, target: torch.Tensor, ignore_index: int, label_smoothing: float,
                   with_grad: bool) -> Tuple[torch.Tensor, torch.Tensor]:
    """Each row's loss (float32) and, with_grad, d loss[r] / d logits (the second output: not
    differentiable, kept for the backward)."""
    return ext().cross_entropy(logits, target, ignore_index, label_smoothing, with_grad)  # also its CUDA kernel


@_cross_entropy.register_fake
def _(logits, target, ignore_index, label_smoothing, with_grad):
    rows = logits.shape[0]
    return (torch.empty(rows, dtype=torch.float32, device=logits.device),
            torch.empty(logits.shape if with_grad else (0,), dtype=logits.dtype, device=logits.device))


def _no_grad_error():
    return RuntimeError("warpkit.cross_entropy: the loss was computed without its gradient (logits did not "
                        "require grad, or grad mode was off)")


def _setup(ctx, inputs, output):
    ctx.with_grad = inputs[4]
    ctx.mark_non_differentiable(output[1])
    ctx.set_materialize_grads(False)  # no logits-sized zeros for the gradient output's (absent) gradient
    ctx.save_for_backward(output[1])


def _backward(ctx, dloss, dgrad):
    if not ctx.with_grad:
        raise _no_grad_error()
    (grad,) = ctx.saved_tensors
    if dloss is None:
        return None, None, None, None, None
    # d loss / d logits of each row times the row's incoming gradient (1 / count for 'mean'), in
    # float32, written in the logits' dtype: one elementwise pass (torch.compile fuses the cast).
    return (grad * dloss.unsqueeze(1)).to(grad.dtype), None, None, None, None


_cross_entropy.register_autograd(_backward, setup_context=_setup)


_REDUCE_ROWS = 1 << 15  # up to here one block sums the losses in one launch (cross_entropy_reduce)


def _reduce(loss, target, ignore_index, reduction, out_shape, dtype, autograd=True):
    """The reduction of the rows' float32 losses in dtype, and the kept rows' count ('mean', float32;
    else None). 'mean' over no kept row is NaN (0 / 0) with a zero gradient, as torch: through
    autograd (autograd=True) a where() keeps the gradient finite; the eager form (autograd=False),
    whose backward divides by max(count, 1) itself, sums and counts in one launch of
    cross_entropy_reduce up to _REDUCE_ROWS rows."""
    if reduction == "none":
        return c.same_dtype(loss.reshape(out_shape), dtype), None
    mean = reduction == "mean"
    if not autograd:
        if loss.shape[0] <= _REDUCE_ROWS:
            out = loss.new_empty((), dtype=dtype)
            count = loss.new_empty(1) if mean else c.none_tensor(loss)
            ext().cross_entropy_reduce(loss, target, ignore_index, out, count)
            return out, (count if mean else None)
        total = loss.sum()
        if not mean:
            return c.same_dtype(total, dtype), None
        count = (target != ignore_index).sum(dtype=torch.float32).reshape(1)
        return c.same_dtype(total / count[0], dtype), count
    total = loss.sum()
    if not mean:
        return total.to(dtype), None
    count = (target != ignore_index).sum()
    return torch.where(count > 0, total / count.clamp(min=1), float("nan")).to(dtype), count


class _CrossEntropyFn(torch.autograd.Function):
    """The eager form of cross_entropy with its reduction (c.eager): the gradient saved by the
    forward is scaled in place by the incoming gradient (a copy when the graph is kept)."""

    @staticmethod
    def forward(ctx, logits, target, ignore_index, label_smoothing, reduction, out_shape, dtype):
        loss, grad = ext().cross_entropy(logits, target, ignore_index, label_smoothing, True)
        out, count = _reduce(loss, target, ignore_index, reduction, out_shape, dtype, autograd=False)
        ctx.reduction = reduction
        ctx.save_for_backward(grad, count)
        return out

    @staticmethod
    def backward(ctx, dout):
        grad, count = ctx.saved_tensors
        rows = grad.shape[0]
        scale = c.same_dtype(dout, torch.float32).reshape(-1)
        if ctx.reduction != "none":
            scale = scale.expand(rows)
        out = grad if c.graph_freed() else torch.empty_like(grad)
        if grad.numel():  # 'mean': each row's factor divided by max(count, 1) (no kept row: every row's is 0)
            ext().cross_entropy_scale(grad, scale, c.none_tensor(scale) if count is None else count, out)
        return out, None, None, None, None, None, None


def cross_entropy(input, target, ignore_index=-100, label_smoothing=0.0, reduction="mean", weight=None):
    """torch.nn.functional.cross_entropy(input, target, ignore_index=, label_smoothing=, reduction=)
    for class-index targets, with warpkit's fused rowCrossEntropy: one read of the logits gives each
    row's loss and its gradient, which is kept for the backward (no logits-sized float32 copy, no
    log-softmax kept), then scaled there by each row's incoming gradient.

    input: (C,), (N, C) or (N, C, d1, ...) float32 / float16 / bfloat16 CUDA logits (computed in
    float32; the loss has input's dtype, float32 under CUDA autocast, as torch); target: int64 class indices of shape (), (N,)
    or (N, d1, ...). reduction 'mean' divides by the rows whose target is not ignore_index (NaN when
    there is none, as torch; torch's CUDA kernel gives 0 instead for a 1-D input whose target is
    ignored at label_smoothing 0, its CPU kernel NaN); 'sum'; 'none'. Differences from torch: class-probability targets and
    weight= are not supported (ValueError); a target out of range that is not ignore_index gives a
    NaN loss where torch raises a device-side assertion; a row whose target is ignore_index gets a
    zero gradient whatever its logits, where torch's is NaN across a row holding a NaN or +inf or
    of only -inf (its log_softmax backward); (N, C, d1, ...) inputs are copied with the class
    dimension last. Positionally the arguments after target are (ignore_index, label_smoothing,
    reduction), where torch's third is weight: pass them by keyword for a drop-in call. NaN and
    infinities in kept rows give torch's loss and gradient."""
    name = "cross_entropy"
    c.check_tensor(input, name)
    if weight is not None:
        raise ValueError("warpkit.cross_entropy: weight= is not supported")
    if not isinstance(target, torch.Tensor) or target.dtype != torch.int64:
        raise ValueError("warpkit.cross_entropy: target must be an int64 tensor of class indices "
                         "(class-probability targets are not supported)")
    if target.device != input.device and input.device.type != "meta":
        raise RuntimeError(f"warpkit.cross_entropy: target must be on {input.device}, got {target.device}")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"warpkit.cross_entropy: {reduction} is not a valid value for reduction")
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError("warpkit.cross_entropy: label_smoothing must be between 0.0 and 1.0. "
                           f"Got: {label_smoothing}")
    if input.dim() == 0:
        raise IndexError("warpkit.cross_entropy: input must have at least one dimension (the classes)")
    if input.dim() == 1:
        if target.dim() != 0:
            raise RuntimeError("warpkit.cross_entropy: a 1-D input (C,) takes a 0-d target")
        logits, out_shape = input.reshape(1, -1), ()
    else:
        expect = (input.shape[0],) + tuple(input.shape[2:])
        if tuple(target.shape) != expect:
            raise RuntimeError(f"warpkit.cross_entropy: expected target of shape {list(expect)}, "
                               f"got {list(target.shape)}")
        logits = input if input.dim() == 2 else input.movedim(1, -1).reshape(-1, input.shape[1])
        out_shape = expect
    with_grad = torch.is_grad_enabled() and input.requires_grad
    # Under CUDA autocast torch computes cross_entropy in float32 and returns a float32 loss.
    out_dtype = torch.float32 if input.is_cuda and torch.is_autocast_enabled("cuda") else input.dtype
    ignore_index, label_smoothing = int(ignore_index), float(label_smoothing)
    flat = (target if target.dim() == 1 else target.reshape(-1)).contiguous()
    if c.eager(logits, flat):  # the body without torch.library's dispatch; autograd only with_grad
        if with_grad:
            return _CrossEntropyFn.apply(logits, flat, ignore_index, label_smoothing, reduction, out_shape,
                                         out_dtype)
        loss, _ = ext().cross_entropy(logits, flat, ignore_index, label_smoothing, False)
        return _reduce(loss, flat, ignore_index, reduction, out_shape, out_dtype, autograd=False)[0]
    loss, _ = _cross_entropy(logits, flat, ignore_index, label_smoothing, with_grad)
    return _reduce(loss, flat, ignore_index, reduction, out_shape, out_dtype)[0]
