"""pytest on the GPU: each warpkit operator against torch on seeded inputs (every dtype, edge shapes,
strided and expanded inputs, NaN/inf rows), gradients against torch's float32 autograd. Skips
without CUDA; fails when the compiled extension is missing (pip install --no-build-isolation ./python)."""
import math

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import warpkit  # noqa: E402

F = torch.nn.functional
DTYPES = [torch.float32, torch.float16, torch.bfloat16]
TOL = {torch.float32: (2e-5, 2e-5), torch.float16: (1e-2, 2e-3), torch.bfloat16: (2e-2, 1.5e-2)}


def check(got, want, dtype=None, scale=1.0):
    """got equals want within dtype's tolerance (atol times scale), NaN where want is NaN."""
    dtype = dtype or want.dtype
    rtol, atol = TOL.get(dtype, TOL[torch.float32])
    assert got.shape == want.shape, (got.shape, want.shape)
    torch.testing.assert_close(got.float(), want.float(), rtol=rtol, atol=atol * scale, equal_nan=True)


def close_norm(got, want, dtype):
    """got is want within a relative error (in the 2-norm) fitting dtype: for gradients whose
    elements are small beside the element tolerances."""
    tol = {torch.float32: 1e-5, torch.float16: 5e-3, torch.bfloat16: 2e-2}[dtype]
    assert got.shape == want.shape
    assert float((got.float() - want.float()).norm()) <= tol * float(want.float().norm()) + 1e-30


def randn(*shape, dtype=torch.float32, seed=1, scale=1.0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(shape, device="cuda", generator=g) * scale).to(dtype)


SHAPES = [(), (1,), (7, 3), (300, 197), (5, 2049), (3, 50257), (2, 3, 0), (0, 5), (4, 3, 1000)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_softmax(dtype, shape):
    x = randn(*shape, dtype=dtype, scale=4)
    for d in range(-max(len(shape), 1), max(len(shape), 1)):
        check(warpkit.softmax(x, d), torch.softmax(x, d))
        check(warpkit.log_softmax(x, d), torch.log_softmax(x, d))
    check(warpkit.softmax(x, -1, dtype=torch.float32), torch.softmax(x, -1, dtype=torch.float32), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_strided_expanded_special(dtype):
    x = randn(40, 3000, dtype=dtype, scale=3)
    for v in (x[:, 5:1006], x.t(), x[:, ::3], randn(1, 777, dtype=dtype).expand(9, 777), x[7]):
        check(warpkit.softmax(v, 0), torch.softmax(v, 0))
        check(warpkit.log_softmax(v, -1), torch.log_softmax(v, -1))
    s = randn(6, 100, dtype=dtype)
    s[0, 3], s[1, 4], s[2, :], s[3, ::2], s[4, 5] = float("nan"), float("inf"), float("-inf"), float("-inf"), float("-inf")
    check(warpkit.softmax(s), torch.softmax(s, -1))
    check(warpkit.log_softmax(s), torch.log_softmax(s, -1))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("log", [False, True])
def test_softmax_grad(dtype, log):
    for shape, dim in (((33, 1000), -1), ((4, 70, 5), 1), ((3, 9000), -1)):
        x = randn(*shape, dtype=dtype, scale=2).requires_grad_()
        dy = randn(*shape, dtype=dtype, seed=2)
        xf = x.detach().float().requires_grad_()
        op, ref = (warpkit.log_softmax, torch.log_softmax) if log else (warpkit.softmax, torch.softmax)
        (gx,) = torch.autograd.grad(op(x, dim), x, dy)
        (gr,) = torch.autograd.grad(ref(xf, dim), xf, dy.float())
        assert gx.dtype == dtype
        check(gx, gr, dtype, scale=4)
        # an expanded incoming gradient (the backward of a sum)
        (gx,) = torch.autograd.grad(op(x, dim).sum(), x)
        (gr,) = torch.autograd.grad(ref(xf, dim).sum(), xf)
        check(gx, gr, dtype, scale=4)


NORM_CASES = [((5,), (5,)), ((7, 3), (3,)), ((64, 768), (768,)), ((3, 4097), (4097,)), ((2, 3, 8), (3, 8)),
              ((0, 8), (8,))]


def norm_ref(x, ns, w, b, eps, rms):
    xf = x.float()
    if rms:
        return F.rms_norm(xf, ns, None if w is None else w.float(), eps)
    return F.layer_norm(xf, ns, None if w is None else w.float(), None if b is None else b.float(), eps)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("case", NORM_CASES)
@pytest.mark.parametrize("affine", [False, True])
def test_norm_forward_backward(dtype, rms, case, affine):
    shape, ns = case
    x = (randn(*shape, dtype=dtype, scale=2) + 1).requires_grad_()
    w = (randn(*ns, dtype=dtype, seed=3) + 1).requires_grad_() if affine else None
    b = randn(*ns, dtype=dtype, seed=4).requires_grad_() if affine and not rms else None
    eps = 1e-5
    y = warpkit.rms_norm(x, ns, w, eps) if rms else warpkit.layer_norm(x, ns, w, b, eps)
    leaves = [t.detach().float().requires_grad_() if t is not None else None for t in (x, w, b)]
    yr = norm_ref(leaves[0], ns, leaves[1], leaves[2], eps, rms)
    assert y.dtype == dtype
    check(y, yr, dtype, scale=2)
    if y.numel() == 0 and x.numel() == 0 and (w is None or w.numel() == 0):
        return
    dy = randn(*shape, dtype=dtype, seed=5)
    ins = [t for t in (x, w, b) if t is not None]
    refs = [t for t in leaves if t is not None]
    gs = torch.autograd.grad(y, ins, dy)
    grs = torch.autograd.grad(yr, refs, dy.float())
    for g, gr in zip(gs, grs):
        assert g.dtype == dtype
        check(g, gr, dtype, scale=max(1.0, (x.numel() / max(1, x.shape[-1] if x.dim() else 1)) ** 0.5))


@pytest.mark.parametrize("dtype", DTYPES)
def test_norm_strided_eps_mixed_special(dtype):
    base = randn(16, 2000, dtype=dtype) + 0.5
    w, b = randn(768, dtype=dtype, seed=2), randn(768, dtype=dtype, seed=3)
    for v in (base[:, 7:775], base[:, ::2][:, :768], randn(1, 768, dtype=dtype).expand(5, 768)):
        check(warpkit.layer_norm(v, (768,), w, b), F.layer_norm(v, (768,), w, b), scale=2)
        check(warpkit.rms_norm(v, (768,), w), F.rms_norm(v, (768,), w), scale=2)
    v = base[:, :768]
    # a negative eps (torch computes with it) and float32 parameters on 16-bit input (autocast's case)
    check(warpkit.layer_norm(v, (768,), w, b, eps=-1e-3), F.layer_norm(v.float(), (768,), w.float(), b.float(),
                                                                          eps=-1e-3), dtype, scale=2)
    check(warpkit.rms_norm(v, (768,), w, eps=-1e-3), F.rms_norm(v.float(), (768,), w.float(), eps=-1e-3), dtype, 2)
    y = warpkit.layer_norm(v, (768,), w.float(), b.float())
    assert y.dtype == dtype
    check(y, F.layer_norm(v.float(), (768,), w.float(), b.float()), dtype, scale=2)
    s = v.clone()
    s[0, 3], s[1, 4], s[2, 5] = float("nan"), float("inf"), float("-inf")
    check(warpkit.layer_norm(s, (768,), w, b), F.layer_norm(s, (768,), w, b), scale=2)
    # RMSNorm on a row with an infinity: the composite formula's result (see rms_norm's docstring)
    sf = s.float()
    want = (sf * torch.rsqrt(sf.square().mean(-1, keepdim=True) + 1e-6) * w.float())
    check(warpkit.rms_norm(s, (768,), w, eps=1e-6), want, dtype, scale=2)
    assert warpkit.layer_norm(v[:, :0], (0,)).shape == (16, 0)  # rows of no columns: an empty result


CE_CASES = [(1, 1), (7, 3), (64, 1000), (8, 50257), (5, 4099)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CE_CASES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_cross_entropy(dtype, case, reduction, smoothing):
    n, cl = case
    x = randn(n, cl, dtype=dtype, scale=3).requires_grad_()
    g = torch.Generator(device="cuda").manual_seed(7)
    t = torch.randint(0, cl, (n,), device="cuda", generator=g)
    if n > 1:
        t[::3] = -100
    xf = x.detach().float().requires_grad_()
    loss = warpkit.cross_entropy(x, t, label_smoothing=smoothing, reduction=reduction)
    ref = F.cross_entropy(xf, t, label_smoothing=smoothing, reduction=reduction)
    assert loss.dtype == dtype
    check(loss, ref, dtype, scale=4)
    dl = randn(*ref.shape, dtype=torch.float32, seed=8)
    (gx,) = torch.autograd.grad(loss, x, dl.to(dtype))
    (gr,) = torch.autograd.grad(ref, xf, dl.to(dtype).float())
    assert gx.dtype == dtype
    close_norm(gx, gr, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_entropy_edges(dtype):
    x = randn(6, 11, 5, dtype=dtype)  # (N, C, d1): classes in dim 1
    t = torch.randint(0, 11, (6, 5), device="cuda")
    for red in ("mean", "none"):
        check(warpkit.cross_entropy(x, t, reduction=red), F.cross_entropy(x.float(), t, reduction=red), dtype, 4)
    x1, t0 = randn(11, dtype=dtype), torch.tensor(4, device="cuda")
    check(warpkit.cross_entropy(x1, t0), F.cross_entropy(x1.float(), t0), dtype, 4)
    ign = torch.full((4,), 3, device="cuda")
    assert torch.isnan(warpkit.cross_entropy(randn(4, 9, dtype=dtype), ign, ignore_index=3))  # all ignored: NaN
    e, te = randn(0, 9, dtype=dtype), torch.empty(0, dtype=torch.int64, device="cuda")
    assert warpkit.cross_entropy(e, te, reduction="sum").item() == 0
    assert warpkit.cross_entropy(e, te, reduction="none").shape == (0,)
    v = randn(8, 300, dtype=dtype)[:, 17:217]  # strided rows read in place
    tv = torch.randint(0, 200, (8,), device="cuda")
    check(warpkit.cross_entropy(v, tv), F.cross_entropy(v.float(), tv), dtype, 4)
    s = randn(4, 50, dtype=dtype)
    s[0, 1], s[1, :], s[2, 7] = float("nan"), float("-inf"), float("-inf")
    ts = torch.tensor([0, 2, 7, 3], device="cuda")
    check(warpkit.cross_entropy(s, ts, reduction="none"), F.cross_entropy(s.float(), ts, reduction="none"), dtype, 4)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_cross_entropy_autocast_dtype(dtype, reduction):
    """Under CUDA autocast torch returns a float32 loss for 16-bit logits; so does warpkit (the
    gradient keeps the logits' dtype in both)."""
    x = randn(29, 1001, dtype=dtype, scale=3).requires_grad_()
    t = torch.randint(0, 1001, (29,), device="cuda")
    with torch.autocast("cuda", dtype=dtype):
        got = warpkit.cross_entropy(x, t, reduction=reduction)
        want = F.cross_entropy(x, t, reduction=reduction)
    assert got.dtype == want.dtype == torch.float32
    check(got, want, dtype)
    (g,) = torch.autograd.grad(got.sum(), x)
    (gw,) = torch.autograd.grad(want.sum(), x)
    assert g.dtype == gw.dtype == dtype
    close_norm(g, gw, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_entropy_backward_reuse(dtype):
    """The eager backward scales the saved gradient in place only when the graph is freed: a kept
    graph (retain_graph), a loss used twice and an incoming gradient other than 1 stay correct."""
    x = randn(37, 3001, dtype=dtype, scale=3).requires_grad_()
    t = torch.randint(0, 3001, (37,), device="cuda")
    t[::4] = -100
    xf = x.detach().float().requires_grad_()
    for red in ("mean", "sum", "none"):
        loss = warpkit.cross_entropy(x, t, reduction=red)
        ref = F.cross_entropy(xf, t, reduction=red)
        dl = randn(*ref.shape, seed=3)
        (g1,) = torch.autograd.grad((loss.float() * dl).sum() * 2 + (loss.float() * dl).sum(), x, retain_graph=True)
        (g2,) = torch.autograd.grad((loss.float() * dl).sum(), x)  # the graph freed now: in place
        (gr,) = torch.autograd.grad((ref * dl).sum(), xf)
        close_norm(g2, gr, dtype)
        close_norm(g1, 3 * gr, dtype)
    x0 = randn(4, 9, dtype=dtype).requires_grad_()  # no kept row: NaN loss, zero gradient (torch)
    loss = warpkit.cross_entropy(x0, torch.full((4,), -100, device="cuda"))
    (g,) = torch.autograd.grad(loss, x0)
    assert torch.isnan(loss) and torch.equal(g, torch.zeros_like(g))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("rows", [1000, 40000])  # one launch of cross_entropy_reduce; past its rows: torch's sums
def test_cross_entropy_reductions_eager(dtype, rows):
    """'sum' and 'mean' of the eager path, with and without autograd: torch's values and gradients,
    the same bits on every call, a strided target, and all rows ignored (NaN, zero gradient)."""
    from warpkit import _ops_loss

    assert (rows <= _ops_loss._REDUCE_ROWS) == (rows == 1000)
    x = randn(rows, 37, dtype=dtype, scale=3).requires_grad_()
    tt = torch.randint(0, 37, (2 * rows,), device="cuda")
    tt[::6] = -100
    t = tt[::2]  # a strided target
    xf = x.detach().float().requires_grad_()
    for red in ("mean", "sum"):
        loss = warpkit.cross_entropy(x, t, reduction=red)
        ref = F.cross_entropy(xf, t, reduction=red)
        check(loss, ref, dtype, scale=4 if red == "mean" else 4 * rows)
        assert torch.equal(warpkit.cross_entropy(x, t, reduction=red), loss)  # deterministic
        with torch.no_grad():
            assert torch.equal(warpkit.cross_entropy(x, t, reduction=red), loss.detach())
        (gx,) = torch.autograd.grad(loss * 0.5, x)
        (gr,) = torch.autograd.grad(ref * 0.5, xf)
        close_norm(gx, gr, dtype)
    ign = torch.full((rows,), 5, device="cuda")
    loss = warpkit.cross_entropy(x, ign, ignore_index=5)
    (g,) = torch.autograd.grad(loss, x)
    assert torch.isnan(loss) and torch.equal(g, torch.zeros_like(g))


def distinct(shape, dtype):
    """Integers 0 .. 255 (exact in every dtype), shuffled."""
    n = math.prod(shape)
    return (torch.randperm(max(n, 1), device="cuda")[:n] % 256).reshape(shape).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_topk_argmax(dtype):
    for shape, k, dim in (((5, 1000), 7, -1), ((3, 50257), 50, -1), ((2, 70, 3), 4, 1), ((1, 1), 1, -1),
                          ((4, 9), 0, -1), ((), 1, 0), ((0, 6), 2, -1)):
        x = distinct(shape, dtype)
        for largest in (True, False):
            v, i = warpkit.topk(x, k, dim, largest)
            tv, ti = torch.topk(x, k, dim, largest)
            assert torch.equal(v, tv), (shape, k, largest)
            assert i.dtype == torch.int64 and torch.equal(torch.gather(x, dim, i) if x.dim() else x.reshape(1)[i], v)
    x = torch.stack([torch.randperm(256, device="cuda") for _ in range(6)]).to(dtype)
    for d in (0, 1, -1):
        assert torch.equal(warpkit.argmax(x, d), torch.argmax(x, d))
        assert torch.equal(warpkit.argmax(x, d, keepdim=True), torch.argmax(x, d, keepdim=True))
    f = torch.randperm(256, device="cuda").to(dtype).reshape(16, 16)
    assert torch.equal(warpkit.argmax(f), torch.argmax(f)) and warpkit.argmax(f).shape == ()
    assert warpkit.argmax(torch.tensor(3.0, device="cuda", dtype=dtype)).item() == 0
    v0, i0 = warpkit.topk(torch.tensor(3.0, device="cuda", dtype=dtype), 0)  # torch's CPU answer (CUDA's is unwritten)
    assert v0.shape == i0.shape == () and v0.item() == 3.0 and i0.item() == 0
    x = randn(3, 100, dtype=dtype)
    x[1, 40], x[1, 60] = float("nan"), float("nan")
    assert warpkit.argmax(x, 1).tolist() == torch.argmax(x, 1).tolist() and bool(torch.isnan(x[1, warpkit.argmax(x, 1)[1]]))
    xg = randn(4, 300, dtype=dtype).requires_grad_()
    v, i = warpkit.topk(xg, 5)
    (g,) = torch.autograd.grad(v.sum(), xg)
    assert g.float().sum().item() == 20 and torch.equal(g.gather(1, i), torch.ones_like(v))
    assert v.requires_grad and not i.requires_grad


@pytest.mark.parametrize("dtype", DTYPES)
def test_sample(dtype):
    x = randn(16, 5000, dtype=dtype, scale=3)
    assert torch.equal(warpkit.sample(x, temperature=0.0, seed=0), torch.argmax(x.float(), -1))
    assert torch.equal(warpkit.sample(x, top_k=1, seed=5), torch.argmax(x.float(), -1))
    a = warpkit.sample(x, temperature=0.8, top_k=50, top_p=0.9, seed=11, offset=2)
    assert torch.equal(a, warpkit.sample(x, temperature=0.8, top_k=50, top_p=0.9, seed=11, offset=2))
    kth = torch.topk(x.float(), 50).values[:, -1]
    assert bool((x.float().gather(1, a[:, None])[:, 0] >= kth).all())
    so = torch.tensor([11, 2], device="cuda")
    assert torch.equal(a, warpkit.sample(x, temperature=0.8, top_k=50, top_p=0.9, seed_offset=so))
    assert warpkit.sample(randn(2, 3, 64, dtype=dtype), seed=1).shape == (2, 3)
    # top_k = 0 on rows past 2048 columns: a draw among the 2048 largest logits, repeatable
    full = warpkit.sample(x, temperature=2.0, seed=4)
    assert torch.equal(full, warpkit.sample(x, temperature=2.0, seed=4))
    kth = torch.topk(x.float(), 2048).values[:, -1]
    assert bool((x.float().gather(1, full[:, None])[:, 0] >= kth).all())


def seg_ref(x, offsets, log):
    out = torch.zeros_like(x, dtype=torch.float32)
    o = offsets.tolist()
    for s in range(len(o) - 1):
        if o[s + 1] > o[s]:
            out[o[s]:o[s + 1]] = (torch.log_softmax if log else torch.softmax)(x[o[s]:o[s + 1]].float(), 0)
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("log", [False, True])
def test_segment_softmax(dtype, log):
    for items, heads in ((1000, 1), (3000, 8)):
        g = torch.Generator(device="cuda").manual_seed(3)
        lengths = torch.randint(0, 90, (60,), device="cuda", generator=g)
        lengths[5] = 0
        lengths[7] = 1500
        offsets = torch.cat([lengths.new_zeros(1), lengths.cumsum(0)]).clamp(max=items)
        x = randn(items, heads, dtype=dtype, scale=3).requires_grad_()
        xv = x if heads > 1 else x[:, 0]
        y = warpkit.segment_softmax(xv, offsets, log)
        xf = xv.detach().float().requires_grad_()
        yr = seg_ref(xf, offsets, log)
        check(y, yr, dtype)
        dy = randn(*xv.shape, dtype=dtype, seed=9)
        (gx,) = torch.autograd.grad(y, x, dy)
        (gr,) = torch.autograd.grad(yr, xf, dy.float())
        check(gx.reshape(xv.shape), gr, dtype, scale=4)
        check(warpkit.segment_softmax(xv, offsets.int(), log), yr, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduce", ["sum", "max", "min", "mean"])
def test_segment_reduce(dtype, reduce):
    lengths = torch.tensor([3, 0, 1, 700, 5000, 2], device="cuda")
    data = randn(int(lengths.sum()), dtype=dtype)
    got = warpkit.segment_reduce(data, reduce, lengths=lengths)
    keep = lengths > 0
    want = torch.segment_reduce(data.float(), reduce, lengths=lengths)
    check(got[keep], want[keep], dtype, scale=8)
    empty = {"sum": 0.0, "max": float("-inf"), "min": float("inf"), "mean": float("nan")}[reduce]
    torch.testing.assert_close(got[1].float(), torch.tensor(empty, device="cuda"), equal_nan=True)
    offsets = torch.cat([lengths.new_zeros(1), lengths.cumsum(0)])
    # the same bits from offsets (the empty segment's mean is NaN, which torch.equal never matches)
    torch.testing.assert_close(warpkit.segment_reduce(data, reduce, offsets=offsets), got, rtol=0, atol=0,
                               equal_nan=True)
    # torch's gradient (max / min: split between ties); a tie at the maximum and the minimum too
    data[10], data[11] = data[4:704].max(), data[4:704].min()
    xg, xr = data.clone().requires_grad_(), data.float().requires_grad_()
    dy = randn(lengths.numel(), dtype=dtype, seed=6)
    (g,) = torch.autograd.grad(warpkit.segment_reduce(xg, reduce, lengths=lengths), xg, dy)
    (gr,) = torch.autograd.grad(torch.segment_reduce(xr, reduce, lengths=lengths), xr, dy.float())
    assert g.dtype == dtype
    check(g, gr, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("shape", [(7, 3), (300, 197), (4, 3, 768), (5, 2049), (3, 50257), (0, 5)])
def test_add_norm_against_unfused_chain(dtype, rms, shape):
    """(y, h) against torch's h = x + r; y = norm(h): h bit for bit, y within tolerance; x's and r's
    gradients (the norm's plus h's own) against the chain's float32 autograd; in-place-free inputs."""
    ns = (shape[-1],)
    x = (randn(*shape, dtype=dtype, scale=2) + 1).requires_grad_()
    r = randn(*shape, dtype=dtype, seed=2).requires_grad_()
    w = (randn(*ns, dtype=dtype, seed=3) + 1).requires_grad_()
    b = None if rms else randn(*ns, dtype=dtype, seed=4).requires_grad_()
    eps = 1e-5
    y, h = warpkit.add_rms_norm(x, r, ns, w, eps) if rms else warpkit.add_layer_norm(x, r, ns, w, b, eps)
    hr = x.detach() + r.detach()
    assert h.dtype == dtype and torch.equal(h, hr)  # the same bits as torch's add
    yr_same = F.rms_norm(hr, ns, w.detach(), eps) if rms else F.layer_norm(hr, ns, w.detach(), b.detach(), eps)
    check(y, yr_same, dtype, scale=2)
    if x.numel() == 0:
        return
    leaves = [t.detach().float().requires_grad_() if t is not None else None for t in (x, r, w, b)]
    hf = leaves[0] + leaves[1]
    yf = norm_ref(hf, ns, leaves[2], leaves[3], eps, rms)
    dy, dh = randn(*shape, dtype=dtype, seed=5), randn(*shape, dtype=dtype, seed=6)
    ins = [t for t in (x, r, w, b) if t is not None]
    refs = [t for t in leaves if t is not None]
    gs = torch.autograd.grad([y, h], ins, [dy, dh])
    # yf's graph is kept: the check of y alone below differentiates it again.
    grs = torch.autograd.grad([yf, hf], refs, [dy.float(), dh.float()], retain_graph=True)
    rows = x.numel() // x.shape[-1]
    for g, gr in zip(gs, grs):
        assert g.dtype == dtype
        check(g, gr, dtype, scale=max(1.0, rows ** 0.5))
    # y alone (h unused): the plain backward.
    y2, _ = warpkit.add_rms_norm(x, r, ns, w, eps) if rms else warpkit.add_layer_norm(x, r, ns, w, b, eps)
    gx, gr_ = torch.autograd.grad(y2, [x, r], dy)
    gxr = torch.autograd.grad(yf, [leaves[0]], dy.float())[0]
    check(gx, gxr, dtype, scale=max(1.0, rows ** 0.5))
    assert torch.equal(gx, gr_)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_add_norm_mixed_and_special(dtype):
    """A residual of another dtype is promoted (torch's x + r); NaN and inf rows as torch's chain."""
    x = randn(6, 257, dtype=torch.float32, scale=3)
    r = randn(6, 257, dtype=dtype, seed=7)
    x[1, 5] = float("nan")
    x[2, 9] = float("inf")
    w, b = randn(257, seed=3) + 1, randn(257, seed=4)
    y, h = warpkit.add_layer_norm(x, r, (257,), w, b)
    hr = x + r
    assert h.dtype == hr.dtype and torch.equal(h.nan_to_num(), hr.nan_to_num())
    check(y, F.layer_norm(hr, (257,), w, b), torch.float32, scale=2)


@pytest.mark.parametrize("narrow", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("order", ["wide_first", "narrow_first"])
@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("cols", [768, 257, 70001])
def test_add_norm_mixed_dtypes(narrow, rms, order, compiled, cols):
    """A 16-bit residual beside float32 x (autocast's stream), read by the device call without a
    cast: h bit for bit torch's promoted x + r (float32), y against F.layer_norm / rms_norm of it;
    the float32 operand's gradient against torch's chain, the 16-bit one's exactly that rounded once
    (torch's gradient of the promoted add); eager and torch.compile(fullgraph=True)."""
    ns = (cols,)
    xf = (randn(8, cols, scale=2) + 1).requires_grad_()
    rn = randn(8, cols, dtype=narrow, seed=2).requires_grad_()
    w = (randn(cols, seed=3) + 1).requires_grad_()
    b = None if rms else randn(cols, seed=4).requires_grad_()
    a, c = (xf, rn) if order == "wide_first" else (rn, xf)

    def f(a, c, w, b):
        return warpkit.add_rms_norm(a, c, ns, w, 1e-5) if rms else warpkit.add_layer_norm(a, c, ns, w, b, 1e-5)

    if compiled:
        torch._dynamo.reset()  # each parametrisation is a new shape and dtype: no recompile limit across them
    y, h = (torch.compile(f, fullgraph=True) if compiled else f)(a, c, w, b)
    hr = a.detach() + c.detach()
    assert h.dtype == y.dtype == torch.float32 and torch.equal(h, hr)
    yr = F.rms_norm(hr, ns, w.detach(), 1e-5) if rms else F.layer_norm(hr, ns, w.detach(), b.detach(), 1e-5)
    check(y, yr, torch.float32, scale=2)
    dy, dh = randn(8, cols, seed=5), randn(8, cols, seed=6)
    ins = [t for t in (xf, rn, w, b) if t is not None]
    gs = torch.autograd.grad([y, h], ins, [dy, dh])
    leaves = [t.detach().float().requires_grad_() if t is not None else None for t in (xf, rn, w, b)]
    hf = leaves[0] + leaves[1]
    grs = torch.autograd.grad([norm_ref(hf, ns, leaves[2], leaves[3], 1e-5, rms), hf],
                              [t for t in leaves if t is not None], [dy, dh])
    assert gs[0].dtype == torch.float32 and gs[1].dtype == narrow
    assert torch.equal(gs[1], gs[0].to(narrow))  # the residual's gradient: the float32 one rounded once
    for g, gr in zip([gs[0]] + list(gs[2:]), [grs[0]] + list(grs[2:])):
        check(g, gr, torch.float32, scale=8)


def test_add_norm_mixed_launches_no_casts():
    """The mixed forward and its fused backward launch warpkit's kernels alone: no elementwise cast
    kernel around them (bench/gpt2_step.py's add-norms under autocast)."""
    from torch.profiler import ProfilerActivity, profile

    x = randn(64, 768, scale=2).requires_grad_()
    r = randn(64, 768, dtype=torch.bfloat16, seed=2).requires_grad_()
    w, b = (randn(768, seed=3) + 1).requires_grad_(), randn(768, seed=4).requires_grad_()
    dy, dh = randn(64, 768, seed=5), randn(64, 768, seed=6)
    for _ in range(2):  # the second pass is profiled (the first warms up)
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            y, h = warpkit.add_layer_norm(x, r, (768,), w, b)
            torch.autograd.grad([y, h], [x, r, w, b], [dy, dh])
            torch.cuda.synchronize()
    names = [e.name for e in prof.events() if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA]
    casts = [n for n in names if "copy" in n.lower() and "warpkit" not in n]
    assert not casts, casts


def test_add_norm_compile_fullgraph():
    """torch.compile(fullgraph=True) traces the forward and its backward; the same results as eager."""
    x = randn(64, 768, scale=2).requires_grad_()
    r = randn(64, 768, seed=2).requires_grad_()
    w, b = (randn(768, seed=3) + 1).requires_grad_(), randn(768, seed=4).requires_grad_()

    def f(x, r, w, b):
        y, h = warpkit.add_layer_norm(x, r, (768,), w, b)
        y2, h2 = warpkit.add_rms_norm(h, y * 0.5, (768,), w)
        return (y2 * 1.5 + h2).sum()

    le = f(x, r, w, b)
    ge = torch.autograd.grad(le, [x, r, w, b])
    cf = torch.compile(f, fullgraph=True)
    lc = cf(x, r, w, b)
    gc = torch.autograd.grad(lc, [x, r, w, b])
    torch.testing.assert_close(lc, le, rtol=1e-5, atol=1e-3)
    for a, e in zip(gc, ge):
        torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-4)


# ---- edge cases per operator: special values, strided / expanded inputs, gradients of edge shapes --

NAN, INF = float("nan"), float("inf")


def exact(got, want):
    """The same values (NaN where NaN; -0.0 and +0.0 equal) and shape."""
    assert got.shape == want.shape, (got.shape, want.shape)
    torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)


def special_rows(cols, dtype, seed=1):
    """Rows of cols columns: a NaN, two NaNs and an inf, +inf twice, every value -inf, a -inf among
    numbers, +inf and -inf, and plain numbers."""
    x = randn(8, cols, dtype=dtype, seed=seed, scale=3)
    x[0, 3] = NAN
    x[1, 5], x[1, cols - 2], x[1, 7] = NAN, NAN, INF
    x[2, 2], x[2, cols - 1] = INF, INF
    x[3, :] = -INF
    x[4, 1] = -INF
    x[5, 0], x[5, 4] = INF, -INF
    return x


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("largest", [True, False])
def test_topk_special_and_strided(dtype, largest):
    """topk against torch.topk on NaN / inf rows (NaN above every number, as torch), on row-strided,
    transposed and expanded inputs: the same values (bit copies), and indices that hold them."""
    x = special_rows(300, dtype)
    for k in (1, 5, 300):
        v, i = warpkit.topk(x, k, largest=largest)
        tv, _ = torch.topk(x, k, largest=largest)
        exact(v, tv)
        exact(x.gather(1, i), v)
    base = randn(40, 700, dtype=dtype, seed=3)
    for view, dim in ((base[:, 13:613], -1), (base.t(), 0), (base.t(), 1), (base[::2, ::3], 1),
                      (randn(1, 333, dtype=dtype).expand(6, 333), 1), (randn(333, 1, dtype=dtype).expand(333, 5), 0)):
        v, i = warpkit.topk(view, 9, dim, largest)
        tv, _ = torch.topk(view, 9, dim, largest)
        exact(v, tv)
        exact(view.gather(dim, i), v)


@pytest.mark.parametrize("dtype", DTYPES)
def test_argmax_special_and_strided(dtype):
    x = special_rows(257, dtype)
    x[6, 10] = x[6, 200] = 50.0  # ties: the first
    got, want = warpkit.argmax(x, 1), torch.argmax(x, 1)
    assert torch.equal(got[:3], want[:3]) and torch.equal(got[4:], want[4:]), (got, want)
    assert got[3].item() == 0  # a row of only -inf: the first column (torch's CUDA answer may differ: no maximum)
    base = randn(40, 700, dtype=dtype, seed=3)
    for view, dim in ((base[:, 13:613], 1), (base.t(), 0), (base.t(), 1), (base[::2, ::3], 0),
                      (randn(1, 333, dtype=dtype).expand(6, 333), 1), (randn(1, 333, dtype=dtype).expand(6, 333), 0)):
        assert torch.equal(warpkit.argmax(view, dim), torch.argmax(view, dim)), (view.shape, view.stride(), dim)
        assert torch.equal(warpkit.argmax(view, dim, keepdim=True), torch.argmax(view, dim, keepdim=True))
    assert torch.equal(warpkit.argmax(base.t()), torch.argmax(base.t()))  # dim=None on a transposed tensor
    # The documented difference: -0.0 ranks below +0.0 (torch takes the first zero).
    z = torch.tensor([-1.0, -0.0, 0.0, -2.0], device="cuda", dtype=dtype)
    assert warpkit.argmax(z).item() == 2 and warpkit.topk(z, 1)[1].item() == 2
    assert warpkit.topk(z, 4, largest=False)[1].tolist() == [3, 0, 1, 2]


@pytest.mark.parametrize("dtype", DTYPES)
def test_sample_special_rows_and_shapes(dtype):
    """The docstring's special rows (where torch.multinomial would raise): a row holding NaN gives its
    first NaN's column, a row of only -inf column 0, +inf logits one of them; strided logits give the
    same tokens as their contiguous copy; 1-D logits a 0-d token; no rows an empty result."""
    x = randn(5, 300, dtype=dtype, scale=2)
    x[0, 7], x[0, 100] = NAN, NAN
    x[1, :] = -INF
    x[2, 50], x[2, 90] = INF, INF
    for seed in range(4):
        for kw in (dict(), dict(top_k=20), dict(top_p=0.5, temperature=0.7), dict(min_p=0.1), dict(temperature=0.0)):
            t = warpkit.sample(x, seed=seed, **kw)
            assert t[0].item() == 7 and t[1].item() == 0 and t[2].item() in (50, 90), (seed, kw, t[:3])
            assert bool(((t >= 0) & (t < 300)).all())
    base = randn(300, 40, dtype=dtype, seed=4, scale=2)
    for view in (base.t(), base.t()[:, 7:250], base[:, ::2].t(), randn(40, 400, dtype=dtype, seed=5)[:, 50:350]):
        assert torch.equal(warpkit.sample(view, top_k=30, seed=9), warpkit.sample(view.contiguous(), top_k=30, seed=9))
    t = warpkit.sample(randn(64, dtype=dtype), seed=1)
    assert t.shape == () and t.dtype == torch.int64
    assert warpkit.sample(randn(0, 64, dtype=dtype), seed=1).shape == (0,)
    assert warpkit.sample(randn(1, 1, dtype=dtype), seed=1).tolist() == [0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_grad_edges(dtype):
    """Gradients against torch's float32 autograd on 0-d, one-element, odd, transposed, row-strided
    and expanded inputs, NaN / inf rows, and dtype= (the cast's gradient too)."""
    cases = [((), 0), ((1,), 0), ((7, 3), 0), ((5, 1), 1), ((3, 0), 1), ((0, 4), 0)]
    for shape, dim in cases:
        for log in (False, True):
            op, ref = (warpkit.log_softmax, torch.log_softmax) if log else (warpkit.softmax, torch.softmax)
            x = randn(*shape, dtype=dtype, scale=2).requires_grad_()
            xf = x.detach().float().requires_grad_()
            y, yr = op(x, dim), ref(xf, dim)
            check(y, yr, dtype)
            dy = randn(*shape, dtype=dtype, seed=2)
            (g,) = torch.autograd.grad(y, x, dy)
            (gr,) = torch.autograd.grad(yr, xf, dy.float())
            check(g, gr, dtype, scale=4)
    base = randn(30, 500, dtype=dtype, scale=2)
    for make, dim in ((lambda b: b[:, 17:417], -1), (lambda b: b.t(), -1), (lambda b: b[::3, ::2], 0),
                      (lambda b: b[:1].expand(9, 500), -1), (lambda b: b, -1)):
        for log in (False, True):
            op, ref = (warpkit.log_softmax, torch.log_softmax) if log else (warpkit.softmax, torch.softmax)
            b = base.clone()
            if make(b) is b:
                b = special_rows(500, dtype)
            leaf = b.clone().requires_grad_()
            leaf_f = b.float().requires_grad_()
            y, yr = op(make(leaf), dim), ref(make(leaf_f), dim)
            check(y, yr, dtype)
            dy = randn(*yr.shape, dtype=dtype, seed=5)
            (g,) = torch.autograd.grad(y, leaf, dy)
            (gr,) = torch.autograd.grad(yr, leaf_f, dy.float())
            check(g, gr, dtype, scale=8)
    x = randn(6, 300, dtype=torch.float32, scale=2).requires_grad_()
    for out_dtype in DTYPES:
        for op, ref in ((warpkit.softmax, torch.softmax), (warpkit.log_softmax, torch.log_softmax)):
            y, yr = op(x, 1, dtype=out_dtype), ref(x, 1, dtype=out_dtype)
            assert y.dtype == yr.dtype == out_dtype
            check(y, yr, out_dtype)
            dy = randn(6, 300, dtype=out_dtype, seed=6)
            (g,) = torch.autograd.grad(y, x, dy)
            (gr,) = torch.autograd.grad(yr, x, dy)
            assert g.dtype == torch.float32
            check(g, gr, out_dtype, scale=4)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rms", [False, True])
def test_norm_grad_edges(dtype, rms):
    """Norm gradients (x, weight, bias) against torch's float32 autograd on one element, one row,
    row-strided, transposed and expanded inputs, and a negative eps (torch computes with it)."""
    cols = 768

    def run(make, x0, ns, eps):
        leaf, leaf_f = x0.clone().requires_grad_(), x0.float().requires_grad_()
        w = (randn(*ns, dtype=dtype, seed=3) + 1).requires_grad_()
        b = randn(*ns, dtype=dtype, seed=4).requires_grad_()
        wf, bf = w.detach().float().requires_grad_(), b.detach().float().requires_grad_()
        if rms:
            y, yr = warpkit.rms_norm(make(leaf), ns, w, eps), F.rms_norm(make(leaf_f), ns, wf, eps)
            ins, refs = [leaf, w], [leaf_f, wf]
        else:
            y, yr = warpkit.layer_norm(make(leaf), ns, w, b, eps), F.layer_norm(make(leaf_f), ns, wf, bf, eps)
            ins, refs = [leaf, w, b], [leaf_f, wf, bf]
        check(y, yr, dtype, scale=2)
        dy = randn(*yr.shape, dtype=dtype, seed=5)
        for g, gr in zip(torch.autograd.grad(y, ins, dy), torch.autograd.grad(yr, refs, dy.float())):
            assert g.dtype == dtype
            check(g, gr, dtype, scale=max(1.0, (yr.numel() / yr.shape[-1]) ** 0.5) * 2)

    run(lambda t: t, randn(1, dtype=dtype), (1,), 1e-5)  # one element: y = b, dx = 0
    run(lambda t: t, randn(1, 33, dtype=dtype) + 1, (33,), 1e-5)  # one row
    base = randn(24, 2000, dtype=dtype) + 0.5
    run(lambda t: t[:, 7:7 + cols], base, (cols,), 1e-5)
    run(lambda t: t[::2, ::2][:, :cols], base, (cols,), 1e-5)
    run(lambda t: t.t(), randn(cols, 5, dtype=dtype) + 0.5, (cols,), 1e-5)
    run(lambda t: t.expand(6, cols), randn(1, cols, dtype=dtype) + 0.5, (cols,), 1e-5)
    run(lambda t: t, base[:, :cols].contiguous(), (cols,), -1e-3)  # rows of variance >> 1e-3: finite


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_ignore_index_everywhere(dtype, smoothing):
    """ignore_index as torch in every form: the default, -1, a valid class (0, 5), every reduction, a
    (N, C, d1) input, a 1-D input with a 0-d target; ignored rows holding NaN / inf (loss 0 as torch;
    gradient 0, where torch's is NaN: the docstring's difference); expanded and transposed logits."""
    x = randn(40, 37, dtype=dtype, scale=3)
    x[3, 4], x[8, :] = NAN, -INF  # ignored rows below
    t = torch.randint(0, 37, (40,), device="cuda", generator=torch.Generator(device="cuda").manual_seed(2))
    for ign in (-100, -1, 0, 5):
        tt = t.clone()
        tt[::4] = ign
        tt[3], tt[8] = ign, ign
        kept = (tt != ign).nonzero().flatten()
        for red in ("mean", "sum", "none"):
            xg = x.clone().requires_grad_()
            xf = x.float().requires_grad_()
            loss = warpkit.cross_entropy(xg, tt, ignore_index=ign, label_smoothing=smoothing, reduction=red)
            ref = F.cross_entropy(xf, tt, ignore_index=ign, label_smoothing=smoothing, reduction=red)
            assert loss.dtype == dtype and loss.shape == ref.shape
            check(loss, ref, dtype, scale=4 if red != "sum" else 40)
            assert not torch.isnan(loss).any()  # the NaN / -inf rows are ignored
            dl = (torch.ones_like(ref) if red != "none" else randn(40, seed=8)).to(loss.dtype)
            (g,) = torch.autograd.grad(loss, xg, dl)
            (gr,) = torch.autograd.grad(ref, xf, dl.float())
            ignored = (tt == ign).nonzero().flatten()
            assert torch.equal(g[ignored], torch.zeros_like(g[ignored]))
            close_norm(g[kept], gr[kept], dtype)
    x3 = randn(4, 11, 6, dtype=dtype, scale=2)
    t3 = torch.randint(0, 11, (4, 6), device="cuda")
    t3[1, ::2] = 7
    for red in ("mean", "sum", "none"):
        xg, xf = x3.clone().requires_grad_(), x3.float().requires_grad_()
        loss = warpkit.cross_entropy(xg, t3, ignore_index=7, label_smoothing=smoothing, reduction=red)
        ref = F.cross_entropy(xf, t3, ignore_index=7, label_smoothing=smoothing, reduction=red)
        check(loss, ref, dtype, scale=4 if red != "sum" else 24)
        (g,) = torch.autograd.grad(loss.float().sum(), xg)
        (gr,) = torch.autograd.grad(ref.sum(), xf)
        assert g.shape == x3.shape
        close_norm(g, gr, dtype)
    x1 = randn(11, dtype=dtype)
    for tgt in (3, 4):  # (a target neither in range nor ignored would be torch's device-side assertion)
        t0 = torch.tensor(tgt, device="cuda")
        for red in ("mean", "sum", "none"):
            got = warpkit.cross_entropy(x1, t0, ignore_index=4, label_smoothing=smoothing, reduction=red)
            want = F.cross_entropy(x1.float(), t0, ignore_index=4, label_smoothing=smoothing, reduction=red)
            assert got.shape == want.shape == ()
            if tgt == 4 and red == "mean":  # no kept row: NaN, as torch on the CPU and for batched
                assert torch.isnan(got)  # inputs (torch's CUDA 1-D kernel gives 0 at smoothing 0)
                continue
            check(got, want, dtype, scale=4)
    tv = torch.randint(0, 300, (6,), device="cuda")
    for view in (randn(1, 300, dtype=dtype).expand(6, 300), randn(300, 6, dtype=dtype).t()):
        xg = view.detach().requires_grad_()  # an expanded / transposed leaf
        xf = view.float().requires_grad_()
        loss = warpkit.cross_entropy(xg, tv, label_smoothing=smoothing)
        ref = F.cross_entropy(xf, tv, label_smoothing=smoothing)
        check(loss, ref, dtype, 4)
        (g,) = torch.autograd.grad(loss, xg)
        (gr,) = torch.autograd.grad(ref, xf)
        close_norm(g, gr, dtype)
    e, te = randn(0, 9, dtype=dtype), torch.empty(0, dtype=torch.int64, device="cuda")
    assert torch.isnan(warpkit.cross_entropy(e, te)) and torch.isnan(F.cross_entropy(e.float(), te))  # mean of none


@pytest.mark.parametrize("dtype", DTYPES)
def test_segment_special_and_strided(dtype):
    """segment_softmax with NaN / inf inside segments against torch.softmax of each segment, on
    strided columns; segment_reduce propagating NaN as torch.segment_reduce (values and gradients),
    offsets past the data clipped ('mean' divides by the clipped length), and empty data."""
    items, heads = 500, 4
    base = randn(items, 2 * heads, dtype=dtype, scale=3)
    base[10, 0], base[40, 1], base[41, 1], base[90, 2] = NAN, INF, INF, -INF
    base[120:160, 3] = -INF  # a whole segment of -inf in one column: NaN, as torch.softmax
    offsets = torch.tensor([0, 5, 30, 100, 120, 160, 160, 400, items], device="cuda")
    for x in (base[:, ::2], base[:, 1:1 + heads], base[:, 0]):
        for log in (False, True):
            check(warpkit.segment_softmax(x, offsets, log), seg_ref(x, offsets, log), dtype)
    data = randn(60, dtype=dtype)
    data[3], data[25] = NAN, INF
    lengths = torch.tensor([10, 0, 20, 30], device="cuda")
    for red in ("sum", "max", "min", "mean"):
        xg, xr = data.clone().requires_grad_(), data.float().requires_grad_()
        got = warpkit.segment_reduce(xg, red, lengths=lengths)
        want = torch.segment_reduce(xr, red, lengths=lengths)
        keep = lengths > 0
        check(got[keep], want[keep], dtype, scale=8)
        assert torch.isnan(got[0]) and (red == "min" or got[2].float().item() == INF)
        dy = randn(4, dtype=dtype, seed=6)
        (g,) = torch.autograd.grad(got, xg, dy)
        (gr,) = torch.autograd.grad(want, xr, dy.float())
        check(g, gr, dtype)
        strided = randn(120, dtype=dtype)[::2]
        check(warpkit.segment_reduce(strided, red, lengths=lengths)[keep],
              torch.segment_reduce(strided.float(), red, lengths=lengths)[keep], dtype, scale=8)
    d10 = randn(10, dtype=dtype)
    past = torch.tensor([0, 4, 25], device="cuda")  # the second segment clipped to rows 4 .. 9
    for red in ("sum", "max", "min", "mean"):
        got = warpkit.segment_reduce(d10, red, offsets=past)
        want = torch.stack([torch.segment_reduce(d10[a:b].float(), red, lengths=torch.tensor([b - a], device="cuda"))[0]
                            for a, b in ((0, 4), (4, 10))])
        check(got, want, dtype, scale=4)
    empty = torch.empty(0, dtype=dtype, device="cuda")
    zero = torch.tensor([0, 0, 0], device="cuda")
    exact(warpkit.segment_reduce(empty, "sum", offsets=zero).float(), torch.zeros(2, device="cuda"))
    exact(warpkit.segment_reduce(empty, "max", offsets=zero).float(), torch.full((2,), -INF, device="cuda"))
    assert warpkit.segment_softmax(torch.empty(0, 3, dtype=dtype, device="cuda"), zero[:1]).shape == (0, 3)


def test_row_strided_inputs_read_in_place():
    """Row-strided views (a unit element stride, a row stride past the row: what the device calls'
    leading dimension takes) launch no copy kernel in any row operator's forward."""
    from torch.profiler import ProfilerActivity, profile

    base = randn(64, 1000, dtype=torch.bfloat16)
    x = base[:, 100:868]  # 768 columns, row stride 1000
    w, b = randn(768, dtype=torch.bfloat16, seed=2) + 1, randn(768, dtype=torch.bfloat16, seed=3)
    t = torch.randint(0, 768, (64,), device="cuda")
    calls = [lambda: warpkit.softmax(x), lambda: warpkit.log_softmax(x, -1),
             lambda: warpkit.layer_norm(x, (768,), w, b), lambda: warpkit.rms_norm(x, (768,), w),
             lambda: warpkit.cross_entropy(x, t), lambda: warpkit.cross_entropy(x, t, reduction="none"),
             lambda: warpkit.topk(x, 8),
             lambda: warpkit.argmax(x, -1), lambda: warpkit.sample(x, top_k=20, seed=1),
             lambda: warpkit.add_layer_norm(x, x, (768,), w, b)]
    for fn in calls:
        fn()
    torch.cuda.synchronize()
    for k, fn in enumerate(calls):
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        names = [e.name for e in prof.events() if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA]
        assert names, k
        # A copy of x (bf16) would be a same-type or a bf16-to-float copy kernel; a conversion from
        # float is of a float result (reduction='none''s loss cast to x's dtype, as torch returns).
        copies = [n for n in names if "copy" in n.lower() and "warpkit" not in n and "lambda(float)" not in n]
        assert not copies, (k, copies)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rms", [False, True])
def test_norm_backward_deterministic(dtype, rms):
    """dx, dw and db are the same bits on every call (the parameters' gradients reduced over the rows
    in a fixed order), for many rows (several blocks add into each column) and the add form too."""
    for rows, cols in ((8192, 768), (3000, 4097), (64, 65536)):
        x = randn(rows, cols, dtype=dtype, scale=2).requires_grad_()
        w = (randn(cols, dtype=dtype, seed=3) + 1).requires_grad_()
        b = randn(cols, dtype=dtype, seed=4).requires_grad_()
        r = randn(rows, cols, dtype=dtype, seed=5).requires_grad_()
        dy = randn(rows, cols, dtype=dtype, seed=6)

        def grads():
            y = warpkit.rms_norm(x, (cols,), w) if rms else warpkit.layer_norm(x, (cols,), w, b)
            ins = [x, w] if rms else [x, w, b]
            y2, h = warpkit.add_rms_norm(x, r, (cols,), w) if rms else warpkit.add_layer_norm(x, r, (cols,), w, b)
            return (y,) + torch.autograd.grad(y, ins, dy) + torch.autograd.grad([y2, h], ins + [r], [dy, dy])

        first = grads()
        for _ in range(2):
            for a, e in zip(grads(), first):
                assert torch.equal(a, e), (rows, cols)
