// samples/vocab_parallel_ce.cu: vocabulary-parallel cross-entropy, forward and backward, on every
// GPU of the machine: GPU k holds columns [begin_k, begin_{k+1}) of every row of logits (a
// tensor-parallel language-model head), one host thread a GPU. Each computes its shard's
// statistics (12 bytes a row), one NCCL all-gather exchanges them, each merges them in rank order
// (the same bits on every GPU) and finishes its shard's loss and gradient. Checked against one
// GPU's rowCrossEntropy of the whole rows and the mean loss on the CPU. Needs NCCL (make finds it
// through NCCL_HOME or PyTorch's nvidia-nccl package) and two GPUs; skips otherwise.
#include <warpkit/device/cross_entropy.cuh>
#include <warpkit/device/sharded.cuh>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
#ifdef WARPKIT_HAVE_NCCL
#include <nccl.h>
#endif

#define CHECK(call)                                                            \
    do {                                                                       \
        cudaError_t e_ = (call);                                               \
        if (e_ != cudaSuccess) {                                               \
            printf("%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

int main() {
#ifndef WARPKIT_HAVE_NCCL
    printf("vocab_parallel_ce: skipped: built without NCCL (nccl.h not found; set NCCL_HOME or install nvidia-nccl)\n");
    return 0;
#else
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess) ndev = 0;
    if (ndev < 2) {
        printf("vocab_parallel_ce: skipped: needs two GPUs, found %d\n", ndev);
        return 0;
    }
    const long long rows = 96;
    const int vocab = 50257; // odd: shards of odd sizes at odd boundaries
    std::vector<float> x((size_t)rows * vocab);
    std::vector<long long> t(rows);
    srand(7);
    for (float& v : x) v = 8.0f * ((float)rand() / RAND_MAX - 0.5f);
    int valid = 0;
    for (long long r = 0; r < rows; ++r) {
        t[r] = r % 17 == 5 ? -100 : rand() % vocab; // a few ignored rows
        valid += t[r] != -100;
    }
    const float scale = 1.0f / valid; // reduction='mean'

    // The reference: one GPU, the whole rows.
    std::vector<float> refLoss(rows), refGrad(x.size());
    {
        CHECK(cudaSetDevice(0));
        float *dx, *dl, *dg;
        long long* dt;
        CHECK(cudaMalloc(&dx, x.size() * 4));
        CHECK(cudaMalloc(&dg, x.size() * 4));
        CHECK(cudaMalloc(&dl, rows * 4));
        CHECK(cudaMalloc(&dt, rows * 8));
        CHECK(cudaMemcpy(dx, x.data(), x.size() * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(dt, t.data(), rows * 8, cudaMemcpyHostToDevice));
        CHECK(warpkit::rowCrossEntropy(dx, dt, dl, dg, rows, vocab, -100LL, 0.0f, scale, vocab, vocab));
        CHECK(cudaMemcpy(refLoss.data(), dl, rows * 4, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(refGrad.data(), dg, x.size() * 4, cudaMemcpyDeviceToHost));
        cudaFree(dx), cudaFree(dg), cudaFree(dl), cudaFree(dt);
    }

    // The sharded run: one communicator and one host thread a GPU.
    std::vector<ncclComm_t> comms(ndev);
    if (ncclCommInitAll(comms.data(), ndev, nullptr) != ncclSuccess) {
        printf("vocab_parallel_ce: ncclCommInitAll failed\n");
        return 1;
    }
    std::vector<std::vector<float>> loss(ndev, std::vector<float>(rows));
    std::vector<float> grad(x.size());
    auto rank = [&](int k) {
        const int begin = (int)((long long)vocab * k / ndev), cols = (int)((long long)vocab * (k + 1) / ndev) - begin;
        CHECK(cudaSetDevice(k));
        cudaStream_t s;
        CHECK(cudaStreamCreate(&s));
        float *dx, *dl;
        long long* dt;
        warpkit::RowShardStats *mine, *all;
        CHECK(cudaMalloc(&dx, (size_t)rows * cols * 4));
        CHECK(cudaMalloc(&dl, rows * 4));
        CHECK(cudaMalloc(&dt, rows * 8));
        CHECK(cudaMalloc(&mine, rows * sizeof(*mine)));
        CHECK(cudaMalloc(&all, ndev * rows * sizeof(*all)));
        CHECK(cudaMemcpy2D(dx, cols * 4, x.data() + begin, (size_t)vocab * 4, cols * 4, rows, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(dt, t.data(), rows * 8, cudaMemcpyHostToDevice));
        // Forward statistics, one all-gather of 12 bytes a row, the merge, loss and gradient in place.
        CHECK(warpkit::rowSoftmaxStats(dx, dt, begin, mine, rows, cols, cols, s));
        if (ncclAllGather(mine, all, rows * 3, ncclFloat, comms[k], s) != ncclSuccess) {
            printf("rank %d: ncclAllGather failed\n", k);
            exit(1);
        }
        CHECK(warpkit::rowStatsMerge(all, all, ndev, rows, s));
        CHECK(warpkit::rowCrossEntropyFinish(dx, dt, all, dl, dx, rows, cols, begin, vocab, -100LL, scale, cols, cols,
                                             s));
        CHECK(cudaMemcpyAsync(loss[k].data(), dl, rows * 4, cudaMemcpyDeviceToHost, s));
        CHECK(cudaMemcpy2DAsync(grad.data() + begin, (size_t)vocab * 4, dx, cols * 4, cols * 4, rows,
                                cudaMemcpyDeviceToHost, s));
        CHECK(cudaStreamSynchronize(s));
        cudaFree(dx), cudaFree(dl), cudaFree(dt), cudaFree(mine), cudaFree(all);
        CHECK(cudaStreamDestroy(s));
    };
    std::vector<std::thread> threads;
    for (int k = 0; k < ndev; ++k) threads.emplace_back(rank, k);
    for (auto& th : threads) th.join();
    for (int k = 0; k < ndev; ++k) ncclCommDestroy(comms[k]);

    // Checks: every rank's loss the same bits; loss and gradient as one GPU's; the mean on the CPU.
    int bad = 0;
    double maxLoss = 0, maxGrad = 0, mean = 0, cpuMean = 0;
    for (long long r = 0; r < rows; ++r) {
        for (int k = 1; k < ndev; ++k) bad += memcmp(&loss[k][r], &loss[0][r], 4) != 0;
        maxLoss = fmax(maxLoss, fabs(loss[0][r] - refLoss[r]) / (1.0 + fabs(refLoss[r])));
        mean += loss[0][r] / valid;
        if (t[r] == -100) continue;
        double m = -INFINITY, sum = 0;
        const float* row = &x[(size_t)r * vocab];
        for (int j = 0; j < vocab; ++j) m = fmax(m, row[j]);
        for (int j = 0; j < vocab; ++j) sum += exp(row[j] - m);
        cpuMean += (m + log(sum) - row[t[r]]) / valid;
    }
    for (size_t i = 0; i < grad.size(); ++i) maxGrad = fmax(maxGrad, fabs(grad[i] - refGrad[i]));
    const bool ok = bad == 0 && maxLoss < 1e-5 && maxGrad < 1e-7 && fabs(mean - cpuMean) < 1e-4 * (1 + fabs(cpuMean));
    printf("vocab_parallel_ce: %d GPUs, %lld rows x %d: mean loss %.6f (CPU %.6f), max loss diff %.2e, max grad diff "
           "%.2e, "
           "ranks %s: %s\n",
           ndev, rows, vocab, mean, cpuMean, maxLoss, maxGrad, bad ? "differ" : "agree", ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
#endif
}
