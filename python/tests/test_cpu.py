"""pytest without a GPU: the package imports without its compiled extension, checks its arguments
with torch's exception types, and its operators' fake implementations give torch's shapes (meta
tensors, fake CUDA tensors, make_fx tracing). Skips only where torch is missing."""
import sys

import pytest

torch = pytest.importorskip("torch")

import warpkit  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402
from torch.fx.experimental.proxy_tensor import make_fx  # noqa: E402

F = torch.nn.functional


def meta(*shape, dtype=torch.float32):
    return torch.empty(shape, device="meta", dtype=dtype)


def same(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)


# Every operator, each with a C++ CUDA kernel (python/csrc/module.cpp and ops_select.cpp register them
# when warpkit._C imports).
OPS = ("softmax", "softmax_backward", "layer_norm", "rms_norm", "norm_backward", "add_layer_norm", "add_rms_norm",
       "norm_backward_add", "norm_backward_add_mixed", "cross_entropy", "topk", "argmax", "sample", "segment_softmax",
       "segment_softmax_backward", "segment_reduce", "shard_stats", "stats_merge", "shard_softmax_apply",
       "shard_cross_entropy_finish", "shard_topk", "topk_merge", "sample_merge")


def test_registered_ops():
    """`import warpkit` defines every operator (warpkit.distributed's too), and no other."""
    names = {n.split("::")[1] for n in torch._C._dispatch_get_all_op_names() if n.startswith("warpkit::")}
    assert names == set(OPS), names ^ set(OPS)
    for name in OPS:
        assert hasattr(torch.ops.warpkit, name), name


def test_schemas_fakes_and_cuda_kernels():
    """Each op's schema, fake (Meta) kernel, body and autograd kernel come from Python, with or
    without warpkit._C; its CUDA and AutogradCUDA kernels come from warpkit._C's import: present
    exactly where it loads (CI: absent; a machine that built it: present)."""
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    built = warpkit.available()
    for name in OPS:
        q = f"warpkit::{name}"
        assert torch._C._dispatch_has_kernel(q), q
        assert has(q, "Meta") and has(q, "CompositeExplicitAutograd") and has(q, "Autograd"), q
        assert has(q, "CUDA") == built and has(q, "AutogradCUDA") == built, (q, built)


@pytest.mark.parametrize("shape", [(), (5,), (3, 0), (0, 4), (2, 3, 7), (4, 1, 1)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_softmax_shapes(shape, dtype):
    x = meta(*shape, dtype=dtype)
    for d in range(-max(len(shape), 1), max(len(shape), 1)):
        same(warpkit.softmax(x, d), torch.softmax(x, d))
        same(warpkit.log_softmax(x, d), torch.log_softmax(x, d))
    same(warpkit.softmax(x, -1, dtype=torch.float32), torch.softmax(x, -1, dtype=torch.float32))


def test_norm_shapes():
    x = meta(2, 3, 8, dtype=torch.bfloat16)
    w, b = meta(3, 8, dtype=torch.bfloat16), meta(3, 8, dtype=torch.bfloat16)
    same(warpkit.layer_norm(x, (3, 8), w, b), F.layer_norm(x, (3, 8), w, b))
    same(warpkit.layer_norm(x, 8), F.layer_norm(x, (8,)))
    same(warpkit.rms_norm(x, (8,), meta(8, dtype=torch.bfloat16)), x)
    same(warpkit.layer_norm(meta(0, 5), (5,)), meta(0, 5))


def test_cross_entropy_shapes():
    logits, t = meta(6, 11, dtype=torch.float16), torch.empty(6, dtype=torch.int64, device="meta")
    for red in ("mean", "sum", "none"):
        same(warpkit.cross_entropy(logits, t, reduction=red), F.cross_entropy(logits, t, reduction=red))
    x3, t3 = meta(2, 11, 5), torch.empty(2, 5, dtype=torch.int64, device="meta")
    same(warpkit.cross_entropy(x3, t3, reduction="none"), F.cross_entropy(x3, t3, reduction="none"))
    same(warpkit.cross_entropy(meta(11), torch.empty((), dtype=torch.int64, device="meta")), meta())


def test_select_and_segment_shapes():
    x = meta(4, 9, 6)
    v, i = warpkit.topk(x, 3, dim=1)
    tv, ti = torch.topk(x, 3, dim=1)
    same(v, tv)
    same(i, ti)
    same(warpkit.argmax(x, dim=1), torch.argmax(x, dim=1))
    same(warpkit.argmax(x, dim=2, keepdim=True), torch.argmax(x, dim=2, keepdim=True))
    same(warpkit.argmax(x), torch.argmax(x))
    assert warpkit.sample(meta(3, 50), seed=1).shape == (3,)
    for t in (0.0, 1.0):  # rows past rowSample's 2048 candidates: the argmax, or the 2048 largest
        assert warpkit.sample(meta(3, 5000), temperature=t, seed=1).shape == (3,)
    off = torch.empty(4, dtype=torch.int32, device="meta")
    same(warpkit.segment_softmax(meta(10, 4), off), meta(10, 4))
    same(warpkit.segment_reduce(meta(10), "max", offsets=off), meta(3))


def test_argument_errors():
    x = meta(3, 4)
    with pytest.raises(RuntimeError, match="CUDA"):
        warpkit.softmax(torch.randn(3, 4))
    with pytest.raises(TypeError, match="dtype"):
        warpkit.softmax(meta(3, 4, dtype=torch.float64))
    with pytest.raises(TypeError, match="dtype"):
        warpkit.softmax(x, dtype=torch.float64)
    with pytest.raises(IndexError):
        warpkit.softmax(x, dim=2)
    with pytest.raises(IndexError):
        warpkit.softmax(meta(), dim=1)
    with pytest.raises(RuntimeError, match="normalized_shape"):
        warpkit.layer_norm(x, (5,))
    for op in (warpkit.layer_norm, warpkit.rms_norm):  # as torch: no empty normalized_shape, so no 0-d input
        for shape in ((), (3, 4)):
            with pytest.raises(RuntimeError, match="at least 1-dimensional"):
                op(meta(*shape), ())
    with pytest.raises(RuntimeError, match="weight"):
        warpkit.layer_norm(x, (4,), meta(5))
    with pytest.raises(ValueError, match="reduction"):
        warpkit.cross_entropy(x, torch.empty(3, dtype=torch.int64, device="meta"), reduction="avg")
    with pytest.raises(ValueError, match="int64"):
        warpkit.cross_entropy(x, torch.empty(3, dtype=torch.int32, device="meta"))
    with pytest.raises(RuntimeError, match="label_smoothing"):
        warpkit.cross_entropy(x, torch.empty(3, dtype=torch.int64, device="meta"), label_smoothing=1.5)
    with pytest.raises(RuntimeError, match="k out of range"):
        warpkit.topk(x, 5)
    with pytest.raises(IndexError, match="non-zero"):
        warpkit.argmax(meta(3, 0), dim=1)
    with pytest.raises(ValueError, match="top_p"):
        warpkit.sample(x, top_p=0.0, seed=0)
    with pytest.raises(ValueError, match="top_k"):
        warpkit.sample(meta(2, 5000), top_k=2049, seed=0)
    with pytest.raises(ValueError, match="top_k"):
        warpkit.sample(x, top_k=5, seed=0)
    with pytest.raises(TypeError, match="offsets"):
        warpkit.segment_softmax(meta(5), torch.empty(3, device="meta"))
    # rows past the device calls' int columns raise (the int cast would wrap 2^32 + 5 to 5)
    for f in (lambda t: warpkit.topk(t, 1), lambda t: warpkit.argmax(t, 1), lambda t: warpkit.argmax(t),
              lambda t: warpkit.sample(t, top_k=1, seed=0)):
        with pytest.raises(RuntimeError, match="2\\^31 - 1"):
            f(meta(1, 2**32 + 5))
    with pytest.raises(RuntimeError, match="2\\^31 - 1"):
        warpkit.argmax(meta(2, 2**31))
    # k as torch takes it: any integer (numpy, a 0-d integer tensor); a float is a TypeError
    np = sys.modules.get("numpy")  # torch imports it where it is installed
    for k in (torch.tensor(2),) + ((np.int64(2),) if np else ()):
        same(warpkit.topk(x, k)[1], torch.topk(x, 2)[1])
    with pytest.raises(TypeError, match="integer"):
        warpkit.topk(x, 2.0)
    assert warpkit.argmax(meta(2, 2**30), 1).shape == (2,) and warpkit.topk(meta(1, 2**31 - 1), 2)[0].shape == (1, 2)
    for bad in (float("inf"), float("nan"), -1.0):
        with pytest.raises(ValueError, match="temperature"):
            warpkit.sample(x, temperature=bad, seed=0)
    for p, m in ((float("nan"), 0.0), (1.0, float("nan")), (1.5, 0.0), (1.0, 1.5)):
        with pytest.raises(ValueError, match="top_p"):
            warpkit.sample(x, top_p=p, min_p=m, seed=0)
    with pytest.raises(ValueError, match="top_k"):
        warpkit.sample(x, top_k=-1, seed=0)


def test_missing_extension_is_a_clear_error(monkeypatch):
    """A call that needs warpkit._C when it did not load says how to build it. Where the extension
    is built (a GPU machine), its loader's state is set as after a failed import, so the same error
    path runs there too."""
    from warpkit import _ext

    monkeypatch.setattr(_ext, "_ext", None)
    monkeypatch.setattr(_ext, "_error", ImportError("No module named 'warpkit._C'"))
    assert not warpkit.available()
    x = torch.randn(3, 4)
    with pytest.raises(RuntimeError, match="pip install --no-build-isolation ./python"):
        torch.ops.warpkit.softmax(x, False)


def test_fake_cuda_tensors_and_tracing():
    """Fake CUDA tensors (as torch.compile traces them) and make_fx: every operator in one graph."""
    def f(x, w, b, t, off):
        h = warpkit.layer_norm(x, (x.shape[-1],), w, b)
        h = warpkit.rms_norm(h, (x.shape[-1],), w)
        p = warpkit.softmax(h, -1) + warpkit.log_softmax(h, 0)
        loss = warpkit.cross_entropy(p, t)
        v, i = warpkit.topk(p, 2)
        s = warpkit.segment_softmax(p[:, 0], off) + warpkit.segment_reduce(p[:, 1], "sum", offsets=off).sum()
        return loss, v, i, warpkit.argmax(p, -1), warpkit.sample(p, seed=3), s

    with FakeTensorMode(allow_non_fake_inputs=False):
        try:
            args = (torch.empty(8, 16, device="cuda"), torch.empty(16, device="cuda"), torch.empty(16, device="cuda"),
                    torch.empty(8, dtype=torch.int64, device="cuda"), torch.empty(3, dtype=torch.int64, device="cuda"))
        except Exception as e:  # noqa: BLE001 - a torch without fake CUDA devices
            pytest.skip(f"fake CUDA tensors unavailable here ({type(e).__name__})")
        out = f(*args)
    assert out[0].shape == () and out[1].shape == (8, 2) and out[3].shape == (8,) and out[5].shape == (8,)
    margs = (meta(8, 16), meta(16), meta(16), torch.empty(8, dtype=torch.int64, device="meta"),
             torch.empty(3, dtype=torch.int64, device="meta"))
    g = make_fx(f, tracing_mode="fake")(*margs)
    targets = {str(n.target) for n in g.graph.nodes if n.op == "call_function"}
    for op in ("layer_norm", "rms_norm", "softmax", "cross_entropy", "topk", "argmax", "sample", "segment_softmax",
               "segment_reduce"):
        assert any(f"warpkit.{op}." in t for t in targets), (op, targets)


def test_backward_shapes_on_meta():
    """The autograd registrations run on meta tensors: each backward op's fake gives the input's shape."""
    x = meta(4, 6).requires_grad_()
    w, b = meta(6).requires_grad_(), meta(6).requires_grad_()
    t = torch.empty(4, dtype=torch.int64, device="meta")
    off = torch.empty(3, dtype=torch.int64, device="meta")
    outs = [warpkit.softmax(x, 0), warpkit.log_softmax(x), warpkit.layer_norm(x, (6,), w, b),
            warpkit.rms_norm(x, (6,), w), warpkit.cross_entropy(x, t), warpkit.topk(x, 2)[0],
            warpkit.segment_softmax(x, off), warpkit.segment_reduce(x[:, 0], "max", offsets=off),
            warpkit.segment_reduce(x[:, 1], "mean", offsets=off)]
    for y in outs:
        gx, *gp = torch.autograd.grad(y.sum(), [x, w, b], allow_unused=True)
        assert gx.shape == x.shape and gx.dtype == x.dtype
    gx, gw, gb = torch.autograd.grad(warpkit.layer_norm(x, (6,), w, b).sum(), [x, w, b])
    assert gw.shape == (6,) and gb.shape == (6,)


def test_add_norm_shapes_and_backward_on_meta():
    """add_layer_norm / add_rms_norm: (y, h) of x's shape in the promoted dtype; the backward gives x
    and the residual the same gradient, through the fused backward op when h is used too."""
    assert hasattr(torch.ops.warpkit, "add_layer_norm") and hasattr(torch.ops.warpkit, "norm_backward_add")
    x = meta(2, 3, 8).requires_grad_()
    r = meta(2, 3, 8, dtype=torch.bfloat16).requires_grad_()
    w, b = meta(8).requires_grad_(), meta(8).requires_grad_()
    for y, h in (warpkit.add_layer_norm(x, r, (8,), w, b), warpkit.add_rms_norm(x, r, 8, w)):
        same(y, x)
        same(h, x)
        gx, gr, gw = torch.autograd.grad((y.sum() + h.sum()), [x, r, w])
        same(gx, x)
        same(gr, r)
        assert gw.shape == (8,)
    y, h = warpkit.add_layer_norm(x, r, (8,), w, b)
    gx, gb = torch.autograd.grad(y.sum(), [x, b])  # h unused: the plain backward
    same(gx, x)
    with pytest.raises(RuntimeError):
        warpkit.add_layer_norm(x, meta(2, 3, 7), (8,))


def test_add_norm_traces():
    """make_fx traces the forward and backward ops into one graph."""
    def f(x, r, w, b):
        y, h = warpkit.add_layer_norm(x, r, (16,), w, b)
        y2, h2 = warpkit.add_rms_norm(h, y, (16,), w)
        return torch.autograd.grad((y2 * h2).sum(), [x, r, w, b])

    args = [meta(8, 16).requires_grad_() for _ in range(2)] + [meta(16).requires_grad_() for _ in range(2)]
    g = make_fx(f, tracing_mode="fake")(*args)
    targets = {str(n.target) for n in g.graph.nodes if n.op == "call_function"}
    for op in ("add_layer_norm", "add_rms_norm", "norm_backward_add"):
        assert any(f"warpkit.{op}." in t for t in targets), (op, targets)

    def last(x, r, w, b):  # h unused (the last block's): the plain backward, no zeros for h's gradient
        return torch.autograd.grad(warpkit.add_layer_norm(x, r, (16,), w, b)[0].sum(), [x, r, w, b])

    targets = [str(n.target) for n in make_fx(last, tracing_mode="fake")(*args).graph.nodes if n.op == "call_function"]
    assert "warpkit.norm_backward.default" in targets and not any("zeros" in t or "backward_add" in t for t in targets)


class _CpuExt:
    """The eager fast paths' extension calls (python/csrc/module.cpp: softmax_eager, norm_eager, ...)
    with their argument order and results, computed by torch on the CPU, so that the Python side of
    those paths (eligibility, autograd wiring, saved tensors, shapes) runs without a GPU."""

    @staticmethod
    def softmax_eager(x, dim, log):
        return (torch.log_softmax if log else torch.softmax)(x.float(), dim).to(x.dtype)

    @staticmethod
    def softmax_backward_eager(y, dy, dim, log):
        yf, g = y.float(), dy.float()
        dx = g - yf.exp() * g.sum(dim, keepdim=True) if log else yf * (g - (g * yf).sum(dim, keepdim=True))
        return dx.to(y.dtype)

    @staticmethod
    def _norm(h, w, b, eps, rms):
        ns = (h.shape[-1],)
        return F.rms_norm(h, ns, w, eps) if rms else F.layer_norm(h, ns, w, b, eps)

    @staticmethod
    def norm_eager(x, w, b, eps, rms, stats):
        xf = x.float().reshape(-1, x.shape[-1])
        rstd = torch.rsqrt((xf.square().mean(1) if rms else xf.var(1, unbiased=False)) + eps)
        mean = xf.new_empty(0) if rms else xf.mean(1)
        if not stats:  # a forward without a backward: none kept
            mean, rstd = None, None
        y = _CpuExt._norm(x.float(), None if w is None else w.float(), None if b is None else b.float(), eps, rms)
        return y.to(x.dtype), mean, rstd

    @staticmethod
    def norm_add_eager(x, r, w, b, eps, rms, stats):
        h = (x.float() + r.float()).to(torch.promote_types(x.dtype, r.dtype))
        y, mean, rstd = _CpuExt.norm_eager(h, w, b, eps, rms, stats)
        return y, h, mean, rstd

    @staticmethod
    def norm_backward_add_eager(dy, x, w, mean, rstd, dres, res_dtype, need_w, need_b, rms):
        """(dx, dr, dw, db): dr is dx rounded to the residual's dtype (dx itself where it is x's)."""
        assert isinstance(res_dtype, torch.dtype) and dres is not None
        dx, dw, db = _CpuExt.norm_backward_eager(dy, x, w, mean, rstd, dres, need_w, need_b, rms)
        return dx, (dx if res_dtype == x.dtype else dx.to(res_dtype)), dw, db

    @staticmethod
    def norm_backward_eager(dy, x, w, mean, rstd, dres, need_w, need_b, rms):
        """The norm's gradient from the saved statistics, by formula (no autograd: an op's body runs
        below torch's autograd)."""
        assert isinstance(need_w, bool) and isinstance(need_b, bool) and isinstance(rms, bool)
        assert rstd.numel() == x.numel() // x.shape[-1] and mean.numel() == (0 if rms else rstd.numel())
        cols = x.shape[-1]
        xf, g = x.detach().float().reshape(-1, cols), dy.float().reshape(-1, cols)
        s = rstd.reshape(-1, 1)
        xhat = (xf if rms else xf - mean.reshape(-1, 1)) * s
        gw = g if w is None else g * w.float()
        dx = gw - xhat * (gw * xhat).mean(1, keepdim=True)
        if not rms:
            dx = dx - gw.mean(1, keepdim=True)
        dx = (dx * s).reshape(x.shape)
        if dres is not None:
            dx = dx + dres.float()
        dw = (g * xhat).sum(0).to(x.dtype) if need_w else x.new_empty(0)
        db = g.sum(0).to(x.dtype) if need_b else x.new_empty(0)
        return dx.to(x.dtype), dw, db


    # The registered ops' CUDA kernels (module.cpp's layer_norm, ...), which the ops' bodies call.
    @staticmethod
    def layer_norm(x, w, b, eps):
        return _CpuExt.norm_eager(x, w, b, eps, False, True)

    @staticmethod
    def rms_norm(x, w, eps):
        y, _, rstd = _CpuExt.norm_eager(x, w, None, eps, True, True)
        return y, rstd

    @staticmethod
    def add_layer_norm(x, r, w, b, eps):
        return _CpuExt.norm_add_eager(x, r, w, b, eps, False, True)

    @staticmethod
    def add_rms_norm(x, r, w, eps):
        y, h, _, rstd = _CpuExt.norm_add_eager(x, r, w, None, eps, True, True)
        return y, h, rstd

    @staticmethod
    def norm_backward(dy, x, w, mean, rstd, need_w, need_b, rms):
        return _CpuExt.norm_backward_eager(dy, x, w, mean, rstd, None, need_w, need_b, rms)

    @staticmethod
    def norm_backward_add(dy, h, w, mean, rstd, dres, need_w, need_b, rms):
        return _CpuExt.norm_backward_eager(dy, h, w, mean, rstd, dres, need_w, need_b, rms)

    @staticmethod
    def norm_backward_add_mixed(dy, h, w, mean, rstd, dres, res_dtype, need_w, need_b, rms):
        return _CpuExt.norm_backward_add_eager(dy, h, w, mean, rstd, dres, res_dtype, need_w, need_b, rms)


@pytest.fixture
def cpu_fast_paths(monkeypatch):
    """The eager fast paths on CPU tensors: c.eager taking them, and _CpuExt as the extension."""
    from warpkit import _common, _ops_add_norm, _ops_norm, _ops_softmax

    monkeypatch.setattr(_common, "eager", lambda *ts: all(t is None or type(t) in _common._PLAIN for t in ts))
    for m in (_ops_softmax, _ops_norm, _ops_add_norm):
        monkeypatch.setattr(m, "ext", lambda: _CpuExt)


@pytest.mark.parametrize("grad", [False, True])
def test_eager_fast_paths_on_cpu(cpu_fast_paths, grad):
    """The fast paths' Python side against torch's ops: values, shapes and every gradient."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 16, generator=g).requires_grad_(grad)
    r = torch.randn(2, 3, 16, generator=g).requires_grad_(grad)
    w = (torch.randn(16, generator=g) + 1).requires_grad_(grad)
    b = torch.randn(16, generator=g).requires_grad_(grad)
    dy = torch.randn(2, 3, 16, generator=g)
    cases = [
        (lambda: warpkit.softmax(x, 1), lambda: torch.softmax(x, 1), (x,)),
        (lambda: warpkit.log_softmax(x, -1), lambda: torch.log_softmax(x, -1), (x,)),
        (lambda: warpkit.layer_norm(x, (16,), w, b), lambda: F.layer_norm(x, (16,), w, b), (x, w, b)),
        (lambda: warpkit.layer_norm(x, 16), lambda: F.layer_norm(x, (16,)), (x,)),
        (lambda: warpkit.rms_norm(x, [16], w), lambda: F.rms_norm(x, (16,), w, torch.finfo(x.dtype).eps), (x, w)),
        (lambda: warpkit.add_layer_norm(x, r, (16,), w, b), lambda: (F.layer_norm(x + r, (16,), w, b), x + r),
         (x, r, w, b)),
        (lambda: warpkit.add_rms_norm(x, r, (16,), w, 1e-5), lambda: (F.rms_norm(x + r, (16,), w, 1e-5), x + r),
         (x, r, w)),
    ]
    for got_f, want_f, ins in cases:
        got, want = got_f(), want_f()
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        for a, e in zip(got, want):
            assert a.shape == e.shape and a.dtype == e.dtype
            torch.testing.assert_close(a, e, rtol=1e-5, atol=1e-5)
        assert all(a.requires_grad == grad for a in got)
        if grad:
            outs = [got[0]] + ([got[1]] if len(got) > 1 else [])
            grads = [dy] + ([dy * 0.5] if len(got) > 1 else [])
            ga = torch.autograd.grad(outs, ins, grads)
            ge = torch.autograd.grad([want[0]] + ([want[1]] if len(want) > 1 else []), ins, grads)
            for a, e in zip(ga, ge):
                torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-4)
    # A bf16 residual of float32 x (autocast's): cast by the extension, its gradient in bf16.
    rb = r.detach().bfloat16().requires_grad_(grad)
    y, h = warpkit.add_layer_norm(x, rb, (16,), w, b)
    hr = x + rb
    assert h.dtype == torch.float32 and torch.equal(h, hr)
    torch.testing.assert_close(y, F.layer_norm(hr, (16,), w, b), rtol=1e-5, atol=1e-5)
    if grad:
        ga = torch.autograd.grad([y, h], (x, rb), [dy, dy])
        ge = torch.autograd.grad([F.layer_norm(hr, (16,), w, b), hr], (x, rb), [dy, dy])
        assert ga[1].dtype == torch.bfloat16
        torch.testing.assert_close(ga[0], ge[0], rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(ga[1], ge[1])
    if grad:  # h unused: the plain backward
        y, _ = warpkit.add_layer_norm(x, r, (16,), w, b)
        gx, gr = torch.autograd.grad(y, (x, r), dy)
        (ge,) = torch.autograd.grad(F.layer_norm(x + r, (16,), w, b), (x,), dy)
        torch.testing.assert_close(gx, ge, rtol=1e-4, atol=1e-4)
        assert torch.equal(gx, gr)


def test_add_norm_mixed_dtypes_trace_without_casts():
    """A bf16 residual of a float32 x (autocast's stream), either order: h and y float32, the
    residual's gradient bf16 from norm_backward_add_mixed, x's float32, and no dtype cast anywhere in
    the traced forward and backward (the device calls read and write the 16-bit arrays)."""
    def f(x, r, w, b):
        y, h = warpkit.add_layer_norm(x, r, (16,), w, b)
        y2, h2 = warpkit.add_rms_norm(h, x if x.dtype == torch.bfloat16 else r, (16,), w)  # the bf16 one again
        return (y, h, y2, h2) + torch.autograd.grad((y * h).sum() + (y2 * h2).sum(), [x, r, w, b])

    x, r = meta(8, 16).requires_grad_(), meta(8, 16, dtype=torch.bfloat16).requires_grad_()
    w, b = meta(16).requires_grad_(), meta(16).requires_grad_()
    for a, c in ((x, r), (r, x)):
        out = f(a, c, w, b)
        for t in out[:4]:
            assert t.dtype == torch.float32 and t.shape == (8, 16)
        assert out[4].dtype == a.dtype and out[5].dtype == c.dtype
        g = make_fx(f, tracing_mode="fake")(a, c, w, b)
        targets = [str(n.target) for n in g.graph.nodes if n.op == "call_function"]
        assert sum("warpkit.norm_backward_add_mixed." in t for t in targets) == 2, targets
        casts = [t for t in targets if "_to_copy" in t or "convert_element_type" in t or t.endswith(".to")]
        assert not casts, casts


def test_add_norm_mixed_on_cpu(cpu_fast_paths):
    """The fast path and the op bodies with a bf16 residual of float32 x, either order, against
    torch's promoted chain: h bit for bit, y, and every gradient (the residual's in bf16)."""
    g = torch.Generator().manual_seed(2)
    xf = torch.randn(2, 3, 16, generator=g).requires_grad_()
    rb = torch.randn(2, 3, 16, generator=g).bfloat16().requires_grad_()
    w, b = (torch.randn(16, generator=g) + 1).requires_grad_(), torch.randn(16, generator=g).requires_grad_()
    dy, dh = torch.randn(2, 3, 16, generator=g), torch.randn(2, 3, 16, generator=g)
    for first, second in ((xf, rb), (rb, xf)):
        for rms in (False, True):
            if rms:
                y, h = warpkit.add_rms_norm(first, second, (16,), w, 1e-5)
            else:
                y, h = warpkit.add_layer_norm(first, second, (16,), w, b)
            hr = first + second
            yr = F.rms_norm(hr, (16,), w, 1e-5) if rms else F.layer_norm(hr, (16,), w, b)
            assert h.dtype == y.dtype == torch.float32 and torch.equal(h, hr)
            torch.testing.assert_close(y, yr, rtol=1e-5, atol=1e-5)
            ins = (first, second, w) if rms else (first, second, w, b)
            ga = torch.autograd.grad([y, h], ins, [dy, dh])
            ge = torch.autograd.grad([yr, hr], ins, [dy, dh])
            for a, e, t in zip(ga, ge, ins):
                assert a.dtype == t.dtype
                if t.dtype == torch.float32:
                    torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-4)
            # The residual's bf16 gradient: the float32 one rounded once.
            gw, gn = (ga[0], ga[1]) if first is xf else (ga[1], ga[0])
            assert torch.equal(gn, gw.to(torch.bfloat16))
    ops = torch.ops.warpkit
    x2, r2 = xf.detach().reshape(6, 16).requires_grad_(), rb.detach().reshape(6, 16).requires_grad_()
    y, h, mean, rstd = ops.add_layer_norm(x2, r2, w, b, 1e-5)
    assert h.dtype == torch.float32 and torch.equal(h, x2 + r2)
    ga = torch.autograd.grad([y, h], (x2, r2), [dy.reshape(6, 16), dh.reshape(6, 16)])
    ge = torch.autograd.grad([F.layer_norm(x2 + r2, (16,), w, b), x2 + r2], (x2, r2),
                             [dy.reshape(6, 16), dh.reshape(6, 16)])
    assert ga[1].dtype == torch.bfloat16 and torch.equal(ga[1], ga[0].to(torch.bfloat16))
    torch.testing.assert_close(ga[0], ge[0], rtol=1e-4, atol=1e-4)


def test_op_bodies_on_cpu(cpu_fast_paths):
    """The registered norm ops' bodies (what a compiled graph calls at runtime: one extension call a
    way) on CPU tensors through _CpuExt, forward and backward, against torch."""
    g = torch.Generator().manual_seed(1)
    x, r = torch.randn(6, 16, generator=g).requires_grad_(), torch.randn(6, 16, generator=g).requires_grad_()
    w, b = (torch.randn(16, generator=g) + 1).requires_grad_(), torch.randn(16, generator=g).requires_grad_()
    dy, dh = torch.randn(6, 16, generator=g), torch.randn(6, 16, generator=g)
    ops = torch.ops.warpkit
    y, mean, rstd = ops.layer_norm(x, w, b, 1e-5)
    assert mean.shape == (6,) and rstd.shape == (6,)
    torch.testing.assert_close(y, F.layer_norm(x, (16,), w, b), rtol=1e-5, atol=1e-5)
    ga = torch.autograd.grad(y, (x, w, b), dy)
    ge = torch.autograd.grad(F.layer_norm(x, (16,), w, b), (x, w, b), dy)
    for a, e in zip(ga, ge):
        torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-4)
    y, rstd = ops.rms_norm(x, w, 1e-5)
    torch.testing.assert_close(y, F.rms_norm(x, (16,), w, 1e-5), rtol=1e-5, atol=1e-5)
    y, h, mean, rstd = ops.add_layer_norm(x, r, w, b, 1e-5)
    assert mean.shape == (6,) and torch.equal(h, x + r)
    torch.testing.assert_close(y, F.layer_norm(x + r, (16,), w, b), rtol=1e-5, atol=1e-5)
    ga = torch.autograd.grad([y, h], (x, r, w, b), [dy, dh])
    ge = torch.autograd.grad([F.layer_norm(x + r, (16,), w, b), x + r], (x, r, w, b), [dy, dh])
    for a, e in zip(ga, ge):
        torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-4)
    y, h, rstd = ops.add_rms_norm(x, r, w, 1e-5)
    assert rstd.shape == (6,)
    torch.testing.assert_close(y, F.rms_norm(x + r, (16,), w, 1e-5), rtol=1e-5, atol=1e-5)


# The meta backward of cross_entropy's mean warns of aten::where's autograd kernel.
@pytest.mark.filterwarnings("ignore:.*an autograd kernel was not registered")
def test_gpt2_block_compiles_without_graph_breaks():
    """torch.compile(fullgraph=True) of GPT-2 blocks as bench/gpt2_step.py writes them (a bf16 residual
    promoted to the float32 stream, as under autocast, by add_layer_norm; layer_norm; cross_entropy),
    forward and backward, on meta tensors: a graph break fails (it would split the compiled model
    and run Python between its parts at every step)."""
    nn, D, V = torch.nn, 32, 64

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2, self.fc = nn.LayerNorm(D), nn.LayerNorm(D), nn.Linear(D, D)

        def forward(self, x, r):
            if r is None:
                y = warpkit.layer_norm(x, (D,), self.ln1.weight, self.ln1.bias, 1e-5)
            else:
                y, x = warpkit.add_layer_norm(x, r, (D,), self.ln1.weight, self.ln1.bias, 1e-5)
            y, x = warpkit.add_layer_norm(x, self.fc(y).to(torch.bfloat16), (D,), self.ln2.weight, self.ln2.bias,
                                          1e-5)
            return x, self.fc(y).to(torch.bfloat16)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList(Block() for _ in range(2))
            self.lnf, self.head = nn.LayerNorm(D), nn.Linear(D, V)

        def forward(self, x, t):
            r = None
            for blk in self.blocks:
                x, r = blk(x, r)
            y = warpkit.add_layer_norm(x, r, (D,), self.lnf.weight, self.lnf.bias, 1e-5)[0]
            return warpkit.cross_entropy(self.head(y).view(-1, V), t.view(-1))

    torch._dynamo.reset()
    m = Model().to("meta")
    x = torch.empty(2, 8, D, device="meta", requires_grad=True)
    t = torch.empty(2, 8, dtype=torch.int64, device="meta")
    explain = torch._dynamo.explain(m)(x, t)
    assert explain.graph_break_count == 0, [b.reason for b in explain.break_reasons]
    loss = torch.compile(m, fullgraph=True, backend="aot_eager")(x, t)
    loss.backward()
    assert x.grad.shape == x.shape and m.blocks[0].ln1.weight.grad.shape == (D,)
    torch._dynamo.reset()


# ---- packaging: setup.py finds the headers (checkout, $WARPKIT_INCLUDE, an installed prefix through
# pkg-config) and says clearly when they or the CUDA compiler are missing ---------------------------

PYDIR = __import__("os").path.dirname(__import__("os").path.dirname(__import__("os").path.abspath(__file__)))


def _setup_py(setup_dir, **env):
    """`python setup.py --version` run from setup_dir with env's changes (None: unset): (exit
    status, stdout + stderr). The extension's checks run before setup(), so a missing piece fails
    first; --version builds nothing."""
    import os
    import subprocess

    e = dict(os.environ)
    for k, v in env.items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    r = subprocess.run([sys.executable, "setup.py", "--version"], cwd=setup_dir, env=e, capture_output=True,
                       text=True, timeout=120)
    return r.returncode, r.stdout + r.stderr


# Without nvcc (CUDA_HOME pointing nowhere): the clear error, which comes after the headers were found.
_NO_NVCC = dict(CUDA_HOME="/nonexistent/cuda", CUDA_PATH=None)
_COMPILER_ERRORS = ("no CUDA compiler found", "CPU-only build")  # the second: a CPU-only torch (some CI)


def test_setup_finds_headers_in_checkout_and_says_no_compiler():
    code, out = _setup_py(PYDIR, WARPKIT_INCLUDE=None, **_NO_NVCC)
    assert code != 0 and any(m in out for m in _COMPILER_ERRORS), out[-2000:]
    assert "headers not found" not in out and "Traceback" not in out, out[-2000:]


def test_setup_header_lookup_outside_a_checkout(tmp_path):
    """setup.py copied where no ../include exists: the headers from $WARPKIT_INCLUDE, from an
    installed prefix (pkg-config warpkit, as `make install` writes warpkit.pc), or a clear error."""
    import os
    import shutil

    include = os.path.join(os.path.dirname(PYDIR), "include")
    if not os.path.exists(os.path.join(include, "warpkit", "version.cuh")):
        pytest.skip("not run from a warpkit checkout")
    src = tmp_path / "src" / "python"
    src.mkdir(parents=True)
    shutil.copy(os.path.join(PYDIR, "setup.py"), src)
    empty = tmp_path / "no_pc"
    empty.mkdir()
    nopc = dict(PKG_CONFIG_LIBDIR=str(empty), PKG_CONFIG_PATH=str(empty))
    code, out = _setup_py(src, WARPKIT_INCLUDE=None, **nopc, **_NO_NVCC)
    assert code != 0 and "headers not found" in out and "WARPKIT_INCLUDE" in out and "Traceback" not in out, out
    code, out = _setup_py(src, WARPKIT_INCLUDE=include, **nopc, **_NO_NVCC)
    assert code != 0 and any(m in out for m in _COMPILER_ERRORS) and "headers not found" not in out, out
    if shutil.which("pkg-config") is None:
        return
    prefix = tmp_path / "prefix"
    (prefix / "lib" / "pkgconfig").mkdir(parents=True)
    os.symlink(include, prefix / "include")
    with open(os.path.join(os.path.dirname(PYDIR), "warpkit.pc.in")) as f:
        pc = f.read().replace("@PREFIX@", str(prefix)).replace("@VERSION@", "0")
    (prefix / "lib" / "pkgconfig" / "warpkit.pc").write_text(pc)
    pcdir = str(prefix / "lib" / "pkgconfig")
    code, out = _setup_py(src, WARPKIT_INCLUDE=None, PKG_CONFIG_LIBDIR=pcdir, PKG_CONFIG_PATH=pcdir, **_NO_NVCC)
    assert code != 0 and any(m in out for m in _COMPILER_ERRORS) and "headers not found" not in out, out


# ---- the README's "Use from PyTorch" section: every public function is listed, and every example
# line runs (on meta tensors; the collectives of warpkit.distributed stubbed) -----------------------


def _readme_section():
    import os

    path = os.path.join(os.path.dirname(PYDIR), "README.md")
    if not os.path.exists(path):
        pytest.skip("README.md not beside python/ (not a checkout)")
    text = open(path).read()
    start = text.index("## Use from PyTorch")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def _public_functions(module):
    import inspect

    if hasattr(module, "__all__"):
        names = [n for n in module.__all__ if inspect.isfunction(getattr(module, n))]
    else:  # the functions the module defines itself (not those it imports)
        names = [n for n, f in vars(module).items() if not n.startswith("_") and inspect.isfunction(f)
                 and f.__module__ == module.__name__]
    return sorted(names)


def test_readme_lists_every_public_function():
    import warpkit.distributed as wd

    sec = _readme_section()
    missing = [f"warpkit.{n}" for n in _public_functions(warpkit) if f"warpkit.{n}(" not in sec]
    missing += [f"wd.{n}" for n in _public_functions(wd) if f"wd.{n}(" not in sec]
    assert "warpkit.ops." in sec, "warpkit.ops (torch.ops.warpkit) has no example line"
    assert not missing, f"README's 'Use from PyTorch' has no example line for {missing}"


def test_readme_examples_run(monkeypatch):
    """Each line of the section's Python block, in order, on meta tensors of the shapes its names
    suggest (x of the width the line normalises over), warpkit.distributed's all-gathers stubbed
    (world size 2, contents left as they are: only shapes are checked)."""
    import re

    import torch.distributed as dist

    sec = _readme_section()
    block = re.search(r"```python\n(.*?)```", sec, re.S).group(1)
    if dist.is_available():
        monkeypatch.setattr(dist, "get_world_size", lambda group=None: 2)
        monkeypatch.setattr(dist, "all_gather_into_tensor", lambda out, inp, group=None: None)
    rows, vocab = 8, 1000
    i64 = dict(dtype=torch.int64, device="meta")
    ns = dict(logits=meta(rows, vocab), target=torch.empty(rows, **i64), scores=meta(10, 4),
              offsets=torch.empty(4, **i64), data=meta(10), logits_shard=meta(rows, vocab // 2),
              x_shard=meta(rows, vocab // 2), shard_begin=vocab // 2, vocab=vocab, tp=None,
              gathered=meta(2, rows, 2), g3=meta(2, rows, 3), gv=meta(2, rows, 50), gi=torch.empty(2, rows, 50, **i64))
    ran = 0
    for line in block.splitlines():
        code = line.split("#", 1)[0].strip()
        if not code:
            continue
        if "vocab_parallel" in code and not dist.is_available():
            continue
        width = 4096 if "4096" in code else 768
        ns.update(x=meta(rows, width), r=meta(rows, width), w=meta(width), b=meta(width))
        exec(code, ns)  # noqa: S102 - the README's own example lines
        ran += 1
    assert ran >= 15


def _i64(*shape):
    return torch.empty(shape, dtype=torch.int64, device="meta")


# (warpkit call, torch's call) pairs whose results must have the same shapes and dtypes (fake
# implementations and the Python wrappers' reshapes, without a GPU).
_EDGE_CASES = {
    "softmax_dtype_bf16": (lambda: warpkit.softmax(meta(3, 5), 0, dtype=torch.bfloat16),
                           lambda: torch.softmax(meta(3, 5), 0, dtype=torch.bfloat16)),
    "log_softmax_dtype_f16": (lambda: warpkit.log_softmax(meta(2, 3, 5, dtype=torch.bfloat16), 1, dtype=torch.float16),
                              lambda: torch.log_softmax(meta(2, 3, 5, dtype=torch.bfloat16), 1, dtype=torch.float16)),
    "softmax_0d_dtype": (lambda: warpkit.softmax(meta(), 0, dtype=torch.float32),
                         lambda: torch.softmax(meta(), 0, dtype=torch.float32)),
    "layer_norm_no_cols": (lambda: warpkit.layer_norm(meta(3, 0), (0,)), lambda: F.layer_norm(meta(3, 0), (0,))),
    "layer_norm_f32_params": (lambda: warpkit.layer_norm(meta(4, 8, dtype=torch.bfloat16), (8,), meta(8), meta(8)),
                              lambda: meta(4, 8, dtype=torch.bfloat16)),
    "rms_norm_eps_none": (lambda: warpkit.rms_norm(meta(2, 3, 8, dtype=torch.float16), [3, 8]),
                          lambda: F.rms_norm(meta(2, 3, 8, dtype=torch.float16), [3, 8])),
    "rms_norm_1d": (lambda: warpkit.rms_norm(meta(8), 8, meta(8)), lambda: F.rms_norm(meta(8), (8,), meta(8))),
    "cross_entropy_nd_mean": (lambda: warpkit.cross_entropy(meta(2, 7, 3, 4), _i64(2, 3, 4)),
                              lambda: F.cross_entropy(meta(2, 7, 3, 4), _i64(2, 3, 4))),
    "cross_entropy_nd_sum_bf16": (lambda: warpkit.cross_entropy(meta(2, 7, 3, dtype=torch.bfloat16), _i64(2, 3),
                                                                reduction="sum", ignore_index=2),
                                  lambda: F.cross_entropy(meta(2, 7, 3, dtype=torch.bfloat16), _i64(2, 3),
                                                          reduction="sum", ignore_index=2)),
    "cross_entropy_empty_mean": (lambda: warpkit.cross_entropy(meta(0, 7), _i64(0)),
                                 lambda: F.cross_entropy(meta(0, 7), _i64(0))),
    "cross_entropy_1d_none": (lambda: warpkit.cross_entropy(meta(7), _i64(), reduction="none"),
                              lambda: F.cross_entropy(meta(7), _i64(), reduction="none")),
    "topk_0d": (lambda: warpkit.topk(meta(), 1)[0], lambda: torch.topk(meta(), 1)[0]),
    "topk_0d_k0": (lambda: warpkit.topk(meta(), 0)[1], lambda: torch.topk(meta(), 0)[1]),
    "topk_dim0_smallest": (lambda: warpkit.topk(meta(5, 3, 2), 2, 0, largest=False)[1],
                           lambda: torch.topk(meta(5, 3, 2), 2, 0, largest=False)[1]),
    "topk_empty_rows": (lambda: warpkit.topk(meta(0, 6), 2)[0], lambda: torch.topk(meta(0, 6), 2)[0]),
    "argmax_0d": (lambda: warpkit.argmax(meta()), lambda: torch.argmax(meta())),
    "argmax_0d_dim_keepdim": (lambda: warpkit.argmax(meta(), 0, keepdim=True),
                              lambda: torch.argmax(meta(), 0, keepdim=True)),
    "argmax_flat_keepdim": (lambda: warpkit.argmax(meta(2, 3, 4), keepdim=True),
                            lambda: torch.argmax(meta(2, 3, 4), keepdim=True)),
    "argmax_dim0_keepdim": (lambda: warpkit.argmax(meta(2, 3, 4), 0, True),
                            lambda: torch.argmax(meta(2, 3, 4), 0, True)),
    "argmax_empty_rows": (lambda: warpkit.argmax(meta(0, 4), 1), lambda: torch.argmax(meta(0, 4), 1)),
    "sample_1d": (lambda: warpkit.sample(meta(50), seed=0), lambda: _i64()),
    "sample_nd": (lambda: warpkit.sample(meta(2, 3, 64, dtype=torch.float16), top_k=5, seed=0), lambda: _i64(2, 3)),
    "sample_no_rows": (lambda: warpkit.sample(meta(0, 64), seed=0), lambda: _i64(0)),
    "segment_softmax_1d_log": (lambda: warpkit.segment_softmax(meta(10), _i64(4), log=True), lambda: meta(10)),
    "segment_softmax_no_items": (lambda: warpkit.segment_softmax(meta(0, 3), _i64(1)), lambda: meta(0, 3)),
    "segment_reduce_lengths": (lambda: warpkit.segment_reduce(meta(10, dtype=torch.bfloat16), "mean", lengths=_i64(4)),
                               lambda: meta(4, dtype=torch.bfloat16)),
    "segment_reduce_int32_offsets": (lambda: warpkit.segment_reduce(meta(10), "min",
                                                                    offsets=torch.empty(6, dtype=torch.int32,
                                                                                        device="meta")),
                                     lambda: meta(5)),
}


@pytest.mark.parametrize("case", sorted(_EDGE_CASES))
def test_edge_shapes_as_torch(case):
    got, want = _EDGE_CASES[case]
    same(got(), want())


# (call, exception type, message part): errors raised before any device work, with torch's types.
_ERRORS = {
    "softmax_not_a_tensor": (lambda: warpkit.softmax([1.0, 2.0]), TypeError, "torch.Tensor"),
    "softmax_float_dim": (lambda: warpkit.softmax(meta(3, 4), 1.0), TypeError, "dim"),
    "softmax_int_input": (lambda: warpkit.softmax(torch.empty(3, 4, dtype=torch.int32, device="meta")), TypeError,
                          "dtype"),
    "log_softmax_dim": (lambda: warpkit.log_softmax(meta(3, 4), -3), IndexError, "range"),
    "layer_norm_bias_shape": (lambda: warpkit.layer_norm(meta(3, 4), (4,), meta(4), meta(3)), RuntimeError, "bias"),
    "layer_norm_shape_mismatch": (lambda: warpkit.layer_norm(meta(3, 4), (3, 5)), RuntimeError, "normalized_shape"),
    "rms_norm_weight_shape": (lambda: warpkit.rms_norm(meta(3, 4), (4,), meta(5)), RuntimeError, "weight"),
    "rms_norm_weight_dtype": (lambda: warpkit.rms_norm(meta(3, 4), (4,), torch.empty(4, dtype=torch.float64,
                                                                                     device="meta")), TypeError,
                              "dtype"),
    "add_rms_norm_residual": (lambda: warpkit.add_rms_norm(meta(3, 4), meta(4, 4), (4,)), RuntimeError, "residual"),
    "cross_entropy_weight": (lambda: warpkit.cross_entropy(meta(3, 4), _i64(3), weight=meta(4)), ValueError, "weight"),
    "cross_entropy_prob_target": (lambda: warpkit.cross_entropy(meta(3, 4), meta(3, 4)), ValueError, "int64"),
    "cross_entropy_target_shape": (lambda: warpkit.cross_entropy(meta(3, 4), _i64(4)), RuntimeError, "target"),
    "cross_entropy_nd_target": (lambda: warpkit.cross_entropy(meta(3, 4, 5), _i64(3, 4)), RuntimeError, "target"),
    "cross_entropy_0d": (lambda: warpkit.cross_entropy(meta(), _i64()), IndexError, "dimension"),
    "cross_entropy_1d_target": (lambda: warpkit.cross_entropy(meta(4), _i64(1)), RuntimeError, "0-d target"),
    "cross_entropy_smoothing": (lambda: warpkit.cross_entropy(meta(3, 4), _i64(3), label_smoothing=-0.1),
                                RuntimeError, "label_smoothing"),
    "cross_entropy_cpu_target": (lambda: warpkit.cross_entropy(torch.empty(3, 4, device="cuda"), torch.zeros(3).long()),
                                 RuntimeError, "target must be on"),
    "topk_negative_k": (lambda: warpkit.topk(meta(3, 4), -1), RuntimeError, "k out of range"),
    "topk_dim": (lambda: warpkit.topk(meta(3, 4), 1, dim=2), IndexError, "range"),
    "argmax_empty_flat": (lambda: warpkit.argmax(meta(0, 3)), RuntimeError, "numel"),
    "argmax_dim": (lambda: warpkit.argmax(meta(3, 4), 2), IndexError, "range"),
    "sample_0d": (lambda: warpkit.sample(meta(), seed=0), RuntimeError, "at least one dimension"),
    "sample_no_columns": (lambda: warpkit.sample(meta(3, 0), seed=0), RuntimeError, "no columns"),
    "sample_top_k_bool": (lambda: warpkit.sample(meta(3, 10), top_k=True, seed=0), ValueError, "top_k"),
    "sample_min_p": (lambda: warpkit.sample(meta(3, 10), min_p=-0.1, seed=0), ValueError, "min_p"),
    "sample_seed_offset": (lambda: warpkit.sample(meta(3, 10), seed_offset=_i64(3)), ValueError, "seed_offset"),
    "segment_softmax_3d": (lambda: warpkit.segment_softmax(meta(2, 3, 4), _i64(3)), RuntimeError, "items"),
    "segment_softmax_no_offsets": (lambda: warpkit.segment_softmax(meta(5), _i64(0)), ValueError, "offsets"),
    "segment_softmax_2d_offsets": (lambda: warpkit.segment_softmax(meta(5), _i64(2, 2)), TypeError, "offsets"),
    "segment_reduce_op": (lambda: warpkit.segment_reduce(meta(5), "prod", offsets=_i64(3)), RuntimeError, "reduce"),
    "segment_reduce_2d": (lambda: warpkit.segment_reduce(meta(5, 2), "sum", offsets=_i64(3)), RuntimeError, "1-D"),
    "segment_reduce_both": (lambda: warpkit.segment_reduce(meta(5), "sum", offsets=_i64(3), lengths=_i64(2)),
                            RuntimeError, "exactly one"),
    "segment_reduce_neither": (lambda: warpkit.segment_reduce(meta(5), "sum"), RuntimeError, "exactly one"),
    "segment_reduce_float_lengths": (lambda: warpkit.segment_reduce(meta(5), "sum", lengths=meta(2)), TypeError,
                                     "int32 or int64"),
}


@pytest.mark.parametrize("case", sorted(_ERRORS))
def test_argument_errors_each_op(case):
    call, exc, msg = _ERRORS[case]
    if "cuda" in case or case.endswith("cpu_target"):
        try:
            torch.empty(1, device="cuda")
        except Exception:  # noqa: BLE001 - no CUDA tensors here (CPU-only torch or no device)
            with FakeTensorMode():
                try:
                    torch.empty(1, device="cuda")
                except Exception as e:  # noqa: BLE001
                    pytest.skip(f"no real or fake CUDA tensors ({type(e).__name__})")
                with pytest.raises(exc, match=msg):
                    call()
            return
    with pytest.raises(exc, match=msg):
        call()
