// bench/softmax.cu: row softmax (samples/softmax.cu's dispatcher) on 2^26-element tensors, cols
// 32 .. 262144, fp32 / fp16 / bf16. Effective bandwidth = 2 x tensor bytes / time (one read, one
// write), its ratio to a device-to-device copy measured in this run, a naive three-pass
// block-per-row softmax measured in this run, and the better of torch and OneFlow from
// ../shared/anchors.md (another day's figures: leads; bench/torch_softmax.py times torch live).
#define WARPKIT_SOFTMAX_SAMPLE_NO_MAIN
#include "../samples/softmax.cu"
#include "bench.cuh"

// Naive baseline: one block per row, three sweeps over global memory (max, sum, normalise).
template <typename T>
__global__ void __launch_bounds__(256) naiveSoftmax(const T* __restrict__ x, T* __restrict__ y, int cols) {
    using A = warpkit::detail::Arith<T>;
    const T* p = x + (size_t)blockIdx.x * cols;
    T* q = y + (size_t)blockIdx.x * cols;
    float m = -__builtin_huge_valf();
    for (int i = threadIdx.x; i < cols; i += blockDim.x) m = fmaxf(m, A::to_acc(p[i]));
    m = warpkit::blockReduceMax(m);
    float s = 0.0f;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) s += expf(A::to_acc(p[i]) - m);
    s = warpkit::blockReduceSum(s);
    for (int i = threadIdx.x; i < cols; i += blockDim.x) q[i] = A::from_acc(expf(A::to_acc(p[i]) - m) / s);
}

static const int kCols[] = {32, 128, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 262144};
// Better of torch and OneFlow per shape, TB/s (anchors.md; bf16 has torch only).
static const double kPeer[3][11] = {
    {2.89, 2.89, 2.89, 2.81, 2.76, 2.73, 2.41, 2.39, 1.98, 1.57, 1.43},
    {2.15, 2.22, 2.39, 2.12, 1.82, 1.87, 1.88, 1.95, 1.89, 1.46, 1.35},
    {1.27, 2.09, 2.27, 2.12, 1.57, 1.24, 0.98, 1.94, 1.84, 1.46, 1.36},
};

template <typename T>
static void bench_type(const char* tname, int ti, double copy, FILE* csv, int* misses) {
    const size_t n = (size_t)1 << 26, bytes = n * sizeof(T);
    T *x, *y;
    BENCH_CUDA(cudaMalloc(&x, bytes));
    BENCH_CUDA(cudaMalloc(&y, bytes));
    bench_fill_random(x, n, 42 + ti, -8.f, 8.f);
    for (int k = 0; k < 11; ++k) {
        const int cols = kCols[k], rows = (int)(n / cols);
        const rowsm::Path path = rowsm::autoPath<T>(cols);
        const float ms = bench_median_ms([&] { BENCH_CUDA(rowsm::rowSoftmax<T>(x, y, rows, cols)); }, 5, 30);
        const int nt = cols < 256 ? (cols + 31) / 32 * 32 : 256;
        const float nms = bench_median_ms([&] { naiveSoftmax<T><<<rows, nt>>>(x, y, cols); }, 2, 10);
        const double tb = bench_tbps(2.0 * bytes, ms), ntb = bench_tbps(2.0 * bytes, nms);
        const bool ok = tb >= 0.9 * copy && tb > kPeer[ti][k];
        if (!ok) ++*misses;
        printf("| %-5s | %6d | %-7s | %5.2f | %5.2f | %5.2f | %5.2f | %4.2fx | %s |\n", tname, cols, rowsm::pathName(path), tb,
               tb / copy, ntb, kPeer[ti][k], tb / kPeer[ti][k], ok ? "ok" : "MISS");
        fprintf(csv, "%s,%d,%d,%s,%.4f,%.3f,%.3f,%.3f,%.3f,%.2f\n", tname, rows, cols, rowsm::pathName(path), ms, tb, copy,
                tb / copy, ntb, kPeer[ti][k]);
        bench_progress("%s %d cols done", tname, cols);
    }
    BENCH_CUDA(cudaFree(x));
    BENCH_CUDA(cudaFree(y));
}

// Trial variants side by side (the dispatcher's choices come from these rows): on long rows the
// register cluster path (slices in registers) and the staged path (one cluster per row, slices
// bulk-copied into shared memory) at several slice sizes, block sizes and options; at 16-bit 2048
// the warp and block paths.
template <typename T> static void explore(const char* tname, double copy, FILE* csv) {
    const size_t n = (size_t)1 << 26, bytes = n * sizeof(T);
    T *x, *y;
    BENCH_CUDA(cudaMalloc(&x, bytes));
    BENCH_CUDA(cudaMalloc(&y, bytes));
    bench_fill_random(x, n, 7, -8.f, 8.f);
    auto one = [&](int cols, const char* name, auto launch) {
        const int rows = (int)(n / cols);
        if (launch(rows, cols) != cudaSuccess) {
            cudaGetLastError();
            printf("     - |");
            return;
        }
        BENCH_CUDA(cudaDeviceSynchronize());
        const float ms = bench_median_ms([&] { BENCH_CUDA(launch(rows, cols)); }, 3, 20);
        const double tb = bench_tbps(2.0 * bytes, ms);
        printf(" %5.2f |", tb);
        fprintf(csv, "%s,%d,%d,trial-%s,%.4f,%.3f,%.3f,%.3f,,\n", tname, rows, cols, name, ms, tb, copy, tb / copy);
    };
    constexpr int K = warpkit::SoftmaxPlain;
    if (sizeof(T) == 2) {
        printf("| %-5s | %6d |", tname, 2048);
        one(2048, "warp", [&](int r, int c) { return rowsm::rowSoftmax<T>(x, y, r, c, rowsm::PathWarp); });
        one(2048, "block", [&](int r, int c) { return rowsm::rowSoftmax<T>(x, y, r, c, rowsm::PathBlock); });
        printf("\n");
    }
    for (int cols : {16384, 32768, 65536, 262144}) {
        printf("| %-5s | %6d |", tname, cols);
        one(cols, "reg", [&](int r, int c) { return rowsm::rowSoftmaxCluster<T, K>(x, y, r, c, true, 0, 0); });
        constexpr int F = rowsm::kStageFused, X = rowsm::kStageExp, B = rowsm::kStageLoadBalance, G = rowsm::kStageGlobal;
        struct Shape { const char* name; int slice, threads, flags, pieces; }; // slice in KB
        static const Shape shapes[] = {{"s64/256x", 64, 256, X, 4},           {"s64/256xf", 64, 256, X | F, 4},
                                       {"s64/128x", 64, 128, X, 4},           {"s64/128xf", 64, 128, X | F, 4},
                                       {"s64/128xfb", 64, 128, X | F | B, 4}, {"s64/256xfg", 64, 256, X | F | G, 4},
                                       {"s64/128xfg", 64, 128, X | F | G, 4}, {"s64/256xf8", 64, 256, X | F, 8},
                                       {"s64/128xf8", 64, 128, X | F, 8},     {"s64/128xb", 64, 128, X | B, 4}};
        for (const Shape& sh : shapes)
            one(cols, sh.name, [&](int r, int c) {
                const int sb = sh.slice << 10;
                if (sh.threads == 128) return rowsm::rowSoftmaxStaged<T, K, 128>(x, y, r, c, true, sb, sh.pieces, 0, sh.flags);
                return rowsm::rowSoftmaxStaged<T, K, 256>(x, y, r, c, true, sb, sh.pieces, 0, sh.flags);
            });
        printf("\n");
    }
    BENCH_CUDA(cudaFree(x));
    BENCH_CUDA(cudaFree(y));
    rowsm::releaseStageWorkspace();
}

int main(int argc, char** argv) {
    bench_require_gpu();
    FILE* csv = bench_csv(argc, argv, "build/bench/softmax.csv",
                          "type,rows,cols,path,ms,tbps,copy_tbps,ratio_copy,naive_tbps,peer_anchor_tbps");
    const double copy = bench_copy_tbps((size_t)1 << 28);
    printf("softmax over the last dim, 2^26 elements; copy ceiling (1 GiB D2D, read+write) %.2f TB/s\n", copy);
    printf("targets: >= 0.90x copy (%.2f TB/s) and above the better of torch/OneFlow (anchors.md)\n\n", 0.9 * copy);
    printf("| type  |   cols | path    | TB/s  | xcopy | naive | peer  | xpeer | target |\n");
    printf("|-------|--------|---------|-------|-------|-------|-------|-------|--------|\n");
    int misses = 0;
    bench_type<float>("fp32", 0, copy, csv, &misses);
    bench_type<__half>("fp16", 1, copy, csv, &misses);
    bench_type<__nv_bfloat16>("bf16", 2, copy, csv, &misses);
    printf("\n%d of 33 cells miss a target\n", misses);
    if (rowsm::deviceInfo().clusters) {
        printf("\ntrial variants (TB/s). 2048: warp / block paths. Long rows: reg = register cluster path\n");
        printf("(dispatcher's slices); sS/T = staged path: slices of <= S KB, 4 bulk copies each (8 where it ends in 8), T threads;\n");
        printf("x: exps stored in shared memory (write sweep only scales), xf: ... piece by piece as they land,\n");
        printf("b: load-balancing cluster scheduling, g: global mode (no clusters; {max, sum} exchanged through global memory)\n");
        printf("| type  |   cols |  reg  | s64/256x | s64/256xf | s64/128x | s64/128xf | s64/128xfb | s64/256xfg | s64/128xfg | s64/256xf8 | s64/128xf8 | s64/128xb |\n");
        explore<float>("fp32", copy, csv);
        explore<__half>("fp16", copy, csv);
        explore<__nv_bfloat16>("bf16", copy, csv);
    }
    fclose(csv);
    return 0;
}
