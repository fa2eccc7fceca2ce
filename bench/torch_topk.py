#!/usr/bin/env python3
"""The torch peers of bench/topk.cu: torch.topk(x, k, sorted=True) and torch.sort(x, descending=True)
then the first k columns, on bench/topk.cu's cells (rows {1, 8, 64, 512, 4096} x cols {32000, 50257,
128256, 151936, 262144} x k {1, 8, 50, 256, 1024}, fp32 and bf16; rows >= 512 with k = 1024 skipped;
torch.sort only up to 2^26 elements), each beside the time of a read of the same bytes (half of a
clone's time: a clone reads and writes them) measured in the same process.

When build/bench/topk.csv (written by build/bench/topk in the same `make bench` run, on the same
GPU) is there, each line also shows warpkit's rowTopK time from it and the ratio torch / warpkit.
Usage: python3 bench/torch_topk.py [out.csv]. Skips cleanly (exit 0) without torch or a GPU.
"""
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _torch_timing import median_ms, start  # noqa: E402

ROWS = [1, 8, 64, 512, 4096]
COLS = [32000, 50257, 128256, 151936, 262144]
KS = [1, 8, 50, 256, 1024]


def main():
    out, torch = start("torch_topk")
    if torch is None:
        return 0

    wk = {}
    wk_csv = os.path.join(os.path.dirname(out) or ".", "topk.csv")
    if os.path.exists(wk_csv):
        with open(wk_csv) as f:
            for r in csv.DictReader(f):
                wk[(r["type"], int(r["rows"]), int(r["cols"]), int(r["k"]))] = float(r["topk_us"])
    source = wk_csv if wk else "(not found)"
    print(f"torch {torch.__version__}: torch.topk and torch.sort + slice; warpkit from {source}")
    print("| type | rows |   cols |    k | copy us | topk us | sort us | warpkit us | topk/wk | sort/wk |")
    print("|------|------|--------|------|---------|---------|---------|------------|---------|---------|")
    rows_out = []
    for tname, dt in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        for rows in ROWS:
            for cols in COLS:
                x = torch.empty(rows, cols, dtype=dt, device="cuda").uniform_(-8, 8)
                copy_us = median_ms(torch, lambda: x.clone()) * 1e3 / 2  # read half of a copy
                for k in KS:
                    if rows >= 512 and k == 1024:
                        continue
                    topk_us = median_ms(torch, lambda: torch.topk(x, k, dim=-1, largest=True, sorted=True)) * 1e3
                    sort_us = float("nan")
                    if rows * cols <= (1 << 26):
                        def sort_slice():
                            v, i = torch.sort(x, dim=-1, descending=True)
                            return v[:, :k], i[:, :k]
                        sort_us = median_ms(torch, sort_slice, 2, 10) * 1e3
                    w = wk.get((tname, rows, cols, k))
                    ws = f"{w:10.1f}" if w else "         -"
                    rt = f"{topk_us / w:7.2f}x" if w else "       -"
                    rs = f"{sort_us / w:7.2f}x" if w and sort_us == sort_us else "       -"
                    print(f"| {tname} | {rows:4d} | {cols:6d} | {k:4d} | {copy_us:7.1f} | {topk_us:7.1f} "
                          f"| {sort_us:7.1f} | {ws} | {rt} | {rs} |")
                    rows_out.append([tname, rows, cols, k, copy_us, topk_us, sort_us, w if w else ""])
                del x
    with open(out, "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["type", "rows", "cols", "k", "read_us", "torch_topk_us", "torch_sort_slice_us", "warpkit_us"])
        wr.writerows(rows_out)
    print(f"csv: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
