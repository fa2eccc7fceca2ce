// Tests of include/warpkit/warp/cg.cuh and the active-lane scans of warp/scan.cuh: tile overloads
// (reduce, inclusive/exclusive scans, votes) at every tile size against cg::reduce and
// cg::inclusive_scan on the same data; coalesced-group overloads and the Active forms on random
// subsets of lanes (early-exit lanes) against a CPU model in rank order.
#include "../common.cuh"
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
#include <warpkit/warp/cg.cuh>
#include <vector>

namespace cg = cooperative_groups;

// Per thread: [0] warpkit reduce, [1] cg::reduce, [2] warpkit inclusive, [3] cg::inclusive_scan,
// [4] warpkit exclusive, [5] cg::exclusive_scan, [6] warpkit count, [7] popc of tile ballot.
template <int N> __global__ void k_tile(const int* in, int* out) {
    const auto tile = cg::tiled_partition<N>(cg::this_thread_block());
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    const int v = in[t];
    int* o = out + t * 8;
    o[0] = warpkit::warpReduceSum(tile, v);
    o[1] = cg::reduce(tile, v, cg::plus<int>());
    o[2] = warpkit::warpInclusiveSum(tile, v);
    o[3] = cg::inclusive_scan(tile, v);
    o[4] = warpkit::warpExclusiveScan(tile, v, warpkit::Max{}, -1000);
    o[5] = warpkit::Max{}(-1000, cg::exclusive_scan(tile, v, cg::greater<int>()));
    o[6] = warpkit::segmentCount(tile, (v & 1) != 0);
    o[7] = __popc(tile.ballot((v & 1) != 0));
}

template <int N> static void tileSize(wk_tally* tally) {
    const int blocks = 3, threads = 96, n = blocks * threads;
    wk_rng r = wk_rng_make(N);
    std::vector<int> h(n);
    for (int& x : h) x = (int)wk_int(&r, -50, 50);
    int* din = wk_alloc<int>(n);
    int* dout = wk_alloc<int>(n * 8);
    wk_upload(din, h.data(), n);
    wk_poison(dout, n * 8);
    k_tile<N><<<blocks, threads>>>(din, dout);
    WK_LAUNCHED();
    std::vector<int> o(n * 8);
    wk_download(o.data(), dout, o.size());
    for (int t = 0; t < n; ++t)
        for (int k = 0; k < 8; k += 2) {
            // cg's exclusive scan leaves rank 0 undefined; warpkit's gives init there.
            if (k == 4 && t % N == 0) {
                wk_tally_check(tally, o[t * 8 + 4] == -1000, "N=%d t=%d exclusive rank 0", N, t);
            } else {
                wk_tally_check(tally, o[t * 8 + k] == o[t * 8 + k + 1], "N=%d t=%d check %d: warpkit %d, cg %d", N, t,
                               k, o[t * 8 + k], o[t * 8 + k + 1]);
            }
        }
    cudaFree(din);
    cudaFree(dout);
}

Test(cg, tiles_match_cg) {
    WK_REQUIRE_GPU();
    wk_tally tally = {};
    tileSize<1>(&tally);
    tileSize<2>(&tally);
    tileSize<4>(&tally);
    tileSize<8>(&tally);
    tileSize<16>(&tally);
    tileSize<32>(&tally);
    WK_TALLY_EXPECT(tally);
}

// Lanes whose bit of keep is clear leave at once; the others form the coalesced group.
// Per thread: group sum, group inclusive sum, group exclusive sum, Active inclusive (Sum{}),
// Active exclusive max, cg::reduce over the group, group count of odd values.
__global__ void k_group(const int* in, const unsigned* keep, int* out) {
    const int t = blockIdx.x * 32 + threadIdx.x;
    if (!((keep[blockIdx.x] >> threadIdx.x) & 1u)) return;
    const int v = in[t];
    const cg::coalesced_group g = cg::coalesced_threads();
    int* o = out + t * 7;
    o[0] = warpkit::warpReduceSum(g, v);
    o[1] = warpkit::warpInclusiveSum(g, v);
    o[2] = warpkit::warpExclusiveSum(g, v);
    o[3] = warpkit::warpInclusiveScanActive(v, warpkit::Sum{});
    o[4] = warpkit::warpExclusiveMaxActive(v);
    o[5] = cg::reduce(g, v, cg::plus<int>());
    o[6] = warpkit::segmentCount(g, (v & 1) != 0);
}

Test(cg, coalesced_groups_and_active_scans) {
    WK_REQUIRE_GPU();
    const int warps = 64, n = warps * 32;
    wk_rng r = wk_rng_make(77);
    std::vector<int> h(n);
    std::vector<unsigned> keep(warps);
    for (int& x : h) x = (int)wk_int(&r, -1000, 1000);
    for (int w = 0; w < warps; ++w)
        keep[w] = w == 0 ? 0xffffffffu : w == 1 ? 1u : w == 2 ? 0x80000000u : (unsigned)wk_next(&r) | (1u << (w % 32));
    int* din = wk_alloc<int>(n);
    unsigned* dkeep = wk_alloc<unsigned>(warps);
    int* dout = wk_alloc<int>(n * 7);
    wk_upload(din, h.data(), n);
    wk_upload(dkeep, keep.data(), warps);
    wk_poison(dout, n * 7);
    k_group<<<warps, 32>>>(din, dkeep, dout);
    WK_LAUNCHED();
    std::vector<int> o(n * 7);
    wk_download(o.data(), dout, o.size());
    wk_tally tally = {};
    for (int w = 0; w < warps; ++w) {
        int total = 0, odd = 0;
        for (int l = 0; l < 32; ++l)
            if ((keep[w] >> l) & 1u) {
                total += h[w * 32 + l];
                odd += h[w * 32 + l] & 1;
            }
        int incl = 0, mx = -2147483647 - 1;
        for (int l = 0; l < 32; ++l) {
            if (!((keep[w] >> l) & 1u)) continue;
            const int t = w * 32 + l, v = h[t];
            const int want[7] = {total, incl + v, incl, incl + v, mx, total, odd};
            for (int k = 0; k < 7; ++k) {
                wk_tally_check(&tally, o[t * 7 + k] == want[k], "warp %d keep %#x lane %d check %d: got %d want %d", w,
                               keep[w], l, k, o[t * 7 + k], want[k]);
            }
            incl += v;
            mx = v > mx ? v : mx;
        }
    }
    WK_TALLY_EXPECT(tally);
    cudaFree(din);
    cudaFree(dkeep);
    cudaFree(dout);
}
