#!/usr/bin/env python3
"""The host's cost of a call of each warpkit operator (those bench/gpt2_step.py uses first, then the
selection, segment and sharded ones), beside torch's, on rows small enough (64 x 768; cross_entropy,
topk, argmax and sample 64 x 1024; the segment ops 64 items in 4 segments) that the GPU never holds the
host back: what an eager model pays per call, and what a compiled graph pays per warpkit op where it
calls torch.ops.warpkit.X.default.
Columns, microseconds a call (time.perf_counter around 10 back-to-back calls, no synchronisation
between them, the median of 11 batches: bench/_torch_timing.py host_us):
  torch       torch's eager functions, no grad (F.layer_norm(x + r), F.cross_entropy, torch.topk, ...;
              sample: torch.multinomial of the softmax)
  aten op     torch's operator as a compiled graph's fallback calls it (aten.native_layer_norm.default,
              ...), no grad: the reference for op.default
  warpkit     the public function (warpkit.add_layer_norm, ...), no grad
  op.default  torch.ops.warpkit.X.default, no grad: a compiled graph's call of the op
  _C          the extension's function of the op's name (warpkit._C.X): allocation and launch alone,
              no dispatcher and no Python beyond the call
  torch f+b, warpkit f+b   forward with grad and torch.autograd.grad of its outputs
The gpt2 step's dtypes: a float32 stream x with a bf16 residual r, float32 weights, bf16 logits (also
the selection ops' rows); the segment ops and the sharded ones (two shards of x's rows) float32.
After the table, each op.default's Python calls (sys.setprofile's call events inside one call): 1
(torch's OpOverload.__call__) where the op's CUDA and AutogradCUDA kernels are warpkit._C's C++ ones.
Usage: python3 bench/host_overhead.py [out.csv]. Skips cleanly without torch, a GPU or the warpkit
package (pip install --no-build-isolation ./python)."""
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _torch_timing import host_us, start_warpkit  # noqa: E402

R, C, V = 64, 768, 1024
COLUMNS = ("torch", "aten op", "warpkit", "op.default", "_C", "torch f+b", "warpkit f+b")


def cases(torch, warpkit, dev):
    """[(name, {column: fn}, op_call)]: each column's call of one op (missing columns: none), and
    the op.default call whose Python frames are listed."""
    F, ops, aten = torch.nn.functional, torch.ops.warpkit, torch.ops.aten
    ext = warpkit._ext.ext()
    g = torch.Generator(device=dev).manual_seed(0)

    def rnd(*shape, dtype=torch.float32):
        return torch.randn(shape, device=dev, generator=g).to(dtype)

    x, r, w, b, dy = rnd(R, C), rnd(R, C, dtype=torch.bfloat16), rnd(C) + 1, rnd(C), rnd(R, C)
    xs, logits = rnd(R, C, dtype=torch.bfloat16), rnd(R, V, dtype=torch.bfloat16)
    t = torch.randint(0, V, (R,), device=dev, generator=g)
    leaf = [v.clone().requires_grad_() for v in (x, r, w, b, xs, logits)]
    xg, rg, wg, bg, xsg, lg = leaf
    segg, vecg = rnd(R, 4).requires_grad_(), rnd(R).requires_grad_()
    with torch.no_grad():
        y, h, mean, rstd = ops.add_layer_norm.default(x, r, w, b, 1e-5)
        _, hr, rstd_rms = ops.add_rms_norm.default(x, r, w, 1e-5)
        ys = ops.softmax.default(xs, False)
        _, tmean, trstd = aten.native_layer_norm.default(h, [C], w, b, 1e-5)
        none = torch.empty(0, device=dev)
        off = torch.tensor([0, 10, 10, 40, R], device=dev)
        seg, vec, dv = rnd(R, 4), rnd(R), rnd(R, 8, dtype=torch.bfloat16)
        yseg = ops.segment_softmax.default(seg, off, False)
        xa, xb, tt = x[:, :300], x[:, 300:], t.clamp(max=C - 1)  # two shards of x's rows
        st3 = torch.stack([ops.shard_stats.default(xa, tt, 0, True), ops.shard_stats.default(xb, tt, 300, True)])
        st2 = torch.stack([ops.shard_stats.default(xa, none, 0, False), ops.shard_stats.default(xb, none, 0, False)])
        m3, m2 = ops.stats_merge.default(st3), ops.stats_merge.default(st2)
        (va, ia), (vb, ib) = ops.shard_topk.default(xa, 8, True, 0), ops.shard_topk.default(xb, 8, True, 300)
        gv, gi = torch.stack([va, vb]), torch.stack([ia, ib])

    def grad(outs, ins, gs):
        return lambda: torch.autograd.grad(outs(), ins, gs)

    def torch_add_ln():
        hh = xg + rg
        return F.layer_norm(hh, (C,), wg, bg, 1e-5), hh

    def torch_add_rms():
        hh = xg + rg
        return F.rms_norm(hh, (C,), wg, 1e-5), hh

    table = [
        ("add_layer_norm", {
            "torch": lambda: F.layer_norm(x + r, (C,), w, b, 1e-5),
            "aten op": lambda: aten.native_layer_norm.default(aten.add.Tensor(x, r), [C], w, b, 1e-5),
            "warpkit": lambda: warpkit.add_layer_norm(x, r, (C,), w, b, 1e-5),
            "op.default": lambda: ops.add_layer_norm.default(x, r, w, b, 1e-5),
            "_C": lambda: ext.add_layer_norm(x, r, w, b, 1e-5),
            "torch f+b": grad(torch_add_ln, (xg, rg, wg, bg), (dy, dy)),
            "warpkit f+b": grad(lambda: warpkit.add_layer_norm(xg, rg, (C,), wg, bg, 1e-5), (xg, rg, wg, bg),
                                (dy, dy)),
        }, lambda: ops.add_layer_norm.default(x, r, w, b, 1e-5)),
        ("add_rms_norm", {
            "torch": lambda: F.rms_norm(x + r, (C,), w, 1e-5),
            "warpkit": lambda: warpkit.add_rms_norm(x, r, (C,), w, 1e-5),
            "op.default": lambda: ops.add_rms_norm.default(x, r, w, 1e-5),
            "_C": lambda: ext.add_rms_norm(x, r, w, 1e-5),
            "torch f+b": grad(torch_add_rms, (xg, rg, wg), (dy, dy)),
            "warpkit f+b": grad(lambda: warpkit.add_rms_norm(xg, rg, (C,), wg, 1e-5), (xg, rg, wg), (dy, dy)),
        }, lambda: ops.add_rms_norm.default(x, r, w, 1e-5)),
        ("layer_norm", {
            "torch": lambda: F.layer_norm(x, (C,), w, b, 1e-5),
            "aten op": lambda: aten.native_layer_norm.default(x, [C], w, b, 1e-5),
            "warpkit": lambda: warpkit.layer_norm(x, (C,), w, b, 1e-5),
            "op.default": lambda: ops.layer_norm.default(x, w, b, 1e-5),
            "_C": lambda: ext.layer_norm(x, w, b, 1e-5),
            "torch f+b": grad(lambda: F.layer_norm(xg, (C,), wg, bg, 1e-5), (xg, wg, bg), (dy,)),
            "warpkit f+b": grad(lambda: warpkit.layer_norm(xg, (C,), wg, bg, 1e-5), (xg, wg, bg), (dy,)),
        }, lambda: ops.layer_norm.default(x, w, b, 1e-5)),
        ("norm_backward_add_mixed", {
            "aten op": lambda: aten.native_layer_norm_backward.default(dy, h, [C], tmean, trstd, w, b,
                                                                     [True, True, True]),
            "op.default": lambda: ops.norm_backward_add_mixed.default(dy, h, w, mean, rstd, dy, torch.bfloat16,
                                                                      True, True, False),
            "_C": lambda: ext.norm_backward_add_mixed(dy, h, w, mean, rstd, dy, torch.bfloat16, True, True, False),
        }, lambda: ops.norm_backward_add_mixed.default(dy, h, w, mean, rstd, dy, torch.bfloat16, True, True, False)),
        ("norm_backward_add", {
            "op.default": lambda: ops.norm_backward_add.default(dy, h, w, mean, rstd, dy, True, True, False),
            "_C": lambda: ext.norm_backward_add(dy, h, w, mean, rstd, dy, True, True, False),
        }, lambda: ops.norm_backward_add.default(dy, h, w, mean, rstd, dy, True, True, False)),
        ("norm_backward", {
            "aten op": lambda: aten.native_layer_norm_backward.default(dy, h, [C], tmean, trstd, w, b,
                                                                     [True, True, True]),
            "op.default": lambda: ops.norm_backward.default(dy, h, w, mean, rstd, True, True, False),
            "_C": lambda: ext.norm_backward(dy, h, w, mean, rstd, True, True, False),
        }, lambda: ops.norm_backward.default(dy, h, w, mean, rstd, True, True, False)),
        ("norm_backward (rms)", {
            "op.default": lambda: ops.norm_backward.default(dy, hr, w, none, rstd_rms, True, False, True),
            "_C": lambda: ext.norm_backward(dy, hr, w, none, rstd_rms, True, False, True),
        }, lambda: ops.norm_backward.default(dy, hr, w, none, rstd_rms, True, False, True)),
        ("cross_entropy", {
            "torch": lambda: F.cross_entropy(logits, t),
            "aten op": lambda: aten._log_softmax.default(logits, 1, False),
            "warpkit": lambda: warpkit.cross_entropy(logits, t),
            "op.default": lambda: ops.cross_entropy.default(logits, t, -100, 0.0, True),
            "_C": lambda: ext.cross_entropy(logits, t, -100, 0.0, True),
            "torch f+b": grad(lambda: F.cross_entropy(lg, t), (lg,), None),
            "warpkit f+b": grad(lambda: warpkit.cross_entropy(lg, t), (lg,), None),
        }, lambda: ops.cross_entropy.default(logits, t, -100, 0.0, True)),
        ("softmax", {
            "torch": lambda: torch.softmax(xs, -1),
            "aten op": lambda: aten._softmax.default(xs, -1, False),
            "warpkit": lambda: warpkit.softmax(xs, -1),
            "op.default": lambda: ops.softmax.default(xs, False),
            "_C": lambda: ext.softmax(xs, False),
            "torch f+b": grad(lambda: torch.softmax(xsg, -1), (xsg,), (xs,)),
            "warpkit f+b": grad(lambda: warpkit.softmax(xsg, -1), (xsg,), (xs,)),
        }, lambda: ops.softmax.default(xs, False)),
        ("softmax_backward", {
            "aten op": lambda: aten._softmax_backward_data.default(xs, ys, -1, torch.bfloat16),
            "op.default": lambda: ops.softmax_backward.default(ys, xs, False),
            "_C": lambda: ext.softmax_backward(ys, xs, False),
        }, lambda: ops.softmax_backward.default(ys, xs, False)),
        ("topk", {
            "torch": lambda: torch.topk(logits, 8),
            "aten op": lambda: aten.topk.default(logits, 8),
            "warpkit": lambda: warpkit.topk(logits, 8),
            "op.default": lambda: ops.topk.default(logits, 8, True),
            "_C": lambda: ext.topk(logits, 8, True),
            "torch f+b": grad(lambda: torch.topk(lg, 8)[0], (lg,), (dv,)),
            "warpkit f+b": grad(lambda: warpkit.topk(lg, 8)[0], (lg,), (dv,)),
        }, lambda: ops.topk.default(logits, 8, True)),
        ("argmax", {
            "torch": lambda: torch.argmax(logits, -1),
            "aten op": lambda: aten.argmax.default(logits, -1),
            "warpkit": lambda: warpkit.argmax(logits, -1),
            "op.default": lambda: ops.argmax.default(logits),
            "_C": lambda: ext.argmax(logits),
        }, lambda: ops.argmax.default(logits)),
        ("sample", {
            "torch": lambda: torch.multinomial(torch.softmax(logits.float(), -1), 1),
            "warpkit": lambda: warpkit.sample(logits, top_k=50, seed=1),
            "op.default": lambda: ops.sample.default(logits, 1.0, 50, 1.0, 0.0, 1, 0, None),
            "_C": lambda: ext.sample(logits, 1.0, 50, 1.0, 0.0, 1, 0, None),
        }, lambda: ops.sample.default(logits, 1.0, 50, 1.0, 0.0, 1, 0, None)),
        ("segment_softmax", {
            "warpkit": lambda: warpkit.segment_softmax(seg, off),
            "op.default": lambda: ops.segment_softmax.default(seg, off, False),
            "_C": lambda: ext.segment_softmax(seg, off, False),
            "warpkit f+b": grad(lambda: warpkit.segment_softmax(segg, off), (segg,), (seg,)),
        }, lambda: ops.segment_softmax.default(seg, off, False)),
        ("segment_softmax_backward", {
            "op.default": lambda: ops.segment_softmax_backward.default(yseg, seg, off, False),
            "_C": lambda: ext.segment_softmax_backward(yseg, seg, off, False),
        }, lambda: ops.segment_softmax_backward.default(yseg, seg, off, False)),
        ("segment_reduce", {
            "torch": lambda: torch.segment_reduce(vec, "sum", offsets=off),
            "aten op": lambda: aten.segment_reduce.default(vec, "sum", offsets=off),
            "warpkit": lambda: warpkit.segment_reduce(vec, "sum", offsets=off),
            "op.default": lambda: ops.segment_reduce.default(vec, off, 0),
            "_C": lambda: ext.segment_reduce(vec, off, 0),
            "torch f+b": grad(lambda: torch.segment_reduce(vecg, "sum", offsets=off), (vecg,), (dv[:4, 0].float(),)),
            "warpkit f+b": grad(lambda: warpkit.segment_reduce(vecg, "sum", offsets=off), (vecg,),
                                (dv[:4, 0].float(),)),
        }, lambda: ops.segment_reduce.default(vec, off, 0)),
    ]
    sharded = [  # warpkit.distributed's local steps: op.default and _C alone
        ("shard_stats", (xa, tt, 0, True)),
        ("stats_merge", (st3,)),
        ("shard_softmax_apply", (xa, m2, False)),
        ("shard_cross_entropy_finish", (xa, tt, m3, 0, C, -100)),
        ("shard_topk", (xb, 8, True, 300)),
        ("topk_merge", (gv, gi, True)),
        ("sample_merge", (gv, gi, 1.0, 1.0, 0.0, 1, 0, None)),
    ]
    for name, args in sharded:
        op = getattr(ops, name).default
        fn = getattr(ext, name)
        table.append((name, {"op.default": lambda op=op, args=args: op(*args),
                             "_C": lambda fn=fn, args=args: fn(*args)}, lambda op=op, args=args: op(*args)))
    if hasattr(aten, "_fused_rms_norm"):  # torch 2.8 and newer
        table[1][1]["aten op"] = lambda: aten._fused_rms_norm.default(aten.add.Tensor(x, r), [C], w, 1e-5)
    return table


def py_calls(sys_, fn):
    """The Python functions that one call of fn enters besides fn itself (sys.setprofile's call
    events), as file:function."""
    seen = []

    def prof(frame, event, arg):
        if event == "call":
            seen.append(f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_code.co_name}")

    sys_.setprofile(prof)
    try:
        fn()
    finally:
        sys_.setprofile(None)
    return seen[1:]


def main():
    out, torch, warpkit = start_warpkit("host_overhead")
    if torch is None:
        return 0
    rows, frames = [], []
    for name, fns, op_call in cases(torch, warpkit, "cuda"):
        cells = {}
        for col in COLUMNS:
            if col in fns:
                no_grad = not col.endswith("f+b")
                with torch.set_grad_enabled(not no_grad):
                    cells[col] = host_us(torch, fns[col])
        with torch.no_grad():
            op_call()
            calls = py_calls(sys, op_call)
        rows.append((name, cells, len(calls)))
        frames.append((name, calls))
    print(f"host microseconds a call, {R} rows ({torch.cuda.get_device_name()}, torch {torch.__version__})")
    print(f"{'op':27}" + "".join(f"{c:>12}" for c in COLUMNS) + f"{'py calls':>10}")
    for name, cells, n in rows:
        print(f"{name:27}" + "".join(f"{cells[c]:12.1f}" if c in cells else f"{'-':>12}" for c in COLUMNS) +
              f"{n:10d}")
    print("py calls: Python functions entered by one op.default call (no grad); 1 = torch's OpOverload.__call__ "
          "alone (the C++ kernels)")
    for name, calls in frames:
        print(f"  {name}: {', '.join(calls)}")
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w", newline="") as f:
        wr = csv.writer(f)
        names = [c.replace(" ", "_").replace(".", "_").replace("+", "").strip("_") + "_us" for c in COLUMNS]
        wr.writerow(["op"] + names + ["py_calls"])
        for name, cells, n in rows:
            wr.writerow([name] + [f"{cells[c]:.2f}" if c in cells else "" for c in COLUMNS] + [n])
    print(f"csv: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
