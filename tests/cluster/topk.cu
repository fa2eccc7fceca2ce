// Tests of include/warpkit/cluster/topk.cuh: clusterTopK over rows split across the blocks of
// clusters of 1, 2, 3, 4 and 8 blocks (every block of a cluster holds BT x K values of the row, the
// last ones partly empty), with ties, NaN and +-inf; k = 1, odd, MaxK. Every block's ranked answer
// is checked against a stable sort on the host (tests/topk_reference.cuh), so "every block gets
// the same answer" is checked block by block. Without clusters (before sm_90) each block is its own
// cluster: the same kernel is checked against each block's own slice.
#include "../common.cuh"
#include "../topk_reference.cuh"
#include <warpkit/cluster/topk.cuh>
#include <algorithm>
#include <vector>

namespace {

constexpr int kBT = 128, kK = 4, kMaxK = 256;

__global__ void __launch_bounds__(kBT) k_cluster_topk(const float* x, int cols, int k, unsigned* idx, int* ns) {
    __shared__ warpkit::BlockTopKScratch<kMaxK> s;
    const unsigned nb = warpkit::clusterBlocks(), rank = warpkit::clusterBlockRank();
    const float* row = x + (size_t)(blockIdx.x / nb) * cols;
    unsigned long long keys[kK];
    for (int j = 0; j < kK; ++j) {
        const int c = (int)(rank * kBT * kK + threadIdx.x * kK + j);
        keys[j] = c < cols ? warpkit::topkPack(row[c], (unsigned)c, true) : warpkit::kTopKEmpty;
    }
    const int n = warpkit::clusterTopK<kBT, kK, kMaxK>(keys, k, s);
    for (int r = threadIdx.x; r < n; r += kBT)
        idx[(size_t)blockIdx.x * kMaxK + r] = warpkit::topkUnpackIndex(s.keys[r]);
    if (threadIdx.x == 0) ns[blockIdx.x] = n;
}

bool clustersHere() {
    int dev = 0, major = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    return major >= 9;
}

} // namespace

Test(cluster_topk, every_cluster_size) {
    WK_REQUIRE_GPU();
    const bool cl = clustersHere();
    if (!cl) cr_log_info("no clusters on this GPU: every block is a cluster of one");
    wk_rng rng = wk_rng_make(0xc70);
    for (int nb : {1, 2, 3, 4, 8})
        for (int k : {1, 37, kMaxK}) {
            const int cn = cl ? nb : 1, clusters = 3, blocks = clusters * nb;
            const int cols = cn * kBT * kK - 5; // the last block's last slots are empty
            std::vector<float> h((size_t)clusters * cols);
            for (auto& v : h) {
                const long long u = wk_int(&rng, 0, 20);
                v = u == 0 ? NAN : u == 1 ? INFINITY : u == 2 ? -INFINITY : (float)wk_int(&rng, -8, 8);
            }
            float* dx = wk_alloc<float>(h.size());
            wk_upload(dx, h.data(), h.size());
            unsigned* di = wk_alloc<unsigned>((size_t)blocks * kMaxK);
            int* dn = wk_alloc<int>(blocks);
            wk_poison(di, (size_t)blocks * kMaxK);
            cudaLaunchAttribute attr[1];
            const cudaLaunchConfig_t cfg =
                wk_cluster_config(dim3((unsigned)blocks), dim3(kBT), cl ? (unsigned)nb : 0u, attr);
            WK_CUDA(cudaLaunchKernelEx(&cfg, k_cluster_topk, (const float*)dx, cols, k, di, dn));
            WK_LAUNCHED();
            std::vector<unsigned> gi((size_t)blocks * kMaxK);
            std::vector<int> gn(blocks);
            wk_download(gi.data(), di, gi.size());
            wk_download(gn.data(), dn, blocks);
            for (int b = 0; b < blocks; ++b) {
                // the row of this block's cluster (without clusters every block reads the row's first and
                // only slice: cols = kBT x kK - 5)
                const int c = b / nb, lo = 0, hi = cols;
                const float* row = h.data() + (size_t)c * cols;
                std::vector<int> order;
                for (int i = lo; i < hi; ++i) order.push_back(i);
                std::stable_sort(order.begin(), order.end(),
                                 [&](int p, int q) { return wk_ranks_before(row[p], row[q], true); });
                const int want = std::min(k, (int)order.size());
                cr_assert(gn[b] == want, "cluster of %d, k=%d, block %d (cluster %d): n=%d, want %d", nb, k, b, c,
                          gn[b], want);
                for (int r = 0; r < want; ++r)
                    cr_assert(gi[(size_t)b * kMaxK + r] == (unsigned)order[r],
                              "cluster of %d, k=%d, block %d rank %d: index %u, want %d", nb, k, b, r,
                              gi[(size_t)b * kMaxK + r], order[r]);
            }
            WK_CUDA(cudaFree(dx));
            WK_CUDA(cudaFree(di));
            WK_CUDA(cudaFree(dn));
        }
}
