// bench/warp_toolkit.cu: the warp toolkit of issue 30 against its CUB / cooperative-groups peers
// and a hand-written intrinsic kernel, in one run on one GPU.
//
// Primitive cases (compute-bound on purpose, so the primitive's own cost shows): each thread of a
// 2^22-thread grid loads one value (or K values), applies the primitive kReps times in a
// dependent chain, and stores the result; the three kernels of a case differ only in the call.
//   shuffle_up        warpShuffleUp<32>(v, 1); peer cub::ShuffleUp<32>; hand __shfl_up_sync
//   shuffle_up_s12    the same on a 12-byte struct; hand: three __shfl_up_sync
//   exchange_k8       warpExchangeBlockedToStriped<8> and back; peer cub::WarpExchange; hand: padded smem
//   tile_reduce16     warpReduceSum(tile16, v); peer cg::reduce(tile16, v, plus); hand __shfl_xor_sync loop
//   tile_scan32       warpInclusiveSum(tile32, v); peer cg::inclusive_scan(tile32, v); hand __shfl_up_sync loop
//   half2_fast_sum    warpReduceSumFast<32>(h2), 2 elements a lane; peer: warpReduceSum<32> of 2 floats (the
//                     unpacked float path, the same elements); hand: __hadd2 + __shfl_xor_sync
// Memory-bound cases:
//   block_load_store  a copy through blockLoadBlocked/blockStoreBlocked<256, 8>; peer cub::BlockLoad/BlockStore
//                     (VECTORIZE); hand: two float4 loads and stores a thread
//   transform_reduce  deviceTransformReduce(x * x, Sum) of 2^25 floats; peer cub::DeviceReduce::TransformReduce;
//                     hand column: the time the copy ceiling needs for the bytes read
// The stencil's ratio to a copy is printed by samples/stencil.
//
// Table: warpkit time, the peer's and the hand kernel's, and peer / warpkit and hand / warpkit
// (>= 1.0 means warpkit is at least as fast). Usage: warp_toolkit [out.csv]
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
#include <cub/block/block_load.cuh>
#include <cub/block/block_store.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/util_ptx.cuh>
#include <cub/warp/warp_exchange.cuh>
#include <warpkit/block/load.cuh>
#include <warpkit/device/reduce.cuh>
#include <warpkit/reduce.cuh>
#include <warpkit/scan.cuh>
#include <warpkit/vote.cuh>
#include <warpkit/warp/cg.cuh>
#include <warpkit/warp/exchange.cuh>

#include "bench.cuh"

namespace cg = cooperative_groups;

namespace {

constexpr int kBlock = 256;
constexpr int kThreads = 1 << 22;
constexpr int kReps = 32;
struct S12 {
    float a, b, c;
};

enum Impl { Wk, Peer, Hand };

template <Impl I> __global__ void __launch_bounds__(kBlock) shuffleUp(const float* in, float* out) {
    const int t = blockIdx.x * kBlock + threadIdx.x;
    float v = in[t];
#pragma unroll 4
    for (int r = 0; r < kReps; ++r) {
        if (I == Wk) v += warpkit::warpShuffleUp<32>(v, 1);
        else if (I == Peer) v += cub::ShuffleUp<32>(v, 1, 0, 0xffffffffu);
        else v += __shfl_up_sync(0xffffffffu, v, 1);
    }
    out[t] = v;
}

template <Impl I> __global__ void __launch_bounds__(kBlock) shuffleUpS12(const float* in, float* out) {
    const int t = blockIdx.x * kBlock + threadIdx.x;
    S12 v{in[t], 1.0f, 2.0f};
#pragma unroll 4
    for (int r = 0; r < kReps; ++r) {
        S12 u;
        if (I == Wk) u = warpkit::warpShuffleUp<32>(v, 1);
        else if (I == Peer) u = cub::ShuffleUp<32>(v, 1, 0, 0xffffffffu);
        else u = S12{__shfl_up_sync(~0u, v.a, 1), __shfl_up_sync(~0u, v.b, 1), __shfl_up_sync(~0u, v.c, 1)};
        v = S12{v.a + u.b, v.b + u.c, v.c + u.a};
    }
    out[t] = v.a + v.b + v.c;
}

constexpr int kK = 8;
template <Impl I> __global__ void __launch_bounds__(kBlock) exchange(const float* in, float* out) {
    using CubX = cub::WarpExchange<float, kK>;
    __shared__ typename CubX::TempStorage cubTmp[I == Peer ? kBlock / 32 : 1];
    __shared__ warpkit::WarpExchangeScratch<float, kK> wkTmp[I == Wk ? kBlock / 32 : 1];
    __shared__ float hand[I == Hand ? kBlock / 32 : 1][32 * kK + kK];
    const int t = blockIdx.x * kBlock + threadIdx.x, w = threadIdx.x / 32, l = threadIdx.x % 32;
    float v[kK];
    for (int k = 0; k < kK; ++k) v[k] = in[t] + k;
    for (int r = 0; r < kReps / 4; ++r) {
        if (I == Wk) {
            warpkit::warpExchangeBlockedToStriped(v, wkTmp[w]);
            v[0] += 1.0f;
            warpkit::warpExchangeStripedToBlocked(v, wkTmp[w]);
        } else if (I == Peer) {
            CubX(cubTmp[w]).BlockedToStriped(v, v);
            __syncwarp();
            v[0] += 1.0f;
            CubX(cubTmp[w]).StripedToBlocked(v, v);
            __syncwarp();
        } else {
            for (int k = 0; k < kK; ++k) hand[w][(l * kK + k) + (l * kK + k) / 32] = v[k];
            __syncwarp();
            for (int k = 0; k < kK; ++k) v[k] = hand[w][(k * 32 + l) + (k * 32 + l) / 32];
            __syncwarp();
            v[0] += 1.0f;
            for (int k = 0; k < kK; ++k) hand[w][(k * 32 + l) + (k * 32 + l) / 32] = v[k];
            __syncwarp();
            for (int k = 0; k < kK; ++k) v[k] = hand[w][(l * kK + k) + (l * kK + k) / 32];
            __syncwarp();
        }
    }
    float s = 0;
    for (int k = 0; k < kK; ++k) s += v[k];
    out[t] = s;
}

template <Impl I> __global__ void __launch_bounds__(kBlock) tileReduce(const float* in, float* out) {
    const auto tile = cg::tiled_partition<16>(cg::this_thread_block());
    const int t = blockIdx.x * kBlock + threadIdx.x;
    float v = in[t];
#pragma unroll 4
    for (int r = 0; r < kReps; ++r) {
        if (I == Wk) v = warpkit::warpReduceSum(tile, v) * 0.5f;
        else if (I == Peer) v = cg::reduce(tile, v, cg::plus<float>()) * 0.5f;
        else {
            float s = v;
            for (int m = 1; m < 16; m <<= 1) s += __shfl_xor_sync(~0u, s, m, 16);
            v = s * 0.5f;
        }
    }
    out[t] = v;
}

template <Impl I> __global__ void __launch_bounds__(kBlock) tileScan(const float* in, float* out) {
    const auto tile = cg::tiled_partition<32>(cg::this_thread_block());
    const int t = blockIdx.x * kBlock + threadIdx.x;
    float v = in[t];
#pragma unroll 4
    for (int r = 0; r < kReps; ++r) {
        if (I == Wk) v = warpkit::warpInclusiveSum(tile, v) * 0.5f;
        else if (I == Peer) v = cg::inclusive_scan(tile, v) * 0.5f;
        else {
            const int l = threadIdx.x & 31;
            float s = v;
            for (int o = 1; o < 32; o <<= 1) {
                const float u = __shfl_up_sync(~0u, s, o);
                if (l >= o) s += u;
            }
            v = s * 0.5f;
        }
    }
    out[t] = v;
}

// 2 elements a lane in every variant; per element the same work.
template <Impl I> __global__ void __launch_bounds__(kBlock) halfSum(const __half2* in, float* out) {
    const int t = blockIdx.x * kBlock + threadIdx.x;
    __half2 h = in[t];
    float2 f = __half22float2(h);
#pragma unroll 4
    for (int r = 0; r < kReps; ++r) {
        if (I == Wk) h = __hmul2(warpkit::warpReduceSumFast<32>(h), __float2half2_rn(0.03125f));
        else if (I == Peer)
            f = make_float2(warpkit::warpReduceSum<32>(f.x) * 0.03125f, warpkit::warpReduceSum<32>(f.y) * 0.03125f);
        else {
            __half2 s = h;
            for (int m = 1; m < 32; m <<= 1) s = __hadd2(s, __shfl_xor_sync(~0u, s, m));
            h = __hmul2(s, __float2half2_rn(0.03125f));
        }
    }
    out[t] = I == Peer ? f.x + f.y : __low2float(h) + __high2float(h);
}

constexpr int kItems = 8;
template <Impl I> __global__ void __launch_bounds__(kBlock) tileCopy(const float* in, float* out, long long n) {
    const long long base = (long long)blockIdx.x * kBlock * kItems;
    float v[kItems];
    if (I == Wk) {
        warpkit::blockLoadBlocked<kBlock, kItems>(v, in + base, n - base, 0.0f);
        warpkit::blockStoreBlocked<kBlock, kItems>(out + base, v, n - base);
    } else if (I == Peer) {
        using L = cub::BlockLoad<float, kBlock, kItems, cub::BLOCK_LOAD_VECTORIZE>;
        using S = cub::BlockStore<float, kBlock, kItems, cub::BLOCK_STORE_VECTORIZE>;
        __shared__ typename L::TempStorage lt;
        __shared__ typename S::TempStorage st;
        L(lt).Load(in + base, v);
        S(st).Store(out + base, v);
    } else {
        const float4* p = reinterpret_cast<const float4*>(in + base) + threadIdx.x * 2;
        float4* q = reinterpret_cast<float4*>(out + base) + threadIdx.x * 2;
        const float4 a = p[0], b = p[1];
        q[0] = a;
        q[1] = b;
    }
}

struct Square {
    __host__ __device__ float operator()(float x) const { return x * x; }
};

FILE* csv;
int failures = 0; // outputs that disagree with the reference kernel: the run exits 1
void row(const char* name, const char* peer, float wk, float pe, float hand) {
    printf("%-18s %10.1f %10.1f %10.1f   %-32s %6.2fx %6.2fx\n", name, wk * 1e3f, pe * 1e3f, hand * 1e3f, peer, pe / wk,
           hand > 0 ? hand / wk : 0.0f);
    fprintf(csv, "%s,%s,%.4f,%.4f,%.4f,%.4f,%.4f\n", name, peer, wk * 1e3f, pe * 1e3f, hand * 1e3f, pe / wk,
            hand > 0 ? hand / wk : 0.0f);
}

template <typename K> float timeKernel(K k) { return bench_median_ms(k, 5, 31); }

} // namespace

int main(int argc, char** argv) {
    bench_require_gpu();
    csv = bench_csv(argc, argv, "build/bench/warp_toolkit.csv",
                    "case,peer,warpkit_us,peer_us,hand_us,peer_over_wk,hand_over_wk");
    float *in, *out;
    __half2* h2;
    BENCH_CUDA(cudaMalloc(&in, (size_t)kThreads * 8 * sizeof(float)));
    BENCH_CUDA(cudaMalloc(&out, (size_t)kThreads * 8 * sizeof(float)));
    BENCH_CUDA(cudaMalloc(&h2, (size_t)kThreads * sizeof(__half2)));
    bench_fill_random(in, (size_t)kThreads * 8, 1);
    bench_fill_random((__half*)h2, (size_t)kThreads * 2, 2);
    const int grid = kThreads / kBlock;
    printf("%-18s %10s %10s %10s   %-32s %7s %7s\n", "case", "warpkit us", "peer us", "hand us", "peer", "peer/wk",
           "hand/wk");
    // Each case first checks warpkit's output against the hand kernel's (same arithmetic order).
    std::vector<float> hw((size_t)kThreads * 8), hh((size_t)kThreads * 8);
    auto check = [&](const char* name, auto runWk, auto runHand) {
        BENCH_CUDA(cudaMemset(out, 0, (size_t)kThreads * 8 * sizeof(float)));
        runWk();
        BENCH_CUDA(cudaMemcpy(hw.data(), out, hw.size() * sizeof(float), cudaMemcpyDeviceToHost));
        BENCH_CUDA(cudaMemset(out, 0, (size_t)kThreads * 8 * sizeof(float)));
        runHand();
        BENCH_CUDA(cudaMemcpy(hh.data(), out, hh.size() * sizeof(float), cudaMemcpyDeviceToHost));
        long bad = 0;
        for (size_t i = 0; i < hw.size(); ++i) bad += !(fabsf(hw[i] - hh[i]) <= 1e-3f * (1.0f + fabsf(hh[i])));
        if (bad) printf("%-18s CHECK FAILED: %ld outputs differ from the hand-written kernel's\n", name, bad);
        failures += bad != 0;
    };
#define WK_CASE(NAME, PEER, KERNEL, ...)                                            \
    check(                                                                          \
        NAME, [&] { KERNEL<Wk><<<grid, kBlock>>>(__VA_ARGS__); },                   \
        [&] { KERNEL<Hand><<<grid, kBlock>>>(__VA_ARGS__); });                      \
    row(NAME, PEER, timeKernel([&] { KERNEL<Wk><<<grid, kBlock>>>(__VA_ARGS__); }), \
        timeKernel([&] { KERNEL<Peer><<<grid, kBlock>>>(__VA_ARGS__); }),           \
        timeKernel([&] { KERNEL<Hand><<<grid, kBlock>>>(__VA_ARGS__); }))
    WK_CASE("shuffle_up", "cub::ShuffleUp", shuffleUp, in, out);
    WK_CASE("shuffle_up_s12", "cub::ShuffleUp (12-byte struct)", shuffleUpS12, in, out);
    WK_CASE("exchange_k8", "cub::WarpExchange", exchange, in, out);
    WK_CASE("tile_reduce16", "cg::reduce", tileReduce, in, out);
    WK_CASE("tile_scan32", "cg::inclusive_scan", tileScan, in, out);
    WK_CASE("half2_fast_sum", "float warpReduceSum x2 (per elem)", halfSum, h2, out);
    const long long n = (long long)kThreads * 8;
    WK_CASE("block_load_store", "cub::BlockLoad/Store VECTORIZE", tileCopy, in, out, n);
#undef WK_CASE
    // Transform-reduce: sum of squares of 2^25 floats; the "hand" column is the read ceiling
    // (the copy ceiling's time for the same bytes read, half a copy's bytes moved).
    const long long m = 1ll << 25;
    float* res;
    BENCH_CUDA(cudaMalloc(&res, 2 * sizeof(float)));
    size_t wkBytes = 0, cubBytes = 0;
    BENCH_CUDA(warpkit::deviceTransformReduce(in, res, m, Square{}, warpkit::Sum{}, 0.0f, nullptr, &wkBytes));
    BENCH_CUDA(cub::DeviceReduce::TransformReduce(nullptr, cubBytes, in, res + 1, m, ::cuda::std::plus<float>{},
                                                  Square{}, 0.0f));
    void *wkTmp, *cubTmp;
    BENCH_CUDA(cudaMalloc(&wkTmp, wkBytes));
    BENCH_CUDA(cudaMalloc(&cubTmp, cubBytes));
    const float tw = timeKernel(
        [&] { warpkit::deviceTransformReduce(in, res, m, Square{}, warpkit::Sum{}, 0.0f, wkTmp, &wkBytes); });
    const float tc = timeKernel([&] {
        cub::DeviceReduce::TransformReduce(cubTmp, cubBytes, in, res + 1, m, ::cuda::std::plus<float>{}, Square{},
                                           0.0f);
    });
    const double ceiling = bench_copy_tbps((size_t)m * sizeof(float)); // TB/s, read + written bytes
    const float readMs = (float)((double)m * sizeof(float) / (ceiling * 1e12) * 1e3);
    float sums[2];
    BENCH_CUDA(cudaMemcpy(sums, res, sizeof sums, cudaMemcpyDeviceToHost));
    if (!(fabsf(sums[0] - sums[1]) <= 1e-4f * fabsf(sums[1])))
        printf("transform_reduce   CHECK FAILED: warpkit %.9g, CUB %.9g\n", sums[0], sums[1]), ++failures;
    row("transform_reduce", "cub::DeviceReduce::TransformReduce", tw, tc, readMs);
    printf("(transform_reduce's hand column: the copy ceiling's time for the bytes read)\n");
    fclose(csv);
    return failures ? 1 : 0;
}
