"""warpkit::cross_entropy: each row's loss and, from the same pass over the logits, its gradient
(rowCrossEntropy), and the public cross_entropy with torch's reductions."""
from typing import Tuple

import torch

from . import _common as c
from ._ext import ext


@torch.library.custom_op("warpkit::cross_entropy", mutates_args=())
def _cross_entropy(logits: torch.Tensor, target: torch.Tensor, ignore_index: int, label_smoothing: float,
                   with_grad: bool) -> Tuple[torch.Tensor, torch.Tensor]:
    rows, cols = logits.shape
    loss = torch.empty(rows, dtype=torch.float32, device=logits.device)
    grad = torch.empty(logits.shape if with_grad else (0,), dtype=logits.dtype, device=logits.device)
    if rows and cols == 0:  # no classes: torch's loss is NaN for a kept row (its target is out of range)
        loss.copy_(torch.where(target == ignore_index, 0.0, float("nan")))
    elif rows:
        ext().cross_entropy_forward(c.rows_view(logits), target.contiguous(), ignore_index, label_smoothing, loss,
                                    grad if with_grad else c.none_tensor(logits))
    return loss, grad


@_cross_entropy.register_fake
def _(logits, target, ignore_index, label_smoothing, with_grad):
    rows = logits.shape[0]
    return (torch.empty(rows, dtype=torch.float32, device=logits.device),
            torch.empty(logits.shape if with_grad else (0,), dtype=logits.dtype, device=logits.device))


def _setup(ctx, inputs, output):
    ctx.with_grad = inputs[4]
    ctx.save_for_backward(output[1])


def _backward(ctx, dloss, dgrad):
    if not ctx.with_grad:
        raise RuntimeError("warpkit.cross_entropy: the loss was computed without its gradient (logits did not "
                           "require grad, or grad mode was off)")
    (grad,) = ctx.saved_tensors
    # d loss / d logits of each row, scaled by the row's incoming gradient (1 / count for 'mean'),
    # computed in float32 and written in the logits' dtype.
    return torch.mul(grad, dloss.unsqueeze(1), out=torch.empty_like(grad)), None, None, None, None


_cross_entropy.register_autograd(_backward, setup_context=_setup)


def cross_entropy(input, target, ignore_index=-100, label_smoothing=0.0, reduction="mean", weight=None):
    """torch.nn.functional.cross_entropy(input, target, ignore_index=, label_smoothing=, reduction=)
    for class-index targets, with warpkit's fused rowCrossEntropy: one read of the logits gives each
    row's loss and its gradient, which is kept for the backward (no logits-sized float32 copy, no
    log-softmax kept), then scaled there by each row's incoming gradient.

    input: (C,), (N, C) or (N, C, d1, ...) float32 / float16 / bfloat16 CUDA logits (computed in
    float32; the loss has input's dtype, as torch); target: int64 class indices of shape (), (N,)
    or (N, d1, ...). reduction 'mean' divides by the rows whose target is not ignore_index (NaN when
    there is none, as torch); 'sum'; 'none'. Differences from torch: class-probability targets and
    weight= are not supported (ValueError); a target out of range that is not ignore_index gives a
    NaN loss where torch raises a device-side assertion; (N, C, d1, ...) inputs are copied with the
    class dimension last."""
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
    loss, _ = _cross_entropy(logits, target.reshape(-1), int(ignore_index), float(label_smoothing), with_grad)
    if reduction == "none":
        return loss.reshape(out_shape).to(input.dtype)
    total = loss.sum()
    if reduction == "sum":
        return total.to(input.dtype)
    count = (target != ignore_index).sum()
    return (total / count).to(input.dtype)
