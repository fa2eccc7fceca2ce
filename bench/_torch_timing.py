"""What the torch peer scripts (bench/torch_*.py; bench/run.sh runs those, not this one) share: their
start (the CSV path, torch, the warpkit shim, or a clean skip), the timing of bench/bench.cuh (CUDA
events around each call, a GPU spin before each start event so the host's launch latency stays out of
the interval, the median of the timed calls), the same timing of a call captured in a CUDA graph (device time
without the host's launch cost), the host's own time a call, and dynamo limits high enough that
every static shape gets its own compiled graph."""
import os
import sys
import time


def start(name):
    """The CSV path (argv[1] unless it is an option, else build/bench/<name>.csv) and the torch
    module; torch is None after printing why the script skips (torch not importable, no CUDA device)."""
    given = len(sys.argv) > 1 and not sys.argv[1].startswith("--")
    out = sys.argv[1] if given else f"build/bench/{name}.csv"
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
    return _spin_and_time(torch, fn, reps)


def _spin_and_time(torch, fn, reps):
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


def graph_ms(torch, fn, warmup=3, reps=30):
    """(ms, True): the median milliseconds of replays of fn captured in a CUDA graph (warmed up on a
    side stream first, as torch.cuda.graphs documents; CUDA events, a GPU spin before each start), so
    the interval holds the kernels alone whatever fn's host cost. (median_ms(fn), False) when fn
    cannot be captured. The graph and its memory pool are freed before returning."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            fn()
    except Exception as e:  # noqa: BLE001 - anything capture refuses: time it the plain way
        print(f"  .. not captured in a graph: {type(e).__name__}: {str(e).splitlines()[0][:160]}", file=sys.stderr)
        torch.cuda.synchronize()
        return median_ms(torch, fn, warmup, reps), False
    g.replay()
    torch.cuda.synchronize()
    ms = _spin_and_time(torch, g.replay, reps)
    del g
    torch.cuda.synchronize()
    return ms, True


def host_us(torch, fn, calls=10, reps=11):
    """The host's microseconds a call of fn (enqueue, dispatch, Python): time.perf_counter around
    `calls` back-to-back calls with no synchronisation between them, the median over reps batches
    (a synchronisation after each batch keeps the launch queue short, so no call waits on the GPU)."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls)
        torch.cuda.synchronize()
    times.sort()
    return 1e6 * times[len(times) // 2]


def timer(torch, warmup=5, reps=30):
    """median_ms with torch and the call counts bound: timer(torch)(fn) is median_ms(torch, fn)."""
    return lambda fn: median_ms(torch, fn, warmup, reps)


def allow_many_shapes(torch):
    """One compiled graph per static shape: without these limits dynamo stops recompiling after 8
    shapes and runs the rest eagerly."""
    for name in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit", "accumulated_recompile_limit"):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, 10000)
