// tests/common.cuh: shared pieces of warpkit's Criterion tests.
//  - WK_REQUIRE_GPU(): skip the test with "no CUDA device" where there is none.
//  - WK_CUDA(call): fail the test on any CUDA error; WK_LAUNCHED(): check the last launch.
//  - wk_rng: seeded splitmix64 (seed from WARPKIT_SEED, default fixed), printed on failure.
//  - wk_alloc / wk_upload / wk_download / wk_poison / wk_workspace: device buffers; poison is 0xA5
//    bytes, a workspace 0x5C bytes; wk_workspace_any_address: a call's same bits at odd workspaces.
//  - wk_to_double / wk_from_double: element conversions for the double-precision references.
//  - wk_close: NaN matches NaN, inf matches the same inf, else |got - want| <= tol * (1 + |want|).
//  - wk_quick(): true under WARPKIT_QUICK=1 (make sanitize), for smaller sweeps; wk_thin(i, k):
//    under WARPKIT_QUICK=2 (racecheck), keep every k-th case of a sweep only.
//  - wk_two_threads(cases, twoDevices, run): two host threads at once, each on its own stream.
//  - wk_tally / wk_tally_check / WK_TALLY_EXPECT: a sweep's checks, failures and first failure.
//  - wk_cluster_config(grid, block, clusterBlocks, attr): a cudaLaunchKernelEx configuration.
#pragma once

#include <criterion/criterion.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <thread>
#include <vector>

#define WK_CUDA(call)                                                                     \
    do {                                                                                  \
        cudaError_t wk_err_ = (call);                                                     \
        cr_assert(wk_err_ == cudaSuccess, "%s failed: %s", #call, cudaGetErrorString(wk_err_)); \
    } while (0)

#define WK_LAUNCHED()                                                                     \
    do {                                                                                  \
        WK_CUDA(cudaGetLastError());                                                      \
        WK_CUDA(cudaDeviceSynchronize());                                                 \
    } while (0)

static inline bool wk_has_gpu(void) {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

#define WK_REQUIRE_GPU()                                                                  \
    do {                                                                                  \
        if (!wk_has_gpu()) cr_skip_test("no CUDA device");                                \
    } while (0)

/// WARPKIT_QUICK as a level: 0 when unset, empty or "0"; 2 or more as written; else 1.
static inline int wk_quick_level(void) {
    const char* q = getenv("WARPKIT_QUICK");
    if (!q || !*q || *q == '0') return 0;
    return atoi(q) >= 2 ? atoi(q) : 1;
}
static inline bool wk_quick(void) { return wk_quick_level() >= 1; }
/// WARPKIT_QUICK=2 (make sanitize's racecheck runs, the slowest tool): true for all but every
/// `keep`-th case `i` of a sweep. Shared-memory hazards depend on the kernel and its launch shape,
/// not on the data or the exact length, so those runs keep every kernel but fewer column counts
/// and data patterns.
static inline bool wk_thin(int i, int keep) { return wk_quick_level() >= 2 && i % keep != 0; }

// ---- random numbers ------------------------------------------------------------------------
typedef struct { uint64_t s; } wk_rng;

static inline uint64_t wk_seed(void) {
    const char* s = getenv("WARPKIT_SEED");
    return s ? strtoull(s, NULL, 0) : 0x5eed2026ull;
}
static inline wk_rng wk_rng_make(uint64_t stream) {
    wk_rng r = {wk_seed() ^ (stream * 0x9e3779b97f4a7c15ull)};
    return r;
}
static inline uint64_t wk_next(wk_rng* r) {
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
/// Uniform double in [lo, hi).
static inline double wk_uniform(wk_rng* r, double lo, double hi) {
    return lo + (hi - lo) * (double)(wk_next(r) >> 11) * (1.0 / 9007199254740992.0);
}
/// Uniform integer in [lo, hi].
static inline long long wk_int(wk_rng* r, long long lo, long long hi) {
    return lo + (long long)(wk_next(r) % (uint64_t)(hi - lo + 1));
}

// ---- element conversions ---------------------------------------------------------------------
template <typename T> static inline double wk_to_double(T v) { return (double)v; }
template <> inline double wk_to_double<__half>(__half v) { return (double)__half2float(v); }
template <> inline double wk_to_double<__nv_bfloat16>(__nv_bfloat16 v) { return (double)__bfloat162float(v); }
template <typename T> static inline T wk_from_double(double v) { return (T)v; }
template <> inline __half wk_from_double<__half>(double v) { return __float2half_rn((float)v); }
template <> inline __nv_bfloat16 wk_from_double<__nv_bfloat16>(double v) { return __float2bfloat16_rn((float)v); }

template <typename T> static inline const char* wk_type_name(void);
#define WK_TYPE_NAME(T) template <> inline const char* wk_type_name<T>(void) { return #T; }
WK_TYPE_NAME(int) WK_TYPE_NAME(unsigned) WK_TYPE_NAME(long long) WK_TYPE_NAME(unsigned long long)
WK_TYPE_NAME(float) WK_TYPE_NAME(double) WK_TYPE_NAME(__half) WK_TYPE_NAME(__nv_bfloat16)
#undef WK_TYPE_NAME

/// Unit roundoff of T's significand (0 for integers): scale tolerances by it.
template <typename T> static inline double wk_eps(void) { return 0.0; }
template <> inline double wk_eps<float>(void) { return 1.0 / (1 << 23); }
template <> inline double wk_eps<double>(void) { return 1.0 / 4503599627370496.0; }
template <> inline double wk_eps<__half>(void) { return 1.0 / (1 << 10); }
template <> inline double wk_eps<__nv_bfloat16>(void) { return 1.0 / (1 << 7); }

/// Compare one value with its reference.
static inline bool wk_close(double got, double want, double tol) {
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    if (isnan(got) || isinf(got)) return false;
    return fabs(got - want) <= tol * (1.0 + fabs(want));
}

// ---- device buffers --------------------------------------------------------------------------
template <typename T> static inline T* wk_alloc(size_t n) {
    T* p = NULL;
    cudaError_t e = cudaMalloc((void**)&p, (n ? n : 1) * sizeof(T));
    cr_assert(e == cudaSuccess, "cudaMalloc(%zu bytes): %s", n * sizeof(T), cudaGetErrorString(e));
    return p;
}
template <typename T> static inline void wk_upload(T* dst, const T* src, size_t n) {
    WK_CUDA(cudaMemcpy(dst, src, n * sizeof(T), cudaMemcpyHostToDevice));
}
template <typename T> static inline void wk_download(T* dst, const T* src, size_t n) {
    WK_CUDA(cudaMemcpy(dst, src, n * sizeof(T), cudaMemcpyDeviceToHost));
}
/// A device call's workspace of `bytes` bytes, filled with 0x5C bytes: a workspace may hold
/// anything on entry (docs/design.md), and reading it is then defined for compute-sanitizer's
/// initcheck (the arrival words read their old content by design: device/reduce.cuh).
static inline void* wk_workspace(size_t bytes) {
    void* w = wk_alloc<char>(bytes);
    WK_CUDA(cudaMemset(w, 0x5C, bytes ? bytes : 1));
    WK_CUDA(cudaDeviceSynchronize());
    return w;
}

/// Runs call (ws, &bytes) with the workspace at base + shift of a buffer of the queried bytes + 16
/// (cudaMalloc: base 256-byte aligned), shifts 0, 1, 3, 8, 15, the workspace filled with garbage and
/// the outBytes at out poisoned before each: every shift writes the bytes shift 0 wrote. Returns
/// mismatches.
template <typename F>
static inline int wk_workspace_any_address(F call, const void* out, size_t outBytes, const char* what) {
    size_t bytes = 0;
    WK_CUDA(call(nullptr, &bytes));
    unsigned char* raw = wk_alloc<unsigned char>(bytes + 16);
    std::vector<unsigned char> want(outBytes), got(outBytes);
    int bad = 0;
    for (int shift : {0, 1, 3, 8, 15}) {
        WK_CUDA(cudaMemset(const_cast<void*>(out), 0xA5, outBytes));
        WK_CUDA(cudaMemset(raw, shift == 0 ? 0x5C : 0x7B + shift, bytes + 16));
        size_t b = bytes;
        const cudaError_t e = call(raw + shift, &b);
        if (e != cudaSuccess) {
            cr_log_error("%s: workspace at base + %d: %s", what, shift, cudaGetErrorString(e));
            (void)cudaGetLastError();
            ++bad;
            continue;
        }
        WK_LAUNCHED();
        wk_download(shift == 0 ? want.data() : got.data(), (const unsigned char*)out, outBytes);
        if (shift > 0 && memcmp(got.data(), want.data(), outBytes) != 0) {
            size_t at = 0;
            while (at < outBytes && got[at] == want[at]) ++at;
            cr_log_error("%s: workspace at base + %d: byte %zu of %zu differs from base + 0's", what, shift, at,
                         outBytes);
            ++bad;
        }
    }
    WK_CUDA(cudaFree(raw));
    return bad;
}

/// Fill with 0xA5 bytes: a value no correct output holds (a small negative float, a large negative
/// int), so an element the kernel failed to write shows up as a mismatch.
/// Waits for the memset, so that work on any stream (non-blocking ones too) sees the poison.
template <typename T> static inline void wk_poison(T* dev, size_t n) {
    WK_CUDA(cudaMemset(dev, 0xA5, n * sizeof(T)));
    WK_CUDA(cudaDeviceSynchronize());
}

// ---- tallies -----------------------------------------------------------------------------------
/// A sweep's count of checks and of failures, and the first failure's description: pass one through
/// the sweep, call wk_tally_check for every compared value, then WK_TALLY_EXPECT.
typedef struct {
    long checked, bad;
    char first[256];
} wk_tally;

/// Counts one check; the first one with `ok` false writes its description (printf-style) to first.
static inline void wk_tally_check(wk_tally* t, bool ok, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
static inline void wk_tally_check(wk_tally* t, bool ok, const char* fmt, ...) {
    ++t->checked;
    if (ok || t->bad++ > 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->first, sizeof t->first, fmt, ap);
    va_end(ap);
}

/// Expects no failure, and at least one check (a sweep that compared nothing cannot fail).
#define WK_TALLY_EXPECT(t)                                                                       \
    do {                                                                                         \
        cr_expect((t).bad == 0, "%ld of %ld wrong; first: %s", (t).bad, (t).checked, (t).first); \
        cr_expect((t).checked > 0, "nothing was checked");                                       \
    } while (0)

// ---- launches ------------------------------------------------------------------------------------
/// A cudaLaunchKernelEx configuration of `grid` blocks of `block` threads, in clusters of
/// `clusterBlocks` blocks along x (no cluster attribute when clusterBlocks is 0). The attribute is
/// written to *attr, which must live until the launch.
static inline cudaLaunchConfig_t wk_cluster_config(dim3 grid, dim3 block, unsigned clusterBlocks,
                                                   cudaLaunchAttribute* attr) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    if (clusterBlocks > 0) {
        attr->id = cudaLaunchAttributeClusterDimension;
        attr->val.clusterDim.x = clusterBlocks;
        attr->val.clusterDim.y = 1;
        attr->val.clusterDim.z = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
    }
    return cfg;
}

// ---- concurrency ------------------------------------------------------------------------------
/// Two host threads at once (w = 0 and 1), each with its own non-blocking stream, each running
/// run(w, i, stream) for i = 0 .. cases-1; thread w works on device w when `twoDevices` and there
/// are two, else on device 0. Returns the sum of what run returns (its mismatches).
template <typename F> static int wk_two_threads(int cases, bool twoDevices, F run) {
    int devices = 0;
    WK_CUDA(cudaGetDeviceCount(&devices));
    int bad[2] = {0, 0};
    auto worker = [&](int w) {
        WK_CUDA(cudaSetDevice(twoDevices && devices > 1 ? w : 0));
        cudaStream_t st;
        WK_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        for (int i = 0; i < cases; ++i) bad[w] += run(w, i, st);
        WK_CUDA(cudaStreamDestroy(st));
    };
    std::thread a(worker, 0), b(worker, 1);
    a.join();
    b.join();
    if (twoDevices && devices < 2) cr_log_info("concurrent: one device here, so both threads shared it (two streams)");
    return bad[0] + bad[1];
}
