// Tests of include/warpkit/block/topk.cuh: blockTopK (and through it blockTopKSelect and
// blockTopKSort) against a stable sort on the host, by the order of warp/topk.cuh written here on
// its own. Indices are a shuffled permutation (the block's layout is not the index order), with
// empty slots (kTopKNoIndex: a partial block); values with ties, NaN, +-inf and -0.0. Block sizes:
// 64, 256 and 0 (96 threads); K = 1, 4, 8; k = 1, odd, MaxK, and past the values there are.
// Two calls back to back on one scratch per block; outputs written to global memory.
#include "../common.cuh"
#include "../topk_reference.cuh"
#include <warpkit/block/topk.cuh>
#include <algorithm>
#include <vector>

namespace {

template <int BT, int K, int MaxK, typename T>
__global__ void k_block_topk(const T* in, const unsigned* idx, const int* ks, T* ov, unsigned* oi, int* on) {
    __shared__ warpkit::BlockTopKScratch<MaxK> s;
    const int threads = (int)blockDim.x, t = (int)threadIdx.x;
    for (int c = 0; c < 2; ++c) {
        const int call = blockIdx.x * 2 + c;
        const size_t base = (size_t)call * threads * K;
        T v[K];
        unsigned index[K];
        for (int j = 0; j < K; ++j) {
            v[j] = in[base + t * K + j];
            index[j] = idx[base + t * K + j];
        }
        const int n = warpkit::blockTopK<BT>(v, index, ks[call], call % 2 == 0, ov + (size_t)call * MaxK,
                                             oi + (size_t)call * MaxK, s);
        on[(size_t)call * threads + t] = n;
    }
}

template <int BT, int K, int MaxK, typename T> void run(wk_rng* rng, int threads) {
    const int blocks = 6, calls = 2 * blocks, n = threads * K;
    std::vector<T> h((size_t)calls * n);
    std::vector<unsigned> idx((size_t)calls * n);
    std::vector<int> ks(calls), valid(calls);
    for (int c = 0; c < calls; ++c) {
        valid[c] = c % 3 == 0 ? n : (int)wk_int(rng, 1, n);
        std::vector<unsigned> perm(n);
        for (int i = 0; i < n; ++i) perm[i] = (unsigned)i * 3 + 1; // sparse, distinct
        for (int i = n - 1; i > 0; --i) std::swap(perm[i], perm[(size_t)wk_int(rng, 0, i)]);
        for (int i = 0; i < n; ++i) {
            h[(size_t)c * n + i] = wk_from_double<T>(wk_topk_draw(rng, 16, 6));
            idx[(size_t)c * n + i] = i < valid[c] ? perm[i] : warpkit::kTopKNoIndex;
        }
        // shuffle the empty slots among the valid ones
        for (int i = n - 1; i > 0; --i) std::swap(idx[(size_t)c * n + i], idx[(size_t)c * n + wk_int(rng, 0, i)]);
        const int pick = (int)wk_int(rng, 0, 3);
        ks[c] = pick == 0 ? 1 : pick == 1 ? MaxK : (int)wk_int(rng, 1, std::min(MaxK, n));
    }
    T* din = wk_alloc<T>(h.size());
    unsigned* didx = wk_alloc<unsigned>(idx.size());
    int* dk = wk_alloc<int>(calls);
    T* dv = wk_alloc<T>((size_t)calls * MaxK);
    unsigned* di = wk_alloc<unsigned>((size_t)calls * MaxK);
    int* dn = wk_alloc<int>((size_t)calls * threads);
    wk_upload(din, h.data(), h.size());
    wk_upload(didx, idx.data(), idx.size());
    wk_upload(dk, ks.data(), calls);
    wk_poison(dv, (size_t)calls * MaxK);
    wk_poison(di, (size_t)calls * MaxK);
    k_block_topk<BT, K, MaxK><<<blocks, threads>>>(din, didx, dk, dv, di, dn);
    WK_LAUNCHED();
    std::vector<T> gv((size_t)calls * MaxK);
    std::vector<unsigned> gi((size_t)calls * MaxK);
    std::vector<int> gn((size_t)calls * threads);
    wk_download(gv.data(), dv, gv.size());
    wk_download(gi.data(), di, gi.size());
    wk_download(gn.data(), dn, gn.size());
    for (int c = 0; c < calls; ++c) {
        const bool largest = c % 2 == 0;
        std::vector<int> order;
        for (int i = 0; i < n; ++i)
            if (idx[(size_t)c * n + i] != warpkit::kTopKNoIndex) order.push_back(i);
        std::sort(order.begin(), order.end(), [&](int a, int b) { // by value order, then index
            const double va = wk_to_double(h[(size_t)c * n + a]), vb = wk_to_double(h[(size_t)c * n + b]);
            if (wk_ranks_before(va, vb, largest)) return true;
            if (wk_ranks_before(vb, va, largest)) return false;
            return idx[(size_t)c * n + a] < idx[(size_t)c * n + b];
        });
        const int want = std::min(ks[c], (int)order.size());
        for (int t = 0; t < threads; ++t)
            cr_assert(gn[(size_t)c * threads + t] == want, "BT=%d K=%d call %d: thread %d got n=%d, want %d", BT, K, c,
                      t, gn[(size_t)c * threads + t], want);
        for (int r = 0; r < want; ++r) {
            const size_t src = (size_t)c * n + order[r];
            const T g = gv[(size_t)c * MaxK + r];
            const bool valueOk =
                isnan(wk_to_double(h[src])) ? isnan(wk_to_double(g)) : memcmp(&g, &h[src], sizeof(T)) == 0;
            cr_assert(gi[(size_t)c * MaxK + r] == idx[src] && valueOk,
                      "%s BT=%d K=%d call %d k=%d %s rank %d: index %u value %g, want %u (%g)", wk_type_name<T>(), BT,
                      K, c, ks[c], largest ? "largest" : "smallest", r, gi[(size_t)c * MaxK + r], wk_to_double(g),
                      idx[src], wk_to_double(h[src]));
        }
    }
    for (void* b : {(void*)din, (void*)didx, (void*)dk, (void*)dv, (void*)di, (void*)dn}) WK_CUDA(cudaFree(b));
}

} // namespace

Test(block_topk, sizes_and_types) {
    WK_REQUIRE_GPU();
    wk_rng rng = wk_rng_make(0xb70);
    run<64, 1, 64, float>(&rng, 64);
    run<256, 4, 256, float>(&rng, 256);
    run<256, 8, 2048, __nv_bfloat16>(&rng, 256);
    run<0, 4, 128, __half>(&rng, 96);
    run<1024, 1, 512, float>(&rng, 1024);
}
