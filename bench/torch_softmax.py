#!/usr/bin/env python3
"""torch.softmax(x, -1) on the shapes of bench/softmax.cu, timed in the same run as a copy.

Usage: python3 bench/torch_softmax.py [out.csv]. Skips cleanly (exit 0) without torch or a GPU.
When bench/softmax.cu's CSV (softmax.csv beside out.csv) exists from the same `make bench`, the
table also gives warpkit's TB/s and warpkit / torch.
"""
import csv
import os
import sys

COLS = [32, 128, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 262144]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "build/bench/torch_softmax.csv"
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means "no torch here"
        print(f"torch_softmax: skipped: torch not importable ({type(e).__name__})")
        return 0
    if not torch.cuda.is_available():
        print("torch_softmax: skipped: no CUDA device")
        return 0

    def median_ms(fn, warmup=5, reps=30):
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        times = []
        # As bench/bench.cuh: a GPU spin before the start event, so the host's launch latency
        # is not inside the timed interval.
        spin = getattr(torch.cuda, "_sleep", None)
        for _ in range(reps):
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            if spin is not None:
                spin(100000)
            a.record()
            fn()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b))
        times.sort()
        return times[len(times) // 2]

    src = torch.empty(1 << 28, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    copy = 2 * src.numel() * 4 / (median_ms(lambda: dst.copy_(src)) * 1e-3) / 1e12
    del src, dst
    mine = {}
    wk_csv = os.path.join(os.path.dirname(out) or ".", "softmax.csv")
    if os.path.exists(wk_csv):
        with open(wk_csv) as f:
            for row in csv.DictReader(f):
                if row["path"].startswith(("cluster-", "trial-")):
                    continue  # the trial-variant rows, not the dispatcher's pick
                mine[(row["type"], int(row["cols"]))] = float(row["tbps"])
    print(f"torch {torch.__version__}: torch.softmax(x, -1), 2^26 elements; copy {copy:.2f} TB/s")
    print("| type  |   cols | torch TB/s | xcopy | warpkit TB/s | warpkit/torch |")
    print("|-------|--------|------------|-------|--------------|---------------|")
    rows_out = []
    n = 1 << 26
    for tname, dt in (("fp32", torch.float32), ("fp16", torch.float16), ("bf16", torch.bfloat16)):
        x = torch.randn(n, dtype=torch.float32, device="cuda").mul_(4).to(dt)
        for cols in COLS:
            xv = x.view(n // cols, cols)
            ms = median_ms(lambda: torch.softmax(xv, -1))
            tb = 2 * n * x.element_size() / (ms * 1e-3) / 1e12
            w = mine.get((tname, cols))
            ws = f"{w:12.2f} | {w / tb:12.2f}x" if w else f"{'-':>12} | {'-':>13}"
            print(f"| {tname:5} | {cols:6d} | {tb:10.2f} | {tb / copy:5.2f} | {ws} |")
            rows_out.append((tname, cols, ms, tb, copy, w if w else ""))
        del x
    with open(out, "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["type", "cols", "torch_ms", "torch_tbps", "copy_tbps", "warpkit_tbps"])
        wr.writerows(rows_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
