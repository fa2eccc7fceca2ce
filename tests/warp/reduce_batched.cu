// Tests of the batched warp reductions of include/warpkit/warp/reduce.cuh (warpReduceBatched,
// ...Sum/Max/Min) at every width 1..32 and several K (below, at and above the width, odd and
// even), the N-value block reductions built on them (block/reduce.cuh: blockReduceSum/Max/Min on
// arrays) at every block size and shape the block tests sweep, and operators that declare
// `commutative` (warp and block). Every result slot of every lane that the
// layout gives a result is checked against a double (or exact integer) host reference.
#include "../block_common.cuh"
#include <warpkit/reduce.cuh>
#include <type_traits>
#include <utility>
#include <vector>

enum Kind { K_SUM, K_MAX, K_MIN, K_COMPOSE, K_PAIR };

// A non-commutative, associative operator (composition of affine maps mod 2^32): a batched
// reduction that combines two lanes out of order gets it wrong.
struct Affine { unsigned a, b; };
struct Compose {
    __host__ __device__ Affine operator()(Affine f, Affine g) const { return Affine{f.a * g.a, f.b * g.a + g.b}; }
};
// A commutative operator on a struct, declared so: integer sum and xor (bitwise commutative).
struct Pair { unsigned a, b; };
struct PairOp {
    static constexpr bool commutative = true;
    __host__ __device__ Pair operator()(Pair p, Pair q) const { return Pair{p.a + q.a, p.b ^ q.b}; }
};
static_assert(warpkit::detail::AnyOrder<PairOp, Pair>::value && warpkit::detail::AnyOrder<warpkit::Sum, float>::value &&
                  !warpkit::detail::AnyOrder<warpkit::Sum, Affine>::value &&
                  !warpkit::detail::AnyOrder<Compose, Affine>::value &&
                  !warpkit::detail::AnyOrder<warpkit::ArgMax, warpkit::ValueIndex<float>>::value,
              "commutative trait");

static_assert(warpkit::warpBatchedLanes<1>() == 1 && warpkit::warpBatchedLanes<3>() == 2 &&
                  warpkit::warpBatchedLanes<24>() == 16 && warpkit::warpBatchedLanes<31>() == 16 &&
                  warpkit::warpBatchedLanes<32>() == 32,
              "warpBatchedLanes");

// ---- kernels ---------------------------------------------------------------------------------
// Lane gid reads in[gid*K + k] for k < K and writes its S = ceil(K / P) result slots to out[gid*S + j].
template <int W, int K, typename T, int Op> __global__ void k_batched(const T* in, T* out) {
    constexpr int S = (K + warpkit::warpBatchedLanes<W>() - 1) / warpkit::warpBatchedLanes<W>();
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    T v[K];
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] = in[(size_t)gid * K + k];
    if constexpr (Op == K_SUM) warpkit::warpReduceBatchedSum<W>(v);
    else if constexpr (Op == K_MAX) warpkit::warpReduceBatchedMax<W>(v);
    else if constexpr (Op == K_MIN) warpkit::warpReduceBatchedMin<W>(v);
    else if constexpr (Op == K_COMPOSE) warpkit::warpReduceBatched<W>(v, Compose{});
    else warpkit::warpReduceBatched<W>(v, PairOp{});
#pragma unroll
    for (int j = 0; j < S; ++j) out[(size_t)gid * S + j] = v[j];
}

template <int K, typename T, int Op, int... Ws>
static const void* const* batched_table(std::integer_sequence<int, Ws...>) {
    static const void* const table[] = {(const void*)k_batched<Ws + 1, K, T, Op>...};
    return table;
}

// ---- host reference ----------------------------------------------------------------------------
static int P_rt(int W) { int p = 1; while (p * 2 <= W) p *= 2; return p; }

template <typename T> static T gen(wk_rng* r, int Op, bool specials) {
    if constexpr (warpkit::detail::Arith<T>::is_float) {
        const uint64_t u = wk_next(r) % 97;
        double x = wk_uniform(r, -100.0, 100.0);
        if (specials && Op != K_SUM && u == 0) x = NAN;
        if (specials && u == 1) x = INFINITY;
        if (specials && Op != K_SUM && u == 2) x = -INFINITY;
        return wk_from_double<T>(x);
    } else {
        const uint64_t u = wk_next(r);
        T v;
        memcpy(&v, &u, sizeof v);
        return v;
    }
}

/// Compare lane results of the segment [base, base + W) (full segments only): value k of lane
/// l + jP slot j against the reduction over the segment's lanes of their value k.
template <typename T> static void check_segment(const std::vector<T>& in, const std::vector<T>& out, int W, int K,
                                                int Op, int base, const char* tn) {
    const int P = P_rt(W), S = (K + P - 1) / P;
    for (int l = 0; l < P; ++l)
        for (int j = 0; j < S; ++j) {
            const int k = l + j * P;
            if (k >= K) continue;
            const T got = out[(size_t)(base + l) * S + j];
            if constexpr (warpkit::detail::Arith<T>::is_float) {
                double acc = wk_to_double(in[(size_t)base * K + k]), sa = fabs(acc);
                bool nan = isnan(acc);
                for (int q = 1; q < W; ++q) {
                    const double x = wk_to_double(in[(size_t)(base + q) * K + k]);
                    nan |= isnan(x);
                    sa += fabs(x);
                    acc = Op == K_SUM ? acc + x : Op == K_MAX ? (x > acc ? x : acc) : (x < acc ? x : acc);
                }
                if (nan && Op != K_SUM) acc = NAN;
                const double g = wk_to_double(got);
                const double tol = Op == K_SUM ? (W + 1) * wk_eps<typename warpkit::detail::Arith<T>::Acc>() * sa +
                                                     wk_eps<T>() * fabs(acc)
                                               : 0.0;
                EXPECT(same(g, acc) || (!isinf(acc) && fabs(g - acc) <= tol),
                       "%s op %d W=%d K=%d lane %d slot %d (value %d): got %.9g want %.9g", tn, Op, W, K, base % 32 + l,
                       j, k, g, acc);
            } else {
                T acc = in[(size_t)base * K + k];
                for (int q = 1; q < W; ++q) {
                    const T x = in[(size_t)(base + q) * K + k];
                    acc = Op == K_SUM   ? (T)((unsigned long long)acc + (unsigned long long)x)
                          : Op == K_MAX ? (x > acc ? x : acc)
                                        : (x < acc ? x : acc);
                }
                EXPECT(got == acc, "%s op %d W=%d K=%d lane %d slot %d (value %d): got %lld want %lld", tn, Op, W, K,
                       base % 32 + l, j, k, (long long)got, (long long)acc);
            }
        }
}

template <typename... Args> static void launch(const void* kernel, int blocks, int threads, Args... args) {
    void* params[] = {(void*)&args...};
    WK_CUDA(cudaLaunchKernel(kernel, dim3(blocks), dim3(threads), params, 0, 0));
    WK_LAUNCHED();
}

/// Every width 1..32 for one (K, T, Op).
template <int K, typename T, int Op> static void sweep_widths(wk_rng* r) {
    const void* const* table = batched_table<K, T, Op>(std::make_integer_sequence<int, 32>{});
    const int warps = wk_quick() ? 4 : 16, n = warps * 32;
    T *din = wk_alloc<T>((size_t)n * K), *dout = wk_alloc<T>((size_t)n * K);
    for (int W = 1; W <= 32; ++W) {
        const int S = (K + P_rt(W) - 1) / P_rt(W);
        std::vector<T> in((size_t)n * K), out((size_t)n * S);
        for (size_t i = 0; i < in.size(); ++i) in[i] = gen<T>(r, Op, (i / K) % 3 == 0);
        wk_upload(din, in.data(), in.size());
        wk_poison(dout, (size_t)n * S);
        launch(table[W - 1], n / 64, 64, (const T*)din, dout);
        wk_download(out.data(), dout, out.size());
        for (int w = 0; w < warps; ++w)
            for (int s = 0; s + W <= 32; s += W) check_segment<T>(in, out, W, K, Op, w * 32 + s, wk_type_name<T>());
    }
    WK_CUDA(cudaFree(din)); WK_CUDA(cudaFree(dout));
}

Test(reduce_batched, sum_float_every_width_and_K) {
    WK_REQUIRE_GPU();
    g_failures = 0;
    wk_rng r = wk_rng_make(601);
    sweep_widths<1, float, K_SUM>(&r);
    sweep_widths<3, float, K_SUM>(&r);
    sweep_widths<8, float, K_SUM>(&r);
    sweep_widths<32, float, K_SUM>(&r);
    sweep_widths<37, float, K_SUM>(&r);
    cr_assert(g_failures == 0, "%d mismatches (first ones logged above)", g_failures);
}

Test(reduce_batched, max_min_other_types_every_width) {
    WK_REQUIRE_GPU();
    g_failures = 0;
    wk_rng r = wk_rng_make(602);
    sweep_widths<5, int, K_MAX>(&r);
    sweep_widths<32, int, K_MAX>(&r);
    sweep_widths<3, double, K_MIN>(&r);
    sweep_widths<8, __half, K_SUM>(&r);
    sweep_widths<6, unsigned long long, K_SUM>(&r);
    sweep_widths<4, float, K_MAX>(&r); // NaN and -inf inputs
    cr_assert(g_failures == 0, "%d mismatches (first ones logged above)", g_failures);
}

// ---- generic operators ---------------------------------------------------------------------------
template <int K, int Op> static void sweep_generic(wk_rng* r) {
    using T = typename std::conditional<Op == K_COMPOSE, Affine, Pair>::type;
    const void* const* table = batched_table<K, T, Op>(std::make_integer_sequence<int, 32>{});
    const int warps = wk_quick() ? 4 : 16, n = warps * 32;
    T *din = wk_alloc<T>((size_t)n * K), *dout = wk_alloc<T>((size_t)n * K);
    for (int W = 1; W <= 32; ++W) {
        const int P = P_rt(W), S = (K + P - 1) / P;
        std::vector<T> in((size_t)n * K), out((size_t)n * S);
        for (T& v : in) { v.a = (unsigned)wk_next(r) | (Op == K_COMPOSE ? 1u : 0u); v.b = (unsigned)wk_next(r); }
        wk_upload(din, in.data(), in.size());
        wk_poison(dout, (size_t)n * S);
        launch(table[W - 1], n / 64, 64, (const T*)din, dout);
        wk_download(out.data(), dout, out.size());
        for (int w = 0; w < warps; ++w)
            for (int s = 0; s + W <= 32; s += W)
                for (int l = 0; l < P; ++l)
                    for (int j = 0; j < S; ++j) {
                        const int k = l + j * P, base = w * 32 + s;
                        if (k >= K) continue;
                        T want = in[(size_t)base * K + k];
                        for (int q = 1; q < W; ++q) {
                            if constexpr (Op == K_COMPOSE) want = Compose{}(want, in[(size_t)(base + q) * K + k]);
                            else want = PairOp{}(want, in[(size_t)(base + q) * K + k]);
                        }
                        const T got = out[(size_t)(base + l) * S + j];
                        EXPECT(memcmp(&got, &want, sizeof(T)) == 0,
                               "%s W=%d K=%d warp %d lane %d slot %d: got (%u,%u) want (%u,%u)",
                               Op == K_COMPOSE ? "compose" : "pair", W, K, w, s + l, j, got.a, got.b, want.a, want.b);
                    }
    }
    WK_CUDA(cudaFree(din)); WK_CUDA(cudaFree(dout));
}

Test(reduce_batched, generic_operator_in_lane_order) {
    WK_REQUIRE_GPU();
    g_failures = 0;
    wk_rng r = wk_rng_make(603);
    sweep_generic<2, K_COMPOSE>(&r);
    sweep_generic<33, K_COMPOSE>(&r);
    sweep_generic<4, K_PAIR>(&r); // declared commutative: no operand selects
    cr_assert(g_failures == 0, "%d mismatches (first ones logged above)", g_failures);
}

// ---- operators that declare `commutative`: warpReduce and blockReduce -------------------------------
// Every lane / thread must get the same bits (the declaration promises op(a, b) == op(b, a)).
template <int W> __global__ void k_pair_warp(const Pair* in, Pair* out, const int* valid) {
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    out[2 * gid] = warpkit::warpReduce<W>(in[gid], PairOp{});
    out[2 * gid + 1] = warpkit::warpReduce<W>(in[gid], PairOp{}, valid[gid >> 5]);
}
template <int... Ws> static const void* const* pair_table(std::integer_sequence<int, Ws...>) {
    static const void* const table[] = {(const void*)k_pair_warp<Ws + 1>...};
    return table;
}

Test(reduce_batched, commutative_operator_warp) {
    WK_REQUIRE_GPU();
    g_failures = 0;
    wk_rng r = wk_rng_make(604);
    const void* const* table = pair_table(std::make_integer_sequence<int, 32>{});
    const int warps = 32, n = warps * 32;
    Pair* din = wk_alloc<Pair>(n);
    Pair* dout = wk_alloc<Pair>(2 * n);
    int* dv = wk_alloc<int>(warps);
    for (int W = 1; W <= 32; ++W) {
        std::vector<Pair> in(n), out(2 * n);
        std::vector<int> valid(warps);
        for (Pair& p : in) { p.a = (unsigned)wk_next(&r); p.b = (unsigned)wk_next(&r); }
        for (int w = 0; w < warps; ++w) valid[w] = 1 + w % (W + 1);
        wk_upload(din, in.data(), n);
        wk_upload(dv, valid.data(), warps);
        wk_poison(dout, 2 * n);
        launch(table[W - 1], n / 128, 128, (const Pair*)din, dout, (const int*)dv);
        wk_download(out.data(), dout, 2 * n);
        const bool pow2 = (W & (W - 1)) == 0;
        for (int w = 0; w < warps; ++w)
            for (int s = 0; s < 32; s += W) {
                const int len = s + W <= 32 ? W : 32 - s;
                for (int form = 0; form < 2; ++form) {
                    const int cnt = form == 0 ? len : (valid[w] < len ? valid[w] : len);
                    Pair want = in[w * 32 + s];
                    for (int q = 1; q < cnt; ++q) want = PairOp{}(want, in[w * 32 + s + q]);
                    for (int l = 0; l < (pow2 ? len : 1); ++l) {
                        const Pair got = out[2 * (w * 32 + s + l) + form];
                        EXPECT(got.a == want.a && got.b == want.b,
                               "commutative op W=%d %s warp %d lane %d: got (%u,%u) want (%u,%u)", W,
                               form ? "valid" : "full", w, s + l, got.a, got.b, want.a, want.b);
                    }
                }
            }
    }
    WK_CUDA(cudaFree(din)); WK_CUDA(cudaFree(dout)); WK_CUDA(cudaFree(dv));
    cr_assert(g_failures == 0, "%d mismatches (first ones logged above)", g_failures);
}

// ---- N-value block reductions -----------------------------------------------------------------------
// Call c of block b: thread t reads 2 + 3 + 3 values (and 33 more for float). Results of every
// thread: sum2 (own scratch), sum2 again (caller scratch, must agree bitwise), max3 and min3 back
// to back on one caller scratch, and for float sum33 (more values than lanes: two result slots a
// lane in the warp stage), plus a commutative-declared struct op through the generic blockReduce.
template <typename T> __device__ bool bitsEqual(T x, T y) {
    using U =
        typename std::conditional<sizeof(T) == 8, unsigned long long,
                                  typename std::conditional<sizeof(T) == 4, unsigned, unsigned short>::type>::type;
    U a, b;
    __builtin_memcpy(&a, &x, sizeof(T));
    __builtin_memcpy(&b, &y, sizeof(T));
    return a == b;
}

template <typename T> struct MultiOuts { T *sum2, *max3, *min3, *sum33; int* ok; Pair* pair; };

template <int BT, typename T> __global__ void __launch_bounds__(BT > 0 ? BT : 1024, 1)
    k_multi(const T* in, const Pair* pin, MultiOuts<T> o, int iters) {
    __shared__ warpkit::BlockReduceScratch<T[2], BT> sh2;
    __shared__ warpkit::BlockReduceScratch<T[3], BT> sh3;
    constexpr bool kBig = warpkit::detail::IsSame<T, float>::value;
    const int n = (int)(blockDim.x * blockDim.y * blockDim.z);
    const int tid = (int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
    for (int it = 0; it < iters; ++it) {
        const size_t i = (size_t)(blockIdx.x * iters + it) * n + tid;
        const T* x = in + i * 41;
        T a[2] = {x[0], x[1]}, b[2] = {x[0], x[1]};
        warpkit::blockReduceSum<BT>(a);
        warpkit::blockReduceSum<BT>(b, sh2);
        o.sum2[i * 2] = a[0];
        o.sum2[i * 2 + 1] = a[1];
        o.ok[i] = bitsEqual(a[0], b[0]) && bitsEqual(a[1], b[1]);
        T m[3] = {x[2], x[3], x[4]}, q[3] = {x[5], x[6], x[7]};
        warpkit::blockReduceMax<BT>(m, sh3);
        warpkit::blockReduceMin<BT>(q, sh3);
        for (int k = 0; k < 3; ++k) { o.max3[i * 3 + k] = m[k]; o.min3[i * 3 + k] = q[k]; }
        if constexpr (kBig) {
            T big[33];
            for (int k = 0; k < 33; ++k) big[k] = x[8 + k];
            warpkit::blockReduceSum<BT>(big);
            for (int k = 0; k < 33; ++k) o.sum33[i * 33 + k] = big[k];
        }
        o.pair[i] = warpkit::blockReduce<BT>(pin[i], PairOp{});
    }
}

/// Sum tolerance: the tree's roundings (a few per level, in the working type) plus T's final rounding.
template <typename T> static double sum_tol(double sumabs) {
    return 16.0 * wk_eps<typename warpkit::detail::Arith<T>::Acc>() * sumabs + wk_eps<T>() * sumabs;
}

template <int BT, typename T> static void run_multi(dim3 block, int grid, int iters) {
    const int n = (int)(block.x * block.y * block.z);
    const size_t total = (size_t)grid * iters * n, calls = (size_t)grid * iters;
    wk_rng r = wk_rng_make(700 + n * 8 + sizeof(T) + BT);
    std::vector<T> h(total * 41);
    std::vector<Pair> hp(total);
    for (size_t c = 0; c < calls; ++c)
        for (int t = 0; t < n; ++t) {
            T* x = &h[(c * n + t) * 41];
            for (int k = 0; k < 41; ++k) {
                if constexpr (warpkit::detail::Arith<T>::is_float)
                    x[k] = wk_from_double<T>(wk_uniform(&r, -100.0, 100.0));
                else if ((T)-1 < (T)0) x[k] = (T)wk_int(&r, -1000000, 1000000); // sums stay exact in double
                else x[k] = (T)wk_int(&r, 0, 2000000);                         // and below 2^32
            }
            hp[c * n + t] = Pair{(unsigned)wk_next(&r), (unsigned)wk_next(&r)};
        }
    if constexpr (warpkit::detail::Arith<T>::is_float) // a NaN into max value 1 and min value 2 of call 1, an inf into
                                                       // sum value 0 of call 2
        for (size_t c = 1; c < calls; c += 4) {
            h[(c * n + (size_t)wk_int(&r, 0, n - 1)) * 41 + 3] = warpkit::detail::quietNaN<T>();
            h[(c * n + (size_t)wk_int(&r, 0, n - 1)) * 41 + 7] = warpkit::detail::quietNaN<T>();
            if (c + 1 < calls) h[((c + 1) * n + (size_t)wk_int(&r, 0, n - 1)) * 41] = wk_from_double<T>(INFINITY);
        }
    T* din = wk_alloc<T>(h.size());
    Pair* dp = wk_alloc<Pair>(total);
    wk_upload(din, h.data(), h.size());
    wk_upload(dp, hp.data(), total);
    MultiOuts<T> o;
    o.sum2 = wk_alloc<T>(total * 2);
    o.max3 = wk_alloc<T>(total * 3);
    o.min3 = wk_alloc<T>(total * 3);
    o.sum33 = wk_alloc<T>(total * 33);
    o.ok = wk_alloc<int>(total); o.pair = wk_alloc<Pair>(total);
    wk_poison(o.sum2, total * 2);
    wk_poison(o.max3, total * 3);
    wk_poison(o.min3, total * 3);
    wk_poison(o.sum33, total * 33);
    wk_poison(o.ok, total); wk_poison(o.pair, total);
    k_multi<BT, T><<<grid, block>>>(din, dp, o, iters);
    WK_LAUNCHED();
    std::vector<T> sum2(total * 2), max3(total * 3), min3(total * 3), sum33(total * 33);
    std::vector<int> ok(total);
    std::vector<Pair> pair(total);
    wk_download(sum2.data(), o.sum2, sum2.size()); wk_download(max3.data(), o.max3, max3.size());
    wk_download(min3.data(), o.min3, min3.size()); wk_download(sum33.data(), o.sum33, sum33.size());
    wk_download(ok.data(), o.ok, total); wk_download(pair.data(), o.pair, total);
    const bool big = warpkit::detail::IsSame<T, float>::value;
    const char* tn = wk_type_name<T>();
    for (size_t c = 0; c < calls; ++c) {
        double want[41], sa[41];
        bool nan[41];
        for (int k = 0; k < 41; ++k) {
            want[k] = k >= 2 && k < 5 ? -INFINITY : k >= 5 && k < 8 ? INFINITY : 0.0;
            sa[k] = 0.0;
            nan[k] = false;
        }
        Pair pw = hp[c * n];
        for (int t = 0; t < n; ++t) {
            const T* x = &h[(c * n + t) * 41];
            for (int k = 0; k < 41; ++k) {
                const double v = wk_to_double(x[k]);
                nan[k] |= isnan(v);
                if (k < 2 || k >= 8) { want[k] += v; sa[k] += fabs(v); }
                else if (k < 5) want[k] = v > want[k] ? v : want[k];
                else want[k] = v < want[k] ? v : want[k];
            }
            if (t) pw = PairOp{}(pw, hp[c * n + t]);
        }
        for (int k = 2; k < 8; ++k) if (nan[k]) want[k] = NAN;
        for (int t = 0; t < n; ++t) {
            const size_t i = c * n + t;
            for (int k = 0; k < 2; ++k) {
                const double g = wk_to_double(sum2[i * 2 + k]);
                EXPECT(same(g, want[k]) || (!isinf(want[k]) && fabs(g - want[k]) <= sum_tol<T>(sa[k])),
                       "%s BT=%d block %ux%ux%u call %zu thread %d: sum[%d] %.9g want %.9g", tn, BT, block.x, block.y,
                       block.z, c, t, k, g, want[k]);
            }
            EXPECT(ok[i] == 1, "%s BT=%d n=%d call %zu thread %d: caller-scratch sums differ from own-scratch sums", tn,
                   BT, n, c, t);
            for (int k = 0; k < 3; ++k) {
                EXPECT(same(wk_to_double(max3[i * 3 + k]), want[2 + k]),
                       "%s BT=%d n=%d call %zu thread %d: max[%d] %g want %g", tn, BT, n, c, t, k,
                       wk_to_double(max3[i * 3 + k]), want[2 + k]);
                EXPECT(same(wk_to_double(min3[i * 3 + k]), want[5 + k]),
                       "%s BT=%d n=%d call %zu thread %d: min[%d] %g want %g", tn, BT, n, c, t, k,
                       wk_to_double(min3[i * 3 + k]), want[5 + k]);
            }
            if (big)
                for (int k = 0; k < 33; ++k) {
                    const double g = wk_to_double(sum33[i * 33 + k]);
                    EXPECT(same(g, want[8 + k]) || fabs(g - want[8 + k]) <= sum_tol<T>(sa[8 + k]),
                           "%s BT=%d n=%d call %zu thread %d: sum33[%d] %.9g want %.9g", tn, BT, n, c, t, k, g,
                           want[8 + k]);
                }
            EXPECT(pair[i].a == pw.a && pair[i].b == pw.b,
                   "BT=%d n=%d call %zu thread %d: commutative struct op (%u,%u) want (%u,%u)", BT, n, c, t, pair[i].a,
                   pair[i].b, pw.a, pw.b);
        }
    }
    cudaFree(din);
    cudaFree(dp);
    cudaFree(o.sum2);
    cudaFree(o.max3);
    cudaFree(o.min3);
    cudaFree(o.sum33);
    cudaFree(o.ok);
    cudaFree(o.pair);
}

Test(reduce_batched, block_several_values_every_size_shape_and_type) {
    WK_REQUIRE_GPU();
    g_failures = 0;
    for_each_block_type([](auto zero) {
        typedef decltype(zero) T;
        sweep_block_shapes([](dim3 b, int g, int it) { run_multi<0, T>(b, g, it); }, 2, 4, 3);
    });
    cr_assert(g_failures == 0, "%d mismatches (first ones logged above)", g_failures);
}

template <typename T, int... Bs> static void multi_ct(std::integer_sequence<int, Bs...>) {
    (run_multi<Bs, T>(dim3(Bs), 2, 3), ...);
}

Test(reduce_batched, block_several_values_compile_time_sizes) {
    WK_REQUIRE_GPU();
    g_failures = 0;
    multi_ct<float>(std::integer_sequence<int, 1, 31, 32, 33, 64, 96, 100, 256, 257, 640, 1024>{});
    multi_ct<int>(std::integer_sequence<int, 128, 1000>{});
    multi_ct<__half>(std::integer_sequence<int, 512>{});
    run_multi<105, float>(dim3(7, 3, 5), 2, 3);
    cr_assert(g_failures == 0, "%d mismatches (first ones logged above)", g_failures);
}

// Host-only: the scratch of the N-value forms holds N working-type values per warp slot.
Test(reduce_batched, scratch_sizes) {
    cr_expect_eq((warpkit::blockReduceScratchBytes<float[2], 256>()), 8 * 2 * 4);
    cr_expect_eq((warpkit::blockReduceScratchBytes<__half[3], 100>()), 5 * 3 * 4,
                 "16-bit floats reduce in float; 4 warps + broadcast");
    cr_expect_eq((warpkit::blockReduceScratchBytes<double[2], 0>()), 33 * 2 * 8);
    cr_expect_eq((alignof(warpkit::BlockReduceScratch<double[3], 64>)), 8);
}
