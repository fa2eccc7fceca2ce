#!/usr/bin/env python3
"""warpkit's torch operators (the warpkit package, python/) against torch eager and torch.compile,
in one process, forward and forward+backward, beside a copy of the forward's bytes timed in the
same run:
  softmax, log_softmax   warpkit.softmax / log_softmax    vs torch.softmax / log_softmax
  layer_norm             warpkit.layer_norm (w, b)        vs F.layer_norm
  rms_norm               warpkit.rms_norm (w)             vs F.rms_norm
  cross_entropy          warpkit.cross_entropy (mean)     vs F.cross_entropy (mean)
  topk                   warpkit.topk (k = 8)             vs torch.topk
  argmax                 warpkit.argmax (forward only)    vs torch.argmax
  sample                 warpkit.sample (t 0.8, top-k 50, top-p 0.9; forward only) vs topk, softmax,
                         the top-p mask and an exponential-race draw (gpt-fast's sync-free multinomial)
  segment_softmax        warpkit.segment_softmax (1-D)    vs PyG's form: scatter_reduce amax of the
                         detached x, exp, index_add, divide (segment ids precomputed, outside the timing)
  segment_reduce         warpkit.segment_reduce (sum)     vs torch.segment_reduce (sum, offsets=)
Cells: rows x cols = 2^26 elements (2^24 with --quick) for cols 1024, 8192, 65536 (1024 and 65536
with --quick; the row family's grid, 256 .. 262144, with --full), the vocabulary lengths 32000, 50257,
151936 for cross_entropy and sample (50257 with --quick), and fp32 / bf16 (fp16 too with --full);
the segment operators take the same elements as one vector in segments of cols. --ops a,b,... runs
those operators alone. Every call
allocates its outputs from torch's caching allocator, as a model does; fwd+bwd is the forward and
torch.autograd.grad of the outputs with a fixed dy. torch.compile is static (dynamic=False: one graph
a shape, as a model's fixed shapes get).
Columns: device milliseconds of each call captured in a CUDA graph and replayed (median, CUDA events,
GPU spin before each start: bench/_torch_timing.py graph_ms), so the host's launch and dispatch cost
stays out of every column alike; a '*' marks a call that capture refused, timed as launched instead
(its host cost may then show); speedup = min(eager, compile) / warpkit; the copy ceiling's share (copy
/ warpkit, forward); and the host's microseconds a call (time.perf_counter over back-to-back calls with
no synchronisation: what an eager model pays per call unless the host runs ahead of the GPU).
Usage: python3 bench/torch_ops.py [out.csv] [--quick | --full] [--ops a,b,...] (--help: these). Skips
cleanly without torch, a GPU or the warpkit package (pip install --no-build-isolation ./python).
Target (issue 31): speedup >= 1, or >= 0.98 where both sit at the copy ceiling."""
import argparse
import csv
import os
import statistics
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _torch_timing import allow_many_shapes, graph_ms, host_us, start_warpkit  # noqa: E402


OPS = ("softmax", "log_softmax", "layer_norm", "rms_norm", "cross_entropy", "topk", "argmax", "sample",
       "segment_softmax", "segment_reduce")
VOCAB_OPS = ("cross_entropy", "sample")  # their columns: the vocabulary lengths
SEGMENT_OPS = ("segment_softmax", "segment_reduce")  # a vector in segments of cols


def arguments():
    p = argparse.ArgumentParser(description="warpkit's torch operators against torch eager and torch.compile "
                                "(see the module docstring).")
    p.add_argument("out", nargs="?", default=None, help="the CSV to write (default build/bench/torch_ops.csv)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="2^24 elements a cell, fewer columns and vocabularies")
    size.add_argument("--full", action="store_true", help="the row family's whole grid and fp16 too")
    p.add_argument("--ops", default=",".join(OPS), help="comma-separated operators to run (default: all of "
                   + ", ".join(OPS) + ")")
    a = p.parse_args()
    a.ops = [o for o in a.ops.split(",") if o]
    bad = [o for o in a.ops if o not in OPS]
    if bad or not a.ops:
        p.error(f"--ops: unknown {bad}; choose from {', '.join(OPS)}")
    return a


def torch_sample(torch, x, temperature=0.8, k=50, top_p=0.9):
    """One token a row as warpkit.sample(x, temperature, top_k=k, top_p) draws it, in torch ops with no
    host synchronisation: the top k, their softmax, the top-p mask (a candidate is kept while the
    probability before it is below top_p), and an exponential race (argmax of p / Exp(1): a draw from
    p, gpt-fast's multinomial_sample_one_no_sync)."""
    v, i = torch.topk(x.float() / temperature, k)
    p = torch.softmax(v, -1)
    p = p.masked_fill(p.cumsum(-1) - p >= top_p, 0.0)
    q = torch.empty_like(p).exponential_(1)
    return i.gather(1, torch.argmax(p / q, -1, keepdim=True)).squeeze(1)


def torch_segment_softmax(torch, x, offsets, index):
    """softmax over each segment of the vector x, as PyTorch Geometric's softmax(src, index) computes
    it: the segments' maxima of the detached x (scatter_reduce amax), exp, the sums (index_add, in
    float32), a divide. index: each element's segment (precomputed from offsets)."""
    segs = offsets.shape[0] - 1
    m = torch.full((segs,), float("-inf"), device=x.device, dtype=x.dtype).scatter_reduce(0, index, x.detach(), "amax")
    e = (x - m.index_select(0, index)).exp()
    s = torch.zeros(segs, device=x.device, dtype=torch.float32).index_add(0, index, e.float())
    return (e / s.index_select(0, index)).to(x.dtype)


def main():
    args = arguments()  # --help and bad flags exit here, before torch is imported
    out, torch, warpkit = start_warpkit("torch_ops")
    if torch is None:
        return 0
    import torch.nn.functional as F

    out = args.out or out
    full, quick = args.full, args.quick
    began = time.perf_counter()
    n = 1 << (24 if quick else 26)
    cols_grid = [1024, 65536] if quick else [1024, 8192, 65536]
    if full:
        cols_grid = [256, 1024, 4096, 8192, 16384, 65536, 262144]
    vocab = [50257] if quick else [32000, 50257, 151936]
    dtypes = [torch.float32, torch.float16, torch.bfloat16] if full else [torch.float32, torch.bfloat16]
    allow_many_shapes(torch)
    warnings.filterwarnings("ignore", message=".*[Oo]nline softmax")
    reps = 20 if quick else 30

    ops = {  # name: (warpkit, torch, has a backward)
        "softmax": (lambda x: warpkit.softmax(x, -1), lambda x: torch.softmax(x, -1), True),
        "log_softmax": (lambda x: warpkit.log_softmax(x, -1), lambda x: torch.log_softmax(x, -1), True),
        "layer_norm": (lambda x, w, b: warpkit.layer_norm(x, (x.shape[-1],), w, b),
                       lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b), True),
        "rms_norm": (lambda x, w: warpkit.rms_norm(x, (x.shape[-1],), w, 1e-6),
                     lambda x, w: F.rms_norm(x, (x.shape[-1],), w, 1e-6), True),
        "cross_entropy": (lambda x, y: warpkit.cross_entropy(x, y), lambda x, y: F.cross_entropy(x, y), True),
        "topk": (lambda x: warpkit.topk(x, 8)[0], lambda x: torch.topk(x, 8)[0], True),
        "argmax": (lambda x: warpkit.argmax(x, -1), lambda x: torch.argmax(x, -1), False),
        "sample": (lambda x: warpkit.sample(x, temperature=0.8, top_k=50, top_p=0.9, seed=1),
                   lambda x: torch_sample(torch, x), False),
        "segment_softmax": (lambda x, off, idx: warpkit.segment_softmax(x, off),
                            lambda x, off, idx: torch_segment_softmax(torch, x, off, idx), True),
        "segment_reduce": (lambda x, off, idx: warpkit.segment_reduce(x, "sum", offsets=off),
                           lambda x, off, idx: torch.segment_reduce(x, "sum", offsets=off), True),
    }
    ops = {k: v for k, v in ops.items() if k in args.ops}
    rows_out = []
    print(f"{'op':14} {'mode':8} {'dtype':9} {'rows':>8} {'cols':>7} {'warpkit':>9} {'eager':>9} {'compile':>9} "
          f"{'speedup':>8} {'copy%':>6} {'host us: warpkit':>16} {'eager':>6} {'compile':>7}")
    for name, (wk, tf, has_bwd) in ops.items():
        grid = vocab if name in VOCAB_OPS else cols_grid
        for dtype in dtypes:
            for cols in grid:
                rows = max(1, n // cols)
                g = torch.Generator(device="cuda").manual_seed(0)
                x = torch.randn(rows, cols, device="cuda", generator=g).to(dtype)
                extra = []
                if name == "layer_norm":
                    extra = [torch.randn(cols, device="cuda").to(dtype), torch.randn(cols, device="cuda").to(dtype)]
                elif name == "rms_norm":
                    extra = [torch.randn(cols, device="cuda").to(dtype)]
                elif name == "cross_entropy":
                    extra = [torch.randint(0, cols, (rows,), device="cuda")]
                elif name in SEGMENT_OPS:  # rows segments of cols elements of one vector
                    x = x.reshape(-1)
                    offsets = torch.arange(0, rows * cols + 1, cols, device="cuda")
                    extra = [offsets, torch.arange(rows, device="cuda").repeat_interleave(cols)]
                compiled = torch.compile(tf, dynamic=False)
                copy_dst = torch.empty_like(x)
                copy_ms, _ = graph_ms(torch, lambda: copy_dst.copy_(x), reps=reps)
                for mode in ("fwd", "fwd+bwd") if has_bwd else ("fwd",):
                    if mode == "fwd":
                        calls = [lambda f=f: f(x, *extra) for f in (wk, tf, compiled)]
                    else:
                        xg = x.detach().requires_grad_()
                        params = [p.detach().requires_grad_() for p in extra if p.is_floating_point()]
                        ins = [xg] + params
                        args = [xg] + (params if params else extra)
                        with torch.no_grad():  # dy's shape only: no autograd node made outside the capture's stream
                            y0 = tf(*args)
                        dy = torch.randn_like(y0) if y0.dim() else torch.ones_like(y0)
                        calls = [lambda f=f: torch.autograd.grad(f(*args), ins, dy) for f in (wk, tf, compiled)]
                    with torch.set_grad_enabled(mode != "fwd"):
                        try:  # the first compiled call compiles; where that fails, the column times eager
                            calls[2]()
                        except Exception as e:  # noqa: BLE001 - any failure of torch.compile
                            print(f"  .. {name} {mode}: torch.compile failed ({type(e).__name__}: "
                                  f"{str(e).splitlines()[0][:120] if str(e) else ''}); its column times eager",
                                  file=sys.stderr)
                            calls[2] = calls[1]
                        timed = [graph_ms(torch, fn, reps=reps) for fn in calls]
                        host = [host_us(torch, fn) for fn in calls]
                    ms = [t[0] for t in timed]
                    r = dict(op=name, mode=mode, dtype=str(dtype).replace("torch.", ""), rows=rows, cols=cols,
                             warpkit_ms=ms[0], eager_ms=ms[1], compile_ms=ms[2], speedup=min(ms[1], ms[2]) / ms[0],
                             copy_share=copy_ms / ms[0] if mode == "fwd" else float("nan"),
                             warpkit_graph=timed[0][1], eager_graph=timed[1][1], compile_graph=timed[2][1],
                             warpkit_host_us=host[0], eager_host_us=host[1], compile_host_us=host[2])
                    rows_out.append(r)
                    cell = [f"{m:8.4f}{' ' if t[1] else '*'}" for m, t in zip(ms, timed)]
                    print(f"{name:14} {mode:8} {r['dtype']:9} {rows:8d} {cols:7d} {cell[0]:>9} {cell[1]:>9} "
                          f"{cell[2]:>9} {r['speedup']:7.3f}x {100 * r['copy_share']:5.0f}% {host[0]:16.1f} "
                          f"{host[1]:6.1f} {host[2]:7.1f}")
                    del calls, timed
                torch.cuda.empty_cache()
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows_out[0].keys()))
        w.writeheader()
        w.writerows(rows_out)
    slow = [r for r in rows_out if r["speedup"] < 0.98]
    ungraphed = sum(not r[k] for r in rows_out for k in ("warpkit_graph", "eager_graph", "compile_graph"))
    print(f"{len(rows_out)} cells, {len(slow)} below 0.98x the better of eager and compile (device time); "
          f"{ungraphed} timings not captured in a graph (*)")
    for mode in ("fwd", "fwd+bwd"):
        sel = [r for r in rows_out if r["mode"] == mode]
        med = {k: statistics.median(r[f"{k}_host_us"] for r in sel) for k in ("warpkit", "eager", "compile")}
        print(f"host us a call, {mode} (median over cells): warpkit {med['warpkit']:.1f}, eager {med['eager']:.1f}, "
              f"compile {med['compile']:.1f}")
    print(f"took {time.perf_counter() - began:.0f} s; csv: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
