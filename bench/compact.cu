// bench/compact.cu: warpkit::deviceSelectUnordered (include/warpkit/device/select.cuh: float4
// rows, ballot + popc, one atomic per warp chunk, NOT order-keeping) vs cub::DeviceSelect::If
// (order-keeping) and the copy ceiling, at 2^24 and 2^28 floats and selectivities 1%, 50%, 99%.
// Rows: the input 16-byte aligned, and misaligned by one float (in + 1, out + 1). Throughput
// counts bytes read + bytes written (n*4 + kept*4) over time; ratios are to CUB and to the D2D
// copy of the same bytes moved. warpkit's time includes its memset of the count (part of the
// call); CUB's temp allocation and warpkit's workspace are made outside the timing. The kept
// counts must equal CUB's.
//   ./build/bench/compact [out.csv]
#include <warpkit/device/select.cuh>
#include "bench.cuh"
#include <cub/device/device_select.cuh>

int main(int argc, char** argv) {
    bench_require_gpu();
    FILE* csv = bench_csv(argc, argv, "build/bench/compact.csv",
                          "kernel,n,selectivity,kept,warpkit_ms,cub_ms,warpkit_tbps,cub_tbps,copy_tbps,vs_cub,vs_copy");
    printf("%-16s %-6s %-5s %12s %10s %10s %8s %8s %8s %7s %7s\n", "kernel", "n", "sel", "kept", "wk_ms", "cub_ms",
           "wk_TB/s", "cub_TB/s", "copyTB/s", "vs_cub", "vs_copy");
    bool allOk = true;
    for (int lg : {24, 28}) {
        const long long n = 1ll << lg;
        float *in, *out;
        unsigned long long* cnt;
        int* cub_cnt;
        BENCH_CUDA(cudaMalloc(&in, (n + 1) * 4));
        BENCH_CUDA(cudaMalloc(&out, (n + 1) * 4));
        BENCH_CUDA(cudaMalloc(&cnt, 8));
        BENCH_CUDA(cudaMalloc(&cub_cnt, 4));
        bench_fill_random(in, n + 1, 1234, 0.f, 1.f);
        size_t tmp_bytes = 0, ws_bytes = 0;
        BENCH_CUDA(cub::DeviceSelect::If(nullptr, tmp_bytes, in, out, cub_cnt, (int)n, warpkit::SelectGreater{0.5f}));
        BENCH_CUDA(warpkit::deviceSelectUnordered(in, out, n, warpkit::SelectGreater{0.5f}, cnt, nullptr, &ws_bytes));
        void *tmp, *ws;
        BENCH_CUDA(cudaMalloc(&tmp, tmp_bytes));
        BENCH_CUDA(cudaMalloc(&ws, ws_bytes));
        for (double sel : {0.01, 0.50, 0.99}) {
            const warpkit::SelectGreater<float> pred{(float)(1.0 - sel)};
            for (int shift = 0; shift < 2; ++shift) {
                bench_progress("compact n=2^%d sel=%.2f%s", lg, sel, shift ? " misaligned" : "");
                const float* x = in + shift;
                float* y = out + shift;
                auto cb = [&] {
                    size_t tb = tmp_bytes;
                    cub::DeviceSelect::If(tmp, tb, x, y, cub_cnt, (int)n, pred);
                };
                auto wk = [&] {
                    size_t wb = ws_bytes;
                    warpkit::deviceSelectUnordered(x, y, n, pred, cnt, ws, &wb);
                };
                float wms = 0, cms = 0;
                bench_pair_median_ms(wk, cb, &wms, &cms);
                int ckept = 0;
                unsigned long long kept = 0;
                BENCH_CUDA(cudaMemcpy(&ckept, cub_cnt, 4, cudaMemcpyDeviceToHost));
                BENCH_CUDA(cudaMemcpy(&kept, cnt, 8, cudaMemcpyDeviceToHost));
                if ((long long)kept != ckept) {
                    printf("MISMATCH: kept %llu, cub %d\n", kept, ckept);
                    allOk = false;
                }
                const double bytes = 4.0 * n + 4.0 * kept;
                const double copy = bench_copy_tbps((size_t)(bytes / 2)); // a copy moving the same bytes
                const double wt = bench_tbps(bytes, wms), ct = bench_tbps(bytes, cms);
                const char* name = shift ? "warpkit in+1" : "warpkit";
                printf("%-16s 2^%-4d %-5.2f %12llu %10.4f %10.4f %8.3f %8.3f %8.3f %7.2f %7.2f\n", name, lg, sel, kept,
                       wms, cms, wt, ct, copy, wt / ct, wt / copy);
                fprintf(csv, "%s,%lld,%.2f,%llu,%.5f,%.5f,%.4f,%.4f,%.4f,%.4f,%.4f\n", name, n, sel, kept, wms, cms, wt,
                        ct, copy, wt / ct, wt / copy);
            }
        }
        cudaFree(in);
        cudaFree(out);
        cudaFree(cnt);
        cudaFree(cub_cnt);
        cudaFree(tmp);
        cudaFree(ws);
    }
    fclose(csv);
    printf("kept counts checked against CUB: %s\n", allOk ? "all match" : "MISMATCH");
    return allOk ? 0 : 1;
}
