// Tests of include/warpkit/warp/packed.cuh and the packed block reductions: __half2 and
// __nv_bfloat162 lane-wise Sum (precise and Fast), Max (NaN per half), inclusive Sum and the
// valid-lane form (valid = 0 gives the identity) at widths 1..32 against a double reference of
// the lanes; blockReduceSum and blockInclusiveSum over odd block sizes.
#include "../common.cuh"
#include <warpkit/reduce.cuh>
#include <warpkit/scan.cuh>
#include <vector>

template <typename P> struct Half;
template <> struct Half<__half2> { using S = __half; };
template <> struct Half<__nv_bfloat162> { using S = __nv_bfloat16; };

// Per lane, 5 pairs: Sum, SumFast, Max, InclusiveSum, Sum over the first `valid` lanes.
template <int W, typename P> __global__ void k_packed(const P* in, P* out, int valid) {
    const int t = threadIdx.x;
    const P v = in[t];
    out[t * 5 + 0] = warpkit::warpReduceSum<W>(v);
    out[t * 5 + 1] = warpkit::warpReduceSumFast<W>(v);
    out[t * 5 + 2] = warpkit::warpReduceMax<W>(v);
    out[t * 5 + 3] = warpkit::warpInclusiveSum<W>(v);
    out[t * 5 + 4] = warpkit::warpReduceSum<W>(v, valid);
}

template <typename P> static double halfOf(const P& p, int i) {
    typedef typename Half<P>::S S;
    return wk_to_double<S>(i ? p.y : p.x);
}

template <int W, typename P> static void width(wk_tally* tally) {
    typedef typename Half<P>::S S;
    const double u = wk_eps<S>();
    wk_rng r = wk_rng_make(W * 2 + sizeof(S));
    std::vector<P> h(32);
    for (int l = 0; l < 32; ++l) {
        h[l].x = wk_from_double<S>(wk_uniform(&r, -4, 4));
        h[l].y = wk_from_double<S>(l == 9 && W > 4 ? NAN : wk_uniform(&r, 0, 8));
    }
    P* din = wk_alloc<P>(32);
    P* dout = wk_alloc<P>(32 * 5);
    wk_upload(din, h.data(), 32);
    for (int valid : {0, 1, 3, 32}) {
        wk_poison(dout, 32 * 5);
        k_packed<W, P><<<1, 32>>>(din, dout, valid);
        WK_LAUNCHED();
        std::vector<P> o(32 * 5);
        wk_download(o.data(), dout, o.size());
        for (int l = 0; l < 32; ++l) {
            const int start = l / W * W, len = 32 - start < W ? 32 - start : W;
            const bool pow2 = (W & (W - 1)) == 0;
            if (!pow2 && l != start) continue; // other widths: the segment's first lane holds it
            int steps = 0;
            while ((1 << steps) < W) ++steps;
            for (int c = 0; c < 2; ++c) {
                // Each result's tolerance scales with the sum of |x| over the lanes it reads:
                // a NaN outside a prefix must not reach that prefix's tolerance.
                double sum = 0, abs = 0, mx = -INFINITY, incl = 0, absIncl = 0, vs = 0, absVs = 0;
                bool nan = false;
                for (int i = start; i < start + len; ++i) {
                    const double x = halfOf(h[i], c);
                    sum += x;
                    abs += fabs(x);
                    nan |= isnan(x);
                    mx = isnan(x) || isnan(mx) ? NAN : (x > mx ? x : mx);
                    if (i <= l) {
                        incl += x;
                        absIncl += fabs(x);
                    }
                    if (i - start < valid) {
                        vs += x;
                        absVs += fabs(x);
                    }
                }
                const double got[5] = {halfOf(o[l * 5], c), halfOf(o[l * 5 + 1], c), halfOf(o[l * 5 + 2], c),
                                       halfOf(o[l * 5 + 3], c), halfOf(o[l * 5 + 4], c)};
                const bool ok[5] = {wk_close(got[0], sum, u * (1 + abs)),
                                    nan ? isnan(got[1]) : fabs(got[1] - sum) <= (steps + 1) * u * (abs + 1),
                                    nan ? isnan(got[2]) : got[2] == mx, wk_close(got[3], incl, u * (1 + absIncl)),
                                    wk_close(got[4], vs, u * (1 + absVs))};
                for (int k = 0; k < 5; ++k)
                    wk_tally_check(tally, ok[k], "W=%d %s lane %d half %d valid %d check %d: got %g", W,
                                   wk_type_name<S>(), l, c, valid, k, got[k]);
            }
        }
    }
    cudaFree(din);
    cudaFree(dout);
}

template <int W> static void widths(wk_tally* tally) {
    if constexpr (W >= 1) {
        width<W, __half2>(tally);
        width<W, __nv_bfloat162>(tally);
        widths<W - 1>(tally);
    }
}

Test(packed, warp_every_width) {
    WK_REQUIRE_GPU();
    wk_tally tally = {};
    widths<32>(&tally);
    WK_TALLY_EXPECT(tally);
}

// out[0]: the block's sum; scan[t]: thread t's inclusive prefix sum (lane-wise).
template <int B> __global__ void k_block(const __half2* in, __half2* out, __half2* scan) {
    const __half2 v = in[threadIdx.x];
    const __half2 s = warpkit::blockReduceSum<B>(v);
    if (threadIdx.x == 0) out[0] = s;
    scan[threadIdx.x] = warpkit::blockInclusiveSum<B>(v);
}

Test(packed, block_sum_odd_sizes) {
    WK_REQUIRE_GPU();
    const int sizes[] = {1, 33, 100, 256, 1000};
    for (int n : sizes) {
        std::vector<__half2> h(n);
        double want[2] = {0, 0};
        wk_rng r = wk_rng_make(n);
        for (int i = 0; i < n; ++i) {
            h[i] = __floats2half2_rn((float)wk_uniform(&r, -1, 1), (float)wk_uniform(&r, 0, 1));
            want[0] += __low2float(h[i]);
            want[1] += __high2float(h[i]);
        }
        __half2* din = wk_alloc<__half2>(n);
        __half2* dout = wk_alloc<__half2>(1);
        __half2* dscan = wk_alloc<__half2>(n);
        wk_upload(din, h.data(), n);
        wk_poison(dout, 1);
        wk_poison(dscan, n);
        k_block<0><<<1, n>>>(din, dout, dscan);
        WK_LAUNCHED();
        __half2 got;
        wk_download(&got, dout, 1);
        cr_expect(wk_close(__low2float(got), want[0], 1e-3) && wk_close(__high2float(got), want[1], 1e-3),
                  "n=%d: got (%g, %g) want (%g, %g)", n, __low2float(got), __high2float(got), want[0], want[1]);
        std::vector<__half2> sc(n);
        wk_download(sc.data(), dscan, n);
        double run[2] = {0, 0};
        int badScan = 0;
        for (int i = 0; i < n; ++i) {
            run[0] += __low2float(h[i]);
            run[1] += __high2float(h[i]);
            badScan += !wk_close(__low2float(sc[i]), run[0], 1e-3) || !wk_close(__high2float(sc[i]), run[1], 1e-3);
        }
        cr_expect(badScan == 0, "n=%d: %d block inclusive sums wrong", n, badScan);
        cudaFree(dscan);
        cudaFree(din);
        cudaFree(dout);
    }
}
