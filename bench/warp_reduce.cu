// bench/warp_reduce.cu: segmented warp sums over 2^28 elements, every Width 2..32, float and int.
//
// Work: the input is read as rows of Width elements (rows = 2^28 / Width; the < Width leftover
// elements are not touched). Each segment of Width lanes sums one row per step and the
// segment's first lane writes the row's sum. For a Width that does not divide 32, a warp holds
// 32 / Width full segments and its last 32 % Width lanes load nothing (they still call the
// reduction, which both libraries require of every lane of the warp); such a warp loads more rows a
// step (unrollFor), so each width keeps the same bytes in flight.
//
// Peers, in the same run: warpkit::warpReduceSum<W> and cub::WarpReduce<T, W>::Sum inside the
// same kernel (only the reduction call differs), and a device-to-device copy as the ceiling.
// Bytes moved = rows * Width * sizeof(T) read + rows * sizeof(T) written.
// Every kernel's output is checked against a double-precision CPU sum before it is timed.
//
// Batched (float, second table): each segment reduces K rows of Width elements per step (K values
// a lane, loaded as above). warpkit::warpReduceBatchedSum<W> leaves row k's sum in lane k % P, slot
// k / P (P = warpBatchedLanes<W>()), and every lane stores its own slots; the peers are K separate
// warpkit::warpReduceSum<W> and K cub::WarpReduce<float, W>::Sum calls, after which the segment's
// first lane stores the K sums (CUB gives the sum to that lane only). Same bytes, same check.
//
// Usage: warp_reduce [out.csv]      (make bench passes build/bench/warp_reduce.csv)
#include <cub/warp/warp_reduce.cuh>
#include <warpkit/reduce.cuh>

#include <cmath>
#include <string>
#include <thread>

#include "bench.cuh"

namespace {

constexpr int kBlock = 256; // threads per block
constexpr long long kN = 1ll << 28;

template <int W> __host__ __device__ constexpr int fullSegs() { return 32 / W; }
template <int W> __host__ __device__ constexpr int segsPerWarp() { return 32 / W + (32 % W ? 1 : 0); }
/// Rows in flight per segment per loop step (loads issued before reducing): 8 when the segments fill
/// the warp, else 16, so a width that leaves lanes idle (at most 15 of 32) keeps at least as many
/// bytes in flight a warp and the bench measures the reduction, not the idle lanes.
template <int W> __host__ __device__ constexpr int unrollFor() { return fullSegs<W>() * W == 32 ? 8 : 16; }

/// The one kernel form both libraries run in. kCub picks the reduction; nothing else differs.
template <int W, typename T, bool kCub>
__global__ void __launch_bounds__(kBlock) segSum(const T* __restrict__ in, T* __restrict__ out, long long rows) {
    constexpr int S = fullSegs<W>();
    const int lane = threadIdx.x & 31;
    const int seg = lane / W;
    const int slane = lane - seg * W;
    const bool active = seg < S;  // false only for the short tail segment of a non-power-of-two W
    const long long warp = ((long long)blockIdx.x * kBlock + threadIdx.x) >> 5;
    const long long warps = ((long long)gridDim.x * kBlock) >> 5;

    using CubReduce = cub::WarpReduce<T, W>;
    __shared__ typename CubReduce::TempStorage tmp[kCub ? kBlock / 32 * segsPerWarp<W>() : 1];

    // base is the same in every lane of the warp, so all lanes take part in each reduction.
    constexpr int kUnroll = unrollFor<W>();
    for (long long base = warp * S * kUnroll; base < rows; base += warps * S * kUnroll) {
        T v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const long long r = base + u * S + seg;
            v[u] = (active && r < rows) ? in[(base + u * S) * W + lane] : T(0);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            T s;
            if constexpr (kCub) s = CubReduce(tmp[(threadIdx.x >> 5) * segsPerWarp<W>() + seg]).Sum(v[u]);
            else s = warpkit::warpReduceSum<W>(v[u]);
            const long long r = base + u * S + seg;
            if (active && slane == 0 && r < rows) out[r] = s;
        }
    }
}

struct Result {
    double ms, tbps;
};

template <typename T> const char* typeName();
template <> const char* typeName<float>() { return "float"; }
template <> const char* typeName<int>() { return "int"; }

/// Compare out[0..rows) with double sums of host rows of W elements, on all host cores.
template <typename T>
bool checkRows(const std::vector<T>& host, const std::vector<T>& got, int W, long long rows, const char* who) {
    const int nth = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
    std::vector<long long> bad(nth, 0), first(nth, -1);
    std::vector<std::thread> pool;
    for (int t = 0; t < nth; ++t) {
        pool.emplace_back([&, t] {
            for (long long r = t; r < rows; r += nth) {
                double s = 0, a = 0;
                for (int j = 0; j < W; ++j) {
                    double x = (double)host[r * W + j];
                    s += x;
                    a += std::fabs(x);
                }
                const double g = (double)got[r];
                // float: W roundings of at most eps/2 * (partial sum) each; int: exact.
                const double tol = std::is_same<T, float>::value ? W * 0x1p-24 * a + 1e-30 : 0.0;
                if (!(std::fabs(g - s) <= tol)) {
                    if (first[t] < 0) first[t] = r;
                    ++bad[t];
                }
            }
        });
    }
    for (auto& th : pool) th.join();
    long long nbad = 0, r0 = -1;
    for (int t = 0; t < nth; ++t) {
        nbad += bad[t];
        if (first[t] >= 0 && (r0 < 0 || first[t] < r0)) r0 = first[t];
    }
    if (nbad) {
        double s = 0;
        for (int j = 0; j < W; ++j) s += (double)host[r0 * W + j];
        printf("MISMATCH %s width %d %s: %lld of %lld rows wrong; row %lld got %.9g want %.9g\n", who, W,
               typeName<T>(), nbad, rows, r0, (double)got[r0], s);
    }
    return nbad == 0;
}

template <int W, typename T, bool kCub> int gridFor() {
    int dev = 0, sms = 0, per = 0;
    BENCH_CUDA(cudaGetDevice(&dev));
    BENCH_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    BENCH_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, segSum<W, T, kCub>, kBlock, 0));
    return sms * std::max(per, 1);
}

struct Ctx {
    double copy;
    FILE* csv;
    FILE* csvBatched;
    bool all_ok;
    double min_ratio, min_pct;
    int cells, cells_met;
};

template <int W, typename T> void runWidth(Ctx& c, const T* din, T* dout, const std::vector<T>& host) {
    const long long rows = kN / W;
    const double bytes = (double)(rows * W + rows) * sizeof(T);
    const int gw = gridFor<W, T, false>(), gc = gridFor<W, T, true>();
    auto wk = [&] { segSum<W, T, false><<<gw, kBlock>>>(din, dout, rows); };
    auto cb = [&] { segSum<W, T, true><<<gc, kBlock>>>(din, dout, rows); };

    // Correctness once, before timing, with the output poisoned first.
    std::vector<T> got(rows);
    bool ok = true;
    for (int k = 0; k < 2; ++k) {
        BENCH_CUDA(cudaMemset(dout, 0xA5, rows * sizeof(T)));
        if (k) cb();
        else wk();
        BENCH_CUDA(cudaGetLastError());
        BENCH_CUDA(cudaMemcpy(got.data(), dout, rows * sizeof(T), cudaMemcpyDeviceToHost));
        ok = checkRows(host, got, W, rows, k ? "cub" : "warpkit") && ok;
    }
    c.all_ok = c.all_ok && ok;

    // Three interleaved rounds; keep each kernel's best median (drift hits both alike).
    float mw = 1e30f, mc = 1e30f;
    for (int round = 0; round < 3; ++round) {
        mw = std::min(mw, bench_median_ms(wk, 3, 25));
        mc = std::min(mc, bench_median_ms(cb, 3, 25));
    }
    const double tw = bench_tbps(bytes, mw), tc = bench_tbps(bytes, mc);
    const double ratio = tw / tc, pct = 100.0 * tw / c.copy;
    const bool met = ratio >= 1.0 && pct >= 90.0;
    c.cells++;
    c.cells_met += met;
    c.min_ratio = std::min(c.min_ratio, ratio);
    c.min_pct = std::min(c.min_pct, pct);
    printf("| %5d | %-5s | %8.3f | %8.3f | %6.3f | %6.1f%% | %s%s\n", W, typeName<T>(), tw, tc, ratio, pct,
           ok ? "ok" : "WRONG", met ? "" : "  (target missed)");
    fprintf(c.csv, "%d,%s,%lld,%.0f,%d,%d,%.5f,%.5f,%.4f,%.4f,%.4f,%.2f,%.4f,%d\n", W, typeName<T>(), rows, bytes, gw,
            gc, mw, mc, tw, tc, ratio, pct, c.copy, ok ? 1 : 0);
    fflush(stdout);
}

template <typename T, int... Ws> void runType(Ctx& c, std::integer_sequence<int, Ws...>) {
    bench_progress("filling 2^28 %s and copying them to the host for the CPU check", typeName<T>());
    T *din, *dout;
    BENCH_CUDA(cudaMalloc(&din, kN * sizeof(T)));
    BENCH_CUDA(cudaMalloc(&dout, (kN / 2) * sizeof(T)));
    if (std::is_same<T, int>::value) bench_fill_random(din, kN, 0x1234 + sizeof(T), -1000.f, 1000.f);
    else bench_fill_random(din, kN, 0x4321, -1.f, 1.f);
    std::vector<T> host(kN);
    BENCH_CUDA(cudaMemcpy(host.data(), din, kN * sizeof(T), cudaMemcpyDeviceToHost));
    (runWidth<Ws + 2, T>(c, din, dout, host), ...);
    BENCH_CUDA(cudaFree(din));
    BENCH_CUDA(cudaFree(dout));
}

// ---- batched --------------------------------------------------------------------------------------
enum BatchImpl { kBatched, kNamed, kCub };

/// Segment seg of each warp sums rows base + seg*K .. + K-1 (Width elements each) per step.
template <int W, int K, int Impl>
__global__ void __launch_bounds__(kBlock) batchSum(const float* __restrict__ in, float* __restrict__ out, long long rows) {
    constexpr int S = fullSegs<W>();
    constexpr int P = warpkit::warpBatchedLanes<W>();
    const int lane = threadIdx.x & 31;
    const int seg = lane / W;
    const int slane = lane - seg * W;
    const bool active = seg < S;
    const long long warp = ((long long)blockIdx.x * kBlock + threadIdx.x) >> 5;
    const long long warps = ((long long)gridDim.x * kBlock) >> 5;
    using CubReduce = cub::WarpReduce<float, W>;
    __shared__ typename CubReduce::TempStorage tmp[Impl == kCub ? kBlock / 32 * segsPerWarp<W>() : 1];
    for (long long base = warp * S * K; base < rows; base += warps * S * K) {
        const long long r0 = base + (long long)seg * K;
        float v[K];
#pragma unroll
        for (int k = 0; k < K; ++k) v[k] = (active && r0 + k < rows) ? in[(r0 + k) * W + slane] : 0.0f;
        if constexpr (Impl == kBatched) {
            warpkit::warpReduceBatchedSum<W>(v);
#pragma unroll
            for (int j = 0; j < (K + P - 1) / P; ++j) {
                const int k = slane + j * P;
                if (active && slane < P && k < K && r0 + k < rows) out[r0 + k] = v[j];
            }
        } else {
#pragma unroll
            for (int k = 0; k < K; ++k) {
                float t;
                if constexpr (Impl == kNamed) t = warpkit::warpReduceSum<W>(v[k]);
                else t = CubReduce(tmp[(threadIdx.x >> 5) * segsPerWarp<W>() + seg]).Sum(v[k]);
                if (active && slane == 0 && r0 + k < rows) out[r0 + k] = t;
            }
        }
    }
}

template <int W, int K, int Impl> int batchGrid() {
    int dev = 0, sms = 0, per = 0;
    BENCH_CUDA(cudaGetDevice(&dev));
    BENCH_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    BENCH_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, batchSum<W, K, Impl>, kBlock, 0));
    return sms * std::max(per, 1);
}

template <int W, int K> void runBatched(Ctx& c, const float* din, float* dout, const std::vector<float>& host) {
    const long long rows = kN / W;
    const double bytes = (double)(rows * W + rows) * sizeof(float);
    const int g[3] = {batchGrid<W, K, kBatched>(), batchGrid<W, K, kNamed>(), batchGrid<W, K, kCub>()};
    auto launch = [&](int impl) {
        if (impl == kBatched) batchSum<W, K, kBatched><<<g[0], kBlock>>>(din, dout, rows);
        else if (impl == kNamed) batchSum<W, K, kNamed><<<g[1], kBlock>>>(din, dout, rows);
        else batchSum<W, K, kCub><<<g[2], kBlock>>>(din, dout, rows);
    };
    static const char* names[3] = {"batched", "named_x_k", "cub_x_k"};
    std::vector<float> got(rows);
    bool ok = true;
    for (int impl = 0; impl < 3; ++impl) {
        BENCH_CUDA(cudaMemset(dout, 0xA5, rows * sizeof(float)));
        launch(impl);
        BENCH_CUDA(cudaGetLastError());
        BENCH_CUDA(cudaMemcpy(got.data(), dout, rows * sizeof(float), cudaMemcpyDeviceToHost));
        ok = checkRows(host, got, W, rows, names[impl]) && ok;
    }
    c.all_ok = c.all_ok && ok;
    float ms[3] = {1e30f, 1e30f, 1e30f};
    for (int round = 0; round < 3; ++round)
        for (int impl = 0; impl < 3; ++impl) ms[impl] = std::min(ms[impl], bench_median_ms([&] { launch(impl); }, 3, 25));
    double tb[3];
    for (int impl = 0; impl < 3; ++impl) {
        tb[impl] = bench_tbps(bytes, ms[impl]);
        fprintf(c.csvBatched, "%d,%d,%s,%lld,%.0f,%d,%.5f,%.4f,%.4f,%d\n", W, K, names[impl], rows, bytes, g[impl], ms[impl], tb[impl], c.copy, ok ? 1 : 0);
    }
    printf("| %5d | %3d | %8.3f | %8.3f | %8.3f | %6.3f | %6.3f | %6.1f%% | %s\n", W, K, tb[0], tb[1], tb[2], tb[0] / tb[1], tb[0] / tb[2],
           100.0 * tb[0] / c.copy, ok ? "ok" : "WRONG");
    fflush(stdout);
}

void runBatchedAll(Ctx& c) {
    bench_progress("batched: filling 2^28 float and copying them to the host for the CPU check");
    float *din, *dout;
    BENCH_CUDA(cudaMalloc(&din, kN * sizeof(float)));
    BENCH_CUDA(cudaMalloc(&dout, (kN / 2) * sizeof(float)));
    bench_fill_random(din, kN, 0x5151, -1.f, 1.f);
    std::vector<float> host(kN);
    BENCH_CUDA(cudaMemcpy(host.data(), din, kN * sizeof(float), cudaMemcpyDeviceToHost));
    printf("\nbatched: K rows per segment per step; ratio = batched / K separate reductions\n\n");
    printf("| width |  K  | batched  | named x K |  CUB x K | /named |  /CUB  | %% copy | check\n");
    printf("|------:|----:|---------:|---------:|---------:|-------:|-------:|-------:|------\n");
    runBatched<32, 32>(c, din, dout, host);
    runBatched<32, 8>(c, din, dout, host);
    runBatched<32, 2>(c, din, dout, host);
    runBatched<16, 16>(c, din, dout, host);
    runBatched<8, 8>(c, din, dout, host);
    runBatched<4, 4>(c, din, dout, host);
    runBatched<24, 16>(c, din, dout, host);
    runBatched<12, 8>(c, din, dout, host);
    BENCH_CUDA(cudaFree(din));
    BENCH_CUDA(cudaFree(dout));
}

} // namespace

int main(int argc, char** argv) {
    bench_require_gpu();
    cudaDeviceProp p;
    BENCH_CUDA(cudaGetDeviceProperties(&p, 0));
    Ctx c{0, nullptr, nullptr, true, 1e30, 1e30, 0, 0};
    c.csv = bench_csv(argc, argv, "warp_reduce.csv",
                      "width,type,rows,bytes,grid_warpkit,grid_cub,ms_warpkit,ms_cub,tbps_warpkit,tbps_cub,"
                      "ratio,pct_copy,copy_tbps,correct");
    // The batched table goes to <csv name>_batched.csv (its own columns).
    std::string bpath = argc > 1 ? argv[1] : "warp_reduce.csv";
    if (bpath.size() > 4 && bpath.compare(bpath.size() - 4, 4, ".csv") == 0) bpath.resize(bpath.size() - 4);
    bpath += "_batched.csv";
    char* bargv[2] = {argv[0], &bpath[0]};
    c.csvBatched = bench_csv(2, bargv, bpath.c_str(), "width,k,impl,rows,bytes,grid,ms,tbps,copy_tbps,correct");
    const double copy0 = bench_copy_tbps((size_t)kN * 4);
    printf("warp_reduce: segmented warp sums, 2^28 elements, %s (%d SMs)\n", p.name, p.multiProcessorCount);
    printf("copy ceiling (1 GiB D2D, read + write): %.3f TB/s\n", copy0);
    printf("TB/s = (input + output bytes) / time; ratio = warpkit / CUB; %% copy = warpkit / copy ceiling\n\n");
    printf("| width | type  | warpkit  |   CUB    | ratio  | %% copy | check\n");
    printf("|------:|-------|---------:|---------:|-------:|-------:|------\n");
    c.copy = copy0;
    runType<float>(c, std::make_integer_sequence<int, 31>{});
    runType<int>(c, std::make_integer_sequence<int, 31>{});
    runBatchedAll(c);
    const double copy1 = bench_copy_tbps((size_t)kN * 4);
    printf("\ncopy ceiling again at the end: %.3f TB/s (start %.3f)\n", copy1, copy0);
    printf("targets (warpkit >= 1.0x CUB and >= 90%% of copy): %d of %d cells met; min ratio %.3f; min %% copy "
           "%.1f%%\n",
           c.cells_met, c.cells, c.min_ratio, c.min_pct);
    printf("results vs CPU double reference: %s\n", c.all_ok ? "all correct" : "MISMATCHES (see above)");
    fclose(c.csv);
    fclose(c.csvBatched);
    return c.all_ok ? 0 : 1;
}
