// bench/softmax.cu: warpkit::rowSoftmax (include/warpkit/device/softmax.cuh, the public call) in
// three tables, each against a device-to-device copy of the same bytes timed in the same run:
//   1. anchors:   2^26 elements, cols 32 .. 262144, fp32 / fp16 / bf16 (33 cells); target >= 0.95x
//                 copy and above the better of torch and OneFlow in kPeer below (H100 figures of
//                 another day, recorded here; bench/torch_softmax.py times torch live).
//   2. odd:       lengths that are not a multiple of 16 bytes (primes, vocabulary sizes, path
//                 boundaries +-1), ~2^26 elements, each beside the nearest multiple of 8 columns;
//                 target >= 0.90x copy for cols >= 1000 and within 5% of the multiple of 8.
//   3. few rows:  rows 1, 2, 4, 8, 64 x vocabulary-length cols: time over the copy's; target <= 1.5x.
//   4. short:     every length 1 .. 256 in fp32 and bf16, rows = 2^26 / cols, each timed alternately
//                 with a copy of the same bytes (3 warm-up and 15 timed rounds: about 5 s for the 512
//                 cells on an H100), printed as x copy 16 lengths a line, then the lengths >= 32 below
//                 0.90x copy (the target) as a miss list; and 1,048,576 x 77 rows in fp32 and bf16.
// Bandwidth counts one read and one write of the tensor. Prints the tables, writes CSV (argv[1]).
//   3b. fewshape (only when named): each few-rows cell's plan beside the block path's compiled shapes
//                 on the fewest blocks that hold the row and on 16, an empty launch, a shape copy.
// Tables named after the CSV path run alone: `build/bench/softmax out.csv short few`.
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
static const int kFewRows[] = {1, 2, 4, 8, 64};
static const int kShortMax = 256;              // table 4: every length 1 .. kShortMax
static const long long kShortRows77 = 1 << 20; // table 4's extra shape: 1,048,576 x 77
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

/// Table 3b (only when named, "fewshape"): each few-rows cell's plan beside the block path's
/// compiled shapes (threads x values a thread) on the fewest blocks that hold the row and on 16
/// (kClusterMaxBlocks), each launched directly (rowBlockShapes: no fallback; "-" where it cannot
/// run), with the call, a copy of the same bytes, an empty kernel on the plan's grid with and
/// without its clusters, and a copy in the plan's shape (every load issued, then every store; no
/// reductions, no exchange): what the launch, the shape's data movement and the rest each cost.
__global__ void few_empty_kernel() {}
template <int Threads, int C> __global__ void __launch_bounds__(Threads)
    few_shape_copy_kernel(const uint4* x, uint4* y, int vecs, int slice, int nb) {
    const long long row = blockIdx.x / nb;
    const int first = (int)(blockIdx.x % nb) * slice, end = first + slice < vecs ? first + slice : vecs;
    uint4 v[C];
#pragma unroll
    for (int k = 0; k < C; ++k)
        if (first + (int)threadIdx.x + k * Threads < end) v[k] = x[row * vecs + first + threadIdx.x + k * Threads];
#pragma unroll
    for (int k = 0; k < C; ++k)
        if (first + (int)threadIdx.x + k * Threads < end) y[row * vecs + first + threadIdx.x + k * Threads] = v[k];
}
/// Median ms of `kern` (no arguments but args) on rows x p.blocks blocks of p.threads, clusters of
/// p.blocks when `cluster`; -1 when it cannot launch.
template <typename K, typename... A>
static float time_grid(K kern, long long rows, const warpkit::detail::RowPlan& p, bool cluster, A... args) {
    BENCH_CUDA(cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    warpkit::detail::RowLaunch l;
    warpkit::detail::rowLaunchConfig(&l, rows * p.blocks, p.threads, 0, cluster && p.blocks > 1 ? p.blocks : 0,
                                     p.blocks > 8, 0);
    if (cudaLaunchKernelEx(&l.cfg, kern, args...) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
        (void)cudaGetLastError();
        return -1.f;
    }
    return bench_median_ms([&] { BENCH_CUDA(cudaLaunchKernelEx(&l.cfg, kern, args...)); });
}
template <int Threads, int C> static float time_shape_copy(const void* x, void* y, long long rows, int cols, int V,
                                                           const warpkit::detail::RowPlan& p) {
    return time_grid(few_shape_copy_kernel<Threads, C>, rows, p, true, (const uint4*)x, (uint4*)y, cols / V, p.slice,
                     p.blocks);
}
/// Median ms of plan p's block kernel (its shape among the compiled ones), -1 when it cannot run.
template <typename T>
static float time_block_plan(const T* x, T* y, long long rows, int cols, const warpkit::detail::RowPlan& p) {
    using namespace warpkit::detail;
    int dev = 0;
    DeviceProps d;
    BENCH_CUDA(currentDevice(&dev, &d));
    const SoftmaxRows<T, warpkit::SoftmaxPlain> r{x, y, cols, cols, false};
    const bool aligned = rowAligned(r, cols);
    auto go = [&] {
        return aligned
                   ? rowBlockShapes<SoftmaxRows<T, warpkit::SoftmaxPlain>, true>(p, r, rows, cols, d.clusters, dev, 0)
                   : rowBlockShapes<SoftmaxRows<T, warpkit::SoftmaxPlain>, false>(p, r, rows, cols, d.clusters, dev, 0);
    };
    if (!rowPlanCompiled(RowClassSoftmax, (int)sizeof(T), 1, false, p) || go() != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess) {
        (void)cudaGetLastError();
        return -1.f;
    }
    return bench_median_ms([&] { BENCH_CUDA(go()); });
}
static const int kFewShapes[4][2] = {{256, 16}, {512, 16}, {1024, 16}, {512, 32}}; // threads, values a thread
template <typename T> static void few_shapes(int ti, Ctx* c, T* x, T* y, void* cx, void* cy) {
    using namespace warpkit::detail;
    int dev = 0;
    DeviceProps d;
    BENCH_CUDA(currentDevice(&dev, &d));
    constexpr int V = 16 / (int)sizeof(T);
    for (int rows : kFewRows)
        for (int cols : kVocab) {
            const char* id = "";
            const RowPlan p = rowPlanFor(rowSoftmaxQuery((int)sizeof(T), rows, cols, d.sms, d.clusters), &id);
            if (p.path != RowBlock) continue;
            const long long vecs = cols / V;
            const size_t bytes = (size_t)rows * cols * sizeof(T);
            const float call = time_softmax(x, y, rows, cols), cms = time_copy(cy, cx, bytes);
            const float e1 = time_grid(few_empty_kernel, rows, p, false),
                        ec = time_grid(few_empty_kernel, rows, p, true);
            float sc = -1.f;
            if (p.threads == 256 && p.chunks == 16 / V) sc = time_shape_copy<256, 16 / V>(x, y, rows, cols, V, p);
            if (p.threads == 512 && p.chunks == 16 / V) sc = time_shape_copy<512, 16 / V>(x, y, rows, cols, V, p);
            if (p.threads == 1024 && p.chunks == 16 / V) sc = time_shape_copy<1024, 16 / V>(x, y, rows, cols, V, p);
            if (p.threads == 512 && p.chunks == 32 / V) sc = time_shape_copy<512, 32 / V>(x, y, rows, cols, V, p);
            char plan[32];
            snprintf(plan, sizeof plan, "%s %dx%dx%d", id, p.blocks, p.threads, p.chunks * V);
            printf("| %-4s | %4d | %6d | %-14s | %5.2f | %5.2f | %5.2f | %5.2f | %5.2f |", kTypeName[ti], rows, cols,
                   plan, call * 1e3, cms * 1e3, e1 * 1e3, ec * 1e3, sc * 1e3);
            fprintf(c->csv, "fewshape,%s,%d,%d,%.5f,,,,,%s %dx%dx%d copy %.5f empty %.5f %.5f scopy %.5f",
                    kTypeName[ti], rows, cols, call, id, p.blocks, p.threads, p.chunks * V, cms, e1, ec, sc);
            for (const auto& s : kFewShapes) {
                const int C = rowValuesChunks(s[1], V);
                const long long least = (vecs + (long long)s[0] * C - 1) / ((long long)s[0] * C);
                for (int k = 0; k < 2; ++k) {
                    const long long n = k == 0 ? least : warpkit::kClusterMaxBlocks;
                    if (n > warpkit::kClusterMaxBlocks || (k == 1 && least >= warpkit::kClusterMaxBlocks)) {
                        printf("      -   |");
                        continue;
                    }
                    const RowPlan q = rowBlockPlan(vecs, n, s[0], C);
                    const float ms = time_block_plan(x, y, rows, cols, q);
                    const bool mine = q.blocks == p.blocks && q.threads == p.threads && q.chunks == p.chunks;
                    if (ms < 0) printf(" %2d     - %c|", q.blocks, mine ? '*' : ' ');
                    else printf(" %2d %5.2f%c|", q.blocks, ms * 1e3, mine ? '*' : ' ');
                    fprintf(c->csv, " %dx%dx%d %.5f", q.blocks, s[0], s[1], ms);
                }
            }
            printf("\n");
            fprintf(c->csv, "\n");
        }
    bench_progress("%s few-rows shapes done", kTypeName[ti]);
}

template <typename T> static void fill(T* x, size_t n, int ti) { bench_fill_random(x, n, 42 + ti, -8.f, 8.f); }

/// Runs a table on fp32, fp16 and bf16 in turn: fills x with n elements of the type (seeds seed ..
/// seed + 2), then calls table(x as that type, the type's index in kTypeName).
template <typename F> static void each_type(void* x, size_t n, int seed, F table) {
    fill((float*)x, n, seed);
    table((float*)x, 0);
    fill((__half*)x, n, seed + 1);
    table((__half*)x, 1);
    fill((__nv_bfloat16*)x, n, seed + 2);
    table((__nv_bfloat16*)x, 2);
}

/// One short-table cell: rowSoftmax on rows x cols of T and a copy of the same bytes, timed
/// alternately (3 warm-up and 15 timed rounds); writes its CSV row and returns x copy.
template <typename T>
static double short_cell(int ti, Ctx* c, T* x, T* y, void* cx, void* cy, long long rows, int cols) {
    const size_t bytes = (size_t)rows * cols * sizeof(T);
    float ms = 0.f, cms = 0.f;
    bench_pair_median_ms([&] { BENCH_CUDA(cudaMemcpyAsync(cy, cx, bytes, cudaMemcpyDeviceToDevice)); },
                         [&] { BENCH_CUDA(warpkit::rowSoftmax(x, y, rows, cols)); }, &cms, &ms, 3, 15);
    const double tb = bench_tbps(2.0 * bytes, ms), copy = bench_tbps(2.0 * bytes, cms);
    fprintf(c->csv, "short,%s,%lld,%d,%.5f,%.3f,%.3f,%.3f,,%.5f\n", kTypeName[ti], rows, cols, ms, tb, copy, tb / copy,
            cms);
    return tb / copy;
}

/// Table 4 for one type: x copy of every length 1 .. kShortMax (rows = 2^26 / cols), 16 lengths a
/// line, then the lengths >= 32 below 0.90x copy; returns how many of those miss.
template <typename T> static int short_rows(int ti, Ctx* c, T* x, T* y, void* cx, void* cy) {
    const size_t n = (size_t)1 << 26;
    double r[kShortMax + 1];
    for (int cols = 1; cols <= kShortMax; ++cols) {
        r[cols] = short_cell(ti, c, x, y, cx, cy, (long long)(n / cols), cols);
        if (cols % 16 == 0) {
            printf("| %-4s | %3d-%3d |", kTypeName[ti], cols - 15, cols);
            for (int k = cols - 15; k <= cols; ++k) printf(" %4.2f", r[k]);
            printf(" |\n");
        }
    }
    int misses = 0, lowest = 32;
    printf("%s, lengths >= 32 below 0.90x copy:", kTypeName[ti]);
    for (int cols = 32; cols <= kShortMax; ++cols) {
        if (r[cols] < r[lowest]) lowest = cols;
        if (r[cols] >= 0.90) continue;
        printf("%s %d", misses > 0 && misses % 24 == 0 ? "\n " : "", cols);
        ++misses;
    }
    printf("%s (%d of %d; lowest %4.2fx at %d)\n", misses ? "" : " none", misses, kShortMax - 31, r[lowest], lowest);
    bench_progress("%s short rows done", kTypeName[ti]);
    return misses;
}

/// Table 4's extra shape, the issue's: 1,048,576 rows x 77 columns; returns 1 when below 0.90x copy.
template <typename T> static int short_77(int ti, Ctx* c, T* x, T* y, void* cx, void* cy) {
    const double r = short_cell(ti, c, x, y, cx, cy, kShortRows77, 77);
    printf("| %-4s | %lld x 77 | %4.2fx copy | %-4s |\n", kTypeName[ti], kShortRows77, r, r >= 0.90 ? "ok" : "MISS");
    return r < 0.90;
}

int main(int argc, char** argv) {
    bench_require_gpu();
    Ctx c{bench_csv(argc, argv, "build/bench/softmax.csv", "table,type,rows,cols,ms,tbps,copy_tbps,ratio_copy,peer_anchor_tbps,extra"), 0};
    const size_t n = (size_t)1 << 26, n77 = (size_t)kShortRows77 * 77,
                 maxBytes = (n77 > n ? n77 : n) * sizeof(float) + 64;
    void *x, *y, *cx, *cy;
    BENCH_CUDA(cudaMalloc(&x, maxBytes));
    BENCH_CUDA(cudaMalloc(&y, maxBytes));
    BENCH_CUDA(cudaMalloc(&cx, maxBytes));
    BENCH_CUDA(cudaMalloc(&cy, maxBytes));
    BENCH_CUDA(cudaMemset(cx, 1, maxBytes));
    printf("rowSoftmax (warpkit/device/softmax.cuh); bandwidth = one read + one write of the tensor; copy = D2D copy "
           "of the same bytes\n");
    int m1 = 0, m2 = 0, m3 = 0, m4 = 0;
    if (bench_wants(argc, argv, "anchors")) {
        printf("\n1. anchors: 2^26 elements. Target: >= 0.95x copy and above the anchors' better of torch/OneFlow\n");
        printf("| type |   cols |  TB/s |  copy | xcopy |  peer | xpeer | tgt  |\n"
               "|------|--------|-------|-------|-------|-------|-------|------|\n");
        each_type(x, n, 0, [&](auto* xt, int ti) { anchors(ti, &c, xt, (decltype(xt))y, cx, cy); });
        m1 = c.misses;
    }
    if (bench_wants(argc, argv, "odd")) {
        printf("\n2. odd lengths (~2^26 elements). Target: >= 0.90x copy for cols >= 1000, >= 0.95x the nearest "
               "multiple of 8\n");
        printf("| type |   cols |  TB/s | xcopy | cols8  | TB/s8 | x8   | tgt  |\n"
               "|------|--------|-------|-------|--------|-------|------|------|\n");
        each_type(x, n, 3, [&](auto* xt, int ti) { odd(ti, &c, xt, (decltype(xt))y, cx, cy); });
        m2 = c.misses - m1;
    }
    if (bench_wants(argc, argv, "few")) {
        printf("\n3. few long rows. Target: <= 1.5x the time of a copy of the same bytes\n");
        printf("| type | rows |   cols |   us    | copy us | xcopy | tgt  |\n"
               "|------|------|--------|---------|---------|-------|------|\n");
        each_type(x, n, 6, [&](auto* xt, int ti) { few(ti, &c, xt, (decltype(xt))y, cx, cy); });
        m3 = c.misses - m1 - m2;
    }
    if (argc > 2 && bench_wants(argc, argv, "fewshape")) { // only when named
        printf("\n3b. few long rows: the plan (rule, blocks x threads x values a thread) beside the compiled block "
               "shapes, each on the fewest blocks that hold the row and on 16 (blocks, us; * the plan's), us\n");
        printf("| type | rows |   cols | plan           | call  | copy  | empty | eclus | scopy | 256x16 a | 256x16 16 "
               "| 512x16 a | 512x16 16 | 1024x16 a| 1024x16 16| 512x32 a | 512x32 16 |\n"
               "|------|------|--------|----------------|-------|-------|-------|-------|-------|----------|----------"
               "|----------|----------|----------|----------|----------|----------|\n");
        each_type(x, n, 6, [&](auto* xt, int ti) { few_shapes(ti, &c, xt, (decltype(xt))y, cx, cy); });
    }
    if (bench_wants(argc, argv, "short")) {
        printf("\n4. short rows: every length 1 .. %d, rows = 2^26 / cols; x copy, each timed alternately with a "
               "copy of the same bytes. Target: >= 0.90x copy for cols >= 32\n",
               kShortMax);
        printf("| type |    cols | x copy, one length each%56s |\n|------|---------|%81s|\n", "",
               "---------------------------------------------------------------------------------");
        fill((float*)x, n77, 9);
        m4 += short_rows<float>(0, &c, (float*)x, (float*)y, cx, cy);
        fill((__nv_bfloat16*)x, n77, 10);
        m4 += short_rows<__nv_bfloat16>(2, &c, (__nv_bfloat16*)x, (__nv_bfloat16*)y, cx, cy);
        printf("the issue's shape:\n");
        fill((float*)x, n77, 11);
        m4 += short_77<float>(0, &c, (float*)x, (float*)y, cx, cy);
        fill((__nv_bfloat16*)x, n77, 12);
        m4 += short_77<__nv_bfloat16>(2, &c, (__nv_bfloat16*)x, (__nv_bfloat16*)y, cx, cy);
    }
    const int nFew = (int)(sizeof kFewRows / sizeof kFewRows[0]), nVocab = (int)(sizeof kVocab / sizeof kVocab[0]);
    printf("\nmisses (tables run): anchors %d of 33, odd lengths %d of %d, few rows %d of %d, short rows %d of %d\n",
           m1, m2, 3 * (int)(sizeof kOdd / sizeof kOdd[0]), m3, 3 * nFew * nVocab, m4, 2 * (kShortMax - 31) + 2);
    fclose(c.csv);
    BENCH_CUDA(cudaFree(x));
    BENCH_CUDA(cudaFree(y));
    BENCH_CUDA(cudaFree(cx));
    BENCH_CUDA(cudaFree(cy));
    return 0;
}
