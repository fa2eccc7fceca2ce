// Tests of include/warpkit/warp/sort.cuh: warpBitonicSort, warpBitonicSortPairs, warpBitonicMerge,
// warpBitonicMergePairs at every K (1 .. 32), ascending and descending, against std::sort on the
// host. Several warps a block, each on its own data (the warps must not mix). Keys: unsigned with
// many duplicates (keys-only), floats with -0.0 and +-inf, and distinct 64-bit keys with their
// positions as values (pairs: each value must land next to its own key). Merges get a bitonic
// input: an ascending half then a descending half.
#include "../common.cuh"
#include <warpkit/warp/sort.cuh>
#include <algorithm>
#include <vector>

namespace {

constexpr int kWarps = 3; // warps a block; blocks: several

enum Op { Sort, SortPairs, Merge, MergePairs };

template <int K, bool Desc, Op O, typename Key> __global__ void k_sort(const Key* in, Key* out, unsigned* vout) {
    const int base = (int)((blockIdx.x * blockDim.x + threadIdx.x) / 32) * 32 * K;
    const unsigned lane = threadIdx.x % 32;
    Key keys[K];
    unsigned vals[K];
    for (int j = 0; j < K; ++j) {
        keys[j] = in[base + lane * K + j];
        vals[j] = lane * K + j;
    }
    if constexpr (O == Sort) warpkit::warpBitonicSort<K, Desc>(keys);
    else if constexpr (O == SortPairs) warpkit::warpBitonicSortPairs<K, Desc>(keys, vals);
    else if constexpr (O == Merge) warpkit::warpBitonicMerge<K, Desc>(keys);
    else warpkit::warpBitonicMergePairs<K, Desc>(keys, vals);
    for (int j = 0; j < K; ++j) {
        out[base + lane * K + j] = keys[j];
        vout[base + lane * K + j] = vals[j];
    }
}

template <typename Key> Key genKey(wk_rng* r, int kind);
template <> unsigned genKey<unsigned>(wk_rng* r, int) { return (unsigned)wk_int(r, 0, 40); }
template <> float genKey<float>(wk_rng* r, int) {
    const long long u = wk_int(r, 0, 9);
    return u == 0 ? -0.0f : u == 1 ? 0.0f : u == 2 ? INFINITY : u == 3 ? -INFINITY : (float)wk_uniform(r, -9, 9);
}
template <> unsigned long long genKey<unsigned long long>(wk_rng* r, int) { return wk_next(r); }

template <int K, bool Desc, Op O, typename Key> void run(wk_rng* rng) {
    constexpr int N = 32 * K;
    const int blocks = 2, warps = blocks * kWarps;
    std::vector<Key> h((size_t)warps * N);
    for (auto& v : h) v = genKey<Key>(rng, 0);
    const bool pairs = O == SortPairs || O == MergePairs;
    if (O == Merge || O == MergePairs)
        for (int w = 0; w < warps; ++w) { // bitonic: the first half ascending, the second descending
            Key* p = h.data() + (size_t)w * N;
            std::sort(p, p + N / 2);
            std::sort(p + N / 2, p + N, [](Key a, Key b) { return b < a; });
        }
    Key *din = wk_alloc<Key>(h.size()), *dout = wk_alloc<Key>(h.size());
    unsigned* dv = wk_alloc<unsigned>(h.size());
    wk_upload(din, h.data(), h.size());
    wk_poison(dout, h.size());
    k_sort<K, Desc, O><<<blocks, 32 * kWarps>>>(din, dout, dv);
    WK_LAUNCHED();
    std::vector<Key> got(h.size());
    std::vector<unsigned> gv(h.size());
    wk_download(got.data(), dout, got.size());
    wk_download(gv.data(), dv, gv.size());
    for (int w = 0; w < warps; ++w) {
        const Key* src = h.data() + (size_t)w * N;
        std::vector<Key> want(src, src + N);
        std::sort(want.begin(), want.end(), [](Key a, Key b) { return Desc ? b < a : a < b; });
        for (int i = 0; i < N; ++i) {
            const Key g = got[(size_t)w * N + i];
            // equal keys may be either zero: compare -0.0 and +0.0 as the order does (equal)
            cr_assert(!(g < want[i]) && !(want[i] < g), "op %d K=%d %s warp %d: element %d is %g, want %g", (int)O, K,
                      Desc ? "descending" : "ascending", w, i, (double)g, (double)want[i]);
            if (pairs) {
                const unsigned v = gv[(size_t)w * N + i];
                cr_assert(v < (unsigned)N && memcmp(&src[v], &g, sizeof(Key)) == 0,
                          "op %d K=%d warp %d: element %d carries value %u, whose key differs", (int)O, K, w, i, v);
            }
        }
    }
    WK_CUDA(cudaFree(din));
    WK_CUDA(cudaFree(dout));
    WK_CUDA(cudaFree(dv));
}

template <int K> void allOps(wk_rng* rng) {
    run<K, false, Sort, unsigned>(rng);
    run<K, true, Sort, float>(rng);
    run<K, false, SortPairs, unsigned long long>(rng);
    run<K, true, SortPairs, unsigned long long>(rng);
    run<K, false, Merge, unsigned>(rng);
    run<K, true, MergePairs, unsigned long long>(rng);
}

} // namespace

Test(warp_sort, every_k) {
    WK_REQUIRE_GPU();
    wk_rng rng = wk_rng_make(0x50f7);
    allOps<1>(&rng);
    allOps<2>(&rng);
    allOps<4>(&rng);
    allOps<8>(&rng);
    allOps<16>(&rng);
    allOps<32>(&rng);
}
