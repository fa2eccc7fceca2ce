// Tests of include/warpkit/block/radix_select.cuh: blockRadixSelect over 32-bit keys with many
// duplicates and zeros (empty slots) and over distinct 64-bit keys, at compile-time and run-time
// block sizes (BT = 0 with 96 threads) and K = 1, 4, 16 keys a thread; k from 0 past the number of
// keys. Each block runs several selections back to back on one scratch; every thread writes its
// answer, so "every thread gets the result" is checked thread by thread. Contract checked against
// the host: `selected` keys are >= threshold; selected >= min(k, nonzero); every key of the top
// min(k, nonzero) is >= threshold; and selected exceeds min(k, nonzero) only by copies of the k-th
// largest key (then threshold is that key). For distinct keys: selected == min(k, nonzero).
#include "../common.cuh"
#include <warpkit/block/radix_select.cuh>
#include <algorithm>
#include <functional>
#include <vector>

namespace {

constexpr int kCalls = 3; // selections a block, back to back

template <int BT, int K, typename Key> __global__ void k_select(const Key* in, const int* ks, Key* thr, int* sel) {
    __shared__ warpkit::BlockRadixScratch s;
    const int threads = (int)blockDim.x, t = (int)threadIdx.x;
    for (int c = 0; c < kCalls; ++c) {
        const int call = blockIdx.x * kCalls + c;
        Key keys[K];
        for (int j = 0; j < K; ++j) keys[j] = in[(size_t)call * threads * K + t * K + j];
        const warpkit::RadixSelectResult<Key> r = warpkit::blockRadixSelect<BT>(keys, ks[call], s);
        thr[(size_t)call * threads + t] = r.threshold;
        sel[(size_t)call * threads + t] = r.selected;
    }
}

template <int BT, int K, typename Key> void run(wk_rng* rng, int threads) {
    const int blocks = 8, calls = blocks * kCalls, n = threads * K;
    std::vector<Key> h((size_t)calls * n);
    std::vector<int> ks(calls);
    for (int c = 0; c < calls; ++c) {
        const int kind = c % 4; // 0: few distinct values, 1: wide, 2: all equal, 3: mostly empty
        for (int i = 0; i < n; ++i) {
            Key v;
            if (sizeof(Key) == 8) v = (Key)wk_next(rng) | 1; // distinct (with high probability) and nonzero
            else if (kind == 0) v = (Key)wk_int(rng, 0, 5);
            else if (kind == 1) v = (Key)wk_next(rng);
            else if (kind == 2) v = (Key)0x80000000u;
            else v = wk_int(rng, 0, 9) == 0 ? (Key)wk_int(rng, 1, 1000) : 0;
            h[(size_t)c * n + i] = v;
        }
        const int pick = (int)wk_int(rng, 0, 5);
        ks[c] = pick == 0 ? 1 : pick == 1 ? n : pick == 2 ? n + 3 : pick == 3 ? 0 : (int)wk_int(rng, 1, n);
    }
    Key* din = wk_alloc<Key>(h.size());
    int* dk = wk_alloc<int>(calls);
    Key* dthr = wk_alloc<Key>((size_t)calls * threads);
    int* dsel = wk_alloc<int>((size_t)calls * threads);
    wk_upload(din, h.data(), h.size());
    wk_upload(dk, ks.data(), calls);
    wk_poison(dthr, (size_t)calls * threads);
    wk_poison(dsel, (size_t)calls * threads);
    k_select<BT, K><<<blocks, threads>>>(din, dk, dthr, dsel);
    WK_LAUNCHED();
    std::vector<Key> thr((size_t)calls * threads);
    std::vector<int> sel((size_t)calls * threads);
    wk_download(thr.data(), dthr, thr.size());
    wk_download(sel.data(), dsel, sel.size());
    for (int c = 0; c < calls; ++c) {
        std::vector<Key> nz;
        for (int i = 0; i < n; ++i)
            if (h[(size_t)c * n + i]) nz.push_back(h[(size_t)c * n + i]);
        std::sort(nz.begin(), nz.end(), std::greater<Key>());
        const int need = std::min<int>(std::max(ks[c], 0), (int)nz.size());
        const Key t0 = thr[(size_t)c * threads];
        const int s0 = sel[(size_t)c * threads];
        for (int t = 1; t < threads; ++t)
            cr_assert(thr[(size_t)c * threads + t] == t0 && sel[(size_t)c * threads + t] == s0,
                      "BT=%d K=%d call %d: thread %d got another answer", BT, K, c, t);
        if (need == 0) {
            cr_assert(s0 == 0, "BT=%d K=%d call %d: k=%d over %zu keys selected %d", BT, K, c, ks[c], nz.size(), s0);
            continue;
        }
        const Key kth = nz[need - 1];
        const int ge = (int)std::count_if(nz.begin(), nz.end(), [&](Key v) { return v >= t0; });
        cr_assert(ge == s0 && s0 >= need && t0 <= kth && (s0 == need || t0 == kth),
                  "BT=%d K=%d call %d: k=%d (need %d, k-th key %llx): threshold %llx selected %d, %d keys >= it", BT, K,
                  c, ks[c], need, (unsigned long long)kth, (unsigned long long)t0, s0, ge);
        if (sizeof(Key) == 8) cr_assert(s0 == need, "distinct keys: selected %d, want %d", s0, need);
    }
    WK_CUDA(cudaFree(din));
    WK_CUDA(cudaFree(dk));
    WK_CUDA(cudaFree(dthr));
    WK_CUDA(cudaFree(dsel));
}

} // namespace

Test(block_radix_select, keys32) {
    WK_REQUIRE_GPU();
    wk_rng rng = wk_rng_make(0xad1);
    run<32, 1, unsigned>(&rng, 32);
    run<256, 4, unsigned>(&rng, 256);
    run<0, 16, unsigned>(&rng, 96);
    run<1024, 1, unsigned>(&rng, 1024);
}

Test(block_radix_select, keys64) {
    WK_REQUIRE_GPU();
    wk_rng rng = wk_rng_make(0xad2);
    run<64, 1, unsigned long long>(&rng, 64);
    run<256, 16, unsigned long long>(&rng, 256);
    run<0, 4, unsigned long long>(&rng, 96);
}
