// bench/histogram.cu: warpkit's 256-bin byte histograms (samples/histogram.cu) vs
// cub::DeviceHistogram::HistogramEven (257 levels over [0, 256)) and the read ceiling (the D2D
// copy figure), on uniform and skewed bytes (15/16 in 4 bins), at 2^24 and 2^28 bytes. Rows:
// block (the sample's kernel: one shared copy, hardware-aggregated ATOMS.POPC.INC), lanes (32
// per-lane copies), block-noagg (plain ATOMS.ADD), match (__match_any_sync on the bin index,
// warpkit::atomicAggCountMatch), match-ptr (match on the 64-bit pointer). Throughput is bytes read
// over time. Every kernel's counts must equal CUB's bit for bit. Each row's time includes zeroing
// the output (CUB zeroes its own).
#define HISTOGRAM_NO_MAIN
#include "../samples/histogram.cu"
#include "bench.cuh"
#include <cub/device/device_histogram.cuh>

__global__ void fill_bytes(unsigned char* p, long long n, int skew) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const unsigned long long z = histo::mix(i, 99);
        p[i] = skew ? histo::skewed(z) : (unsigned char)(z >> 24);
    }
}

int main(int argc, char** argv) {
    bench_require_gpu();
    FILE* csv = bench_csv(argc, argv, "build/bench/histogram.csv", "kernel,n,data,warpkit_ms,cub_ms,warpkit_tbps,cub_tbps,copy_tbps,vs_cub,vs_copy");
    printf("%-15s %-6s %-8s %10s %10s %8s %8s %8s %7s %7s\n", "kernel", "n", "data", "wk_ms", "cub_ms", "wk_TB/s", "cub_TB/s", "copyTB/s", "vs_cub", "vs_copy");
    for (int lg : {24, 28}) {
        const long long n = 1ll << lg;
        unsigned char* in; unsigned *h1, *h2;
        BENCH_CUDA(cudaMalloc(&in, n)); BENCH_CUDA(cudaMalloc(&h1, 1024)); BENCH_CUDA(cudaMalloc(&h2, 1024));
        size_t tmp_bytes = 0;
        cub::DeviceHistogram::HistogramEven(nullptr, tmp_bytes, in, (int*)h2, 257, 0, 256, (int)n);
        void* tmp; BENCH_CUDA(cudaMalloc(&tmp, tmp_bytes));
        const double copy = bench_copy_tbps((size_t)n / 2); // reads n/2 + writes n/2 = n bytes moved
        for (int skew = 0; skew < 2; ++skew) {
            bench_progress("histogram n=2^%d %s", lg, skew ? "skewed" : "uniform");
            fill_bytes<<<1024, 256>>>(in, n, skew);
            BENCH_CUDA(cudaDeviceSynchronize());
            auto cb = [&] { size_t tb = tmp_bytes; cub::DeviceHistogram::HistogramEven(tmp, tb, in, (int*)h2, 257, 0, 256, (int)n); };
            const float cms = bench_median_ms(cb);
            unsigned b[256];
            BENCH_CUDA(cudaMemcpy(b, h2, 1024, cudaMemcpyDeviceToHost));
            const char* d = skew ? "skewed" : "uniform";
            auto row = [&](const char* name, auto k, int block) {
                const int grid = histo::grid_for(k, block, n);
                const float wms = bench_median_ms([&] { cudaMemsetAsync(h1, 0, 1024); k<<<grid, block>>>(in, n, h1); });
                unsigned a[256];
                BENCH_CUDA(cudaMemcpy(a, h1, 1024, cudaMemcpyDeviceToHost));
                if (memcmp(a, b, 1024)) { printf("MISMATCH against CUB: %s\n", name); exit(1); }
                const double wt = bench_tbps((double)n, wms), ct = bench_tbps((double)n, cms);
                printf("%-15s 2^%-4d %-8s %10.4f %10.4f %8.3f %8.3f %8.3f %7.2f %7.2f\n", name, lg, d, wms, cms, wt, ct, copy, wt / ct, wt / copy);
                fprintf(csv, "%s,%lld,%s,%.5f,%.5f,%.4f,%.4f,%.4f,%.4f,%.4f\n", name, n, d, wms, cms, wt, ct, copy, wt / ct, wt / copy);
            };
            row("block", histo::kernel<>, 1024);                                 // the sample's kernel
            row("lanes", histo::kernel<1024, 4, histo::Lanes>, 1024);            // 32 per-lane copies
            row("block-noagg", histo::kernel<1024, 2, histo::Block, true>, 1024); // ATOMS.ADD, no aggregation
            row("match", histo::kernel_match<512, true>, 512);
            row("match-ptr", histo::kernel_match<512, false>, 512);
        }
        cudaFree(in); cudaFree(h1); cudaFree(h2); cudaFree(tmp);
    }
    fclose(csv);
    return 0;
}
