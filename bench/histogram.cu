// bench/histogram.cu: warpkit::deviceHistogramBytes (include/warpkit/device/histogram.cuh:
// block-private shared bins, hardware-aggregated ATOMS.POPC.INC) vs
// cub::DeviceHistogram::HistogramEven (257 levels over [0, 256)) and the read ceiling (the D2D
// copy figure), on uniform and skewed bytes (15/16 in 4 bins), at 2^24 and 2^28 bytes, with the
// input 16-byte aligned and misaligned by 3 bytes. Throughput is bytes read over time. Every count
// must equal CUB's bit for bit. warpkit's time includes its memset of the 256 bins (part of the
// call; CUB zeroes its own); CUB's temp allocation and warpkit's workspace are made outside it.
//   ./build/bench/histogram [out.csv]
#include <warpkit/device/histogram.cuh>
#include "bench.cuh"
#include <cub/device/device_histogram.cuh>
#include <string.h>

/// Uniform bytes, or skewed: 15 of 16 in bins 0..3, the rest spread over all 256.
__global__ void fill_bytes(unsigned char* p, long long n, int skew) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        unsigned long long z = 99 + i * 0x9e3779b97f4a7c15ull;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        p[i] = !skew ? (unsigned char)(z >> 24) : (z & 15) ? (unsigned char)((z >> 8) & 3) : (unsigned char)(z >> 16);
    }
}

int main(int argc, char** argv) {
    bench_require_gpu();
    FILE* csv = bench_csv(argc, argv, "build/bench/histogram.csv",
                          "kernel,n,data,warpkit_ms,cub_ms,warpkit_tbps,cub_tbps,copy_tbps,vs_cub,vs_copy");
    printf("%-15s %-6s %-8s %10s %10s %8s %8s %8s %7s %7s\n", "kernel", "n", "data", "wk_ms", "cub_ms", "wk_TB/s",
           "cub_TB/s", "copyTB/s", "vs_cub", "vs_copy");
    bool allOk = true;
    for (int lg : {24, 28}) {
        const long long n = 1ll << lg;
        unsigned char* in;
        unsigned *h1, *h2;
        BENCH_CUDA(cudaMalloc(&in, n + 3));
        BENCH_CUDA(cudaMalloc(&h1, 1024));
        BENCH_CUDA(cudaMalloc(&h2, 1024));
        size_t tmp_bytes = 0, ws_bytes = 0;
        BENCH_CUDA(cub::DeviceHistogram::HistogramEven(nullptr, tmp_bytes, in, (int*)h2, 257, 0, 256, (int)n));
        BENCH_CUDA(warpkit::deviceHistogramBytes(in, n, h1, nullptr, &ws_bytes));
        void *tmp, *ws;
        BENCH_CUDA(cudaMalloc(&tmp, tmp_bytes));
        BENCH_CUDA(cudaMalloc(&ws, ws_bytes));
        const double copy = bench_copy_tbps((size_t)n / 2); // reads n/2 + writes n/2 = n bytes moved
        for (int skew = 0; skew < 2; ++skew) {
            fill_bytes<<<1024, 256>>>(in, n + 3, skew);
            BENCH_CUDA(cudaDeviceSynchronize());
            for (int shift = 0; shift < 4; shift += 3) {
                bench_progress("histogram n=2^%d %s%s", lg, skew ? "skewed" : "uniform", shift ? " misaligned" : "");
                const unsigned char* x = in + shift;
                auto cb = [&] {
                    size_t tb = tmp_bytes;
                    cub::DeviceHistogram::HistogramEven(tmp, tb, x, (int*)h2, 257, 0, 256, (int)n);
                };
                auto wk = [&] {
                    size_t wb = ws_bytes;
                    warpkit::deviceHistogramBytes(x, n, h1, ws, &wb);
                };
                float wms = 0, cms = 0;
                bench_pair_median_ms(wk, cb, &wms, &cms);
                unsigned a[256], b[256];
                BENCH_CUDA(cudaMemcpy(a, h1, 1024, cudaMemcpyDeviceToHost));
                BENCH_CUDA(cudaMemcpy(b, h2, 1024, cudaMemcpyDeviceToHost));
                if (memcmp(a, b, 1024)) {
                    printf("MISMATCH against CUB at n=2^%d\n", lg);
                    allOk = false;
                }
                const char* name = shift ? "warpkit in+3" : "warpkit";
                const char* d = skew ? "skewed" : "uniform";
                const double wt = bench_tbps((double)n, wms), ct = bench_tbps((double)n, cms);
                printf("%-15s 2^%-4d %-8s %10.4f %10.4f %8.3f %8.3f %8.3f %7.2f %7.2f\n", name, lg, d, wms, cms, wt, ct,
                       copy, wt / ct, wt / copy);
                fprintf(csv, "%s,%lld,%s,%.5f,%.5f,%.4f,%.4f,%.4f,%.4f,%.4f\n", name, n, d, wms, cms, wt, ct, copy,
                        wt / ct, wt / copy);
            }
        }
        cudaFree(in);
        cudaFree(h1);
        cudaFree(h2);
        cudaFree(tmp);
        cudaFree(ws);
    }
    fclose(csv);
    printf("counts checked against CUB: %s\n", allOk ? "all match" : "MISMATCH");
    return allOk ? 0 : 1;
}
