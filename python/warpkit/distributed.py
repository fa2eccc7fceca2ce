"""Rows split across GPUs (warpkit/device/sharded.cuh): softmax and cross-entropy of rows whose
columns are sharded over the ranks of a torch.distributed process group (a tensor-parallel
vocabulary), with one all-gather of 8-12 bytes a row in place of Megatron's three all-reduces:

    import warpkit.distributed as wd
    loss = wd.vocab_parallel_cross_entropy(logits_shard, target, shard_begin, vocab, group=tp)
    y = wd.vocab_parallel_softmax(x_shard, group=tp)

and the local steps they are made of, for users who run their own collective:

    s = wd.shard_stats(x)                              # [rows, 2] {max, sum}: one read of the shard
    s = wd.shard_stats(logits, target, shard_begin)    # [rows, 3] {max, sum, target logit}
    m = wd.stats_merge(gathered)                       # [ranks, rows, k] -> [rows, k], rank order
    y = wd.shard_softmax_apply(x, m, log=False)        # the shard's softmax from the whole rows'
    loss, grad = wd.shard_cross_entropy_finish(logits, target, m, shard_begin, vocab)

Top-k and sampling of split rows, one all-gather of each rank's k candidates a row:

    values, indices = wd.vocab_parallel_topk(logits_shard, k, shard_begin, group=tp)
    tokens = wd.vocab_parallel_sample(logits_shard, shard_begin, top_k=50, top_p=0.9, seed=s, group=tp)

    v, i = wd.shard_topk(x, k, shard_begin)            # [rows, k], global columns, -1 = absent
    values, indices = wd.topk_merge(gv, gi)            # [ranks, rows, k] -> [rows, k]
    tokens = wd.sample_merge(gv, gi, temperature, top_p, min_p, seed, offset)

equal (values bit for bit, indices, tokens) to warpkit.topk / warpkit.sample of the whole rows.
The shard holds columns [shard_begin, shard_begin + cols) of rows of `vocab`; every rank gets the
same loss bits (the merge runs in rank order). Rows are the leading dimensions (..., cols);
float32, float16, bfloat16 CUDA tensors, computed in float32. vocab_parallel_cross_entropy has a
backward (the shard's gradient, kept from the forward pass and scaled by the incoming gradient);
vocab_parallel_softmax does not (its backward needs a second collective).
"""
from typing import Optional, Tuple

import torch

from . import _common as c
from ._ext import ext


@torch.library.custom_op("warpkit::shard_stats", mutates_args=())
def _shard_stats(x: torch.Tensor, target: torch.Tensor, shard_begin: int, with_target: bool) -> torch.Tensor:
    return ext().shard_stats(x, target, shard_begin, with_target)  # CUDA tensors run warpkit._C's kernel directly


@_shard_stats.register_fake
def _(x, target, shard_begin, with_target):
    return torch.empty((x.shape[0], 3 if with_target else 2), dtype=torch.float32, device=x.device)


@torch.library.custom_op("warpkit::stats_merge", mutates_args=())
def _stats_merge(gathered: torch.Tensor) -> torch.Tensor:
    return ext().stats_merge(gathered)


@_stats_merge.register_fake
def _(gathered):
    return torch.empty(gathered.shape[1:], dtype=torch.float32, device=gathered.device)


@torch.library.custom_op("warpkit::shard_softmax_apply", mutates_args=())
def _shard_apply(x: torch.Tensor, stats: torch.Tensor, log: bool) -> torch.Tensor:
    return ext().shard_softmax_apply(x, stats, log)


@_shard_apply.register_fake
def _(x, stats, log):
    return torch.empty(x.shape, dtype=x.dtype, device=x.device)


@torch.library.custom_op("warpkit::shard_cross_entropy_finish", mutates_args=())
def _shard_finish(logits: torch.Tensor, target: torch.Tensor, stats: torch.Tensor, shard_begin: int, vocab: int,
                  ignore_index: int) -> Tuple[torch.Tensor, torch.Tensor]:
    return ext().shard_cross_entropy_finish(logits, target, stats, shard_begin, vocab, ignore_index)


@_shard_finish.register_fake
def _(logits, target, stats, shard_begin, vocab, ignore_index):
    return (torch.empty(logits.shape[0], dtype=torch.float32, device=logits.device),
            torch.empty(logits.shape, dtype=logits.dtype, device=logits.device))


@torch.library.custom_op("warpkit::shard_topk", mutates_args=())
def _shard_topk(x: torch.Tensor, k: int, largest: bool, shard_begin: int) -> Tuple[torch.Tensor, torch.Tensor]:
    return ext().shard_topk(x, k, largest, shard_begin)


@_shard_topk.register_fake
def _(x, k, largest, shard_begin):
    return (torch.empty((x.shape[0], k), dtype=x.dtype, device=x.device),
            torch.empty((x.shape[0], k), dtype=torch.int64, device=x.device))


@torch.library.custom_op("warpkit::topk_merge", mutates_args=())
def _topk_merge(gv: torch.Tensor, gi: torch.Tensor, largest: bool) -> Tuple[torch.Tensor, torch.Tensor]:
    return ext().topk_merge(gv, gi, largest)


@_topk_merge.register_fake
def _(gv, gi, largest):
    return (torch.empty(gv.shape[1:], dtype=gv.dtype, device=gv.device),
            torch.empty(gv.shape[1:], dtype=torch.int64, device=gv.device))


@torch.library.custom_op("warpkit::sample_merge", mutates_args=())
def _sample_merge(gv: torch.Tensor, gi: torch.Tensor, temperature: float, top_p: float, min_p: float, seed: int,
                  offset: int, seed_offset: Optional[torch.Tensor]) -> torch.Tensor:
    return ext().sample_merge(gv, gi, temperature, top_p, min_p, seed, offset, seed_offset)


@_sample_merge.register_fake
def _(gv, gi, temperature, top_p, min_p, seed, offset, seed_offset):
    return torch.empty(gv.shape[1], dtype=torch.int64, device=gv.device)


def _rows(x, name, what="input"):
    c.check_tensor(x, name, what)
    if x.dim() == 0 or x.shape[-1] < 1:
        raise ValueError(f"warpkit.{name}: {what} must have a last dimension (the shard's columns) of at least 1")
    x2, shape = c.as_rows(x, -1)
    return x2, shape


def _target(target, rows, x, name):
    if not isinstance(target, torch.Tensor) or target.dtype != torch.int64:
        raise ValueError(f"warpkit.{name}: target must be an int64 tensor of class indices")
    if target.numel() != rows:
        raise RuntimeError(f"warpkit.{name}: target must hold a class a row ({rows}), got {target.numel()}")
    if target.device != x.device and x.device.type != "meta":
        raise RuntimeError(f"warpkit.{name}: target must be on {x.device}, got {target.device}")
    return target.reshape(-1)


def _shard(shard_begin, cols, vocab, name):
    if not 0 <= shard_begin <= vocab - cols:
        raise ValueError(f"warpkit.{name}: the shard [{shard_begin}, {shard_begin + cols}) must lie inside "
                         f"[0, {vocab})")


def shard_stats(x, target=None, shard_begin=0):
    """Each row's softmax statistics over the shard x (..., cols): float32 (..., 2) {max, sum of
    exp(x - max)}; with target (int64, a class a row): (..., 3), the third the target's logit when
    it falls in the shard's columns [shard_begin, shard_begin + cols), else 0. One read of x."""
    name = "shard_stats"
    x2, shape = _rows(x, name)
    if target is None:
        return _shard_stats(x2, c.none_tensor(x2), 0, False).reshape(shape[:-1] + (2,))
    t = _target(target, x2.shape[0], x, name)
    if shard_begin < 0:
        raise ValueError(f"warpkit.{name}: shard_begin must be >= 0, got {shard_begin}")
    return _shard_stats(x2, t, int(shard_begin), True).reshape(shape[:-1] + (3,))


def stats_merge(gathered):
    """The merge of the ranks' statistics gathered (ranks, ..., k), k = 2 or 3, in rank order: (...,
    k). Every rank merging the same gathered tensor gets the same bits."""
    name = "stats_merge"
    if not isinstance(gathered, torch.Tensor) or gathered.dtype != torch.float32 or gathered.dim() < 2:
        raise ValueError(f"warpkit.{name}: gathered must be a float32 tensor (ranks, ..., k)")
    if gathered.shape[-1] not in (2, 3) or gathered.shape[0] < 1:
        raise ValueError(f"warpkit.{name}: gathered must have at least one rank and k = 2 or 3 statistics a row")
    ranks, k = gathered.shape[0], gathered.shape[-1]
    merged = _stats_merge(gathered.reshape(ranks, -1, k))
    return merged.reshape(gathered.shape[1:])


def shard_softmax_apply(x, stats, log=False):
    """The softmax (log=True: log-softmax) of the shard x (..., cols) of rows whose merged statistics
    are stats (..., 2): one read of x, one write. No backward."""
    name = "shard_softmax_apply"
    x2, shape = _rows(x, name)
    s = stats.reshape(-1, 2)
    if s.dtype != torch.float32 or s.shape[0] != x2.shape[0]:
        raise ValueError(f"warpkit.{name}: stats must be float32 (..., 2) with a row for each row of x")
    return _shard_apply(x2, s, bool(log)).reshape(shape)


def shard_cross_entropy_finish(logits, target, stats, shard_begin, vocab, ignore_index=-100):
    """Each row's cross-entropy loss (float32 (...)) of the whole rows, and the gradient of the shard's
    columns (logits' shape and dtype), from the merged statistics (..., 3): one read of the logits,
    one write. A target outside [0, vocab) that is not ignore_index gives NaN; an ignored row 0."""
    name = "shard_cross_entropy_finish"
    x2, shape = _rows(logits, name, "logits")
    t = _target(target, x2.shape[0], logits, name)
    _shard(shard_begin, x2.shape[1], vocab, name)
    s = stats.reshape(-1, 3)
    if s.dtype != torch.float32 or s.shape[0] != x2.shape[0]:
        raise ValueError(f"warpkit.{name}: stats must be float32 (..., 3) with a row for each row of logits")
    loss, grad = _shard_finish(x2, t, s, int(shard_begin), int(vocab), int(ignore_index))
    return loss.reshape(shape[:-1]), grad.reshape(shape)


def _all_gather(stats, group):
    import torch.distributed as dist

    ranks = dist.get_world_size(group)
    gathered = torch.empty((ranks,) + tuple(stats.shape), dtype=stats.dtype, device=stats.device)
    dist.all_gather_into_tensor(gathered, stats.contiguous(), group=group)
    return gathered


class _VocabParallelCE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, target, shard_begin, vocab, group, ignore_index):
        stats = shard_stats(logits, target, shard_begin)
        merged = stats_merge(_all_gather(stats.reshape(-1, 3), group))
        loss, grad = shard_cross_entropy_finish(logits, target, merged, shard_begin, vocab, ignore_index)
        ctx.save_for_backward(grad)
        return loss

    @staticmethod
    def backward(ctx, dloss):
        (grad,) = ctx.saved_tensors
        return torch.mul(grad, dloss.unsqueeze(-1)).to(grad.dtype), None, None, None, None, None


def vocab_parallel_cross_entropy(logits, target, shard_begin, vocab, group=None, ignore_index=-100,
                                 reduction="mean"):
    """Cross-entropy of rows whose columns are split over the ranks of `group` (torch.distributed,
    NCCL): this rank's logits (..., cols) are columns [shard_begin, shard_begin + cols) of rows of
    `vocab`; target (...) int64 holds whole-row class indices, the same on every rank. One read of
    the local logits for the statistics, one all-gather of 12 bytes a row, one read and one write
    for the loss and the shard's gradient (kept for the backward). reduction: 'mean' (over the rows
    whose target is not ignore_index), 'sum' or 'none'; every rank gets the same loss bits. The
    loss equals F.cross_entropy of the whole rows within float32 rounding (no label smoothing)."""
    name = "vocab_parallel_cross_entropy"
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"warpkit.{name}: {reduction} is not a valid value for reduction")
    loss = _VocabParallelCE.apply(logits, target, int(shard_begin), int(vocab), group, int(ignore_index))
    if reduction == "none":
        return loss
    total = loss.sum()
    if reduction == "sum":
        return total
    return total / (target != ignore_index).sum()


def vocab_parallel_softmax(x, group=None, log=False):
    """softmax (log=True: log-softmax) of rows whose columns are split over the ranks of `group`
    (torch.distributed): this rank's shard x (..., cols) in, its shard of the result out. One read
    of x for the statistics, one all-gather of 8 bytes a row, one read and one write. No backward."""
    stats = shard_stats(x)
    merged = stats_merge(_all_gather(stats.reshape(-1, 2), group))
    return shard_softmax_apply(x, merged, log)


_MAX_CANDIDATES = 2048  # ranks x k of a merge (device/sharded.cuh)


def shard_topk(x, k, shard_begin, largest=True):
    """The k largest (or smallest) of each row of the shard x (..., cols), ranked as warpkit.topk
    ranks them: values (..., k) of x's dtype (bit copies) and int64 indices (..., k) of the whole
    rows' columns (shard_begin + local). A shard of fewer than k columns pads the last ranks with
    index -1 and value -inf (+inf for the smallest), so every rank has the same shape to gather."""
    name = "shard_topk"
    x2, shape = _rows(x, name)
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"warpkit.{name}: k must be an int >= 1, got {k}")
    if shard_begin < 0:
        raise ValueError(f"warpkit.{name}: shard_begin must be >= 0, got {shard_begin}")
    v, i = _shard_topk(x2, k, bool(largest), int(shard_begin))
    out = shape[:-1] + (k,)
    return v.reshape(out), i.reshape(out)


def _gathered(gv, gi, name):
    if not isinstance(gv, torch.Tensor) or not isinstance(gi, torch.Tensor) or gi.dtype != torch.int64:
        raise ValueError(f"warpkit.{name}: gathered values and int64 indices (ranks, ..., k) expected")
    if gv.dim() < 2 or gv.shape != gi.shape or gv.shape[0] < 1 or gv.shape[-1] < 1:
        raise ValueError(f"warpkit.{name}: gathered values and indices must have the same shape (ranks, ..., k)")
    ranks, k = gv.shape[0], gv.shape[-1]
    if ranks * k > _MAX_CANDIDATES:
        raise ValueError(f"warpkit.{name}: ranks x k must be at most {_MAX_CANDIDATES}, got {ranks} x {k}")
    return gv.reshape(ranks, -1, k), gi.reshape(ranks, -1, k)


def topk_merge(gathered_values, gathered_indices, largest=True):
    """The whole rows' top k from the ranks' shard_topk outputs gathered (ranks, ..., k), rank r
    holding the r-th column range (ranges increasing with r): values (..., k) bit for bit and int64
    indices (..., k), equal to warpkit.topk of the whole rows (same `largest`). ranks x k <= 2048."""
    gv, gi = _gathered(gathered_values, gathered_indices, "topk_merge")
    v, i = _topk_merge(gv, gi, bool(largest))
    return v.reshape(gathered_values.shape[1:]), i.reshape(gathered_values.shape[1:])


def _sample_args(temperature, top_p, min_p, name):
    if not (temperature >= 0.0 and temperature != float("inf")):
        raise ValueError(f"warpkit.{name}: temperature must be finite and >= 0, got {temperature}")
    if not (0.0 < top_p <= 1.0) or not (0.0 <= min_p <= 1.0):
        raise ValueError(f"warpkit.{name}: need 0 < top_p <= 1 and 0 <= min_p <= 1, got {top_p}, {min_p}")


def sample_merge(gathered_values, gathered_indices, temperature=1.0, top_p=1.0, min_p=0.0, seed=None, offset=0,
                 seed_offset=None):
    """One int64 token (...) a row drawn from the ranks' shard_topk(largest=True) outputs gathered
    (ranks, ..., k) exactly as warpkit.sample(whole rows, top_k=k, ...) draws it: the same token for
    the same (seed, offset). Arguments as warpkit.sample's (temperature 0: the argmax; seed=None: a
    seed from torch's CPU generator, the same on every rank only under the same torch.manual_seed);
    ranks x k <= 2048."""
    name = "sample_merge"
    gv, gi = _gathered(gathered_values, gathered_indices, name)
    _sample_args(temperature, top_p, min_p, name)
    if seed_offset is not None:
        if (not isinstance(seed_offset, torch.Tensor) or seed_offset.dtype != torch.int64
                or seed_offset.numel() != 2 or seed_offset.device != gv.device):
            raise ValueError(f"warpkit.{name}: seed_offset must be an int64 tensor {{seed, offset}} on the device")
        seed_offset = seed_offset.contiguous()
    if seed is None:
        seed = int(torch.randint(0, 2**62, (), device="cpu"))
    out = _sample_merge(gv, gi, float(temperature), float(top_p), float(min_p), int(seed), int(offset), seed_offset)
    return out.reshape(gathered_values.shape[1:-1])


def _all_gather_candidates(v, i, group):
    """One all-gather of each rank's candidates (values and int64 indices packed as bytes): (ranks, rows,
    k) values and indices."""
    import torch.distributed as dist

    ranks = dist.get_world_size(group)
    rows, k = v.shape
    n8 = rows * k * 8
    mine = torch.cat([i.contiguous().view(torch.uint8).reshape(-1), v.contiguous().view(torch.uint8).reshape(-1)])
    gathered = torch.empty((ranks, mine.numel()), dtype=torch.uint8, device=v.device)
    dist.all_gather_into_tensor(gathered, mine, group=group)
    gi = gathered[:, :n8].contiguous().view(torch.int64).reshape(ranks, rows, k)
    gv = gathered[:, n8:].contiguous().view(v.dtype).reshape(ranks, rows, k)
    return gv, gi


def vocab_parallel_topk(logits_shard, k, shard_begin, group=None, largest=True):
    """torch.topk of rows whose columns are split over the ranks of `group` (torch.distributed):
    this rank's logits_shard (..., cols) holds columns [shard_begin, shard_begin + cols), ranks in
    column order (rank r the r-th range). One local top-k, one all-gather of k candidates a row,
    one merge: values (..., k) and int64 indices (..., k) of the whole rows, as warpkit.topk of the
    whole rows (ties to the lowest column, NaN first), the same on every rank. ranks x k <= 2048."""
    v, i = shard_topk(logits_shard, k, shard_begin, largest)
    shape = v.shape
    gv, gi = _all_gather_candidates(v.reshape(-1, k), i.reshape(-1, k), group)
    values, indices = topk_merge(gv, gi, largest)
    return values.reshape(shape), indices.reshape(shape)


def vocab_parallel_sample(logits_shard, shard_begin, top_k, temperature=1.0, top_p=1.0, min_p=0.0, seed=None,
                          offset=0, group=None):
    """warpkit.sample of rows whose columns are split over the ranks of `group` (as
    vocab_parallel_topk): one int64 token (...) a row, a whole-row column, the token
    warpkit.sample(whole rows, temperature, top_k, top_p, min_p, seed, offset) draws; every rank gets
    the same tokens. top_k >= 1 (ranks x top_k <= 2048). Pass the same seed on every rank (seed=None
    draws one from torch's CPU generator: the same only under the same torch.manual_seed)."""
    name = "vocab_parallel_sample"
    if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
        raise ValueError(f"warpkit.{name}: top_k must be an int >= 1, got {top_k}")
    _sample_args(temperature, top_p, min_p, name)
    v, i = shard_topk(logits_shard, top_k, shard_begin, True)
    gv, gi = _all_gather_candidates(v.reshape(-1, top_k), i.reshape(-1, top_k), group)
    return sample_merge(gv, gi, temperature, top_p, min_p, seed, offset).reshape(v.shape[:-1])
