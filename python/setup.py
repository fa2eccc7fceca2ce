"""Builds warpkit's PyTorch extension ahead of time: pip install --no-build-isolation ./python
(torch with CUDA must already be installed: the extension compiles against it).

warpkit's headers come from, in order: $WARPKIT_INCLUDE, the checkout this file sits in (../include),
or an installed warpkit (`pkg-config --cflags warpkit`). Targets: $TORCH_CUDA_ARCH_LIST when set,
else 8.0 and 9.0 (sm_80, sm_90). $MAX_JOBS bounds the parallel nvcc processes (torch's rule)."""
import glob
import os
import shutil
import subprocess
import sys

from setuptools import setup

here = os.path.dirname(os.path.abspath(__file__))


def fail(msg):
    sys.exit(f"warpkit setup.py: {msg}")


def include_dir():
    """The directory holding warpkit/version.cuh."""
    candidates = []
    if os.environ.get("WARPKIT_INCLUDE"):
        candidates.append(os.environ["WARPKIT_INCLUDE"])
    candidates.append(os.path.join(os.path.dirname(here), "include"))
    if shutil.which("pkg-config"):
        try:
            flags = subprocess.run(["pkg-config", "--cflags-only-I", "warpkit"], capture_output=True, text=True,
                                   check=True).stdout.split()
            candidates += [f[2:] for f in flags if f.startswith("-I")]
        except subprocess.CalledProcessError:
            pass
    for d in candidates:
        if os.path.exists(os.path.join(d, "warpkit", "version.cuh")):
            return d
    fail("warpkit's headers not found (looked in " + ", ".join(candidates) +
         "): set WARPKIT_INCLUDE to the directory holding warpkit/, or install warpkit (make install)")


def version(include):
    vals = {}
    with open(os.path.join(include, "warpkit", "version.cuh")) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[0] == "#define" and parts[1].startswith("WARPKIT_VERSION_"):
                vals[parts[1]] = parts[2]
    return f"{vals['WARPKIT_VERSION_MAJOR']}.{vals['WARPKIT_VERSION_MINOR']}.{vals['WARPKIT_VERSION_PATCH']}"


def extension(include):
    try:
        import torch
        from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension
    except ImportError:
        fail("torch is not importable: install torch (a CUDA build) first, then "
             "pip install --no-build-isolation ./python with the pip of that Python "
             "(python3 -m pip install --no-build-isolation ./python)")
    if torch.version.cuda is None:
        fail(f"torch {torch.__version__} is a CPU-only build: the extension needs a CUDA build of torch")
    nvcc = os.path.join(CUDA_HOME, "bin", "nvcc") if CUDA_HOME else None
    if nvcc is None or not os.path.exists(nvcc):
        fail("no CUDA compiler found (nvcc): set CUDA_HOME to the CUDA toolkit (12.x or 13.x) or put nvcc on PATH")
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "8.0;9.0")
    sources = sorted(glob.glob(os.path.join("csrc", "*.cu"))) + sorted(glob.glob(os.path.join("csrc", "*.cpp")))
    # The C++ standard is torch's (C++17 or newer, as its headers need); warpkit's headers take either.
    ext = CUDAExtension("warpkit._C", sources, include_dirs=[include],
                        extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3"]})
    return ext, BuildExtension


include = include_dir()
ext, build = extension(include)

setup(
    name="warpkit",
    version=version(include),
    description="warpkit's row and segment operators for PyTorch tensors, with autograd and torch.compile support",
    license="Apache-2.0",
    packages=["warpkit"],
    python_requires=">=3.9",
    ext_modules=[ext],
    cmdclass={"build_ext": build},
)
