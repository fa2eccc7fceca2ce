#!/usr/bin/env python3
"""A GPT-2-small training step (12 layers, 768 wide, 12 heads, vocabulary 50257, batch x sequence
8 x 1024, bf16 autocast over float32 parameters, AdamW) whose LayerNorms and loss are warpkit's
(warpkit.add_layer_norm where a residual add precedes the LayerNorm, reading the bf16 branch output
beside the float32 stream without a cast, its backward adding the residual's gradient in the same
kernel and writing the branch's bf16 gradient too; warpkit.layer_norm; warpkit.cross_entropy: the fused loss
keeps a bf16 gradient in place of torch's float32 log-softmax), against the same model with torch's
(the same adds, then F.layer_norm), each eager and under torch.compile; the
same seed, weights and batch for every variant, 20 steps each. Prints each variant's losses, the
median step time (steps 5 .. 20, CUDA events), the host's time to issue it (in all, and by forward,
backward and optimizer; for the compiled variants also the graphs compiled and graph breaks) and the
peak memory, and the largest loss difference from torch eager (bf16 noise is about 1e-2).
Usage: python3 bench/gpt2_step.py [out.csv] [--steps N] [--profile] (--help: these). --profile runs one more step of
each variant under torch.profiler and prints its GPU time by kernel family (matmul, attention, triton
= inductor's fused kernels, warpkit, other) and its 12 longest kernels, so two variants' step times
can be told apart kernel by kernel, its dtype-cast kernels (count and time: with warpkit's mixed-dtype
add_layer_norm the bf16 residual's cast and its gradient's are gone), and every warpkit kernel.
Skips cleanly without torch, a GPU or the warpkit package (pip install --no-build-isolation ./python).
Targets (issue 31): warpkit eager faster than torch eager, warpkit compiled no slower than torch
compiled, warpkit's peak memory below torch eager's; the last lines print each comparison."""
import argparse
import csv
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _torch_timing import start_warpkit  # noqa: E402

V, D, L, H, B, T = 50257, 768, 12, 12, 8, 1024


def build(torch, use_warpkit):
    import torch.nn as nn
    import torch.nn.functional as F

    if use_warpkit:
        import warpkit

        ln = lambda m, x: warpkit.layer_norm(x, (D,), m.weight, m.bias, 1e-5)  # noqa: E731
        addln = lambda m, x, r: warpkit.add_layer_norm(x, r, (D,), m.weight, m.bias, 1e-5)  # noqa: E731
        ce = lambda logits, y: warpkit.cross_entropy(logits.view(-1, V), y.view(-1))  # noqa: E731
    else:
        ln = lambda m, x: F.layer_norm(x, (D,), m.weight, m.bias, 1e-5)  # noqa: E731

        def addln(m, x, r):  # (y, h): the residual add, then its LayerNorm, as the warpkit op
            h = x + r
            return F.layer_norm(h, (D,), m.weight, m.bias, 1e-5), h
        ce = lambda logits, y: F.cross_entropy(logits.view(-1, V), y.view(-1))  # noqa: E731

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
            self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
            self.fc, self.out = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

        def forward(self, x, r):
            """x: the residual stream, r: the previous block's output still to be added to it (None
            for the first block), so that each add runs inside the LayerNorm after it (addln);
            returns (x, r) for the next block."""
            if r is None:
                y = ln(self.ln1, x)
            else:
                y, x = addln(self.ln1, x, r)
            q, k, v = self.qkv(y).split(D, dim=2)
            q, k, v = (t.view(B, T, H, D // H).transpose(1, 2) for t in (q, k, v))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, D)
            y, x = addln(self.ln2, x, self.proj(a))
            return x, self.out(F.gelu(self.fc(y), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(V, D), nn.Embedding(T, D)
            self.blocks = nn.ModuleList(Block() for _ in range(L))
            self.lnf = nn.LayerNorm(D)
            for p in self.parameters():
                if p.dim() == 2:
                    nn.init.normal_(p, std=0.02)

        def forward(self, idx, y):
            x = self.wte(idx) + self.wpe(torch.arange(T, device=idx.device))
            r = None
            for blk in self.blocks:
                x, r = blk(x, r)
            logits = addln(self.lnf, x, r)[0] @ self.wte.weight.t()  # tied head
            return ce(logits, y)

    torch.manual_seed(0)
    return GPT().cuda()


def family(name):
    """The kernel family of a CUDA kernel's name, for the --profile breakdown."""
    n = name.lower()
    if "warpkit" in n or "scalerowskernel" in n or "reducelosskernel" in n:  # the last two: python/csrc's
        return "warpkit"
    if "triton" in n:
        return "triton"
    if "flash" in n or "fmha" in n or "attention" in n or "sdpa" in n:
        return "attention"
    if any(k in n for k in ("gemm", "xmma", "cutlass", "nvjet", "cublas", "matmul", "sm90_")):
        return "matmul"
    return "other"


def is_cast(name):
    """Whether a CUDA kernel is a dtype cast alone: aten's copy kernels, inductor's pointwise
    kernels of nothing but _to_copy (and views)."""
    n = name.lower()
    if "triton" in n:
        ops = n.split("fused_", 1)[-1]
        return "poi" in n and "_to_copy" in ops and all(
            p in ("", "to", "copy", "view", "clone") or p.isdigit() for p in ops.split("_"))
    return "copy" in n and "warpkit" not in n


def profile_step(torch, name, step):
    """One step under torch.profiler: GPU milliseconds by kernel family and the 12 longest kernels;
    then the host side: the 10 operators and runtime calls of the most self CPU time, and any call
    that waits for the GPU (a synchronize or a device-to-host copy), which would starve the GPU."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    kernels = {}
    for e in prof.events():  # the kernels: events on the GPU, each one launch
        if getattr(e, "device_type", None) != torch.autograd.DeviceType.CUDA:
            continue
        us = e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
        k = kernels.setdefault(e.name, [0, 0.0])
        k[0] += 1
        k[1] += us / 1000
    fams = {}
    for kname, (_, ms) in kernels.items():
        fams[family(kname)] = fams.get(family(kname), 0.0) + ms
    total = sum(fams.values())
    print(f"profile, {name}: {total:.2f} ms of kernels; " +
          ", ".join(f"{f} {ms:.2f}" for f, ms in sorted(fams.items(), key=lambda kv: -kv[1])))
    for kname, (count, ms) in sorted(kernels.items(), key=lambda kv: -kv[1][1])[:12]:
        print(f"  {ms:8.3f} ms {count:4d}x  {family(kname):9} {kname[:90]}")
    casts = {k: v for k, v in kernels.items() if is_cast(k)}
    print(f"  casts, {name}: {sum(v[0] for v in casts.values())} launches, "
          f"{sum(v[1] for v in casts.values()):.3f} ms (aten copy kernels, inductor's _to_copy-only kernels)")
    for kname, (count, ms) in sorted(casts.items(), key=lambda kv: -kv[1][1])[:6]:
        print(f"  {ms:8.3f} ms {count:4d}x  cast      {kname[:90]}")
    for kname, (count, ms) in sorted(kernels.items(), key=lambda kv: -kv[1][1]):  # every warpkit kernel
        if family(kname) == "warpkit":
            print(f"  {ms:8.3f} ms {count:4d}x  warpkit   {kname[:110]}")
    cpu = [e for e in prof.key_averages() if e.self_cpu_time_total > 0]
    print(f"  host, {name}: {sum(e.self_cpu_time_total for e in cpu) / 1000:.2f} ms of self CPU time; the most:")
    for e in sorted(cpu, key=lambda e: -e.self_cpu_time_total)[:10]:
        print(f"  {e.self_cpu_time_total / 1000:8.3f} ms {e.count:4d}x  host      {e.key[:90]}")
    for e in cpu:
        if "ynchronize" in e.key or "DtoH" in e.key or "Memcpy" in e.key:
            print(f"  {e.self_cpu_time_total / 1000:8.3f} ms {e.count:4d}x  waits     {e.key[:90]}")


def run(torch, name, use_warpkit, compiled, idx, y, steps, profile=False):
    import gc

    from torch._dynamo.utils import counters  # the compiled variant's graphs and graph breaks

    model = build(torch, use_warpkit)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.0, fused=True)
    fwd = torch.compile(model) if compiled else model
    counters.clear()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    losses, times, host, phases = [], [], [], []

    def step(fwd=fwd, opt=opt, record=None):
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = fwd(idx, y)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if record is not None:  # the host's ms to issue the forward, the backward and the optimizer
            record.append((1000 * (t1 - t0), 1000 * (t2 - t1), 1000 * (time.perf_counter() - t2)))
        return loss

    for s in range(steps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0 = time.perf_counter()
        a.record()
        loss = step(record=phases)
        b.record()
        host.append((time.perf_counter() - t0) * 1000)  # the host's time to issue the step
        b.synchronize()
        losses.append(float(loss))
        times.append(a.elapsed_time(b))
    peak = torch.cuda.max_memory_allocated() / 2**30
    graphs = (counters["stats"]["unique_graphs"], sum(counters["graph_break"].values())) if compiled else None
    if profile:
        profile_step(torch, name, step)
    del step, model, opt, fwd
    gc.collect()
    torch.cuda.empty_cache()
    timed = sorted(times[4:]) or sorted(times)
    issued = sorted(host[4:]) or sorted(host)
    split = [sorted(p[i] for p in (phases[4:] or phases))[len(phases[4:] or phases) // 2] for i in range(3)]
    return {"variant": name, "losses": losses, "step_ms": timed[len(timed) // 2], "host_ms": issued[len(issued) // 2],
            "peak_gib": peak, "graphs": graphs, "host_split": split}


def arguments():
    p = argparse.ArgumentParser(description="A GPT-2-small training step with warpkit's LayerNorms and loss "
                                "against torch's, eager and compiled (see the module docstring).")
    p.add_argument("out", nargs="?", default=None, help="the CSV to write (default build/bench/gpt2_step.csv)")
    p.add_argument("--steps", type=int, default=20, help="training steps of each variant (default 20; the "
                   "median step time is over steps 5..N)")
    p.add_argument("--profile", action="store_true", help="one more step of each variant under torch.profiler: "
                   "GPU time by kernel family, the longest kernels, casts, every warpkit kernel, host time")
    a = p.parse_args()
    if a.steps < 1:
        p.error("--steps must be at least 1")
    return a


def main():
    args = arguments()  # --help and bad flags exit here, before torch is imported
    out, torch, warpkit = start_warpkit("gpt2_step")
    if torch is None:
        return 0
    out = args.out or out
    steps = args.steps
    g = torch.Generator(device="cuda").manual_seed(1)
    idx = torch.randint(0, V, (B, T), device="cuda", generator=g)
    y = torch.randint(0, V, (B, T), device="cuda", generator=g)
    torch.backends.cuda.matmul.allow_tf32 = True
    variants = [("torch eager", False, False), ("torch compiled", False, True), ("warpkit eager", True, False),
                ("warpkit compiled", True, True)]
    res = [run(torch, n, w, c, idx, y, steps, args.profile) for n, w, c in variants]
    base = res[0]
    print(f"GPT-2 small step, {B} x {T} tokens, bf16 autocast, {steps} steps, {torch.cuda.get_device_name()}")
    print(f"{'variant':18} {'step ms':>9} {'vs eager':>9} {'host ms':>8} {'peak GiB':>9} {'max |dloss|':>12}  "
          "first / last loss")
    for r in res:
        d = max(abs(a - b) for a, b in zip(r["losses"], base["losses"]))
        print(f"{r['variant']:18} {r['step_ms']:9.2f} {base['step_ms'] / r['step_ms']:8.3f}x {r['host_ms']:8.2f} "
              f"{r['peak_gib']:9.2f} {d:12.4f}  {r['losses'][0]:.4f} / {r['losses'][-1]:.4f}")
    print("host ms: the host's time to issue a step (median), no wait for the GPU; near step ms, the step is "
          "host-bound")
    for r in res:
        f, bw, o = r["host_split"]
        line = f"  {r['variant']:18} host ms: forward {f:.2f}, backward {bw:.2f}, optimizer {o:.2f}"
        if r["graphs"] is not None:  # more than one graph, or any break: Python runs between graphs each step
            line += f"; {r['graphs'][0]} graphs compiled, {r['graphs'][1]} graph breaks"
        print(line)
    print("losses:")
    for r in res:
        print(f"  {r['variant']:18} " + " ".join(f"{v:.4f}" for v in r["losses"]))
    te, tc, we, wc = res
    dmax = max(abs(a - b) for r in res[1:] for a, b in zip(r["losses"], te["losses"]))
    print("targets (issue 31):")
    print(f"  warpkit eager vs torch eager step:       {te['step_ms'] / we['step_ms']:.3f}x (above 1 wanted)")
    print(f"  warpkit compiled vs torch compiled step: {tc['step_ms'] / wc['step_ms']:.3f}x (1 or above wanted)")
    print(f"  peak GiB, warpkit eager vs torch eager:  {we['peak_gib']:.2f} vs {te['peak_gib']:.2f} (below wanted); "
          f"compiled: {wc['peak_gib']:.2f} vs {tc['peak_gib']:.2f}")
    print(f"  max |loss - torch eager's| over {steps} steps, every variant: {dmax:.4f} (bf16 noise: about 1e-2)")
    ok = all(all(math.isfinite(v) for v in r["losses"]) for r in res)
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["variant", "step_ms", "host_ms", "peak_gib"] + [f"loss{i}" for i in range(steps)])
        for r in res:
            w.writerow([r["variant"], f"{r['step_ms']:.3f}", f"{r['host_ms']:.3f}", f"{r['peak_gib']:.3f}"] +
                       [f"{v:.5f}" for v in r["losses"]])
    print(f"csv: {out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
