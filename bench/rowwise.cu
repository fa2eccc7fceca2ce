// bench/rowwise.cu: warpkit's row-wise device calls (the public ones) against a device-to-device
// copy of the same bytes timed in the same run:
//   rowLayerNorm (with w and b), rowRmsNorm (with w), rowCrossEntropy (the loss alone, and the loss
//   with the gradient of the mean loss in a separate buffer), rowSoftmaxBackward (plain and log).
// 1. grid: rows x cols = 2^26 elements, cols 256 .. 262144 (the issue's, and 8192, a common model
//    width), fp32 / fp16 / bf16, plus the vocabulary lengths 32000, 50257 and 151936 for
//    cross-entropy. Target: >= 0.90x copy where cols >= 1024.
// 2. llm.c's LayerNorm forward shape: 8192 x 768 fp32 with w, b, mean and rstd (llm.c's best
//    kernel runs at about the copy ceiling).
// Bandwidth counts every byte read and written (x, y, w, b, targets, losses, means, rstds); the copy
// moves half as many bytes (it reads and writes each). The torch peers: bench/torch_rowwise.py.
// Prints the tables, writes CSV (argv[1]).
#include <warpkit/device/cross_entropy.cuh>
#include <warpkit/device/norm.cuh>
#include <warpkit/device/softmax_backward.cuh>
#include "bench.cuh"

static const int kCols[] = {256, 1024, 4096, 8192, 16384, 65536, 262144};
static const int kVocab[] = {32000, 50257, 151936};
static const char* kTypeName[] = {"fp32", "fp16", "bf16"};
enum Op { LayerNorm, RmsNorm, CeLoss, CeLossGrad, SoftmaxBack, LogSoftmaxBack, kOps };
static const char* kOpName[] = {"layer_norm", "rms_norm", "ce_loss", "ce_loss_grad", "softmax_bwd", "log_softmax_bwd"};

struct Buffers {
    void *a, *b, *c;   // row arrays of 2^26 elements (x / y / dy, logits / grad)
    void *w, *bias;    // per-column parameters (262144 elements)
    float *s1, *s2;    // per-row outputs (mean / rstd / loss)
    long long* targets;
    void *cx, *cy;     // copy source and destination
};

struct Ctx {
    FILE* csv;
    int misses, cells;
};

/// Launches op on rows x cols of T (all buffers contiguous).
template <typename T> static cudaError_t run_op(int op, const Buffers& m, long long rows, int cols) {
    const T* x = (const T*)m.a;
    switch (op) {
    case LayerNorm: return warpkit::rowLayerNorm(x, (T*)m.b, rows, cols, (const T*)m.w, (const T*)m.bias, 1e-5f);
    case RmsNorm: return warpkit::rowRmsNorm(x, (T*)m.b, rows, cols, (const T*)m.w, 1e-6f);
    case CeLoss: return warpkit::rowCrossEntropy(x, m.targets, m.s1, rows, cols);
    case CeLossGrad:
        return warpkit::rowCrossEntropy(x, m.targets, m.s1, (T*)m.b, rows, cols, -100, 0.0f, 1.0f / (float)rows, cols, cols);
    case SoftmaxBack: return warpkit::rowSoftmaxBackward(x, (const T*)m.b, (T*)m.c, rows, cols);
    default: return warpkit::rowSoftmaxBackward(x, (const T*)m.b, (T*)m.c, rows, cols, warpkit::SoftmaxLog, cols, cols, cols);
    }
}

/// Bytes op reads and writes on rows x cols of T.
template <typename T> static double op_bytes(int op, long long rows, int cols) {
    const double n = (double)rows * cols * sizeof(T), col = (double)cols * sizeof(T);
    switch (op) {
    case LayerNorm: return 2 * n + 2 * col;
    case RmsNorm: return 2 * n + col;
    case CeLoss: return n + 12.0 * rows;
    case CeLossGrad: return 2 * n + 12.0 * rows;
    default: return 3 * n;
    }
}

/// Targets in [0, cols) for rows 0 .. n-1.
__global__ void bench_targets_kernel(long long* t, long long n, int cols) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        t[i] = (i * 2654435761LL) % cols;
}

/// One cell: the op and a copy of half its bytes, each a median of 30.
template <typename T> static void cell(int ti, int op, Ctx* c, const Buffers& m, long long rows, int cols) {
    const double bytes = op_bytes<T>(op, rows, cols);
    if (op == CeLoss || op == CeLossGrad) {
        bench_targets_kernel<<<1024, 256>>>(m.targets, rows, cols);
        BENCH_CUDA(cudaGetLastError());
    }
    const size_t half = (size_t)(bytes / 2);
    const float cms = bench_median_ms([&] { BENCH_CUDA(cudaMemcpyAsync(m.cy, m.cx, half, cudaMemcpyDeviceToDevice)); });
    const float ms = bench_median_ms([&] { BENCH_CUDA(run_op<T>(op, m, rows, cols)); });
    const double tb = bench_tbps(bytes, ms), copy = bench_tbps(bytes, cms);
    const bool judged = cols >= 1024, ok = !judged || tb >= 0.90 * copy;
    c->misses += !ok;
    c->cells += judged;
    printf("| %-15s | %-4s | %7lld | %6d | %8.1f | %5.2f | %5.2f | %4.2fx | %-4s |\n", kOpName[op], kTypeName[ti], rows, cols, ms * 1e3, tb,
           copy, tb / copy, judged ? (ok ? "ok" : "MISS") : "-");
    fprintf(c->csv, "grid,%s,%s,%lld,%d,%.5f,%.0f,%.3f,%.3f,%.3f\n", kOpName[op], kTypeName[ti], rows, cols, ms, bytes, tb, copy, tb / copy);
}

template <typename T> static void grid(int ti, Ctx* c, const Buffers& m) {
    const size_t n = (size_t)1 << 26;
    bench_fill_random((T*)m.a, n, 11 + ti, -4.f, 4.f);
    bench_fill_random((T*)m.b, n, 21 + ti, -1.f, 1.f);
    bench_fill_random((T*)m.w, 262144, 31 + ti, 0.5f, 1.5f);
    bench_fill_random((T*)m.bias, 262144, 41 + ti, -0.5f, 0.5f);
    for (int op = 0; op < kOps; ++op) {
        for (int cols : kCols) cell<T>(ti, op, c, m, (long long)(n / cols), cols);
        if (op == CeLoss || op == CeLossGrad)
            for (int cols : kVocab) cell<T>(ti, op, c, m, (long long)(n / cols), cols);
        if (op == CeLossGrad) bench_fill_random((T*)m.b, n, 21 + ti, -1.f, 1.f); // the gradient overwrote dy
        bench_progress("%s %s done", kTypeName[ti], kOpName[op]);
    }
}

int main(int argc, char** argv) {
    bench_require_gpu();
    Ctx c{bench_csv(argc, argv, "build/bench/rowwise.csv", "table,op,type,rows,cols,ms,bytes,tbps,copy_tbps,ratio_copy"), 0, 0};
    const size_t n = (size_t)1 << 26, rowBytes = n * sizeof(float);
    Buffers m;
    BENCH_CUDA(cudaMalloc(&m.a, rowBytes));
    BENCH_CUDA(cudaMalloc(&m.b, rowBytes));
    BENCH_CUDA(cudaMalloc(&m.c, rowBytes));
    BENCH_CUDA(cudaMalloc(&m.w, 262144 * sizeof(float)));
    BENCH_CUDA(cudaMalloc(&m.bias, 262144 * sizeof(float)));
    BENCH_CUDA(cudaMalloc(&m.s1, (n / 256) * sizeof(float)));
    BENCH_CUDA(cudaMalloc(&m.s2, (n / 256) * sizeof(float)));
    BENCH_CUDA(cudaMalloc(&m.targets, (n / 256) * sizeof(long long)));
    BENCH_CUDA(cudaMalloc(&m.cx, 2 * rowBytes));
    BENCH_CUDA(cudaMalloc(&m.cy, 2 * rowBytes));
    BENCH_CUDA(cudaMemset(m.cx, 1, 2 * rowBytes));
    printf("row-wise device calls (warpkit/device/norm.cuh, cross_entropy.cuh, softmax_backward.cuh); bandwidth counts every byte "
           "read and written; copy = D2D copy of half those bytes\n\n");
    printf("1. grid: 2^26 elements. Target: >= 0.90x copy for cols >= 1024\n");
    printf("| op              | type |    rows |   cols |       us |  TB/s |  copy | xcopy | tgt  |\n"
           "|-----------------|------|---------|--------|----------|-------|-------|-------|------|\n");
    grid<float>(0, &c, m);
    grid<__half>(1, &c, m);
    grid<__nv_bfloat16>(2, &c, m);
    const int m1 = c.misses, judged = c.cells;

    printf("\n2. llm.c LayerNorm forward: 8192 x 768 fp32, w and b, mean and rstd written\n");
    const long long rows = 8192;
    const int cols = 768;
    bench_fill_random((float*)m.a, (size_t)rows * cols, 51, -4.f, 4.f);
    const double bytes = 2.0 * rows * cols * 4 + 2.0 * cols * 4 + 8.0 * rows;
    const float cms = bench_median_ms([&] { BENCH_CUDA(cudaMemcpyAsync(m.cy, m.cx, (size_t)(bytes / 2), cudaMemcpyDeviceToDevice)); });
    const float ms = bench_median_ms([&] {
        BENCH_CUDA(warpkit::rowLayerNorm((const float*)m.a, (float*)m.b, rows, cols, (const float*)m.w, (const float*)m.bias, 1e-5f, m.s1,
                                         m.s2, cols, cols));
    });
    printf("| shape      |    us | TB/s | copy us | xcopy |\n|------------|-------|------|---------|-------|\n");
    printf("| 8192 x 768 | %5.1f | %4.2f | %7.1f | %4.2fx |\n", ms * 1e3, bench_tbps(bytes, ms), cms * 1e3, bench_tbps(bytes, ms) / bench_tbps(bytes, cms));
    fprintf(c.csv, "llmc,layer_norm,fp32,%lld,%d,%.5f,%.0f,%.3f,%.3f,%.3f\n", rows, cols, ms, bytes, bench_tbps(bytes, ms),
            bench_tbps(bytes, cms), bench_tbps(bytes, ms) / bench_tbps(bytes, cms));
    printf("\nmisses: %d of %d judged grid cells (cols >= 1024) below 0.90x copy\n", m1, judged);
    fclose(c.csv);
    for (void* p : {m.a, m.b, m.c, m.w, m.bias, (void*)m.s1, (void*)m.s2, (void*)m.targets, m.cx, m.cy}) BENCH_CUDA(cudaFree(p));
    return 0;
}
