"""warpkit::softmax and warpkit::softmax_backward: softmax and log-softmax over the rows of a 2-D
tensor (rowSoftmax, rowSoftmaxBackward), and the public softmax / log_softmax over any dim."""
import torch

from . import _common as c
from ._ext import ext


# The ops' bodies: warpkit._C's functions of their names, also their CUDA kernels (as _ops_norm's).


@torch.library.custom_op("warpkit::softmax", mutates_args=())
def _softmax(x: torch.Tensor, log: bool) -> torch.Tensor:
    return ext().softmax(x, log)


@_softmax.register_fake
def _(x, log):
    return torch.empty(x.shape, dtype=x.dtype, device=x.device)


@torch.library.custom_op("warpkit::softmax_backward", mutates_args=())
def _softmax_backward(y: torch.Tensor, dy: torch.Tensor, log: bool) -> torch.Tensor:
    return ext().softmax_backward(y, dy, log)


@_softmax_backward.register_fake
def _(y, dy, log):
    return torch.empty(y.shape, dtype=y.dtype, device=y.device)


def _setup(ctx, inputs, output):
    ctx.log = inputs[1]
    ctx.save_for_backward(output)


def _backward(ctx, dy):
    (y,) = ctx.saved_tensors
    return _softmax_backward(y, dy, ctx.log), None


_softmax.register_autograd(_backward, setup_context=_setup)


class _SoftmaxEagerFn(torch.autograd.Function):
    """The eager form over any dim in one extension call a way (softmax_eager and its backward: the
    dimension moves, row views and allocations in C++)."""

    @staticmethod
    def forward(ctx, x, dim, log):
        y = ext().softmax_eager(x, dim, log)
        ctx.dim, ctx.log = dim, log
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        return ext().softmax_backward_eager(y, dy, ctx.dim, ctx.log), None, None


def _run(x, dim, dtype, log, name):
    # The eager fast path: a plain CUDA tensor of a supported dtype, no empty dimension, dim an int
    # in range; everything else (and every error) takes the general path below.
    if dtype is None and type(dim) is int and c.eager(x) and x.dtype in c.DTYPES:
        nd = x.dim()
        if nd and -nd <= dim < nd and x.numel():
            if x.requires_grad and torch.is_grad_enabled():
                return _SoftmaxEagerFn.apply(x, dim, log)
            return ext().softmax_eager(x, dim, log)
    c.check_tensor(x, name)
    if dtype is not None:
        if dtype not in c.DTYPES:
            raise TypeError(f"warpkit.{name}: dtype must be float32, float16 or bfloat16, got {dtype}")
        x = x.to(dtype)
    d = c.wrap_dim(dim, x.dim(), name)
    x2, shape = c.as_rows(x, d)
    y2 = _softmax(x2, log)
    return c.from_rows(y2, shape, d, x.dim())


def softmax(x, dim=-1, dtype=None):
    """softmax of x over dimension dim, as torch.softmax(x, dim, dtype=dtype), with a backward
    (warpkit::softmax_backward). float32, float16, bfloat16 CUDA tensors (computed in float32; dtype=
    casts x first, as torch does); any dim, 0-d tensors, empty dimensions; NaN and infinities as
    torch. Rows with a unit element stride and one row stride are read in place, others are made
    contiguous. On torch's current stream."""
    return _run(x, dim, dtype, False, "softmax")


def log_softmax(x, dim=-1, dtype=None):
    """log-softmax of x over dimension dim, as torch.log_softmax(x, dim, dtype=dtype), with a
    backward; see softmax."""
    return _run(x, dim, dtype, True, "log_softmax")
