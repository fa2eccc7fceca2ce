"""warpkit::topk, warpkit::argmax and warpkit::sample over the rows of a 2-D tensor (rowTopK,
rowArgMax, rowSample), and the public topk / argmax / sample."""
import operator
from typing import Optional, Tuple

import torch

from . import _common as c
from ._ext import ext


@torch.library.custom_op("warpkit::topk", mutates_args=())
def _topk(x: torch.Tensor, k: int, largest: bool) -> Tuple[torch.Tensor, torch.Tensor]:
    return ext().topk(x, k, largest)  # CUDA tensors run warpkit._C's kernel of the op directly


@_topk.register_fake
def _(x, k, largest):
    rows = x.shape[0]
    return (torch.empty((rows, k), dtype=x.dtype, device=x.device),
            torch.empty((rows, k), dtype=torch.int64, device=x.device))


def _topk_setup(ctx, inputs, output):
    ctx.shape = inputs[0].shape
    ctx.save_for_backward(output[1])


def _topk_backward(ctx, dvalues, dindices):
    (indices,) = ctx.saved_tensors
    dx = torch.zeros(ctx.shape, dtype=dvalues.dtype, device=dvalues.device)
    return dx.scatter(1, indices, dvalues), None, None


_topk.register_autograd(_topk_backward, setup_context=_topk_setup)


class _TopkFn(torch.autograd.Function):
    """The eager form of the op with a gradient (c.eager): its body, without torch.library's dispatch."""

    @staticmethod
    def forward(ctx, x, k, largest):
        v, i = ext().topk(x, k, largest)
        ctx.mark_non_differentiable(i)
        _topk_setup(ctx, (x, k, largest), (v, i))
        return v, i

    @staticmethod
    def backward(ctx, dvalues, dindices):
        return _topk_backward(ctx, dvalues, dindices)


@torch.library.custom_op("warpkit::argmax", mutates_args=())
def _argmax(x: torch.Tensor) -> torch.Tensor:
    return ext().argmax(x)


@_argmax.register_fake
def _(x):
    return torch.empty(x.shape[0], dtype=torch.int64, device=x.device)


_MAX_CANDIDATES = 2048  # rowSample's candidates a row (device/topk.cuh)
_MAX_COLS = 2**31 - 1  # the device calls' int cols: longer rows raise (a cast would wrap them silently)


def _check_cols(n, name):
    if n > _MAX_COLS:
        raise RuntimeError(f"warpkit.{name}: rows of {n} elements; at most {_MAX_COLS} (2^31 - 1) are supported")


@torch.library.custom_op("warpkit::sample", mutates_args=())
def _sample(logits: torch.Tensor, temperature: float, top_k: int, top_p: float, min_p: float, seed: int,
            offset: int, seed_offset: Optional[torch.Tensor]) -> torch.Tensor:
    return ext().sample(logits, temperature, top_k, top_p, min_p, seed, offset, seed_offset)


@_sample.register_fake
def _(logits, temperature, top_k, top_p, min_p, seed, offset, seed_offset):
    return torch.empty(logits.shape[0], dtype=torch.int64, device=logits.device)


def topk(x, k, dim=-1, largest=True, sorted=True):
    """torch.topk(x, k, dim, largest, sorted) with warpkit's rowTopK: (values, indices), always
    ranked (sorted=False gives the same order). Equal values come by lowest index and NaN ranks above
    every number (first for largest, last for smallest), -0.0 just below +0.0, so the answer is one
    fixed set in one fixed order (torch's CUDA kernel may order ties differently, and takes the two
    zeros as equal). k > the dimension raises RuntimeError (no clamp), as torch. The values' gradient
    is scattered back to their columns. float32, float16, bfloat16 CUDA tensors; k = 0 as torch; a 0-d
    x gives its value and index 0 for k = 1 and also for k = 0, as torch on the CPU (torch's CUDA
    kernel leaves that k = 0 result unwritten); a dimension of at most 2^31 - 1."""
    name = "topk"
    c.check_tensor(x, name)
    d = c.wrap_dim(dim, x.dim(), name)
    n = 1 if x.dim() == 0 else x.shape[d]
    try:
        k = operator.index(k)  # an int, or any integer as torch takes it (numpy, 0-d integer tensor)
    except TypeError:
        raise TypeError(f"warpkit.topk: k must be an integer, got {type(k).__name__}") from None
    if k < 0 or k > n:
        raise RuntimeError(f"warpkit.topk: selected index k out of range (k = {k}, dimension of {n})")
    _check_cols(n, name)
    x2, shape = c.as_rows(x, d)
    if x.dim() == 0:
        k = 1  # torch (CPU) gives a 0-d x's value and index 0 for k = 0 too
    if not c.eager(x2):
        v, i = _topk(x2, k, bool(largest))
    elif torch.is_grad_enabled() and x2.requires_grad:
        v, i = _TopkFn.apply(x2, k, bool(largest))
    else:
        v, i = ext().topk(x2, k, bool(largest))
    if x.dim() == 0:
        return v.reshape(()), i.reshape(())
    out = shape[:-1] + (k,)
    return c.from_rows(v, out, d, x.dim()), c.from_rows(i, out, d, x.dim())


def argmax(x, dim=None, keepdim=False):
    """torch.argmax(x, dim, keepdim) with warpkit's rowArgMax: the first maximum's index, a NaN
    counting as the maximum (the first NaN), as torch. Unlike torch, -0.0 ranks below +0.0 (a +0.0
    after a -0.0 maximum wins; torch returns the first zero). dim=None: over the flattened tensor. An
    empty reduced dimension raises IndexError, as torch; a reduced size (dim=None: numel) above
    2^31 - 1 raises RuntimeError."""
    name = "argmax"
    c.check_tensor(x, name)
    if dim is None:
        if x.numel() == 0:
            raise RuntimeError("warpkit.argmax: Expected reduction dim to be specified for input.numel() == 0.")
        _check_cols(x.numel(), name)
        i = _argmax(x.reshape(1, -1)).reshape(())
        return i.reshape([1] * x.dim()) if keepdim else i
    d = c.wrap_dim(dim, x.dim(), name)
    if x.dim() and x.shape[d] == 0:
        raise IndexError("warpkit.argmax: Expected reduction dim to have non-zero size.")
    _check_cols(x.shape[d] if x.dim() else 1, name)
    x2, shape = c.as_rows(x, d)
    i = ext().argmax(x2) if c.eager(x2) else _argmax(x2)
    if x.dim() == 0:
        return i.reshape(())
    if x.dim() != 2:
        i = i.reshape(shape[:-1])
    return i.unsqueeze(d) if keepdim else i


def sample(logits, temperature=1.0, top_k=0, top_p=1.0, min_p=0.0, seed=None, offset=0, seed_offset=None):
    """One column of each row of logits (the last dim), int64, drawn from softmax(logits /
    temperature) restricted to the top_k largest logits (0: all), then to those of probability at
    least min_p times the largest, then to the smallest ranked set of probability at least top_p
    (warpkit's rowSample). temperature 0 is the argmax (warpkit.argmax's first maximum, any row
    length). rowSample holds at most 2048 candidates a row: top_k is at most 2048, and top_k = 0 on
    rows longer than 2048 draws from the 2048 largest logits (a full-row draw would also reach the
    rest, whose share of the probability is mostly negligible after softmax but not always). The
    draw is Philox4x32-10 as curand_init(seed, row, offset) + curand_uniform: a (seed, offset) gives
    the same tokens on every run. seed=None draws a seed from torch's CPU generator
    (torch.manual_seed makes it repeatable; no device synchronisation). seed_offset: an int64 CUDA
    tensor {seed, offset} read when the kernel runs, for CUDA graphs (advance it between replays);
    it replaces seed and offset. Candidates rank as topk's (ties by lowest index). Special rows
    (where torch.multinomial would raise): a row holding NaN gives its first NaN's index, a row of
    -inf only index 0, +inf logits one of them. temperature must be finite (+inf raises, NaN too);
    rows of at most 2^31 - 1 logits."""
    name = "sample"
    c.check_tensor(logits, name, "logits")
    if logits.dim() == 0:
        raise RuntimeError("warpkit.sample: logits must have at least one dimension")
    n = logits.shape[-1]
    if not (temperature >= 0.0 and temperature != float("inf")):
        raise ValueError(f"warpkit.sample: temperature must be finite and >= 0, got {temperature}")
    if not (0.0 < top_p <= 1.0) or not (0.0 <= min_p <= 1.0):
        raise ValueError(f"warpkit.sample: need 0 < top_p <= 1 and 0 <= min_p <= 1, got {top_p}, {min_p}")
    if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 0 or top_k > min(n, _MAX_CANDIDATES):
        raise ValueError(f"warpkit.sample: top_k must be in [0, {min(n, _MAX_CANDIDATES)}] with rows of {n} "
                         f"(0: every column, at most {_MAX_CANDIDATES} candidates a row), got {top_k}")
    if n == 0 and logits.numel() == 0 and logits.shape[:-1].numel() > 0:
        raise RuntimeError("warpkit.sample: rows of no columns")
    _check_cols(n, name)
    if seed_offset is not None:
        if (not isinstance(seed_offset, torch.Tensor) or seed_offset.dtype != torch.int64
                or seed_offset.numel() != 2 or seed_offset.device != logits.device):
            raise ValueError("warpkit.sample: seed_offset must be an int64 tensor {seed, offset} on the logits' device")
        seed_offset = seed_offset.contiguous()
    x2, shape = c.as_rows(logits, -1)
    if temperature == 0.0 and n > 0:
        return _argmax(x2).reshape(shape[:-1])
    if seed is None:
        seed = int(torch.randint(0, 2**62, (), device="cpu"))
    top_k = min(top_k or n, _MAX_CANDIDATES)
    return _sample(x2, float(temperature), top_k, float(top_p), float(min_p), int(seed), int(offset),
                   seed_offset).reshape(shape[:-1])
