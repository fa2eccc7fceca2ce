// Shared by tests/block/reduce.cu, tests/block/scan.cu, tests/warp/reduce_batched.cu and
// tests/welford.cu: the block sizes and shapes they sweep, the order-checking operator, a logging
// EXPECT that counts failures, and the run-time sweep.
#pragma once
#include "common.cuh"

/// Block sizes of the issue's list (1-D, run-time or compile-time size).
static const int kSizes[] = {1, 2, 31, 32, 33, 63, 64, 65, 96, 100, 127, 128, 129, 255, 256, 257,
                             384, 500, 511, 512, 513, 640, 1000, 1023, 1024};

/// 2-D and 3-D block shapes, with partial last warps.
static const dim3 kShapes[] = {dim3(8, 4, 1), dim3(10, 10, 1), dim3(7, 3, 5), dim3(3, 11, 1),
                               dim3(16, 16, 2), dim3(32, 8, 4), dim3(5, 5, 5), dim3(1, 1, 1), dim3(1, 31, 1)};

/// Non-commutative generic operator: combining two ranges is valid only left-then-right adjacent.
struct Seg { int first, last, ok; };
struct SegOp {
    __host__ __device__ Seg operator()(Seg a, Seg b) const {
        return Seg{a.first, b.last, a.ok && b.ok && a.last + 1 == b.first};
    }
};

static bool same(double got, double want) { return isnan(want) ? isnan(got) : got == want; }

/// Counts a failure and logs the first 12; a test asserts g_failures == 0 at its end.
static int g_failures;
#define EXPECT(cond, ...)                                                                 \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            if (g_failures++ < 12) cr_log_error(__VA_ARGS__);                             \
        }                                                                                 \
    } while (0)

/// Runs run(block, grid, iters) for every size of kSizes (1-D) and every shape of kShapes, at
/// run-time block size; WARPKIT_QUICK keeps a few sizes and the 3-D shapes only.
template <typename Run> static void sweep_block_shapes(Run run, int sizeGrid, int sizeIters, int shapeIters) {
    const bool quick = wk_quick();
    for (int n : kSizes) {
        if (quick && n != 1 && n != 33 && n != 100 && n != 1024) continue;
        run(dim3(n), sizeGrid, quick ? 2 : sizeIters);
    }
    for (dim3 s : kShapes) {
        if (quick && s.z == 1) continue;
        run(s, 2, shapeIters);
    }
}

/// Calls f(T()) once for each element type of the named block reductions and scans.
template <typename F> static void for_each_block_type(F f) {
    f(int()); f(unsigned()); f((long long)0); f((unsigned long long)0);
    f(float()); f(double()); f(__half()); f(__nv_bfloat16());
}
