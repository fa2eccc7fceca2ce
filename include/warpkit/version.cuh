// warpkit/version.cuh: warpkit's version. This header is the one place the number is written:
// CMakeLists.txt, the Makefile's install (warpkit.pc, warpkitConfigVersion.cmake) and
// CHANGELOG.md's newest entry follow it.
// Plain preprocessor macros, no CUDA: host-only C and C++ files may include it too.
//   #if WARPKIT_VERSION >= 200      // 0.2.0 or newer
#pragma once

#define WARPKIT_VERSION_MAJOR 0
#define WARPKIT_VERSION_MINOR 2
#define WARPKIT_VERSION_PATCH 0

/// MAJOR * 10000 + MINOR * 100 + PATCH (0.2.0 is 200), for `#if` comparisons.
#define WARPKIT_VERSION \
    (WARPKIT_VERSION_MAJOR * 10000 + WARPKIT_VERSION_MINOR * 100 + WARPKIT_VERSION_PATCH)
