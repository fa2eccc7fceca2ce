// bench/norm_backward.cu: rowLayerNormBackward (dx, dw, db) and rowRmsNormBackward (dx, dw) of
// warpkit/device/norm_backward.cuh, fp32 and bf16, on rows x cols = 8192 x 768, 8192 x 1024,
// 16384 x 4096, 4096 x 8192, 1024 x 32768, 256 x 65536 and 64 x 262144 (the split path, N2), each
// beside, in the same run:
//   copy: its ceiling, a kernel that reads dy and x and writes dx (dx = dy + x, 16-byte vectors);
//   hand: a hand-written peer, a block a row for dx (the row's two sums by a shared-memory block
//         reduction, then dx) and, atomics-free, dw / db in two passes: column partials over 64-row
//         chunks, then their sum in chunk order.
// Then the mixed Add call of an autocast residual stream (rowLayerNormBackwardAdd<float,
// __nv_bfloat16>: fp32 dy, x, dres and dx, a bf16 dr; GPT-2's add-LayerNorm backward) on 8192 x 768,
// 8192 x 1024 and 16384 x 4096, beside its own copy (reads dy, x, dres; writes dx and a bf16 dr); no
// hand-written peer (its columns are blank).
// Bandwidth counts the bytes each call must move: dy, x and dx, w, the statistics, dw and db (the
// copy moves dy, x and dx). x copy = warpkit's bandwidth over the copy's (1 = at the ceiling);
// x hand = the hand-written peer's time over warpkit's (above 1: warpkit is faster). check = the
// largest difference of warpkit's dx, dw, db from the peer's, relative to the largest magnitude
// (a warning past 1e-3 fp32, 2e-2 bf16). The torch peers: bench/torch_norm_backward.py.
// Then a chain of 23 LayerNorm calls back to back (a GPT-2 training step's count; bf16 8192 x 768,
// 8192 x 1024, 256 x 65536; fp32 8192 x 768): the time a call on stream 0, on a stream of its
// own, and replayed from a CUDA graph, the gaps between the kernels included.
// Prints the table, writes CSV (argv[1]).
#include <warpkit/device/norm.cuh>
#include <warpkit/device/norm_backward.cuh>
#include "bench.cuh"
#include <math.h>

struct Shape {
    long long rows;
    int cols;
};
static const Shape kShapes[] = {{8192, 768},   {8192, 1024}, {16384, 4096}, {4096, 8192},
                                {1024, 32768}, {256, 65536}, {64, 262144}};
static const size_t kMaxElems = (size_t)1 << 26; // the largest shape, 16384 x 4096
static const int kMaxCols = 262144, kChunkRows = 64;

static __device__ __forceinline__ float toF(float v) { return v; }
static __device__ __forceinline__ float toF(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> static __device__ __forceinline__ T fromF(float v) { return (T)v; }
template <> __device__ __forceinline__ __nv_bfloat16 fromF<__nv_bfloat16>(float v) { return __float2bfloat16(v); }

/// The ceiling: dx = dy + x over n elements, 16-byte vectors (n a multiple of the vector).
template <typename T> __global__ void copyKernel(const T* dy, const T* x, T* dx, size_t n) {
    const size_t nv = n * sizeof(T) / 16;
    const uint4* a = reinterpret_cast<const uint4*>(dy);
    const uint4* b = reinterpret_cast<const uint4*>(x);
    uint4* o = reinterpret_cast<uint4*>(dx);
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < nv; i += (size_t)gridDim.x * blockDim.x) {
        uint4 u = a[i], v = b[i]; // an integer add: the bytes matter, not the values
        o[i] = make_uint4(u.x + v.x, u.y + v.y, u.z + v.z, u.w + v.w);
    }
}

/// The mixed Add call's ceiling: dx = dy + x + dres (fp32) and dr = dx in bf16, 16-byte vectors of
/// the inputs (n a multiple of 4).
__global__ void copyMixedKernel(const float* dy, const float* x, const float* dres, float* dx, __nv_bfloat16* dr,
                                size_t n) {
    const size_t nv = n / 4;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < nv; i += (size_t)gridDim.x * blockDim.x) {
        const float4 a = reinterpret_cast<const float4*>(dy)[i], b = reinterpret_cast<const float4*>(x)[i];
        const float4 c = reinterpret_cast<const float4*>(dres)[i];
        const float4 o = make_float4(a.x + b.x + c.x, a.y + b.y + c.y, a.z + b.z + c.z, a.w + b.w + c.w);
        reinterpret_cast<float4*>(dx)[i] = o;
        __nv_bfloat162* q = reinterpret_cast<__nv_bfloat162*>(dr) + 2 * i;
        q[0] = __floats2bfloat162_rn(o.x, o.y), q[1] = __floats2bfloat162_rn(o.z, o.w);
    }
}

/// Hand-written dx: a block of 256 threads a row; sums of g and g * xhat, then dx.
template <typename T> __global__ void handDxKernel(const T* dy, const T* x, const T* w, const float* mean,
                                                   const float* rstd, T* dx, int cols) {
    __shared__ float red[2][8];
    const long long row = blockIdx.x;
    const T* dyr = dy + row * cols;
    const T* xr = x + row * cols;
    const float mu = mean != nullptr ? mean[row] : 0.0f, rs = rstd[row];
    float s0 = 0.0f, s1 = 0.0f;
    for (int c = threadIdx.x; c < cols; c += 256) {
        const float g = toF(dyr[c]) * toF(w[c]);
        s0 += g;
        s1 += g * (toF(xr[c]) - mu) * rs;
    }
    for (int o = 16; o > 0; o /= 2) s0 += __shfl_xor_sync(~0u, s0, o), s1 += __shfl_xor_sync(~0u, s1, o);
    if (threadIdx.x % 32 == 0) red[0][threadIdx.x / 32] = s0, red[1][threadIdx.x / 32] = s1;
    __syncthreads();
    s0 = s1 = 0.0f;
    for (int k = 0; k < 8; ++k) s0 += red[0][k], s1 += red[1][k];
    const float m1 = mean != nullptr ? s0 / cols : 0.0f, m2 = s1 / cols;
    for (int c = threadIdx.x; c < cols; c += 256) {
        const float xh = (toF(xr[c]) - mu) * rs;
        dx[row * cols + c] = fromF<T>(rs * (toF(dyr[c]) * toF(w[c]) - m1 - xh * m2));
    }
}

/// Hand-written dw / db, pass 1: block (32 columns, 8 row lanes) over chunk blockIdx.y's kChunkRows
/// rows; the 8 lanes' sums added in lane order into the chunk's partials pw, pb.
template <typename T> __global__ void handPartialKernel(const T* dy, const T* x, const float* mean, const float* rstd,
                                                        float* pw, float* pb, long long rows, int cols) {
    __shared__ float sw[8][32], sb[8][32];
    const int c = blockIdx.x * 32 + threadIdx.x;
    const long long r0 = (long long)blockIdx.y * kChunkRows;
    float aw = 0.0f, ab = 0.0f;
    if (c < cols)
        for (long long r = r0 + threadIdx.y; r < r0 + kChunkRows && r < rows; r += 8) {
            const float d = toF(dy[r * cols + c]);
            aw += d * (toF(x[r * cols + c]) - (mean != nullptr ? mean[r] : 0.0f)) * rstd[r];
            ab += d;
        }
    sw[threadIdx.y][threadIdx.x] = aw, sb[threadIdx.y][threadIdx.x] = ab;
    __syncthreads();
    if (threadIdx.y != 0 || c >= cols) return;
    for (int k = 1; k < 8; ++k) aw += sw[k][threadIdx.x], ab += sb[k][threadIdx.x];
    pw[(size_t)blockIdx.y * cols + c] = aw;
    if (pb != nullptr) pb[(size_t)blockIdx.y * cols + c] = ab;
}

/// Hand-written dw / db, pass 2: a thread a column, the chunks' partials in chunk order.
template <typename T>
__global__ void handFinishKernel(const float* pw, const float* pb, T* dw, T* db, int chunks, int cols) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float aw = 0.0f, ab = 0.0f;
    for (int k = 0; k < chunks; ++k)
        aw += pw[(size_t)k * cols + c], ab += pb != nullptr ? pb[(size_t)k * cols + c] : 0.0f;
    dw[c] = fromF<T>(aw);
    if (db != nullptr) db[c] = fromF<T>(ab);
}

struct Buffers {
    void *dy, *x, *dx, *w, *b, *dw, *db; // warpkit's outputs: dx, dw, db
    float* dres;                         // the mixed Add call's residual gradient (fp32)
    __nv_bfloat16* dr;                   // and its bf16 output
    void *hdx, *hdw, *hdb;               // the hand-written peer's
    float *mean, *rstd, *hpart;          // statistics; the peer's partials
    void* ws;
    size_t wsBytes;
};

/// The hand-written peer: dx, then dw (and db) in two passes.
template <typename T> static void handRun(const Buffers& m, bool rms, long long rows, int cols) {
    const float* mean = rms ? nullptr : m.mean;
    const int chunks = (int)((rows + kChunkRows - 1) / kChunkRows);
    float* pb = rms ? nullptr : m.hpart + (size_t)chunks * cols;
    handDxKernel<T>
        <<<(unsigned)rows, 256>>>((const T*)m.dy, (const T*)m.x, (const T*)m.w, mean, m.rstd, (T*)m.hdx, cols);
    handPartialKernel<T><<<dim3((cols + 31) / 32, chunks), dim3(32, 8)>>>((const T*)m.dy, (const T*)m.x, mean, m.rstd,
                                                                          m.hpart, pb, rows, cols);
    handFinishKernel<T><<<(cols + 255) / 256, 256>>>(m.hpart, pb, (T*)m.hdw, rms ? nullptr : (T*)m.hdb, chunks, cols);
}

template <typename T> static cudaError_t wkRun(Buffers& m, bool rms, long long rows, int cols, cudaStream_t st = 0) {
    if (rms)
        return warpkit::rowRmsNormBackward((const T*)m.dy, (const T*)m.x, (const T*)m.w, m.rstd, (T*)m.dx, (T*)m.dw,
                                           rows, cols, m.ws, &m.wsBytes, st);
    return warpkit::rowLayerNormBackward((const T*)m.dy, (const T*)m.x, (const T*)m.w, m.mean, m.rstd, (T*)m.dx,
                                         (T*)m.dw, (T*)m.db, rows, cols, m.ws, &m.wsBytes, st);
}

static float hostF(float v) { return v; }
static float hostF(__nv_bfloat16 v) { return __bfloat162float(v); }

/// The largest |a - b| over n elements at two device arrays, relative to the largest |b|.
template <typename T> static double relDiff(const void* a, const void* b, size_t n) {
    std::vector<T> ha(n), hb(n);
    BENCH_CUDA(cudaMemcpy(ha.data(), a, n * sizeof(T), cudaMemcpyDeviceToHost));
    BENCH_CUDA(cudaMemcpy(hb.data(), b, n * sizeof(T), cudaMemcpyDeviceToHost));
    double d = 0.0, big = 1e-30;
    for (size_t i = 0; i < n; ++i) {
        d = fmax(d, fabs((double)hostF(ha[i]) - (double)hostF(hb[i])));
        big = fmax(big, fabs((double)hostF(hb[i])));
    }
    return d / big;
}

/// One cell: the op, its copy ceiling and the hand-written peer, each a median of 30.
template <typename T>
static void cell(const char* tname, bool rms, FILE* csv, Buffers& m, long long rows, int cols, int* warns) {
    const size_t n = (size_t)rows * cols, es = sizeof(T);
    if (rms)
        BENCH_CUDA(warpkit::rowRmsNorm((const T*)m.x, (T*)m.dx, rows, cols, (const T*)m.w, 1e-6f, m.rstd, cols, cols));
    else
        BENCH_CUDA(warpkit::rowLayerNorm((const T*)m.x, (T*)m.dx, rows, cols, (const T*)m.w, (const T*)m.b, 1e-5f,
                                         m.mean, m.rstd, cols, cols));
    m.ws = nullptr; // the statistics come from the forward; the workspace from the size query
    BENCH_CUDA(wkRun<T>(m, rms, rows, cols));
    BENCH_CUDA(cudaMalloc(&m.ws, m.wsBytes));
    const double bytes = 3.0 * n * es + (double)cols * es * (rms ? 2 : 3) + (double)rows * (rms ? 4 : 8);
    const float cms =
        bench_median_ms([&] { copyKernel<T><<<1024, 256>>>((const T*)m.dy, (const T*)m.x, (T*)m.hdx, n); });
    const float ms = bench_median_ms([&] { BENCH_CUDA(wkRun<T>(m, rms, rows, cols)); });
    const float hms = bench_median_ms([&] { handRun<T>(m, rms, rows, cols); });
    double diff = relDiff<T>(m.dx, m.hdx, n);
    diff = fmax(diff, relDiff<T>(m.dw, m.hdw, cols));
    if (!rms) diff = fmax(diff, relDiff<T>(m.db, m.hdb, cols));
    const bool warn = diff > (es == 4 ? 1e-3 : 2e-2);
    *warns += warn;
    const double tb = bench_tbps(bytes, ms), ctb = bench_tbps(3.0 * n * es, cms);
    const char* op = rms ? "rms_norm_bwd" : "layer_norm_bwd";
    printf("| %-14s | %-4s | %5lld | %6d | %7.1f | %5.2f | %7.1f | %5.2fx | %7.1f | %5.2fx | %7.1e%s |\n", op, tname,
           rows, cols, ms * 1e3, tb, cms * 1e3, tb / ctb, hms * 1e3, hms / ms, diff, warn ? " WARN" : "");
    fprintf(csv, "%s,%s,%lld,%d,%.5f,%.0f,%.3f,%.5f,%.3f,%.3f,%.5f,%.3f,%.3g\n", op, tname, rows, cols, ms, bytes, tb,
            cms, ctb, tb / ctb, hms, hms / ms, diff);
    BENCH_CUDA(cudaFree(m.ws));
}

/// One cell of the mixed Add call (LayerNorm, dx, dr, dw, db), fp32 inputs from the fp32 sweep.
static void mixedCell(FILE* csv, Buffers& m, long long rows, int cols) {
    const size_t n = (size_t)rows * cols;
    const float* fw = (const float*)m.w;
    BENCH_CUDA(warpkit::rowLayerNorm((const float*)m.x, (float*)m.dx, rows, cols, fw, (const float*)m.b, 1e-5f, m.mean,
                                     m.rstd, cols, cols));
    auto run = [&] {
        return warpkit::rowLayerNormBackwardAdd((const float*)m.dy, (const float*)m.x, fw, m.mean, m.rstd, m.dres,
                                                (float*)m.dx, m.dr, (float*)m.dw, (float*)m.db, rows, cols, cols, cols,
                                                cols, cols, cols, m.ws, &m.wsBytes);
    };
    m.ws = nullptr;
    BENCH_CUDA(run());
    BENCH_CUDA(cudaMalloc(&m.ws, m.wsBytes));
    const double moved = 4.0 * n * 4 + 2.0 * n; // dy, x, dres read, dx written (fp32); dr written (bf16)
    const double bytes = moved + (double)cols * 4 * 3 + (double)rows * 8;
    const float cms = bench_median_ms(
        [&] { copyMixedKernel<<<1024, 256>>>((const float*)m.dy, (const float*)m.x, m.dres, (float*)m.hdx, m.dr, n); });
    const float ms = bench_median_ms([&] { BENCH_CUDA(run()); });
    const double tb = bench_tbps(bytes, ms), ctb = bench_tbps(moved, cms);
    printf("| %-14s | %-4s | %5lld | %6d | %7.1f | %5.2f | %7.1f | %5.2fx | %7s | %6s | %7s |\n", "add_ln_bwd_mix",
           "fp32", rows, cols, ms * 1e3, tb, cms * 1e3, tb / ctb, "-", "-", "-");
    fprintf(csv, "%s,%s,%lld,%d,%.5f,%.0f,%.3f,%.5f,%.3f,%.3f,,,\n", "add_ln_bwd_mix", "fp32", rows, cols, ms, bytes,
            tb, cms, ctb, tb / ctb);
    BENCH_CUDA(cudaFree(m.ws));
}

/// A training step's pattern: kChain LayerNorm backward calls (dx, dw, db) back to back, the time a
/// call on stream 0, on a stream of its own, and replayed from a CUDA graph of the kChain calls on
/// that stream: what a call costs beside its neighbours, the gaps between kernels included (the
/// final sum's launch, N5). The stream is a blocking one, so that bench_median_ms's events on stream
/// 0 wait for its work.
constexpr int kChain = 23; // GPT-2's norm backward calls a training step
template <typename T> static void chainCell(const char* tname, FILE* csv, Buffers& m, long long rows, int cols) {
    const size_t n = (size_t)rows * cols, es = sizeof(T);
    BENCH_CUDA(warpkit::rowLayerNorm((const T*)m.x, (T*)m.dx, rows, cols, (const T*)m.w, (const T*)m.b, 1e-5f, m.mean,
                                     m.rstd, cols, cols));
    m.ws = nullptr;
    BENCH_CUDA(wkRun<T>(m, false, rows, cols));
    BENCH_CUDA(cudaMalloc(&m.ws, m.wsBytes));
    cudaStream_t st;
    BENCH_CUDA(cudaStreamCreate(&st));
    auto chain = [&](cudaStream_t s) {
        for (int i = 0; i < kChain; ++i) BENCH_CUDA(wkRun<T>(m, false, rows, cols, s));
    };
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    BENCH_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    chain(st);
    BENCH_CUDA(cudaStreamEndCapture(st, &graph));
    BENCH_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    float ms[3];
    ms[0] = bench_median_ms([&] { chain(0); }) / kChain;
    ms[1] = bench_median_ms([&] { chain(st); }) / kChain;
    ms[2] = bench_median_ms([&] { BENCH_CUDA(cudaGraphLaunch(exec, st)); }) / kChain;
    const double bytes = 3.0 * n * es + (double)cols * es * 3 + (double)rows * 8;
    printf("| %-14s | %-4s | %5lld | %6d | %8.1f | %8.1f | %8.1f |\n", "layer_norm_bwd", tname, rows, cols, ms[0] * 1e3,
           ms[1] * 1e3, ms[2] * 1e3);
    const char* ops[3] = {"ln_bwd_chain_s0", "ln_bwd_chain_stream", "ln_bwd_chain_graph"};
    for (int k = 0; k < 3; ++k)
        fprintf(csv, "%s,%s,%lld,%d,%.5f,%.0f,%.3f,,,,,,\n", ops[k], tname, rows, cols, ms[k], bytes,
                bench_tbps(bytes, ms[k]));
    BENCH_CUDA(cudaGraphExecDestroy(exec));
    BENCH_CUDA(cudaGraphDestroy(graph));
    BENCH_CUDA(cudaStreamDestroy(st));
    BENCH_CUDA(cudaFree(m.ws));
}

template <typename T> static void sweep(const char* tname, FILE* csv, Buffers& m, int* warns) {
    bench_fill_random((T*)m.dy, kMaxElems, 11, -1.f, 1.f);
    bench_fill_random((T*)m.x, kMaxElems, 21, -3.f, 3.f);
    bench_fill_random((T*)m.w, kMaxCols, 31, 0.5f, 1.5f);
    bench_fill_random((T*)m.b, kMaxCols, 41, -0.5f, 0.5f);
    for (bool rms : {false, true})
        for (const Shape& s : kShapes) cell<T>(tname, rms, csv, m, s.rows, s.cols, warns);
    bench_progress("%s done", tname);
}

int main(int argc, char** argv) {
    bench_require_gpu();
    FILE* csv = bench_csv(argc, argv, "build/bench/norm_backward.csv",
                          "op,type,rows,cols,ms,bytes,tbps,copy_ms,copy_tbps,ratio_copy,hand_ms,ratio_hand,check");
    Buffers m = {};
    const size_t big = kMaxElems * sizeof(float), col = kMaxCols * sizeof(float);
    for (void** p : {&m.dy, &m.x, &m.dx, &m.hdx}) BENCH_CUDA(cudaMalloc(p, big));
    BENCH_CUDA(cudaMalloc(&m.dres, big));
    BENCH_CUDA(cudaMalloc(&m.dr, big / 2));
    for (void** p : {&m.w, &m.b, &m.dw, &m.db, &m.hdw, &m.hdb}) BENCH_CUDA(cudaMalloc(p, col));
    BENCH_CUDA(cudaMalloc(&m.mean, 16384 * sizeof(float)));
    BENCH_CUDA(cudaMalloc(&m.rstd, 16384 * sizeof(float)));
    BENCH_CUDA(cudaMalloc(&m.hpart, 2 * (16384 / kChunkRows) * 4096 * sizeof(float) + 2 * col)); // the largest
    printf("norm backward (warpkit/device/norm_backward.cuh): LayerNorm dx+dw+db, RMSNorm dx+dw; bandwidth counts dy, "
           "x, dx, w, statistics, dw, db; copy reads dy and x and writes dx; x hand = hand time / warpkit time\n\n");
    printf(
        "| op             | type |  rows |   cols |      us |  TB/s | copy us | x copy | hand us | x hand |   check |\n"
        "|----------------|------|-------|--------|---------|-------|---------|--------|---------|--------|---------|"
        "\n");
    int warns = 0;
    sweep<float>("fp32", csv, m, &warns);
    sweep<__nv_bfloat16>("bf16", csv, m, &warns);
    bench_fill_random((float*)m.dy, kMaxElems, 11, -1.f, 1.f); // fp32 inputs again for the mixed cells
    bench_fill_random((float*)m.x, kMaxElems, 21, -3.f, 3.f);
    bench_fill_random((float*)m.w, kMaxCols, 31, 0.5f, 1.5f);
    bench_fill_random((float*)m.b, kMaxCols, 41, -0.5f, 0.5f);
    bench_fill_random(m.dres, kMaxElems, 51, -1.f, 1.f);
    for (const Shape& s : {Shape{8192, 768}, Shape{8192, 1024}, Shape{16384, 4096}}) mixedCell(csv, m, s.rows, s.cols);
    printf("\n%d cells where warpkit and the hand-written peer disagree past the tolerance\n", warns);
    printf("\nLayerNorm dx+dw+db, %d calls back to back: us a call on stream 0, on a stream of its own, and "
           "replayed from a CUDA graph of the %d calls\n\n",
           kChain, kChain);
    printf("| chain          | type |  rows |   cols | stream 0 |   stream |    graph |\n"
           "|----------------|------|-------|--------|----------|----------|----------|\n");
    for (const Shape& s : {Shape{8192, 768}, Shape{8192, 1024}, Shape{256, 65536}}) {
        bench_fill_random((__nv_bfloat16*)m.dy, kMaxElems, 11, -1.f, 1.f);
        bench_fill_random((__nv_bfloat16*)m.x, kMaxElems, 21, -3.f, 3.f);
        bench_fill_random((__nv_bfloat16*)m.w, kMaxCols, 31, 0.5f, 1.5f);
        bench_fill_random((__nv_bfloat16*)m.b, kMaxCols, 41, -0.5f, 0.5f);
        chainCell<__nv_bfloat16>("bf16", csv, m, s.rows, s.cols);
    }
    bench_fill_random((float*)m.dy, kMaxElems, 11, -1.f, 1.f);
    bench_fill_random((float*)m.x, kMaxElems, 21, -3.f, 3.f);
    bench_fill_random((float*)m.w, kMaxCols, 31, 0.5f, 1.5f);
    bench_fill_random((float*)m.b, kMaxCols, 41, -0.5f, 0.5f);
    chainCell<float>("fp32", csv, m, 8192, 768);
    fclose(csv);
    for (void* p : {m.dy, m.x, m.dx, m.hdx, m.w, m.b, m.dw, m.db, m.hdw, m.hdb, (void*)m.mean, (void*)m.rstd,
                    (void*)m.hpart, (void*)m.dres, (void*)m.dr})
        BENCH_CUDA(cudaFree(p));
    return 0;
}
