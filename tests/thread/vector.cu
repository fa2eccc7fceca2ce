// Tests of include/warpkit/thread/vector.cuh.
// Host: vectorSplit for every misalignment and lengths 0..100 (head + body + tail cover the run,
// the body is 16-byte aligned).
// GPU: loadShare / storeShare for every alignment offset and lengths 0..100, four element sizes,
// group sizes 2, 3, 32 and 128 (each element lands in exactly one slot, empty slots hold the fill,
// stores write exactly the run, with vector stores when the destination's alignment matches and
// element stores when it does not), and loadVector / storeVector / loadScalar (1, 2, 4 and 8 bytes) /
// storeScalar with every cache hint.
#include "../common.cuh"
#include <warpkit/thread/vector.cuh>
#include <vector>

using warpkit::VectorSplit;

template <typename T> static void split_host_case(int* bad) {
    constexpr int V = warpkit::vectorElems<T>();
    alignas(16) static unsigned char buf[512];
    for (int off = 0; off < 16; off += (int)sizeof(T)) {
        const T* p = reinterpret_cast<const T*>(buf + off);
        for (long long n = 0; n <= 100; ++n) {
            const VectorSplit s = warpkit::vectorSplit(p, n);
            const bool ok = s.head >= 0 && s.head < V && s.tail >= 0 && s.tail < V && s.vectors >= 0 &&
                            s.head + s.vectors * V + s.tail == n &&
                            (s.vectors == 0 || ((size_t)(p + s.head) & 15) == 0) && (s.head == n || s.head == (16 - off) % 16 / (int)sizeof(T));
            if (!ok && (*bad)++ < 3)
                cr_log_error("vectorSplit<%d-byte>(offset %d, n %lld) = {%d, %d, %lld}", (int)sizeof(T), off, n, s.head, s.tail,
                             s.vectors);
        }
    }
}

Test(vector_host, split_covers_the_run) {
    int bad = 0;
    split_host_case<unsigned char>(&bad);
    split_host_case<__half>(&bad);
    split_host_case<float>(&bad);
    split_host_case<double>(&bad);
    cr_expect(bad == 0, "vectorSplit: %d wrong splits", bad);
}

// One block per (offset, length) case: G threads load their share of src + off (n elements) into
// K slots, write the slots out, then store them to dst + offD (same n).
template <typename T, int C, int E>
__global__ void share_kernel(const T* src, T* dst, T* slots, int maxLen, int offD, int stride) {
    constexpr int K = C * warpkit::vectorElems<T>() + E;
    const int cs = blockIdx.x, off = cs / (maxLen + 1), n = cs % (maxLen + 1), G = blockDim.x, t = threadIdx.x;
    const T* p = src + (size_t)cs * stride + off;
    const VectorSplit s = warpkit::vectorSplit(p, n);
    T v[K];
    T fill;
    memset(&fill, 0x7b, sizeof(T));
    warpkit::loadShare<C, E>(v, p, s, t, G, fill);
#pragma unroll
    for (int k = 0; k < K; ++k) slots[((size_t)cs * G + t) * K + k] = v[k];
    warpkit::storeShare<C, E>(dst + (size_t)cs * stride + off + offD, s, v, t, G);
}

template <typename T, int G, int C, int E> static void share_case(int offD, int* bad) {
    constexpr int V = warpkit::vectorElems<T>(), K = C * V + E, maxLen = 100;
    const int offs = V, cases = offs * (maxLen + 1), stride = 128 + 2 * V; // each case's own 16-byte aligned window
    static_assert(C * G * V + V >= maxLen && E * G >= 2 * V - 2 && E * G >= (maxLen < 2 * V - 2 ? maxLen : 2 * V - 2),
                  "test shape: C*G vectors and E*G extras must hold the longest run");
    wk_rng r = wk_rng_make(500 + sizeof(T) * 10 + G + offD);
    const size_t total = (size_t)cases * stride + 64;
    std::vector<T> hs(total), hd(total), hslots((size_t)cases * G * K), before(total);
    for (size_t i = 0; i < total; ++i) {
        unsigned w = (unsigned)wk_next(&r);
        memcpy((void*)&hs[i], &w, sizeof(T) < 4 ? sizeof(T) : 4);
        if (sizeof(T) > 4) memcpy(reinterpret_cast<unsigned char*>(&hs[i]) + 4, &w, sizeof(T) - 4);
    }
    T *ds = wk_alloc<T>(total), *dd = wk_alloc<T>(total), *dsl = wk_alloc<T>(hslots.size());
    wk_upload(ds, hs.data(), total);
    wk_poison(dd, total);
    wk_download(before.data(), dd, total);
    share_kernel<T, C, E><<<cases, G>>>(ds, dd, dsl, maxLen, offD, stride);
    WK_LAUNCHED();
    wk_download(hd.data(), dd, total);
    wk_download(hslots.data(), dsl, hslots.size());
    T fill;
    memset((void*)&fill, 0x7b, sizeof(T));
    for (int cs = 0; cs < cases && *bad < 5; ++cs) {
        const int off = cs / (maxLen + 1), n = cs % (maxLen + 1);
        const T* p = &hs[(size_t)cs * stride + off];
        const VectorSplit s = warpkit::vectorSplit(reinterpret_cast<const T*>((size_t)off * sizeof(T)), n); // same alignment as the device's
        std::vector<int> hits(n, 0);
        for (int t = 0; t < G; ++t)
            for (int k = 0; k < K; ++k) {
                const T got = hslots[((size_t)cs * G + t) * K + k];
                long long e = -1;
                if (k < C * V) {
                    const long long vi = t + (long long)(k / V) * G;
                    if (vi < s.vectors) e = s.head + vi * V + k % V;
                } else {
                    const int x = t + (k - C * V) * G;
                    if (x < s.head + s.tail) e = x < s.head ? x : s.head + s.vectors * V + (x - s.head);
                }
                const T want = e >= 0 ? p[e] : fill;
                if (e >= 0) ++hits[e];
                if (memcmp(&got, &want, sizeof(T)) != 0 && (*bad)++ < 5)
                    cr_log_error("loadShare<%d-byte, G %d>: offset %d n %d thread %d slot %d: wrong value (element %lld)",
                                 (int)sizeof(T), G, off, n, t, k, e);
            }
        for (int e = 0; e < n; ++e)
            if (hits[e] != 1 && (*bad)++ < 5)
                cr_log_error("loadShare<%d-byte, G %d>: offset %d n %d: element %d in %d slots", (int)sizeof(T), G, off, n, e, hits[e]);
        // The store: exactly the run, at dst + off + offD.
        const size_t d0 = (size_t)cs * stride + off + offD;
        for (size_t i = (size_t)cs * stride; i < (size_t)(cs + 1) * stride; ++i) {
            const bool inRun = i >= d0 && i < d0 + n;
            const T& want = inRun ? p[i - d0] : before[i];
            if (memcmp(&hd[i], &want, sizeof(T)) != 0 && (*bad)++ < 5)
                cr_log_error("storeShare<%d-byte, G %d>: offset %d (+%d) n %d: element %zu %s", (int)sizeof(T), G, off, offD, n,
                             i - (size_t)cs * stride, inRun ? "wrong" : "outside the run was written");
        }
    }
    cudaFree(ds);
    cudaFree(dd);
    cudaFree(dsl);
}

template <typename T> static void share_cases(int* bad) {
    constexpr int V = warpkit::vectorElems<T>();
    for (int offD : {0, 1}) { // same alignment as the source, and one element off (element stores)
        share_case<T, 32, 4, 1>(offD, bad);
        share_case<T, 128, 1, 1>(offD, bad);
        share_case<T, 3, 100 / V / 3 + 1, (2 * V - 2 + 2) / 3>(offD, bad);
        share_case<T, 2, 100 / V / 2 + 1, V - 1>(offD, bad);
    }
}

Test(vector, share_every_alignment_and_length) {
    WK_REQUIRE_GPU();
    int bad = 0;
    share_cases<unsigned char>(&bad);
    share_cases<__half>(&bad);
    share_cases<float>(&bad);
    share_cases<double>(&bad);
    cr_expect(bad == 0, "loadShare / storeShare: %d mismatches", bad);
}

// Copy n 16-byte vectors and n scalars of 2 bytes with each hint combination; `scalars`: instead,
// bytes 0, 4..7 and 8..15 of each vector as scalars of 1, 4 and 8 bytes.
template <int LH, int SH>
__global__ void hint_kernel(const float* src, float* dst, const __half* hs, __half* hd, int n, bool scalars) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && !scalars) {
        warpkit::storeVector<SH>(dst + 4 * i, warpkit::loadVector<LH>(src + 4 * i));
        warpkit::storeScalar<SH>(hd + i, warpkit::loadScalar<LH>(hs + i));
    } else if (i < n) {
        warpkit::storeScalar<SH>(reinterpret_cast<unsigned char*>(dst + 4 * i),
                                 warpkit::loadScalar<LH>(reinterpret_cast<const unsigned char*>(src + 4 * i)));
        warpkit::storeScalar<SH>(dst + 4 * i + 1, warpkit::loadScalar<LH>(src + 4 * i + 1));
        warpkit::storeScalar<SH>(reinterpret_cast<double*>(dst + 4 * i + 2),
                                 warpkit::loadScalar<LH>(reinterpret_cast<const double*>(src + 4 * i + 2)));
    }
}

template <int LH, int SH> static void hint_case(int* bad) {
    const int n = 1000;
    std::vector<float> a(4 * n), b(4 * n);
    std::vector<__half> ha(n), hb(n);
    wk_rng r = wk_rng_make(900 + LH * 3 + SH);
    for (float& x : a) x = (float)wk_uniform(&r, -9, 9);
    for (__half& x : ha) x = __float2half((float)wk_uniform(&r, -9, 9));
    float *da = wk_alloc<float>(4 * n), *db = wk_alloc<float>(4 * n);
    __half *dha = wk_alloc<__half>(n), *dhb = wk_alloc<__half>(n);
    wk_upload(da, a.data(), 4 * n);
    wk_upload(dha, ha.data(), n);
    wk_poison(db, 4 * n);
    wk_poison(dhb, n);
    hint_kernel<LH, SH><<<(n + 127) / 128, 128>>>(da, db, dha, dhb, n, false);
    WK_LAUNCHED();
    wk_download(b.data(), db, 4 * n);
    wk_download(hb.data(), dhb, n);
    if ((memcmp(a.data(), b.data(), 4 * n * sizeof(float)) != 0 || memcmp(ha.data(), hb.data(), n * sizeof(__half)) != 0) &&
        (*bad)++ < 3)
        cr_log_error("load hint %d, store hint %d: the copy differs", LH, SH);
    // The scalar copies of 1, 4 and 8 bytes into the poisoned output (the vectors' bytes 0, 4..7, 8..15).
    wk_poison(db, 4 * n);
    hint_kernel<LH, SH><<<(n + 127) / 128, 128>>>(da, db, dha, dhb, n, true);
    WK_LAUNCHED();
    wk_download(b.data(), db, 4 * n);
    int diff = 0;
    for (int k = 0; k < n; ++k) {
        const unsigned char* x = reinterpret_cast<const unsigned char*>(&a[4 * k]);
        const unsigned char* y = reinterpret_cast<const unsigned char*>(&b[4 * k]);
        diff += x[0] != y[0] || memcmp(x + 4, y + 4, 12) != 0;
    }
    if (diff && (*bad)++ < 3) cr_log_error("load hint %d, store hint %d: %d scalar copies differ", LH, SH, diff);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dha);
    cudaFree(dhb);
}

Test(vector, cache_hints) {
    WK_REQUIRE_GPU();
    int bad = 0;
    hint_case<warpkit::LoadDefault, warpkit::StoreDefault>(&bad);
    hint_case<warpkit::LoadReadOnly, warpkit::StoreDefault>(&bad);
    hint_case<warpkit::LoadStreaming, warpkit::StoreStreaming>(&bad);
    hint_case<warpkit::LoadDefault, warpkit::StoreStreaming>(&bad);
    hint_case<warpkit::LoadL2Only, warpkit::StoreDefault>(&bad);
    hint_case<warpkit::LoadReadOnlyEvictFirst, warpkit::StoreDefault>(&bad);
    hint_case<warpkit::LoadReadOnlyNoL1, warpkit::StoreDefault>(&bad);
    cr_expect(bad == 0, "vector I/O with cache hints: %d failures", bad);
}
