#!/usr/bin/env python3
"""warpkit.rowSoftmax against torch.softmax and torch.compile, in one process, on the cells of
bench/softmax.cu's four tables (anchors, odd lengths, few long rows, short rows: every length
1 .. 256 in fp32 and bf16 with rows = 2^26 / cols, and 1,048,576 x 77), each beside a copy of the
same bytes timed in the same run. The short table's 514 cells (3 warm-up and 11 timed calls each)
print as x best (the better peer's time over warpkit's) 16 lengths a line, then their misses; each
of its shapes is one torch.compile graph, so compiling dominates its time (about 1 s a shape).

warpkit is called through its PyTorch extension (python/: warpkit.softmax, JIT-built on first use
into build/torch_ext), on the same tensors and torch's current stream.
Usage: python3 bench/torch_softmax.py [out.csv [cells ...]]: cells selects table[:type[:lo-hi]]
(e.g. `short:bf16:1-128`, `few`); none: every cell. Skips cleanly (exit 0) without torch or a GPU.
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
FEW_ROWS = [1, 2, 4, 8, 64]
VOCAB = [32000, 50257, 128256, 151936]
N = 1 << 26
SHORT_MAX = 256  # the short table: every length 1 .. SHORT_MAX, fp32 and bf16
SHORT_77 = (1 << 20, 77)  # and the shape, 1,048,576 x 77
SHORT_TYPES = ("fp32", "bf16")


def selected(table, tname, cols):
    """Whether argv[2:] (table[:type[:lo-hi]] each; none: every cell) selects this cell."""
    picks = sys.argv[2:]
    for p in picks:
        part = p.split(":")
        if part[0] != table or (len(part) > 1 and part[1] != tname):
            continue
        if len(part) > 2:
            lo, hi = (int(v) for v in part[2].split("-"))
            if not lo <= cols <= hi:
                continue
        return True
    return not picks


def print_short(tname, res):
    """The short table of one type: x best 16 lengths a line, then the lengths that miss the peer
    target and the lengths >= 32 below 0.90x copy."""
    by_cols = {c: r for (rows, c), r in res.items() if rows == N // c}
    for lo in range(1, SHORT_MAX + 1, 16):
        if any(c in by_cols for c in range(lo, lo + 16)):
            vals = " ".join(f"{by_cols[c][0]:4.2f}" if c in by_cols else "   -" for c in range(lo, lo + 16))
            print(f"| {tname} | {lo:3d}-{lo + 15:3d} | {vals} |")
    if SHORT_77 in res:
        r, xc, ok = res[SHORT_77]
        print(f"| {tname} | {SHORT_77[0]} x {SHORT_77[1]} | x best {r:4.2f}, {xc:4.2f}x copy")
    peer = [c for c, (r, xc, ok) in sorted(by_cols.items()) if not ok]
    copy = [c for c, (r, xc, ok) in sorted(by_cols.items()) if c >= 32 and xc < 0.90]
    print(f"{tname} short: behind the better peer at {len(peer)} of {len(by_cols)} lengths: {' '.join(map(str, peer)) or '-'}")
    print(f"{tname} short: below 0.90x copy at {len(copy)} lengths >= 32: {' '.join(map(str, copy)) or '-'}")


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
    short_ms = timer(torch, 3, 11)  # the short table's 514 cells: fewer calls each
    allow_many_shapes(torch)  # one compiled graph per shape, as a model with fixed sizes gets
    compiled = torch.compile(lambda t: torch.softmax(t, -1), dynamic=False)
    compile_s = 0.0
    rows_out = []
    print(f"torch {torch.__version__}: warpkit (extension) vs torch.softmax and torch.compile (static shapes), same process")
    print("| table   | type | rows    |   cols | copy TB/s | warpkit | torch | compile | x best | xcopy | tgt  |")
    print("|---------|------|---------|--------|-----------|---------|-------|---------|--------|-------|------|")
    misses = 0
    f = open(out, "w", newline="")  # each row written as it is measured: a run cut short keeps what it measured
    wr = csv.writer(f)
    wr.writerow(["table", "type", "rows", "cols", "copy_ms", "warpkit_ms", "torch_ms", "compile_ms", "best_peer_over_warpkit"])
    for tname, dt in (("fp32", torch.float32), ("fp16", torch.float16), ("bf16", torch.bfloat16)):
        cells = [("anchors", N // c, c) for c in ANCHOR_COLS] + [("odd", N // c, c) for c in ODD_COLS] + \
                [("few", r, c) for r in FEW_ROWS for c in VOCAB]
        if tname in SHORT_TYPES:
            cells += [("short", N // c, c) for c in range(1, SHORT_MAX + 1)] + [("short",) + SHORT_77]
        cells = [cell for cell in cells if selected(cell[0], tname, cell[2])]
        if not cells:
            continue
        base = torch.randn(max(N, SHORT_77[0] * SHORT_77[1]), dtype=torch.float32, device="cuda").mul_(4).to(dt)
        cbuf = torch.empty_like(base)
        short = {}
        t_type = time.time()
        for table, rows, cols in cells:
            n = rows * cols
            x = base[:n].view(rows, cols)
            cp = cbuf[:n]
            t0 = time.time()
            compiled(x)  # compile outside the timing
            torch.cuda.synchronize()
            compile_s += time.time() - t0
            med = short_ms if table == "short" else median_ms
            ms_copy = med(lambda: cp.copy_(base[:n]))
            ms_wk = med(lambda: warpkit.softmax(x, -1))  # allocates its output, as torch.softmax does
            ms_t = med(lambda: torch.softmax(x, -1))
            ms_c = med(lambda: compiled(x))
            tb = lambda ms: 2 * n * base.element_size() / (ms * 1e-3) / 1e12  # noqa: E731
            best = min(ms_t, ms_c)
            ratio = best / ms_wk
            at_ceiling = tb(ms_wk) >= 0.95 * tb(ms_copy) and tb(best) >= 0.95 * tb(ms_copy)
            ok = ratio >= 1.0 or (at_ceiling and ratio >= 0.98)
            misses += not ok
            rows_out.append((table, tname, rows, cols, ms_copy, ms_wk, ms_t, ms_c, ratio))
            wr.writerow(rows_out[-1])
            f.flush()
            if table == "short":
                short[(rows, cols)] = (ratio, ms_copy / ms_wk, ok)
                continue
            print(f"| {table:7} | {tname} | {rows:7d} | {cols:6d} | {tb(ms_copy):9.2f} | {tb(ms_wk):7.2f} | {tb(ms_t):5.2f} | "
                  f"{tb(ms_c):7.2f} | {ratio:5.2f}x | {ms_copy / ms_wk:5.2f} | {'ok' if ok else 'MISS':4} |")
        if short:
            print(f"\nshort rows, {tname}: x best (better peer's time over warpkit's), one length each; "
                  f"{time.time() - t_type:.0f} s for this type's cells")
            print_short(tname, short)
            print()
        del base, cbuf
        torch.cuda.empty_cache()
    print(f"\n{misses} of {len(rows_out)} cells miss the peer target; torch.compile spent {compile_s:.0f} s compiling")
    f.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
