// bench/softmax.cu: warpkit::rowSoftmax (include/warpkit/device/softmax.cuh, the public call) in
// three tables, each against a device-to-device copy of the same bytes timed in the same run:
//   1. anchors:   2^26 elements, cols 32 .. 262144, fp32 / fp16 / bf16 (33 cells); target >= 0.95x
//                 copy and above the better of torch and OneFlow in kPeer below (H100 figures of
//                 another day, recorded here; bench/torch_softmax.py times torch live).
//   2. odd:       lengths that are not a multiple of 16 bytes (primes, vocabulary sizes, path
//                 boundaries +-1), ~2^26 elements, each beside the nearest multiple of 8 columns;
//                 target >= 0.90x copy for cols >= 1000 and within 5% of the multiple of 8.
//   3. few rows:  rows 1, 8, 64 x vocabulary-length cols: time over the copy's; target <= 1.5x.
// Bandwidth counts one read and one write of the tensor. Prints the tables, writes CSV (argv[1]).
#include <warpkit/device/softmax.cuh>
#include "bench.cuh"

static const int kCols[] = {32, 128, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 262144};
// Better of torch and OneFlow per shape, TB/s, measured on an H100 (bf16 has torch only).
static const double kPeer[3][11] = {
    {2.89, 2.89, 2.89, 2.81, 2.76, 2.73, 2.41, 2.39, 1.98, 1.57, 1.43},
    {2.15, 2.22, 2.39, 2.12, 1.82, 1.87, 1.88, 1.95, 1.89, 1.46, 1.35},
    {1.27, 2.09, 2.27, 2.12, 1.57, 1.24, 0.98, 1.94, 1.84, 1.46, 1.36},
};
static const int kOdd[] = {197, 1000, 1023, 1025, 2047, 2049, 4097, 8191, 8193, 16383, 16385, 32767, 32769, 50257, 65537, 100003, 262143};
static const int kVocab[] = {32000, 50257, 128256, 151936};
static const int kFewRows[] = {1, 8, 64};
static const char* kTypeName[] = {"fp32", "fp16", "bf16"};

struct Ctx {
    FILE* csv;
    int misses;
};

/// Median ms of rowSoftmax on rows x cols of T (x, y hold at least that many elements).
template <typename T> static float time_softmax(const T* x, T* y, long long rows, int cols) {
    return bench_median_ms([&] { BENCH_CUDA(warpkit::rowSoftmax(x, y, rows, cols)); }, 5, 30);
}
/// Median ms of a device-to-device copy of `bytes`.
static float time_copy(void* dst, const void* src, size_t bytes) {
    return bench_median_ms([&] { BENCH_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice)); }, 5, 30);
}

template <typename T> static void anchors(int ti, Ctx* c, T* x, T* y, void* cx, void* cy) {
    const size_t n = (size_t)1 << 26, bytes = n * sizeof(T);
    const float cms = time_copy(cy, cx, bytes);
    const double copy = bench_tbps(2.0 * bytes, cms);
    for (int k = 0; k < 11; ++k) {
        const int cols = kCols[k];
        const long long rows = (long long)(n / cols);
        const float ms = time_softmax(x, y, rows, cols);
        const double tb = bench_tbps(2.0 * bytes, ms);
        const bool ok = tb >= 0.95 * copy && tb > kPeer[ti][k];
        c->misses += !ok;
        printf("| %-4s | %6d | %5.2f | %5.2f | %4.2f | %5.2f | %4.2fx | %-4s |\n", kTypeName[ti], cols, tb, copy, tb / copy,
               kPeer[ti][k], tb / kPeer[ti][k], ok ? "ok" : "MISS");
        fprintf(c->csv, "anchors,%s,%lld,%d,%.5f,%.3f,%.3f,%.3f,%.2f,\n", kTypeName[ti], rows, cols, ms, tb, copy, tb / copy,
                kPeer[ti][k]);
    }
    bench_progress("%s anchors done", kTypeName[ti]);
}

template <typename T> static void odd(int ti, Ctx* c, T* x, T* y, void* cx, void* cy) {
    const size_t n = (size_t)1 << 26;
    for (int cols : kOdd) {
        const int c8 = (cols + 4) / 8 * 8; // the nearest multiple of 8
        const long long rows = (long long)(n / (cols > c8 ? cols : c8));
        const size_t bytes = (size_t)rows * cols * sizeof(T), bytes8 = (size_t)rows * c8 * sizeof(T);
        const double copy = bench_tbps(2.0 * bytes, time_copy(cy, cx, bytes));
        const double tb = bench_tbps(2.0 * bytes, time_softmax(x, y, rows, cols));
        const double tb8 = bench_tbps(2.0 * bytes8, time_softmax(x, y, rows, c8));
        const bool ok = (cols < 1000 || tb >= 0.90 * copy) && tb >= 0.95 * tb8;
        c->misses += !ok;
        printf("| %-4s | %6d | %5.2f | %4.2f | %6d | %5.2f | %4.2f | %-4s |\n", kTypeName[ti], cols, tb, tb / copy, c8, tb8,
               tb / tb8, ok ? "ok" : "MISS");
        fprintf(c->csv, "odd,%s,%lld,%d,,%.3f,%.3f,%.3f,,%.3f\n", kTypeName[ti], rows, cols, tb, copy, tb / copy, tb8);
    }
    bench_progress("%s odd lengths done", kTypeName[ti]);
}

template <typename T> static void few(int ti, Ctx* c, T* x, T* y, void* cx, void* cy) {
    for (int rows : kFewRows)
        for (int cols : kVocab) {
            const size_t bytes = (size_t)rows * cols * sizeof(T);
            const float cms = time_copy(cy, cx, bytes);
            const float ms = time_softmax(x, y, rows, cols);
            const bool ok = ms <= 1.5f * cms;
            c->misses += !ok;
            printf("| %-4s | %4d | %6d | %7.2f | %7.2f | %4.2fx | %-4s |\n", kTypeName[ti], rows, cols, ms * 1e3, cms * 1e3, ms / cms,
                   ok ? "ok" : "MISS");
            fprintf(c->csv, "few,%s,%d,%d,%.5f,%.3f,%.3f,,,%.5f\n", kTypeName[ti], rows, cols, ms, bench_tbps(2.0 * bytes, ms),
                    bench_tbps(2.0 * bytes, cms), cms);
        }
    bench_progress("%s few rows done", kTypeName[ti]);
}

template <typename T> static void fill(T* x, size_t n, int ti) { bench_fill_random(x, n, 42 + ti, -8.f, 8.f); }

int main(int argc, char** argv) {
    bench_require_gpu();
    Ctx c{bench_csv(argc, argv, "build/bench/softmax.csv", "table,type,rows,cols,ms,tbps,copy_tbps,ratio_copy,peer_anchor_tbps,extra"), 0};
    const size_t n = (size_t)1 << 26, maxBytes = n * sizeof(float) + 64;
    void *x, *y, *cx, *cy;
    BENCH_CUDA(cudaMalloc(&x, maxBytes));
    BENCH_CUDA(cudaMalloc(&y, maxBytes));
    BENCH_CUDA(cudaMalloc(&cx, maxBytes));
    BENCH_CUDA(cudaMalloc(&cy, maxBytes));
    BENCH_CUDA(cudaMemset(cx, 1, maxBytes));
    printf("rowSoftmax (warpkit/device/softmax.cuh); bandwidth = one read + one write of the tensor; copy = D2D copy of the same bytes\n\n");
    printf("1. anchors: 2^26 elements. Target: >= 0.95x copy and above the anchors' better of torch/OneFlow\n");
    printf("| type |   cols |  TB/s |  copy | xcopy |  peer | xpeer | tgt  |\n|------|--------|-------|-------|-------|-------|-------|------|\n");
    fill((float*)x, n, 0);
    anchors<float>(0, &c, (float*)x, (float*)y, cx, cy);
    fill((__half*)x, n, 1);
    anchors<__half>(1, &c, (__half*)x, (__half*)y, cx, cy);
    fill((__nv_bfloat16*)x, n, 2);
    anchors<__nv_bfloat16>(2, &c, (__nv_bfloat16*)x, (__nv_bfloat16*)y, cx, cy);
    const int m1 = c.misses;
    printf("\n2. odd lengths (~2^26 elements). Target: >= 0.90x copy for cols >= 1000, >= 0.95x the nearest multiple of 8\n");
    printf("| type |   cols |  TB/s | xcopy | cols8  | TB/s8 | x8   | tgt  |\n|------|--------|-------|-------|--------|-------|------|------|\n");
    fill((float*)x, n, 3);
    odd<float>(0, &c, (float*)x, (float*)y, cx, cy);
    fill((__half*)x, n, 4);
    odd<__half>(1, &c, (__half*)x, (__half*)y, cx, cy);
    fill((__nv_bfloat16*)x, n, 5);
    odd<__nv_bfloat16>(2, &c, (__nv_bfloat16*)x, (__nv_bfloat16*)y, cx, cy);
    const int m2 = c.misses - m1;
    printf("\n3. few long rows. Target: <= 1.5x the time of a copy of the same bytes\n");
    printf("| type | rows |   cols |   us    | copy us | xcopy | tgt  |\n|------|------|--------|---------|---------|-------|------|\n");
    fill((float*)x, n, 6);
    few<float>(0, &c, (float*)x, (float*)y, cx, cy);
    fill((__half*)x, n, 7);
    few<__half>(1, &c, (__half*)x, (__half*)y, cx, cy);
    fill((__nv_bfloat16*)x, n, 8);
    few<__nv_bfloat16>(2, &c, (__nv_bfloat16*)x, (__nv_bfloat16*)y, cx, cy);
    const int m3 = c.misses - m1 - m2;
    printf("\nmisses: anchors %d of 33, odd lengths %d of %d, few rows %d of %d\n", m1, m2, 3 * (int)(sizeof kOdd / sizeof kOdd[0]),
           m3, 3 * 3 * 4);
    fclose(c.csv);
    BENCH_CUDA(cudaFree(x));
    BENCH_CUDA(cudaFree(y));
    BENCH_CUDA(cudaFree(cx));
    BENCH_CUDA(cudaFree(cy));
    return 0;
}
