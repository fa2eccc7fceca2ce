// Tests of include/warpkit/device/histogram.cuh: deviceHistogramBytes. Every count is exact.
#include "../common.cuh"
#include <warpkit/device/histogram.cuh>

#include <algorithm>
#include <vector>

/// Bytes of three kinds: uniform, skewed (15 of 16 in bins 0..3, as the benchmark), one value.
static void fill(std::vector<unsigned char>& h, int kind, wk_rng* rng) {
    for (auto& b : h) {
        const uint64_t z = wk_next(rng);
        b = kind == 0   ? (unsigned char)(z >> 24)
            : kind == 1 ? ((z & 15) ? (unsigned char)((z >> 8) & 3) : (unsigned char)(z >> 16))
                        : 0xff;
    }
}

/// hist of in[0 .. n) (device din, host h) against the CPU's counts; hist starts poisoned.
static void check_case(const unsigned char* din, const unsigned char* h, long long n, unsigned* dhist, void* ws,
                       size_t bytes, cudaStream_t stream, const char* what) {
    wk_poison(dhist, 256);
    WK_CUDA(warpkit::deviceHistogramBytes(din, n, dhist, ws, &bytes, stream));
    WK_CUDA(cudaStreamSynchronize(stream));
    WK_LAUNCHED();
    unsigned got[256], want[256] = {0};
    wk_download(got, dhist, 256);
    for (long long i = 0; i < n; ++i) want[h[i]]++;
    for (int b = 0; b < 256; ++b)
        cr_assert(got[b] == want[b], "%s n=%lld: bin %d holds %u, want %u", what, n, b, got[b], want[b]);
}

/// Input bytes one full wave of blocks reads in whole batches (the resident blocks x 1024 threads
/// x 2 loads x 16 bytes).
static long long histogram_wave(void) {
    int b = 0;
    constexpr int t = warpkit::detail::kHistogramThreads;
    WK_CUDA(
        warpkit::detail::gridBlocks(warpkit::detail::deviceHistogramKernel<t>, t, 1LL << 40, 8LL * t, 1LL << 30, &b));
    return (long long)b * t * warpkit::detail::kHistogramLoads * 16;
}

Test(device_histogram, any_size_alignment_data) {
    WK_REQUIRE_GPU();
    const long long batch = 8LL * warpkit::detail::kHistogramThreads * 16; // one block's share when n is small
    std::vector<long long> sizes = {0,   1,    15,   16,   17,        31,    32,        33,
                                    255, 4095, 4096, 4097, batch - 1, batch, batch + 1, 1000003};
    if (!wk_quick()) {
        const long long wave = histogram_wave();
        const long long big[] = {wave - 1, wave, wave + 17, 3 * wave + 5, (1LL << 24) + 7777};
        sizes.insert(sizes.end(), big, big + 5);
    }
    const long long maxN = *std::max_element(sizes.begin(), sizes.end());
    wk_rng rng = wk_rng_make(0x415);
    std::vector<unsigned char> h((size_t)maxN + 16);
    unsigned char* din = wk_alloc<unsigned char>(h.size());
    unsigned* dhist = wk_alloc<unsigned>(256);
    size_t bytes = 0;
    WK_CUDA(warpkit::deviceHistogramBytes(din, maxN, dhist, nullptr, &bytes));
    cr_assert(bytes >= 1, "the size query asked for %zu bytes", bytes);
    void* ws = NULL;
    WK_CUDA(cudaMalloc(&ws, bytes));
    char what[64];
    for (int kind = 0; kind < 3; ++kind) {
        fill(h, kind, &rng);
        wk_upload(din, h.data(), h.size());
        for (long long n : sizes)
            for (int off = 0; off < 16; ++off) {
                if ((wk_quick() || n > 2000000) && off != 0 && off != 1 && off != 15) continue;
                snprintf(what, sizeof what, "%s bytes at offset %d",
                         kind == 0   ? "uniform"
                         : kind == 1 ? "skewed"
                                     : "0xff",
                         off);
                check_case(din + off, h.data() + off, n, dhist, ws, bytes, 0, what);
            }
    }
    for (void* buf : {(void*)din, (void*)dhist, (void*)ws}) WK_CUDA(cudaFree(buf));
}

// Two histograms in flight at once on two streams.
Test(device_histogram, two_streams) {
    WK_REQUIRE_GPU();
    const long long n = wk_quick() ? 100003 : (1LL << 24) + 3;
    wk_rng rng = wk_rng_make(0x2b);
    std::vector<unsigned char> h1(n), h2(n);
    fill(h1, 0, &rng);
    fill(h2, 1, &rng);
    unsigned char *x1 = wk_alloc<unsigned char>(n), *x2 = wk_alloc<unsigned char>(n + 1);
    wk_upload(x1, h1.data(), n);
    wk_upload(x2 + 1, h2.data(), n);
    unsigned* hist = wk_alloc<unsigned>(512);
    size_t bytes = 0;
    WK_CUDA(warpkit::deviceHistogramBytes(x1, n, hist, nullptr, &bytes));
    void *w1 = NULL, *w2 = NULL;
    WK_CUDA(cudaMalloc(&w1, bytes));
    WK_CUDA(cudaMalloc(&w2, bytes));
    cudaStream_t s1, s2;
    WK_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    WK_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    unsigned want[512] = {0};
    for (long long i = 0; i < n; ++i) {
        want[h1[i]]++;
        want[256 + h2[i]]++;
    }
    for (int r = 0; r < (wk_quick() ? 2 : 8); ++r) {
        wk_poison(hist, 512);
        WK_CUDA(warpkit::deviceHistogramBytes(x1, n, hist, w1, &bytes, s1));
        WK_CUDA(warpkit::deviceHistogramBytes(x2 + 1, n, hist + 256, w2, &bytes, s2));
        WK_CUDA(cudaStreamSynchronize(s1));
        WK_CUDA(cudaStreamSynchronize(s2));
        WK_LAUNCHED();
        unsigned got[512];
        wk_download(got, hist, 512);
        for (int b = 0; b < 512; ++b)
            cr_assert(got[b] == want[b], "launch %d, stream %d: bin %d holds %u, want %u", r, 1 + b / 256, b % 256,
                      got[b], want[b]);
    }
    WK_CUDA(cudaStreamDestroy(s1));
    WK_CUDA(cudaStreamDestroy(s2));
    for (void* buf : {(void*)w1, (void*)w2, (void*)x1, (void*)x2, (void*)hist}) WK_CUDA(cudaFree(buf));
}

// n > 2^32 (64-bit indices; bin 0 wraps modulo 2^32): zeros with a 7 past 2^32 and a 9 at the end.
Test(device_histogram, huge_n_wraps) {
    WK_REQUIRE_GPU();
    const long long n = wk_quick() ? (1LL << 22) + 5 : (1LL << 32) + 5;
    unsigned char* p = NULL;
    if (cudaMalloc((void**)&p, (size_t)n + 1) != cudaSuccess) {
        cudaGetLastError();
        cr_skip_test("needs %lld MB of GPU memory", n >> 20);
    }
    WK_CUDA(cudaMemset(p, 0, (size_t)n + 1));
    WK_CUDA(cudaMemset(p + n - 3, 7, 1));
    WK_CUDA(cudaMemset(p + n - 1, 9, 1));
    unsigned* hist = wk_alloc<unsigned>(256);
    size_t bytes = 0;
    WK_CUDA(warpkit::deviceHistogramBytes(p, n, hist, nullptr, &bytes));
    void* ws = NULL;
    WK_CUDA(cudaMalloc(&ws, bytes));
    for (int shift = 0; shift < 2; ++shift) { // the whole array, then from byte 1
        wk_poison(hist, 256);
        WK_CUDA(warpkit::deviceHistogramBytes(p + shift, n - shift, hist, ws, &bytes));
        WK_LAUNCHED();
        unsigned got[256];
        wk_download(got, hist, 256);
        const unsigned zeros = (unsigned)(unsigned long long)(n - shift - 2); // modulo 2^32
        for (int b = 0; b < 256; ++b) {
            const unsigned want = b == 0 ? zeros : (b == 7 || b == 9) ? 1u : 0u;
            cr_assert(got[b] == want, "n=%lld: bin %d holds %u, want %u", n - shift, b, got[b], want);
        }
    }
    for (void* buf : {(void*)ws, (void*)p, (void*)hist}) WK_CUDA(cudaFree(buf));
}

Test(device_histogram, bad_arguments) {
    WK_REQUIRE_GPU();
    const long long n = 1000;
    unsigned char* in = wk_alloc<unsigned char>(n);
    WK_CUDA(cudaMemset(in, 3, n));
    unsigned* hist = wk_alloc<unsigned>(256);
    size_t need = 0;
    WK_CUDA(warpkit::deviceHistogramBytes(in, n, hist, nullptr, &need));
    void* ws = NULL;
    WK_CUDA(cudaMalloc(&ws, need));
    wk_poison(hist, 256);
    size_t bytes = need;
    cr_expect(warpkit::deviceHistogramBytes(in, -1, hist, ws, &bytes) == cudaErrorInvalidValue, "n < 0");
    cr_expect(warpkit::deviceHistogramBytes(nullptr, n, hist, ws, &bytes) == cudaErrorInvalidValue, "null in");
    cr_expect(warpkit::deviceHistogramBytes(in, n, nullptr, ws, &bytes) == cudaErrorInvalidValue, "null hist");
    cr_expect(warpkit::deviceHistogramBytes(in, 0, nullptr, ws, &bytes) == cudaErrorInvalidValue, "null hist, n = 0");
    cr_expect(warpkit::deviceHistogramBytes(in, n, hist, ws, nullptr) == cudaErrorInvalidValue, "null workspaceBytes");
    bytes = need - 1;
    cr_expect(warpkit::deviceHistogramBytes(in, n, hist, ws, &bytes) == cudaErrorInvalidValue, "workspace too small");
    bytes = 4242;
    cr_expect(warpkit::deviceHistogramBytes(in, -1, hist, nullptr, &bytes) == cudaErrorInvalidValue && bytes == 4242,
              "query with n < 0");
    cr_expect(warpkit::deviceHistogramBytes(in, n, hist, nullptr, &bytes) == cudaSuccess && bytes == need, "query");
    WK_LAUNCHED();
    unsigned got[256];
    wk_download(got, hist, 256);
    for (int b = 0; b < 256; ++b)
        cr_assert(got[b] == 0xa5a5a5a5u, "bin %d was written by a refused call or a query", b);
    // n = 0 (null in allowed): every bin 0.
    bytes = need;
    WK_CUDA(warpkit::deviceHistogramBytes(nullptr, 0, hist, ws, &bytes));
    WK_LAUNCHED();
    wk_download(got, hist, 256);
    for (int b = 0; b < 256; ++b) cr_assert(got[b] == 0, "n = 0: bin %d holds %u", b, got[b]);
    for (void* buf : {(void*)ws, (void*)in, (void*)hist}) WK_CUDA(cudaFree(buf));
}

// Host-only (runs without a GPU): argument checks come before any device call.
Test(device_histogram, host_checks) {
    size_t bytes = 9;
    unsigned char* fake = (unsigned char*)(size_t)0x1000;
    unsigned* hfake = (unsigned*)(size_t)0x2000;
    cr_expect(warpkit::deviceHistogramBytes(fake, -1, hfake, nullptr, &bytes) == cudaErrorInvalidValue && bytes == 9);
    cr_expect(warpkit::deviceHistogramBytes(fake, 1, hfake, fake, nullptr) == cudaErrorInvalidValue);
    if (!wk_has_gpu()) {
        bytes = 1;
        cr_expect(warpkit::deviceHistogramBytes(fake, 10, hfake, fake, &bytes) != cudaSuccess,
                  "without a GPU a call must fail, not crash");
    }
}
