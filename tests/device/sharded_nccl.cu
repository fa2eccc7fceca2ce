// Two-GPU test of include/warpkit/device/sharded.cuh with NCCL: each row of logits split over two
// GPUs at odd boundaries, one host thread a GPU, the statistics all-gathered with NCCL (12 bytes a
// row for cross-entropy, 8 for softmax), merged in rank order, each shard finished; the loss
// and gradient against one GPU's rowCrossEntropy of the whole rows, the softmax against its
// rowSoftmax, and both ranks' losses the same bits. fp32 and bf16; rows with NaN, +inf and an all
// -inf shard; ignored and out-of-range targets. Skips, saying why, without NCCL at build time
// (make finds it through NCCL_HOME or PyTorch's nvidia-nccl package) or with fewer than two GPUs.
#include "../common.cuh"
#include "../softmax_common.cuh" // floor_of
#include <warpkit/device/cross_entropy.cuh>
#include <warpkit/device/sharded.cuh>
#include <warpkit/device/softmax.cuh>
#include <vector>
#ifdef WARPKIT_HAVE_NCCL
#include <nccl.h>

/// A rank's results: its loss (every row), and its shard's gradient and softmax rows.
template <typename T> struct NcRank {
    std::vector<float> loss;
    std::vector<T> grad, y;
    int errors = 0;
};

/// Rank k of 2: columns [begin, begin + cols) of the host rows x (rows x vocab), through NCCL.
template <typename T> static void nc_rank(int k, ncclComm_t comm, const std::vector<T>& x,
                                          const std::vector<long long>& t, long long rows, int vocab, int begin,
                                          int cols, float scale, NcRank<T>* out) {
    auto ok = [&](cudaError_t e) { out->errors += e != cudaSuccess; };
    ok(cudaSetDevice(k));
    cudaStream_t s;
    ok(cudaStreamCreate(&s));
    const size_t n = (size_t)rows * cols;
    T *dx, *dg, *dy;
    float* dl;
    long long* dt;
    warpkit::RowShardStats *mine, *all;
    warpkit::SoftmaxState *smine, *sall;
    ok(cudaMalloc(&dx, n * sizeof(T)));
    ok(cudaMalloc(&dg, n * sizeof(T)));
    ok(cudaMalloc(&dy, n * sizeof(T)));
    ok(cudaMalloc(&dl, rows * 4));
    ok(cudaMalloc(&dt, rows * 8));
    ok(cudaMalloc(&mine, rows * sizeof(*mine)));
    ok(cudaMalloc(&all, 2 * rows * sizeof(*all)));
    ok(cudaMalloc(&smine, rows * sizeof(*smine)));
    ok(cudaMalloc(&sall, 2 * rows * sizeof(*sall)));
    ok(cudaMemcpy2D(dx, cols * sizeof(T), x.data() + begin, vocab * sizeof(T), cols * sizeof(T), rows,
                    cudaMemcpyHostToDevice));
    ok(cudaMemcpy(dt, t.data(), rows * 8, cudaMemcpyHostToDevice));
    ok(warpkit::rowSoftmaxStats(dx, dt, begin, mine, rows, cols, cols, s));
    ok(warpkit::rowSoftmaxStats(dx, smine, rows, cols, cols, s));
    out->errors += ncclGroupStart() != ncclSuccess;
    out->errors += ncclAllGather(mine, all, rows * 3, ncclFloat, comm, s) != ncclSuccess;
    out->errors += ncclAllGather(smine, sall, rows * 2, ncclFloat, comm, s) != ncclSuccess;
    out->errors += ncclGroupEnd() != ncclSuccess;
    ok(warpkit::rowStatsMerge(all, all, 2, rows, s));
    ok(warpkit::rowStatsMerge(sall, sall, 2, rows, s));
    ok(warpkit::rowCrossEntropyFinish(dx, dt, all, dl, dg, rows, cols, begin, vocab, -100LL, scale, cols, cols, s));
    ok(warpkit::rowSoftmaxApply(dx, dy, sall, rows, cols, warpkit::SoftmaxPlain, cols, cols, s));
    out->loss.resize(rows);
    out->grad.resize(n);
    out->y.resize(n);
    ok(cudaMemcpyAsync(out->loss.data(), dl, rows * 4, cudaMemcpyDeviceToHost, s));
    ok(cudaMemcpyAsync(out->grad.data(), dg, n * sizeof(T), cudaMemcpyDeviceToHost, s));
    ok(cudaMemcpyAsync(out->y.data(), dy, n * sizeof(T), cudaMemcpyDeviceToHost, s));
    ok(cudaStreamSynchronize(s));
    cudaFree(dx), cudaFree(dg), cudaFree(dy), cudaFree(dl), cudaFree(dt);
    cudaFree(mine), cudaFree(all), cudaFree(smine), cudaFree(sall);
    ok(cudaStreamDestroy(s));
}

/// One case: rows x vocab split at `split`. Returns mismatches.
template <typename T> static int nc_case(ncclComm_t* comms, long long rows, int vocab, int split, uint64_t seed) {
    wk_rng r = wk_rng_make(seed);
    std::vector<T> x((size_t)rows * vocab);
    std::vector<long long> t(rows);
    for (size_t i = 0; i < x.size(); ++i) x[i] = wk_from_double<T>(wk_uniform(&r, -12.0, 12.0));
    for (long long q = 0; q < rows; ++q) {
        T* row = &x[(size_t)q * vocab];
        if (q % 9 == 2) row[wk_int(&r, 0, vocab - 1)] = wk_from_double<T>(NAN);
        if (q % 9 == 4) row[wk_int(&r, split, vocab - 1)] = wk_from_double<T>(INFINITY);
        if (q % 9 == 6)
            for (int j = 0; j < split; ++j) row[j] = wk_from_double<T>(-INFINITY); // rank 0's shard all -inf
        t[q] = q % 11 == 3 ? -100 : q % 13 == 5 ? vocab : wk_int(&r, 0, vocab - 1);
    }
    const float scale = 1.0f / 3.0f;
    // One GPU, the whole rows.
    WK_CUDA(cudaSetDevice(0));
    T* dx = wk_alloc<T>(x.size());
    T* dg = wk_alloc<T>(x.size());
    T* dy = wk_alloc<T>(x.size());
    float* dl = wk_alloc<float>(rows);
    long long* dt = wk_alloc<long long>(rows);
    wk_upload(dx, x.data(), x.size());
    wk_upload(dt, t.data(), rows);
    WK_CUDA(warpkit::rowCrossEntropy(dx, dt, dl, dg, rows, vocab, -100LL, 0.0f, scale, vocab, vocab));
    WK_CUDA(warpkit::rowSoftmax(dx, dy, rows, vocab));
    std::vector<T> g(x.size()), y(x.size());
    std::vector<float> l(rows);
    wk_download(g.data(), dg, g.size());
    wk_download(y.data(), dy, y.size());
    wk_download(l.data(), dl, rows);
    cudaFree(dx), cudaFree(dg), cudaFree(dy), cudaFree(dl), cudaFree(dt);
    // Two GPUs.
    NcRank<T> rk[2];
    std::thread a(nc_rank<T>, 0, comms[0], std::cref(x), std::cref(t), rows, vocab, 0, split, scale, &rk[0]);
    std::thread b(nc_rank<T>, 1, comms[1], std::cref(x), std::cref(t), rows, vocab, split, vocab - split, scale,
                  &rk[1]);
    a.join();
    b.join();
    int bad = rk[0].errors + rk[1].errors;
    if (bad) cr_log_error("%s %lld x %d: %d calls failed on the ranks", wk_type_name<T>(), rows, vocab, bad);
    const double rel = sizeof(T) == 4 ? 4e-6 : 2 * wk_eps<T>(), fl = floor_of<T>();
    for (long long q = 0; q < rows && bad < 3; ++q) {
        if (memcmp(&rk[0].loss[q], &rk[1].loss[q], 4) != 0)
            cr_log_error("%s row %lld: the ranks' losses differ (%.9g, %.9g)", wk_type_name<T>(), q, rk[0].loss[q],
                         rk[1].loss[q]),
                ++bad;
        const double want = l[q], got = rk[0].loss[q];
        if (isnan(want) ? !isnan(got) : isinf(want) ? got != want : !(fabs(got - want) <= 2e-5 * (1 + fabs(want))))
            cr_log_error("%s %lld x %d row %lld: loss %.9g, one GPU %.9g", wk_type_name<T>(), rows, vocab, q, got,
                         want),
                ++bad;
        for (int j = 0; j < vocab && bad < 3; ++j) {
            const int k = j < split ? 0 : 1, c = k ? j - split : j, w = k ? vocab - split : split;
            const double pairs[2][2] = {
                {wk_to_double(rk[k].grad[(size_t)q * w + c]), wk_to_double(g[(size_t)q * vocab + j])},
                {wk_to_double(rk[k].y[(size_t)q * w + c]), wk_to_double(y[(size_t)q * vocab + j])}};
            for (const auto& p : pairs)
                if (isnan(p[1]) ? !isnan(p[0]) : !(fabs(p[0] - p[1]) <= rel * fabs(p[1]) + fl))
                    cr_log_error("%s %lld x %d row %lld col %d: %.9g, one GPU %.9g", wk_type_name<T>(), rows, vocab, q,
                                 j, p[0], p[1]),
                        ++bad;
        }
    }
    return bad;
}
#endif

Test(device_sharded_nccl, two_gpus) {
#ifndef WARPKIT_HAVE_NCCL
    cr_skip_test("built without NCCL (nccl.h not found: set NCCL_HOME or pip install nvidia-nccl-cu12)");
#else
    WK_REQUIRE_GPU();
    int n = 0;
    WK_CUDA(cudaGetDeviceCount(&n));
    if (n < 2) cr_skip_test("needs two GPUs, found %d", n);
    // racecheck (make sanitize's WARPKIT_QUICK=2) would judge NCCL's own kernels; warpkit's kernels of these calls
    // run under it in tests/device/sharded.cu.
    if (wk_quick_level() >= 2)
        cr_skip_test("racecheck: NCCL's kernels are not warpkit's (see tests/device/sharded.cu)");
    ncclComm_t comms[2];
    const int devs[2] = {0, 1};
    cr_assert(ncclCommInitAll(comms, 2, devs) == ncclSuccess, "ncclCommInitAll");
    int bad = 0;
    const struct {
        long long rows;
        int vocab, split;
    } cases[] = {{1, 2, 1}, {37, 1001, 333}, {5, 128257, 64129}, {300, 151936, 70001}};
    for (const auto& c : cases) {
        if (wk_quick() && c.vocab > 2000) continue; // under the sanitizers: the short rows
        bad += nc_case<float>(comms, c.rows, c.vocab, c.split, 0x5a00 + c.vocab);
        bad += nc_case<__nv_bfloat16>(comms, c.rows, c.vocab, c.split, 0x5b00 + c.vocab);
    }
    ncclCommDestroy(comms[0]);
    ncclCommDestroy(comms[1]);
    cr_expect(bad == 0, "%d mismatches between the two-GPU results and one GPU's", bad);
#endif
}
