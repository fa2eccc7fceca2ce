// bench/reduce.cu: device-wide reductions, bytes read per second, against the copy ceiling,
// cub::DeviceReduce::Sum / ::Max, and the seed documents' kernels (rewritten from their
// descriptions in ../shared/seeds/). warpkit's row is samples/device_reduce.cu's one-launch
// kernel, exactly as a user copies it.
//
// Every row is the median of timed calls after warm-up (CUDA events around each call). Below
// 256 MB the input rotates through a 256 MB pool (5x the H100's L2), so no call finds its input
// in L2. CUB's temp-storage size query and allocation are outside the timing; the call itself is
// timed as a user makes it. The seed kernels are timed as the seeds time them: their own
// launches only (the ones that leave per-block sums for the host say "host finishes").
//   ./build/bench/reduce [out.csv]
#define DEVICE_REDUCE_NO_MAIN
#include "../samples/device_reduce.cu"
#include "bench.cuh"

#include <cub/device/device_reduce.cuh>

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
// atomicAdd per block (the quick sketch of ../shared/anchors.md). One launch and no last-block
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

// ---- harness ---------------------------------------------------------------------------------
static const size_t kPoolBytes = 256u << 20; // rotation pool: 5x the H100's 50 MB L2

struct Row {
    const char* kernel;
    const char* type;
    double us, tbps;
    int peer; // 0: vs CUB float sum, 1: CUB int sum, 2: CUB float max
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
    SumMax<float, float>* smout;
    BENCH_CUDA(cudaMalloc(&fin, poolElems * 4));
    BENCH_CUDA(cudaMalloc(&fcopy, poolElems * 4));
    BENCH_CUDA(cudaMalloc(&iin, poolElems * 4));
    BENCH_CUDA(cudaMalloc(&fout, 16 * sizeof(float)));
    BENCH_CUDA(cudaMalloc(&iout, 16 * sizeof(int)));
    BENCH_CUDA(cudaMalloc(&llout, 16 * sizeof(long long)));
    BENCH_CUDA(cudaMalloc(&smout, 16 * sizeof(SumMax<float, float>)));
    BENCH_CUDA(cudaMalloc(&fpart, (maxN / 32) * sizeof(float)));
    BENCH_CUDA(cudaMalloc(&ipart, (maxN / 32) * sizeof(int)));

    // warpkit plans (grid from occupancy, partials, counter): made once, as a user would.
    ReducePlan<float, float, warpkit::Sum> pSumF2, pSumF4, pSumF8, pSumF512, pSumF1024;
    ReducePlan<int, long long, warpkit::Sum> pSumI;
    ReducePlan<int, int, warpkit::Sum> pSumI32;
    ReducePlan<float, float, warpkit::Max> pMaxF;
    ReducePlan<float, SumMax<float, float>, SumMaxOp> pSumMaxF;
    BENCH_CUDA((makePlan<256, 2>(&pSumF2)));
    BENCH_CUDA((makePlan<256, 4>(&pSumF4)));
    BENCH_CUDA((makePlan<256, 8>(&pSumF8)));
    BENCH_CUDA((makePlan<512, 4>(&pSumF512)));
    BENCH_CUDA((makePlan<1024, 2>(&pSumF1024)));
    BENCH_CUDA((makePlan<256, 4>(&pSumI)));
    BENCH_CUDA((makePlan<256, 4>(&pSumI32)));
    BENCH_CUDA((makePlan<256, 4>(&pMaxF)));
    BENCH_CUDA((makePlan<256, 4>(&pSumMaxF)));
    int gsBlocksPerSm = 0;
    BENCH_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&gsBlocksPerSm, seedGridStride4, kGsBlock,
                                                             kGsBlock * sizeof(float)));
    printf("warpkit grid: %d blocks of 256 (L=4, occupancy x SMs); seed grid-stride: %d blocks of %d\n\n",
           pSumF4.maxBlocks, gsBlocksPerSm * prop.multiProcessorCount, kGsBlock);

    printf("%-11s %-34s %-6s %10s %9s %8s %8s\n", "n", "kernel", "type", "time us", "TB/s", "vs CUB", "% copy");
    double target28[3] = {0, 0, 0}, target24[3] = {0, 0, 0}, copyPct28[2] = {0, 0};
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
        // the copy ceiling
        float ms = timeIt([&] { size_t s = (it++ % slices) * n;
                              cudaMemcpyAsync(fcopy + s, fin + s, bytes, cudaMemcpyDeviceToDevice); });
        const double copyTbps = bench_tbps(2.0 * bytes, ms);
        rows.push_back({"copy ceiling (D2D, read+write)", "f32", ms * 1e3, copyTbps, 0});

        // CUB: size query and temp allocation outside the timing
        size_t tbSumF = 0, tbSumI = 0, tbMaxF = 0;
        BENCH_CUDA(cub::DeviceReduce::Sum(nullptr, tbSumF, fin, fout, (int)n));
        BENCH_CUDA(cub::DeviceReduce::Sum(nullptr, tbSumI, iin, iout, (int)n));
        BENCH_CUDA(cub::DeviceReduce::Max(nullptr, tbMaxF, fin, fout, (int)n));
        void* temp;
        const size_t tb = std::max(tbSumF, std::max(tbSumI, tbMaxF));
        BENCH_CUDA(cudaMalloc(&temp, tb));
        bench_progress("cub");
        ms = timeIt([&] { cub::DeviceReduce::Sum(temp, tbSumF, slice(fin), fout, (int)n); });
        rows.push_back({"cub::DeviceReduce::Sum", "f32", ms * 1e3, bench_tbps(bytes, ms), 0});
        ms = timeIt([&] { cub::DeviceReduce::Sum(temp, tbSumI, slice(iin), iout, (int)n); });
        rows.push_back({"cub::DeviceReduce::Sum", "i32", ms * 1e3, bench_tbps(bytes, ms), 1});
        ms = timeIt([&] { cub::DeviceReduce::Max(temp, tbMaxF, slice(fin), fout + 1, (int)n); });
        rows.push_back({"cub::DeviceReduce::Max", "f32", ms * 1e3, bench_tbps(bytes, ms), 2});

        bench_progress("warpkit");
        ms = timeIt([&] { deviceReduce<256, 4>(pSumF4, slice(fin), n, 0.0f, warpkit::Sum{}, fout + 2); });
        rows.push_back({"warpkit sum (256 thr, 4 loads)", "f32", ms * 1e3, bench_tbps(bytes, ms), 0});
        ms = timeIt([&] { deviceReduce<256, 2>(pSumF2, slice(fin), n, 0.0f, warpkit::Sum{}, fout + 3); });
        rows.push_back({"warpkit sum (256 thr, 2 loads)", "f32", ms * 1e3, bench_tbps(bytes, ms), 0});
        ms = timeIt([&] { deviceReduce<256, 8>(pSumF8, slice(fin), n, 0.0f, warpkit::Sum{}, fout + 4); });
        rows.push_back({"warpkit sum (256 thr, 8 loads)", "f32", ms * 1e3, bench_tbps(bytes, ms), 0});
        ms = timeIt([&] { deviceReduce<256, 4>(pSumI, slice(iin), n, 0LL, warpkit::Sum{}, llout); });
        rows.push_back({"warpkit sum, int64 accumulator", "i32", ms * 1e3, bench_tbps(bytes, ms), 1});
        // int accumulator: CUB's own semantics (wraps past 2^31; bound |sum| < 2^31 documented)
        ms = timeIt([&] { deviceReduce<256, 4>(pSumI32, slice(iin), n, 0, warpkit::Sum{}, iout + 2); });
        rows.push_back({"warpkit sum, int32 acc (|sum|<2^31)", "i32", ms * 1e3, bench_tbps(bytes, ms), 1});
        // Smaller grids: fewer partials for the last block, more loads per thread.
        ReducePlan<float, float, warpkit::Sum> pHalf = pSumF4, pQuarter = pSumF4;
        pHalf.maxBlocks /= 2;
        pQuarter.maxBlocks /= 4;
        ms = timeIt([&] { deviceReduce<256, 4>(pHalf, slice(fin), n, 0.0f, warpkit::Sum{}, fout + 10); });
        rows.push_back({"warpkit sum (256x4, 1/2 grid)", "f32", ms * 1e3, bench_tbps(bytes, ms), 0});
        ms = timeIt([&] { deviceReduce<256, 4>(pQuarter, slice(fin), n, 0.0f, warpkit::Sum{}, fout + 11); });
        rows.push_back({"warpkit sum (256x4, 1/4 grid)", "f32", ms * 1e3, bench_tbps(bytes, ms), 0});
        ms = timeIt([&] { deviceReduce<512, 4>(pSumF512, slice(fin), n, 0.0f, warpkit::Sum{}, fout + 8); });
        rows.push_back({"warpkit sum (512 thr, 4 loads)", "f32", ms * 1e3, bench_tbps(bytes, ms), 0});
        ms = timeIt([&] { deviceReduce<1024, 2>(pSumF1024, slice(fin), n, 0.0f, warpkit::Sum{}, fout + 9); });
        rows.push_back({"warpkit sum (1024 thr, 2 loads)", "f32", ms * 1e3, bench_tbps(bytes, ms), 0});
        ms = timeIt([&] { deviceReduce<256, 4>(pMaxF, slice(fin), n, -INFINITY, warpkit::Max{}, fout + 5); });
        rows.push_back({"warpkit max", "f32", ms * 1e3, bench_tbps(bytes, ms), 2});
        const SumMax<float, float> smInit = {0.0f, -INFINITY};
        ms = timeIt([&] { deviceReduce<256, 4>(pSumMaxF, slice(fin), n, smInit, SumMaxOp{}, smout); });
        rows.push_back({"warpkit sum+max in one pass", "f32", ms * 1e3, bench_tbps(bytes, ms), 0});

        ms = timeIt([&] { atomicSketch<<<pSumF4.maxBlocks, 256>>>(slice(fin), n, fout + 7); });
        rows.push_back({"ref: 1 float atomicAdd/block (nondet.)", "f32", ms * 1e3, bench_tbps(bytes, ms), 0});

        // Check warpkit against CUB on the first slice.
        BENCH_CUDA(cub::DeviceReduce::Sum(temp, tbSumF, fin, fout, (int)n));
        BENCH_CUDA(cub::DeviceReduce::Sum(temp, tbSumI, iin, iout, (int)n));
        BENCH_CUDA(cub::DeviceReduce::Max(temp, tbMaxF, fin, fout + 1, (int)n));
        BENCH_CUDA((deviceReduce<256, 4>(pSumF4, fin, n, 0.0f, warpkit::Sum{}, fout + 2)));
        BENCH_CUDA((deviceReduce<256, 4>(pSumI, iin, n, 0LL, warpkit::Sum{}, llout)));
        BENCH_CUDA((deviceReduce<256, 4>(pSumI32, iin, n, 0, warpkit::Sum{}, iout + 2)));
        BENCH_CUDA((deviceReduce<256, 4>(pMaxF, fin, n, -INFINITY, warpkit::Max{}, fout + 5)));
        BENCH_CUDA((deviceReduce<256, 4>(pSumMaxF, fin, n, smInit, SumMaxOp{}, smout)));
        float hf[6];
        int hi, hi32;
        long long hll;
        SumMax<float, float> hsm;
        BENCH_CUDA(cudaMemcpy(hf, fout, sizeof(hf), cudaMemcpyDeviceToHost));
        BENCH_CUDA(cudaMemcpy(&hi, iout, sizeof(hi), cudaMemcpyDeviceToHost));
        BENCH_CUDA(cudaMemcpy(&hi32, iout + 2, sizeof(hi32), cudaMemcpyDeviceToHost));
        BENCH_CUDA(cudaMemcpy(&hll, llout, sizeof(hll), cudaMemcpyDeviceToHost));
        BENCH_CUDA(cudaMemcpy(&hsm, smout, sizeof(hsm), cudaMemcpyDeviceToHost));
        const double tol = 1e-6 * (double)n; // |x| < 1: rounding of two float orders
        const bool ok = fabs(hf[2] - hf[0]) <= tol && (int)hll == hi && hi32 == hi && hf[5] == hf[1] &&
                        fabs(hsm.sum - hf[0]) <= tol && hsm.max == hf[1];
        if (!ok) {
            allOk = false;
            printf("  CHECK FAILED at n=2^%d: sum %.9g vs cub %.9g, int %lld / %d vs %d, max %g vs %g, sum+max %g %g\n",
                   lg, hf[2], hf[0], hll, hi32, hi, hf[5], hf[1], hsm.sum, hsm.max);
        }

        // Seeds (they modify the int input in place; it is refilled for the next size).
        bench_progress("seed kernels");
        const unsigned gridN = (unsigned)(n / kSeedBlock), grid8 = gridN / 8;
        ms = timeIt([&] { seedNeighbored<<<gridN, kSeedBlock>>>(slice(iin), ipart, (unsigned)n); });
        rows.push_back({"seed reduceNeighbored (host finishes)", "i32", ms * 1e3, bench_tbps(bytes, ms), 1});
        ms = timeIt([&] { seedInterleaved<<<gridN, kSeedBlock>>>(slice(iin), ipart, (unsigned)n); });
        rows.push_back({"seed reduceInterleaved (host fin.)", "i32", ms * 1e3, bench_tbps(bytes, ms), 1});
        ms = timeIt([&] { seedUnrolling8<<<grid8, kSeedBlock>>>(slice(iin), ipart, (unsigned)n); });
        rows.push_back({"seed reduceUnrolling8 (host fin.)", "i32", ms * 1e3, bench_tbps(bytes, ms), 1});
        ms = timeIt([&] { seedCompleteUnrollWarps8<kSeedBlock><<<grid8, kSeedBlock>>>(slice(iin), ipart, (unsigned)n); });
        rows.push_back({"seed CompleteUnrollWarps8 (host fin.)", "i32", ms * 1e3, bench_tbps(bytes, ms), 1});
        const int gsBlocks = (int)std::min<size_t>((size_t)gsBlocksPerSm * prop.multiProcessorCount,
                                                   (n + kGsBlock - 1) / kGsBlock);
        ms = timeIt([&] {
            seedGridStride4<<<gsBlocks, kGsBlock, kGsBlock * sizeof(float)>>>(fpart, slice(fin), (unsigned)n);
            seedGridStride4<<<1, kGsBlock, kGsBlock * sizeof(float)>>>(fout + 6, fpart, (unsigned)gsBlocks);
        });
        rows.push_back({"seed grid-stride NUM_LOAD=4, 2 launches", "f32", ms * 1e3, bench_tbps(bytes, ms), 0});
        ms = timeIt([&] { seedWarp32Smem<<<(unsigned)(n / 32), 32>>>(ipart, slice(iin)); });
        rows.push_back({"seed 32-element sums, shared memory", "i32", ms * 1e3, bench_tbps(bytes, ms), 1});
        ms = timeIt([&] { seedWarp32Shuffle<<<(unsigned)(n / 32), 32>>>(ipart, slice(iin)); });
        rows.push_back({"seed 32-element sums, shuffle", "i32", ms * 1e3, bench_tbps(bytes, ms), 1});
        BENCH_CUDA(cudaGetLastError());
        BENCH_CUDA(cudaFree(temp));

        const double peer[3] = {rows[1].tbps, rows[2].tbps, rows[3].tbps};
        for (const Row& r : rows) {
            const double vs = r.tbps / peer[r.peer], pct = 100.0 * r.tbps / copyTbps;
            printf("2^%-9d %-34s %-6s %10.2f %9.3f %7.2fx %7.1f%%\n", lg, r.kernel, r.type, r.us, r.tbps, vs, pct);
            fprintf(csv, "%zu,%s,%s,%.3f,%.4f,%.4f,%.2f\n", n, r.kernel, r.type, r.us, r.tbps, vs, pct);
        }
        printf("\n");
        const double vsF = rows[4].tbps / peer[0], vsI = rows[7].tbps / peer[1], vsI32 = rows[8].tbps / peer[1];
        if (lg == 24) { target24[0] = vsF; target24[1] = vsI; target24[2] = vsI32; }
        if (lg == 28) {
            target28[0] = vsF; target28[1] = vsI; target28[2] = vsI32;
            copyPct28[0] = 100.0 * rows[4].tbps / copyTbps; copyPct28[1] = 100.0 * rows[7].tbps / copyTbps;
        }
    }
    fclose(csv);
    auto verdict = [](bool b) { return b ? "met" : "MISSED"; };
    printf("targets (warpkit sum, 256 threads, 4 loads):\n");
    printf("  2^28 float %.3fx CUB (>= 1.00: %s), int %.3fx CUB (>= 1.00: %s)\n", target28[0],
           verdict(target28[0] >= 1.0), target28[1], verdict(target28[1] >= 1.0));
    printf("  2^24 float %.3fx CUB (>= 1.10: %s), int %.3fx CUB (>= 1.10: %s)\n", target24[0],
           verdict(target24[0] >= 1.10), target24[1], verdict(target24[1] >= 1.10));
    printf("  int32 accumulator (CUB's semantics): 2^28 %.3fx (>= 1.00: %s), 2^24 %.3fx (>= 1.10: %s)\n",
           target28[2], verdict(target28[2] >= 1.0), target24[2], verdict(target24[2] >= 1.10));
    printf("  2^28 float %.1f%% of copy, int %.1f%% of copy (>= 97%%: %s, %s)\n", copyPct28[0], copyPct28[1],
           verdict(copyPct28[0] >= 97.0), verdict(copyPct28[1] >= 97.0));
    printf("results checked against CUB: %s\n", allOk ? "all match" : "MISMATCH");
    return allOk ? 0 : 1;
}
