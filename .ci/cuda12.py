#!/usr/bin/env python3
"""CUDA 12 check of warpkit's device code, without a CUDA 12 nvcc and without a GPU.

NVRTC and ptxas of CUDA 12 releases come from PyPI (nvidia-cuda-nvrtc-cu12, nvidia-cuda-nvcc-cu12
for ptxas, nvidia-cuda-runtime-cu12 for the headers), into BUILD/cuda12/<release>. For each
release and target of MATRIX below it compiles, with NVRTC, to PTX, then assembles with ptxas:
  * one translation unit that includes every public header (include/warpkit.cuh and
    include/warpkit/**.cuh but detail/), so every header's code is parsed and every non-template
    function (host launch code included, see PRELUDE) is compiled;
  * every tests/ptx/*.cu, at every target (whatever its // @arch line): their kernels instantiate
    the warp, block and cluster primitives and the device layer's cluster and staged kernels.
And for CUDA 12.0 at sm_90: the build must stop at detail/config.cuh's #error naming CUDA 12.1.
Not covered: nvcc's host pass (host code is compiled as device code here, with the runtime's
host-only calls stubbed), the Criterion tests, samples and benchmarks (they need nvcc).

Usage: python3 .ci/cuda12.py            (BUILD=dir to move the downloads; default build)
Exit 0 when everything passes, or with a SKIP line when PyPI cannot be reached.
"""
import ctypes
import glob
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))

# release -> wheel versions (nvrtc, nvcc for ptxas, runtime for the headers) of that release.
RELEASES = {
    "12.0": ("12.0.76", "12.0.76", "12.0.107"),
    "12.1": ("12.1.105", "12.1.105", "12.1.105"),
}
# (release, target, expect): expect is "ok", "error:TEXT" (the build must stop with TEXT in its
# log) or "xfail:TEXT:WHY", a known failure: a unit whose log holds TEXT is reported and does not
# fail the check; when every unit compiles, the check fails and says to drop the xfail.
MATRIX = [
    ("12.0", "sm_75", "ok"),
    ("12.0", "sm_80", "ok"),
    ("12.0", "sm_90", "error:need CUDA 12.1 or newer"),
    ("12.1", "sm_75", "ok"),
    ("12.1", "sm_80", "ok"),
    ("12.1", "sm_90", "ok"),
]

# NVRTC compiles device code only: the host compiler's builtins that warpkit's host-and-device
# helpers and host launch code use are given device meanings, and the runtime's host-only calls
# are stubbed, so that the code around them is still compiled.
PRELUDE = r"""
#define __builtin_huge_valf() __int_as_float(0x7f800000)
#define __builtin_huge_val() __longlong_as_double(0x7ff0000000000000LL)
#define __builtin_nanf(s) __int_as_float(0x7fffffff)
#define __builtin_nan(s) __longlong_as_double(0x7fffffffffffffffLL)
#define __builtin_memcpy memcpy
#define __ATOMIC_RELAXED 0
#define __ATOMIC_ACQUIRE 2
#define __ATOMIC_RELEASE 3
#define __ATOMIC_SEQ_CST 5
#define __atomic_exchange_n(p, v, o) (*(p) = (v))
#define __atomic_load_n(p, o) (*(p))
#define __atomic_store_n(p, v, o) ((void)(*(p) = (v)))
#define __atomic_add_fetch(p, v, o) (*(p) += (v))
template <typename... P, typename... A>
__device__ cudaError_t cudaLaunchKernelEx(const cudaLaunchConfig_t*, void (*)(P...), A...) { return cudaSuccess; }
template <typename K> __device__ cudaError_t wkStubOccupancy(int* n, K, int, size_t) { *n = 1; return cudaSuccess; }
#define cudaOccupancyMaxActiveBlocksPerMultiprocessor wkStubOccupancy
"""


def fetch(release):
    """Installs the release's wheels under BUILD/cuda12/<release>; returns the folder or None."""
    nvrtc, nvcc, runtime = RELEASES[release]
    dest = os.path.join(BUILD, "cuda12", release)
    have_nvrtc = glob.glob(dest + "/nvidia/cuda_nvrtc/lib/libnvrtc.so.12*")
    if have_nvrtc and os.path.exists(dest + "/nvidia/cuda_nvcc/bin/ptxas"):
        return dest
    cmd = [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
           "--timeout", "20", "--retries", "1", "--target", dest,
           "nvidia-cuda-nvrtc-cu12==" + nvrtc, "nvidia-cuda-nvcc-cu12==" + nvcc, "nvidia-cuda-runtime-cu12==" + runtime]
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return None
    if r.returncode != 0:
        print("\n".join(r.stdout.strip().splitlines()[-3:]))
        return None
    return dest


class Nvrtc:
    def __init__(self, root):
        self.root = root
        self.lib = ctypes.CDLL(sorted(glob.glob(root + "/nvidia/cuda_nvrtc/lib/libnvrtc.so.12*"))[0])
        major, minor = ctypes.c_int(), ctypes.c_int()
        self.lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
        self.version = "%d.%d" % (major.value, minor.value)
        self.stub = os.path.join(BUILD, "cuda12", "stub")  # an empty stdio.h (device printf is built in)
        os.makedirs(self.stub, exist_ok=True)
        open(os.path.join(self.stub, "stdio.h"), "w").close()

    def compile(self, name, source, arch):
        """Returns (ok, log, ptx)."""
        lib = self.lib
        prog = ctypes.c_void_p()
        src = (PRELUDE + '#line 1 "' + name + '"\n' + source).encode()
        if lib.nvrtcCreateProgram(ctypes.byref(prog), src, name.encode(), 0, None, None) != 0:
            return False, "nvrtcCreateProgram failed", b""
        opts = ["-std=c++17", "-arch=compute_" + arch[3:], "-default-device", "-I" + os.path.join(ROOT, "include"),
                "-I" + self.root + "/nvidia/cuda_runtime/include", "-I" + self.stub]
        arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
        rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
        n = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        log = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetProgramLog(prog, log)
        ptx = b""
        if rc == 0:
            lib.nvrtcGetPTXSize(prog, ctypes.byref(n))
            buf = ctypes.create_string_buffer(n.value)
            lib.nvrtcGetPTX(prog, buf)
            ptx = buf.value
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
        return rc == 0, log.value.decode(errors="replace"), ptx

    def assemble(self, ptx, arch, out):
        with open(out + ".ptx", "wb") as f:
            f.write(ptx)
        ptxas = self.root + "/nvidia/cuda_nvcc/bin/ptxas"
        r = subprocess.run([ptxas, "-arch=" + arch, out + ".ptx", "-o", out + ".cubin"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return r.returncode == 0, r.stdout


def units(arch):
    """(name, source) of every translation unit checked at arch."""
    inc = os.path.join(ROOT, "include")
    headers = sorted(os.path.relpath(p, inc) for p in glob.glob(inc + "/**/*.cuh", recursive=True)
                     if "/detail/" not in p)
    yield "all_headers.cu", "".join("#include <%s>\n" % h for h in headers)
    for path in sorted(glob.glob(os.path.join(ROOT, "tests/ptx/*.cu"))):
        yield "tests/ptx/" + os.path.basename(path), open(path).read()


def main():
    t0 = time.time()
    passed, failed, xfailed = 0, [], 0
    compilers = {}
    for release in sorted({r for r, _, _ in MATRIX}):
        root = fetch(release)
        if root is None:
            print("cuda12: SKIP: could not install CUDA %s's NVRTC and ptxas from PyPI (no network?)" % release)
            return 0
        compilers[release] = Nvrtc(root)
    out_dir = os.path.join(BUILD, "cuda12", "out")
    os.makedirs(out_dir, exist_ok=True)
    for release, arch, expect in MATRIX:
        nv = compilers[release]
        row_xfails = 0
        for name, source in units(arch):
            what = "CUDA %s (NVRTC %s) %s %s" % (release, nv.version, arch, name)
            ok, log, ptx = nv.compile(name, source, arch)
            if ok:
                out = os.path.join(out_dir, "%s_%s_%s" % (release, arch, os.path.basename(name)))
                ok, log = nv.assemble(ptx, arch, out)
            if expect.startswith("error:"):
                if not ok and expect[6:] in log:
                    passed += 1
                    print("  PASS  %s: stops with \"%s\"" % (what, expect[6:]))
                else:
                    failed.append(what)
                    print("  FAIL  %s: should stop with \"%s\"\n%s" % (what, expect[6:], log.strip()[:600]))
                break  # one unit shows the stop
            if ok:
                passed += 1
                print("  PASS  %s" % what)
            elif expect.startswith("xfail:") and expect.split(":")[1] in log:
                xfailed += 1
                row_xfails += 1
                print("  XFAIL %s%s" % (what, "" if row_xfails > 1 else ": " + expect.split(":", 2)[2]))
            else:
                failed.append(what)
                errors = [l for l in log.splitlines() if "error" in l][:5]
                print("  FAIL  %s\n        %s" % (what, "\n        ".join(errors or log.strip().splitlines()[:5])))
        if expect.startswith("xfail:") and row_xfails == 0:
            failed.append("CUDA %s %s" % (release, arch))
            print("  FAIL  CUDA %s %s: everything compiled, but MATRIX expects a failure: drop its xfail"
                  % (release, arch))
    print("cuda12: %d passed, %d failed, %d known failures (%.0f s)" % (passed, len(failed), xfailed, time.time() - t0))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
