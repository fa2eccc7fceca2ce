#!/usr/bin/env python3
"""warpkit's segment calls against PyTorch Geometric and torch, in one process, on bench/segment.cu's
distributions (the same lengths: splitmix64 of the segment index), fp32, int64 CSR offsets:
  softmax  warpkit.segmentSoftmax       vs torch_geometric.utils.softmax(src, ptr=ptr)
  sum      warpkit.segmentReduceSum     vs torch.Tensor.scatter_reduce_(0, index, src, "sum")
  max      warpkit.segmentReduceMax     vs scatter_reduce_(..., "amax", include_self=False)
each beside a copy of the same bytes (values read + written, offsets read) timed in the same run.
warpkit is called through build/bench/libwarpkit_segment.so (bench/segment_shim.cu, built by
`make bench`) with ctypes on the same tensors and torch's current stream.
Usage: python3 bench/torch_segment.py [out.csv]. Skips cleanly (exit 0) without torch, a GPU or the
shim; without torch_geometric the softmax peer column is left out. Target: >= 5x
torch_geometric.utils.softmax on segment softmax.
"""
import ctypes
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _torch_timing import load_shim, start, timer  # noqa: E402

DISTS = ["mean1", "mean4", "mean32", "mean256", "mean4096", "powerlaw", "giant"]
M64 = (1 << 64) - 1


def lengths_for(np, d, rows):
    """bench/segment.cu's offsetsFor, vectorised: CSR offsets of distribution d over exactly rows rows."""
    if d == 6:
        off = np.zeros(1000002, dtype=np.int64)
        off[500001:] = rows
        return off
    mean = [1, 4, 32, 256, 4096]
    n = int(rows / (mean[d] if d < 5 else 20)) + 1024
    while True:
        i = np.arange(n, dtype=np.uint64)
        z = i + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        h = z ^ (z >> np.uint64(31))
        if d < 5:
            ln = (h % np.uint64(2 * mean[d] + 1)).astype(np.int64)
        else:
            u = ((h >> np.uint64(11)).astype(np.float64) + 1.0) * (1.0 / 9007199254740992.0)
            ln = np.minimum(99999, np.floor(u ** -1.2).astype(np.int64) - 1)
            idx = np.arange(n)
            giant = (idx % 10007 == 7) & (idx // 10007 < 3)
            ln[giant] = max(rows // 16, 1100000)
        c = np.cumsum(ln)
        if c[-1] >= rows:
            break
        n *= 2
    k = int(np.searchsorted(c, rows)) + 1  # segments up to the one that reaches rows
    off = np.concatenate([[0], np.minimum(c[:k], rows)]).astype(np.int64)
    return off


def main():
    out, torch = start("torch_segment")
    if torch is None:
        return 0
    try:
        import numpy as np
    except Exception as e:  # noqa: BLE001
        print(f"torch_segment: skipped: numpy not importable ({type(e).__name__})")
        return 0
    lib = load_shim("torch_segment", out, "libwarpkit_segment.so")
    if lib is None:
        return 0
    try:
        from torch_geometric.utils import softmax as pyg_softmax
    except Exception as e:  # noqa: BLE001
        pyg_softmax = None
        print(f"torch_segment: torch_geometric not importable ({type(e).__name__}): no softmax peer")
    vp, ll, ci = ctypes.c_void_p, ctypes.c_longlong, ctypes.c_int
    sz = ctypes.POINTER(ctypes.c_size_t)
    lib.wk_segment_softmax.argtypes = [vp, vp, ll, vp, ll, ci, ci, vp, sz, vp]
    lib.wk_segment_reduce.argtypes = [ci, vp, vp, ll, vp, ll, vp, sz, vp]
    lib.wk_segment_softmax.restype = lib.wk_segment_reduce.restype = ci
    median_ms = timer(torch, 3, 20)

    def stream():
        return torch.cuda.current_stream().cuda_stream

    def check(err):
        if err != 0:
            raise RuntimeError(f"warpkit: cudaError {err}")

    print(f"torch {torch.__version__}: warpkit (ctypes shim) vs torch_geometric.utils.softmax and scatter_reduce, same process")
    print("| op      | dist     | elements | heads | segments | x copy | warpkit ms | peer ms | x peer |")
    print("|---------|----------|----------|-------|----------|--------|------------|---------|--------|")
    rows_out = []
    maxn = 1 << 26
    x_all = torch.rand(maxn, device="cuda") * 8 - 4
    y_all = torch.empty(maxn + maxn // 16, device="cuda")  # a result a segment: mean 1 has more segments than rows
    cpy_src = torch.empty(3 * maxn * 4, dtype=torch.uint8, device="cuda")
    cpy_dst = torch.empty_like(cpy_src)
    for n in (1 << 24, 1 << 26):
        for d, dist in enumerate(DISTS):
            for heads in (0, 1, 4, 8, 16):
                if heads >= 8 and dist not in ("mean32", "powerlaw"):
                    continue
                h = heads or 1
                rows = n // h
                off_np = lengths_for(np, d, rows)
                segs = len(off_np) - 1
                ptr = torch.from_numpy(off_np).cuda()
                lens = ptr[1:] - ptr[:-1]
                index = torch.repeat_interleave(torch.arange(segs, device="cuda"), lens)
                x = x_all[: rows * h].view(rows, h) if heads else x_all[:rows]
                y = y_all[: rows * h]
                ops = ["softmax"] if heads else ["sum", "max"]
                for op in ops:
                    size = ctypes.c_size_t(0)
                    if op == "softmax":
                        call = lambda w, s: lib.wk_segment_softmax(x.data_ptr(), y.data_ptr(), rows, ptr.data_ptr(), segs, h, 0,  # noqa: E731
                                                                   w, ctypes.byref(s), stream())
                    else:
                        code = 0 if op == "sum" else 1
                        call = lambda w, s: lib.wk_segment_reduce(code, x.data_ptr(), y.data_ptr(), rows, ptr.data_ptr(), segs,  # noqa: E731
                                                                  w, ctypes.byref(s), stream())
                    check(call(None, size))
                    ws = torch.empty(max(size.value, 1), dtype=torch.uint8, device="cuda")
                    ms_wk = median_ms(lambda: check(call(ws.data_ptr(), size)))
                    if op == "softmax":
                        peer = (lambda: pyg_softmax(x, ptr=ptr, dim=0)) if pyg_softmax is not None else None
                        nbytes = 8 * n + 8 * (segs + 1)
                    else:
                        red = "sum" if op == "sum" else "amax"
                        dst = torch.zeros(segs, device="cuda")
                        peer = lambda: dst.scatter_reduce_(0, index, x, red, include_self=False)  # noqa: E731
                        nbytes = 4 * n + 4 * segs + 8 * (segs + 1)
                    ms_peer = median_ms(peer) if peer is not None else float("nan")
                    half = nbytes // 2
                    ms_copy = median_ms(lambda: cpy_dst[:half].copy_(cpy_src[:half]))
                    xp = ms_peer / ms_wk
                    print(f"| {op:7} | {dist:8} | 2^{n.bit_length() - 1:<6} | {h:5d} | {segs:8d} | {ms_copy / ms_wk:5.2f}x | "
                          f"{ms_wk:10.4f} | {ms_peer:7.4f} | {xp:5.2f}x |")
                    rows_out.append((op, dist, n, h, segs, nbytes, ms_copy, ms_wk, ms_peer, xp))
                del ptr, lens, index
    with open(out, "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["op", "dist", "elements", "heads", "segments", "bytes", "copy_ms", "warpkit_ms", "peer_ms", "peer_over_warpkit"])
        wr.writerows(rows_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
