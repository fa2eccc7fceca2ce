"""Timing helpers shared by the torch peer scripts (bench/torch_*.py; bench/run.sh runs those, not
this one), as bench/bench.cuh's:
CUDA events around each call, a GPU spin before each start event so the host's launch latency stays
out of the interval, the median of the timed calls; and dynamo limits high enough that every static
shape gets its own compiled graph."""


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


def allow_many_shapes(torch):
    """One compiled graph per static shape: without these limits dynamo stops recompiling after 8
    shapes and runs the rest eagerly."""
    for name in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit", "accumulated_recompile_limit"):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, 10000)
