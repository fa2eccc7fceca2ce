"""warpkit for PyTorch: softmax and log-softmax over one dimension of a CUDA tensor, computed by
warpkit's rowSoftmax (the header-only CUDA toolkit in ../include).

    import warpkit
    y = warpkit.softmax(x, dim=-1)       # as torch.softmax(x, dim)
    z = warpkit.log_softmax(x, dim=-1)   # as torch.log_softmax(x, dim)

Types: float32, float16, bfloat16 (computed in float32). Inputs whose softmax dimension has a unit
stride and whose other dimensions collapse into one row stride (a contiguous tensor, a slice of
rows, a column slice of a matrix) are read in place; anything else is first made contiguous. The
result is a new tensor (contiguous, or a transposed view of one when dim is not the last). It runs
on PyTorch's current stream. NaN and infinities follow torch.softmax.

Errors are Python exceptions: RuntimeError for a CPU tensor and for an empty or too long
dimension, TypeError for another dtype, IndexError for a dim out of range.

The compiled part is built by `pip install --no-build-isolation ./python`, or on first use with
torch.utils.cpp_extension.load (JIT, cached under $WARPKIT_TORCH_BUILD or torch's default).
"""
import os

__all__ = ["softmax", "log_softmax", "load"]

_ext = None


def load(verbose=False):
    """The compiled extension: the installed one, else a JIT build of csrc/softmax.cu."""
    global _ext
    if _ext is not None:
        return _ext
    try:
        from . import _C  # built by setup.py
        _ext = _C
        return _ext
    except ImportError:
        pass
    from torch.utils.cpp_extension import load as jit_load
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    include = os.environ.get("WARPKIT_INCLUDE", os.path.join(os.path.dirname(root), "include"))
    build = os.environ.get("WARPKIT_TORCH_BUILD")
    if build:
        os.makedirs(build, exist_ok=True)
    _ext = jit_load(name="warpkit_torch", sources=[os.path.join(root, "csrc", "softmax.cu")],
                    extra_include_paths=[include], extra_cuda_cflags=["-O3", "-std=c++17"],
                    extra_cflags=["-O3", "-std=c++17"], build_directory=build, verbose=verbose)
    return _ext


def _check(x, dim, name):
    """The argument errors, raised in Python before the extension is called."""
    import torch
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"warpkit.{name}: x must be a torch.Tensor, got {type(x).__name__}")
    if not x.is_cuda:
        raise RuntimeError(f"warpkit.{name}: x must be a CUDA tensor, got one on {x.device}")
    if x.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        raise TypeError(f"warpkit.{name}: dtype must be float32, float16 or bfloat16, got {x.dtype}")
    if x.dim() < 1:
        raise RuntimeError(f"warpkit.{name}: x must have at least one dimension")
    if x.size(dim) == 0:  # IndexError for a dim out of range
        raise RuntimeError(f"warpkit.{name}: dimension {dim} is empty")


def softmax(x, dim=-1):
    """softmax of x over dimension dim (see the module docstring)."""
    _check(x, dim, "softmax")
    return load().softmax(x, dim)


def log_softmax(x, dim=-1):
    """log-softmax of x over dimension dim (see the module docstring)."""
    _check(x, dim, "log_softmax")
    return load().log_softmax(x, dim)
