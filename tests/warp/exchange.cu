// Tests of include/warpkit/warp/exchange.cuh: blocked <-> striped for K = 1, 3, 4, 8, 32 values a
// lane with 4-, 12- and 40-byte items through the scratch (several warps of a block at once, each
// with its own scratch, two calls back to back), and the register transpose for float and a
// 12-byte struct, against the index maps.
#include "../common.cuh"
#include <warpkit/warp/exchange.cuh>
#include <vector>

struct S12 { int a, b, c; };
struct S40 { int w[10]; };
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

template <int K, typename T> static long run(long* checked) {
    const int total = kWarps * 2 * 32 * K;
    T* d = wk_alloc<T>(total);
    wk_poison(d, total);
    k_exchange<K, T><<<1, kWarps * 32>>>(d);
    WK_LAUNCHED();
    std::vector<T> h(total);
    wk_download(h.data(), d, total);
    long bad = 0;
    for (int w = 0; w < kWarps; ++w)
        for (int l = 0; l < 32; ++l)
            for (int k = 0; k < K; ++k) {
                const T striped = item<T>(w * 10000 + k * 32 + l), blocked = item<T>(w * 10000 + l * K + k);
                *checked += 2;
                bad += memcmp(&h[((w * 2 + 0) * 32 + l) * K + k], &striped, sizeof(T)) != 0;
                bad += memcmp(&h[((w * 2 + 1) * 32 + l) * K + k], &blocked, sizeof(T)) != 0;
            }
    cudaFree(d);
    return bad;
}

Test(exchange, blocked_striped_round_trip) {
    WK_REQUIRE_GPU();
    long checked = 0, bad = 0;
    bad += run<1, float>(&checked);
    bad += run<3, float>(&checked);
    bad += run<4, int>(&checked);
    bad += run<8, float>(&checked);
    bad += run<32, float>(&checked);
    bad += run<5, S12>(&checked);
    bad += run<2, S40>(&checked);
    cr_expect(bad == 0, "%ld of %ld items wrong", bad, checked);
}

template <typename T> static long transpose(long* checked) {
    const int total = kWarps * 32 * 32;
    T* d = wk_alloc<T>(total);
    wk_poison(d, total);
    k_transpose<T><<<1, kWarps * 32>>>(d);
    WK_LAUNCHED();
    std::vector<T> h(total);
    wk_download(h.data(), d, total);
    long bad = 0;
    for (int w = 0; w < kWarps; ++w)
        for (int l = 0; l < 32; ++l)
            for (int j = 0; j < 32; ++j) {
                const T want = item<T>(w * 10000 + j * 32 + l);
                ++*checked;
                bad += memcmp(&h[(w * 32 + l) * 32 + j], &want, sizeof(T)) != 0;
            }
    cudaFree(d);
    return bad;
}

Test(exchange, register_transpose) {
    WK_REQUIRE_GPU();
    long checked = 0, bad = 0;
    bad += transpose<float>(&checked);
    bad += transpose<S12>(&checked);
    cr_expect(bad == 0, "%ld of %ld items wrong", bad, checked);
}
