// samples/gat_softmax.cu: graph-attention edge softmax over CSR offsets, several heads.
//
// A graph attention layer scores every edge (u -> v) once per head and normalises the scores over
// each destination node's in-edges: alpha[e, h] = softmax over the edges e into v of score[e, h].
// With the edges sorted by destination, node v's in-edges are rows offsets[v] .. offsets[v + 1] of
// the [edges, heads] score matrix: one segment per node. warpkit::segmentSoftmax does the whole
// layer's normalisation in one call for any mix of degrees (isolated nodes, hubs), on the stream,
// with no host pass over the offsets. The backward pass is segmentSoftmaxBackward, the same way.
//
// Build: nvcc -std=c++17 -O3 -Iinclude samples/gat_softmax.cu -o gat_softmax
#include <warpkit/device/segment.cuh>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

#define CHECK(call)                                                   \
    do {                                                              \
        cudaError_t e_ = (call);                                      \
        if (e_ != cudaSuccess) {                                      \
            printf("%s failed: %s\n", #call, cudaGetErrorString(e_)); \
            exit(1);                                                  \
        }                                                             \
    } while (0)

int main() {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("no CUDA device: nothing to run\n");
        return 0;
    }
    // A graph of 20000 nodes: most with a few in-edges, some isolated, a few hubs.
    const int nodes = 20000, heads = 4;
    srand(7);
    std::vector<long long> offsets(nodes + 1, 0);
    for (int v = 0; v < nodes; ++v) {
        int degree = rand() % 8;                           // 0..7 in-edges
        if (v % 1000 == 0) degree = 5000 + rand() % 50000; // hubs
        offsets[v + 1] = offsets[v] + degree;
    }
    const long long edges = offsets[nodes];
    std::vector<float> score(edges * heads);
    for (float& s : score) s = 4.0f * rand() / RAND_MAX - 2.0f; // LeakyReLU(a . [Wh_u || Wh_v]) in a real layer

    float *dScore, *dAlpha;
    long long* dOffsets;
    CHECK(cudaMalloc(&dScore, score.size() * sizeof(float)));
    CHECK(cudaMalloc(&dAlpha, score.size() * sizeof(float)));
    CHECK(cudaMalloc(&dOffsets, offsets.size() * sizeof(long long)));
    CHECK(cudaMemcpy(dScore, score.data(), score.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dOffsets, offsets.data(), offsets.size() * sizeof(long long), cudaMemcpyHostToDevice));

    // Two-call workspace rule: ask for the size, allocate once, reuse for every layer of this size.
    size_t bytes = 0;
    CHECK(
        warpkit::segmentSoftmax(dScore, dAlpha, edges, dOffsets, nodes, heads, warpkit::SoftmaxPlain, nullptr, &bytes));
    void* workspace;
    CHECK(cudaMalloc(&workspace, bytes));
    CHECK(warpkit::segmentSoftmax(dScore, dAlpha, edges, dOffsets, nodes, heads, warpkit::SoftmaxPlain, workspace,
                                  &bytes));
    std::vector<float> alpha(score.size());
    CHECK(cudaMemcpy(alpha.data(), dAlpha, alpha.size() * sizeof(float), cudaMemcpyDeviceToHost));

    // Check against the CPU, node by node and head by head: each node's weights sum to 1.
    double worst = 0;
    for (int v = 0; v < nodes; ++v)
        for (int h = 0; h < heads; ++h) {
            double m = -INFINITY, sum = 0;
            for (long long e = offsets[v]; e < offsets[v + 1]; ++e) m = fmax(m, score[e * heads + h]);
            for (long long e = offsets[v]; e < offsets[v + 1]; ++e) sum += exp(score[e * heads + h] - m);
            for (long long e = offsets[v]; e < offsets[v + 1]; ++e) {
                const double want = exp(score[e * heads + h] - m) / sum;
                worst = fmax(worst, fabs(alpha[e * heads + h] - want) / want);
            }
        }
    printf("edge softmax of %lld edges x %d heads over %d nodes: worst relative error %.2e\n", edges, heads, nodes,
           worst);

    // Bad arguments come back as cudaErrorInvalidValue, nothing launched.
    const cudaError_t bad =
        warpkit::segmentSoftmax(dScore, dAlpha, edges, dOffsets, nodes, 0, warpkit::SoftmaxPlain, workspace, &bytes);
    printf("heads = 0: %s\n", cudaGetErrorString(bad));

    CHECK(cudaFree(workspace));
    CHECK(cudaFree(dScore));
    CHECK(cudaFree(dAlpha));
    CHECK(cudaFree(dOffsets));
    const bool ok = worst < 1e-5 && bad == cudaErrorInvalidValue;
    printf("%s\n", ok ? "gat_softmax: OK" : "gat_softmax: FAILED");
    return ok ? 0 : 1;
}
