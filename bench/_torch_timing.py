"""What the torch peer scripts (bench/torch_*.py; bench/run.sh runs those, not this one) share: their
start (the CSV path, torch, the warpkit shim, or a clean skip), the timing of bench/bench.cuh (CUDA
events around each call, a GPU spin before each start event so the host's launch latency stays out of
the interval, the median of the timed calls), and dynamo limits high enough that every static shape
gets its own compiled graph."""
import os
import sys


def start(name):
    """The CSV path (argv[1], else build/bench/<name>.csv) and the torch module; torch is None after
    printing why the script skips (torch not importable, no CUDA device)."""
    out = sys.argv[1] if len(sys.argv) > 1 else f"build/bench/{name}.csv"
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means "no torch here"
        print(f"{name}: skipped: torch not importable ({type(e).__name__})")
        return out, None
    if not torch.cuda.is_available():
        print(f"{name}: skipped: no CUDA device")
        return out, None
    return out, torch


def load_shim(name, out, lib):
    """The ctypes handle of the warpkit shim `lib`, built by `make bench` next to the CSV path out;
    None after printing that the script skips when it is not built."""
    import ctypes

    so = os.path.join(os.path.dirname(out) or ".", lib)
    if not os.path.exists(so):
        print(f"{name}: skipped: {so} not built (make bench builds it)")
        return None
    return ctypes.CDLL(so)


def load_warpkit(name, torch):
    """The warpkit package (python/, installed with its compiled extension), or None after printing
    why the script skips."""
    try:
        import warpkit

        warpkit.softmax(torch.zeros(1, 1, device="cuda"))
        return warpkit
    except Exception as e:  # noqa: BLE001 - the package or its extension missing: a clean skip
        print(f"{name}: skipped: warpkit not usable ({type(e).__name__}: {e}); "
              "pip install --no-build-isolation ./python")
        return None


def start_warpkit(name):
    """start(name) with the warpkit package too: (out, torch, warpkit); torch is None after printing
    why the script skips."""
    out, torch = start(name)
    warpkit = load_warpkit(name, torch) if torch is not None else None
    return out, (torch if warpkit is not None else None), warpkit


def median_ms(torch, fn, warmup=5, reps=30):
    """Median milliseconds of fn() over reps timed calls after warmup untimed ones."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    spin = getattr(torch.cuda, "_sleep", None)
    times = []
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


def timer(torch, warmup=5, reps=30):
    """median_ms with torch and the call counts bound: timer(torch)(fn) is median_ms(torch, fn)."""
    return lambda fn: median_ms(torch, fn, warmup, reps)


def allow_many_shapes(torch):
    """One compiled graph per static shape: without these limits dynamo stops recompiling after 8
    shapes and runs the rest eagerly."""
    for name in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit", "accumulated_recompile_limit"):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, 10000)
