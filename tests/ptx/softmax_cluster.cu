// PTX shape of the cluster exchange (sm_90): clusterReduce and the device layer's cluster kernels
// swap values with st.async into each other's shared memory, and the only cluster barrier is one
// relaxed arrive (plus its wait). A cluster arrive with release semantics (cluster.sync(),
// barrier.cluster.arrive[.release]) waits for the block's earlier memory accesses; on an SM busy
// with other blocks' stores that cost ~5 us a row on H100 (docs/design.md).
// @arch sm_90
// @nolocal
// @expect wk_cluster_sum >= 1 st\.async\.shared::cluster
// @expect wk_cluster_sum == 1 barrier\.cluster\.arrive\.relaxed
// @expect wk_cluster_sum == 0 barrier\.cluster\.arrive(\.release)?(\.aligned)?;
// @expect [A-Za-z0-9_]*softmaxStagedKernelI6__halfLi0E[A-Za-z0-9_]* >= 1 st\.async\.shared::cluster
// @expect [A-Za-z0-9_]*softmaxStagedKernelI6__halfLi0E[A-Za-z0-9_]* == 1 barrier\.cluster\.arrive\.relaxed
// @expect [A-Za-z0-9_]*softmaxStagedKernelI6__halfLi0E[A-Za-z0-9_]* == 0 barrier\.cluster\.arrive(\.release)?(\.aligned)?;
// @expect [A-Za-z0-9_]*softmaxBlockKernelIfLi0ELi256ELi4ELb0E[A-Za-z0-9_]* >= 1 st\.async\.shared::cluster
// @expect [A-Za-z0-9_]*softmaxBlockKernelIfLi0ELi256ELi4ELb0E[A-Za-z0-9_]* == 1 barrier\.cluster\.arrive\.relaxed
// @expect [A-Za-z0-9_]*softmaxBlockKernelIfLi0ELi256ELi4ELb0E[A-Za-z0-9_]* == 0 barrier\.cluster\.arrive(\.release)?(\.aligned)?;
#include <warpkit/device/softmax.cuh>

// A user kernel: the cluster-wide sum of one value a block, twice (two rounds).
extern "C" __global__ void wk_cluster_sum(const float* in, float* out) {
    __shared__ warpkit::ClusterExchange<float> x;
    unsigned round = warpkit::clusterExchangeInit(x);
    const float a = warpkit::clusterReduce(x, round, in[blockIdx.x], warpkit::Sum{});
    const float b = warpkit::clusterReduce(x, round, a * in[blockIdx.x], warpkit::Max{});
    if (threadIdx.x == 0) out[blockIdx.x] = a + b;
}

// The device layer's kernels, as rowSoftmax launches them.
template __global__ void
warpkit::detail::softmaxStagedKernel<__half, warpkit::SoftmaxPlain, warpkit::detail::kStageThreads>(
    const __half*, __half*, int, long long, long long, bool, int, int);
template __global__ void warpkit::detail::softmaxBlockKernel<float, warpkit::SoftmaxPlain, 256, 4, false>(
    const float*, float*, int, long long, long long, bool, int);
