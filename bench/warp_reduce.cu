// bench/warp_reduce.cu: segmented warp sums over 2^28 elements, every Width 2..32, float and int.
//
// Form (main table). The input is cut into tiles of 32 * K consecutive elements, one tile per warp
// per step; lane l loads the K elements at tile + l*K (K = 1: 4-byte loads; K = 4: one 16-byte
// load) and sums them in registers, so every lane of every warp loads and the warp's loads are one
// contiguous run. The warp's lanes form segments of Width lanes, as the primitive defines them:
// lanes [s*Width, min((s+1)*Width, 32)); when Width does not divide 32 the last 32 % Width lanes
// form one shorter segment (warpReduceSum defines its sum and tests/warp/reduce.cu checks it). A
// segment owns the elements its lanes loaded, one row of Width*K consecutive elements (the short
// segment's row: (32 % Width)*K), and its first lane writes the row's sum after one width-Width
// reduction. So the time holds the loads, the in-register pre-sum and one reduction per row, and
// no lane idles at any width. Each warp loads 16 / K tiles before it reduces them (64 bytes in
// flight a lane). K = 1 is one reduction per element loaded (the primitive's cost at its highest);
// K = 4 is the 16-byte-load form a kernel built on the primitive uses.
//
// Peers, in the same run and the same kernel (only the reduction call differs):
//   * warpkit::warpReduceSum<W>.
//   * cub::WarpReduce<T, W>::Sum: shuffles for a power-of-two W. For any other W, CUB reduces
//     through shared memory (WarpReduceSmem), and its documentation requires the entrant threads to
//     be a multiple of W, i.e. one logical warp of a non-power-of-two W per hardware warp; its
//     member mask for such a W names lanes 0..W-1 whichever logical warp calls. Several such
//     logical warps in one converged warp, the short one calling Sum(v, 32 % W), are outside that
//     contract; they give the right sums here (checked below) and the table marks those cells '*'.
//   * hand: the shuffle loop an engineer writes without a library: shfl.xor over Width lanes for a
//     power of two, else shfl.down with the sum clipped to the lanes of the segment.
//   * the ceiling: a device-to-device copy of 1 GiB.
// TB/s = (bytes read + bytes written) / time for every kernel and for the copy, so % copy is the
// share of the copy's memory rate: read 2^28 * sizeof(T), written rows * sizeof(T).
// Every kernel's output is checked against a double-precision CPU sum of its rows before it is timed.
//
// Batched (float, second table): each segment reduces K rows of Width elements per step (K values
// a lane, lane l of the segment holding element l of each row). warpkit::warpReduceBatchedSum<W>
// leaves row k's sum in lane k % P, slot k / P (P = warpBatchedLanes<W>()), and every lane stores
// its own slots; the peers are K separate warpkit::warpReduceSum<W> and K cub::WarpReduce<float,
// W>::Sum calls, after which the segment's first lane stores the K sums (CUB gives the sum to that
// lane only). The batched primitive defines no short segment, so for W = 24 and 12 the last 8 lanes
// load nothing: that table compares the three forms, and its % copy is not the primitive's ceiling.
//
// Usage: warp_reduce [out.csv [table...]]   tables: k1 k4 batched (none named: all three).
// make bench passes build/bench/warp_reduce.csv; the batched table goes to <out>_batched.csv.
#include <cub/warp/warp_reduce.cuh>
#include <warpkit/reduce.cuh>

#include <cmath>
#include <string>
#include <thread>

#include "bench.cuh"

namespace {

constexpr int kBlock = 256; // threads per block
constexpr long long kN = 1ll << 28;

/// Segments of Width lanes in a warp, the short last one included (rows per tile).
template <int W> __host__ __device__ constexpr int segsPerWarp() { return 32 / W + (32 % W ? 1 : 0); }
/// Segments of a full Width lanes in a warp.
template <int W> __host__ __device__ constexpr int fullSegs() { return 32 / W; }
template <int W> __host__ __device__ constexpr bool pow2Width() { return (W & (W - 1)) == 0; }

template <typename T> struct Vec4;
template <> struct Vec4<float> { using type = float4; };
template <> struct Vec4<int> { using type = int4; };

/// Sum of the K consecutive elements at p (K * sizeof(T) aligned); K = 4 is one 16-byte load.
template <int K, typename T> __device__ __forceinline__ T loadSum(const T* p) {
    static_assert(K == 1 || K == 4, "loadSum: K must be 1 or 4");
    if constexpr (K == 1) {
        return *p;
    } else {
        const typename Vec4<T>::type v = *reinterpret_cast<const typename Vec4<T>::type*>(p);
        return (v.x + v.y) + (v.z + v.w);
    }
}

/// The hand-written peer: Width-lane shuffle sum, result in the segment's first lane (every lane of
/// the segment for a power-of-two Width).
template <int W, typename T> __device__ __forceinline__ T handSum(T x) {
    if constexpr (pow2Width<W>()) {
#pragma unroll
        for (int o = W / 2; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o, W);
    } else {
        const int lane = threadIdx.x & 31;
        const int slane = lane % W;
        const int len = min(W, 32 - (lane - slane)); // lanes in this lane's segment
#pragma unroll
        for (int o = 1; o < W; o <<= 1) {
            const T y = __shfl_down_sync(0xffffffffu, x, o);
            if (slane + o < len) x += y;
        }
    }
    return x;
}

enum SegImpl { kImplWarpkit, kImplCub, kImplHand };
const char* const kImplName[3] = {"warpkit", "cub", "hand"};

/// The one kernel form every peer runs in (see the header comment); Impl picks the reduction.
template <int W, int K, typename T, int Impl> __global__ void __launch_bounds__(kBlock)
    segSum(const T* __restrict__ in, T* __restrict__ out, long long tiles) {
    constexpr int S = segsPerWarp<W>();
    constexpr int U = 16 / K; // tiles loaded before reducing: 64 bytes in flight a lane
    const int lane = threadIdx.x & 31;
    const int seg = lane / W;
    const int slane = lane - seg * W;
    const int len = min(W, 32 - seg * W); // W, or 32 % W for the short last segment
    const int warp = (blockIdx.x * kBlock + threadIdx.x) >> 5;
    const int warps = (gridDim.x * kBlock) >> 5;

    using CubReduce = cub::WarpReduce<T, W>;
    __shared__ typename CubReduce::TempStorage tmp[Impl == kImplCub ? kBlock / 32 * S : 1];

    // A step is U whole tiles (kN is a power of two); step is the same in every lane, so all lanes
    // take part in each reduction.
    static_assert(kN % (32 * K * U) == 0, "segSum: kN must be a multiple of a step's elements");
    const int steps = (int)(tiles / U);
    for (int step = warp; step < steps; step += warps) {
        const long long t0 = (long long)step * U;
        T x[U];
#pragma unroll
        for (int u = 0; u < U; ++u) x[u] = loadSum<K>(in + (t0 + u) * (32 * K) + lane * K);
#pragma unroll
        for (int u = 0; u < U; ++u) {
            T s;
            if constexpr (Impl == kImplWarpkit) {
                s = warpkit::warpReduceSum<W>(x[u]);
            } else if constexpr (Impl == kImplHand) {
                s = handSum<W>(x[u]);
            } else {
                CubReduce r(tmp[(threadIdx.x >> 5) * S + seg]);
                if constexpr (pow2Width<W>()) s = r.Sum(x[u]);
                else s = r.Sum(x[u], len);
            }
            if (slane == 0) out[(t0 + u) * S + seg] = s;
        }
    }
}

template <typename T> const char* typeName();
template <> const char* typeName<float>() { return "float"; }
template <> const char* typeName<int>() { return "int"; }

/// Compare out[0..rows) with double sums of the host rows, on all host cores. span(r, &start, &n):
/// row r is host[start .. start + n).
template <typename T, typename Span> bool checkRows(const std::vector<T>& host, const std::vector<T>& got,
                                                    long long rows, Span span, int W, int K, const char* who) {
    const int nth = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
    std::vector<long long> bad(nth, 0), first(nth, -1);
    std::vector<std::thread> pool;
    for (int t = 0; t < nth; ++t) {
        pool.emplace_back([&, t] {
            for (long long r = t; r < rows; r += nth) {
                long long b = 0;
                int n = 0;
                span(r, &b, &n);
                double s = 0, a = 0;
                for (int j = 0; j < n; ++j) {
                    const double x = (double)host[b + j];
                    s += x;
                    a += std::fabs(x);
                }
                const double g = (double)got[r];
                // float: n roundings of at most eps/2 * (partial sum) each; int: exact.
                const double tol = std::is_same<T, float>::value ? n * 0x1p-24 * a + 1e-30 : 0.0;
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
        long long b = 0;
        int n = 0;
        span(r0, &b, &n);
        double s = 0;
        for (int j = 0; j < n; ++j) s += (double)host[b + j];
        printf("MISMATCH %s width %d K %d %s: %lld of %lld rows wrong; row %lld (%d elements) got %.9g want %.9g\n",
               who, W, K, typeName<T>(), nbad, rows, r0, n, (double)got[r0], s);
    }
    return nbad == 0;
}

template <typename Kernel> int gridFor(Kernel kernel) {
    int dev = 0, sms = 0, per = 0;
    BENCH_CUDA(cudaGetDevice(&dev));
    BENCH_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    BENCH_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel, kBlock, 0));
    return sms * std::max(per, 1);
}

/// Worst cell of one measure: its value and where.
struct Worst {
    double v = 1e30;
    int width = 0, k = 0;
    const char* type = "";
    void see(double x, int w, int kk, const char* t) {
        if (x < v) v = x, width = w, k = kk, type = t;
    }
};

struct Ctx {
    double copy;
    FILE* csv;
    FILE* csvBatched;
    bool all_ok = true;
    int cells = 0, met_copy = 0, met_cub = 0, met_hand = 0;
    Worst pct, cub, hand;
};

template <int W, int K, typename T> void runWidth(Ctx& c, const T* din, T* dout, const std::vector<T>& host) {
    constexpr int S = segsPerWarp<W>();
    const long long tiles = kN / (32 * K);
    const long long rows = tiles * S;
    const double bytes = (double)(kN + rows) * sizeof(T);
    const int g[3] = {gridFor(segSum<W, K, T, kImplWarpkit>), gridFor(segSum<W, K, T, kImplCub>),
                      gridFor(segSum<W, K, T, kImplHand>)};
    auto launch = [&](int impl) {
        if (impl == kImplWarpkit) segSum<W, K, T, kImplWarpkit><<<g[0], kBlock>>>(din, dout, tiles);
        else if (impl == kImplCub) segSum<W, K, T, kImplCub><<<g[1], kBlock>>>(din, dout, tiles);
        else segSum<W, K, T, kImplHand><<<g[2], kBlock>>>(din, dout, tiles);
    };
    // Row r: segment r % S of tile r / S, its lanes' K elements each.
    auto span = [](long long r, long long* b, int* n) {
        const long long t = r / S;
        const int s = (int)(r % S);
        *b = t * 32 * K + (long long)s * W * K;
        *n = std::min(W, 32 - s * W) * K;
    };

    // Correctness once per kernel, before timing, with the output poisoned first.
    std::vector<T> got(rows);
    bool ok = true;
    for (int impl = 0; impl < 3; ++impl) {
        BENCH_CUDA(cudaMemset(dout, 0xA5, rows * sizeof(T)));
        launch(impl);
        BENCH_CUDA(cudaGetLastError());
        BENCH_CUDA(cudaMemcpy(got.data(), dout, rows * sizeof(T), cudaMemcpyDeviceToHost));
        ok = checkRows(host, got, rows, span, W, K, kImplName[impl]) && ok;
    }
    c.all_ok = c.all_ok && ok;

    // Three interleaved rounds; keep each kernel's best median (drift hits all alike).
    float ms[3] = {1e30f, 1e30f, 1e30f};
    for (int round = 0; round < 3; ++round)
        for (int impl = 0; impl < 3; ++impl)
            ms[impl] = std::min(ms[impl], bench_median_ms([&] { launch(impl); }, 3, 25));
    double tb[3];
    for (int impl = 0; impl < 3; ++impl) tb[impl] = bench_tbps(bytes, ms[impl]);
    const double rc = tb[0] / tb[1], rh = tb[0] / tb[2], pct = 100.0 * tb[0] / c.copy;
    const bool cubInContract = pow2Width<W>();
    c.cells++;
    c.met_copy += pct >= 90.0;
    c.met_cub += rc >= 1.0;
    c.met_hand += rh >= 1.0;
    c.pct.see(pct, W, K, typeName<T>());
    c.cub.see(rc, W, K, typeName<T>());
    c.hand.see(rh, W, K, typeName<T>());
    printf("| %5d | %-5s | %d | %8.3f | %8.3f%s | %8.3f | %6.3f | %6.3f | %6.1f%% | %s%s\n", W, typeName<T>(), K, tb[0],
           tb[1], cubInContract ? " " : "*", tb[2], rc, rh, pct, ok ? "ok" : "WRONG",
           pct >= 90.0 ? "" : "  (below 90% of copy)");
    fprintf(c.csv, "%d,%s,%d,%lld,%.0f,%d,%d,%d,%.5f,%.5f,%.5f,%.4f,%.4f,%.4f,%.4f,%.4f,%.2f,%.4f,%d,%d\n", W,
            typeName<T>(), K, rows, bytes, g[0], g[1], g[2], ms[0], ms[1], ms[2], tb[0], tb[1], tb[2], rc, rh, pct,
            c.copy, cubInContract ? 1 : 0, ok ? 1 : 0);
    fflush(stdout);
}

template <int K, typename T, int... Ws>
void runWidths(Ctx& c, const T* din, T* dout, const std::vector<T>& host, std::integer_sequence<int, Ws...>) {
    (runWidth<Ws + 2, K, T>(c, din, dout, host), ...);
}

template <typename T> void runType(Ctx& c, bool k1, bool k4) {
    if (!k1 && !k4) return;
    bench_progress("filling 2^28 %s and copying them to the host for the CPU check", typeName<T>());
    T *din, *dout;
    BENCH_CUDA(cudaMalloc(&din, kN * sizeof(T)));
    BENCH_CUDA(cudaMalloc(&dout, (kN / 2) * sizeof(T)));
    if (std::is_same<T, int>::value) bench_fill_random(din, kN, 0x1234 + sizeof(T), -1000.f, 1000.f);
    else bench_fill_random(din, kN, 0x4321, -1.f, 1.f);
    std::vector<T> host(kN);
    BENCH_CUDA(cudaMemcpy(host.data(), din, kN * sizeof(T), cudaMemcpyDeviceToHost));
    if (k1) runWidths<1, T>(c, din, dout, host, std::make_integer_sequence<int, 31>{});
    if (k4) runWidths<4, T>(c, din, dout, host, std::make_integer_sequence<int, 31>{});
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

template <int W, int K, int Impl> int batchGrid() { return gridFor(batchSum<W, K, Impl>); }

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
    auto rowOfW = [](long long r, long long* b, int* n) { *b = r * W, *n = W; }; // row r: W elements at r * W
    std::vector<float> got(rows);
    bool ok = true;
    for (int impl = 0; impl < 3; ++impl) {
        BENCH_CUDA(cudaMemset(dout, 0xA5, rows * sizeof(float)));
        launch(impl);
        BENCH_CUDA(cudaGetLastError());
        BENCH_CUDA(cudaMemcpy(got.data(), dout, rows * sizeof(float), cudaMemcpyDeviceToHost));
        ok = checkRows(host, got, rows, rowOfW, W, K, names[impl]) && ok;
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
    const bool k1 = bench_wants(argc, argv, "k1"), k4 = bench_wants(argc, argv, "k4");
    const bool batched = bench_wants(argc, argv, "batched");
    Ctx c;
    c.csv = bench_csv(argc, argv, "warp_reduce.csv",
                      "width,type,k,rows,bytes,grid_warpkit,grid_cub,grid_hand,ms_warpkit,ms_cub,ms_hand,tbps_warpkit,"
                      "tbps_cub,tbps_hand,ratio_cub,ratio_hand,pct_copy,copy_tbps,cub_in_contract,correct");
    // The batched table goes to <csv name>_batched.csv (its own columns).
    std::string bpath = argc > 1 ? argv[1] : "warp_reduce.csv";
    if (bpath.size() > 4 && bpath.compare(bpath.size() - 4, 4, ".csv") == 0) bpath.resize(bpath.size() - 4);
    bpath += "_batched.csv";
    char* bargv[2] = {argv[0], &bpath[0]};
    c.csvBatched = bench_csv(2, bargv, bpath.c_str(), "width,k,impl,rows,bytes,grid,ms,tbps,copy_tbps,correct");
    const double copy0 = bench_copy_tbps((size_t)kN * 4);
    c.copy = copy0;
    printf("warp_reduce: segmented warp sums, 2^28 elements, %s (%d SMs)\n", p.name, p.multiProcessorCount);
    printf("copy ceiling (1 GiB D2D, read + write): %.3f TB/s\n", copy0);
    if (k1 || k4) {
        printf("every lane loads K consecutive elements a tile and pre-sums them; each segment of Width lanes (the\n"
               "short last one too) sums its lanes' Width*K elements with one reduction; first lane stores.\n"
               "TB/s = (input + output bytes) / time; /CUB, /hand = warpkit / peer; %% copy = warpkit / copy ceiling\n"
               "* CUB outside its contract (several non-power-of-two logical warps a warp; sums checked)\n\n");
        printf("| width | type  | K | warpkit  |    CUB    |   hand   |  /CUB  | /hand  | %% copy | check\n");
        printf("|------:|-------|--:|---------:|----------:|---------:|-------:|-------:|-------:|------\n");
    }
    runType<float>(c, k1, k4);
    runType<int>(c, k1, k4);
    if (batched) runBatchedAll(c);
    const double copy1 = bench_copy_tbps((size_t)kN * 4);
    printf("\ncopy ceiling again at the end: %.3f TB/s (start %.3f)\n", copy1, copy0);
    if (c.cells) {
        printf("target warpkit >= 90%% of copy: %d of %d cells met; min %.1f%% (width %d %s K %d)\n", c.met_copy,
               c.cells, c.pct.v, c.pct.width, c.pct.type, c.pct.k);
        printf("warpkit >= CUB: %d of %d cells; min ratio %.3f (width %d %s K %d)\n", c.met_cub, c.cells, c.cub.v,
               c.cub.width, c.cub.type, c.cub.k);
        printf("warpkit >= hand: %d of %d cells; min ratio %.3f (width %d %s K %d)\n", c.met_hand, c.cells, c.hand.v,
               c.hand.width, c.hand.type, c.hand.k);
    }
    printf("results vs CPU double reference: %s\n", c.all_ok ? "all correct" : "MISMATCHES (see above)");
    fclose(c.csv);
    fclose(c.csvBatched);
    return c.all_ok ? 0 : 1;
}
