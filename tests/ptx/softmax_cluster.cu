// PTX shape of samples/softmax.cu's cluster kernels (sm_90): the blocks of a row swap {max, sum}
// with st.async into each other's shared memory (clusterExchange), and the only cluster barrier
// is one relaxed arrive (plus its wait). A cluster arrive with release semantics (cluster.sync(),
// barrier.cluster.arrive[.release]) waits for the block's earlier memory accesses, and on a busy
// SM that cost ~5 us a row on H100 (notes/issue6.md, session 11).
// @arch sm_90
// @nolocal
// @expect _ZN5rowsm19softmaxStagedKernelI6__halfLi0ELi256E[A-Za-z0-9_]* >= 1 st\.async\.shared::cluster
// @expect _ZN5rowsm19softmaxStagedKernelI6__halfLi0ELi256E[A-Za-z0-9_]* == 1 barrier\.cluster\.arrive\.relaxed
// @expect _ZN5rowsm19softmaxStagedKernelI6__halfLi0ELi256E[A-Za-z0-9_]* == 0 barrier\.cluster\.arrive(\.release)?(\.aligned)?;
// @expect _ZN5rowsm18softmaxBlockKernelIfLi0ELi512ELi4E[A-Za-z0-9_]* >= 1 st\.async\.shared::cluster
// @expect _ZN5rowsm18softmaxBlockKernelIfLi0ELi512ELi4E[A-Za-z0-9_]* == 1 barrier\.cluster\.arrive\.relaxed
// @expect _ZN5rowsm18softmaxBlockKernelIfLi0ELi512ELi4E[A-Za-z0-9_]* == 0 barrier\.cluster\.arrive(\.release)?(\.aligned)?;
#define WARPKIT_SOFTMAX_SAMPLE_NO_MAIN
#include "../../samples/softmax.cu"

// Instantiates every kernel the dispatcher can launch for these types.
void wk_instantiate(float* f, __half* h) {
    rowsm::rowSoftmax<float>(f, f, 1, 1);
    rowsm::rowSoftmax<__half>(h, h, 1, 1);
}
