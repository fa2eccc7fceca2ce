"""warpkit::segment_softmax (with its backward) and warpkit::segment_reduce over CSR offsets
(segmentSoftmax, segmentSoftmaxBackward, segmentReduceSum / Max / Min), and the public
segment_softmax / segment_reduce."""
import torch

from . import _common as c
from ._ext import ext

_REDUCE = {"sum": 0, "max": 1, "min": 2, "mean": 0}


@torch.library.custom_op("warpkit::segment_softmax", mutates_args=())
def _segment_softmax(x: torch.Tensor, offsets: torch.Tensor, log: bool) -> torch.Tensor:
    return ext().segment_softmax(x, offsets, log)  # rows in no segment: 0


@_segment_softmax.register_fake
def _(x, offsets, log):
    return torch.empty(x.shape, dtype=x.dtype, device=x.device)


@torch.library.custom_op("warpkit::segment_softmax_backward", mutates_args=())
def _segment_softmax_backward(y: torch.Tensor, dy: torch.Tensor, offsets: torch.Tensor, log: bool) -> torch.Tensor:
    return ext().segment_softmax_backward(y, dy, offsets, log)


@_segment_softmax_backward.register_fake
def _(y, dy, offsets, log):
    return torch.empty(y.shape, dtype=y.dtype, device=y.device)


def _setup(ctx, inputs, output):
    ctx.log = inputs[2]
    ctx.save_for_backward(output, inputs[1])


def _backward(ctx, dy):
    y, offsets = ctx.saved_tensors
    return _segment_softmax_backward(y, dy, offsets, ctx.log), None, None


_segment_softmax.register_autograd(_backward, setup_context=_setup)


@torch.library.custom_op("warpkit::segment_reduce", mutates_args=())
def _segment_reduce(data: torch.Tensor, offsets: torch.Tensor, op: int) -> torch.Tensor:
    return ext().segment_reduce(data, offsets, op)


@_segment_reduce.register_fake
def _(data, offsets, op):
    return torch.empty(offsets.shape[0] - 1, dtype=data.dtype, device=data.device)


def _reduce_setup(ctx, inputs, output):
    ctx.op = inputs[2]
    ctx.save_for_backward(inputs[0], inputs[1], output if ctx.op else None)


def _reduce_backward(ctx, dout):
    """torch.segment_reduce's gradient: sum gives each element its segment's incoming gradient; max
    and min split it evenly between the elements equal to the result (the NaNs when it is NaN).
    Each element's segment is the count of offsets at or before it, less one: a count of the offsets
    at each row (integer adds: the same bits in any order), then its running sum; torch ops with no
    host synchronisation, one pass over the rows each (a binary search a row took twice as long as
    torch's own backward). Offsets must not decrease (segments that do not overlap)."""
    data, offsets, out = ctx.saved_tensors
    segments = offsets.shape[0] - 1
    rows = data.shape[0]
    if segments == 0 or rows == 0:
        return torch.zeros_like(data), None, None
    at = offsets.clamp(0, rows)  # an offset past the data counts for no row, as one at rows
    marks = torch.zeros(rows + 1, dtype=torch.int32, device=data.device)
    marks.index_add_(0, at, torch.ones_like(at, dtype=torch.int32))
    seg = marks[:rows].cumsum(0, dtype=torch.int32) - 1
    inside = (seg >= 0) & (seg < segments)  # rows before the first offset or past the last: no segment
    seg = seg.clamp(0, segments - 1)
    g = dout.index_select(0, seg)
    if ctx.op == 0:
        return torch.where(inside, g, 0).to(data.dtype), None, None
    o = out.index_select(0, seg)
    hit = inside & ((data == o) | (data.isnan() & o.isnan()))
    count = _segment_reduce(hit.to(torch.float32), offsets, 0)  # float32: exact up to 2^24 ties
    g = g.float() / count.index_select(0, seg)
    return torch.where(hit, g, 0).to(data.dtype), None, None


_segment_reduce.register_autograd(_reduce_backward, setup_context=_reduce_setup)


def _check_offsets(offsets, like, name):
    if not isinstance(offsets, torch.Tensor) or offsets.dtype not in (torch.int32, torch.int64) or offsets.dim() != 1:
        raise TypeError(f"warpkit.{name}: offsets must be a 1-D int32 or int64 tensor")
    if offsets.numel() < 1:
        raise ValueError(f"warpkit.{name}: offsets needs segments + 1 entries (at least one)")
    if offsets.device != like.device and like.device.type != "meta":
        raise RuntimeError(f"warpkit.{name}: offsets must be on {like.device}, got {offsets.device}")


def segment_softmax(x, offsets, log=False):
    """Softmax (log=True: log-softmax) over the rows of each segment of x, independently in each
    column: x is (items,) or (items, heads), segment s holds rows offsets[s] .. offsets[s + 1] - 1
    (CSR offsets, int32 or int64, on x's device; clipped to the rows x has; a decreasing pair is an
    empty segment). Rows in no segment get 0. With a backward (segmentSoftmaxBackward); segments
    must not overlap. NaN and infinities as torch.softmax. float32, float16, bfloat16."""
    name = "segment_softmax"
    c.check_tensor(x, name)
    _check_offsets(offsets, x, name)
    if x.dim() not in (1, 2):
        raise RuntimeError(f"warpkit.segment_softmax: x must be (items,) or (items, heads), got {list(x.shape)}")
    x2 = x.unsqueeze(1) if x.dim() == 1 else x
    if x2.shape[1] == 0:
        return torch.zeros_like(x)
    return _segment_softmax(x2, offsets, bool(log)).reshape(x.shape)


def segment_reduce(data, reduce, offsets=None, lengths=None):
    """torch.segment_reduce(data, reduce, offsets=, lengths=) over axis 0 of a vector, with warpkit's
    segmentReduceSum / Max / Min (deterministic; 16-bit data summed in float32), and torch's
    gradient (max / min: split evenly between the elements equal to the result; offsets must then
    not decrease).
    reduce: 'sum', 'max', 'min' or 'mean'. An empty segment gives 0 (sum), -inf (max), +inf (min)
    or NaN (mean); a NaN makes its segment's result NaN (max and min too), as torch. Segments past
    the data are clipped to it ('mean' divides by the clipped length). One of offsets (segments + 1
    entries) or lengths (one a segment), int32 or int64, on data's device."""
    name = "segment_reduce"
    c.check_tensor(data, name, "data")
    if reduce not in _REDUCE:
        raise RuntimeError(f"warpkit.segment_reduce: reduce must be sum, max, min or mean, got {reduce!r}")
    if data.dim() != 1:
        raise RuntimeError("warpkit.segment_reduce: data must be 1-D (axis 0)")
    if (offsets is None) == (lengths is None):
        raise RuntimeError("warpkit.segment_reduce: give exactly one of offsets and lengths")
    if lengths is not None:
        _check_offsets(lengths, data, name)
        offsets = torch.cat([lengths.new_zeros(1), torch.cumsum(lengths, 0).to(lengths.dtype)])
    _check_offsets(offsets, data, name)
    out = _segment_reduce(data, offsets, _REDUCE[reduce])
    if reduce == "mean":  # each segment's rows, clipped to the data as the device call clips them
        o = offsets.clamp(0, data.shape[0])
        n = (o[1:] - o[:-1]).clamp(min=0).to(torch.float32)
        out = (out.float() / n).to(data.dtype)
    return out
