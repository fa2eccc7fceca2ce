// Tests of the block reductions in include/warpkit/block/reduce.cuh (blockReduce*, ...ToThread0,
// ArgMax/ArgMin, caller scratch). One "combo" kernel runs every reduction of one type several
// times in a loop, back to back over shared scratch, on fresh data each iteration; each thread
// writes what it got, so "every thread gets the result" is checked thread by thread.
#include "../block_common.cuh"
#include <warpkit/reduce.cuh>
#include <utility>
#include <vector>

using warpkit::ValueIndex;

template <typename T> struct Outs {
    T *sum, *sum2, *mx, *mn, *amv, *anv, *sum0;
    int *ami, *ani, *ami0, *seg;
};

// 1024 threads x 64 registers: the bound keeps 64-bit types launchable at 1024 threads.
template <int BT, typename T, bool Full> __global__ void __launch_bounds__(BT > 0 ? BT : 1024)
    k_combo(const T* in, Outs<T> o, int iters) {
    __shared__ warpkit::BlockReduceScratch<T, BT> sh;                 // shared by several calls
    __shared__ warpkit::BlockReduceScratch<ValueIndex<T>, BT> shp;
    const int n = (int)(blockDim.x * blockDim.y * blockDim.z);
    const int tid = (int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
    for (int it = 0; it < iters; ++it) {
        const int call = blockIdx.x * iters + it;
        const size_t i = (size_t)call * n + tid;
        const T v = in[i];
        // Each result is stored at once, keeping register pressure low enough for 1024 threads.
        o.sum[i] = warpkit::blockReduceSum<BT>(v);                  // own scratch
        o.mx[i] = warpkit::blockReduceMax<BT>(v, sh);               // caller scratch ...
        o.mn[i] = warpkit::blockReduceMin<BT>(v, sh);               // ... reused back to back
        const ValueIndex<T> am = warpkit::blockReduceArgMax<BT>(v, tid, shp);
        o.amv[i] = am.value; o.ami[i] = am.index;
        const Seg g = warpkit::blockReduce<BT>(Seg{tid, tid, 1}, SegOp{});
        o.seg[i] = (g.first == 0 && g.last == n - 1 && g.ok) ? 1 : 0;
        if constexpr (Full) { // the remaining forms (the light kernel keeps compile time down)
            o.sum2[i] = warpkit::blockReduceSum<BT>(v, sh);
            const T s0 = warpkit::blockReduceSumToThread0<BT>(v, sh);
            if (tid == 0) o.sum0[call] = s0;
            const ValueIndex<T> an = warpkit::blockReduceArgMin<BT>(v, tid);
            o.anv[i] = an.value; o.ani[i] = an.index;
            const ValueIndex<T> am0 = warpkit::blockReduceArgMaxToThread0<BT>(v, tid);
            if (tid == 0) o.ami0[call] = am0.index;
        }
    }
}

// ---- inputs and reference -------------------------------------------------------------------
template <typename T> static T gen_value(wk_rng* r, bool ties) {
    if (wk_eps<T>() == 0.0) { // integers
        if ((T)-1 < (T)0) return (T)wk_int(r, ties ? -20 : -1000000, ties ? 20 : 1000000);
        return (T)wk_int(r, 0, ties ? 40 : 2000000);
    }
    const double range = sizeof(T) == 2 ? 10.0 : 100.0;
    double x = wk_uniform(r, -range, range);
    if (ties) x = floor(x * 2.0) / 2.0;
    return wk_from_double<T>(x);
}

/// Fill one block's data for call number `call`: plain, a NaN, +-inf, or +inf only (floats).
template <typename T> static void gen_call(wk_rng* r, T* p, int n, int call) {
    const bool ties = call % 2 == 1;
    for (int t = 0; t < n; ++t) p[t] = gen_value<T>(r, ties);
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

struct Ref { double sum, sumabs, mx, mn; int ami, ani; };
template <typename T> static Ref reference(const T* p, int n) {
    Ref r = {0.0, 0.0, -INFINITY, INFINITY, -1, -1};
    bool nan = false;
    int firstnan = -1;
    double bmx = -INFINITY, bmn = INFINITY;
    int imx = 0, imn = 0;
    for (int t = 0; t < n; ++t) {
        double x = wk_to_double(p[t]);
        r.sum += x;
        if (!isnan(x)) r.sumabs += fabs(x);
        if (isnan(x)) { if (!nan) firstnan = t; nan = true; continue; }
        if (x > bmx || (t == 0)) { if (x > bmx || t == 0) { bmx = x; imx = t; } }
        if (x < bmn || (t == 0)) { bmn = x; imn = t; }
    }
    // recompute first max/min among non-NaN values exactly (first index wins)
    bmx = -INFINITY; bmn = INFINITY; imx = imn = -1;
    for (int t = 0; t < n; ++t) {
        double x = wk_to_double(p[t]);
        if (isnan(x)) continue;
        if (imx < 0 || x > bmx) { bmx = x; imx = t; }
        if (imn < 0 || x < bmn) { bmn = x; imn = t; }
    }
    r.mx = nan ? NAN : bmx; r.mn = nan ? NAN : bmn;
    r.ami = nan ? firstnan : imx; r.ani = nan ? firstnan : imn;
    return r;
}

template <typename T> static double sum_tol(const Ref& r) {
    if (wk_eps<T>() == 0.0) return 0.0;
    const double acc = sizeof(T) == 8 ? 1e-15 : 1e-6;
    return wk_eps<T>() * fabs(r.sum) + 8.0 * acc * (r.sumabs + 1.0);
}


/// Run k_combo<BT, T> on `grid` blocks of shape `block`, `iters` calls each; check every thread.
template <int BT, typename T, bool Full = true> static void run_combo(dim3 block, int grid, int iters) {
    const int n = (int)(block.x * block.y * block.z);
    const size_t total = (size_t)grid * iters * n, calls = (size_t)grid * iters;
    wk_rng r = wk_rng_make(1000 + n * 8 + sizeof(T) + BT);
    std::vector<T> h(total);
    for (size_t c = 0; c < calls; ++c) gen_call(&r, &h[c * n], n, (int)c);
    T* din = wk_alloc<T>(total);
    wk_upload(din, h.data(), total);
    Outs<T> o;
    T** tp[] = {&o.sum, &o.sum2, &o.mx, &o.mn, &o.amv, &o.anv};
    for (T** p : tp) { *p = wk_alloc<T>(total); wk_poison(*p, total); }
    int** ip[] = {&o.ami, &o.ani, &o.seg};
    for (int** p : ip) { *p = wk_alloc<int>(total); wk_poison(*p, total); }
    o.sum0 = wk_alloc<T>(calls); wk_poison(o.sum0, calls);
    o.ami0 = wk_alloc<int>(calls); wk_poison(o.ami0, calls);
    k_combo<BT, T, Full><<<grid, block>>>(din, o, iters);
    WK_LAUNCHED();
    std::vector<T> sum(total), sum2(total), mx(total), mn(total), amv(total), anv(total), sum0(calls);
    std::vector<int> ami(total), ani(total), seg(total), ami0(calls);
    wk_download(sum.data(), o.sum, total); wk_download(sum2.data(), o.sum2, total);
    wk_download(mx.data(), o.mx, total); wk_download(mn.data(), o.mn, total);
    wk_download(amv.data(), o.amv, total); wk_download(anv.data(), o.anv, total);
    wk_download(ami.data(), o.ami, total); wk_download(ani.data(), o.ani, total);
    wk_download(seg.data(), o.seg, total); wk_download(sum0.data(), o.sum0, calls);
    wk_download(ami0.data(), o.ami0, calls);
    const char* tn = wk_type_name<T>();
    for (size_t c = 0; c < calls; ++c) {
        const Ref ref = reference(&h[c * n], n);
        const double tol = sum_tol<T>(ref);
        const double want_sum = isnan(ref.sum) ? NAN : ref.sum;
        if (Full)
            EXPECT(wk_close(wk_to_double(sum0[c]), want_sum, 0) || fabs(wk_to_double(sum0[c]) - want_sum) <= tol,
                   "%s BT=%d block %ux%ux%u call %zu: ToThread0 sum %g want %g", tn, BT, block.x, block.y, block.z, c,
                   wk_to_double(sum0[c]), want_sum);
        if (Full)
            EXPECT(ami0[c] == ref.ami, "%s BT=%d n=%d call %zu: ArgMaxToThread0 index %d want %d", tn, BT, n, c,
                   ami0[c], ref.ami);
        for (int t = 0; t < n; ++t) {
            const size_t i = c * n + t;
            const double s = wk_to_double(sum[i]), s2 = wk_to_double(sum2[i]);
            EXPECT(same(s, want_sum) || (!isnan(s) && !isinf(want_sum) && fabs(s - want_sum) <= tol),
                   "%s BT=%d block %ux%ux%u call %zu thread %d: sum %.17g want %.17g", tn, BT, block.x, block.y,
                   block.z, c, t, s, want_sum);
            if (Full)
                EXPECT(same(s2, s), "%s BT=%d n=%d call %zu thread %d: caller-scratch sum %.17g differs from %.17g", tn,
                       BT, n, c, t, s2, s);
            EXPECT(same(wk_to_double(mx[i]), ref.mx), "%s BT=%d n=%d call %zu thread %d: max %g want %g", tn, BT, n, c,
                   t, wk_to_double(mx[i]), ref.mx);
            EXPECT(same(wk_to_double(mn[i]), ref.mn), "%s BT=%d n=%d call %zu thread %d: min %g want %g", tn, BT, n, c,
                   t, wk_to_double(mn[i]), ref.mn);
            EXPECT(ami[i] == ref.ami && same(wk_to_double(amv[i]), wk_to_double(h[c * n + ref.ami])),
                   "%s BT=%d n=%d call %zu thread %d: argmax (%g, %d) want index %d", tn, BT, n, c, t,
                   wk_to_double(amv[i]), ami[i], ref.ami);
            if (Full)
                EXPECT(ani[i] == ref.ani && same(wk_to_double(anv[i]), wk_to_double(h[c * n + ref.ani])),
                       "%s BT=%d n=%d call %zu thread %d: argmin (%g, %d) want index %d", tn, BT, n, c, t,
                       wk_to_double(anv[i]), ani[i], ref.ani);
            EXPECT(seg[i] == 1, "%s BT=%d n=%d call %zu thread %d: non-commutative op combined out of order", tn, BT, n,
                   c, t);
        }
    }
    cudaFree(din);
    for (T** p : tp) cudaFree(*p);
    for (int** p : ip) cudaFree(*p);
    cudaFree(o.sum0); cudaFree(o.ami0);
}


Test(reduce_block, runtime_size_every_type_size_and_shape) {
    WK_REQUIRE_GPU();
    g_failures = 0;
    for_each_block_type([](auto zero) {
        typedef decltype(zero) T;
        sweep_block_shapes([](dim3 b, int g, int it) { run_combo<0, T>(b, g, it); }, wk_quick() ? 2 : 3, 4, 4);
    });
    cr_assert(g_failures == 0, "%d mismatches (first ones logged above)", g_failures);
}

template <typename T, bool Full, int... Bs> static void sweep_ct(std::integer_sequence<int, Bs...>) {
    (run_combo<Bs, T, Full>(dim3(Bs), wk_quick() ? 2 : 3, 4), ...);
}

Test(reduce_block, compile_time_size_every_size_and_type) {
    WK_REQUIRE_GPU();
    g_failures = 0;
    // Compile-time sizes (each is a kernel of its own, so a representative subset keeps the
    // build short; the run-time test sweeps every size of the issue's list).
    sweep_ct<float, false>(std::integer_sequence<int, 1, 2, 31, 33, 64, 65, 100, 255, 256, 513, 640, 1023, 1024>{});
    sweep_ct<int, true>(std::integer_sequence<int, 100>{});
    sweep_ct<unsigned long long, true>(std::integer_sequence<int, 1000>{});
    sweep_ct<__half, true>(std::integer_sequence<int, 257>{});
    sweep_ct<__nv_bfloat16, true>(std::integer_sequence<int, 31>{});
    // 2-D and 3-D blocks with the size known at compile time
    run_combo<105, float, false>(dim3(7, 3, 5), 2, 4);
    run_combo<1024, float, false>(dim3(32, 8, 4), 2, 4);
    run_combo<100, int, true>(dim3(10, 10, 1), 2, 4);
    cr_assert(g_failures == 0, "%d mismatches (first ones logged above)", g_failures);
}

// Host-only: the documented scratch sizes (runs in CI without a GPU).
Test(reduce_block, scratch_sizes) {
    cr_expect_eq((warpkit::blockReduceScratchBytes<float, 256>()), 8 * 4, "one float per warp");
    cr_expect_eq((warpkit::blockReduceScratchBytes<float, 1024>()), 32 * 4);
    cr_expect_eq((warpkit::blockReduceScratchBytes<float, 100>()), 5 * 4, "4 warps + broadcast slot");
    cr_expect_eq((warpkit::blockReduceScratchBytes<float, 0>()), 33 * 4, "run-time size: 32 warps + broadcast");
    cr_expect_eq((warpkit::blockReduceScratchBytes<float, 32>()), 4, "one warp: unused single slot");
    cr_expect_eq((warpkit::blockReduceScratchBytes<__half, 256>()), 8 * 4, "16-bit floats reduce in float");
    cr_expect_eq((warpkit::blockReduceScratchBytes<double, 64>()), 2 * 8);
    cr_expect_eq((warpkit::blockReduceScratchBytes<ValueIndex<float>, 512>()), 16 * 8);
    cr_expect_eq((alignof(warpkit::BlockReduceScratch<double, 64>)), 8);
}
