// bench/reduce.cu: device-wide reductions, bytes read per second: warpkit's deviceReduceSum /
// deviceReduceMax / deviceReduce (include/warpkit/device/reduce.cuh) against the copy ceiling,
// cub::DeviceReduce::Sum / ::Max, and the hand-written kernels of the project's seed documents
// (rewritten here from their descriptions; the documents are not part of this repository).
//
// Every row is the median of timed calls after warm-up (CUDA events around each call, a GPU spin
// ahead of each start). warpkit and CUB are timed alternately, call by call (bench_pair_median_ms),
// so drift cannot favour either. Below 256 MB the input rotates through a 256 MB pool (5x the
// H100's L2), so no call finds its input in L2. CUB's temp-storage query and allocation and
// warpkit's workspace query and allocation are outside the timing; each call is timed as a user
// makes it. The seed kernels are timed as the seeds time them: their own launches only (the ones
// that leave per-block sums for the host say "host finishes").
//   ./build/bench/reduce [out.csv]
#include <warpkit/device/reduce.cuh>
#include "bench.cuh"

#include <cub/device/device_reduce.cuh>
#include <math.h>

// ---- seed kernels (int unless stated), block of 512 -------------------------------------------
constexpr int kSeedBlock = 512;

// Neighbored pairs, in place in global memory; thread tid works when tid % (2 stride) == 0.
__global__ void seedNeighbored(int* g_in, int* g_out, unsigned n) {
    const unsigned tid = threadIdx.x, idx = blockIdx.x * blockDim.x + tid;
    int* data = g_in + blockIdx.x * blockDim.x;
    if (idx >= n) return;
    for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
        if (tid % (2 * stride) == 0) data[tid] += data[tid + stride];
        __syncthreads();
    }
    if (tid == 0) g_out[blockIdx.x] = data[0];
}

// Interleaved pairs: stride starts at half the block, the low threads work.
__global__ void seedInterleaved(int* g_in, int* g_out, unsigned n) {
    const unsigned tid = threadIdx.x, idx = blockIdx.x * blockDim.x + tid;
    int* data = g_in + blockIdx.x * blockDim.x;
    if (idx >= n) return;
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) data[tid] += data[tid + stride];
        __syncthreads();
    }
    if (tid == 0) g_out[blockIdx.x] = data[0];
}

// Each block first folds 8 data blocks into its first one (8 independent loads per thread).
__device__ __forceinline__ void seedFold8(int* g_in, unsigned n) {
    const unsigned idx = blockIdx.x * blockDim.x * 8 + threadIdx.x;
    if (idx + 7 * blockDim.x < n) {
        int v[8];
#pragma unroll
        for (int k = 0; k < 8; ++k) v[k] = g_in[idx + k * blockDim.x];
        g_in[idx] = ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
    }
    __syncthreads();
}

// Unrolling8, then the interleaved tree in global memory.
__global__ void seedUnrolling8(int* g_in, int* g_out, unsigned n) {
    const unsigned tid = threadIdx.x;
    int* data = g_in + blockIdx.x * blockDim.x * 8;
    seedFold8(g_in, n);
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) data[tid] += data[tid + stride];
        __syncthreads();
    }
    if (tid == 0) g_out[blockIdx.x] = data[0];
}

// Unrolling8, a fully unrolled tree down to 64, then the last warp unrolled (volatile, with
// __syncwarp between steps: the seed's warp-synchronous form is a race since Volta).
template <int Block> __global__ void seedCompleteUnrollWarps8(int* g_in, int* g_out, unsigned n) {
    const unsigned tid = threadIdx.x;
    int* data = g_in + blockIdx.x * Block * 8;
    seedFold8(g_in, n);
    if (Block >= 1024 && tid < 512) data[tid] += data[tid + 512];
    __syncthreads();
    if (Block >= 512 && tid < 256) data[tid] += data[tid + 256];
    __syncthreads();
    if (Block >= 256 && tid < 128) data[tid] += data[tid + 128];
    __syncthreads();
    if (Block >= 128 && tid < 64) data[tid] += data[tid + 64];
    __syncthreads();
    if (tid < 32) {
        volatile int* v = data;
        int s = v[tid] + v[tid + 32];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            __syncwarp();
            v[tid] = s;
            __syncwarp();
            s += v[tid + o];
        }
        if (tid == 0) g_out[blockIdx.x] = s;
    }
}

// Grid-stride, NUM_LOAD = 4 scalar loads in flight, shared-memory tree; float. Launched twice:
// once over the input with an occupancy-sized grid, once with one block over the partials.
constexpr int kNumLoad = 4, kGsBlock = 256;
__global__ void seedGridStride4(float* g_out, const float* g_in, unsigned n) {
    extern __shared__ float s_data[];
    const unsigned idx = blockIdx.x * blockDim.x + threadIdx.x, stride = blockDim.x * gridDim.x;
    float in[kNumLoad] = {0.f, 0.f, 0.f, 0.f};
    for (unsigned i = idx; i < n; i += stride * kNumLoad) {
#pragma unroll
        for (int s = 0; s < kNumLoad; ++s) in[s] += i + s * stride < n ? g_in[i + s * stride] : 0.f;
    }
    s_data[threadIdx.x] = (in[0] + in[1]) + (in[2] + in[3]);
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) s_data[threadIdx.x] += s_data[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) g_out[blockIdx.x] = s_data[0];
}

// One warp per block: every 32 elements summed, through shared memory or through shuffles.
__global__ void seedWarp32Smem(int* dst, const int* src) {
    __shared__ int s[64];
    const unsigned t = threadIdx.x;
    s[t] = src[blockIdx.x * 32 + t];
    s[t + 32] = 0;
    __syncwarp();
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        int x = s[t] + s[t + o];
        __syncwarp();
        s[t] = x;
        __syncwarp();
    }
    if (t == 0) dst[blockIdx.x] = s[0];
}
__global__ void seedWarp32Shuffle(int* dst, const int* src) {
    int v = src[blockIdx.x * 32 + threadIdx.x];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (threadIdx.x == 0) dst[blockIdx.x] = v;
}

// Reference, not a peer: float4 grid-stride sum, 2 loads in flight, warp shuffles, one float
// atomicAdd per block (the quick sketch a user writes first). One launch and no last-block
// step, but its result depends on the order of the atomics, so it is not deterministic.
__global__ void __launch_bounds__(256) atomicSketch(const float* in, unsigned long long n, float* out) {
    const float4* v = reinterpret_cast<const float4*>(in);
    const unsigned long long nv = n / 4, stride = (unsigned long long)gridDim.x * blockDim.x;
    float s = 0.f;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + stride < nv; i += 2 * stride) {
        float4 a = __ldg(v + i), b = __ldg(v + i + stride);
        s += ((a.x + a.y) + (a.z + a.w)) + ((b.x + b.y) + (b.z + b.w));
    }
    if (i < nv) { float4 a = __ldg(v + i); s += (a.x + a.y) + (a.z + a.w); }
    s = warpkit::warpReduceSum(s);
    __shared__ float w[8];
    if (threadIdx.x % 32 == 0) w[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = warpkit::warpReduceSum(threadIdx.x < 8 ? w[threadIdx.x] : 0.f);
        if (threadIdx.x == 0) atomicAdd(out, s);
    }
}


// ---- the generic form with a struct accumulator: sum and max in one pass ------------------------
struct SumMaxF {
    float sum, max;
};
struct SumMaxOp {
    __host__ __device__ SumMaxF operator()(SumMaxF a, float x) const { return {a.sum + x, warpkit::Max{}(a.max, x)}; }
    __host__ __device__ SumMaxF operator()(SumMaxF a, SumMaxF b) const {
        return {a.sum + b.sum, warpkit::Max{}(a.max, b.max)};
    }
};

// ---- harness ---------------------------------------------------------------------------------
static const size_t kPoolBytes = 256u << 20; // rotation pool: 5x the H100's 50 MB L2

struct Row {
    const char* kernel;
    const char* type;
    double us, tbps;
    int peer; // index of the row it is compared with (a CUB row; the copy row names itself)
};

int main(int argc, char** argv) {
    bench_require_gpu();
    FILE* csv = bench_csv(argc, argv, "build/bench/reduce.csv", "n,kernel,type,us,tbps_read,vs_cub,pct_copy");
    cudaDeviceProp prop;
    BENCH_CUDA(cudaGetDeviceProperties(&prop, 0));
    printf("reduce: %s, %d SMs, L2 %d MB; bytes READ per second (copy: read + written); median of timed calls\n",
           prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);

    const int lgSizes[] = {16, 18, 20, 22, 24, 26, 28};
    const size_t maxN = (size_t)1 << 28;
    const size_t poolElems = maxN > kPoolBytes / 4 ? maxN : kPoolBytes / 4;
    float *fin, *fcopy, *fout, *fpart;
    int *iin, *iout, *ipart;
    long long* llout;
    SumMaxF* smout;
    BENCH_CUDA(cudaMalloc(&fin, poolElems * 4));
    BENCH_CUDA(cudaMalloc(&fcopy, poolElems * 4));
    BENCH_CUDA(cudaMalloc(&iin, poolElems * 4));
    BENCH_CUDA(cudaMalloc(&fout, 16 * sizeof(float)));
    BENCH_CUDA(cudaMalloc(&iout, 16 * sizeof(int)));
    BENCH_CUDA(cudaMalloc(&llout, 16 * sizeof(long long)));
    BENCH_CUDA(cudaMalloc(&smout, 16 * sizeof(SumMaxF)));
    BENCH_CUDA(cudaMalloc(&fpart, (maxN / 32) * sizeof(float)));
    BENCH_CUDA(cudaMalloc(&ipart, (maxN / 32) * sizeof(int)));
    int gsBlocksPerSm = 0, wkBlocks = 0;
    BENCH_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&gsBlocksPerSm, seedGridStride4, kGsBlock,
                                                             kGsBlock * sizeof(float)));
    BENCH_CUDA((warpkit::detail::reduceBlocks<float, float, float, warpkit::Sum>((long long)maxN, &wkBlocks)));
    printf("warpkit grid: %d blocks of %d at 2^28 floats; seed grid-stride: %d blocks of %d\n\n", wkBlocks,
           warpkit::detail::kReduceThreads, gsBlocksPerSm * prop.multiProcessorCount, kGsBlock);

    printf("%-11s %-38s %-8s %10s %9s %8s %8s\n", "n", "kernel", "type", "time us", "TB/s", "vs CUB", "% copy");
    // ratios to CUB of warpkit's float sum, int sum, float max, int max at 2^24 and 2^28
    double ratio24[4] = {0, 0, 0, 0}, ratio28[4] = {0, 0, 0, 0}, copyPct28[2] = {0, 0};
    bool allOk = true;
    for (int lg : lgSizes) {
        const size_t n = (size_t)1 << lg, bytes = n * 4;
        const size_t slices = bytes >= kPoolBytes ? 1 : kPoolBytes / bytes;
        bench_progress("n = 2^%d: %zu MB, rotating over %zu buffers", lg, bytes >> 20, slices);
        bench_fill_random(fin, slices * n, 1000 + lg);
        bench_fill_random(iin, slices * n, 2000 + lg, -4.f, 4.f);
        const int reps = lg >= 26 ? 30 : 60;
        size_t it = 0;
        auto slice = [&](auto* base) { return base + (it++ % slices) * n; };
        auto timeIt = [&](auto launch) { it = 0; return bench_median_ms(launch, 5, reps); };
        std::vector<Row> rows;
        // A warpkit call against its CUB peer (rows[peer]), timed alternately.
        auto pair = [&](const char* cubName, const char* name, const char* type, auto cub, auto wk) {
            float msCub = 0, msWk = 0;
            it = 0;
            bench_pair_median_ms(cub, wk, &msCub, &msWk, 5, reps | 1);
            const int peer = (int)rows.size();
            rows.push_back({cubName, type, msCub * 1e3, bench_tbps(bytes, msCub), peer});
            rows.push_back({name, type, msWk * 1e3, bench_tbps(bytes, msWk), peer});
        };

        // the copy ceiling
        float ms = timeIt([&] { size_t s = (it++ % slices) * n;
                              cudaMemcpyAsync(fcopy + s, fin + s, bytes, cudaMemcpyDeviceToDevice); });
        const double copyTbps = bench_tbps(2.0 * bytes, ms);
        rows.push_back({"copy ceiling (D2D, read+write)", "f32", ms * 1e3, copyTbps, 0});

        // CUB and warpkit: size queries and allocations outside the timing
        size_t tbSumF = 0, tbSumI = 0, tbMaxF = 0, tbMaxI = 0;
        BENCH_CUDA(cub::DeviceReduce::Sum(nullptr, tbSumF, fin, fout, (int)n));
        BENCH_CUDA(cub::DeviceReduce::Sum(nullptr, tbSumI, iin, iout, (int)n));
        BENCH_CUDA(cub::DeviceReduce::Max(nullptr, tbMaxF, fin, fout, (int)n));
        BENCH_CUDA(cub::DeviceReduce::Max(nullptr, tbMaxI, iin, iout, (int)n));
        const long long nn = (long long)n;
        size_t wk[6] = {0, 0, 0, 0, 0, 0};
        BENCH_CUDA(warpkit::deviceReduceSum(fin, fout, nn, nullptr, &wk[0]));
        BENCH_CUDA(warpkit::deviceReduceSum(iin, iout, nn, nullptr, &wk[1]));
        BENCH_CUDA(warpkit::deviceReduce(iin, llout, nn, warpkit::Sum{}, 0, nullptr, &wk[2]));
        BENCH_CUDA(warpkit::deviceReduceMax(fin, fout, nn, nullptr, &wk[3]));
        BENCH_CUDA(warpkit::deviceReduceMax(iin, iout, nn, nullptr, &wk[4]));
        BENCH_CUDA(warpkit::deviceReduce(fin, smout, nn, SumMaxOp{}, SumMaxF{0.0f, -INFINITY}, nullptr, &wk[5]));
        void *temp, *ws;
        const size_t tb = std::max(std::max(tbSumF, tbSumI), std::max(tbMaxF, tbMaxI));
        const size_t wb = *std::max_element(wk, wk + 6);
        BENCH_CUDA(cudaMalloc(&temp, tb));
        BENCH_CUDA(cudaMalloc(&ws, wb));
        size_t wsb = wb;

        bench_progress("warpkit and cub");
        pair("cub::DeviceReduce::Sum", "warpkit deviceReduceSum", "f32",
             [&] { cub::DeviceReduce::Sum(temp, tbSumF, slice(fin), fout, (int)n); },
             [&] { warpkit::deviceReduceSum(slice(fin), fout + 2, nn, ws, &wsb); });
        pair("cub::DeviceReduce::Sum", "warpkit deviceReduceSum (int acc)", "i32",
             [&] { cub::DeviceReduce::Sum(temp, tbSumI, slice(iin), iout, (int)n); },
             [&] { warpkit::deviceReduceSum(slice(iin), iout + 2, nn, ws, &wsb); });
        pair("cub::DeviceReduce::Max", "warpkit deviceReduceMax", "f32",
             [&] { cub::DeviceReduce::Max(temp, tbMaxF, slice(fin), fout + 1, (int)n); },
             [&] { warpkit::deviceReduceMax(slice(fin), fout + 5, nn, ws, &wsb); });
        pair("cub::DeviceReduce::Max", "warpkit deviceReduceMax", "i32",
             [&] { cub::DeviceReduce::Max(temp, tbMaxI, slice(iin), iout + 1, (int)n); },
             [&] { warpkit::deviceReduceMax(slice(iin), iout + 5, nn, ws, &wsb); });
        ms = timeIt([&] { warpkit::deviceReduce(slice(iin), llout, nn, warpkit::Sum{}, 0, ws, &wsb); });
        rows.push_back({"warpkit deviceReduce, int64 accumulator", "i32", ms * 1e3, bench_tbps(bytes, ms), 3});
        const SumMaxF smInit = {0.0f, -INFINITY};
        ms = timeIt([&] { warpkit::deviceReduce(slice(fin), smout, nn, SumMaxOp{}, smInit, ws, &wsb); });
        rows.push_back({"warpkit deviceReduce, sum+max one pass", "f32", ms * 1e3, bench_tbps(bytes, ms), 1});
        ms = timeIt([&] { atomicSketch<<<wkBlocks, 256>>>(slice(fin), n, fout + 7); });
        rows.push_back({"ref: 1 float atomicAdd/block (nondet.)", "f32", ms * 1e3, bench_tbps(bytes, ms), 1});

        // Check warpkit against CUB on the first slice.
        BENCH_CUDA(cub::DeviceReduce::Sum(temp, tbSumF, fin, fout, (int)n));
        BENCH_CUDA(cub::DeviceReduce::Max(temp, tbMaxF, fin, fout + 1, (int)n));
        BENCH_CUDA(cub::DeviceReduce::Sum(temp, tbSumI, iin, iout, (int)n));
        BENCH_CUDA(cub::DeviceReduce::Max(temp, tbMaxI, iin, iout + 1, (int)n));
        BENCH_CUDA(warpkit::deviceReduceSum(fin, fout + 2, nn, ws, &wsb));
        BENCH_CUDA(warpkit::deviceReduceMax(fin, fout + 5, nn, ws, &wsb));
        BENCH_CUDA(warpkit::deviceReduceSum(iin, iout + 2, nn, ws, &wsb));
        BENCH_CUDA(warpkit::deviceReduceMax(iin, iout + 5, nn, ws, &wsb));
        BENCH_CUDA(warpkit::deviceReduce(iin, llout, nn, warpkit::Sum{}, 0, ws, &wsb));
        BENCH_CUDA(warpkit::deviceReduce(fin, smout, nn, SumMaxOp{}, smInit, ws, &wsb));
        float hf[6];
        int hi[6];
        long long hll;
        SumMaxF hsm;
        BENCH_CUDA(cudaMemcpy(hf, fout, sizeof(hf), cudaMemcpyDeviceToHost));
        BENCH_CUDA(cudaMemcpy(hi, iout, sizeof(hi), cudaMemcpyDeviceToHost));
        BENCH_CUDA(cudaMemcpy(&hll, llout, sizeof(hll), cudaMemcpyDeviceToHost));
        BENCH_CUDA(cudaMemcpy(&hsm, smout, sizeof(hsm), cudaMemcpyDeviceToHost));
        const double tol = 1e-6 * (double)n; // |x| < 1: rounding of two float orders
        const bool ok = fabs(hf[2] - hf[0]) <= tol && hf[5] == hf[1] && hi[2] == hi[0] && hi[5] == hi[1] &&
                        (int)hll == hi[0] && fabs(hsm.sum - hf[0]) <= tol && hsm.max == hf[1];
        if (!ok) {
            allOk = false;
            printf("  CHECK FAILED at n=2^%d: sum %.9g vs cub %.9g, max %g vs %g, int sum %d / %lld vs %d, "
                   "int max %d vs %d, sum+max %g %g\n",
                   lg, hf[2], hf[0], hf[5], hf[1], hi[2], hll, hi[0], hi[5], hi[1], hsm.sum, hsm.max);
        }

        // Seeds (they modify the int input in place; it is refilled for the next size).
        bench_progress("seed kernels");
        const unsigned gridN = (unsigned)(n / kSeedBlock), grid8 = gridN / 8;
        ms = timeIt([&] { seedNeighbored<<<gridN, kSeedBlock>>>(slice(iin), ipart, (unsigned)n); });
        rows.push_back({"seed reduceNeighbored (host finishes)", "i32", ms * 1e3, bench_tbps(bytes, ms), 3});
        ms = timeIt([&] { seedInterleaved<<<gridN, kSeedBlock>>>(slice(iin), ipart, (unsigned)n); });
        rows.push_back({"seed reduceInterleaved (host fin.)", "i32", ms * 1e3, bench_tbps(bytes, ms), 3});
        ms = timeIt([&] { seedUnrolling8<<<grid8, kSeedBlock>>>(slice(iin), ipart, (unsigned)n); });
        rows.push_back({"seed reduceUnrolling8 (host fin.)", "i32", ms * 1e3, bench_tbps(bytes, ms), 3});
        ms = timeIt([&] { seedCompleteUnrollWarps8<kSeedBlock><<<grid8, kSeedBlock>>>(slice(iin), ipart, (unsigned)n); });
        rows.push_back({"seed CompleteUnrollWarps8 (host fin.)", "i32", ms * 1e3, bench_tbps(bytes, ms), 3});
        const int gsBlocks = (int)std::min<size_t>((size_t)gsBlocksPerSm * prop.multiProcessorCount,
                                                   (n + kGsBlock - 1) / kGsBlock);
        ms = timeIt([&] {
            seedGridStride4<<<gsBlocks, kGsBlock, kGsBlock * sizeof(float)>>>(fpart, slice(fin), (unsigned)n);
            seedGridStride4<<<1, kGsBlock, kGsBlock * sizeof(float)>>>(fout + 6, fpart, (unsigned)gsBlocks);
        });
        rows.push_back({"seed grid-stride NUM_LOAD=4, 2 launches", "f32", ms * 1e3, bench_tbps(bytes, ms), 1});
        ms = timeIt([&] { seedWarp32Smem<<<(unsigned)(n / 32), 32>>>(ipart, slice(iin)); });
        rows.push_back({"seed 32-element sums, shared memory", "i32", ms * 1e3, bench_tbps(bytes, ms), 3});
        ms = timeIt([&] { seedWarp32Shuffle<<<(unsigned)(n / 32), 32>>>(ipart, slice(iin)); });
        rows.push_back({"seed 32-element sums, shuffle", "i32", ms * 1e3, bench_tbps(bytes, ms), 3});
        BENCH_CUDA(cudaGetLastError());
        BENCH_CUDA(cudaFree(temp));
        BENCH_CUDA(cudaFree(ws));

        for (const Row& r : rows) {
            const double vs = r.tbps / rows[r.peer].tbps, pct = 100.0 * r.tbps / copyTbps;
            const bool isPeer = r.peer > 0 && &r == &rows[r.peer];
            printf("2^%-9d %-38s %-8s %10.2f %9.3f %7.2fx %7.1f%%\n", lg, r.kernel, r.type, r.us, r.tbps,
                   isPeer || r.peer == 0 ? 1.0 : vs, pct);
            fprintf(csv, "%zu,%s,%s,%.3f,%.4f,%.4f,%.2f\n", n, r.kernel, r.type, r.us, r.tbps, isPeer ? 1.0 : vs, pct);
        }
        printf("\n");
        // rows: 0 copy, 1/2 cub/wk float sum, 3/4 int sum, 5/6 float max, 7/8 int max
        double* ratio = lg == 24 ? ratio24 : lg == 28 ? ratio28 : nullptr;
        if (ratio)
            for (int k = 0; k < 4; ++k) ratio[k] = rows[2 + 2 * k].tbps / rows[1 + 2 * k].tbps;
        if (lg == 28) {
            copyPct28[0] = 100.0 * rows[2].tbps / copyTbps;
            copyPct28[1] = 100.0 * rows[4].tbps / copyTbps;
        }
    }
    fclose(csv);
    auto verdict = [](bool b) { return b ? "met" : "MISSED"; };
    const char* names[4] = {"float sum", "int sum", "float max", "int max"};
    printf("targets (warpkit vs cub::DeviceReduce, same run, timed alternately):\n");
    for (int k = 0; k < 4; ++k)
        printf("  %-9s 2^28 %.3fx (>= 1.00: %s)   2^24 %.3fx (>= 1.05: %s; stretch 1.10: %s)\n", names[k], ratio28[k],
               verdict(ratio28[k] >= 1.0), ratio24[k], verdict(ratio24[k] >= 1.05), verdict(ratio24[k] >= 1.10));
    printf("  2^28 float sum %.1f%% of copy, int sum %.1f%% of copy\n", copyPct28[0], copyPct28[1]);
    printf("results checked against CUB: %s\n", allOk ? "all match" : "MISMATCH");
    return allOk ? 0 : 1;
}
