// Tests of deviceTransformReduce (device/reduce.cuh) and gridTransformAccumulate (grid.cuh): sum of
// squares and a dot product against a double host reference over odd sizes and alignments (the two
// inputs at equal and at different offsets within 16 bytes), a max of |x| in __half, n = 0, bad
// arguments, determinism, and the fold/combine trap the header describes (a squaring operator in
// deviceReduce squares the partials; the transform form does not).
#include "../common.cuh"
#include <warpkit/device/reduce.cuh>
#include <vector>

struct Square {
    __device__ float operator()(float x) const { return x * x; }
};
struct Mul {
    __device__ double operator()(float x, float y) const { return (double)x * y; }
};
struct AbsHalf {
    __device__ float operator()(__half x) const { return fabsf(__half2float(x)); }
};
struct SumSquares {
    __host__ __device__ float operator()(float a, float x) const { return a + x * x; }
};

template <typename Call> static void* workspace(Call call, size_t* bytes) {
    WK_CUDA(call(nullptr, bytes));
    return wk_workspace(*bytes);
}

Test(transform_reduce, sum_of_squares_and_dot) {
    WK_REQUIRE_GPU();
    const long long sizes[] = {1, 2, 3, 31, 1000, 4097, 65536 + 7, (1 << 22) + 3};
    wk_rng r = wk_rng_make(5);
    const long long maxN = (1 << 22) + 3 + 8;
    std::vector<float> a(maxN), b(maxN);
    for (long long i = 0; i < maxN; ++i) {
        a[i] = (float)wk_uniform(&r, -2, 2);
        b[i] = (float)wk_uniform(&r, -2, 2);
    }
    float* da = wk_alloc<float>(maxN);
    float* db = wk_alloc<float>(maxN);
    wk_upload(da, a.data(), maxN);
    wk_upload(db, b.data(), maxN);
    float* dsq = wk_alloc<float>(1);
    double* ddot = wk_alloc<double>(1);
    for (long long n : sizes)
        for (int offA : {0, 1, 3})
            for (int offB : {0, 1, 2}) {
                if (n > 5000 && offB != offA && offB != 0) continue;
                double sq = 0, dot = 0, abs2 = 0;
                for (long long i = 0; i < n; ++i) {
                    sq += (double)a[offA + i] * a[offA + i];
                    dot += (double)a[offA + i] * b[offB + i];
                    abs2 += fabs((double)a[offA + i] * b[offB + i]);
                }
                size_t bytes = 0;
                auto callSq = [&](void* w, size_t* s) {
                    return warpkit::deviceTransformReduce(da + offA, dsq, n, Square{}, warpkit::Sum{}, 0.0f, w, s);
                };
                auto callDot = [&](void* w, size_t* s) {
                    return warpkit::deviceTransformReduce(da + offA, db + offB, ddot, n, Mul{}, warpkit::Sum{}, 0.0, w,
                                                          s);
                };
                void* w = workspace(callSq, &bytes);
                wk_poison(dsq, 1);
                WK_CUDA(callSq(w, &bytes));
                WK_CUDA(cudaFree(w));
                w = workspace(callDot, &bytes);
                wk_poison(ddot, 1);
                WK_CUDA(callDot(w, &bytes));
                double gotDot;
                wk_download(&gotDot, ddot, 1);
                WK_CUDA(callDot(w, &bytes)); // same bits again
                double again;
                wk_download(&again, ddot, 1);
                WK_CUDA(cudaFree(w));
                float gotSq;
                wk_download(&gotSq, dsq, 1);
                cr_expect(fabs(gotSq - sq) <= 1e-5 * sq + 1e-6, "sum of squares n=%lld off %d: %.9g want %.9g", n, offA,
                          gotSq, sq);
                cr_expect(fabs(gotDot - dot) <= 1e-10 * abs2 + 1e-12, "dot n=%lld off %d/%d: %.17g want %.17g", n, offA,
                          offB, gotDot, dot);
                cr_expect(memcmp(&gotDot, &again, sizeof again) == 0, "dot n=%lld: not deterministic", n);
            }
    cudaFree(da);
    cudaFree(db);
    cudaFree(dsq);
    cudaFree(ddot);
}

Test(transform_reduce, half_max_abs_empty_and_bad_arguments) {
    WK_REQUIRE_GPU();
    const int n = 777;
    std::vector<__half> h(n);
    double want = 0;
    wk_rng r = wk_rng_make(9);
    for (int i = 0; i < n; ++i) {
        h[i] = __float2half_rn((float)wk_uniform(&r, -100, 100));
        want = fmax(want, fabs((double)__half2float(h[i])));
    }
    __half* dh = wk_alloc<__half>(n);
    wk_upload(dh, h.data(), n);
    float* out = wk_alloc<float>(1);
    size_t bytes = 0;
    auto call = [&](long long m, void* w, size_t* s) {
        return warpkit::deviceTransformReduce(dh, out, m, AbsHalf{}, warpkit::Max{}, 0.0f, w, s);
    };
    void* w = workspace([&](void* ws, size_t* s) { return call(n, ws, s); }, &bytes);
    wk_poison(out, 1);
    WK_CUDA(call(n, w, &bytes));
    float got;
    wk_download(&got, out, 1);
    cr_expect(got == (float)want, "max |x|: %g want %g", got, want);
    wk_poison(out, 1);
    WK_CUDA(call(0, w, &bytes));
    wk_download(&got, out, 1);
    cr_expect(got == 0.0f, "n = 0 gives init: %g", got);
    // Bad arguments: cudaErrorInvalidValue, and out not written.
    wk_poison(out, 1);
    size_t small = 1;
    cr_expect(call(n, w, &small) == cudaErrorInvalidValue);
    cr_expect(call(-1, w, &bytes) == cudaErrorInvalidValue);
    cr_expect(call(n, w, nullptr) == cudaErrorInvalidValue, "null workspaceBytes");
    // Two inputs (a workspace of their own size): a, b or out null with n > 0.
    const float* fa = reinterpret_cast<const float*>(dh); // device memory, never read by a refused call
    size_t bytes2 = 0;
    void* w2 = workspace(
        [&](void* ws, size_t* s) {
            return warpkit::deviceTransformReduce(fa, fa, out, 5, Mul{}, warpkit::Sum{}, 0.0f, ws, s);
        },
        &bytes2);
    const char* nulls[] = {"a and b", "a", "b", "out"};
    for (int k = 0; k < 4; ++k) {
        const float* a = k <= 1 ? nullptr : fa;
        const float* b = k == 0 || k == 2 ? nullptr : fa;
        cr_expect(warpkit::deviceTransformReduce(a, b, k == 3 ? nullptr : out, 5, Mul{}, warpkit::Sum{}, 0.0f, w2,
                                                 &bytes2) == cudaErrorInvalidValue,
                  "two inputs, %s null: accepted", nulls[k]);
    }
    WK_LAUNCHED();
    unsigned bits = 0;
    WK_CUDA(cudaMemcpy(&bits, out, 4, cudaMemcpyDeviceToHost));
    cr_expect(bits == 0xa5a5a5a5u, "a refused call wrote out (0x%08x)", bits);
    WK_CUDA(cudaFree(w2));
    WK_CUDA(cudaFree(w));
    cudaFree(dh);
    cudaFree(out);
}

// The trap: deviceReduce's op folds AND combines, so a squaring op squares partials too.
Test(transform_reduce, squaring_operator_trap) {
    WK_REQUIRE_GPU();
    const long long n = 1 << 20;
    std::vector<float> h(n, 1.0f);
    float* d = wk_alloc<float>(n);
    wk_upload(d, h.data(), n);
    float* out = wk_alloc<float>(2);
    size_t bytes = 0;
    auto trap = [&](void* w, size_t* s) { return warpkit::deviceReduce(d, out, n, SumSquares{}, 0.0f, w, s); };
    void* w = workspace(trap, &bytes);
    WK_CUDA(trap(w, &bytes));
    WK_CUDA(warpkit::deviceTransformReduce(d, out + 1, n, Square{}, warpkit::Sum{}, 0.0f, w, &bytes));
    float got[2];
    wk_download(got, out, 2);
    cr_expect(got[1] == (float)n, "transform form: %g want %lld", got[1], n);
    cr_expect(got[0] != (float)n, "the squaring operator was expected to square the partials (got the right sum)");
    WK_CUDA(cudaFree(w));
    cudaFree(d);
    cudaFree(out);
}
