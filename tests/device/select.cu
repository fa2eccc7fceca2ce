// Tests of include/warpkit/device/select.cuh: deviceSelectUnordered.
//
// The order of the kept elements is not specified, so each check compares the count and the
// multiset (sorted bit patterns, so -0.0 and +0.0 count apart) with the CPU's, and that nothing
// around out[0 .. count) was written.
#include "../common.cuh"
#include <warpkit/device/select.cuh>

#include <algorithm>
#include <vector>

template <typename T> static unsigned bits_of(T x) {
    unsigned u;
    memcpy(&u, &x, 4);
    return u;
}

/// Keeps odd ints: a user predicate on another 4-byte type.
struct OddInt {
    __host__ __device__ bool operator()(int x) const { return (x & 1) != 0; }
};

static const int kGuard = 16; // poisoned elements checked before and after the output

/// Runs one compaction of in[0 .. n) (device din, host copy h) into out at element offset outOff
/// of a poisoned buffer of n + 2 * kGuard elements, and checks it against the CPU.
template <typename T, typename Pred> static void run_case(const T* din, const T* h, long long n, Pred pred, T* dbuf,
                                                          int outOff, unsigned long long* dcount, void* ws,
                                                          size_t bytes, cudaStream_t stream, const char* what) {
    wk_poison(dbuf, (size_t)n + 2 * kGuard);
    wk_poison(dcount, 1);
    WK_CUDA(warpkit::deviceSelectUnordered(din, dbuf + kGuard + outOff, n, pred, dcount, ws, &bytes, stream));
    WK_CUDA(cudaStreamSynchronize(stream));
    WK_LAUNCHED();
    unsigned long long count = 0;
    wk_download(&count, dcount, 1);
    std::vector<unsigned> want;
    for (long long i = 0; i < n; ++i)
        if (pred(h[i])) want.push_back(bits_of(h[i]));
    cr_assert(count == want.size(), "%s n=%lld: count %llu, want %zu", what, n, count, want.size());
    std::vector<T> out((size_t)n + 2 * kGuard);
    wk_download(out.data(), dbuf, out.size());
    std::vector<unsigned> got;
    for (unsigned long long i = 0; i < count; ++i) got.push_back(bits_of(out[kGuard + outOff + i]));
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    cr_assert(got == want, "%s n=%lld: the kept elements differ from the CPU's (count %llu)", what, n, count);
    for (size_t i = 0; i < out.size(); ++i) {
        const bool inside = i >= (size_t)(kGuard + outOff) && i < kGuard + outOff + count;
        cr_assert(inside || bits_of(out[i]) == 0xa5a5a5a5u, "%s n=%lld: element %lld of the output buffer was written",
                  what, n, (long long)i - kGuard - outOff);
    }
}

/// The blocks one full wave of the float kernel takes, as elements.
static long long select_wave(void) {
    int b = 0;
    WK_CUDA(warpkit::detail::gridBlocks(warpkit::detail::deviceSelectKernel<float, warpkit::SelectGreater<float>>,
                                        warpkit::detail::kSelectThreads, 1LL << 40,
                                        warpkit::detail::kSelectThreads / 32, 1LL << 30, &b));
    return (long long)b * (warpkit::detail::kSelectThreads / 32) * warpkit::detail::kSelectChunk;
}

Test(device_select, floats_any_size_alignment_selectivity) {
    WK_REQUIRE_GPU();
    const long long chunk = warpkit::detail::kSelectChunk, block = chunk * (warpkit::detail::kSelectThreads / 32);
    std::vector<long long> sizes = {0,   1,   2,   3,         4,     5,         7,         8,     9,         31,
                                    127, 128, 129, chunk - 1, chunk, chunk + 1, block - 1, block, block + 1, 65537};
    if (!wk_quick()) {
        const long long wave = select_wave();
        const long long big[] = {wave - 1, wave, wave + 1, 2 * wave + 5, (1LL << 22) + 12345};
        sizes.insert(sizes.end(), big, big + 5);
    }
    const long long maxN = *std::max_element(sizes.begin(), sizes.end());
    wk_rng rng = wk_rng_make(0x5e1);
    std::vector<float> h((size_t)maxN + 8);
    for (auto& x : h) {
        const long long r = wk_int(&rng, 0, 99);
        x = r == 0 ? NAN : r == 1 ? -0.0f : r == 2 ? 0.0f : r == 3 ? INFINITY : (float)wk_uniform(&rng, 0.0, 1.0);
    }
    float* din = wk_alloc<float>(h.size());
    wk_upload(din, h.data(), h.size());
    float* dbuf = wk_alloc<float>((size_t)maxN + 2 * kGuard);
    unsigned long long* dcount = wk_alloc<unsigned long long>(1);
    size_t bytes = 0;
    WK_CUDA(warpkit::deviceSelectUnordered(din, dbuf, maxN, warpkit::SelectGreater{0.5f}, dcount, nullptr, &bytes));
    cr_assert(bytes >= 1, "the size query asked for %zu bytes", bytes);
    void* ws = NULL;
    WK_CUDA(cudaMalloc(&ws, bytes));
    const float thresholds[] = {-1.0f, 0.01f, 0.5f, 0.99f, 2.0f}; // all but NaN, 99%, half, 1%, only inf
    char what[96];
    for (long long n : sizes)
        for (int off = 0; off < 8; ++off) {
            if (wk_quick() && off != 0 && off != 1 && off != 3) continue;
            for (float t : thresholds) {
                // The big sizes (CPU sorts of millions): three selectivities aligned, one misaligned.
                if (n > 100000 && !(off == 0 ? t == 0.01f || t == 0.5f || t == 2.0f : off == 1 && t == 0.99f)) continue;
                snprintf(what, sizeof what, "float x > %g, input offset %d, output offset %d", t, off, off % 3);
                run_case(din + off, h.data() + off, n, warpkit::SelectGreater{t}, dbuf, off % 3, dcount, ws, bytes, 0,
                         what);
            }
        }
    for (void* buf : {(void*)din, (void*)dbuf, (void*)dcount, (void*)ws}) WK_CUDA(cudaFree(buf));
}

Test(device_select, ints_user_predicate) {
    WK_REQUIRE_GPU();
    const long long sizes[] = {1, 6, 129, 2049, 16385, wk_quick() ? 70001LL : (1LL << 21) + 3};
    wk_rng rng = wk_rng_make(0x1e7);
    const long long maxN = sizes[5];
    std::vector<int> h((size_t)maxN + 4);
    for (auto& x : h) x = (int)wk_int(&rng, -1000000, 1000000);
    int* din = wk_alloc<int>(h.size());
    wk_upload(din, h.data(), h.size());
    int* dbuf = wk_alloc<int>((size_t)maxN + 2 * kGuard);
    unsigned long long* dcount = wk_alloc<unsigned long long>(1);
    size_t bytes = 0;
    WK_CUDA(warpkit::deviceSelectUnordered(din, dbuf, maxN, OddInt{}, dcount, nullptr, &bytes));
    void* ws = NULL;
    WK_CUDA(cudaMalloc(&ws, bytes));
    for (long long n : sizes)
        for (int off = 0; off < 4; ++off)
            run_case(din + off, h.data() + off, n, OddInt{}, dbuf, 1, dcount, ws, bytes, 0, "odd ints");
    for (void* buf : {(void*)din, (void*)dbuf, (void*)dcount, (void*)ws}) WK_CUDA(cudaFree(buf));
}

// Two compactions in flight at once on two streams, each with its own workspace and count.
Test(device_select, two_streams) {
    WK_REQUIRE_GPU();
    const long long n = wk_quick() ? 50001 : (1LL << 22) + 5;
    wk_rng rng = wk_rng_make(0x25);
    std::vector<float> h1(n), h2(n);
    for (auto& x : h1) x = (float)wk_uniform(&rng, 0.0, 1.0);
    for (auto& x : h2) x = (float)wk_uniform(&rng, -1.0, 1.0);
    float *x1 = wk_alloc<float>(n), *x2 = wk_alloc<float>(n);
    wk_upload(x1, h1.data(), n);
    wk_upload(x2, h2.data(), n);
    float *o1 = wk_alloc<float>(n), *o2 = wk_alloc<float>(n);
    unsigned long long* c = wk_alloc<unsigned long long>(2);
    size_t bytes = 0;
    WK_CUDA(warpkit::deviceSelectUnordered(x1, o1, n, warpkit::SelectGreater{0.3f}, c, nullptr, &bytes));
    void *w1 = NULL, *w2 = NULL;
    WK_CUDA(cudaMalloc(&w1, bytes));
    WK_CUDA(cudaMalloc(&w2, bytes));
    cudaStream_t s1, s2;
    WK_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    WK_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    const int reps = wk_quick() ? 2 : 8;
    for (int r = 0; r < reps; ++r) {
        wk_poison(c, 2);
        WK_CUDA(warpkit::deviceSelectUnordered(x1, o1, n, warpkit::SelectGreater{0.3f}, c, w1, &bytes, s1));
        WK_CUDA(warpkit::deviceSelectUnordered(x2, o2, n, warpkit::SelectGreater{0.0f}, c + 1, w2, &bytes, s2));
        WK_CUDA(cudaStreamSynchronize(s1));
        WK_CUDA(cudaStreamSynchronize(s2));
        WK_LAUNCHED();
        unsigned long long got[2];
        wk_download(got, c, 2);
        std::vector<float> g1(got[0]), g2(got[1]), w1h, w2h;
        for (float x : h1)
            if (x > 0.3f) w1h.push_back(x);
        for (float x : h2)
            if (x > 0.0f) w2h.push_back(x);
        cr_assert(got[0] == w1h.size() && got[1] == w2h.size(), "counts %llu / %llu, want %zu / %zu", got[0], got[1],
                  w1h.size(), w2h.size());
        wk_download(g1.data(), o1, got[0]);
        wk_download(g2.data(), o2, got[1]);
        std::sort(g1.begin(), g1.end());
        std::sort(g2.begin(), g2.end());
        std::sort(w1h.begin(), w1h.end());
        std::sort(w2h.begin(), w2h.end());
        cr_assert(g1 == w1h && g2 == w2h, "launch %d: a stream's kept elements differ from the CPU's", r);
    }
    WK_CUDA(cudaStreamDestroy(s1));
    WK_CUDA(cudaStreamDestroy(s2));
    for (void* buf : {(void*)w1, (void*)w2, (void*)x1, (void*)x2, (void*)o1, (void*)o2, (void*)c})
        WK_CUDA(cudaFree(buf));
}

Test(device_select, bad_arguments) {
    WK_REQUIRE_GPU();
    const long long n = 1000;
    float* in = wk_alloc<float>(n);
    WK_CUDA(cudaMemset(in, 0x3f, n * sizeof(float))); // 0.75: every element kept
    float* out = wk_alloc<float>(n);
    unsigned long long* count = wk_alloc<unsigned long long>(1);
    size_t need = 0;
    WK_CUDA(warpkit::deviceSelectUnordered(in, out, n, warpkit::SelectGreater{0.5f}, count, nullptr, &need));
    void* ws = NULL;
    WK_CUDA(cudaMalloc(&ws, need));
    wk_poison(out, n);
    wk_poison(count, 1);
    const warpkit::SelectGreater<float> p{0.5f};
    size_t bytes = need;
    cr_expect(warpkit::deviceSelectUnordered(in, out, -1, p, count, ws, &bytes) == cudaErrorInvalidValue, "n < 0");
    cr_expect(warpkit::deviceSelectUnordered((const float*)nullptr, out, n, p, count, ws, &bytes) ==
                  cudaErrorInvalidValue,
              "null in");
    cr_expect(warpkit::deviceSelectUnordered(in, (float*)nullptr, n, p, count, ws, &bytes) == cudaErrorInvalidValue,
              "null out");
    cr_expect(warpkit::deviceSelectUnordered(in, out, n, p, nullptr, ws, &bytes) == cudaErrorInvalidValue,
              "null numSelected");
    cr_expect(warpkit::deviceSelectUnordered(in, out, 0, p, nullptr, ws, &bytes) == cudaErrorInvalidValue,
              "null numSelected, n = 0");
    cr_expect(warpkit::deviceSelectUnordered(in, out, n, p, count, ws, nullptr) == cudaErrorInvalidValue,
              "null workspaceBytes");
    bytes = need - 1;
    cr_expect(warpkit::deviceSelectUnordered(in, out, n, p, count, ws, &bytes) == cudaErrorInvalidValue,
              "workspace too small");
    bytes = 999;
    cr_expect(warpkit::deviceSelectUnordered(in, out, -1, p, count, nullptr, &bytes) == cudaErrorInvalidValue &&
                  bytes == 999,
              "query with n < 0");
    cr_expect(warpkit::deviceSelectUnordered(in, out, n, p, count, nullptr, &bytes) == cudaSuccess && bytes == need,
              "query");
    WK_LAUNCHED();
    std::vector<float> h(n);
    unsigned long long c = 0;
    wk_download(h.data(), out, n);
    wk_download(&c, count, 1);
    cr_assert(c == 0xa5a5a5a5a5a5a5a5ull, "numSelected was written by a refused call or a query");
    for (long long i = 0; i < n; ++i) cr_assert(bits_of(h[i]) == 0xa5a5a5a5u, "out[%lld] was written", i);
    // n = 0 (null in and out allowed): numSelected = 0, out untouched.
    bytes = need;
    WK_CUDA(warpkit::deviceSelectUnordered((const float*)nullptr, (float*)nullptr, 0, p, count, ws, &bytes));
    WK_LAUNCHED();
    wk_download(&c, count, 1);
    cr_assert(c == 0, "n = 0: numSelected %llu", c);
    for (void* buf : {(void*)ws, (void*)in, (void*)out, (void*)count}) WK_CUDA(cudaFree(buf));
}

// Host-only (runs without a GPU): argument checks come first; the predicate works on the host.
Test(device_select, host_checks) {
    size_t bytes = 5;
    float* fake = (float*)(size_t)0x1000;
    unsigned long long* cfake = (unsigned long long*)(size_t)0x2000;
    const warpkit::SelectGreater<float> p{0.5f};
    cr_expect(warpkit::deviceSelectUnordered(fake, fake, -1, p, cfake, nullptr, &bytes) == cudaErrorInvalidValue &&
              bytes == 5);
    cr_expect(warpkit::deviceSelectUnordered(fake, fake, 1, p, cfake, fake, nullptr) == cudaErrorInvalidValue);
    cr_expect(p(0.75f) && !p(0.5f) && !p(NAN) && warpkit::SelectGreater{2}(3) && !warpkit::SelectGreater{2}(2));
    if (!wk_has_gpu()) {
        bytes = 1;
        cr_expect(warpkit::deviceSelectUnordered(fake, fake, 10, p, cfake, fake, &bytes) != cudaSuccess,
                  "without a GPU a call must fail, not crash");
    }
}
