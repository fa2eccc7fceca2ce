"""pytest: warpkit.softmax / log_softmax against torch on the GPU. Skips where torch or CUDA is
missing. Run: python3 -m pytest python/tests (the extension is JIT-built on first use)."""
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import warpkit  # noqa: E402

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
TOL = {torch.float32: (1e-5, 1e-6), torch.float16: (1e-2, 1e-3), torch.bfloat16: (2e-2, 1e-2)}


def check(got, want, dtype):
    rtol, atol = TOL[dtype]
    assert got.dtype == want.dtype and got.shape == want.shape
    torch.testing.assert_close(got.float(), want.float(), rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (7, 3), (300, 197), (64, 1024), (5, 2049), (3, 50257), (2, 262147), (4, 3, 1000)])
def test_matches_torch(dtype, shape):
    g = torch.Generator(device="cuda").manual_seed(1)
    x = (torch.randn(shape, device="cuda", generator=g) * 4).to(dtype)
    check(warpkit.softmax(x), torch.softmax(x, -1), dtype)
    check(warpkit.log_softmax(x), torch.log_softmax(x, -1), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_strided_and_other_dims(dtype):
    x = (torch.randn(40, 3000, device="cuda") * 3).to(dtype)
    cols = x[:, 5:1006]          # rows 3000 apart, misaligned start: read in place
    check(warpkit.softmax(cols), torch.softmax(cols, -1), dtype)
    t = x.t()                    # softmax dim with stride != 1: made contiguous
    check(warpkit.softmax(t, dim=0), torch.softmax(t, 0), dtype)
    y = (torch.randn(6, 7, 9, device="cuda") * 2).to(dtype)
    for d in (0, 1, 2, -1, -2):
        check(warpkit.softmax(y, dim=d), torch.softmax(y, d), dtype)
        check(warpkit.log_softmax(y, dim=d), torch.log_softmax(y, d), dtype)


def test_special_values():
    x = torch.randn(6, 100, device="cuda")
    x[0, 3] = float("nan")
    x[1, 4] = float("inf")
    x[2, :] = float("-inf")
    x[3, ::2] = float("-inf")
    check(warpkit.softmax(x), torch.softmax(x, -1), torch.float32)
    check(warpkit.log_softmax(x), torch.log_softmax(x, -1), torch.float32)


def test_current_stream():
    x = torch.randn(512, 4096, device="cuda")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        y = warpkit.softmax(x)
    s.synchronize()
    check(y, torch.softmax(x, -1), torch.float32)


def test_errors():
    with pytest.raises(RuntimeError, match="CUDA"):
        warpkit.softmax(torch.randn(3, 4))
    with pytest.raises(TypeError, match="dtype"):
        warpkit.softmax(torch.randn(3, 4, device="cuda").double())
    with pytest.raises(RuntimeError, match="empty"):
        warpkit.softmax(torch.empty(3, 0, device="cuda"))
    with pytest.raises(IndexError):
        warpkit.softmax(torch.randn(3, 4, device="cuda"), dim=2)
