// Tests of include/warpkit/grid.cuh: WARPKIT_GRID_STRIDE_LOOP, threadAccumulate /
// gridAccumulate and occupancyGridSize.
//
// Accumulation: integer-valued data (exact in every type, and in a float accumulator), so the
// per-thread partials summed on the host must equal the reference exactly: an element read twice
// or skipped changes the sum. The elements around [p, p + n) are sentinels (NaN, or 2^30 for
// integers), so a read outside the range shows up in the sum and the max.
#include "common.cuh"
#include <warpkit/grid.cuh>

#include <vector>

using warpkit::detail::Arith;

// ---- kernels -------------------------------------------------------------------------------
template <int Loads, typename T, typename S>
__global__ void accumulate_kernel(const T* p, unsigned long long n, S* sums, T* maxes) {
    const unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    sums[t] = warpkit::gridAccumulate<Loads>(p, n, S(0), warpkit::Sum{});
    maxes[t] = warpkit::gridAccumulate<Loads>(p, n, Arith<T>::from_acc(Arith<T>::lowest()), warpkit::Max{});
}

// Explicit numbering: thread t of the grid acts as number (threads - 1 - t).
template <typename T, typename S>
__global__ void reversed_kernel(const T* p, unsigned long long n, S* sums) {
    const unsigned long long threads = (unsigned long long)gridDim.x * blockDim.x;
    const unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    sums[t] = warpkit::threadAccumulate<2>(p, n, S(0), warpkit::Sum{}, threads - 1 - t, threads);
}

// ---- host side -----------------------------------------------------------------------------
template <typename T> static T sentinel(void) {
    if constexpr (Arith<T>::is_float) return warpkit::detail::quietNaN<T>();
    else return T(1 << 30);
}

struct Config { int blocks, threads; };

template <typename T> struct Case {
    std::vector<T> host; // the whole buffer, sentinels included
    T* dev;
    size_t offset;       // p = dev + offset
};

// Runs one (Loads, T, S) over every size, misalignment and launch shape.
template <int Loads, typename T, typename S> static void sweep(const std::vector<unsigned long long>& sizes) {
    constexpr int V = warpkit::vectorElems<T>();
    const Config configs[] = {{1, 1}, {1, 3}, {2, 32}, {7, 64}, {3, 256}};
    wk_rng rng = wk_rng_make(0x6e1d + Loads * 131 + sizeof(T) * 7 + sizeof(S));
    const int maxThreads = 7 * 64 > 3 * 256 ? 7 * 64 : 3 * 256;
    S* dsum = wk_alloc<S>(maxThreads);
    T* dmax = wk_alloc<T>(maxThreads);
    std::vector<S> hsum(maxThreads);
    std::vector<T> hmax(maxThreads);
    for (unsigned long long n : sizes) {
        const size_t total = n + 3 * V + 16;
        std::vector<T> buf(total);
        T* dbuf = wk_alloc<T>(total);
        for (int off = 0; off < V; ++off) {
            if (wk_quick() && off != 0 && off != 1 && off != V - 1) continue;
            const size_t start = V + off; // dbuf is 256-byte aligned, so p % 16 == off * sizeof(T)
            double refSum = 0, refMax = -INFINITY;
            for (size_t i = 0; i < total; ++i) {
                if (i >= start && i < start + n) {
                    double x = (double)wk_int(&rng, -8, 8);
                    buf[i] = wk_from_double<T>(x);
                    refSum += x;
                    refMax = x > refMax ? x : refMax;
                } else {
                    buf[i] = sentinel<T>();
                }
            }
            wk_upload(dbuf, buf.data(), total);
            for (const Config& c : configs) {
                const int nt = c.blocks * c.threads;
                wk_poison(dsum, nt);
                wk_poison(dmax, nt);
                accumulate_kernel<Loads><<<c.blocks, c.threads>>>(dbuf + start, n, dsum, dmax);
                WK_LAUNCHED();
                wk_download(hsum.data(), dsum, nt);
                wk_download(hmax.data(), dmax, nt);
                double gotSum = 0, gotMax = -INFINITY;
                for (int t = 0; t < nt; ++t) {
                    gotSum += wk_to_double(hsum[t]);
                    double m = wk_to_double(hmax[t]);
                    gotMax = (isnan(m) || isnan(gotMax)) ? NAN : (m > gotMax ? m : gotMax);
                }
                cr_assert(gotSum == refSum && (gotMax == refMax || (n == 0 && gotMax == -INFINITY) ||
                                               (n == 0 && !Arith<T>::is_float)),
                          "gridAccumulate<%d> %s->%s n=%llu misaligned by %d elements, <<<%d,%d>>>: "
                          "sum %.17g (want %.17g), max %.17g (want %.17g), seed 0x%llx",
                          Loads, wk_type_name<T>(), wk_type_name<S>(), n, off, c.blocks, c.threads,
                          gotSum, refSum, gotMax, refMax, (unsigned long long)wk_seed());
                if (n == 0 && !Arith<T>::is_float)
                    cr_assert(gotMax == (double)Arith<T>::lowest(), "n=0: max must be the identity");
            }
            // Any numbering of the threads covers the range exactly once.
            reversed_kernel<<<3, 64>>>(dbuf + start, n, dsum);
            WK_LAUNCHED();
            wk_download(hsum.data(), dsum, 3 * 64);
            double gotSum = 0;
            for (int t = 0; t < 3 * 64; ++t) gotSum += wk_to_double(hsum[t]);
            cr_assert(gotSum == refSum, "threadAccumulate (reversed numbering) %s n=%llu off %d: %.17g want %.17g",
                      wk_type_name<T>(), n, off, gotSum, refSum);
        }
        WK_CUDA(cudaFree(dbuf));
    }
    WK_CUDA(cudaFree(dsum));
    WK_CUDA(cudaFree(dmax));
}

static std::vector<unsigned long long> sweep_sizes(void) {
    std::vector<unsigned long long> s = {0, 1, 2, 3, 5, 7, 8, 13, 16, 31, 97, 1021, 4099};
    if (!wk_quick()) { s.push_back(65537); s.push_back((1u << 20) + 3); }
    return s;
}

Test(grid, accumulate_any_alignment_any_size) {
    WK_REQUIRE_GPU();
    const std::vector<unsigned long long> sizes = sweep_sizes();
    sweep<4, float, float>(sizes);
    sweep<1, float, double>(sizes);
    sweep<7, float, float>(sizes);
    sweep<4, double, double>(sizes);
    sweep<4, int, long long>(sizes);
    sweep<3, int, int>(sizes);
    sweep<4, __half, float>(sizes);
    sweep<2, __nv_bfloat16, float>(sizes);
}

// NaN and inf anywhere in the range reach the sum and the max.
template <typename T> static void nan_inf(void) {
    constexpr int V = warpkit::vectorElems<T>();
    const unsigned long long n = 1021;
    wk_rng rng = wk_rng_make(77 + sizeof(T));
    T* dbuf = wk_alloc<T>(n + 2 * V);
    float* dsum = wk_alloc<float>(4 * 128);
    T* dmax = wk_alloc<T>(4 * 128);
    std::vector<float> hsum(4 * 128);
    std::vector<T> hmax(4 * 128);
    std::vector<T> buf(n);
    const double specials[3][2] = {{NAN, 0}, {INFINITY, 0}, {INFINITY, -INFINITY}};
    for (int kind = 0; kind < 3; ++kind) {
        for (int off = 0; off < V; ++off) {
            for (unsigned long long i = 0; i < n; ++i) buf[i] = wk_from_double<T>((double)wk_int(&rng, -4, 4));
            const unsigned long long a = (unsigned long long)wk_int(&rng, 0, n - 1);
            const unsigned long long b = (a + 1 + (unsigned long long)wk_int(&rng, 0, n - 2)) % n;
            buf[a] = wk_from_double<T>(specials[kind][0]);
            if (kind == 2) buf[b] = wk_from_double<T>(specials[kind][1]);
            wk_upload(dbuf + off, buf.data(), n);
            wk_poison(dsum, 4 * 128);
            wk_poison(dmax, 4 * 128);
            accumulate_kernel<4><<<4, 128>>>(dbuf + off, n, dsum, dmax);
            WK_LAUNCHED();
            wk_download(hsum.data(), dsum, 4 * 128);
            wk_download(hmax.data(), dmax, 4 * 128);
            double s = 0, m = -INFINITY;
            for (int t = 0; t < 4 * 128; ++t) {
                s += hsum[t];
                double x = wk_to_double(hmax[t]);
                m = (isnan(x) || isnan(m)) ? NAN : (x > m ? x : m);
            }
            const bool ok = kind == 0 ? (isnan(s) && isnan(m))
                          : kind == 1 ? (s == INFINITY && m == INFINITY)
                                      : (isnan(s) && m == INFINITY);
            cr_assert(ok, "%s kind %d (NaN / inf / inf-inf) at %llu, %llu, offset %d: sum %g max %g",
                      wk_type_name<T>(), kind, a, b, off, s, m);
        }
    }
    WK_CUDA(cudaFree(dbuf));
    WK_CUDA(cudaFree(dsum));
    WK_CUDA(cudaFree(dmax));
}

Test(grid, accumulate_nan_inf) {
    WK_REQUIRE_GPU();
    nan_inf<float>();
    nan_inf<double>();
    nan_inf<__half>();
    nan_inf<__nv_bfloat16>();
}

// ---- 64-bit indices: n > 2^31 ------------------------------------------------------------------
__global__ void fill_pattern(int* p, unsigned long long n, unsigned long long* visits) {
    unsigned long long mine = 0;
    WARPKIT_GRID_STRIDE_LOOP(i, n) {
        p[i] = i == n - 1 ? (1 << 29) : (int)(i % 1000) - 499;
        ++mine;
    }
    atomicAdd(visits, mine);
}

__global__ void huge_kernel(const int* p, unsigned long long n, long long* sums, int* maxes) {
    const unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    sums[t] = warpkit::gridAccumulate<4>(p, n, 0LL, warpkit::Sum{});
    maxes[t] = warpkit::gridAccumulate<4>(p, n, Arith<int>::lowest(), warpkit::Max{});
}

static long long pattern_sum(unsigned long long n) { // sum of (i % 1000) - 499 over [0, n)
    const long long q = (long long)(n / 1000), r = (long long)(n % 1000);
    return q * 500 + r * (r - 1) / 2 - 499 * r;
}

Test(grid, huge_n_64bit_indices) {
    WK_REQUIRE_GPU();
    const unsigned long long n = wk_quick() ? (1ull << 22) + 9 : (1ull << 31) + 9; // 8.6 GB of int
    size_t freeB = 0, totalB = 0;
    WK_CUDA(cudaMemGetInfo(&freeB, &totalB));
    cr_assert(freeB > n * sizeof(int) + (256u << 20), "needs %llu MB of GPU memory, %zu free",
              (unsigned long long)(n * sizeof(int) >> 20), freeB >> 20);
    int* p = wk_alloc<int>(n);
    unsigned long long* visits = wk_alloc<unsigned long long>(1);
    WK_CUDA(cudaMemset(visits, 0, sizeof(unsigned long long)));
    fill_pattern<<<264, 512>>>(p, n, visits);
    WK_LAUNCHED();
    unsigned long long hv = 0;
    wk_download(&hv, visits, 1);
    cr_assert(hv == n, "WARPKIT_GRID_STRIDE_LOOP visited %llu indices, want %llu", hv, n);

    const int blocks = 132 * 4, threads = 256, nt = blocks * threads;
    long long* sums = wk_alloc<long long>(nt);
    int* maxes = wk_alloc<int>(nt);
    std::vector<long long> hs(nt);
    std::vector<int> hm(nt);
    // whole range, then misaligned by one element (p + 1, n - 1): the last element is 2^29
    for (int shift = 0; shift < 2; ++shift) {
        wk_poison(sums, nt);
        wk_poison(maxes, nt);
        huge_kernel<<<blocks, threads>>>(p + shift, n - shift, sums, maxes);
        WK_LAUNCHED();
        wk_download(hs.data(), sums, nt);
        wk_download(hm.data(), maxes, nt);
        long long s = 0;
        int m = Arith<int>::lowest();
        for (int t = 0; t < nt; ++t) { s += hs[t]; m = hm[t] > m ? hm[t] : m; }
        const long long want = pattern_sum(n - 1) + (1 << 29) - (shift ? -499 : 0);
        cr_assert(s == want && m == (1 << 29), "n=%llu shift %d: sum %lld (want %lld), max %d",
                  n - shift, shift, s, want, m);
    }
    // n = 0 with a null pointer reads nothing and returns the identity.
    wk_poison(sums, nt);
    huge_kernel<<<2, 64>>>(nullptr, 0, sums, maxes);
    WK_LAUNCHED();
    wk_download(hs.data(), sums, 128);
    wk_download(hm.data(), maxes, 128);
    for (int t = 0; t < 128; ++t)
        cr_assert(hs[t] == 0 && hm[t] == Arith<int>::lowest(), "n=0: thread %d got %lld / %d", t, hs[t], hm[t]);
    WK_CUDA(cudaFree(p));
    WK_CUDA(cudaFree(visits));
    WK_CUDA(cudaFree(sums));
    WK_CUDA(cudaFree(maxes));
}

// ---- occupancyGridSize ---------------------------------------------------------------------------
Test(grid, occupancy_grid_size) {
    WK_REQUIRE_GPU();
    auto kernel = accumulate_kernel<4, float, float>;
    int sms = 0, perSm = 0, dev = 0;
    WK_CUDA(cudaGetDevice(&dev));
    WK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    WK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, 256, 0));
    int blocks = -1;
    WK_CUDA(warpkit::occupancyGridSize(&blocks, kernel, 256));
    cr_expect(blocks == perSm * sms && blocks >= sms, "blocks %d, want %d x %d", blocks, perSm, sms);
    WK_CUDA(warpkit::occupancyGridSize(&blocks, kernel, 256, 0, 5));
    cr_expect(blocks == 5, "capped at 5: got %d", blocks);
    WK_CUDA(warpkit::occupancyGridSize(&blocks, kernel, 128, 4096, 1ll << 40));
    cr_expect(blocks >= sms, "with 4 KB of dynamic smem: %d", blocks);
    blocks = -1;
    cr_expect(warpkit::occupancyGridSize(&blocks, kernel, 0) == cudaErrorInvalidValue && blocks == -1);
    cr_expect(warpkit::occupancyGridSize(&blocks, kernel, 4096) != cudaSuccess && blocks == -1,
              "4096 threads per block cannot run");
    cr_expect(warpkit::occupancyGridSize(&blocks, kernel, 256, (size_t)1 << 30) != cudaSuccess && blocks == -1,
              "1 GB of shared memory cannot run");
    cudaGetLastError(); // clear any error the refused queries left behind
}

// A kernel whose own limit (128 threads) is below the device's: a bigger block must be refused, with
// the error its launch returns, and *blocks left alone.
__global__ void __launch_bounds__(128) bounded_kernel(int* out) { out[threadIdx.x] = (int)threadIdx.x; }

Test(grid, occupancy_launch_bounds) {
    WK_REQUIRE_GPU();
    int blocks = -1;
    WK_CUDA(warpkit::occupancyGridSize(&blocks, bounded_kernel, 128));
    cr_expect(blocks >= 1, "128 threads (the bound) must be accepted: %d", blocks);
    WK_CUDA(warpkit::occupancyGridSize(&blocks, bounded_kernel, 96));
    cr_expect(blocks >= 1, "96 threads must be accepted: %d", blocks);
    // Block sizes past the kernel's bound: the runtime refuses such a launch with cudaErrorInvalidValue
    // (its attribute maxThreadsPerBlock is the bound); occupancyGridSize must refuse them the same way.
    // The attribute stands in for a failing launch, which compute-sanitizer would report as an error.
    cudaFuncAttributes attr;
    WK_CUDA(cudaFuncGetAttributes(&attr, bounded_kernel));
    cr_expect(attr.maxThreadsPerBlock == 128, "the kernel's bound: %d", attr.maxThreadsPerBlock);
    for (int threads : {129, 256, 1024, 4096}) {
        blocks = -1;
        const cudaError_t got = warpkit::occupancyGridSize(&blocks, bounded_kernel, threads);
        cr_expect(got == cudaErrorInvalidValue && blocks == -1, "%d threads: occupancyGridSize returned %s (%d)",
                  threads, cudaGetErrorName(got), blocks);
    }
}

// Host-only (runs in CI without a GPU): argument checks, the vector width, and a clean error
// (not a crash, *blocks untouched) when there is no device.
Test(grid, host_checks) {
    static_assert(warpkit::vectorElems<float>() == 4 && warpkit::vectorElems<double>() == 2 &&
                      warpkit::vectorElems<int>() == 4 && warpkit::vectorElems<__half>() == 8 &&
                      warpkit::vectorElems<__nv_bfloat16>() == 8,
                  "vectorElems");
    auto kernel = accumulate_kernel<4, float, float>;
    int blocks = -7;
    cr_expect(warpkit::occupancyGridSize(nullptr, kernel, 256) == cudaErrorInvalidValue);
    cr_expect(warpkit::occupancyGridSize(&blocks, kernel, -1) == cudaErrorInvalidValue && blocks == -7);
    if (!wk_has_gpu()) {
        cr_expect(warpkit::occupancyGridSize(&blocks, kernel, 256) != cudaSuccess && blocks == -7,
                  "without a GPU the helper must return an error and leave *blocks alone");
    }
    cr_expect(pattern_sum(1000) == 500 && pattern_sum(3) == -1494, "the huge test's closed form");
}
