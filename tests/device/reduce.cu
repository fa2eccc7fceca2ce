// Tests of include/warpkit/device/reduce.cuh: deviceReduce and deviceReduceSum / Max / Min.
//
// Data are small integers (exact in every type, so sums are checked exactly wherever the
// accumulator holds every partial sum exactly), except where a test says otherwise. Every output
// is poisoned first; every call goes through the two-call workspace rule with a workspace full of
// garbage, since the call must bring its arrival word to order itself.
#include "../common.cuh"
#include <warpkit/device/reduce.cuh>

#include <algorithm>
#include <limits.h>
#include <vector>

using warpkit::detail::Arith;

// ---- helpers -------------------------------------------------------------------------------------
/// Runs each call's size query, call(nullptr, &b), allocates the largest size asked for (into
/// *bytes) and fills it with the byte `garbage`. call: (void* workspace, size_t* bytes) -> cudaError_t.
template <typename... Calls> static void* workspace_for(size_t* bytes, int garbage, Calls... calls) {
    *bytes = 0;
    auto ask = [&](auto call) {
        size_t b = 0;
        WK_CUDA(call(nullptr, &b));
        cr_assert(b > 0, "the size query asked for 0 bytes");
        *bytes = b > *bytes ? b : *bytes;
    };
    (ask(calls), ...);
    void* w = NULL;
    WK_CUDA(cudaMalloc(&w, *bytes));
    WK_CUDA(cudaMemset(w, garbage, *bytes));
    return w;
}

template <typename T> static bool same_bits(const T& a, const T& b) { return memcmp(&a, &b, sizeof(T)) == 0; }

/// The accumulator as T, on the host (as the kernel rounds a float result to a 16-bit float).
template <typename T, typename A> static T as_T(A a) {
    if constexpr (warpkit::detail::IsSame<T, A>::value) return a;
    else return Arith<T>::from_acc(a);
}

/// The blocks deviceReduce launches for n elements of T with accumulator A (out type O).
template <typename T, typename A, typename O, typename Op> static int grid_blocks(long long n) {
    int b = 0;
    WK_CUDA((warpkit::detail::reduceBlocks<T, A, O, Op>(n, &b)));
    return b;
}

/// Longest chain of roundings in one result: a thread's share, the warp and block trees, the
/// partials a thread of the last block folds, and its trees (each adds at most u * sum|x|).
template <typename T> static double sum_depth(long long n) {
    using A = typename Arith<T>::Acc;
    const long long g = grid_blocks<T, A, T, warpkit::Sum>(n);
    return (double)((n + g * 256 - 1) / (g * 256)) + 8 + (g + 255) / 256 + 8 + 4;
}

/// Unit roundoff of the accumulator of T's named forms.
template <typename T> static double acc_u(void) {
    return warpkit::detail::IsSame<T, double>::value ? 0x1p-53 : Arith<T>::is_float ? 0x1p-24 : 0.0;
}

// ---- named forms: every size, alignment and element type ------------------------------------------
template <typename T> static void named_sweep(void) {
    using A = typename Arith<T>::Acc;
    constexpr int V = warpkit::vectorElems<T>();
    const long long perBlock = 256LL * V;
    const long long full = (long long)grid_blocks<T, A, T, warpkit::Sum>(1LL << 40) * perBlock; // whole grid
    std::vector<long long> sizes = {
        0,    1,  2,   3,   7,   8,    9,    15,           16,       17,           31,
        32,   33, 255, 256, 257, 1021, 4099, perBlock - 1, perBlock, perBlock + 1, 5 * perBlock + 3,
        65537};
    if (wk_quick()) { // under the sanitizers: a few sizes around the block and vector boundaries
        sizes = {0, 1, 3, 31, 33, perBlock + 1, 4099};
    } else {
        const long long big[] = {full - 1, full, full + 1, 2 * full + V + 1, (1LL << 20) + 3, (1LL << 22) + 7};
        sizes.insert(sizes.end(), big, big + 6);
    }
    wk_rng rng = wk_rng_make(0xd0 + sizeof(T) * 3 + Arith<T>::is_float);
    const long long lo = Arith<T>::is_float ? -8 : (Arith<T>::lowest() == 0 ? 0 : -1000),
                    hi = Arith<T>::is_float ? 8 : 1000;
    T* dout = wk_alloc<T>(6);
    T* din = wk_alloc<T>((size_t)(*std::max_element(sizes.begin(), sizes.end()) + 8));
    size_t bytes = 0;
    // One workspace for all three kernels and every n: the largest size any of them asks for (the
    // size never decreases with n).
    void* ws = workspace_for(
        &bytes, 0x5c, [&](void* w, size_t* b) { return warpkit::deviceReduceSum(din, dout, 1LL << 40, w, b); },
        [&](void* w, size_t* b) { return warpkit::deviceReduceMax(din, dout, 1LL << 40, w, b); },
        [&](void* w, size_t* b) { return warpkit::deviceReduceMin(din, dout, 1LL << 40, w, b); });
    for (long long n : sizes) {
        std::vector<T> h((size_t)n + 8);
        std::vector<long long> x((size_t)n + 8);
        for (size_t i = 0; i < h.size(); ++i) {
            x[i] = wk_int(&rng, lo, hi);
            h[i] = wk_from_double<T>((double)x[i]);
        }
        wk_upload(din, h.data(), h.size());
        for (int off = 0; off < 8; ++off) {
            if (wk_quick() && off != 0 && off != 1 && off != 7) continue;
            long long s = 0, asum = 0, mx = LLONG_MIN, mn = LLONG_MAX;
            for (long long i = off; i < off + n; ++i) {
                s += x[i];
                asum += x[i] < 0 ? -x[i] : x[i];
                mx = std::max(mx, x[i]);
                mn = std::min(mn, x[i]);
            }
            wk_poison(dout, 6);
            for (int run = 0; run < 2; ++run) {
                WK_CUDA(warpkit::deviceReduceSum(din + off, dout + 3 * run, n, ws, &bytes));
                WK_CUDA(warpkit::deviceReduceMax(din + off, dout + 3 * run + 1, n, ws, &bytes));
                WK_CUDA(warpkit::deviceReduceMin(din + off, dout + 3 * run + 2, n, ws, &bytes));
            }
            WK_LAUNCHED();
            T got[6];
            wk_download(got, dout, 6);
            for (int k = 0; k < 3; ++k)
                cr_assert(same_bits(got[k], got[k + 3]), "%s op %d n=%lld offset %d: two runs differ",
                          wk_type_name<T>(), k, n, off);
            T wantSum, wantMax, wantMin;
            if (n == 0) {
                wantSum = as_T<T>(warpkit::detail::Identity<warpkit::Sum, A>::value());
                wantMax = as_T<T>(Arith<A>::lowest());
                wantMin = as_T<T>(Arith<A>::highest());
            } else {
                // Integers wrap as T does; floats are exact while every partial sum is below 2^24
                // in magnitude (float accumulators), then rounded once to T.
                wantSum = Arith<T>::is_float ? wk_from_double<T>((double)s) : (T)(unsigned long long)s;
                wantMax = wk_from_double<T>((double)mx);
                wantMin = wk_from_double<T>((double)mn);
            }
            const bool exact = !Arith<T>::is_float || acc_u<T>() < 0x1p-30 || asum < (1LL << 24);
            const double tol =
                exact ? 0.0 : sum_depth<T>(n) * acc_u<T>() * (double)asum + wk_eps<T>() * fabs((double)s);
            const bool sumOk = exact ? same_bits(got[0], wantSum) : fabs(wk_to_double(got[0]) - (double)s) <= tol;
            cr_assert(sumOk, "deviceReduceSum<%s> n=%lld offset %d: %.17g, want %.17g (tol %g), seed 0x%llx",
                      wk_type_name<T>(), n, off, wk_to_double(got[0]), wk_to_double(wantSum), tol,
                      (unsigned long long)wk_seed());
            cr_assert(same_bits(got[1], wantMax) && same_bits(got[2], wantMin),
                      "deviceReduceMax/Min<%s> n=%lld offset %d: %.17g / %.17g, want %.17g / %.17g", wk_type_name<T>(),
                      n, off, wk_to_double(got[1]), wk_to_double(got[2]), wk_to_double(wantMax), wk_to_double(wantMin));
        }
    }
    for (void* buf : {(void*)din, (void*)dout, (void*)ws}) WK_CUDA(cudaFree(buf));
}

Test(device_reduce, named_any_size_any_alignment) {
    WK_REQUIRE_GPU();
    named_sweep<float>();
    named_sweep<double>();
    named_sweep<int>();
    named_sweep<unsigned>();
    named_sweep<long long>();
    named_sweep<__half>();
    named_sweep<__nv_bfloat16>();
}

// ---- the generic form: 64-bit int sums, a double accumulator for float, overflow of T ----------------
Test(device_reduce, generic_accumulators) {
    WK_REQUIRE_GPU();
    const long long n = wk_quick() ? 70001 : (1LL << 21) + 5;
    wk_rng rng = wk_rng_make(0x64);
    std::vector<int> h(n);
    long long want = 0;
    for (auto& v : h) {
        v = (int)wk_int(&rng, 1 << 20, 1 << 21);
        want += v;
    } // the sum passes 2^31
    int* din = wk_alloc<int>(n);
    wk_upload(din, h.data(), n);
    long long* d64 = wk_alloc<long long>(1);
    int* d32 = wk_alloc<int>(1);
    size_t bytes = 0;
    void* ws = workspace_for(
        &bytes, 0x5c, [&](void* w, size_t* b) { return warpkit::deviceReduce(din, d64, n, warpkit::Sum{}, 0, w, b); });
    wk_poison(d64, 1);
    wk_poison(d32, 1);
    WK_CUDA(warpkit::deviceReduce(din, d64, n, warpkit::Sum{}, 0, ws, &bytes));
    WK_LAUNCHED();
    WK_CUDA(cudaFree(ws));
    ws = workspace_for(&bytes, 0xff, [&](void* w, size_t* b) { return warpkit::deviceReduceSum(din, d32, n, w, b); });
    WK_CUDA(warpkit::deviceReduceSum(din, d32, n, ws, &bytes));
    WK_LAUNCHED();
    long long g64 = 0;
    int g32 = 0;
    wk_download(&g64, d64, 1);
    wk_download(&g32, d32, 1);
    cr_assert(g64 == want && want > 2147483647LL, "int -> long long sum %lld, want %lld", g64, want);
    cr_assert(g32 == (int)(unsigned)want, "int sum wraps as int: %d, want %d", g32, (int)(unsigned)want);
    WK_CUDA(cudaFree(ws));

    // float data summed in double: exact for these values (multiples of 2^-10 below 2^3).
    std::vector<float> hf(n);
    double wantD = 0;
    for (auto& v : hf) {
        v = (float)wk_int(&rng, -8192, 8192) / 1024.0f;
        wantD += v;
    }
    float* df = wk_alloc<float>(n + 1);
    wk_upload(df + 1, hf.data(), n);
    double* dd = wk_alloc<double>(1);
    wk_poison(dd, 1);
    ws = workspace_for(&bytes, 0x5c, [&](void* w, size_t* b) {
        return warpkit::deviceReduce(df + 1, dd, n, warpkit::Sum{}, 0.0, w, b);
    });
    WK_CUDA(warpkit::deviceReduce(df + 1, dd, n, warpkit::Sum{}, 0.0, ws, &bytes));
    WK_LAUNCHED();
    double gd = 0;
    wk_download(&gd, dd, 1);
    cr_assert(gd == wantD, "float -> double sum %.17g, want %.17g", gd, wantD);
    for (void* buf : {(void*)ws, (void*)din, (void*)d64, (void*)d32, (void*)df, (void*)dd}) WK_CUDA(cudaFree(buf));
}

// ---- a struct accumulator: sum and max in one pass (the one-launch reduction of any operator) --------
template <typename S, typename M> struct SumMax {
    S sum;
    M max;
};
struct SumMaxOp {
    template <typename S, typename M> __host__ __device__ SumMax<S, M> operator()(SumMax<S, M> a, M x) const {
        return {a.sum + (S)x, warpkit::Max{}(a.max, x)};
    }
    template <typename S, typename M>
    __host__ __device__ SumMax<S, M> operator()(SumMax<S, M> a, SumMax<S, M> b) const {
        return {a.sum + b.sum, warpkit::Max{}(a.max, b.max)};
    }
};

template <typename T, typename S> static void sum_max(wk_rng* rng) {
    typedef SumMax<S, T> Acc;
    const long long sizes[] = {0, 1, 31, 4099, wk_quick() ? 70001LL : (1LL << 22) + 7};
    Acc* out = wk_alloc<Acc>(2);
    for (long long n : sizes) {
        std::vector<T> h(n);
        double ref = 0, mx = -INFINITY;
        for (long long i = 0; i < n; ++i) {
            const double x = (double)wk_int(rng, -1000, 1000);
            h[i] = (T)x;
            ref += x;
            mx = x > mx ? x : mx;
        }
        T* in = wk_alloc<T>(n);
        wk_upload(in, h.data(), n);
        wk_poison(out, 2);
        const Acc init = {S(0), Arith<T>::lowest()};
        size_t bytes = 0;
        void* ws = workspace_for(&bytes, 0x5c, [&](void* w, size_t* b) {
            return warpkit::deviceReduce(in, out, n, SumMaxOp{}, init, w, b);
        });
        WK_CUDA(warpkit::deviceReduce(in, out, n, SumMaxOp{}, init, ws, &bytes));
        WK_CUDA(warpkit::deviceReduce(in, out + 1, n, SumMaxOp{}, init, ws, &bytes));
        WK_LAUNCHED();
        Acc got[2];
        wk_download(got, out, 2);
        const double wantMax = n ? mx : (double)Arith<T>::lowest();
        cr_assert((double)got[0].sum == ref && (double)got[0].max == wantMax,
                  "sum+max %s n=%lld: sum %.17g (want %.17g) max %g (want %g)", wk_type_name<T>(), n,
                  (double)got[0].sum, ref, (double)got[0].max, wantMax);
        // Field by field: the struct's padding is never written.
        cr_assert(same_bits(got[0].sum, got[1].sum) && same_bits(got[0].max, got[1].max),
                  "sum+max %s n=%lld: two runs differ", wk_type_name<T>(), n);
        WK_CUDA(cudaFree(in));
        WK_CUDA(cudaFree(ws));
    }
    WK_CUDA(cudaFree(out));
}

Test(device_reduce, struct_accumulator) {
    WK_REQUIRE_GPU();
    wk_rng rng = wk_rng_make(4242);
    sum_max<float, float>(&rng);
    sum_max<double, double>(&rng);
    sum_max<int, long long>(&rng);
}

// ---- NaN and inf ------------------------------------------------------------------------------------
template <typename T> static void nan_inf(void) {
    constexpr int V = warpkit::vectorElems<T>();
    const long long sizes[] = {1, 33, 4099, wk_quick() ? 70001LL : (1LL << 20) + 5};
    wk_rng rng = wk_rng_make(0x4a + sizeof(T));
    T* din = wk_alloc<T>((size_t)sizes[3] + V);
    T* dout = wk_alloc<T>(3);
    size_t bytes = 0;
    void* ws = workspace_for(
        &bytes, 0x5c, [&](void* w, size_t* b) { return warpkit::deviceReduceSum(din, dout, sizes[3], w, b); },
        [&](void* w, size_t* b) { return warpkit::deviceReduceMax(din, dout, sizes[3], w, b); },
        [&](void* w, size_t* b) { return warpkit::deviceReduceMin(din, dout, sizes[3], w, b); });
    // kind 0: one NaN; 1: one +inf; 2: +inf and -inf; 3: every element -inf
    for (long long n : sizes)
        for (int kind = 0; kind < 4; ++kind)
            for (int where = 0; where < 3; ++where) { // first, last, random
                std::vector<T> h(n);
                for (auto& v : h) v = wk_from_double<T>((double)wk_int(&rng, -4, 4));
                const long long a = where == 0 ? 0 : where == 1 ? n - 1 : wk_int(&rng, 0, n - 1);
                const long long b = n > 1 ? (a + 1 + wk_int(&rng, 0, n - 2)) % n : a;
                if (kind == 0) h[a] = wk_from_double<T>(NAN);
                if (kind == 1) h[a] = wk_from_double<T>(INFINITY);
                if (kind == 2) {
                    h[a] = wk_from_double<T>(INFINITY);
                    h[b] = wk_from_double<T>(-INFINITY);
                }
                if (kind == 3)
                    for (auto& v : h) v = wk_from_double<T>(-INFINITY);
                const int off = (int)(n % V);
                wk_upload(din + off, h.data(), n);
                wk_poison(dout, 3);
                WK_CUDA(warpkit::deviceReduceSum(din + off, dout, n, ws, &bytes));
                WK_CUDA(warpkit::deviceReduceMax(din + off, dout + 1, n, ws, &bytes));
                WK_CUDA(warpkit::deviceReduceMin(din + off, dout + 2, n, ws, &bytes));
                WK_LAUNCHED();
                T got[3];
                wk_download(got, dout, 3);
                const double s = wk_to_double(got[0]), mx = wk_to_double(got[1]), mn = wk_to_double(got[2]);
                const bool twoInf = kind == 2 && n > 1;
                bool ok;
                if (kind == 0) ok = isnan(s) && isnan(mx) && isnan(mn);
                else if (kind == 1) ok = s == INFINITY && mx == INFINITY && mn >= -4 && mn <= (n == 1 ? INFINITY : 4);
                else if (kind == 2) ok = twoInf ? (isnan(s) && mx == INFINITY && mn == -INFINITY) : (s == -INFINITY);
                else ok = s == -INFINITY && mx == -INFINITY && mn == -INFINITY;
                cr_assert(ok,
                          "%s n=%lld kind %d (NaN / inf / inf and -inf / all -inf) at %lld, %lld: sum %g max %g min %g",
                          wk_type_name<T>(), n, kind, a, b, s, mx, mn);
            }
    for (void* buf : {(void*)din, (void*)dout, (void*)ws}) WK_CUDA(cudaFree(buf));
}

Test(device_reduce, nan_inf) {
    WK_REQUIRE_GPU();
    nan_inf<float>();
    nan_inf<double>();
    nan_inf<__half>();
}

// ---- determinism: random reals, many runs, other buffers at the same alignment -----------------------
Test(device_reduce, bitwise_deterministic) {
    WK_REQUIRE_GPU();
    const long long n = wk_quick() ? 100003 : (1LL << 23) + 11;
    wk_rng rng = wk_rng_make(0xde7);
    std::vector<float> h(n);
    long double ref = 0, asum = 0;
    for (auto& v : h) {
        v = (float)wk_uniform(&rng, -1.0, 1.0);
        ref += v;
        asum += fabsl((long double)v);
    }
    float* a = wk_alloc<float>(n + 4);
    float* b = wk_alloc<float>(n + 4);
    wk_upload(a + 1, h.data(), n);
    wk_upload(b + 1, h.data(), n); // another address, the same alignment modulo 16 bytes
    const int runs = 6;
    float* out = wk_alloc<float>(runs);
    size_t bytes = 0;
    void* ws1 =
        workspace_for(&bytes, 0x00, [&](void* w, size_t* s) { return warpkit::deviceReduceSum(a + 1, out, n, w, s); });
    void* ws2 =
        workspace_for(&bytes, 0xff, [&](void* w, size_t* s) { return warpkit::deviceReduceSum(a + 1, out, n, w, s); });
    wk_poison(out, runs);
    for (int r = 0; r < runs; ++r)
        WK_CUDA(warpkit::deviceReduceSum((r % 2 ? b : a) + 1, out + r, n, r % 3 ? ws1 : ws2, &bytes));
    WK_LAUNCHED();
    float got[runs];
    wk_download(got, out, runs);
    for (int r = 1; r < runs; ++r)
        cr_assert(same_bits(got[0], got[r]), "run %d: %.9g differs from run 0: %.9g", r, got[r], got[0]);
    const double tol = sum_depth<float>(n) * 0x1p-24 * (double)asum;
    cr_assert(fabs((double)got[0] - (double)ref) <= tol, "sum %.9g, want %.9Lg (tol %g)", got[0], ref, tol);
    for (void* buf : {(void*)a, (void*)b, (void*)out, (void*)ws1, (void*)ws2}) WK_CUDA(cudaFree(buf));
}

// ---- the workspace may hold anything, at any alignment ---------------------------------------------
Test(device_reduce, garbage_workspace) {
    WK_REQUIRE_GPU();
    const long long n = wk_quick() ? 50001 : (1LL << 22) + 3;
    wk_rng rng = wk_rng_make(0x9a5);
    std::vector<int> h(n);
    long long want = 0;
    for (auto& v : h) {
        v = (int)wk_int(&rng, -100, 100);
        want += v;
    }
    int* din = wk_alloc<int>(n);
    wk_upload(din, h.data(), n);
    long long* out = wk_alloc<long long>(1);
    const int blocks = grid_blocks<int, long long, long long, warpkit::Sum>(n);
    size_t bytes = 0;
    WK_CUDA(warpkit::deviceReduce(din, out, n, warpkit::Sum{}, 0, nullptr, &bytes));
    char* raw = wk_alloc<char>(bytes + 16);
    std::vector<unsigned char> junk(bytes + 16);
    for (int pattern = 0; pattern < 8; ++pattern)
        for (int shift = 0; shift < 4; ++shift) { // the workspace at byte offsets 0, 1, 3, 8
            char* ws = raw + (shift == 0 ? 0 : shift == 1 ? 1 : shift == 2 ? 3 : 8);
            for (auto& c : junk)
                c = pattern == 0 ? 0x00 : pattern == 1 ? 0xff : pattern == 2 ? 0xa5 : (unsigned char)wk_next(&rng);
            WK_CUDA(cudaMemcpy(raw, junk.data(), junk.size(), cudaMemcpyHostToDevice));
            // Patterns 4..7: the arrival word of another call caught part way, almost done, done:
            // any of these read as this call's count would elect a wrong last block.
            if (pattern >= 4) {
                const unsigned long long other = (wk_next(&rng) & warpkit::detail::kArrivalTagMask) | 1;
                const unsigned long long counts[4] = {0, 7, (unsigned long long)blocks - 1, (unsigned long long)blocks};
                const unsigned long long word = other << warpkit::detail::kArrivalCountBits | counts[pattern - 4];
                WK_CUDA(cudaMemcpy(warpkit::detail::reduceWorkspace<long long>(ws).arrivals, &word, 8,
                                   cudaMemcpyHostToDevice));
            }
            wk_poison(out, 1);
            WK_CUDA(warpkit::deviceReduce(din, out, n, warpkit::Sum{}, 0, ws, &bytes));
            WK_LAUNCHED();
            long long got = 0;
            wk_download(&got, out, 1);
            cr_assert(got == want, "garbage pattern %d, workspace offset %d: sum %lld, want %lld", pattern, shift, got,
                      want);
        }
    for (void* buf : {(void*)raw, (void*)din, (void*)out}) WK_CUDA(cudaFree(buf));
}

// ---- two streams, two workspaces, launches in flight at once ------------------------------------------
Test(device_reduce, two_streams) {
    WK_REQUIRE_GPU();
    const long long n = wk_quick() ? 60007 : (1LL << 22) + 1;
    const int reps = wk_quick() ? 4 : 16;
    wk_rng rng = wk_rng_make(0x257);
    std::vector<float> h1(n), h2(n);
    double want1 = 0, want2 = -INFINITY;
    for (long long i = 0; i < n; ++i) {
        h1[i] = (float)wk_int(&rng, -8, 8);
        h2[i] = (float)wk_int(&rng, -1000000, 1000000);
        want1 += h1[i];
        want2 = std::max(want2, (double)h2[i]);
    }
    float *x1 = wk_alloc<float>(n), *x2 = wk_alloc<float>(n + 3);
    wk_upload(x1, h1.data(), n);
    wk_upload(x2 + 3, h2.data(), n);
    float *o1 = wk_alloc<float>(reps), *o2 = wk_alloc<float>(reps), *o3 = wk_alloc<float>(reps);
    wk_poison(o1, reps);
    wk_poison(o2, reps);
    wk_poison(o3, reps);
    cudaStream_t s1, s2;
    WK_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    WK_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    size_t b1 = 0, b2 = 0;
    void* w1 = workspace_for(&b1, 0x11, [&](void* w, size_t* b) { return warpkit::deviceReduceSum(x1, o1, n, w, b); });
    void* w2 = workspace_for(
        &b2, 0x22, [&](void* w, size_t* b) { return warpkit::deviceReduceSum(x2 + 3, o2, n, w, b); },
        [&](void* w, size_t* b) { return warpkit::deviceReduceMax(x2 + 3, o3, n, w, b); });
    // The same kernel on both streams (one float sum each), and a max behind it on stream 2.
    for (int r = 0; r < reps; ++r) {
        WK_CUDA(warpkit::deviceReduceSum(x1, o1 + r, n, w1, &b1, s1));
        WK_CUDA(warpkit::deviceReduceSum(x2 + 3, o2 + r, n, w2, &b2, s2));
        WK_CUDA(warpkit::deviceReduceMax(x2 + 3, o3 + r, n, w2, &b2, s2));
    }
    WK_CUDA(cudaStreamSynchronize(s1));
    WK_CUDA(cudaStreamSynchronize(s2));
    WK_LAUNCHED();
    std::vector<float> g1(reps), g2(reps), g3(reps);
    wk_download(g1.data(), o1, reps);
    wk_download(g2.data(), o2, reps);
    wk_download(g3.data(), o3, reps);
    for (int r = 0; r < reps; ++r) {
        cr_assert(g1[r] == (float)want1, "stream 1 launch %d: sum %.9g, want %.9g", r, g1[r], want1);
        cr_assert(same_bits(g2[r], g2[0]), "stream 2 launch %d: sum %.9g, launch 0 gave %.9g", r, g2[r], g2[0]);
        cr_assert(g3[r] == (float)want2, "stream 2 launch %d: max %.9g, want %.9g", r, g3[r], want2);
    }
    WK_CUDA(cudaStreamDestroy(s1));
    WK_CUDA(cudaStreamDestroy(s2));
    for (void* buf : {(void*)w1, (void*)w2, (void*)x1, (void*)x2, (void*)o1, (void*)o2, (void*)o3})
        WK_CUDA(cudaFree(buf));
}

// ---- a captured CUDA graph replays with the tag fixed in its kernel node --------------------------------
Test(device_reduce, graph_replays) {
    WK_REQUIRE_GPU();
    const long long n = 300007;
    wk_rng rng = wk_rng_make(0x6a);
    int* din = wk_alloc<int>(n);
    int* out = wk_alloc<int>(1);
    size_t bytes = 0;
    void* ws =
        workspace_for(&bytes, 0x77, [&](void* w, size_t* b) { return warpkit::deviceReduceSum(din, out, n, w, b); });
    cudaStream_t s;
    WK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    WK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    WK_CUDA(warpkit::deviceReduceSum(din, out, n, ws, &bytes, s));
    WK_CUDA(cudaStreamEndCapture(s, &graph));
    WK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    std::vector<int> h(n);
    for (int replay = 0; replay < 4; ++replay) {
        long long want = 0;
        for (auto& v : h) {
            v = (int)wk_int(&rng, -50, 50 + replay);
            want += v;
        }
        wk_upload(din, h.data(), n);
        wk_poison(out, 1);
        WK_CUDA(cudaGraphLaunch(exec, s));
        WK_CUDA(cudaStreamSynchronize(s));
        int got = 0;
        wk_download(&got, out, 1);
        cr_assert(got == (int)want, "graph replay %d: sum %d, want %lld", replay, got, want);
    }
    WK_CUDA(cudaGraphExecDestroy(exec));
    WK_CUDA(cudaGraphDestroy(graph));
    WK_CUDA(cudaStreamDestroy(s));
    for (void* buf : {(void*)ws, (void*)din, (void*)out}) WK_CUDA(cudaFree(buf));
}

// ---- n > 2^31 (64-bit indices): __half, 4 GB -----------------------------------------------------------
__global__ void fill_halves(__half* p, unsigned long long n, unsigned long long low) {
    WARPKIT_GRID_STRIDE_LOOP(i, n) { p[i] = __int2half_rn(i == n - 1 ? 1000 : i == low ? -2000 : (int)(i % 7) - 3); }
}

static long long pattern7(unsigned long long n) { // sum of (i % 7) - 3 over [0, n)
    const long long r = (long long)(n % 7);
    return r * (r - 1) / 2 - 3 * r;
}

Test(device_reduce, huge_n_64bit) {
    WK_REQUIRE_GPU();
    const unsigned long long n = wk_quick() ? (1ull << 22) + 9 : (1ull << 31) + 9;
    const unsigned long long low = n - 6; // the minimum, past 2^31 in the full run
    __half* p = NULL;
    if (cudaMalloc((void**)&p, n * sizeof(__half)) != cudaSuccess) {
        cudaGetLastError();
        cr_skip_test("needs %llu MB of GPU memory", (unsigned long long)(n * sizeof(__half) >> 20));
    }
    fill_halves<<<1024, 256>>>(p, n, low);
    WK_LAUNCHED();
    __half* oh = wk_alloc<__half>(2);
    double* od = wk_alloc<double>(1);
    size_t bytes = 0;
    void* ws = workspace_for(
        &bytes, 0x5c,
        [&](void* w, size_t* b) { return warpkit::deviceReduce(p, od, (long long)n, warpkit::Sum{}, 0.0, w, b); },
        [&](void* w, size_t* b) { return warpkit::deviceReduceMax(p, oh, (long long)n, w, b); },
        [&](void* w, size_t* b) { return warpkit::deviceReduceMin(p, oh, (long long)n, w, b); });
    const long long base = pattern7(n) + (1000 - ((long long)((n - 1) % 7) - 3)) + (-2000 - ((long long)(low % 7) - 3));
    for (int shift = 0; shift < 2; ++shift) { // the whole array, then from element 1 (misaligned)
        const long long m = (long long)n - shift;
        wk_poison(oh, 2);
        wk_poison(od, 1);
        WK_CUDA(warpkit::deviceReduceMax(p + shift, oh, m, ws, &bytes));
        WK_CUDA(warpkit::deviceReduceMin(p + shift, oh + 1, m, ws, &bytes));
        WK_CUDA(warpkit::deviceReduce(p + shift, od, m, warpkit::Sum{}, 0.0, ws, &bytes));
        WK_LAUNCHED();
        __half g[2];
        double s = 0;
        wk_download(g, oh, 2);
        wk_download(&s, od, 1);
        const double want = (double)(base - (shift ? -3 : 0));
        cr_assert(wk_to_double(g[0]) == 1000 && wk_to_double(g[1]) == -2000 && s == want,
                  "n=%lld: max %g min %g sum %.17g (want 1000, -2000, %.17g)", m, wk_to_double(g[0]),
                  wk_to_double(g[1]), s, want);
    }
    for (void* buf : {(void*)ws, (void*)p, (void*)oh, (void*)od}) WK_CUDA(cudaFree(buf));
}

// ---- bad arguments: cudaErrorInvalidValue, and nothing written --------------------------------------------
Test(device_reduce, bad_arguments) {
    WK_REQUIRE_GPU();
    const long long n = 1000;
    float* in = wk_alloc<float>(n);
    WK_CUDA(cudaMemset(in, 0, n * sizeof(float)));
    float* out = wk_alloc<float>(1);
    size_t need = 0;
    void* ws =
        workspace_for(&need, 0x5c, [&](void* w, size_t* b) { return warpkit::deviceReduceSum(in, out, n, w, b); });
    auto untouched = [&](const char* what) {
        WK_CUDA(cudaDeviceSynchronize());
        unsigned bits = 0;
        WK_CUDA(cudaMemcpy(&bits, out, 4, cudaMemcpyDeviceToHost));
        cr_assert(bits == 0xa5a5a5a5u, "%s: the output was written (0x%08x)", what, bits);
        WK_CUDA(cudaGetLastError());
    };
    wk_poison(out, 1);
    size_t bytes = need;
    cr_expect(warpkit::deviceReduceSum(in, out, -1, ws, &bytes) == cudaErrorInvalidValue, "n < 0");
    cr_expect(warpkit::deviceReduceSum((const float*)nullptr, out, n, ws, &bytes) == cudaErrorInvalidValue, "null in");
    cr_expect(warpkit::deviceReduceSum(in, (float*)nullptr, n, ws, &bytes) == cudaErrorInvalidValue, "null out");
    cr_expect(warpkit::deviceReduceSum(in, (float*)nullptr, 0, ws, &bytes) == cudaErrorInvalidValue, "null out, n = 0");
    cr_expect(warpkit::deviceReduceSum(in, out, n, ws, nullptr) == cudaErrorInvalidValue, "null workspaceBytes");
    cr_expect(warpkit::deviceReduceSum(in, out, n, nullptr, nullptr) == cudaErrorInvalidValue,
              "null workspaceBytes, query");
    bytes = need - 1;
    cr_expect(warpkit::deviceReduceSum(in, out, n, ws, &bytes) == cudaErrorInvalidValue, "workspace one byte short");
    bytes = 0;
    cr_expect(warpkit::deviceReduceMax(in, out, n, ws, &bytes) == cudaErrorInvalidValue, "workspace of 0 bytes");
    bytes = need;
    cr_expect(warpkit::deviceReduce(in, out, -5, warpkit::Min{}, INFINITY, ws, &bytes) == cudaErrorInvalidValue,
              "generic, n < 0");
    cr_expect(warpkit::deviceReduce((const float*)nullptr, out, 1, warpkit::Min{}, INFINITY, ws, &bytes) ==
                  cudaErrorInvalidValue,
              "generic, null in");
    // A size query writes the size only, even with arguments a real call would refuse.
    bytes = 12345;
    cr_expect(warpkit::deviceReduceSum(in, out, -1, nullptr, &bytes) == cudaErrorInvalidValue && bytes == 12345,
              "query with n < 0 must fail and leave the size alone");
    cr_expect(warpkit::deviceReduceSum((const float*)nullptr, (float*)nullptr, n, nullptr, &bytes) == cudaSuccess &&
                  bytes == need,
              "query: %zu bytes, want %zu", bytes, need);
    cr_expect(warpkit::deviceReduceSum(in, out, n, nullptr, &bytes) == cudaSuccess && bytes == need, "query");
    untouched("bad arguments and size queries");
    // null in with n = 0 is valid: out = the identity (-0.0).
    bytes = need;
    WK_CUDA(warpkit::deviceReduceSum((const float*)nullptr, out, 0, ws, &bytes));
    WK_LAUNCHED();
    unsigned bits = 0;
    WK_CUDA(cudaMemcpy(&bits, out, 4, cudaMemcpyDeviceToHost));
    cr_assert(bits == 0x80000000u, "n = 0: out 0x%08x, want -0.0", bits);
    for (void* buf : {(void*)ws, (void*)in, (void*)out}) WK_CUDA(cudaFree(buf));
}

// Host-only (runs without a GPU): the argument checks come before any device call, and a valid
// call with no device returns an error instead of crashing.
Test(device_reduce, host_checks) {
    size_t bytes = 777;
    float* fake = (float*)(size_t)0x1000;
    cr_expect(warpkit::deviceReduceSum(fake, fake, -1, nullptr, &bytes) == cudaErrorInvalidValue && bytes == 777);
    cr_expect(warpkit::deviceReduceSum(fake, fake, 10, fake, nullptr) == cudaErrorInvalidValue);
    cr_expect(warpkit::deviceReduce(fake, fake, -1, warpkit::Max{}, -INFINITY, fake, &bytes) == cudaErrorInvalidValue);
    if (!wk_has_gpu()) {
        cr_expect(warpkit::deviceReduceSum(fake, fake, 10, nullptr, &bytes) != cudaSuccess && bytes == 777,
                  "without a GPU the size query must fail and leave the size alone");
    }
    // Distinct calls get distinct, non-zero 48-bit tags.
    unsigned long long t[64];
    for (auto& x : t) x = warpkit::detail::arrivalTag();
    for (int i = 0; i < 64; ++i) {
        cr_expect(t[i] != 0 && t[i] <= warpkit::detail::kArrivalTagMask, "tag %d: 0x%llx", i, t[i]);
        for (int j = 0; j < i; ++j) cr_expect(t[i] != t[j], "tags %d and %d are equal", i, j);
    }
}
