"""warpkit.distributed: the sharded softmax, cross-entropy, top-k and sampler. On the CPU: shapes on
meta tensors and argument errors. On one GPU: rows cut into 1-5 shards at odd boundaries, each
shard's statistics gathered by hand and merged, against torch on the whole rows; each shard's top-k
candidates gathered by hand and merged, against warpkit.topk / warpkit.sample on the whole rows. On two GPUs: vocab_parallel_*
end to end over NCCL, two processes (skipped with fewer GPUs, saying so)."""
import os
import tempfile

import pytest

torch = pytest.importorskip("torch")
import warpkit  # noqa: E402
import warpkit.distributed as wd  # noqa: E402

F = torch.nn.functional
GPU = torch.cuda.is_available()
need_gpu = pytest.mark.skipif(not GPU, reason="no CUDA device")


def test_shapes_on_meta():
    x = torch.empty(4, 3, 100, device="meta")
    t = torch.zeros(4, 3, dtype=torch.int64, device="meta")
    assert wd.shard_stats(x).shape == (4, 3, 2)
    assert wd.shard_stats(x, t, 0).shape == (4, 3, 3)
    assert wd.stats_merge(torch.empty(2, 4, 3, 3, device="meta")).shape == (4, 3, 3)
    assert wd.shard_softmax_apply(x, torch.empty(4, 3, 2, device="meta")).shape == x.shape
    loss, grad = wd.shard_cross_entropy_finish(x, t, torch.empty(4, 3, 3, device="meta"), 100, 300)
    assert loss.shape == (4, 3) and grad.shape == x.shape
    v, i = wd.shard_topk(x, 5, 100)
    assert v.shape == (4, 3, 5) and i.shape == (4, 3, 5) and i.dtype == torch.int64
    gv, gi = torch.empty(2, 4, 3, 5, device="meta"), torch.empty(2, 4, 3, 5, dtype=torch.int64, device="meta")
    v, i = wd.topk_merge(gv, gi)
    assert v.shape == (4, 3, 5) and i.shape == (4, 3, 5)
    assert wd.sample_merge(gv, gi, seed=1).shape == (4, 3)


def test_argument_errors():
    x = torch.empty(4, 100, device="meta")
    t = torch.zeros(4, dtype=torch.int64, device="meta")
    with pytest.raises(ValueError):
        wd.shard_stats(torch.empty(4, 0, device="meta"))
    with pytest.raises(ValueError):
        wd.shard_stats(x, t.int(), 0)
    with pytest.raises(RuntimeError):
        wd.shard_stats(x, t[:3], 0)
    with pytest.raises(ValueError):
        wd.stats_merge(torch.empty(2, 4, 5, device="meta"))
    with pytest.raises(ValueError):
        wd.shard_cross_entropy_finish(x, t, torch.empty(4, 3, device="meta"), 250, 300)  # shard past vocab
    with pytest.raises(TypeError):
        wd.shard_stats(torch.empty(4, 100, dtype=torch.float64, device="meta"))
    with pytest.raises(ValueError):
        wd.vocab_parallel_cross_entropy(x, t, 0, 100, reduction="avg")
    with pytest.raises(ValueError):
        wd.shard_topk(x, 0, 0)
    with pytest.raises(ValueError):
        wd.shard_topk(x, 4, -1)
    gv, gi = torch.empty(3, 4, 700, device="meta"), torch.empty(3, 4, 700, dtype=torch.int64, device="meta")
    with pytest.raises(ValueError):
        wd.topk_merge(gv, gi)  # ranks x k > 2048
    with pytest.raises(ValueError):
        wd.topk_merge(gv[:, :, :5], gi[:, :, :5].int())
    with pytest.raises(ValueError):
        wd.sample_merge(gv[:, :, :5], gi[:, :, :5], temperature=-1.0)
    with pytest.raises(ValueError):
        wd.sample_merge(gv[:, :, :5], gi[:, :, :5], top_p=0.0)
    with pytest.raises(ValueError):
        wd.vocab_parallel_sample(x, 0, 0)


def shards(cols, n, g):
    """n shards of [0, cols) at random boundaries, each at least one column."""
    cuts = sorted(torch.randperm(cols - 1, generator=g)[: n - 1].add(1).tolist())
    b = [0] + cuts + [cols]
    return list(zip(b[:-1], b[1:]))


def seeded_rows(seed, rows, vocab, scale, dtype):
    """A generator seeded with seed and, drawn from it, rows x vocab normal logits times scale on the
    GPU, with a NaN at row 3, column 17."""
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(rows, vocab, generator=g) * scale).to(dtype).cuda()
    x[3, 17] = float("nan")
    return g, x


@need_gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_split_by_hand_matches_whole_rows(dtype):
    rows, vocab = 37, 1001
    g, x = seeded_rows(5, rows, vocab, 3, dtype)
    x[4, 500:] = float("-inf")  # all -inf in the later shards
    x[5, 9] = float("inf")
    target = torch.randint(0, vocab, (rows,), generator=g).cuda()
    target[6] = -100
    target[7] = vocab + 3  # out of range: NaN
    ref_loss = F.cross_entropy(x.double(), torch.where(target == vocab + 3, 0, target), reduction="none")
    ref_loss[7] = float("nan")
    xr = x.double().requires_grad_()
    F.cross_entropy(xr, torch.where(target == vocab + 3, -100, target), reduction="sum").backward()
    ref_sm = torch.softmax(x.double(), -1)
    for n in (1, 2, 3, 5):
        parts = shards(vocab, n, g)
        stats = torch.stack([wd.shard_stats(x[:, a:b], target, a) for a, b in parts])
        merged = wd.stats_merge(stats)
        again = wd.stats_merge(stats.clone())
        assert torch.equal(merged.view(torch.int32), again.view(torch.int32)), "merge not deterministic"
        sm_stats = wd.stats_merge(torch.stack([wd.shard_stats(x[:, a:b]) for a, b in parts]))
        y = torch.cat([wd.shard_softmax_apply(x[:, a:b], sm_stats) for a, b in parts], 1)
        tol = 1e-5 if dtype == torch.float32 else 1e-2
        torch.testing.assert_close(y.double(), ref_sm.to(y.dtype).double(), rtol=tol, atol=tol, equal_nan=True)
        out = [wd.shard_cross_entropy_finish(x[:, a:b], target, merged, a, vocab) for a, b in parts]
        for loss, _ in out[1:]:
            assert torch.equal(loss, out[0][0]) or torch.allclose(loss, out[0][0], equal_nan=True)
        loss = out[0][0]
        torch.testing.assert_close(loss.double(), ref_loss, rtol=1e-5, atol=1e-4, equal_nan=True)
        grad = torch.cat([gr for _, gr in out], 1)
        keep = [r for r in range(rows) if r not in (3, 5, 7)]  # rows with NaN / inf / bad target
        torch.testing.assert_close(grad[keep].double(), xr.grad[keep].to(dtype).double(), rtol=tol, atol=tol)


def bits(v):
    return v.view(torch.int32 if v.dtype == torch.float32 else torch.int16)


@need_gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_topk_sample_split_by_hand_matches_whole_rows(dtype):
    rows, vocab = 29, 1001
    g, x = seeded_rows(7, rows, vocab, 2, dtype)
    x[3, 900] = float("inf")
    x[4, :300] = float("-inf")  # an all -inf shard (or more)
    x[5] = torch.randint(-2, 3, (vocab,), generator=g).to(dtype).cuda()  # many ties
    x[6] = (1.0 + torch.randint(0, 8, (vocab,), generator=g) * 1e-4).to(dtype).cuda()  # equal in bf16
    x[7, 40:60] = 0.0
    x[7, 60:80] = -0.0
    x[7, 80:] = -1.0
    x[8] = float("-inf")
    cases = [shards(vocab, n, g) for n in (1, 2, 3, 5)] + [[(0, 1), (1, 3), (3, 40), (40, vocab)]]
    for parts in cases:
        for k in (1, 7, 64, min(vocab, 2048 // len(parts)) if len(parts) > 1 else 300):
            for largest in (True, False):
                cand = [wd.shard_topk(x[:, a:b], k, a, largest) for a, b in parts]
                for (a, b), (v, i) in zip(parts, cand):
                    assert (i[:, : b - a] >= a).all() and (i[:, : b - a] < b).all()
                    assert (i[:, b - a:] == -1).all()
                gv, gi = torch.stack([v for v, _ in cand]), torch.stack([i for _, i in cand])
                v, i = wd.topk_merge(gv, gi, largest)
                wv, wi = warpkit.topk(x, k, largest=largest)
                assert torch.equal(bits(v), bits(wv)) and torch.equal(i, wi), (parts, k, largest)
                v2, i2 = wd.topk_merge(gv.clone(), gi.clone(), largest)
                assert torch.equal(bits(v2), bits(v)) and torch.equal(i2, i), "merge not deterministic"
            cand = [wd.shard_topk(x[:, a:b], k, a) for a, b in parts]
            gv, gi = torch.stack([v for v, _ in cand]), torch.stack([i for _, i in cand])
            for t, p, m in ((1.0, 1.0, 0.0), (0.7, 0.9, 0.0), (1.3, 0.5, 0.05), (0.0, 1.0, 0.0), (2.0, 0.95, 0.2)):
                for seed in range(4):
                    want = warpkit.sample(x, temperature=t, top_k=k, top_p=p, min_p=m, seed=seed, offset=3 * seed)
                    got = wd.sample_merge(gv, gi, temperature=t, top_p=p, min_p=m, seed=seed, offset=3 * seed)
                    assert torch.equal(got, want), (parts, k, t, p, m, seed)


@need_gpu
@pytest.mark.skipif(GPU and torch.cuda.device_count() < 2, reason="needs two GPUs")
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_two_gpus_nccl(dtype):
    import subprocess
    import sys

    import torch.distributed as dist

    if not dist.is_nccl_available():
        pytest.skip("torch has no NCCL")
    worker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "two_gpu_worker.py")
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
                            worker, d, dtype], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        got = [torch.load(os.path.join(d, f"rank{k}.pt")) for k in range(2)]
    assert torch.equal(got[0]["loss"], got[1]["loss"]), "the ranks' losses differ"
    dt = getattr(torch, dtype)
    g = torch.Generator().manual_seed(9)
    rows, vocab = 64, 50257
    x = torch.randn(rows, vocab, generator=g).to(dt).double().requires_grad_()
    target = torch.randint(0, vocab, (rows,), generator=g)
    ref = F.cross_entropy(x, target)
    ref.backward()
    torch.testing.assert_close(got[0]["loss"].double(), ref.detach(), rtol=1e-5, atol=1e-5)
    tol = 1e-5 if dt == torch.float32 else 1e-2
    grad = torch.cat([got[0]["grad"], got[1]["grad"]], 1)
    torch.testing.assert_close(grad.double(), x.grad.to(dt).double(), rtol=tol, atol=tol)
    y = torch.cat([got[0]["y"], got[1]["y"]], 1)
    torch.testing.assert_close(y.double(), torch.softmax(x.detach(), -1).to(dt).double(), rtol=tol, atol=tol)
    xd = x.detach().to(dt).cuda()
    wv, wi = warpkit.topk(xd, 50)
    want = warpkit.sample(xd, temperature=0.8, top_k=50, top_p=0.9, seed=1234, offset=5)
    for k in range(2):
        assert torch.equal(bits(got[k]["topk_values"]), bits(wv.cpu())), f"rank {k}'s top-k values"
        assert torch.equal(got[k]["topk_indices"], wi.cpu()), f"rank {k}'s top-k indices"
        assert torch.equal(got[k]["tokens"], want.cpu()), f"rank {k}'s tokens"
