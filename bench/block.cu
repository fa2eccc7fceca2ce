// bench/block.cu: block reductions and block scans against CUB, in the same kernel form.
//
// Reduce: every block walks its own tiles of a 2^28-element array (grid-stride over tiles of
// BT x 16 elements: four 16-byte loads per thread in flight), reduces EACH tile with one block
// reduction, and adds the tile sums up; thread 0 does one atomicAdd at the end. So the block
// reduction runs once per tile (65536 times at BT = 256), not once per kernel.
//   warpkit::blockReduceSum<BT>           (result in every thread, no barrier needed between calls)
//   warpkit::blockReduceSumToThread0<BT>
//   cub::BlockReduce default (BLOCK_REDUCE_WARP_REDUCTIONS) + the __syncthreads CUB needs before reuse
//   cub::BlockReduce BLOCK_REDUCE_RAKING  + __syncthreads
// Scan: every block scans its own tiles (BT x 4 elements: one 16-byte vector per thread, a
// sequential scan of it, one block exclusive scan of the thread totals, one 16-byte store).
//   warpkit::blockExclusiveSum<BT>   vs  cub::BlockScan ExclusiveSum, BLOCK_SCAN_RAKING (default)
//   and BLOCK_SCAN_WARP_SCANS, each + __syncthreads before reuse.
// Statistics (float): the same tile loop with E = 16 or 4 elements a thread per block reduction
// (E = 4 calls the reduction four times as often per byte), each tile's mean and variance or sum and
// sum of squares added up:
//   welford     welfordUpdate of the thread's E values, blockReduceWelford (generic blockReduce of a
//               3-word state, ordered merges)           vs cub::BlockReduce of the same state and merge
//   two_pass    blockReduceSum of the sum, then of the squared deviations (4 barriers)
//   sum2_x2     {sum, sum of squares} as two named blockReduceSum calls (4 barriers)
//   sum2_multi  the same two values through blockReduceSum<BT>(float (&)[2]) (2 barriers)
//   sum2_gen    a {sum, sumsq} struct through the generic blockReduce, ordered operator
//   sum2_comm   the same struct with an operator that declares `commutative`
//   sum2_cub    cub::BlockReduce of the struct with the same operator
// Ceiling: device-to-device copy of the same bytes (reduce: bytes read; scan: read + written).
// Block sizes 64..1024, float and int. Median of 30 timed runs after 5 warm-ups (CUDA events).
#include "bench.cuh"
#include <warpkit/scan.cuh>
#include <warpkit/welford.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

enum Impl { WK, WK0, CUB_DEF, CUB_ALT, NIMPL };
static const char* kReduceNames[] = {"warpkit", "warpkit_t0", "cub_default_warp_red", "cub_raking"};
static const char* kScanNames[] = {"warpkit", "-", "cub_default_raking", "cub_warp_scans"};

template <typename T> struct Vec;
template <> struct Vec<float> { using type = float4; };
template <> struct Vec<int> { using type = int4; };

template <int BT, typename T, int I> __global__ void __launch_bounds__(BT) k_reduce(const T* __restrict__ in, size_t n, T* out) {
    using V = typename Vec<T>::type;
    constexpr int kVecs = 4;
    constexpr size_t kTile = (size_t)BT * kVecs * 4;
    using CubR = cub::BlockReduce<T, BT, I == CUB_DEF ? cub::BLOCK_REDUCE_WARP_REDUCTIONS : cub::BLOCK_REDUCE_RAKING>;
    __shared__ typename CubR::TempStorage tmp;
    const V* vin = reinterpret_cast<const V*>(in);
    T acc = T(0);
    for (size_t tile = blockIdx.x; tile * kTile < n; tile += gridDim.x) {
        const size_t v0 = tile * kTile / 4 + threadIdx.x;
        V x[kVecs];
#pragma unroll
        for (int j = 0; j < kVecs; ++j) x[j] = vin[v0 + (size_t)j * BT]; // n is a multiple of the tile
        T s = T(0);
#pragma unroll
        for (int j = 0; j < kVecs; ++j) s += (x[j].x + x[j].y) + (x[j].z + x[j].w);
        T r;
        if constexpr (I == WK) r = warpkit::blockReduceSum<BT>(s);
        else if constexpr (I == WK0) r = warpkit::blockReduceSumToThread0<BT>(s);
        else { r = CubR(tmp).Sum(s); __syncthreads(); }
        acc += r;
    }
    if (threadIdx.x == 0) atomicAdd(out, acc);
}

template <int BT, typename T, int I> __global__ void __launch_bounds__(BT) k_scan(const T* __restrict__ in, T* __restrict__ out, size_t n) {
    using V = typename Vec<T>::type;
    constexpr size_t kTile = (size_t)BT * 4;
    using CubS = cub::BlockScan<T, BT, I == CUB_DEF ? cub::BLOCK_SCAN_RAKING : cub::BLOCK_SCAN_WARP_SCANS>;
    __shared__ typename CubS::TempStorage tmp;
    const V* vin = reinterpret_cast<const V*>(in);
    V* vout = reinterpret_cast<V*>(out);
    for (size_t tile = blockIdx.x; tile * kTile < n; tile += gridDim.x) {
        const size_t i = tile * BT + threadIdx.x;
        V x = vin[i];
        x.y += x.x; x.z += x.y; x.w += x.z; // this thread's 4 elements, scanned
        T p;
        if constexpr (I == WK) p = warpkit::blockExclusiveSum<BT>(x.w);
        else { CubS(tmp).ExclusiveSum(x.w, p); __syncthreads(); }
        x.x += p; x.y += p; x.z += p; x.w += p;
        vout[i] = x;
    }
}

struct Cfg { int sms; };

template <typename K> static int grid_for(K kernel, int bt, int sms) {
    int per = 0;
    BENCH_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel, bt, 0));
    return per * sms;
}

template <typename T> static const char* tname();
template <> const char* tname<float>() { return "float"; }
template <> const char* tname<int>() { return "int"; }

static FILE* g_csv;
static double g_copy_read, g_copy_rw; // TB/s: copy ceiling counted as bytes read / read+written

template <int BT, typename T> static void bench_bt(const T* in, T* out, T* acc, size_t n, int sms) {
    // ---- reduce
    double tbps[NIMPL] = {0};
    T results[NIMPL];
    auto run_reduce = [&](auto kernel, int impl) {
        const int grid = grid_for(kernel, BT, sms);
        float ms = bench_median_ms([&] { cudaMemsetAsync(acc, 0, sizeof(T)); kernel<<<grid, BT>>>(in, n, acc); }, 5, 30);
        BENCH_CUDA(cudaMemcpy(&results[impl], acc, sizeof(T), cudaMemcpyDeviceToHost));
        tbps[impl] = bench_tbps((double)n * sizeof(T), ms);
        fprintf(g_csv, "reduce,%s,%d,%s,%.4f,%.4f\n", tname<T>(), BT, kReduceNames[impl], ms, tbps[impl]);
    };
    run_reduce(k_reduce<BT, T, WK>, WK);
    run_reduce(k_reduce<BT, T, WK0>, WK0);
    run_reduce(k_reduce<BT, T, CUB_DEF>, CUB_DEF);
    run_reduce(k_reduce<BT, T, CUB_ALT>, CUB_ALT);
    const double ref = (double)results[CUB_DEF];
    bool ok = true;
    for (int i = 0; i < NIMPL; ++i) ok = ok && fabs((double)results[i] - ref) <= 1e-3 * (1.0 + fabs(ref));
    const double cubBest = std::max(tbps[CUB_DEF], tbps[CUB_ALT]);
    printf("| reduce | %-5s | %4d | %5.2f | %5.2f | %5.2f | %5.2f | %5.2fx | %5.1f%% | %s |\n", tname<T>(), BT,
           tbps[WK], tbps[WK0], tbps[CUB_DEF], tbps[CUB_ALT], tbps[WK] / cubBest, 100.0 * tbps[WK] / g_copy_read,
           ok ? "ok" : "MISMATCH");
    // ---- scan
    double st[NIMPL] = {0};
    std::vector<T> hw(1 << 16), hc(1 << 16);
    auto run_scan = [&](auto kernel, int impl) {
        const int grid = grid_for(kernel, BT, sms);
        BENCH_CUDA(cudaMemset(out, 0, n * sizeof(T)));
        float ms = bench_median_ms([&] { kernel<<<grid, BT>>>(in, out, n); }, 5, 30);
        st[impl] = bench_tbps(2.0 * n * sizeof(T), ms);
        fprintf(g_csv, "scan,%s,%d,%s,%.4f,%.4f\n", tname<T>(), BT, kScanNames[impl], ms, st[impl]);
        BENCH_CUDA(cudaMemcpy((impl == WK ? hw : hc).data(), out + n - (1 << 16), (1 << 16) * sizeof(T), cudaMemcpyDeviceToHost));
    };
    run_scan(k_scan<BT, T, WK>, WK);
    bool sok = true;
    run_scan(k_scan<BT, T, CUB_DEF>, CUB_DEF);
    for (int i = 0; i < (1 << 16); ++i) sok = sok && fabs((double)hw[i] - (double)hc[i]) <= 1e-3 * (1.0 + fabs((double)hc[i]));
    run_scan(k_scan<BT, T, CUB_ALT>, CUB_ALT);
    const double scub = std::max(st[CUB_DEF], st[CUB_ALT]);
    printf("| scan   | %-5s | %4d | %5.2f |   -   | %5.2f | %5.2f | %5.2fx | %5.1f%% | %s |\n", tname<T>(), BT,
           st[WK], st[CUB_DEF], st[CUB_ALT], st[WK] / scub, 100.0 * st[WK] / g_copy_rw, sok ? "ok" : "MISMATCH");
    fflush(stdout);
}

template <typename T> static void bench_type(size_t n, int sms) {
    T *in, *out, *acc;
    BENCH_CUDA(cudaMalloc(&in, n * sizeof(T)));
    BENCH_CUDA(cudaMalloc(&out, n * sizeof(T)));
    BENCH_CUDA(cudaMalloc(&acc, sizeof(T)));
    if constexpr (sizeof(T) == 4 && (T)0.5 == 0) bench_fill_random(in, n, 7, -100.f, 100.f);
    else bench_fill_random(in, n, 7, -1.f, 1.f);
    bench_progress("%s: block sizes 64..1024", tname<T>());
    bench_bt<64, T>(in, out, acc, n, sms);
    bench_bt<128, T>(in, out, acc, n, sms);
    bench_bt<256, T>(in, out, acc, n, sms);
    bench_bt<512, T>(in, out, acc, n, sms);
    bench_bt<1024, T>(in, out, acc, n, sms);
    cudaFree(in); cudaFree(out); cudaFree(acc);
}

// ---- statistics ----------------------------------------------------------------------------------
enum Stat { WELFORD, CUB_WELFORD, TWO_PASS, SUM2_X2, SUM2_MULTI, SUM2_GEN, SUM2_COMM, SUM2_CUB, NSTAT };
static const char* kStatNames[] = {"welford", "cub_welford", "two_pass", "sum2_x2", "sum2_multi", "sum2_gen", "sum2_comm", "sum2_cub"};

struct Sum2 { float s, q; };
struct Sum2Op { // ordered (no declaration): the generic path keeps the lower thread on the left
    __device__ Sum2 operator()(Sum2 a, Sum2 b) const { return Sum2{a.s + b.s, a.q + b.q}; }
};
struct Sum2OpComm {
    static constexpr bool commutative = true;
    __device__ Sum2 operator()(Sum2 a, Sum2 b) const { return Sum2{a.s + b.s, a.q + b.q}; }
};

/// Every block walks its tiles of BT x E elements (E / 4 float4 loads a thread); per tile one block
/// statistic of kind I; thread 0 adds up (mean + variance) or (sum + sum of squares) of its tiles.
template <int BT, int E, int I> __global__ void __launch_bounds__(BT) k_stats(const float* __restrict__ in, size_t n, float* out) {
    constexpr int kVecs = E / 4;
    constexpr size_t kTile = (size_t)BT * E;
    using CubW = cub::BlockReduce<warpkit::WelfordState, BT>;
    using CubS = cub::BlockReduce<Sum2, BT>;
    __shared__ typename CubW::TempStorage tw;
    __shared__ typename CubS::TempStorage ts;
    const float4* vin = reinterpret_cast<const float4*>(in);
    float acc = 0.0f;
    for (size_t tile = blockIdx.x; tile * kTile < n; tile += gridDim.x) {
        float x[E];
#pragma unroll
        for (int j = 0; j < kVecs; ++j) {
            const float4 q = vin[tile * kTile / 4 + threadIdx.x + (size_t)j * BT];
            x[4 * j] = q.x; x[4 * j + 1] = q.y; x[4 * j + 2] = q.z; x[4 * j + 3] = q.w;
        }
        if constexpr (I == WELFORD || I == CUB_WELFORD) {
            const warpkit::WelfordState st = warpkit::welfordUpdate(warpkit::welfordEmpty(), x);
            warpkit::WelfordState r;
            if constexpr (I == WELFORD) r = warpkit::blockReduceWelford<BT>(st);
            else { r = CubW(tw).Reduce(st, warpkit::WelfordMerge{}); __syncthreads(); }
            acc += r.mean + warpkit::welfordVariance(r);
        } else if constexpr (I == TWO_PASS) {
            float s = 0.0f;
#pragma unroll
            for (int j = 0; j < E; ++j) s += x[j];
            const float mean = warpkit::blockReduceSum<BT>(s) * (1.0f / (float)kTile);
            float q = 0.0f;
#pragma unroll
            for (int j = 0; j < E; ++j) q += (x[j] - mean) * (x[j] - mean);
            acc += mean + warpkit::blockReduceSum<BT>(q) * (1.0f / (float)kTile);
        } else {
            float v[2] = {0.0f, 0.0f};
#pragma unroll
            for (int j = 0; j < E; ++j) { v[0] += x[j]; v[1] += x[j] * x[j]; }
            if constexpr (I == SUM2_X2) { v[0] = warpkit::blockReduceSum<BT>(v[0]); v[1] = warpkit::blockReduceSum<BT>(v[1]); }
            else if constexpr (I == SUM2_MULTI) warpkit::blockReduceSum<BT>(v);
            else if constexpr (I == SUM2_GEN) { const Sum2 r = warpkit::blockReduce<BT>(Sum2{v[0], v[1]}, Sum2Op{}); v[0] = r.s; v[1] = r.q; }
            else if constexpr (I == SUM2_COMM) { const Sum2 r = warpkit::blockReduce<BT>(Sum2{v[0], v[1]}, Sum2OpComm{}); v[0] = r.s; v[1] = r.q; }
            else { const Sum2 r = CubS(ts).Reduce(Sum2{v[0], v[1]}, Sum2Op{}); __syncthreads(); v[0] = r.s; v[1] = r.q; }
            acc += v[0] + v[1];
        }
    }
    if (threadIdx.x == 0) atomicAdd(out, acc);
}

template <int BT, int E> static void bench_stats_bt(const float* in, float* acc, size_t n, int sms) {
    double tb[NSTAT] = {0};
    float res[NSTAT];
    auto run = [&](auto kernel, int impl) {
        const int grid = grid_for(kernel, BT, sms);
        const float ms = bench_median_ms([&] { cudaMemsetAsync(acc, 0, sizeof(float)); kernel<<<grid, BT>>>(in, n, acc); }, 5, 30);
        BENCH_CUDA(cudaMemcpy(&res[impl], acc, sizeof(float), cudaMemcpyDeviceToHost));
        tb[impl] = bench_tbps((double)n * sizeof(float), ms);
        fprintf(g_csv, "stats_e%d,float,%d,%s,%.4f,%.4f\n", E, BT, kStatNames[impl], ms, tb[impl]);
    };
    run(k_stats<BT, E, WELFORD>, WELFORD);
    run(k_stats<BT, E, CUB_WELFORD>, CUB_WELFORD);
    run(k_stats<BT, E, TWO_PASS>, TWO_PASS);
    run(k_stats<BT, E, SUM2_X2>, SUM2_X2);
    run(k_stats<BT, E, SUM2_MULTI>, SUM2_MULTI);
    run(k_stats<BT, E, SUM2_GEN>, SUM2_GEN);
    run(k_stats<BT, E, SUM2_COMM>, SUM2_COMM);
    run(k_stats<BT, E, SUM2_CUB>, SUM2_CUB);
    // Every tile's mean + variance (or sum + sum of squares) added up: the kinds agree within float.
    bool ok = true;
    for (int i = 0; i < NSTAT; ++i) {
        const double ref = i <= TWO_PASS ? res[TWO_PASS] : res[SUM2_X2];
        ok = ok && fabs((double)res[i] - ref) <= 1e-3 * (1.0 + fabs(ref));
    }
    printf("| %2d | %4d | %5.2f | %5.2f | %5.2f | %5.2f | %5.2f | %5.2f | %5.2f | %5.2f | %5.2fx | %5.2fx | %5.2fx | %5.2fx | %s |\n", E, BT,
           tb[WELFORD], tb[CUB_WELFORD], tb[TWO_PASS], tb[SUM2_X2], tb[SUM2_MULTI], tb[SUM2_GEN], tb[SUM2_COMM], tb[SUM2_CUB],
           tb[WELFORD] / tb[TWO_PASS], tb[WELFORD] / tb[CUB_WELFORD], tb[SUM2_MULTI] / tb[SUM2_X2], tb[SUM2_COMM] / tb[SUM2_CUB], ok ? "ok" : "MISMATCH");
    fflush(stdout);
}

template <int E> static void bench_stats_e(const float* in, float* acc, size_t n, int sms) {
    bench_stats_bt<128, E>(in, acc, n, sms);
    bench_stats_bt<256, E>(in, acc, n, sms);
    bench_stats_bt<512, E>(in, acc, n, sms);
    bench_stats_bt<1024, E>(in, acc, n, sms);
}

static void bench_stats(size_t n, int sms) {
    float *in, *acc;
    BENCH_CUDA(cudaMalloc(&in, n * sizeof(float)));
    BENCH_CUDA(cudaMalloc(&acc, sizeof(float)));
    bench_fill_random(in, n, 11, -1.f, 1.f);
    bench_progress("statistics: block sizes 128..1024, 16 and 4 elements a thread");
    printf("\nblock statistics, float, TB/s of bytes read (E: elements a thread per block reduction)\n\n");
    printf("| E | BT | welford | cub_welf | two_pass | sum2_x2 | sum2_multi | sum2_gen | sum2_comm | sum2_cub | welf/2pass | welf/cub | multi/x2 | comm/cub | check |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    bench_stats_e<16>(in, acc, n, sms);
    bench_stats_e<4>(in, acc, n, sms);
    printf("\nwelford: welfordUpdate + blockReduceWelford; cub_welf: cub::BlockReduce of the same state and merge;\n"
           "two_pass: mean, then the squared deviations (two blockReduceSum); sum2_*: {sum, sum of squares} as\n"
           "two named calls (x2), one N-value call (multi), a struct through generic blockReduce (gen: ordered;\n"
           "comm: operator declares commutative), cub::BlockReduce of the struct (cub)\n");
    cudaFree(in); cudaFree(acc);
}

int main(int argc, char** argv) {
    bench_require_gpu();
    g_csv = bench_csv(argc, argv, "build/bench/block.csv", "op,type,block,impl,ms,tbps");
    cudaDeviceProp prop;
    BENCH_CUDA(cudaGetDeviceProperties(&prop, 0));
    const size_t n = (size_t)1 << 28;
    g_copy_rw = bench_copy_tbps(n * 4);
    g_copy_read = g_copy_rw; // copy figure counts read + written bytes; a read-only kernel can reach it in bytes read
    printf("block reductions and scans vs CUB, %s, n = 2^28 per type\n", prop.name);
    printf("copy ceiling (1 GiB D2D, read+written bytes): %.2f TB/s\n", g_copy_rw);
    fprintf(g_csv, "copy,-,-,d2d,-,%.4f\n", g_copy_rw);
    printf("TB/s: reduce counts bytes read, scan bytes read + written. ratio = warpkit / best CUB.\n\n");
    printf("| op     | type  | BT   | warpkit | wk_t0 | cub_def | cub_alt | ratio | %%copy | check |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|\n");
    bench_type<float>(n, prop.multiProcessorCount);
    bench_type<int>(n, prop.multiProcessorCount);
    printf("\nreduce: cub_def = BLOCK_REDUCE_WARP_REDUCTIONS (CUB's default), cub_alt = BLOCK_REDUCE_RAKING\n");
    printf("scan:   cub_def = BLOCK_SCAN_RAKING (CUB's default), cub_alt = BLOCK_SCAN_WARP_SCANS\n");
    bench_stats(n, prop.multiProcessorCount);
    fclose(g_csv);
    return 0;
}
