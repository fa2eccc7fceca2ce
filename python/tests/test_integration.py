"""pytest on the GPU: the operators through torch.library.opcheck (schema, fake tensors, autograd
registration, AOT dispatch), torch.compile(fullgraph=True) of a function using every operator,
capture and replay in a CUDA graph, and no host synchronisation. Skips without CUDA."""
import cProfile
import os

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import warpkit  # noqa: E402

OPS = torch.ops.warpkit


def inputs(dtype=torch.bfloat16, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = (torch.randn(64, 768, device="cuda", generator=g)).to(dtype)
    w = (torch.randn(768, device="cuda", generator=g) + 1).to(dtype)
    b = torch.randn(768, device="cuda", generator=g).to(dtype)
    t = torch.randint(0, 768, (64,), device="cuda", generator=g)
    t[::5] = -100
    off = torch.tensor([0, 10, 10, 40, 64], device="cuda")
    return x, w, b, t, off


def every_op(x, w, b, t, off):
    """A loss and side outputs through every operator (seeded sample)."""
    h = warpkit.layer_norm(x, (x.shape[-1],), w, b)
    h = warpkit.rms_norm(h, (x.shape[-1],), w, 1e-6)
    p = warpkit.softmax(h, -1, dtype=torch.float32).to(h.dtype) + warpkit.log_softmax(h, 0)
    s = warpkit.segment_softmax(h[:, :4], off)
    v, i = warpkit.topk(h, 4)
    loss = warpkit.cross_entropy(p + s.sum(1, keepdim=True), t, label_smoothing=0.1) + v.float().mean()
    side = (warpkit.argmax(h, -1), warpkit.sample(h, temperature=0.7, top_k=20, seed=5),
            warpkit.segment_reduce(h[:, 0].contiguous(), "max", offsets=off), i)
    return loss, side


def all_ops(x, w, b, r, t, off, lengths):
    """every_op's loss plus the add norms, a negative eps and segment_reduce (max, through its
    backward) in one loss, and side outputs of the rest (argmax over all, topk over dim 0, the
    'mean' of segments given by lengths)."""
    loss, side = every_op(x, w, b, t, off)
    y, h = warpkit.add_layer_norm(x, r, (768,), w, b)
    y2, h2 = warpkit.add_rms_norm(h, y, (768,), w)
    seg = warpkit.segment_reduce(x[:, 1], "max", lengths=lengths)
    neg = warpkit.layer_norm(x, (768,), w, b, -1e-3)  # a negative eps: torch's ops inside the op's kernel
    loss = loss + (y2.float() * h2.float()).mean() + seg.float().sum() + neg.sum()
    hd = h.detach()
    side = tuple(side) + (warpkit.argmax(hd), warpkit.topk(hd, 3, dim=0)[1],
                          warpkit.segment_reduce(hd[:, 2], "mean", lengths=lengths))
    return loss, side


def all_grads(fn, leaves, r, t, off, lengths):
    """fn (all_ops, or a compiled all_ops) and its loss's gradients for leaves (x, w, b) and r:
    (loss, dx, dw, db, dr, *side outputs)."""
    loss, side = fn(*leaves, r, t, off, lengths)
    grads = torch.autograd.grad(loss, list(leaves) + [r])
    return (loss.detach(),) + tuple(grads) + tuple(side)


def same_results(got, want, rtol=None, atol=None):
    """Integer outputs equal, floating ones within float32 rounding (torch's own kernels between
    warpkit's may differ between a graph and eager launches), or rtol / atol where given."""
    assert len(got) == len(want)
    for a, e in zip(got, want):
        if a.is_floating_point():
            torch.testing.assert_close(a, e, rtol=rtol, atol=atol, equal_nan=True)
        else:
            assert torch.equal(a, e)


def python_frames(fn):
    """The source files of the Python functions one call of fn enters besides fn itself (the
    entries of cProfile's statistics that hold code objects)."""
    prof = cProfile.Profile()
    prof.runcall(fn)
    return [os.path.abspath(e.code.co_filename) for e in prof.getstats()
            if not isinstance(e.code, str) and e.code is not fn.__code__]


def test_ops_run_cxx_kernels():
    """torch.ops.warpkit.X.default on CUDA tensors without grad (what a compiled graph calls) runs
    warpkit._C's AutogradCUDA and CUDA kernels for every operator: no Python frame past torch's own
    OpOverload.__call__ (no torch.library wrapper, no warpkit code). With grad, the Python autograd
    formula records the graph through the same CUDA kernel."""
    x, w, b, t, off = inputs(torch.float32)
    r = (x * 0.5).bfloat16()
    y, h, mean, rstd = OPS.add_layer_norm.default(x, r, w, b, 1e-5)
    yr, hr, rstd_rms = OPS.add_rms_norm.default(x, r, w, 1e-5)
    none = torch.empty(0, device="cuda")
    seg = x[:, :4].contiguous()
    ys = OPS.segment_softmax.default(seg, off, False)
    so = torch.tensor([3, 1], device="cuda")
    xa, xb = x[:, :300], x[:, 300:]  # two shards of the rows (strided: read with their row stride)
    tt = t.clamp(min=0)
    st3 = torch.stack([OPS.shard_stats.default(xa, tt, 0, True), OPS.shard_stats.default(xb, tt, 300, True)])
    st2 = torch.stack([OPS.shard_stats.default(xa, none, 0, False), OPS.shard_stats.default(xb, none, 0, False)])
    m3, m2 = OPS.stats_merge.default(st3), OPS.stats_merge.default(st2)
    (va, ia), (vb, ib) = OPS.shard_topk.default(xa, 8, True, 0), OPS.shard_topk.default(xb, 8, True, 300)
    gv, gi = torch.stack([va, vb]), torch.stack([ia, ib])
    calls = [
        lambda: OPS.softmax.default(x, True),
        lambda: OPS.softmax_backward.default(y, x, False),
        lambda: OPS.layer_norm.default(x, w, b, 1e-5),
        lambda: OPS.layer_norm.default(x, w, b, -1e-3),  # a negative eps: torch's ops, called from C++
        lambda: OPS.rms_norm.default(x, w, 1e-6),
        lambda: OPS.add_layer_norm.default(x, r, w, b, 1e-5),
        lambda: OPS.add_rms_norm.default(x, r, w, 1e-5),
        lambda: OPS.norm_backward.default(x, h, w, mean, rstd, True, True, False),
        lambda: OPS.norm_backward.default(x, hr, w, none, rstd_rms, True, False, True),
        lambda: OPS.norm_backward_add.default(x, h, w, mean, rstd, x, True, True, False),
        lambda: OPS.norm_backward_add_mixed.default(x, h, w, mean, rstd, x, torch.bfloat16, True, True, False),
        lambda: OPS.cross_entropy.default(x, t, -100, 0.1, True),
        lambda: OPS.topk.default(x, 8, True),
        lambda: OPS.topk.default(x.t(), 0, False),  # k = 0 of strided rows
        lambda: OPS.argmax.default(x),
        lambda: OPS.argmax.default(x.t()),  # transposed rows: a contiguous copy, made in C++
        lambda: OPS.sample.default(x, 0.8, 50, 0.9, 0.0, 7, 0, None),
        lambda: OPS.sample.default(x, 1.0, 768, 1.0, 0.05, 0, 0, so),
        lambda: OPS.segment_softmax.default(seg, off, True),
        lambda: OPS.segment_softmax_backward.default(ys, seg, off, False),
        lambda: OPS.segment_reduce.default(x[:, 0], off, 1),  # a strided vector
        lambda: OPS.shard_stats.default(xa, tt, 0, True),
        lambda: OPS.stats_merge.default(st3),
        lambda: OPS.shard_softmax_apply.default(xa, m2, False),
        lambda: OPS.shard_cross_entropy_finish.default(xa, tt, m3, 0, 768, -100),
        lambda: OPS.shard_topk.default(xb, 8, True, 300),
        lambda: OPS.topk_merge.default(gv, gi, True),
        lambda: OPS.sample_merge.default(gv, gi, 0.8, 0.9, 0.0, 7, 0, None),
    ]
    ours = tuple(os.path.dirname(os.path.abspath(m.__file__)) for m in (warpkit, torch._library))
    with torch.no_grad():
        for fn in calls:
            fn()
            files = python_frames(fn)
            assert len(files) <= 1 and not [f for f in files if f.startswith(ours)], files
        # the kernels' answers through the ops: the merged shards equal the whole rows'
        v, i = OPS.topk.default(x, 8, True)
        assert torch.equal(OPS.topk_merge.default(gv, gi, True)[1], i) and torch.equal(i, torch.topk(x, 8).indices)
        assert torch.equal(OPS.argmax.default(x.t()), torch.argmax(x.t(), 1))
        assert OPS.topk.default(x.t(), 0, False)[0].shape == (768, 0)
        torch.testing.assert_close(OPS.shard_softmax_apply.default(xb, m2, False), torch.softmax(x, 1)[:, 300:],
                                   rtol=1e-5, atol=1e-6)
        assert torch.equal(OPS.sample_merge.default(gv, gi, 0.8, 0.9, 0.0, 7, 0, None),
                           OPS.sample.default(x, 0.8, 8, 0.9, 0.0, 7, 0, None))
        want = torch.cat([torch.softmax(seg[a:e], 0) for a, e in zip(off[:-1].tolist(), off[1:].tolist())])
        torch.testing.assert_close(ys, want, rtol=1e-5, atol=1e-6)
    xg = x.clone().requires_grad_()
    yg, _, _ = OPS.layer_norm.default(xg, w, b, 1e-5)
    (gx,) = torch.autograd.grad(yg, xg, x)
    xr = x.clone().requires_grad_()
    (ge,) = torch.autograd.grad(torch.nn.functional.layer_norm(xr, (768,), w, b, 1e-5), xr, x)
    torch.testing.assert_close(gx, ge, rtol=1e-4, atol=1e-4)
    vg, _ = OPS.topk.default(xg, 5, True)  # the Python formula (a scatter) through the C++ kernels
    (gx,) = torch.autograd.grad(vg, xg, vg)
    (ge,) = torch.autograd.grad(torch.topk(xr, 5).values, xr, vg)
    assert torch.equal(gx, ge)
    sg = seg.clone().requires_grad_()
    (gs,) = torch.autograd.grad(OPS.segment_softmax.default(sg, off, False), sg, seg)  # the backward op
    sr = seg.clone().requires_grad_()
    want = torch.cat([torch.softmax(sr[a:e], 0) for a, e in zip(off[:-1].tolist(), off[1:].tolist())])
    (ge,) = torch.autograd.grad(want, sr, seg)
    torch.testing.assert_close(gs, ge, rtol=1e-5, atol=1e-6)


def test_opcheck():
    x, w, b, t, off = inputs()
    x = x.requires_grad_()
    cases = [
        (OPS.softmax, (x, False)),
        (OPS.softmax, (x, True)),
        (OPS.layer_norm, (x, w, b, 1e-5)),
        (OPS.layer_norm, (x, None, None, -1e-3)),
        (OPS.rms_norm, (x, w, 1e-6)),
        (OPS.cross_entropy, (x, t, -100, 0.1, True)),
        (OPS.topk, (x, 5, True)),
        (OPS.argmax, (x.detach(),)),
        (OPS.sample, (x.detach(), 0.8, 10, 0.9, 0.0, 3, 0, None)),
        (OPS.segment_softmax, (x[:, :8].contiguous(), off, False)),
        (OPS.segment_reduce, (x[:, 0].detach().contiguous(), off, 0)),
    ]
    # the rest of the operators: log / smallest / max forms, the add norms, and the backward ops
    # (detached inputs: they have no backward of their own)
    xd, r = x.detach(), (x.detach() * 0.5).requires_grad_()
    y = OPS.softmax(xd, False)
    _, mean, rstd = OPS.layer_norm(xd, w, b, 1e-5)
    _, rstd_rms = OPS.rms_norm(xd, w, 1e-6)
    cases += [
        (OPS.topk, (x, 5, False)),
        (OPS.segment_softmax, (x[:, :8].contiguous(), off, True)),
        (OPS.segment_reduce, (x[:, 0].detach().contiguous(), off.int(), 1)),
        (OPS.segment_reduce, (x[:, 0].contiguous(), off, 2)),
        (OPS.add_layer_norm, (x, r, w, b, 1e-5)),
        (OPS.add_rms_norm, (x, r, w, 1e-5)),
        (OPS.add_layer_norm, (x.float(), r.detach(), w.float(), b.float(), 1e-5)),  # a bf16 residual of float32 x
        (OPS.softmax_backward, (y, xd, False)),
        (OPS.softmax_backward, (y.log(), xd, True)),
        (OPS.norm_backward, (xd, xd, w, mean, rstd, True, True, False)),
        (OPS.norm_backward, (xd, xd, None, torch.empty(0, device="cuda"), rstd_rms, False, False, True)),
        (OPS.norm_backward_add, (xd, xd, w, mean, rstd, xd, True, True, False)),
        (OPS.norm_backward_add_mixed, (xd.float(), xd.float(), w.float(), mean, rstd, xd.float(), torch.bfloat16,
                                       True, True, False)),
        (OPS.segment_softmax_backward, (y[:, :8].contiguous(), xd[:, :8].contiguous(), off, False)),
        (OPS.sample, (xd, 1.0, 768, 1.0, 0.05, 0, 0, torch.tensor([3, 1], device="cuda"))),
    ]
    for op, args in cases:
        torch.library.opcheck(op, args)


def test_compile_fullgraph_matches_eager():
    x, w, b, t, off = inputs()
    leaves = [x.float().requires_grad_(), w.float().requires_grad_(), b.float().requires_grad_()]

    def f(x, w, b):
        loss, side = every_op(x, w, b, t, off)
        return loss, side

    compiled = torch.compile(f, fullgraph=True)
    le, se = f(*leaves)
    ge = torch.autograd.grad(le, leaves)
    lc, sc = compiled(*leaves)
    gc = torch.autograd.grad(lc, leaves)
    torch.testing.assert_close(lc, le, rtol=1e-4, atol=1e-4)
    for a, c in zip(ge, gc):
        torch.testing.assert_close(c, a, rtol=1e-4, atol=1e-5)
    for a, c in zip(se, sc):
        assert torch.equal(a, c)


def capture(step):
    """(graph, outputs): step warmed up on a side stream (as torch.cuda.graphs documents), then
    captured in a CUDA graph."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = step()
    return g, out


def test_cuda_graph_capture_and_replay():
    x, w, b, t, off = inputs(torch.float32)
    xs = x.clone().requires_grad_()
    ws = w.clone().requires_grad_()
    so = torch.tensor([9, 0], device="cuda")

    def step():
        h = warpkit.layer_norm(xs, (768,), ws, b)
        loss = warpkit.cross_entropy(warpkit.log_softmax(h, -1), t)
        gx, gw = torch.autograd.grad(loss, [xs, ws])
        tok = warpkit.sample(h.detach(), top_k=50, seed_offset=so)
        return loss.detach(), gx, gw, tok, warpkit.topk(h.detach(), 3)[1]

    g, out = capture(step)
    with torch.no_grad():
        xs.copy_(x * 0.5)
    want = step()
    g.replay()
    torch.cuda.synchronize()
    for a, c in zip(want, out):
        assert torch.equal(a, c)
    first = out[3].clone()
    so[1] += 1  # a new offset, read when the kernel runs: the replay draws anew
    g.replay()
    torch.cuda.synchronize()
    h = warpkit.layer_norm(xs.detach(), (768,), ws.detach(), b)
    assert torch.equal(out[3], warpkit.sample(h, top_k=50, seed=9, offset=1))
    assert not torch.equal(out[3], first)


def _graph_inputs():
    x, w, b, t, off = inputs(torch.float32)
    leaves = [x.clone().requires_grad_(), w.clone().requires_grad_(), b.clone().requires_grad_()]
    r = (x * 0.5).bfloat16().requires_grad_()
    lengths = torch.tensor([10, 0, 30, 24], device="cuda")
    return leaves, r, t, off, lengths


def test_cuda_graph_every_op():
    """Every operator, forward and backward (all_grads), captured in one CUDA graph: a replay after
    the input changes gives what an eager call on the new input gives."""
    leaves, r, t, off, lengths = _graph_inputs()
    so = torch.tensor([4, 0], device="cuda")

    def step():
        h = warpkit.layer_norm(leaves[0].detach(), (768,), leaves[1].detach(), leaves[2].detach())
        return all_grads(all_ops, leaves, r, t, off, lengths) + (warpkit.sample(h, top_k=50, seed_offset=so),)

    g, out = capture(step)
    with torch.no_grad():
        leaves[0].mul_(0.5)
        r.add_(1.0)
    want = step()
    g.replay()
    torch.cuda.synchronize()
    same_results(out, want)


def test_compile_fullgraph_backward_every_op():
    """torch.compile(fullgraph=True) of all_grads (every operator's forward and backward, the add
    norms and segment_reduce's gradient included): no graph break, eager's results."""
    leaves, r, t, off, lengths = _graph_inputs()
    torch._dynamo.reset()
    compiled = torch.compile(all_ops, fullgraph=True)
    # inductor fuses and reorders torch's ops between warpkit's: test_compile_fullgraph_matches_eager's tolerance
    same_results(all_grads(compiled, leaves, r, t, off, lengths), all_grads(all_ops, leaves, r, t, off, lengths),
                 rtol=1e-4, atol=1e-4)
    torch._dynamo.reset()


def test_no_host_sync():
    x, w, b, t, off = inputs()
    leaves = [x.float().requires_grad_(), w.float().requires_grad_(), b.float().requires_grad_()]
    every_op(*leaves, t, off)  # warm: first-use host work (device properties) outside the check
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        loss, side = every_op(*leaves, t, off)
        torch.autograd.grad(loss, leaves)
        for red in ("mean", "sum", "none"):
            warpkit.cross_entropy(leaves[0], t, reduction=red).sum()
        warpkit.segment_reduce(leaves[0][:, 0].detach().contiguous(), "mean", offsets=off)
    finally:
        torch.cuda.set_sync_debug_mode(0)
    # every other form: the add norms, segment_reduce's backward and lengths=, a negative eps, dim=None
    # argmax, topk over dim 0, a seed drawn on the host, dtype=, the cross-entropy's torch-summed path
    gl, r, t2, off2, lengths = _graph_inputs()
    big = torch.randn(40000, 37, device="cuda").requires_grad_()
    tb = torch.randint(0, 37, (40000,), device="cuda")
    x3, t3 = torch.randn(4, 11, 6, device="cuda").requires_grad_(), torch.randint(0, 11, (4, 6), device="cuda")

    def others():
        all_grads(all_ops, gl, r, t2, off2, lengths)
        warpkit.sample(gl[0].detach(), top_p=0.9)
        torch.autograd.grad(warpkit.log_softmax(gl[0], 0, dtype=torch.bfloat16).float().sum(), gl[0])
        for red in ("mean", "sum"):
            torch.autograd.grad(warpkit.cross_entropy(big, tb, reduction=red), big)
            torch.autograd.grad(warpkit.cross_entropy(x3, t3, reduction=red, label_smoothing=0.1), x3)
        for red in ("sum", "max", "min", "mean"):
            d = gl[0][:, 3]
            torch.autograd.grad(warpkit.segment_reduce(d, red, lengths=lengths).float().sum(), gl[0])

    others()
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        others()
    finally:
        torch.cuda.set_sync_debug_mode(0)


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_ops_on_another_device():
    """Every operator on tensors of cuda:1 while cuda:0 is current (the kernels' device guard, the
    outputs' device, that device's current stream): the same results as on cuda:0, forward and
    backward."""
    leaves, r, t, off, lengths = _graph_inputs()
    so = torch.tensor([4, 1], device="cuda")

    def run(dev):
        ls = [v.detach().to(dev).requires_grad_() for v in leaves]
        rr = r.detach().to(dev).requires_grad_()
        out = all_grads(all_ops, ls, rr, t.to(dev), off.to(dev), lengths.to(dev))
        x = ls[0].detach()
        return out + (warpkit.sample(x, top_k=40, seed_offset=so.to(dev)), warpkit.log_softmax(x, 0),
                      warpkit.cross_entropy(x, t.to(dev), reduction="none"))

    assert torch.cuda.current_device() == 0
    want = run("cuda:0")
    got = run("cuda:1")
    torch.cuda.synchronize(0)
    torch.cuda.synchronize(1)
    assert all(g.device == torch.device("cuda:1") for g in got)
    same_results([g.to("cuda:0") for g in got], want)
