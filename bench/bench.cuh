// bench/bench.cuh: timing helpers shared by warpkit's benchmarks.
//  - BENCH_CUDA(call): abort with a message on any CUDA error.
//  - bench_median_ms(launch, warmup, reps): CUDA-event timing of launch(), median of reps; a
//    50 us spin kernel ahead of each start event keeps host launch latency out of the interval.
//  - bench_pair_median_ms(a, b, &msA, &msB): the same for two peers, timed alternately.
//  - cold = true (either timer): bench_l2_flush() before each timed call, so that its inputs come
//    from DRAM, not from what the previous call left in L2 (as nvbench's L2 flush).
//  - bench_copy_tbps(bytes): device-to-device copy ceiling, (read + written bytes) / time in TB/s.
//  - bench_fill_random(ptr, n): fill a float/int/half/bf16 buffer with random values on the device.
//  - bench_progress(...): one line to stderr so a long run shows where it is.
//  - bench_wants(argc, argv, table): whether the table is selected (argv[2..], none: every table).
#pragma once

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdarg.h>
#include <string.h>
#include <algorithm>
#include <vector>

#define BENCH_CUDA(call)                                                                  \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) {                                                          \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,          \
                    cudaGetErrorString(e_));                                              \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

/// Spins one thread for `ns` nanoseconds of GPU time. Enqueued before the start event, it keeps the
/// GPU busy while the host enqueues the timed launches, so the measured interval holds GPU work
/// only, not the host's launch latency (as nvbench's blocking kernel does).
__global__ void bench_delay_kernel(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
static const unsigned long long kBenchDelayNs = 50000; // far above a launch's host cost

__global__ void bench_read_kernel(const float4* p, size_t n, float* sink) {
    float acc = 0.f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const float4 v = p[i];
        acc += (v.x + v.y) + (v.z + v.w);
    }
    if (acc == 1234.5f) *sink = acc; // never true for the zero buffer; keeps the loads
}

/// Reads a zeroed buffer of twice the L2's size on stream 0: afterwards L2 holds only its clean
/// lines, so the next call's inputs come from DRAM and its stores evict nothing dirty.
static inline void bench_l2_flush(void) {
    static float4* buf = nullptr;
    static size_t n = 0;
    if (buf == nullptr) {
        int dev = 0, l2 = 0;
        BENCH_CUDA(cudaGetDevice(&dev));
        BENCH_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
        n = 2 * (size_t)l2 / sizeof(float4);
        BENCH_CUDA(cudaMalloc(&buf, n * sizeof(float4) + sizeof(float)));
        BENCH_CUDA(cudaMemset(buf, 0, n * sizeof(float4)));
    }
    bench_read_kernel<<<1024, 256>>>(buf, n, reinterpret_cast<float*>(buf + n));
}

static inline float bench_median_of(std::vector<float>& t) {
    std::sort(t.begin(), t.end());
    const size_t n = t.size();
    return n % 2 ? t[n / 2] : 0.5f * (t[n / 2 - 1] + t[n / 2]);
}

/// Median time in milliseconds of `launch()` (which enqueues work on stream 0), timed with CUDA
/// events around each call after `warmup` untimed calls. Checks for launch errors.
template <typename F> static float bench_median_ms(F launch, int warmup = 5, int reps = 30, bool cold = false) {
    cudaEvent_t a, b;
    BENCH_CUDA(cudaEventCreate(&a));
    BENCH_CUDA(cudaEventCreate(&b));
    for (int i = 0; i < warmup; ++i) launch();
    BENCH_CUDA(cudaGetLastError());
    BENCH_CUDA(cudaDeviceSynchronize());
    std::vector<float> t(reps);
    for (int i = 0; i < reps; ++i) {
        if (cold) bench_l2_flush();
        bench_delay_kernel<<<1, 1>>>(kBenchDelayNs);
        BENCH_CUDA(cudaEventRecord(a));
        launch();
        BENCH_CUDA(cudaEventRecord(b));
        BENCH_CUDA(cudaEventSynchronize(b));
        BENCH_CUDA(cudaEventElapsedTime(&t[i], a, b));
    }
    BENCH_CUDA(cudaGetLastError());
    BENCH_CUDA(cudaEventDestroy(a));
    BENCH_CUDA(cudaEventDestroy(b));
    return bench_median_of(t);
}

/// Medians (ms) of two launches timed alternately, A then B in every round, after `warmup` calls
/// of each: for peers whose times are within noise of each other, so that clock or thermal drift
/// during the run cannot favour whichever was timed first.
template <typename FA, typename FB> static void bench_pair_median_ms(FA launchA, FB launchB, float* msA, float* msB,
                                                                     int warmup = 5, int reps = 61, bool cold = false) {
    cudaEvent_t e[4];
    for (cudaEvent_t& x : e) BENCH_CUDA(cudaEventCreate(&x));
    for (int i = 0; i < warmup; ++i) { launchA(); launchB(); }
    BENCH_CUDA(cudaGetLastError());
    BENCH_CUDA(cudaDeviceSynchronize());
    std::vector<float> ta(reps), tb(reps);
    for (int i = 0; i < reps; ++i) {
        if (cold) bench_l2_flush();
        bench_delay_kernel<<<1, 1>>>(kBenchDelayNs);
        BENCH_CUDA(cudaEventRecord(e[0]));
        launchA();
        BENCH_CUDA(cudaEventRecord(e[1]));
        if (cold) bench_l2_flush(); // B's inputs from DRAM too; the flush lies outside both intervals
        BENCH_CUDA(cudaEventRecord(e[2]));
        launchB();
        BENCH_CUDA(cudaEventRecord(e[3]));
        BENCH_CUDA(cudaEventSynchronize(e[3]));
        BENCH_CUDA(cudaEventElapsedTime(&ta[i], e[0], e[1]));
        BENCH_CUDA(cudaEventElapsedTime(&tb[i], e[2], e[3]));
    }
    BENCH_CUDA(cudaGetLastError());
    for (cudaEvent_t& x : e) BENCH_CUDA(cudaEventDestroy(x));
    *msA = bench_median_of(ta);
    *msB = bench_median_of(tb);
}

/// The ceiling: a device-to-device copy of `bytes`, in TB/s counting bytes read plus written.
static inline double bench_copy_tbps(size_t bytes, int reps = 30) {
    void *src, *dst;
    BENCH_CUDA(cudaMalloc(&src, bytes));
    BENCH_CUDA(cudaMalloc(&dst, bytes));
    BENCH_CUDA(cudaMemset(src, 1, bytes));
    float ms = bench_median_ms([&] { cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice); }, 5, reps);
    BENCH_CUDA(cudaFree(src));
    BENCH_CUDA(cudaFree(dst));
    return 2.0 * (double)bytes / (ms * 1e-3) / 1e12;
}

/// Bytes over milliseconds, in TB/s.
static inline double bench_tbps(double bytes, float ms) { return bytes / (ms * 1e-3) / 1e12; }

template <typename T> __global__ void bench_fill_kernel(T* p, size_t n, uint64_t seed, float lo, float hi) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint64_t z = seed + i * 0x9e3779b97f4a7c15ull;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        float u = lo + (hi - lo) * (float)(z >> 40) * (1.0f / 16777216.0f);
        if constexpr (sizeof(T) == 2) p[i] = T(u);
        else p[i] = (T)u;
    }
}
/// Fill n elements with uniform random values in [lo, hi) (never zeros-only data).
template <typename T> static void bench_fill_random(T* p, size_t n, uint64_t seed, float lo = -1.f, float hi = 1.f) {
    bench_fill_kernel<<<1024, 256>>>(p, n, seed, lo, hi);
    BENCH_CUDA(cudaGetLastError());
    BENCH_CUDA(cudaDeviceSynchronize());
}

static inline void bench_progress(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "  .. ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

/// Open the CSV named by argv[1] (or `fallback`), write its header line, return it (never NULL).
static FILE* bench_csv(int argc, char** argv, const char* fallback, const char* header) {
    const char* path = argc > 1 ? argv[1] : fallback;
    FILE* f = fopen(path, "w");
    if (!f) { fprintf(stderr, "cannot write %s\n", path); exit(1); }
    fprintf(f, "%s\n", header);
    fprintf(stderr, "  csv: %s\n", path);
    return f;
}

/// Whether a bench runs `table`: every table when argv names none after the CSV path, otherwise only
/// the tables named there (`build/bench/softmax out.csv short few`).
static inline bool bench_wants(int argc, char** argv, const char* table) {
    if (argc <= 2) return true;
    for (int i = 2; i < argc; ++i)
        if (strcmp(argv[i], table) == 0) return true;
    return false;
}

/// The value of argv's `name=value` option after the CSV path (`rows=64`: "64"), or NULL; options
/// select cells within the tables bench_wants picks.
static inline const char* bench_option(int argc, char** argv, const char* name) {
    const size_t n = strlen(name);
    for (int i = 2; i < argc; ++i)
        if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=') return argv[i] + n + 1;
    return NULL;
}

/// Exit cleanly (status 0) when there is no GPU to time.
static inline void bench_require_gpu(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("no CUDA device: nothing to time\n");
        exit(0);
    }
}
