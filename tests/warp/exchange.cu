// Tests of include/warpkit/warp/exchange.cuh: blocked <-> striped for K = 1, 3, 4, 8, 32 values a
// lane with 4-, 12- and 40-byte items through the scratch (several warps of a block at once, each
// with its own scratch, two calls back to back), and the register transpose for float and a
// 12-byte struct, against the index maps.
#include "../common.cuh"
#include <warpkit/warp/exchange.cuh>
#include <vector>

struct S12 {
    int a, b, c;
};
struct S40 {
    int w[10];
};
template <typename T> __host__ __device__ T item(int i) {
    T v;
    int* w = (int*)&v;
    for (unsigned j = 0; j < sizeof(T) / 4; ++j) w[j] = i * 31 + (int)j;
    return v;
}

constexpr int kWarps = 3;

// out[warp][lane][k] after blocked->striped, then after striped->blocked (round trip).
template <int K, typename T> __global__ void k_exchange(T* out) {
    __shared__ warpkit::WarpExchangeScratch<T, K> s[kWarps];
    const int w = threadIdx.x / 32, l = threadIdx.x % 32;
    T v[K];
    for (int k = 0; k < K; ++k) v[k] = item<T>(w * 10000 + l * K + k); // blocked
    warpkit::warpExchangeBlockedToStriped(v, s[w]);
    for (int k = 0; k < K; ++k) out[((w * 2 + 0) * 32 + l) * K + k] = v[k];
    warpkit::warpExchangeStripedToBlocked(v, s[w]);
    for (int k = 0; k < K; ++k) out[((w * 2 + 1) * 32 + l) * K + k] = v[k];
}

template <typename T> __global__ void k_transpose(T* out) {
    const int l = threadIdx.x % 32, w = threadIdx.x / 32;
    T v[32];
    for (int j = 0; j < 32; ++j) v[j] = item<T>(w * 10000 + l * 32 + j);
    warpkit::warpTranspose(v);
    for (int j = 0; j < 32; ++j) out[(w * 32 + l) * 32 + j] = v[j];
}

/// Runs kernel<<<1, kWarps * 32>>> on a poisoned buffer of `total` items and returns what it wrote.
template <typename T> static std::vector<T> launched(void (*kernel)(T*), int total) {
    T* d = wk_alloc<T>(total);
    wk_poison(d, total);
    kernel<<<1, kWarps * 32>>>(d);
    WK_LAUNCHED();
    std::vector<T> h(total);
    wk_download(h.data(), d, total);
    cudaFree(d);
    return h;
}

template <int K, typename T> static void run(wk_tally* tally) {
    const std::vector<T> h = launched<T>(k_exchange<K, T>, kWarps * 2 * 32 * K);
    for (int w = 0; w < kWarps; ++w)
        for (int l = 0; l < 32; ++l)
            for (int k = 0; k < K; ++k) {
                const T striped = item<T>(w * 10000 + k * 32 + l), blocked = item<T>(w * 10000 + l * K + k);
                wk_tally_check(tally, memcmp(&h[((w * 2 + 0) * 32 + l) * K + k], &striped, sizeof(T)) == 0,
                               "K=%d size %zu warp %d lane %d item %d: blocked to striped", K, sizeof(T), w, l, k);
                wk_tally_check(tally, memcmp(&h[((w * 2 + 1) * 32 + l) * K + k], &blocked, sizeof(T)) == 0,
                               "K=%d size %zu warp %d lane %d item %d: back to blocked", K, sizeof(T), w, l, k);
            }
}

Test(exchange, blocked_striped_round_trip) {
    WK_REQUIRE_GPU();
    wk_tally tally = {};
    run<1, float>(&tally);
    run<3, float>(&tally);
    run<4, int>(&tally);
    run<8, float>(&tally);
    run<32, float>(&tally);
    run<5, S12>(&tally);
    run<2, S40>(&tally);
    WK_TALLY_EXPECT(tally);
}

template <typename T> static void transpose(wk_tally* tally) {
    const std::vector<T> h = launched<T>(k_transpose<T>, kWarps * 32 * 32);
    for (int w = 0; w < kWarps; ++w)
        for (int l = 0; l < 32; ++l)
            for (int j = 0; j < 32; ++j) {
                const T want = item<T>(w * 10000 + j * 32 + l);
                wk_tally_check(tally, memcmp(&h[(w * 32 + l) * 32 + j], &want, sizeof(T)) == 0,
                               "transpose size %zu warp %d lane %d item %d", sizeof(T), w, l, j);
            }
}

Test(exchange, register_transpose) {
    WK_REQUIRE_GPU();
    wk_tally tally = {};
    transpose<float>(&tally);
    transpose<S12>(&tally);
    WK_TALLY_EXPECT(tally);
}
