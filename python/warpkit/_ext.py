"""The compiled extension warpkit._C (python/csrc), loaded when the package imports (its import registers
the operators' CUDA kernels); the package imports, checks arguments and gives fake-tensor shapes
without it (CPU-only machines, CI)."""

_ext = None
_error = None


def ext():
    """warpkit._C, or RuntimeError saying how to build it."""
    global _ext, _error
    if _ext is not None:
        return _ext
    if _error is None:
        try:
            from . import _C  # built by `pip install --no-build-isolation ./python`

            _ext = _C
            return _ext
        except (ImportError, RuntimeError) as e:  # RuntimeError: a kernel registration refused
            _error = e
    raise RuntimeError(
        "warpkit: the compiled extension warpkit._C is not available "
        f"({type(_error).__name__}: {_error}). Build it with `pip install --no-build-isolation ./python` "
        "from a warpkit checkout, on a machine with torch (CUDA build) and nvcc."
    )


def available():
    """Whether the compiled extension loads."""
    try:
        ext()
        return True
    except RuntimeError:
        return False
