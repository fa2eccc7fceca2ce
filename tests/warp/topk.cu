// Tests of include/warpkit/warp/topk.cuh: the keys (host: every 16-bit pattern and a sweep of fp32
// patterns keep the value order and invert exactly), and warpTopK at every K against a stable sort
// on the host, with ties, NaN, +-inf, -0.0 and partial warps (n < 32 K: empty slots rank last).
#include "../common.cuh"
#include "../topk_reference.cuh"
#include <warpkit/warp/topk.cuh>
#include <algorithm>
#include <vector>

namespace {

template <typename T> T fromBits(unsigned b) {
    T v;
    if constexpr (sizeof(T) == 4) memcpy(&v, &b, 4);
    else {
        const unsigned short h = (unsigned short)b;
        memcpy(&v, &h, 2);
    }
    return v;
}

template <typename T> void keyOrder(const std::vector<unsigned>& patterns) {
    for (size_t i = 0; i < patterns.size(); ++i) {
        const T a = fromBits<T>(patterns[i]);
        const T b = fromBits<T>(patterns[(i * 7919 + 13) % patterns.size()]);
        const double da = wk_to_double(a), db = wk_to_double(b);
        const unsigned ka = warpkit::topkOrderKey(a), kb = warpkit::topkOrderKey(b);
        cr_assert((ka > kb) == wk_ranks_before(da, db, true) && (ka < kb) == wk_ranks_before(db, da, true),
                  "%s keys of %g and %g: %08x %08x", wk_type_name<T>(), da, db, ka, kb);
        if (!isnan(da)) {
            const T back = warpkit::topkKeyValue<T>(ka);
            cr_assert(memcmp(&back, &a, sizeof(T)) == 0, "%s key of %g does not invert", wk_type_name<T>(), da);
        }
        const unsigned long long p = warpkit::topkPack(a, (unsigned)i, false);
        cr_assert(p != warpkit::kTopKEmpty && warpkit::topkUnpackIndex(p) == (unsigned)i, "pack of index %zu", i);
    }
}

template <int K, typename T> __global__ void k_warp_topk(const T* in, int n, bool largest, T* ov, unsigned* oi) {
    const int w = (int)(threadIdx.x / 32), lane = (int)(threadIdx.x % 32);
    const T* src = in + (size_t)w * 32 * K;
    T v[K], outV[K];
    unsigned outI[K];
    for (int j = 0; j < K; ++j) v[j] = src[lane * K + j];
    warpkit::warpTopK<K>(v, n, largest, outV, outI);
    for (int j = 0; j < K; ++j) {
        ov[(size_t)w * 32 * K + lane * K + j] = outV[j];
        oi[(size_t)w * 32 * K + lane * K + j] = outI[j];
    }
}

template <int K, typename T> void warpCase(wk_rng* rng) {
    constexpr int N = 32 * K, W = 2;
    for (int n : {1, N / 2 + 1, N - 1, N})
        for (int largest = 0; largest < 2; ++largest) {
            std::vector<T> h((size_t)W * N);
            for (auto& v : h) v = wk_from_double<T>(wk_topk_draw(rng, 12, 4));
            T* din = wk_alloc<T>(h.size());
            T* dv = wk_alloc<T>(h.size());
            unsigned* di = wk_alloc<unsigned>(h.size());
            wk_upload(din, h.data(), h.size());
            wk_poison(dv, h.size());
            wk_poison(di, h.size());
            k_warp_topk<K><<<1, 32 * W>>>(din, n, largest != 0, dv, di);
            WK_LAUNCHED();
            std::vector<T> gv(h.size());
            std::vector<unsigned> gi(h.size());
            wk_download(gv.data(), dv, gv.size());
            wk_download(gi.data(), di, gi.size());
            for (int w = 0; w < W; ++w) {
                const T* src = h.data() + (size_t)w * N;
                std::vector<int> order(n);
                for (int i = 0; i < n; ++i) order[i] = i;
                std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
                    return wk_ranks_before(wk_to_double(src[a]), wk_to_double(src[b]), largest != 0);
                });
                for (int r = 0; r < N; ++r) {
                    const unsigned idx = gi[(size_t)w * N + r];
                    if (r >= n) {
                        cr_assert(idx == warpkit::kTopKNoIndex, "%s K=%d n=%d: rank %d is not empty", wk_type_name<T>(),
                                  K, n, r);
                        continue;
                    }
                    const double got = wk_to_double(gv[(size_t)w * N + r]), want = wk_to_double(src[order[r]]);
                    cr_assert(
                        idx == (unsigned)order[r] &&
                            (isnan(want) ? isnan(got) : memcmp(&gv[(size_t)w * N + r], &src[order[r]], sizeof(T)) == 0),
                        "%s K=%d n=%d %s warp %d rank %d: index %u value %g, want %d (%g)", wk_type_name<T>(), K, n,
                        largest ? "largest" : "smallest", w, r, idx, got, order[r], want);
                }
            }
            WK_CUDA(cudaFree(din));
            WK_CUDA(cudaFree(dv));
            WK_CUDA(cudaFree(di));
        }
}

template <typename T> void everyK(wk_rng* rng) {
    warpCase<1, T>(rng);
    warpCase<2, T>(rng);
    warpCase<4, T>(rng);
    warpCase<8, T>(rng);
    warpCase<16, T>(rng);
    warpCase<32, T>(rng);
}

} // namespace

Test(warp_topk, keys_keep_the_order) { // host only
    std::vector<unsigned> all16(65536);
    for (unsigned i = 0; i < 65536; ++i) all16[i] = i;
    keyOrder<__half>(all16);
    keyOrder<__nv_bfloat16>(all16);
    std::vector<unsigned> f32 = {0u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u, 1u, 0x80000001u};
    wk_rng rng = wk_rng_make(0x7e1);
    for (int i = 0; i < 200000; ++i) f32.push_back((unsigned)wk_next(&rng));
    keyOrder<float>(f32);
}

Test(warp_topk, every_k) {
    WK_REQUIRE_GPU();
    wk_rng rng = wk_rng_make(0x7e2);
    everyK<float>(&rng);
    everyK<__half>(&rng);
    everyK<__nv_bfloat16>(&rng);
}
