// bench/warp_scan.cu: warpkit::warpInclusiveSum<W> vs cub::WarpScan<float, W>::InclusiveSum in the
// same kernel form, at every width 1..32. Form: each thread loads one float of 2^24 (or 2^28),
// runs R = 16 dependent scans on it in registers (so the scan, not memory, is timed), and stores
// it. Also the memory-bound form (R = 1). CUB's non-power-of-two logical warps go through shared
// memory (and group lanes by linear thread id, not within hardware warps); warpkit's stay in
// registers. The copy ceiling is printed for the R = 1 form.
#include <warpkit/scan.cuh>
#include "bench.cuh"
#include <cub/warp/warp_scan.cuh>
#include <utility>

constexpr int BLOCK = 256;

template <int W, int R, bool Cub> __global__ void __launch_bounds__(BLOCK) k_scan(const float* in, float* out, long long n) {
    using S = cub::WarpScan<float, W>;
    __shared__ typename S::TempStorage ts[Cub ? BLOCK / W + 1 : 1];
    const long long i = blockIdx.x * (long long)BLOCK + threadIdx.x;
    float v = i < n ? in[i] : 0.f;
#pragma unroll 1
    for (int r = 0; r < R; ++r) {
        if constexpr (Cub) { float o; S(ts[threadIdx.x / W]).InclusiveSum(v, o); v = o * 0.5f; }
        else v = warpkit::warpInclusiveSum<W>(v) * 0.5f;
    }
    if (i < n) out[i] = v;
}

FILE* g_csv;
template <int W, int R> static void one(const float* in, float* out, long long n, double copy) {
    const int blocks = (int)((n + BLOCK - 1) / BLOCK);
    float wms, cms; // timed alternately: at W = 32 and W = 1 the two kernels are the same code
    bench_pair_median_ms([&] { k_scan<W, R, false><<<blocks, BLOCK>>>(in, out, n); },
                         [&] { k_scan<W, R, true><<<blocks, BLOCK>>>(in, out, n); }, &wms, &cms);
    const double wt = bench_tbps(8.0 * n, wms), ct = bench_tbps(8.0 * n, cms);
    printf("%-4d %-3d %10.4f %10.4f %8.3f %8.3f %7.2f %7.2f\n", W, R, wms, cms, wt, ct, cms / wms, R == 1 ? wt / copy : 0.0);
    fprintf(g_csv, "%lld,%d,%d,%.5f,%.5f,%.4f,%.4f,%.4f,%.4f\n", n, W, R, wms, cms, wt, ct, cms / wms, copy);
}
template <int R, int... Ws> static void widths(const float* in, float* out, long long n, double copy, std::integer_sequence<int, Ws...>) {
    (one<Ws + 1, R>(in, out, n, copy), ...);
}

int main(int argc, char** argv) {
    bench_require_gpu();
    g_csv = bench_csv(argc, argv, "build/bench/warp_scan.csv", "n,width,reps,warpkit_ms,cub_ms,warpkit_tbps,cub_tbps,vs_cub,copy_tbps");
    for (int lg : {24, 28}) {
        const long long n = 1ll << lg;
        float *in, *out;
        BENCH_CUDA(cudaMalloc(&in, n * 4)); BENCH_CUDA(cudaMalloc(&out, n * 4));
        bench_fill_random(in, n, 7);
        const double copy = bench_copy_tbps((size_t)n * 4);
        printf("n = 2^%d, copy ceiling %.3f TB/s (read+write); TB/s counts 8 bytes per element\n", lg, copy);
        printf("%-4s %-3s %10s %10s %8s %8s %7s %7s\n", "W", "R", "wk_ms", "cub_ms", "wk_TB/s", "cub_TB/s", "vs_cub", "vs_copy");
        bench_progress("warp scans n=2^%d", lg);
        if (lg == 24) widths<16>(in, out, n, copy, std::make_integer_sequence<int, 32>{});
        widths<1>(in, out, n, copy, std::make_integer_sequence<int, 32>{});
        cudaFree(in); cudaFree(out);
    }
    fclose(g_csv);
    return 0;
}
