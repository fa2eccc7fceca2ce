// Tests of include/warpkit/cluster/reduce.cuh and cluster/softmax.cuh on sm_90 thread-block
// clusters of 1..16 blocks: clusterReduce of 4-, 8-, 12-, 16- and 64-byte values, a
// non-commutative operator (2x2 matrix products mod a prime, so the rank order matters), clusterGather
// and clusterPart (every block's part read by every thread, rank-weighted), several
// rounds back to back with no barrier of the caller's between them, clusterReduceSoftmaxState and
// clusterSoftmax of rows split over the blocks. Every thread's result is checked. Without
// clusters (before sm_90) each block is its own cluster: the same kernels check that.
#include "../softmax_common.cuh"
#include <warpkit/cluster/softmax.cuh>

namespace {
constexpr unsigned kP = 1000003u;
struct Mat { unsigned a, b, c, d; }; // 16 bytes
struct MatMul {
    __host__ __device__ Mat operator()(Mat x, Mat y) const {
        auto m = [](unsigned p, unsigned q, unsigned r, unsigned s) {
            return (unsigned)(((unsigned long long)p * q + (unsigned long long)r * s) % kP);
        };
        return Mat{m(x.a, y.a, x.b, y.c), m(x.a, y.b, x.b, y.d), m(x.c, y.a, x.d, y.c), m(x.c, y.b, x.d, y.d)};
    }
};
struct Tri { int s; int mx; int mn; };                 // 12 bytes
struct TriOp {
    __host__ __device__ Tri operator()(Tri x, Tri y) const {
        return Tri{x.s + y.s, x.mx > y.mx ? x.mx : y.mx, x.mn < y.mn ? x.mn : y.mn};
    }
};
struct Big { long long v[8]; };                        // 64 bytes
struct BigOp {
    __host__ __device__ Big operator()(Big x, Big y) const {
        Big r;
        for (int k = 0; k < 8; ++k) r.v[k] = x.v[k] + y.v[k];
        return r;
    }
};

__host__ __device__ Mat matOf(unsigned g) { return Mat{g % 7 + 1, g % 5, g % 3, g % 11 + 1}; }
__host__ __device__ Tri triOf(unsigned g) { return Tri{(int)(g * 37 % 101), (int)(g * 13 % 97), (int)(g * 29 % 89)}; }
__host__ __device__ Big bigOf(unsigned g) {
    Big b;
    for (int k = 0; k < 8; ++k) b.v[k] = (long long)(g * 3 + k) % 17;
    return b;
}

/// Every thread of every block, rounds 0..kRounds-1: each exchange's result when block rank k
/// brings the value of g = k * 7 + round.
constexpr int kRounds = 3;
struct Out {
    int sum;
    double dsum;
    Mat mat;
    Tri tri;
    Big big;
    int gath; // clusterGather / clusterPart: sum over ranks k of (k + 1) * triWeight(block k's value)
};
__host__ __device__ int triWeight(Tri t) { return t.s + 3 * t.mx + 7 * t.mn; }

__global__ void cluster_reduce_kernel(Out* out) {
    __shared__ warpkit::ClusterExchange<int> xi;
    __shared__ warpkit::ClusterExchange<double> xd;
    __shared__ warpkit::ClusterExchange<Mat> xm;
    __shared__ warpkit::ClusterExchange<Tri> xt;
    __shared__ warpkit::ClusterExchange<Big> xb;
    unsigned ri = warpkit::clusterExchangeInit(xi), rd = warpkit::clusterExchangeInit(xd);
    unsigned rm = warpkit::clusterExchangeInit(xm), rt = warpkit::clusterExchangeInit(xt);
    unsigned rb = warpkit::clusterExchangeInit(xb);
    __shared__ warpkit::ClusterExchange<Tri> xg;
    unsigned rg = warpkit::clusterExchangeInit(xg);
    const unsigned rank = warpkit::clusterBlockRank();
    for (int q = 0; q < kRounds; ++q) {
        const unsigned g = rank * 7 + q;
        Out o;
        o.sum = warpkit::clusterReduce(xi, ri, (int)g, warpkit::Sum{});
        o.dsum = warpkit::clusterReduce(xd, rd, 0.5 * g, warpkit::Sum{});
        o.mat = warpkit::clusterReduce(xm, rm, matOf(g), MatMul{});
        o.tri = warpkit::clusterReduce(xt, rt, triOf(g), TriOp{});
        o.big = warpkit::clusterReduce(xb, rb, bigOf(g), BigOp{});
        const int nb = (int)warpkit::clusterBlocks();
        o.gath = nb > 1 ? 0 : triWeight(triOf(g));
        if (nb > 1) {
            warpkit::clusterGather(xg, rg, triOf(g));
            for (int k = 0; k < nb; ++k) o.gath += (k + 1) * triWeight(warpkit::clusterPart(xg, rg, k));
        }
        out[((size_t)blockIdx.x * blockDim.x + threadIdx.x) * kRounds + q] = o;
    }
}

/// Softmax of rows split over the cluster's blocks: block rank k holds columns
/// [k * threads * K, ...) of row blockIdx.x / n; thread t slot j holds column k*B*K + j*B + t.
template <int B, int K>
__global__ void cluster_softmax_kernel(const float* x, float* y, int cols, int kind, warpkit::SoftmaxState* st) {
    __shared__ warpkit::ClusterExchange<warpkit::SoftmaxState> xs;
    unsigned round = warpkit::clusterExchangeInit(xs);
    const int n = (int)warpkit::clusterBlocks(), rank = (int)warpkit::clusterBlockRank(), t = threadIdx.x;
    const long long row = blockIdx.x / n;
    float v[K];
    for (int j = 0; j < K; ++j) {
        const int c = rank * B * K + j * B + t;
        v[j] = c < cols ? x[row * cols + c] : -INFINITY;
    }
    warpkit::SoftmaxState s = kind == 0 ? warpkit::clusterSoftmax<B, K, warpkit::SoftmaxPlain>(v, xs, round)
                                        : warpkit::clusterSoftmax<B, K, warpkit::SoftmaxLog>(v, xs, round);
    for (int j = 0; j < K; ++j) {
        const int c = rank * B * K + j * B + t;
        if (c < cols) y[row * cols + c] = v[j];
    }
    // A second round on the same exchange: the merge of the blocks' own (max, 1) states.
    const warpkit::SoftmaxState m = warpkit::clusterReduceSoftmaxState(xs, round, warpkit::SoftmaxState{(float)rank, 1.0f});
    if (t == 0) {
        st[2 * blockIdx.x] = s;
        st[2 * blockIdx.x + 1] = m;
    }
}

} // namespace

static bool clusters_here(void) {
    int dev = 0, major = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    return major >= 9;
}

Test(cluster, reduce_every_size_type_and_round) {
    WK_REQUIRE_GPU();
    const bool cl = clusters_here();
    if (!cl) cr_log_info("no clusters on this GPU: every block is a cluster of one");
    int bad = 0;
    for (int n : {1, 2, 3, 4, 5, 8, 12, 16}) {
        const int clusters = 5, threads = 96;
        const int blocks = clusters * n;
        Out* d = wk_alloc<Out>((size_t)blocks * threads * kRounds);
        wk_poison(d, (size_t)blocks * threads * kRounds);
        if (cl && n > 8)
            WK_CUDA(cudaFuncSetAttribute(cluster_reduce_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        cudaLaunchAttribute attr[1];
        cudaLaunchConfig_t cfg =
            wk_cluster_config(dim3((unsigned)blocks), dim3((unsigned)threads), cl ? (unsigned)n : 0u, attr);
        WK_CUDA(cudaLaunchKernelEx(&cfg, cluster_reduce_kernel, d));
        WK_LAUNCHED();
        std::vector<Out> h((size_t)blocks * threads * kRounds);
        wk_download(h.data(), d, h.size());
        const int cn = cl ? n : 1; // blocks a cluster really has
        for (int b = 0; b < blocks && bad < 5; ++b) {
            for (int q = 0; q < kRounds; ++q) {
                int s = 0;
                double ds = 0;
                Mat m{1, 0, 0, 1};
                Tri tr = triOf((unsigned)(q));
                Big bg = bigOf((unsigned)q);
                int gw = 0;
                for (int k = 0; k < cn; ++k) {
                    const unsigned g = (unsigned)(k * 7 + q);
                    s += (int)g;
                    ds += 0.5 * g;
                    m = MatMul{}(m, matOf(g));
                    if (k > 0) { tr = TriOp{}(tr, triOf(g)); bg = BigOp{}(bg, bigOf(g)); }
                    gw += (k + 1) * triWeight(triOf(g));
                }
                for (int t = 0; t < threads; ++t) {
                    const Out& o = h[((size_t)b * threads + t) * kRounds + q];
                    const bool ok = o.sum == s && o.dsum == ds && memcmp(&o.mat, &m, sizeof m) == 0 &&
                                    memcmp(&o.tri, &tr, sizeof tr) == 0 && memcmp(&o.big, &bg, sizeof bg) == 0 &&
                                    o.gath == gw;
                    if (!ok && bad++ < 5)
                        cr_log_error("clusterReduce, clusters of %d: block %d thread %d round %d: sum %d (want %d), "
                                     "dsum %g (%g), "
                                     "mat %u %u %u %u (%u %u %u %u), gather %d (%d)",
                                     n, b, t, q, o.sum, s, o.dsum, ds, o.mat.a, o.mat.b, o.mat.c, o.mat.d, m.a, m.b,
                                     m.c, m.d, o.gath, gw);
                }
            }
        }
        cudaFree(d);
    }
    cr_expect(bad == 0, "clusterReduce: %d wrong results", bad);
}

template <int B, int K> static int cluster_softmax_case(int n, int cols, int kind, bool cl) {
    const int rows = 7, cn = cl ? n : 1;
    if (cols > cn * B * K) cols = cn * B * K;
    wk_rng r = wk_rng_make(4000 + n * 31 + cols + kind);
    std::vector<float> hx((size_t)rows * cols), hy(hx.size());
    for (int q = 0; q < rows; ++q) fill_row<float>(&r, &hx[(size_t)q * cols], cols, q + kind * 9);
    float *dx = wk_alloc<float>(hx.size()), *dy = wk_alloc<float>(hx.size());
    warpkit::SoftmaxState* dst = wk_alloc<warpkit::SoftmaxState>((size_t)rows * n * 2);
    wk_upload(dx, hx.data(), hx.size());
    wk_poison(dy, hx.size());
    auto kern = cluster_softmax_kernel<B, K>;
    if (cl && n > 8) WK_CUDA(cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaLaunchAttribute attr[1];
    cudaLaunchConfig_t cfg =
        wk_cluster_config(dim3((unsigned)(rows * cn)), dim3((unsigned)B), cl ? (unsigned)n : 0u, attr);
    WK_CUDA(cudaLaunchKernelEx(&cfg, kern, (const float*)dx, dy, cols, kind, dst));
    WK_LAUNCHED();
    wk_download(hy.data(), dy, hy.size());
    std::vector<warpkit::SoftmaxState> hs((size_t)rows * cn * 2);
    wk_download(hs.data(), dst, hs.size());
    int bad = check_rows_ld("clusterSoftmax", kind, hx.data(), cols, hy.data(), cols, rows, cols);
    for (int q = 0; q < rows * cn && bad < 5; ++q) {
        const warpkit::SoftmaxState m = hs[2 * q + 1];
        double want = 0;
        for (int k = 0; k < cn; ++k) want += exp((double)k - (cn - 1));
        if (!(m.max == (float)(cn - 1) && fabs(m.sum - want) <= 1e-5 * want) && bad++ < 5)
            cr_log_error("clusterReduceSoftmaxState, clusters of %d, block %d: {%g, %g} want {%d, %g}", n, q, m.max, m.sum, cn - 1, want);
    }
    cudaFree(dx);
    cudaFree(dy);
    cudaFree(dst);
    return bad;
}

Test(cluster, softmax_rows_split_over_blocks) {
    WK_REQUIRE_GPU();
    const bool cl = clusters_here();
    int bad = 0;
    for (int n : {1, 2, 3, 8, 16})
        for (int kind : {0, 1}) {
            bad += cluster_softmax_case<128, 4>(n, 128 * 4 * n - 37, kind, cl);
            bad += cluster_softmax_case<256, 2>(n, 300 * n + 1, kind, cl); // the last blocks hold only -inf
        }
    cr_expect(bad == 0, "clusterSoftmax: %d mismatches", bad);
}
