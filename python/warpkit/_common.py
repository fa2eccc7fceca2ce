"""What the operators share: argument checks with torch's exception types, and the 2-D row views
their device calls take."""
import math

import torch

DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def check_tensor(x, name, what="input"):
    """x is a tensor on a CUDA device (or a meta / fake one, for tracing) of a supported dtype."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"warpkit.{name}: {what} must be a torch.Tensor, got {type(x).__name__}")
    if x.device.type not in ("cuda", "meta"):
        raise RuntimeError(f"warpkit.{name}: {what} must be a CUDA tensor, got one on {x.device}")
    if x.dtype not in DTYPES:
        raise TypeError(f"warpkit.{name}: {what} dtype must be float32, float16 or bfloat16, got {x.dtype}")


def wrap_dim(dim, ndim, name):
    """dim in [0, ndim) (a 0-d tensor has one dim, as in torch); IndexError out of range."""
    n = max(ndim, 1)
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"warpkit.{name}: dim must be an int, got {type(dim).__name__}")
    if dim < -n or dim >= n:
        raise IndexError(f"warpkit.{name}: Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def as_rows(x, dim=-1):
    """x with dimension dim last, as a rows x cols matrix (a view where torch's reshape gives one),
    and the shape to give the result back: (x2, moved_shape). A 2-D x over its last dimension is
    returned itself (no view, so no autograd node)."""
    nd = x.dim()
    if nd == 0:
        return x.reshape(1, 1), ()
    if nd == 2 and dim % 2 == 1:
        return x, tuple(x.shape)
    xm = x.movedim(dim, -1) if dim % x.dim() != x.dim() - 1 else x
    shape = tuple(xm.shape)
    return xm.reshape(math.prod(shape[:-1]), shape[-1]), shape


def from_rows(y2, shape, dim, ndim):
    """The inverse of as_rows for a result of the input's shape."""
    if ndim == 0:
        return y2.reshape(())
    y = y2 if ndim == 2 else y2.reshape(shape)  # as_rows keeps 2-D shapes
    return y.movedim(-1, dim) if dim % ndim != ndim - 1 else y


def none_tensor(like):
    """The empty tensor that stands for "none" in the extension's calls, of like's dtype and device:
    one kept a (dtype, device) for plain tensors outside tracing and fake modes (it holds no memory
    and is never written), a new one otherwise."""
    if type(like) is not torch.Tensor or torch._C._len_torch_dispatch_stack() or torch.compiler.is_compiling():
        return torch.empty(0, dtype=like.dtype, device=like.device)
    key = (like.dtype, like.device)
    t = _NONE.get(key)
    if t is None:
        with torch.inference_mode(False), torch.no_grad():
            t = _NONE.setdefault(key, torch.empty(0, dtype=like.dtype, device=like.device))
    return t


_NONE = {}


def empty_as(x):
    """A new contiguous tensor of x's shape, dtype and device (torch.empty_like without its stride
    copy: the device calls write whole rows)."""
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def same_dtype(t, dtype):
    """t in dtype: t itself when it has it (no dispatch)."""
    return t if t.dtype == dtype else t.to(dtype)


def eager(*tensors):
    """Whether a call may run its operator's kernel through a torch.autograd.Function of its own
    instead of the registered torch.library op, whose calls that record a graph run torch.library's
    Python autograd kernel (tens of microseconds of host time a call, more than the kernels of a
    mid-sized row problem; those that record none are C++ throughout): plain CUDA tensors (or None),
    outside torch.compile, tracing and fake-tensor modes (torch dispatch modes) and functorch
    transforms. Either way runs the same code and kernels; the op is what torch.compile traces."""
    if torch.compiler.is_compiling() or torch._C._len_torch_dispatch_stack() > 0:
        return False
    for t in tensors:  # a loop, not a generator: this runs on every eager call
        if t is not None and (type(t) not in _PLAIN or not t.is_cuda or _wrapped(t)):
            return False
    return True


_PLAIN = (torch.Tensor, torch.nn.Parameter)
_wrapped = torch._C._functorch.is_functorch_wrapped_tensor


def graph_freed():
    """Whether the running backward frees the graph after it (no retain_graph / create_graph), so
    a saved tensor no other node holds may be overwritten in place. False outside a backward."""
    keep = getattr(torch._C._autograd, "_get_current_graph_task_keep_graph", None)
    return keep is not None and not keep()
