#!/usr/bin/env python3
"""warpkit's norm backward calls against torch's, in one process, on bench/norm_backward.cu's shapes
(rows x cols = 8192 x 768, 8192 x 1024, 16384 x 4096, 4096 x 8192, 1024 x 32768, 256 x 65536, 64 x 262144;
fp32 and bf16), each beside a copy of the same bytes (torch.add(dy, x, out=dx): reads dy and x, writes
dx) timed in the same run:
  layer_norm_bwd  warpkit.rowLayerNormBackward (dx, dw, db)
                  vs torch.ops.aten.native_layer_norm_backward, and torch.compile of the formula
  rms_norm_bwd    warpkit.rowRmsNormBackward (dx, dw)
                  vs torch.ops.aten._fused_rms_norm_backward (else autograd of F.rms_norm), and
                  torch.compile of the formula
The statistics (mean, rstd) come from torch's forward (native_layer_norm, _fused_rms_norm) and
feed both sides. warpkit is called through build/bench/libwarpkit_norm_backward.so
(bench/norm_backward_shim.cu, built by `make bench`) with ctypes, on the same tensors and torch's
current stream, into preallocated outputs. x copy = warpkit's bandwidth over the copy's;
x eager / x compile = the peer's time over warpkit's (above 1: warpkit is faster); check = the
largest difference of warpkit's outputs from eager's, relative to the largest magnitude.
Usage: python3 bench/torch_norm_backward.py [out.csv]. Skips cleanly (exit 0) without torch, a GPU
or the shim.
"""
import ctypes
import csv
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _torch_timing import allow_many_shapes, load_shim, start, timer  # noqa: E402

SHAPES = [(8192, 768), (8192, 1024), (16384, 4096), (4096, 8192), (1024, 32768), (256, 65536), (64, 262144)]


def ln_formula(dy, x, w, mean, rstd):
    """LayerNorm backward in float from the forward's statistics (mean, rstd: rows x 1)."""
    xhat = (x.float() - mean) * rstd
    g = dy.float() * w.float()
    dx = rstd * (g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True))
    return dx.to(x.dtype), (dy.float() * xhat).sum(0).to(w.dtype), dy.float().sum(0).to(w.dtype)


def rms_formula(dy, x, w, rstd):
    """RMSNorm backward in float from the forward's rstd (rows x 1)."""
    xhat = x.float() * rstd
    g = dy.float() * w.float()
    dx = rstd * (g - xhat * (g * xhat).mean(-1, keepdim=True))
    return dx.to(x.dtype), (dy.float() * xhat).sum(0).to(w.dtype)


def main():
    out, torch = start("torch_norm_backward")
    if torch is None:
        return 0
    import torch.nn.functional as F

    lib = load_shim("torch_norm_backward", out, "libwarpkit_norm_backward.so")
    if lib is None:
        return 0
    vp, ll, ci = ctypes.c_void_p, ctypes.c_longlong, ctypes.c_int
    sz = ctypes.POINTER(ctypes.c_size_t)
    lib.wk_layer_norm_backward.argtypes = [ci, vp, vp, vp, vp, vp, vp, vp, vp, ll, ci, vp, sz, vp]
    lib.wk_rms_norm_backward.argtypes = [ci, vp, vp, vp, vp, vp, vp, ll, ci, vp, sz, vp]
    lib.wk_layer_norm_backward.restype = lib.wk_rms_norm_backward.restype = ci
    codes = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2}
    aten = torch.ops.aten
    fused_rms = hasattr(aten, "_fused_rms_norm") and hasattr(aten, "_fused_rms_norm_backward")

    def check(err, name):
        if err != 0:
            raise RuntimeError(f"{name}: cudaError {err}")

    def stream():
        return torch.cuda.current_stream().cuda_stream

    allow_many_shapes(torch)
    median_ms = timer(torch)
    ln_compiled = torch.compile(ln_formula, dynamic=False)
    rms_compiled = torch.compile(rms_formula, dynamic=False)

    def rel_diff(got, want):
        return ((got.float() - want.float()).abs().max() / want.float().abs().max().clamp_min(1e-30)).item()

    print(f"torch {torch.__version__}: warpkit (ctypes shim) vs torch eager ({'fused' if fused_rms else 'autograd'} "
          "rms_norm) and torch.compile of the formula; x copy = warpkit TB/s over a copy's of dy, x, dx; "
          "x eager / x compile = peer time / warpkit time")
    print("| op             | type |  rows |   cols | copy us | warpkit us | x copy | eager us | x eager | "
          "compile us | x compile |   check |")
    print("|----------------|------|-------|--------|---------|------------|--------|----------|---------|"
          "------------|-----------|---------|")
    rows_out, compile_s = [], 0.0
    for tname, dt in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        for op in ("layer_norm_bwd", "rms_norm_bwd"):
            rms = op == "rms_norm_bwd"
            for rows, cols in SHAPES:
                x = torch.randn(rows, cols, device="cuda").mul_(2).to(dt)
                dy = torch.randn(rows, cols, device="cuda").to(dt)
                w = torch.rand(cols, device="cuda").add_(0.5).to(dt)
                b = torch.rand(cols, device="cuda").sub_(0.5).to(dt)
                dx, dw, db = torch.empty_like(x), torch.empty_like(w), torch.empty_like(w)
                cdx = torch.empty_like(x)
                if rms:
                    if fused_rms:
                        _, rstd = aten._fused_rms_norm(x, [cols], w, 1e-6)
                    else:
                        rstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6)
                    mean = None
                else:
                    _, mean, rstd = aten.native_layer_norm(x, [cols], w, b, 1e-5)
                rstd32 = rstd.float().contiguous()
                mean32 = mean.float().contiguous() if mean is not None else None
                code, nbytes = codes[dt], ctypes.c_size_t(0)
                if rms:
                    def wk(ws_ptr):
                        return lib.wk_rms_norm_backward(code, dy.data_ptr(), x.data_ptr(), w.data_ptr(),
                                                        rstd32.data_ptr(), dx.data_ptr(), dw.data_ptr(), rows, cols,
                                                        ws_ptr, ctypes.byref(nbytes), stream())
                    if fused_rms:
                        eager = lambda: aten._fused_rms_norm_backward(dy, x, [cols], rstd, w, [True, True])  # noqa: E731
                    else:
                        xg, wg = x.detach().requires_grad_(True), w.detach().requires_grad_(True)
                        y = F.rms_norm(xg, (cols,), wg, 1e-6)
                        eager = lambda: torch.autograd.grad(y, (xg, wg), dy, retain_graph=True)  # noqa: E731
                    comp = lambda: rms_compiled(dy, x, w, rstd32.view(rows, 1))  # noqa: E731
                else:
                    def wk(ws_ptr):
                        return lib.wk_layer_norm_backward(code, dy.data_ptr(), x.data_ptr(), w.data_ptr(),
                                                          mean32.data_ptr(), rstd32.data_ptr(), dx.data_ptr(),
                                                          dw.data_ptr(), db.data_ptr(), rows, cols, ws_ptr,
                                                          ctypes.byref(nbytes), stream())
                    eager = lambda: aten.native_layer_norm_backward(  # noqa: E731
                        dy, x, [cols], mean, rstd, w, b, [True, True, True])
                    comp = lambda: ln_compiled(dy, x, w, mean32.view(rows, 1), rstd32.view(rows, 1))  # noqa: E731
                check(wk(None), op)  # the size query (two-call rule)
                ws = torch.empty(max(nbytes.value, 1), dtype=torch.uint8, device="cuda")
                run_wk = lambda: check(wk(ws.data_ptr()), op)  # noqa: E731
                t0 = time.time()
                comp()  # compile outside the timing
                torch.cuda.synchronize()
                compile_s += time.time() - t0
                es = x.element_size()
                bytes_ = 3 * rows * cols * es + cols * es * (2 if rms else 3) + rows * (4 if rms else 8)
                ms_copy = median_ms(lambda: torch.add(dy, x, out=cdx))
                ms_wk = median_ms(run_wk)
                ms_e = median_ms(eager)
                ms_c = median_ms(comp)
                run_wk()
                ref = eager()
                diff = max(rel_diff(dx, ref[0]), rel_diff(dw, ref[1]), 0.0 if rms else rel_diff(db, ref[2]))
                x_copy = (bytes_ / ms_wk) / (3 * rows * cols * es / ms_copy)
                print(f"| {op:14} | {tname} | {rows:5d} | {cols:6d} | {ms_copy * 1e3:7.1f} | {ms_wk * 1e3:10.1f} | "
                      f"{x_copy:5.2f}x | {ms_e * 1e3:8.1f} | {ms_e / ms_wk:6.2f}x | {ms_c * 1e3:10.1f} | "
                      f"{ms_c / ms_wk:8.2f}x | {diff:7.1e} |")
                rows_out.append((op, tname, rows, cols, bytes_, ms_copy, ms_wk, ms_e, ms_c, x_copy, ms_e / ms_wk,
                                 ms_c / ms_wk, diff))
                del x, dy, w, b, dx, dw, db, cdx, ws, rstd, rstd32, mean, mean32
                torch.cuda.empty_cache()
    print(f"\ntorch.compile spent {compile_s:.0f} s compiling")
    with open(out, "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["op", "type", "rows", "cols", "bytes", "copy_ms", "warpkit_ms", "eager_ms", "compile_ms",
                     "ratio_copy", "eager_over_warpkit", "compile_over_warpkit", "check"])
        wr.writerows(rows_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
