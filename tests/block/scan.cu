// Tests of the block scans in include/warpkit/block/scan.cuh. One kernel runs every scan
// form of one type several times in a loop (fresh data each iteration, scratch reused back to
// back, a running prefix carried from iteration to iteration as a tile loop would); each thread
// writes what it got and the host checks every thread against a double-precision reference.
#include "../block_common.cuh"
#include <warpkit/scan.cuh>
#include <utility>
#include <vector>

enum { O_INCL, O_TOT, O_EXCL, O_TOT2, O_IMAX, O_EMIN, O_GEX, O_RIN, O_REX, O_COUNT };
template <typename T> struct Outs { T* o[O_COUNT]; int* seg; };

// 1024 threads x 64 registers: the bound keeps 64-bit types launchable at 1024 threads.
template <int BT, typename T, bool Full> __global__ void __launch_bounds__(BT > 0 ? BT : 1024)
    k_scan(const T* in, Outs<T> o, int iters, T init) {
    __shared__ warpkit::BlockReduceScratch<T, BT> sh;
    const int n = (int)(blockDim.x * blockDim.y * blockDim.z);
    const int tid = (int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
    T rin = init, rex = init; // running prefixes carried across iterations (tiles)
    for (int it = 0; it < iters; ++it) {
        const size_t i = ((size_t)blockIdx.x * iters + it) * n + tid;
        const T v = in[i];
        T tot;
        o.o[O_INCL][i] = warpkit::blockInclusiveSum<BT>(v, tot);
        o.o[O_TOT][i] = tot;
        o.o[O_REX][i] = warpkit::blockExclusiveScanRunning<BT>(v, warpkit::Sum{}, rex, sh);
        const Seg g = warpkit::blockInclusiveScan<BT>(Seg{tid, tid, 1}, SegOp{});
        o.seg[i] = (g.first == 0 && g.last == tid && g.ok) ? 1 : 0;
        if constexpr (Full) {
            T tot2;
            o.o[O_EXCL][i] = warpkit::blockExclusiveSum<BT>(v, tot2);
            o.o[O_TOT2][i] = tot2;
            o.o[O_IMAX][i] = warpkit::blockInclusiveMax<BT>(v);
            o.o[O_EMIN][i] = warpkit::blockExclusiveMin<BT>(v);
            o.o[O_GEX][i] = warpkit::blockExclusiveScan<BT>(v, warpkit::Sum{}, init, tot2, sh);
            o.o[O_RIN][i] = warpkit::blockInclusiveSumRunning<BT>(v, rin);
        }
    }
}

template <typename T> static T gen_value(wk_rng* r) {
    if constexpr (!warpkit::detail::Arith<T>::is_float) {
        if ((T)-1 < (T)0) return (T)wk_int(r, -1000, 1000);
        return (T)wk_int(r, 0, 2000);
    } else {
        return wk_from_double<T>(wk_uniform(r, sizeof(T) == 2 ? -4.0 : -100.0, sizeof(T) == 2 ? 4.0 : 100.0));
    }
}

/// One block's data for one call: plain, one NaN, +inf and -inf, or +inf only (floats).
template <typename T> static void gen_call(wk_rng* r, T* p, int n, int call) {
    for (int t = 0; t < n; ++t) p[t] = gen_value<T>(r);
    if constexpr (warpkit::detail::Arith<T>::is_float) {
        const int mode = call % 4;
        if (mode == 1) p[wk_int(r, 0, n - 1)] = warpkit::detail::quietNaN<T>();
        if (mode == 2) {
            p[wk_int(r, 0, n - 1)] = wk_from_double<T>(INFINITY);
            p[wk_int(r, 0, n - 1)] = wk_from_double<T>(-INFINITY);
        }
        if (mode == 3) p[wk_int(r, 0, n - 1)] = wk_from_double<T>(INFINITY);
    }
}


/// got vs a double reference `want` whose inputs had absolute sum `abs`.
/// `carry`: the absolute sum carried in a T-typed running prefix, rounded to T once per tile.
template <typename T> static bool sum_ok(double got, double want, double abs, double carry = 0.0) {
    if (isnan(want) || isinf(want)) return wk_close(got, want, 0);
    if (isnan(got) || isinf(got)) return false;
    if (!warpkit::detail::Arith<T>::is_float) return got == want;
    const double acc = sizeof(T) == 8 ? 1e-15 : 1e-6;
    return fabs(got - want) <= wk_eps<T>() * (fabs(want) + carry) + 8.0 * acc * (abs + 1.0);
}

template <int BT, typename T, bool Full = true> static void run_scan(dim3 block, int grid, int iters) {
    const int n = (int)(block.x * block.y * block.z);
    const size_t total = (size_t)grid * iters * n;
    wk_rng r = wk_rng_make(7000 + n * 8 + sizeof(T) + BT);
    std::vector<T> h(total);
    for (size_t c = 0; c < (size_t)grid * iters; ++c) gen_call(&r, &h[c * n], n, (int)c);
    T* din = wk_alloc<T>(total);
    wk_upload(din, h.data(), total);
    Outs<T> o;
    for (int k = 0; k < O_COUNT; ++k) { o.o[k] = wk_alloc<T>(total); wk_poison(o.o[k], total); }
    o.seg = wk_alloc<int>(total); wk_poison(o.seg, total);
    const T init = wk_from_double<T>(3.0);
    k_scan<BT, T, Full><<<grid, block>>>(din, o, iters, init);
    WK_LAUNCHED();
    std::vector<T> got[O_COUNT];
    for (int k = 0; k < O_COUNT; ++k) { got[k].resize(total); wk_download(got[k].data(), o.o[k], total); }
    std::vector<int> seg(total);
    wk_download(seg.data(), o.seg, total);
    const char* tn = wk_type_name<T>();
    const bool isf = warpkit::detail::Arith<T>::is_float;
    const double lowest = isf ? -INFINITY : wk_to_double(warpkit::detail::Arith<T>::lowest());
    const double highest = isf ? INFINITY : wk_to_double(warpkit::detail::Arith<T>::highest());
    for (int b = 0; b < grid; ++b) {
        double rin = 3.0, rinabs = 3.0; // running prefix carried across the block's iterations
        for (int it = 0; it < iters; ++it) {
            const size_t base = ((size_t)b * iters + it) * n;
            double tot = 0, totabs = 0;
            for (int t = 0; t < n; ++t) {
                const double x = wk_to_double(h[base + t]);
                tot += x;
                totabs += isnan(x) ? 0 : fabs(x);
            }
            double pre = 0, preabs = 0, mx = lowest, mn = highest, emin = highest;
            bool nan = false;
            for (int t = 0; t < n; ++t) {
                const size_t i = base + t;
                const double x = wk_to_double(h[i]);
                const double ex = pre, exabs = preabs;
                pre += x; preabs += isnan(x) ? 0 : fabs(x);
                const double emin_t = emin;
                if (isnan(x)) nan = true;
                mx = nan ? NAN : (x > mx ? x : mx);
                mn = nan ? NAN : (x < mn ? x : mn);
                emin = mn;
                EXPECT(sum_ok<T>(wk_to_double(got[O_INCL][i]), pre, preabs),
                       "%s BT=%d block %ux%ux%u iter %d thread %d: inclusive %.10g want %.10g", tn, BT, block.x,
                       block.y, block.z, it, t, wk_to_double(got[O_INCL][i]), pre);
                EXPECT(sum_ok<T>(wk_to_double(got[O_TOT][i]), tot, totabs),
                       "%s BT=%d n=%d iter %d thread %d: total %.10g want %.10g", tn, BT, n, it, t,
                       wk_to_double(got[O_TOT][i]), tot);
                EXPECT(sum_ok<T>(wk_to_double(got[O_REX][i]), rin + ex, rinabs + exabs, rinabs),
                       "%s BT=%d n=%d iter %d thread %d: running exclusive %.10g want %.10g", tn, BT, n, it, t,
                       wk_to_double(got[O_REX][i]), rin + ex);
                EXPECT(seg[i] == 1, "%s BT=%d n=%d thread %d: non-commutative scan out of order", tn, BT, n, t);
                if (Full) {
                    EXPECT(sum_ok<T>(wk_to_double(got[O_EXCL][i]), ex, exabs) &&
                               !(t == 0 && isf && signbit(wk_to_double(got[O_EXCL][i]))),
                           "%s BT=%d n=%d iter %d thread %d: exclusive %.10g want %.10g", tn, BT, n, it, t,
                           wk_to_double(got[O_EXCL][i]), ex);
                    EXPECT(sum_ok<T>(wk_to_double(got[O_TOT2][i]), tot, totabs),
                           "%s BT=%d n=%d iter %d thread %d: exclusive total", tn, BT, n, it, t);
                    EXPECT(same(wk_to_double(got[O_IMAX][i]), mx),
                           "%s BT=%d n=%d iter %d thread %d: inclusive max %g want %g", tn, BT, n, it, t,
                           wk_to_double(got[O_IMAX][i]), mx);
                    EXPECT(same(wk_to_double(got[O_EMIN][i]), emin_t),
                           "%s BT=%d n=%d iter %d thread %d: exclusive min %g want %g", tn, BT, n, it, t,
                           wk_to_double(got[O_EMIN][i]), emin_t);
                    EXPECT(sum_ok<T>(wk_to_double(got[O_GEX][i]), 3.0 + ex, 3.0 + exabs),
                           "%s BT=%d n=%d iter %d thread %d: exclusive with init %.10g want %.10g", tn, BT, n, it, t,
                           wk_to_double(got[O_GEX][i]), 3.0 + ex);
                    EXPECT(sum_ok<T>(wk_to_double(got[O_RIN][i]), rin + pre, rinabs + preabs, rinabs),
                           "%s BT=%d n=%d iter %d thread %d: running inclusive %.10g want %.10g", tn, BT, n, it, t,
                           wk_to_double(got[O_RIN][i]), rin + pre);
                }
            }
            rin += tot; rinabs += totabs;
        }
    }
    cudaFree(din);
    for (int k = 0; k < O_COUNT; ++k) cudaFree(o.o[k]);
    cudaFree(o.seg);
}


Test(scan_block, runtime_size_every_type_size_and_shape) {
    WK_REQUIRE_GPU();
    g_failures = 0;
    for_each_block_type([](auto zero) {
        typedef decltype(zero) T;
        sweep_block_shapes([](dim3 b, int g, int it) { run_scan<0, T>(b, g, it); }, 2, 4, 3);
    });
    cr_assert(g_failures == 0, "%d mismatches (first ones logged above)", g_failures);
}

template <typename T, bool Full, int... Bs> static void sweep_ct(std::integer_sequence<int, Bs...>) {
    (run_scan<Bs, T, Full>(dim3(Bs), 2, 4), ...);
}

Test(scan_block, compile_time_size_every_size_and_type) {
    WK_REQUIRE_GPU();
    g_failures = 0;
    // Compile-time sizes (each is a kernel of its own, so a representative subset keeps the
    // build short; the run-time test sweeps every size of the issue's list).
    sweep_ct<float, false>(std::integer_sequence<int, 1, 2, 31, 33, 64, 65, 100, 255, 256, 513, 640, 1023, 1024>{});
    sweep_ct<int, true>(std::integer_sequence<int, 100>{});
    sweep_ct<unsigned long long, true>(std::integer_sequence<int, 257>{});
    sweep_ct<__half, true>(std::integer_sequence<int, 1000>{});
    sweep_ct<__nv_bfloat16, true>(std::integer_sequence<int, 31>{});
    run_scan<105, float, false>(dim3(7, 3, 5), 2, 3);
    run_scan<100, int, true>(dim3(10, 10, 1), 2, 3);
    cr_assert(g_failures == 0, "%d mismatches (first ones logged above)", g_failures);
}
