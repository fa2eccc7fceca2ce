// Tests of include/warpkit/block/load.cuh: blocked and striped loads and stores of a tile at every
// offset 0..7 elements from a 16-byte boundary, with n cutting the tile anywhere (fill values and
// skipped stores checked; elements outside untouched), odd block sizes, float and short; the halo
// tile loader against its slot map for tiles at the array's start, middle and end (fill outside
// [0, n)), aligned and misaligned.
#include "../common.cuh"
#include <warpkit/block/load.cuh>
#include <vector>

// Loads the tile at in + off (n valid) in the given order; dumps each thread's K values to
// regs[t * K + k]; stores v + 1 to out + off in the same order (only the first n).
template <int BT, int K, bool Blocked, typename T>
__global__ void k_tile(const T* in, T* out, T* regs, int off, long long n) {
    T v[K];
    if (Blocked) warpkit::blockLoadBlocked<BT, K>(v, in + off, n, T(-7));
    else warpkit::blockLoadStriped<BT, K>(v, in + off, n, T(-7));
    for (int k = 0; k < K; ++k) {
        regs[threadIdx.x * K + k] = v[k];
        v[k] = v[k] + T(1);
    }
    if (Blocked) warpkit::blockStoreBlocked<BT, K>(out + off, v, n);
    else warpkit::blockStoreStriped<BT, K>(out + off, v, n);
}

template <int BT, int K, bool Blocked, typename T> static void tile(wk_tally* tally) {
    const int size = BT * K, total = size + 16;
    std::vector<T> h(total);
    for (int i = 0; i < total; ++i) h[i] = T(i % 1000);
    T* in = wk_alloc<T>(total);
    T* out = wk_alloc<T>(total);
    T* regs = wk_alloc<T>(size);
    wk_upload(in, h.data(), total);
    const long long ns[] = {0, 1, K - 1 > 0 ? K - 1 : 1, size / 2 + 1, size - 1, size, size + 5};
    for (int off = 0; off < 8; ++off)
        for (long long n : ns) {
            wk_poison(out, total);
            wk_poison(regs, size);
            k_tile<BT, K, Blocked, T><<<1, BT>>>(in, out, regs, off, n);
            WK_LAUNCHED();
            std::vector<T> o(total), r(size);
            wk_download(o.data(), out, total);
            wk_download(r.data(), regs, size);
            T poison;
            memset(&poison, 0xA5, sizeof poison);
            for (int t = 0; t < BT; ++t)
                for (int k = 0; k < K; ++k) {
                    const long long i = Blocked ? (long long)t * K + k : (long long)k * BT + t;
                    const T want = i < n ? h[off + i] : T(-7);
                    wk_tally_check(tally, r[t * K + k] == want, "load BT=%d K=%d %s off %d n %lld: t %d k %d", BT, K,
                                   Blocked ? "blocked" : "striped", off, n, t, k);
                }
            for (int j = 0; j < total; ++j) {
                const long long i = j - off;
                const T want = i >= 0 && i < n && i < size ? T(h[j] + T(1)) : poison;
                wk_tally_check(tally, memcmp(&o[j], &want, sizeof(T)) == 0,
                               "store BT=%d K=%d %s off %d n %lld: element %d", BT, K, Blocked ? "blocked" : "striped",
                               off, n, j);
            }
        }
    cudaFree(in);
    cudaFree(out);
    cudaFree(regs);
}

Test(block_load, blocked_and_striped) {
    WK_REQUIRE_GPU();
    wk_tally tally = {};
    tile<128, 4, true, float>(&tally);
    tile<128, 4, false, float>(&tally);
    tile<96, 8, true, float>(&tally);
    tile<33, 3, true, float>(&tally);
    tile<33, 3, false, float>(&tally);
    tile<64, 8, true, short>(&tally);
    tile<70, 16, true, short>(&tally);
    tile<70, 5, false, short>(&tally);
    WK_TALLY_EXPECT(tally);
}

// Stages tile number blockIdx.x (start = blockIdx.x * Tile + shift) and dumps the whole smem array.
template <int BT, int Tile, int Halo>
__global__ void k_halo(const float* in, long long n, long long shift, float* dump) {
    __shared__ alignas(16) float s[Tile + 2 * Halo];
    warpkit::blockLoadTileHalo<BT, Tile, Halo>(s, in, n, (long long)blockIdx.x * Tile + shift, -1.5f);
    __syncthreads();
    for (int j = threadIdx.x; j < Tile + 2 * Halo; j += BT) dump[blockIdx.x * (Tile + 2 * Halo) + j] = s[j];
}

template <int BT, int Tile, int Halo> static void halo(wk_tally* tally) {
    const long long ns[] = {1, 7, Tile - 3, Tile, 3 * Tile + 5};
    const long long shifts[] = {0, 1, -2, 4};
    for (long long n : ns)
        for (long long shift : shifts) {
            std::vector<float> h(n);
            for (long long i = 0; i < n; ++i) h[i] = (float)(i + 1);
            float* in = wk_alloc<float>(n);
            wk_upload(in, h.data(), n);
            const int blocks = (int)((n + Tile - 1) / Tile) + 1, slots = Tile + 2 * Halo;
            float* dump = wk_alloc<float>((size_t)blocks * slots);
            wk_poison(dump, (size_t)blocks * slots);
            k_halo<BT, Tile, Halo><<<blocks, BT>>>(in, n, shift, dump);
            WK_LAUNCHED();
            std::vector<float> d((size_t)blocks * slots);
            wk_download(d.data(), dump, d.size());
            for (int b = 0; b < blocks; ++b)
                for (int j = 0; j < slots; ++j) {
                    const long long e = (long long)b * Tile + shift - Halo + j;
                    const float want = e >= 0 && e < n ? h[e] : -1.5f;
                    wk_tally_check(tally, d[(size_t)b * slots + j] == want,
                                   "halo BT=%d Tile=%d Halo=%d n %lld shift %lld block %d slot %d: %g", BT, Tile, Halo,
                                   n, shift, b, j, d[(size_t)b * slots + j]);
                }
            cudaFree(in);
            cudaFree(dump);
        }
}

Test(block_load, tile_with_halo) {
    WK_REQUIRE_GPU();
    wk_tally tally = {};
    halo<128, 1024, 4>(&tally);
    halo<96, 96 * 3, 3>(&tally);
    halo<33, 100, 40>(&tally);
    halo<256, 2048, 0>(&tally);
    WK_TALLY_EXPECT(tally);
}
