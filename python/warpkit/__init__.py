"""warpkit for PyTorch: warpkit's device calls (the header-only CUDA toolkit in ../include) as torch
operators, registered with torch.library under the "warpkit" namespace with fake implementations,
so torch.compile(fullgraph=True) traces them, and a backward where one exists:

    import warpkit
    y = warpkit.softmax(x, dim=-1)                          # torch.softmax; also log_softmax
    y = warpkit.layer_norm(x, (768,), w, b, eps=1e-5)       # F.layer_norm
    y = warpkit.rms_norm(x, (4096,), w)                     # F.rms_norm
    y, h = warpkit.add_layer_norm(x, r, (768,), w, b)       # h = x + r; y = F.layer_norm(h); add_rms_norm
    loss = warpkit.cross_entropy(logits, target)            # F.cross_entropy, fused gradient
    v, i = warpkit.topk(x, 8)                               # torch.topk
    i = warpkit.argmax(x, dim=-1)                           # torch.argmax
    tok = warpkit.sample(logits, temperature=0.8, top_p=0.9)
    y = warpkit.segment_softmax(scores, offsets)            # softmax per CSR segment
    s = warpkit.segment_reduce(data, "sum", offsets=offsets)

float32, float16 and bfloat16 CUDA tensors, computed in float32, on torch's current stream, without
host synchronisation (CUDA graphs capture them). Each function's docstring says where it differs
from torch. Argument errors raise torch's exception types in Python.

The compiled part (warpkit._C) is built ahead of time by `pip install --no-build-isolation ./python`
from a checkout. Without it the package still imports: the operators trace (fake and meta tensors)
and check their arguments, and a call on CUDA tensors raises RuntimeError saying how to build it.
"""
import torch as _torch

from ._ext import available
from ._ops_add_norm import add_layer_norm, add_rms_norm
from ._ops_loss import cross_entropy
from ._ops_norm import layer_norm, rms_norm
from ._ops_segment import segment_reduce, segment_softmax
from ._ops_select import argmax, sample, topk
from ._ops_softmax import log_softmax, softmax
from . import distributed  # noqa: F401  (its ops' schemas, before warpkit._C registers their kernels)

available()  # imports warpkit._C where it was built: its import registers every operator's CUDA kernel

__all__ = ["softmax", "log_softmax", "layer_norm", "rms_norm", "add_layer_norm", "add_rms_norm", "cross_entropy",
           "topk", "argmax", "sample", "segment_softmax", "segment_reduce", "available", "ops"]

#: The registered operators, as torch.ops.warpkit (e.g. torch.ops.warpkit.softmax).
ops = _torch.ops.warpkit
