// samples/moe_router.cu: a mixture-of-experts router, one warp a token: the softmax of the token's
// E expert logits (E = 64, 128 or 256), then its 8 best experts with their probabilities
// renormalised to sum to 1. One kernel; each lane holds E / 32 consecutive experts in registers.
//
// warpSoftmax turns the lane's logits into probabilities (kept, e.g. for a load-balancing loss);
// warpTopK ranks the experts by logit (softmax keeps the order, and logits never round to a tie
// that their probabilities would), ties to the lower expert; ranks 0..7 land in lanes 0 .. 8/K - 1,
// whose probabilities are summed with a warp reduction and divided out. main() checks every token
// against a double-precision CPU reference.
#include <warpkit/topk.cuh>
#include <warpkit/softmax.cuh>
#include <warpkit/reduce.cuh>

#include <algorithm>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

#define CHECK(call)                                                     \
    do {                                                                \
        if (cudaError_t e_ = (call)) {                                  \
            fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_)); \
            exit(1);                                                    \
        }                                                               \
    } while (0)

constexpr int kTop = 8, kThreads = 256;

template <int E> __global__ void __launch_bounds__(kThreads)
    route(const float* __restrict__ logits, long long tokens, float* probs, int* experts, float* weights) {
    constexpr int K = E / 32; // experts a lane
    const long long token = ((long long)blockIdx.x * kThreads + threadIdx.x) / 32;
    if (token >= tokens) return; // whole warps leave together
    const int lane = threadIdx.x % 32;
    float l[K], p[K];
    for (int j = 0; j < K; ++j) p[j] = l[j] = logits[token * E + lane * K + j];
    warpkit::warpSoftmax<32, K>(p);
    for (int j = 0; j < K; ++j) probs[token * E + lane * K + j] = p[j];
    float rankedLogit[K];
    unsigned expert[K];
    warpkit::warpTopK<K>(l, E, true, rankedLogit, expert); // rank lane * K + j in slot j
    // The probabilities of the ranked experts: each lane fetches its own from the lane that holds them.
    float rankedProb[K], top = 0.f;
    for (int j = 0; j < K; ++j) {
        const unsigned e = expert[j];
        float q = 0.f;
        for (int i = 0; i < K; ++i) { // every lane shuffles (converged); each keeps slot e % K of lane e / K
            const float s = __shfl_sync(0xffffffffu, p[i], (int)(e / K));
            if (e % K == (unsigned)i) q = s;
        }
        rankedProb[j] = q;
        if (lane * K + j < kTop) top += q;
    }
    top = warpkit::warpReduceSum(top);
    for (int j = 0; j < K; ++j) {
        const int r = lane * K + j;
        if (r < kTop) {
            experts[token * kTop + r] = (int)expert[j];
            weights[token * kTop + r] = rankedProb[j] / top;
        }
    }
}

template <int E> int run(long long tokens) {
    std::vector<float> h((size_t)(tokens * E));
    unsigned long long rng = 0x3e + E;
    for (auto& v : h) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        v = (float)((rng >> 40) % 4096) / 512.f - 4.f; // steps of 1/512: ties between experts happen
    }
    float *dl, *dp, *dw;
    int* de;
    CHECK(cudaMalloc(&dl, h.size() * sizeof(float)));
    CHECK(cudaMalloc(&dp, h.size() * sizeof(float)));
    CHECK(cudaMalloc(&dw, (size_t)tokens * kTop * sizeof(float)));
    CHECK(cudaMalloc(&de, (size_t)tokens * kTop * sizeof(int)));
    CHECK(cudaMemcpy(dl, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
    const long long blocks = (tokens * 32 + kThreads - 1) / kThreads;
    route<E><<<(unsigned)blocks, kThreads>>>(dl, tokens, dp, de, dw);
    CHECK(cudaGetLastError());
    std::vector<float> w((size_t)tokens * kTop);
    std::vector<int> e((size_t)tokens * kTop);
    CHECK(cudaMemcpy(w.data(), dw, w.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(e.data(), de, e.size() * sizeof(int), cudaMemcpyDeviceToHost));
    int bad = 0;
    std::vector<int> order(E);
    for (long long t = 0; t < tokens; ++t) {
        const float* l = h.data() + t * E;
        for (int i = 0; i < E; ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return l[a] > l[b]; });
        double sum = 0;
        for (int r = 0; r < kTop; ++r) sum += exp((double)l[order[r]] - l[order[0]]);
        for (int r = 0; r < kTop; ++r) {
            const double want = exp((double)l[order[r]] - l[order[0]]) / sum;
            const size_t o = (size_t)t * kTop + r;
            if (e[o] != order[r] || fabs(w[o] - want) > 1e-5) {
                if (bad++ < 5)
                    printf("E=%d token %lld rank %d: expert %d weight %g, want %d %g\n", E, t, r, e[o], w[o], order[r],
                           want);
            }
        }
    }
    printf("E=%3d: %lld tokens routed, %d mismatches\n", E, tokens, bad);
    CHECK(cudaFree(dl));
    CHECK(cudaFree(dp));
    CHECK(cudaFree(dw));
    CHECK(cudaFree(de));
    return bad;
}

int main() {
    const int bad = run<64>(1000) + run<128>(16384) + run<256>(257);
    printf(bad ? "FAILED\n" : "OK\n");
    return bad ? 1 : 0;
}
