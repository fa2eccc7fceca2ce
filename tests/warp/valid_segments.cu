// Tests of the valid-lane forms of warp/reduce.cuh and warp/scan.cuh with a count that differs
// from segment to segment, 0 (an empty segment) included: named Sum/Max/Min reductions, named
// inclusive/exclusive sums, and the generic reduction (counts >= 1), at widths 1..32, against a
// CPU model of the lanes.
#include "../common.cuh"
#include <warpkit/reduce.cuh>
#include <warpkit/scan.cuh>
#include <vector>

struct First { // non-commutative: keeps the lower lane's value (generic path, ordered)
    __device__ int operator()(int a, int) const { return a; }
};

// Per lane: valid count of its segment = counts[segment]; 6 outputs.
template <int W> __global__ void k_valid(const int* in, const int* counts, int* out) {
    const int lane = threadIdx.x, seg = lane / W, valid = counts[seg];
    const int v = in[lane];
    int* o = out + lane * 6;
    o[0] = warpkit::warpReduceSum<W>(v, valid);
    o[1] = warpkit::warpReduceMax<W>(v, valid);
    o[2] = warpkit::warpReduceMin<W>(v, valid);
    o[3] = warpkit::warpInclusiveSumValid<W>(v, valid);
    o[4] = warpkit::warpExclusiveSumValid<W>(v, valid);
    o[5] = warpkit::warpReduce<W>(v, First{}, valid > 0 ? valid : 1);
}

template <int W> static void width(wk_tally* tally) {
    wk_rng r = wk_rng_make(W);
    int in[32], counts[32];
    for (int& x : in) x = (int)wk_int(&r, -100, 100);
    for (int s = 0; s < 32; ++s) counts[s] = (int)wk_int(&r, -1, W + 2); // -1 and 0: empty
    int *din = wk_alloc<int>(32), *dc = wk_alloc<int>(32), *dout = wk_alloc<int>(32 * 6);
    wk_upload(din, in, 32);
    wk_upload(dc, counts, 32);
    wk_poison(dout, 32 * 6);
    k_valid<W><<<1, 32>>>(din, dc, dout);
    WK_LAUNCHED();
    int o[32 * 6];
    wk_download(o, dout, 32 * 6);
    const bool pow2 = (W & (W - 1)) == 0;
    for (int lane = 0; lane < 32; ++lane) {
        const int seg = lane / W, start = seg * W, len = 32 - start < W ? 32 - start : W;
        const int valid = counts[seg], p = lane - start, nv = valid < 0 ? 0 : valid < len ? valid : len;
        int sum = 0, mx = -2147483647 - 1, mn = 2147483647, incl = 0, excl = 0;
        for (int i = 0; i < nv; ++i) {
            const int x = in[start + i];
            sum += x;
            mx = x > mx ? x : mx;
            mn = x < mn ? x : mn;
            if (i <= p) incl += x;
            if (i < p) excl += x;
        }
        const bool lead = pow2 || p == 0; // result lanes of the reductions
        const int want[6] = {sum, mx, mn, incl, excl, in[start]};
        for (int k = 0; k < 6; ++k) {
            if (k < 3 && !lead) continue;
            if (k == 5 && (!lead || nv == 0)) continue;
            wk_tally_check(tally, o[lane * 6 + k] == want[k], "W=%d lane %d valid %d check %d: got %d want %d", W, lane,
                           valid, k, o[lane * 6 + k], want[k]);
        }
    }
    cudaFree(din);
    cudaFree(dc);
    cudaFree(dout);
}

template <int W> static void widths(wk_tally* tally) {
    if constexpr (W >= 1) {
        width<W>(tally);
        widths<W - 1>(tally);
    }
}

Test(valid_segments, counts_differ_per_segment_and_may_be_zero) {
    WK_REQUIRE_GPU();
    wk_tally tally = {};
    widths<32>(&tally);
    WK_TALLY_EXPECT(tally);
}
