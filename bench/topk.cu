// bench/topk.cu: rowTopK (and rowSample, the router shape) against a read of the same bytes and
// against CUB's segmented radix sort, timed in the same run.
//
// Cells: rows {1, 8, 64, 512, 4096} x cols {32000, 50257, 128256, 151936, 262144} x k {1, 8, 50,
// 256, 1024}, fp32 and bf16; rows >= 512 with k = 1024 are skipped (the grid's slowest cells, not a
// target). Per cell: warpkit's rowTopK (workspace form), a read of the rows' bytes (a kernel that
// loads every 16 bytes once and keeps a running xor: the ceiling), their ratio (read time / topk
// time: 1.0 = at the read's bandwidth), and rowSample with the same k (top-p 0.9) over rowTopK.
// CUB: cub::DeviceSegmentedRadixSort::SortPairsDescending of the rows (keys and column indices),
// once per (rows, cols, type) for rows x cols <= 2^24 (it sorts whole rows, whatever k). The torch
// peers (torch.topk, torch.sort then slice) are in bench/torch_topk.py.
// Short rows: rows {16384, 256} x cols {128, 1024, 4096} x k {1, 8, 32}, fp32 and bf16 (the warp
// kernels, rules W1-W4, and the filter past them). Router: tokens {1, 256, 16384} x 128 experts,
// k = 8 (rule W2). Each line ends with the plan's kernel rule; with k = 1 a line "am" times
// rowArgMax (the same answer by rule A1 or A2, device/detail/topk_plan.cuh).
// Targets (issue 28): many rows (>= 64) at >= 0.8x the read for k <= 256; one row <= 10 us; the
// router's 16384 tokens at >= 0.8x the read.
// Ordered rows: rows {64, 512, 4096} x cols {32000, 128256}, fp32 and bf16, random / ascending /
// descending / sawtooth / constant / NaN-laden / zero rows: rowTopK k = 1, rowArgMax and rowArgMin
// against the read (k = 1's cost should not depend on the data's order; CSV k column 1, rule "<call>
// <order>"; rows of zeros take the filter's exact fold every round: expected slower).
// Arg (many short rows, issue 31): rows 16384 x cols {512, 1024, 2048, 4096}, fp32 and bf16, random
// rows in [-8, 8), rows of zeros and NaN-laden rows: rowArgMax and rowArgMin (int64 indices, no
// values: torch.argmax's outputs) against the read; each line ends with the A rule and the row rule.
// Many (only when named): the grid's cells of 64, 512 and 4096 rows with k {1, 8, 50, 256}, rowTopK
// and the read only (sample/topk 0, cub-sort -1).
// Few (only when named): the grid's cells of 1 and 8 rows with k {1, 8, 50, 256}, rowTopK and the
// read only (the one-row latency target: <= 10 us).
// Usage: build/bench/topk [out.csv] [grid] [many] [few] [short] [router] [ordered] [arg] [rows=N]   (tables to run;
// none named: all but many and few; rows=N keeps only the many / few cells of N rows)
#include "bench.cuh"
#include <warpkit/device/topk.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

namespace {

/// The ceiling: every 16 bytes of the input read once (xor kept so the loads stay).
__global__ void readKernel(const uint4* p, size_t n, unsigned* sink) {
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const uint4 v = __ldcs(p + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) *sink = acc;
}

__global__ void iotaRows(int* idx, long long rows, int cols) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < rows * cols;
         i += (long long)gridDim.x * blockDim.x)
        idx[i] = (int)(i % cols);
}

/// Row r's column c by pattern: 1 ascending (c), 2 descending (cols - c), 3 sawtooth (c % 997), 4
/// constant (1.5), 5 NaN-laden (NaN every 7, else c / 37), else +0.0; converted to T.
template <typename T> __global__ void fillOrdered(T* x, long long rows, int cols, int pattern) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < rows * cols;
         i += (long long)gridDim.x * blockDim.x) {
        const int c = (int)(i % cols);
        const float nan = __int_as_float(0x7fc00000);
        x[i] = T(pattern == 1   ? (float)c
                 : pattern == 2 ? (float)(cols - c)
                 : pattern == 3 ? (float)(c % 997)
                 : pattern == 4 ? 1.5f
                 : pattern == 5 ? (c % 7 == 3 ? nan : (float)(c / 37))
                                : 0.f);
    }
}

/// The ordered-rows table's cell: k = 1's three calls on random rows and each fillOrdered pattern.
template <typename T>
void orderedCell(FILE* csv, const char* tname, long long rows, int cols, void* ws, size_t wsBytes, unsigned* sink) {
    const size_t n = (size_t)rows * cols;
    T *x, *v;
    long long* idx;
    BENCH_CUDA(cudaMalloc(&x, n * sizeof(T) + 16));
    BENCH_CUDA(cudaMalloc(&v, (size_t)rows * sizeof(T)));
    BENCH_CUDA(cudaMalloc(&idx, (size_t)rows * sizeof(long long)));
    const float readMs =
        bench_median_ms([&] { readKernel<<<132 * 8, 256>>>((const uint4*)x, n * sizeof(T) / 16, sink); });
    const char* orders[] = {"random", "ascending", "descending", "sawtooth", "constant", "NaN-laden", "zeros"};
    for (int o = 0; o < 7; ++o) {
        if (o == 0) bench_fill_random(x, n, 0x70b + rows * 7 + cols, -8.f, 8.f);
        else fillOrdered<<<1024, 256>>>(x, rows, cols, o);
        size_t need = 0;
        BENCH_CUDA(warpkit::rowTopK(x, v, idx, rows, cols, 1, true, cols, nullptr, &need));
        if (need > wsBytes) {
            fprintf(stderr, "workspace too small\n");
            exit(1);
        }
        const float ms[3] = {
            bench_median_ms([&] { warpkit::rowTopK(x, v, idx, rows, cols, 1, true, cols, ws, &need); }),
            bench_median_ms([&] { warpkit::rowArgMax(x, v, idx, rows, cols, cols); }),
            bench_median_ms([&] { warpkit::rowArgMin(x, v, idx, rows, cols, cols); })};
        const char* calls[] = {"rowTopK-k1", "rowArgMax", "rowArgMin"};
        for (int c = 0; c < 3; ++c) {
            printf("%-5s %5lld %7d %-10s %-10s %9.1f %9.1f %6.2fx\n", tname, rows, cols, orders[o], calls[c],
                   ms[c] * 1e3, readMs * 1e3, readMs / ms[c]);
            fprintf(csv, "%s,%lld,%d,1,%.3f,%.3f,%.4f,,,%s %s\n", tname, rows, cols, ms[c] * 1e3, readMs * 1e3,
                    readMs / ms[c], calls[c], orders[o]);
        }
    }
    for (void* b : {(void*)x, (void*)v, (void*)idx}) BENCH_CUDA(cudaFree(b));
}

/// The arg table's cell: rowArgMax and rowArgMin (int64 indices, no values) on random rows, rows of
/// zeros and NaN-laden rows (fillOrdered's patterns 6 and 5), against the read of the same bytes.
template <typename T> void argCell(FILE* csv, const char* tname, long long rows, int cols, unsigned* sink) {
    const size_t n = (size_t)rows * cols;
    T* x;
    long long* idx;
    BENCH_CUDA(cudaMalloc(&x, n * sizeof(T) + 16));
    BENCH_CUDA(cudaMalloc(&idx, (size_t)rows * sizeof(long long)));
    const float readMs =
        bench_median_ms([&] { readKernel<<<132 * 8, 256>>>((const uint4*)x, n * sizeof(T) / 16, sink); });
    int dev = 0, sm = 0;
    BENCH_CUDA(cudaGetDevice(&dev));
    BENCH_CUDA(cudaDeviceGetAttribute(&sm, cudaDevAttrMultiProcessorCount, dev));
    const warpkit::detail::TopKArgRule& rule = warpkit::detail::topkArgRule(rows, cols, (int)sizeof(T), sm);
    const char* arule = rule.id;
    const char* rrule = "";
    warpkit::detail::rowPlanFor(
        warpkit::detail::RowQuery{rule.outputPlans ? warpkit::detail::RowClassOutputs : warpkit::detail::RowClassReduce,
                                  (int)sizeof(T), 4, rows, cols, sm, true, true, false},
        &rrule);
    const char* orders[] = {"random", "zeros", "NaN-laden"};
    const int patterns[] = {0, 6, 5};
    for (int o = 0; o < 3; ++o) {
        if (o == 0) bench_fill_random(x, n, 0x31a + rows * 7 + cols, -8.f, 8.f);
        else fillOrdered<<<1024, 256>>>(x, rows, cols, patterns[o]);
        const float ms[2] = {bench_median_ms([&] { warpkit::rowArgMax(x, (T*)nullptr, idx, rows, cols, cols); }),
                             bench_median_ms([&] { warpkit::rowArgMin(x, (T*)nullptr, idx, rows, cols, cols); })};
        const char* calls[] = {"rowArgMax", "rowArgMin"};
        for (int c = 0; c < 2; ++c) {
            printf("%-5s %5lld %5d %-9s %-9s %9.2f %9.2f %6.2fx  %s %s\n", tname, rows, cols, orders[o], calls[c],
                   ms[c] * 1e3, readMs * 1e3, readMs / ms[c], arule, rrule);
            fprintf(csv, "%s,%lld,%d,1,%.3f,%.3f,%.4f,,,%s %s %s %s\n", tname, rows, cols, ms[c] * 1e3, readMs * 1e3,
                    readMs / ms[c], calls[c], orders[o], arule, rrule);
        }
    }
    for (void* b : {(void*)x, (void*)idx}) BENCH_CUDA(cudaFree(b));
}

/// One (type, rows, cols) cell: rowTopK for each k against the read; `peers`: also CUB's sort and rowSample.
template <typename T> void cell(FILE* csv, const char* tname, long long rows, int cols, const int* ks, int nk, void* ws,
                                size_t wsBytes, unsigned* sink, float* cubMs, bool peers = true) {
    const size_t n = (size_t)rows * cols;
    T* x;
    BENCH_CUDA(cudaMalloc(&x, n * sizeof(T) + 16));
    bench_fill_random(x, n, 0x70b + rows * 7 + cols, -8.f, 8.f);
    T* v;
    long long* idx;
    int* tok;
    BENCH_CUDA(cudaMalloc(&v, (size_t)rows * 1024 * sizeof(T)));
    BENCH_CUDA(cudaMalloc(&idx, (size_t)rows * 1024 * sizeof(long long)));
    BENCH_CUDA(cudaMalloc(&tok, (size_t)rows * sizeof(int)));
    const size_t vecs = n * sizeof(T) / 16;
    const float readMs = bench_median_ms([&] { readKernel<<<132 * 8, 256>>>((const uint4*)x, vecs, sink); });
    *cubMs = -1.f;
    if (peers && n <= (1u << 24)) { // CUB's segmented sort of whole rows (independent of k)
        T* keysOut;
        int *vin, *vout;
        long long* offs;
        BENCH_CUDA(cudaMalloc(&keysOut, n * sizeof(T)));
        BENCH_CUDA(cudaMalloc(&vin, n * sizeof(int)));
        BENCH_CUDA(cudaMalloc(&vout, n * sizeof(int)));
        BENCH_CUDA(cudaMalloc(&offs, (rows + 1) * sizeof(long long)));
        std::vector<long long> ho(rows + 1);
        for (long long r = 0; r <= rows; ++r) ho[r] = r * cols;
        BENCH_CUDA(cudaMemcpy(offs, ho.data(), ho.size() * sizeof(long long), cudaMemcpyHostToDevice));
        iotaRows<<<1024, 256>>>(vin, rows, cols);
        size_t tmpBytes = 0;
        BENCH_CUDA(cub::DeviceSegmentedRadixSort::SortPairsDescending(nullptr, tmpBytes, x, keysOut, vin, vout, (int)n,
                                                                      (int)rows, offs, offs + 1));
        void* tmp;
        BENCH_CUDA(cudaMalloc(&tmp, tmpBytes));
        *cubMs = bench_median_ms(
            [&] {
                cub::DeviceSegmentedRadixSort::SortPairsDescending(tmp, tmpBytes, x, keysOut, vin, vout, (int)n,
                                                                   (int)rows, offs, offs + 1);
            },
            2, 10);
        for (void* b : {(void*)keysOut, (void*)vin, (void*)vout, (void*)offs, tmp}) BENCH_CUDA(cudaFree(b));
    }
    for (int i = 0; i < nk; ++i) {
        const int k = ks[i];
        if (rows >= 512 && k == 1024) continue;
        size_t need = 0, needS = 0;
        BENCH_CUDA(warpkit::rowTopK(x, v, idx, rows, cols, k, true, cols, nullptr, &need));
        BENCH_CUDA(warpkit::rowSample(x, tok, rows, cols, 1.f, k, 0.9f, 0.f, 1ull, 0ull, cols, nullptr, &needS));
        if (need > wsBytes || needS > wsBytes) {
            fprintf(stderr, "workspace too small\n");
            exit(1);
        }
        const float ms = bench_median_ms([&] { warpkit::rowTopK(x, v, idx, rows, cols, k, true, cols, ws, &need); });
        const float sms = peers ? bench_median_ms([&] {
            warpkit::rowSample(x, tok, rows, cols, 1.f, k, 0.9f, 0.f, 1ull, 0ull, cols, ws, &needS);
        })
                                : 0.f;
        int dev = 0, sm = 0;
        BENCH_CUDA(cudaGetDevice(&dev));
        BENCH_CUDA(cudaDeviceGetAttribute(&sm, cudaDevAttrMultiProcessorCount, dev));
        const char* rule = warpkit::detail::topkPlan(rows, cols, k, sm, true, (int)sizeof(T), true).kernelRule;
        printf("%-5s %5lld %7d %5d %9.1f %9.1f %6.2fx %8.2fx %9.1f  %s\n", tname, rows, cols, k, ms * 1e3, readMs * 1e3,
               readMs / ms, sms / ms, *cubMs * 1e3, rule);
        fprintf(csv, "%s,%lld,%d,%d,%.3f,%.3f,%.4f,%.3f,%.3f,%s\n", tname, rows, cols, k, ms * 1e3, readMs * 1e3,
                readMs / ms, sms * 1e3, *cubMs * 1e3, rule);
        if (k == 1) { // rowArgMax: the same answer by one read a row (rules A1, A2)
            const float ams = bench_median_ms([&] { warpkit::rowArgMax(x, v, idx, rows, cols, cols); });
            printf("%-5s %5lld %7d %5s %9.1f %9.1f %6.2fx %8s %9s  %s\n", tname, rows, cols, "am", ams * 1e3,
                   readMs * 1e3, readMs / ams, "-", "-", "rowArgMax");
            fprintf(csv, "%s,%lld,%d,1,%.3f,%.3f,%.4f,,,rowArgMax\n", tname, rows, cols, ams * 1e3, readMs * 1e3,
                    readMs / ams);
        }
    }
    for (void* b : {(void*)x, (void*)v, (void*)idx, (void*)tok}) BENCH_CUDA(cudaFree(b));
}

} // namespace

/// Whether the rows=N option (rowsOpt, NULL when not given) keeps the many / few cells of `rows`.
static bool rows_wanted(const char* rowsOpt, long long rows) { return rowsOpt == NULL || atoll(rowsOpt) == rows; }

int main(int argc, char** argv) {
    bench_require_gpu();
    const char* rowsOpt = bench_option(argc, argv, "rows"); // rows=N: the many / few cells of N rows
    FILE* csv = bench_csv(argc, argv, "build/bench/topk.csv",
                          "type,rows,cols,k,topk_us,read_us,read_over_topk,sample_us,cub_sort_us,rule");
    const long long rowsList[] = {1, 8, 64, 512, 4096};
    const int colsList[] = {32000, 50257, 128256, 151936, 262144};
    const int ks[] = {1, 8, 50, 256, 1024};
    size_t wsBytes = 64u << 20;
    void* ws;
    unsigned* sink;
    BENCH_CUDA(cudaMalloc(&ws, wsBytes));
    BENCH_CUDA(cudaMalloc(&sink, 4));
    const char* head = "type   rows    cols     k  topk(us)  read(us)  read/topk sample/topk  cub-sort(us)  rule\n";
    float cub;
    if (bench_wants(argc, argv, "grid")) {
        printf("grid (issue 28's cells)\n%s", head);
        for (int t = 0; t < 2; ++t)
            for (long long rows : rowsList)
                for (int cols : colsList) {
                    bench_progress("%s rows=%lld cols=%d", t ? "bf16" : "fp32", rows, cols);
                    if (t == 0) cell<float>(csv, "fp32", rows, cols, ks, 5, ws, wsBytes, sink, &cub);
                    else cell<__nv_bfloat16>(csv, "bf16", rows, cols, ks, 5, ws, wsBytes, sink, &cub);
                }
    }
    if (argc > 2 && bench_wants(argc, argv, "many")) { // a subset of the grid: only when named
        printf("many rows (the grid's cells of 64+ rows, k <= 256; no peers)\n%s", head);
        const int manyK[] = {1, 8, 50, 256};
        for (int t = 0; t < 2; ++t)
            for (long long rows : {64LL, 512LL, 4096LL})
                for (int cols : colsList) {
                    if (!rows_wanted(rowsOpt, rows)) continue;
                    bench_progress("many %s rows=%lld cols=%d", t ? "bf16" : "fp32", rows, cols);
                    if (t == 0) cell<float>(csv, "fp32", rows, cols, manyK, 4, ws, wsBytes, sink, &cub, false);
                    else cell<__nv_bfloat16>(csv, "bf16", rows, cols, manyK, 4, ws, wsBytes, sink, &cub, false);
                }
    }
    if (argc > 2 && bench_wants(argc, argv, "few")) { // a subset of the grid: only when named
        printf("few rows (the grid's cells of 1 and 8 rows, k <= 256; no peers)\n%s", head);
        const int fewK[] = {1, 8, 50, 256};
        for (int t = 0; t < 2; ++t)
            for (long long rows : {1LL, 8LL})
                for (int cols : colsList) {
                    if (!rows_wanted(rowsOpt, rows)) continue;
                    bench_progress("few %s rows=%lld cols=%d", t ? "bf16" : "fp32", rows, cols);
                    if (t == 0) cell<float>(csv, "fp32", rows, cols, fewK, 4, ws, wsBytes, sink, &cub, false);
                    else cell<__nv_bfloat16>(csv, "bf16", rows, cols, fewK, 4, ws, wsBytes, sink, &cub, false);
                }
    }
    if (bench_wants(argc, argv, "short")) {
        printf("short rows (warp kernels W1-W4; the filter past them)\n%s", head);
        const int shortK[] = {1, 8, 32};
        for (int t = 0; t < 2; ++t)
            for (long long rows : {16384LL, 256LL})
                for (int cols : {128, 1024, 4096}) {
                    bench_progress("short %s rows=%lld cols=%d", t ? "bf16" : "fp32", rows, cols);
                    if (t == 0) cell<float>(csv, "fp32", rows, cols, shortK, 3, ws, wsBytes, sink, &cub);
                    else cell<__nv_bfloat16>(csv, "bf16", rows, cols, shortK, 3, ws, wsBytes, sink, &cub);
                }
    }
    if (bench_wants(argc, argv, "router")) {
        printf("router (128 experts, k = 8)\n%s", head);
        const int k8[] = {8};
        for (long long tokens : {1LL, 256LL, 16384LL})
            cell<float>(csv, "fp32", tokens, 128, k8, 1, ws, wsBytes, sink, &cub);
    }
    if (bench_wants(argc, argv, "ordered")) {
        printf("ordered rows (k = 1)\ntype   rows    cols rows-are   call        time(us)  read(us)  read/call\n");
        for (int t = 0; t < 2; ++t)
            for (long long rows : {64LL, 512LL, 4096LL})
                for (int cols : {32000, 128256}) {
                    bench_progress("ordered %s rows=%lld cols=%d", t ? "bf16" : "fp32", rows, cols);
                    if (t == 0) orderedCell<float>(csv, "fp32", rows, cols, ws, wsBytes, sink);
                    else orderedCell<__nv_bfloat16>(csv, "bf16", rows, cols, ws, wsBytes, sink);
                }
    }
    if (bench_wants(argc, argv, "arg")) {
        printf("arg (many short rows, issue 31)\ntype   rows  cols rows-are  call       time(us)  read(us) read/call  "
               "rules\n");
        for (int t = 0; t < 2; ++t)
            for (int cols : {512, 1024, 2048, 4096}) {
                bench_progress("arg %s rows=16384 cols=%d", t ? "bf16" : "fp32", cols);
                if (t == 0) argCell<float>(csv, "fp32", 16384, cols, sink);
                else argCell<__nv_bfloat16>(csv, "bf16", 16384, cols, sink);
            }
    }
    fclose(csv);
    BENCH_CUDA(cudaFree(ws));
    BENCH_CUDA(cudaFree(sink));
    return 0;
}
