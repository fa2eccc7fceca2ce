"""Builds warpkit's PyTorch extension: pip install --no-build-isolation ./python
(torch must already be installed: the extension compiles against it)."""
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

here = os.path.dirname(os.path.abspath(__file__))
include = os.path.join(os.path.dirname(here), "include")


def version():
    vals = {}
    with open(os.path.join(include, "warpkit", "version.cuh")) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[0] == "#define" and parts[1].startswith("WARPKIT_VERSION_"):
                vals[parts[1]] = parts[2]
    return f"{vals['WARPKIT_VERSION_MAJOR']}.{vals['WARPKIT_VERSION_MINOR']}.{vals['WARPKIT_VERSION_PATCH']}"


setup(
    name="warpkit",
    version=version(),
    description="warpkit's row softmax for PyTorch tensors",
    license="Apache-2.0",
    packages=["warpkit"],
    ext_modules=[CUDAExtension("warpkit._C", ["csrc/softmax.cu"], include_dirs=[include],
                               extra_compile_args={"cxx": ["-O3", "-std=c++17"], "nvcc": ["-O3", "-std=c++17"]})],
    cmdclass={"build_ext": BuildExtension},
)
