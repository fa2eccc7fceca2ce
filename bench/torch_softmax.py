#!/usr/bin/env python3
"""warpkit.rowSoftmax against torch.softmax and torch.compile, in one process, on the cells of
bench/softmax.cu's three tables (anchors, odd lengths, few long rows), each beside a copy of the
same bytes timed in the same run.

warpkit is called through its PyTorch extension (python/: warpkit.softmax, JIT-built on first use
into build/torch_ext), on the same tensors and torch's current stream.
Usage: python3 bench/torch_softmax.py [out.csv]. Skips cleanly (exit 0) without torch or a GPU.
Target: warpkit ahead of the better of torch and torch.compile, or at least 0.98x it where both
sit at the copy ceiling (>= 0.95x copy).
"""
import csv
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _torch_timing import allow_many_shapes, start, timer  # noqa: E402

ANCHOR_COLS = [32, 128, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 262144]
ODD_COLS = [197, 1000, 1023, 1025, 2047, 2049, 4097, 8191, 8193, 16383, 16385, 32767, 32769, 50257, 65537, 100003, 262143]
FEW_ROWS = [1, 8, 64]
VOCAB = [32000, 50257, 128256, 151936]
N = 1 << 26


def main():
    out, torch = start("torch_softmax")
    if torch is None:
        return 0
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.join(root, "python"))
    os.environ.setdefault("WARPKIT_TORCH_BUILD", os.path.join(os.path.dirname(out) or ".", "..", "torch_ext"))
    import warpkit
    t0 = time.time()
    warpkit.load()
    print(f"warpkit extension ready in {time.time() - t0:.0f} s")

    median_ms = timer(torch)
    allow_many_shapes(torch)  # one compiled graph per shape, as a model with fixed sizes gets
    compiled = torch.compile(lambda t: torch.softmax(t, -1), dynamic=False)
    compile_s = 0.0
    rows_out = []
    print(f"torch {torch.__version__}: warpkit (extension) vs torch.softmax and torch.compile (static shapes), same process")
    print("| table   | type | rows    |   cols | copy TB/s | warpkit | torch | compile | x best | xcopy | tgt  |")
    print("|---------|------|---------|--------|-----------|---------|-------|---------|--------|-------|------|")
    misses = 0
    for tname, dt in (("fp32", torch.float32), ("fp16", torch.float16), ("bf16", torch.bfloat16)):
        base = torch.randn(N, dtype=torch.float32, device="cuda").mul_(4).to(dt)
        cbuf = torch.empty_like(base)
        cells = [("anchors", N // c, c) for c in ANCHOR_COLS] + [("odd", N // c, c) for c in ODD_COLS] + \
                [("few", r, c) for r in FEW_ROWS for c in VOCAB]
        for table, rows, cols in cells:
            n = rows * cols
            x = base[:n].view(rows, cols)
            cp = cbuf[:n]
            t0 = time.time()
            compiled(x)  # compile outside the timing
            torch.cuda.synchronize()
            compile_s += time.time() - t0
            ms_copy = median_ms(lambda: cp.copy_(base[:n]))
            ms_wk = median_ms(lambda: warpkit.softmax(x, -1))  # allocates its output, as torch.softmax does
            ms_t = median_ms(lambda: torch.softmax(x, -1))
            ms_c = median_ms(lambda: compiled(x))
            tb = lambda ms: 2 * n * base.element_size() / (ms * 1e-3) / 1e12  # noqa: E731
            best = min(ms_t, ms_c)
            ratio = best / ms_wk
            at_ceiling = tb(ms_wk) >= 0.95 * tb(ms_copy) and tb(best) >= 0.95 * tb(ms_copy)
            ok = ratio >= 1.0 or (at_ceiling and ratio >= 0.98)
            misses += not ok
            print(f"| {table:7} | {tname} | {rows:7d} | {cols:6d} | {tb(ms_copy):9.2f} | {tb(ms_wk):7.2f} | {tb(ms_t):5.2f} | "
                  f"{tb(ms_c):7.2f} | {ratio:5.2f}x | {ms_copy / ms_wk:5.2f} | {'ok' if ok else 'MISS':4} |")
            rows_out.append((table, tname, rows, cols, ms_copy, ms_wk, ms_t, ms_c, ratio))
        del base, cbuf
        torch.cuda.empty_cache()
    print(f"\n{misses} of {len(rows_out)} cells miss the peer target; torch.compile spent {compile_s:.0f} s compiling")
    with open(out, "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["table", "type", "rows", "cols", "copy_ms", "warpkit_ms", "torch_ms", "compile_ms", "best_peer_over_warpkit"])
        wr.writerows(rows_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
