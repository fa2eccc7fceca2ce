// bench/sharded.cu: vocabulary-parallel cross-entropy on two GPUs (include/warpkit/device/
// sharded.cuh), rows {1, 8, 512, 8192} x vocabulary {128256, 151936, 262144} split two ways, fp32
// and bf16, in one run:
//   local:   GPU 0's statistics pass (one read) and finish (one read, one write of the gradient)
//            against a device-to-device copy of the same bytes; target >= 0.90x copy for 512 rows
//            and more (bandwidth counts bytes read plus written; the statistics pass reads only).
//   sharded: the whole sharded forward and gradient on both GPUs (statistics, one NCCL all-gather
//            of 12 bytes a row, the merge, the finish; the slower GPU's time) against
//            megatron:  a Megatron-style form written here: a max pass, an all-reduce (max), a
//                       sum-of-exp and target-logit pass, two all-reduces (sum), a gradient pass
//                       (three passes over the local logits, three all-reduces); target: faster;
//            ideal:     one GPU's rowCrossEntropy of the whole rows / 2 + the all-gather alone;
//                       target: within 1.2x. The sharded form moves 3 bytes a shard byte (the statistics
//                       read, the finish's read and write) where `ideal` moves 2, so cells bound by
//                       bandwidth sit near 1.5x; cells bound by latency (few rows) can meet it.
// The sharded loss is checked against one GPU's rowCrossEntropy first. Needs NCCL (make finds it
// through NCCL_HOME or PyTorch's nvidia-nccl package) and two GPUs; prints a skip line otherwise.
// Prints a short table, writes CSV (argv[1]).
#include <warpkit/device/cross_entropy.cuh>
#include <warpkit/device/sharded.cuh>
#include "bench.cuh"
#include <cstring>
#ifdef WARPKIT_HAVE_NCCL
#include <nccl.h>

#define BENCH_NCCL(call)                                                                \
    do {                                                                                \
        ncclResult_t r_ = (call);                                                       \
        if (r_ != ncclSuccess) {                                                        \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, ncclGetErrorString(r_)); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static const long long kRows[] = {1, 8, 512, 8192};
static const int kVocab[] = {128256, 151936, 262144};
static const int kThreads = 256;

// ---- the Megatron-style peer: three passes, three all-reduces; blocks share a row through atomics
__device__ int ordered(float f) {
    const int i = __float_as_int(f);
    return i >= 0 ? i : i ^ 0x7fffffff;
}
__device__ float unordered(int i) { return __int_as_float(i >= 0 ? i : i ^ 0x7fffffff); }
template <typename T> __device__ float blockSum(float v, float* sh) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(~0u, v, o);
    if (threadIdx.x % 32 == 0) sh[threadIdx.x / 32] = v;
    __syncthreads();
    v = threadIdx.x < kThreads / 32 ? sh[threadIdx.x] : 0.0f;
    for (int o = 4; o > 0; o /= 2) v += __shfl_xor_sync(~0u, v, o);
    __syncthreads();
    return v;
}
/// Pass 1: each row's local max (ordered ints, atomicMax; mx preset to the lowest).
template <typename T> __global__ void mgMax(const T* x, int* mx, int cols, int per) {
    const long long row = blockIdx.x / per;
    float m = -INFINITY;
    for (int j = (blockIdx.x % per) * kThreads + threadIdx.x; j < cols; j += per * kThreads)
        m = fmaxf(m, (float)x[row * cols + j]);
    for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(~0u, m, o));
    if (threadIdx.x % 32 == 0) atomicMax(&mx[row], ordered(m));
}
/// Pass 2: sum of exp(x - global max), and the target's logit where this shard holds it.
template <typename T> __global__ void mgSum(const T* x, const int* mx, const long long* t, float* sum, float* xt,
                                            int cols, int per, long long begin) {
    __shared__ float sh[kThreads / 32];
    const long long row = blockIdx.x / per;
    const float m = unordered(mx[row]);
    float s = 0.0f;
    for (int j = (blockIdx.x % per) * kThreads + threadIdx.x; j < cols; j += per * kThreads)
        s += __expf((float)x[row * cols + j] - m);
    s = blockSum<T>(s, sh);
    if (threadIdx.x == 0) atomicAdd(&sum[row], s);
    const long long c = t[row] - begin;
    if (blockIdx.x % per == 0 && threadIdx.x == 0 && c >= 0 && c < cols) atomicAdd(&xt[row], (float)x[row * cols + c]);
}
/// Pass 3: loss and gradient.
template <typename T> __global__ void mgGrad(const T* x, const int* mx, const long long* t, const float* sum,
                                             const float* xt, float* loss, T* g, int cols, int per, long long begin,
                                             float scale) {
    const long long row = blockIdx.x / per;
    const float m = unordered(mx[row]), r = 1.0f / sum[row];
    const long long c = t[row] - begin;
    if (blockIdx.x % per == 0 && threadIdx.x == 0) loss[row] = logf(sum[row]) + m - xt[row];
    for (int j = (blockIdx.x % per) * kThreads + threadIdx.x; j < cols; j += per * kThreads)
        g[row * cols + j] = (T)(scale * (__expf((float)x[row * cols + j] - m) * r - (j == c ? 1.0f : 0.0f)));
}

/// A rank's buffers for rows x cols of its shard.
template <typename T> struct Rank {
    cudaStream_t s;
    T *x, *g;
    long long* t;
    float *loss, *sum, *xt;
    int* mx;
    warpkit::RowShardStats *mine, *all;
};

/// Median over `reps` of the slower GPU's time (ms) of f() (which enqueues on both GPUs' streams).
template <typename F> static float time_two(cudaStream_t* st, F f, int reps = 20) {
    cudaEvent_t a[2], b[2];
    for (int k = 0; k < 2; ++k) {
        BENCH_CUDA(cudaSetDevice(k));
        BENCH_CUDA(cudaEventCreate(&a[k]));
        BENCH_CUDA(cudaEventCreate(&b[k]));
    }
    for (int i = 0; i < 3; ++i) f();
    std::vector<float> ts(reps);
    for (int i = 0; i < reps; ++i) {
        for (int k = 0; k < 2; ++k) {
            BENCH_CUDA(cudaSetDevice(k));
            bench_delay_kernel<<<1, 1, 0, st[k]>>>(kBenchDelayNs);
            BENCH_CUDA(cudaEventRecord(a[k], st[k]));
        }
        f();
        float ms[2];
        for (int k = 0; k < 2; ++k) {
            BENCH_CUDA(cudaSetDevice(k));
            BENCH_CUDA(cudaEventRecord(b[k], st[k]));
        }
        for (int k = 0; k < 2; ++k) {
            BENCH_CUDA(cudaEventSynchronize(b[k]));
            BENCH_CUDA(cudaEventElapsedTime(&ms[k], a[k], b[k]));
        }
        ts[i] = ms[0] > ms[1] ? ms[0] : ms[1];
    }
    for (int k = 0; k < 2; ++k) {
        BENCH_CUDA(cudaSetDevice(k));
        BENCH_CUDA(cudaGetLastError()); // the hand-written kernels' launches
        BENCH_CUDA(cudaEventDestroy(a[k]));
        BENCH_CUDA(cudaEventDestroy(b[k]));
    }
    return bench_median_of(ts);
}

template <typename T> static int cell(const char* tn, FILE* csv, ncclComm_t* comms, long long rows, int vocab, T* fx,
                                      T* fg, float* fl, long long* ft, Rank<T>* rk) {
    const int cols = vocab / 2;
    const float scale = 1.0f / rows;
    const size_t n = (size_t)rows * cols, bytes = n * sizeof(T);
    cudaStream_t st[2] = {rk[0].s, rk[1].s};
    auto onEach = [&](auto fn) {
        for (int k = 0; k < 2; ++k) {
            BENCH_CUDA(cudaSetDevice(k));
            fn(k, rk[k]);
        }
    };
    for (int k = 0; k < 2; ++k) { // each rank's shard: columns [k * cols, (k + 1) * cols) of the full rows on GPU 0
        BENCH_CUDA(cudaMemcpy2D(rk[k].x, cols * sizeof(T), fx + (size_t)k * cols, vocab * sizeof(T), cols * sizeof(T),
                                rows, cudaMemcpyDefault));
        BENCH_CUDA(cudaMemcpy(rk[k].t, ft, rows * 8, cudaMemcpyDefault));
    }
    auto sharded = [&] {
        onEach([&](int k, Rank<T>& r) {
            BENCH_CUDA(warpkit::rowSoftmaxStats(r.x, r.t, (long long)k * cols, r.mine, rows, cols, cols, r.s));
        });
        BENCH_NCCL(ncclGroupStart());
        for (int k = 0; k < 2; ++k)
            BENCH_NCCL(ncclAllGather(rk[k].mine, rk[k].all, rows * 3, ncclFloat, comms[k], rk[k].s));
        BENCH_NCCL(ncclGroupEnd());
        onEach([&](int k, Rank<T>& r) {
            BENCH_CUDA(warpkit::rowStatsMerge(r.all, r.all, 2, rows, r.s));
            BENCH_CUDA(warpkit::rowCrossEntropyFinish(r.x, r.t, r.all, r.loss, r.g, rows, cols, (long long)k * cols,
                                                      vocab, -100LL, scale, cols, cols, r.s));
        });
    };
    const int per = (int)(rows >= 264 ? 1 : (264 + rows - 1) / rows);
    auto allReduce = [&](void* (*buf)(Rank<T>&), ncclDataType_t ty, ncclRedOp_t op) {
        BENCH_NCCL(ncclGroupStart());
        for (int k = 0; k < 2; ++k) BENCH_NCCL(ncclAllReduce(buf(rk[k]), buf(rk[k]), rows, ty, op, comms[k], rk[k].s));
        BENCH_NCCL(ncclGroupEnd());
    };
    auto megatron = [&] {
        onEach([&](int, Rank<T>& r) {
            BENCH_CUDA(cudaMemsetAsync(r.mx, 0x80, rows * 4, r.s));
            BENCH_CUDA(cudaMemsetAsync(r.sum, 0, rows * 4, r.s));
            BENCH_CUDA(cudaMemsetAsync(r.xt, 0, rows * 4, r.s));
            mgMax<T><<<(unsigned)(rows * per), kThreads, 0, r.s>>>(r.x, r.mx, cols, per);
        });
        allReduce([](Rank<T>& r) { return (void*)r.mx; }, ncclInt32, ncclMax);
        onEach([&](int k, Rank<T>& r) {
            mgSum<T><<<(unsigned)(rows * per), kThreads, 0, r.s>>>(r.x, r.mx, r.t, r.sum, r.xt, cols, per,
                                                                   (long long)k * cols);
        });
        allReduce([](Rank<T>& r) { return (void*)r.sum; }, ncclFloat, ncclSum);
        allReduce([](Rank<T>& r) { return (void*)r.xt; }, ncclFloat, ncclSum);
        onEach([&](int k, Rank<T>& r) {
            mgGrad<T><<<(unsigned)(rows * per), kThreads, 0, r.s>>>(r.x, r.mx, r.t, r.sum, r.xt, r.loss, r.g, cols, per,
                                                                    (long long)k * cols, scale);
        });
    };
    auto gather = [&] {
        BENCH_NCCL(ncclGroupStart());
        for (int k = 0; k < 2; ++k)
            BENCH_NCCL(ncclAllGather(rk[k].mine, rk[k].all, rows * 3, ncclFloat, comms[k], rk[k].s));
        BENCH_NCCL(ncclGroupEnd());
    };
    // The check: the sharded loss against one GPU's whole rows, and the same bits on both ranks.
    BENCH_CUDA(cudaSetDevice(0));
    BENCH_CUDA(warpkit::rowCrossEntropy(fx, ft, fl, fg, rows, vocab, -100LL, 0.0f, scale, vocab, vocab));
    sharded();
    for (int k = 0; k < 2; ++k) {
        BENCH_CUDA(cudaSetDevice(k));
        BENCH_CUDA(cudaStreamSynchronize(rk[k].s));
    }
    std::vector<float> want(rows), got(rows), got1(rows);
    BENCH_CUDA(cudaMemcpy(want.data(), fl, rows * 4, cudaMemcpyDefault));
    BENCH_CUDA(cudaMemcpy(got.data(), rk[0].loss, rows * 4, cudaMemcpyDefault));
    BENCH_CUDA(cudaMemcpy(got1.data(), rk[1].loss, rows * 4, cudaMemcpyDefault));
    int bad = 0;
    for (long long q = 0; q < rows; ++q)
        bad += !(fabsf(got[q] - want[q]) <= 2e-5f * (1.0f + fabsf(want[q]))) || memcmp(&got[q], &got1[q], 4) != 0;
    if (bad) printf("  %s %lld x %d: %d rows' sharded loss differs from one GPU's\n", tn, rows, vocab, bad);
    // The timings.
    BENCH_CUDA(cudaSetDevice(0));
    Rank<T>& r0 = rk[0];
    const float msStats = bench_median_ms(
        [&] { BENCH_CUDA(warpkit::rowSoftmaxStats(r0.x, r0.t, 0LL, r0.mine, rows, cols, cols)); }, 3, 20);
    const float msFinish = bench_median_ms(
        [&] {
            BENCH_CUDA(warpkit::rowCrossEntropyFinish(r0.x, r0.t, r0.all, r0.loss, r0.g, rows, cols, 0LL, vocab, -100LL,
                                                      scale, cols, cols));
        },
        3, 20);
    const float msCopy =
        bench_median_ms([&] { BENCH_CUDA(cudaMemcpyAsync(r0.g, r0.x, bytes, cudaMemcpyDeviceToDevice)); }, 3, 20);
    const float msWhole = bench_median_ms(
        [&] { BENCH_CUDA(warpkit::rowCrossEntropy(fx, ft, fl, fg, rows, vocab, -100LL, 0.0f, scale, vocab, vocab)); },
        3, 20);
    const float msSharded = time_two(st, sharded);
    const float msMegatron = time_two(st, megatron);
    const float msGather = time_two(st, gather);
    const double copy = bench_tbps(2.0 * bytes, msCopy), tStats = bench_tbps(bytes, msStats),
                 tFin = bench_tbps(2.0 * bytes, msFinish);
    const double ideal = msWhole / 2 + msGather;
    const bool ok = (rows < 512 || (tStats >= 0.9 * copy && tFin >= 0.9 * copy)) && msSharded < msMegatron &&
                    msSharded <= 1.2 * ideal;
    printf("| %-4s | %5lld | %6d | %5.2f %4.2fx | %5.2f %4.2fx | %8.4f | %8.4f %4.2fx | %8.4f %4.2fx | %-4s |\n", tn,
           rows, vocab, tStats, tStats / copy, tFin, tFin / copy, msSharded, msMegatron, msMegatron / msSharded, ideal,
           msSharded / ideal,
           bad  ? "FAIL"
           : ok ? "ok"
                : "MISS");
    fprintf(csv, "%s,%lld,%d,%.5f,%.5f,%.5f,%.3f,%.5f,%.5f,%.5f,%.5f,%d\n", tn, rows, vocab, msStats, msFinish, msCopy,
            copy, msSharded, msMegatron, msWhole, msGather, ok);
    return bad;
}

template <typename T> static int sweep(const char* tn, FILE* csv, ncclComm_t* comms) {
    const long long maxRows = 8192;
    const int maxVocab = 262144;
    const size_t full = (size_t)maxRows * maxVocab, half = full / 2;
    BENCH_CUDA(cudaSetDevice(0));
    T *fx, *fg;
    float* fl;
    long long* ft;
    BENCH_CUDA(cudaMalloc(&fx, full * sizeof(T)));
    BENCH_CUDA(cudaMalloc(&fg, full * sizeof(T)));
    BENCH_CUDA(cudaMalloc(&fl, maxRows * 4));
    BENCH_CUDA(cudaMalloc(&ft, maxRows * 8));
    bench_fill_random(fx, full, 11, -8.0f, 8.0f);
    std::vector<long long> ht(maxRows);
    for (long long q = 0; q < maxRows; ++q) ht[q] = (q * 7919) % 128256;
    BENCH_CUDA(cudaMemcpy(ft, ht.data(), maxRows * 8, cudaMemcpyHostToDevice));
    Rank<T> rk[2];
    for (int k = 0; k < 2; ++k) {
        Rank<T>& r = rk[k];
        BENCH_CUDA(cudaSetDevice(k));
        BENCH_CUDA(cudaStreamCreate(&r.s));
        BENCH_CUDA(cudaMalloc(&r.x, half * sizeof(T)));
        BENCH_CUDA(cudaMalloc(&r.g, half * sizeof(T)));
        BENCH_CUDA(cudaMalloc(&r.t, maxRows * 8));
        BENCH_CUDA(cudaMalloc(&r.loss, maxRows * 4));
        BENCH_CUDA(cudaMalloc(&r.sum, maxRows * 4));
        BENCH_CUDA(cudaMalloc(&r.xt, maxRows * 4));
        BENCH_CUDA(cudaMalloc(&r.mx, maxRows * 4));
        BENCH_CUDA(cudaMalloc(&r.mine, maxRows * sizeof(warpkit::RowShardStats)));
        BENCH_CUDA(cudaMalloc(&r.all, 2 * maxRows * sizeof(warpkit::RowShardStats)));
    }
    int bad = 0;
    for (int v : kVocab)
        for (long long rows : kRows) bad += cell<T>(tn, csv, comms, rows, v, fx, fg, fl, ft, rk);
    for (int k = 0; k < 2; ++k) {
        Rank<T>& r = rk[k];
        BENCH_CUDA(cudaSetDevice(k));
        cudaFree(r.x), cudaFree(r.g), cudaFree(r.t), cudaFree(r.loss), cudaFree(r.sum), cudaFree(r.xt), cudaFree(r.mx);
        cudaFree(r.mine), cudaFree(r.all);
        BENCH_CUDA(cudaStreamDestroy(r.s));
    }
    BENCH_CUDA(cudaSetDevice(0));
    cudaFree(fx), cudaFree(fg), cudaFree(fl), cudaFree(ft);
    bench_progress("%s done", tn);
    return bad;
}
#endif

int main(int argc, char** argv) {
#ifndef WARPKIT_HAVE_NCCL
    (void)argc, (void)argv;
    printf("sharded: skipped: built without NCCL (nccl.h not found; set NCCL_HOME or install nvidia-nccl)\n");
    return 0;
#else
    bench_require_gpu();
    int ndev = 0;
    BENCH_CUDA(cudaGetDeviceCount(&ndev));
    if (ndev < 2) {
        printf("sharded: skipped: needs two GPUs, found %d\n", ndev);
        return 0;
    }
    FILE* csv = bench_csv(
        argc, argv, "sharded.csv",
        "type,rows,vocab,stats_ms,finish_ms,copy_ms,copy_tbps,sharded_ms,megatron_ms,whole_ms,allgather_ms,ok");
    for (int k = 0; k < 2; ++k) { // the shards are copied from GPU 0's whole rows over NVLink where it can
        BENCH_CUDA(cudaSetDevice(k));
        if (cudaDeviceEnablePeerAccess(1 - k, 0) != cudaSuccess) (void)cudaGetLastError();
    }
    ncclComm_t comms[2];
    const int devs[2] = {0, 1};
    BENCH_NCCL(ncclCommInitAll(comms, 2, devs));
    printf(
        "Vocabulary-parallel cross-entropy, two GPUs, shards of vocab / 2. TB/s: stats reads, finish reads + writes,\n"
        "x: over a copy of the shard. ms: sharded (stats + all-gather + merge + finish), megatron (3 passes, 3\n"
        "all-reduces; x: its time over sharded's), ideal (one GPU's whole rows / 2 + the all-gather; x: sharded over "
        "it).\n");
    printf("| type | rows  | vocab  | stats TB/s  | finish TB/s | sharded  | megatron ms   | ideal ms      | ok   |\n");
    printf("|------|-------|--------|-------------|-------------|----------|---------------|---------------|------|\n");
    int bad = sweep<float>("fp32", csv, comms);
    bad += sweep<__nv_bfloat16>("bf16", csv, comms);
    ncclCommDestroy(comms[0]);
    ncclCommDestroy(comms[1]);
    fclose(csv);
    return bad ? 1 : 0;
#endif
}
