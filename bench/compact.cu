// bench/compact.cu: warpkit stream compaction (samples/compact.cu: float4 rows, ballot + popc,
// one atomic per warp chunk, NOT order-keeping; rows "perm" (the sample's default store) and
// "stage") vs cub::DeviceSelect::If (order-keeping) and the copy ceiling, at 2^24 and 2^28 floats
// and selectivities 1%, 50%, 99%. Throughput counts bytes read + bytes written (n*4 + kept*4)
// over time; ratios are to CUB and to the D2D copy of the same bytes moved. Each row's time
// includes zeroing the counter.
#define COMPACT_NO_MAIN
#include "../samples/compact.cu"
#include "bench.cuh"
#include <cub/device/device_select.cuh>

struct Above {
    float t;
    __device__ bool operator()(float x) const { return x > t; }
};

int main(int argc, char** argv) {
    bench_require_gpu();
    FILE* csv = bench_csv(argc, argv, "build/bench/compact.csv", "kernel,n,selectivity,kept,warpkit_ms,cub_ms,warpkit_tbps,cub_tbps,copy_tbps,vs_cub,vs_copy");
    printf("%-12s %-6s %-5s %12s %10s %10s %8s %8s %8s %7s %7s\n", "kernel", "n", "sel", "kept", "wk_ms", "cub_ms", "wk_TB/s", "cub_TB/s", "copyTB/s", "vs_cub", "vs_copy");
    for (int lg : {24, 28}) {
        const long long n = 1ll << lg;
        float *in, *out; unsigned* cnt; int* cub_cnt;
        BENCH_CUDA(cudaMalloc(&in, n * 4)); BENCH_CUDA(cudaMalloc(&out, n * 4));
        BENCH_CUDA(cudaMalloc(&cnt, 4)); BENCH_CUDA(cudaMalloc(&cub_cnt, 4));
        bench_fill_random(in, n, 1234, 0.f, 1.f);
        size_t tmp_bytes = 0;
        cub::DeviceSelect::If(nullptr, tmp_bytes, in, out, cub_cnt, (int)n, Above{0.5f});
        void* tmp; BENCH_CUDA(cudaMalloc(&tmp, tmp_bytes));
        for (double sel : {0.01, 0.50, 0.99}) {
            const float thr = (float)(1.0 - sel);
            bench_progress("compact n=2^%d sel=%.2f", lg, sel);
            auto cb = [&] { size_t tb = tmp_bytes; cub::DeviceSelect::If(tmp, tb, in, out, cub_cnt, (int)n, Above{thr}); };
            const float cms = bench_median_ms(cb);
            int ckept = 0;
            BENCH_CUDA(cudaMemcpy(&ckept, cub_cnt, 4, cudaMemcpyDeviceToHost));
            auto row = [&](const char* name, auto k, long long per_warp) {
                const int grid = compact::grid_for(k, n, per_warp);
                const float wms = bench_median_ms([&] { cudaMemsetAsync(cnt, 0, 4); k<<<grid, compact::BLOCK>>>(in, out, cnt, n, thr); });
                unsigned kept = 0;
                BENCH_CUDA(cudaMemcpy(&kept, cnt, 4, cudaMemcpyDeviceToHost));
                if ((long long)kept != ckept) { printf("MISMATCH: %s kept %u, cub %d\n", name, kept, ckept); exit(1); }
                const double bytes = 4.0 * n + 4.0 * kept;
                const double copy = bench_copy_tbps((size_t)(bytes / 2)); // copy moving the same bytes
                const double wt = bench_tbps(bytes, wms), ct = bench_tbps(bytes, cms);
                printf("%-12s 2^%-4d %-5.2f %12u %10.4f %10.4f %8.3f %8.3f %8.3f %7.2f %7.2f\n", name, lg, sel, kept, wms, cms, wt, ct, copy, wt / ct, wt / copy);
                fprintf(csv, "%s,%lld,%.2f,%u,%.5f,%.5f,%.4f,%.4f,%.4f,%.4f,%.4f\n", name, n, sel, kept, wms, cms, wt, ct, copy, wt / ct, wt / copy);
            };
            row("perm", compact::kernel<16, compact::Perm>, 128 * 16);
            row("stage", compact::kernel<16, compact::Stage>, 128 * 16);
        }
        cudaFree(in); cudaFree(out); cudaFree(cnt); cudaFree(cub_cnt); cudaFree(tmp);
    }
    fclose(csv);
    return 0;
}
