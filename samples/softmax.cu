// samples/softmax.cu: softmax over the last dimension of a rows x cols matrix (float, __half,
// __nv_bfloat16), with a host dispatcher that picks one of six paths by row length:
//
//   1. Warp:     cols <= 1024 (16-bit: 2048): a segment of Width lanes (1..32) per row, up to 32
//                (16-bit: 64) values per lane, several rows per warp and per thread, row in
//                registers, no barriers.
//   2. Block:    one block per row, 16 values per thread in registers (cols <= 16384; Auto
//                uses it up to 8192).
//   3. Cluster:  (Hopper, sm_90) a thread-block cluster per row (cols <= 262144): each block
//                keeps its slice in registers and pushes its {max, sum} into every other
//                block's shared memory (distributed shared memory, st.async: clusterExchange),
//                so each element is read once and written once however long the row.
//   4. Smem:     one block per row, row staged in dynamic shared memory (up to the device's
//                opt-in limit, 227 KB on H100): the one-read path for GPUs without clusters.
//   5. TwoPass:  online softmax: pass 1 streams the row into a SoftmaxState, pass 2 re-reads it
//                and writes. Any length, any GPU; reads the row twice.
//   6. Staged:   (Hopper) one cluster per row: each block bulk-copies its slice (<= 64 KB) into
//                dynamic shared memory, so several blocks share an SM and their load / reduce /
//                write phases overlap; {max, sum} across the cluster by clusterExchange. Auto uses it for
//                16-bit rows of more than 16384 and fp32 rows of more than 65536. Option
//                kStageGlobal trades the cluster for a {max, sum} exchange through a global
//                workspace (no 16-block limit; launches must not overlap).
//
// Each path is one kernel template below, usable on its own: copy the kernel and the launch lines
// of its `case` in rowSoftmax(). Loads and stores are 16 bytes wide when cols * sizeof(T) is a
// multiple of 16 and the pointers are 16-byte aligned, else element by element (same kernels).
//
// Define WARPKIT_SOFTMAX_SAMPLE_NO_MAIN before including this file to get the kernels and the
// dispatcher without main() (tests/softmax.cu and bench/softmax.cu do).
#include <warpkit/softmax.cuh>
#include <cooperative_groups.h>
#include <stdio.h>

namespace rowsm {

using warpkit::SoftmaxState;

enum Path { PathAuto = 0, PathWarp, PathBlock, PathCluster, PathSmem, PathTwoPass, PathStaged };
static const char* pathName(Path p) {
    static const char* n[] = {"auto", "warp", "block", "cluster", "smem", "twopass", "staged"};
    return n[p];
}

template <typename T> struct Vec { static constexpr int V = 16 / (int)sizeof(T); };

/// Move V elements: 16-byte access (vec) or V scalar accesses at stride `stride`.
template <typename T, int V> __device__ __forceinline__ void loadV(T* dst, const T* src, bool vec, int stride) {
    if (vec) {
        const uint4 u = __ldg(reinterpret_cast<const uint4*>(src));
        __builtin_memcpy(dst, &u, 16);
    } else {
#pragma unroll
        for (int i = 0; i < V; ++i) dst[i] = src[i * stride];
    }
}

// Fill V slots from row `p` at element offset `off` (vector layout) or `soff` (scalar layout:
// element i at soff + i * stride); slots past `cols` become -inf.
template <typename T, int V>
__device__ __forceinline__ void loadSlots(T* dst, const T* p, int cols, bool vec, int off, int soff, int stride, bool rowOk) {
    const T ninf = warpkit::detail::Arith<T>::from_acc(-__builtin_huge_valf());
    if (vec) {
        if (rowOk && off < cols) loadV<T, V>(dst, p + off, true, 0);
        else {
#pragma unroll
            for (int i = 0; i < V; ++i) dst[i] = ninf;
        }
    } else {
#pragma unroll
        for (int i = 0; i < V; ++i) dst[i] = (rowOk && soff + i * stride < cols) ? p[soff + i * stride] : ninf;
    }
}
template <typename T, int V>
__device__ __forceinline__ void storeSlots(T* p, const T* src, int cols, bool vec, int off, int soff, int stride, bool rowOk) {
    if (!rowOk) return;
    if (vec) {
        if (off < cols) {
            uint4 u;
            __builtin_memcpy(&u, src, 16);
            *reinterpret_cast<uint4*>(p + off) = u;
        }
    } else {
#pragma unroll
        for (int i = 0; i < V; ++i)
            if (soff + i * stride < cols) p[soff + i * stride] = src[i];
    }
}

// ---- 1. warp path ----------------------------------------------------------------------------
// Segments of W lanes, each lane C chunks of V elements; each thread handles R rows at once
// (R * C * V >= 16 values in flight). Lane l, chunk c, element i of a row sits at column
// c*W*V + l*V + i (vector layout) or (c*V + i)*W + l (scalar layout).
constexpr int kWarpThreads = 128;
template <typename T, int W, int C> struct WarpCfg {
    static constexpr int V = Vec<T>::V, P = C * V, R = P >= 16 ? 1 : 16 / P;
    static constexpr int rowsPerBlock = kWarpThreads / W * R;
    static constexpr int maxCols = W * P;
};

template <typename T, int Kind, int W, int C>
__global__ void __launch_bounds__(kWarpThreads) softmaxWarpKernel(const T* __restrict__ x, T* __restrict__ y, int rows, int cols, bool vec) {
    using Cfg = WarpCfg<T, W, C>;
    constexpr int V = Cfg::V, P = Cfg::P, R = Cfg::R, S = kWarpThreads / W;
    const int seg = threadIdx.x / W, l = threadIdx.x % W;
    const long long row0 = (long long)blockIdx.x * Cfg::rowsPerBlock + seg;
    T v[R][P];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const long long row = row0 + (long long)r * S;
        const T* p = x + (row < rows ? row : 0) * (size_t)cols;
#pragma unroll
        for (int c = 0; c < C; ++c)
            loadSlots<T, V>(&v[r][c * V], p, cols, vec, (c * W + l) * V, c * V * W + l, W, row < rows);
    }
#pragma unroll
    for (int r = 0; r < R; ++r) warpkit::warpSoftmax<W, P, Kind>(v[r]);
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const long long row = row0 + (long long)r * S;
        T* p = y + (row < rows ? row : 0) * (size_t)cols;
#pragma unroll
        for (int c = 0; c < C; ++c)
            storeSlots<T, V>(p, &v[r][c * V], cols, vec, (c * W + l) * V, c * V * W + l, W, row < rows);
    }
}

// ---- Hopper helpers (mbarriers, the cluster exchange) -------------------------------------------
#if WARPKIT_ARCH >= 900
__device__ __forceinline__ unsigned smemAddr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
/// Wait for the mbarrier at `bar` to complete the phase of `parity`. Cluster: acquire at cluster
/// scope (for data other blocks sent with st.async), else at CTA scope (bulk copies).
template <bool Cluster = false> __device__ __forceinline__ void mbarWait(unsigned bar, unsigned parity) {
    if constexpr (Cluster)
        asm volatile("{\n.reg .pred P;\nWK_MBAR_WAITC:\n"
                     "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 P, [%0], %1;\n"
                     "@!P bra WK_MBAR_WAITC;\n}" ::"r"(bar), "r"(parity) : "memory");
    else
        asm volatile("{\n.reg .pred P;\nWK_MBAR_WAIT:\n"
                     "mbarrier.try_wait.parity.shared::cta.b64 P, [%0], %1;\n"
                     "@!P bra WK_MBAR_WAIT;\n}" ::"r"(bar), "r"(parity) : "memory");
}
/// A row's {max, sum} across the blocks of a cluster (2..16 blocks), with no cluster-wide memory
/// fence: every block pushes its part into every block's `parts[its rank]` with st.async, which
/// completes on the receiver's mbarrier, and each block waits only for its own n parts to land.
/// (cluster.sync() releases every earlier memory access of the block; on an SM busy with other
/// blocks' stores that took ~5 us per row on H100, about a third of a block's life:
/// notes/issue6.md, session 11.) Use: clusterExchangeArm at the top of the kernel (every thread,
/// once), clusterExchange once per block (every thread, after the block's part is known).
struct ClusterExchange {
    SoftmaxState parts[16];
    alignas(8) unsigned long long bar;
};
/// Every thread, once, before anything is sent: thread 0 arms `x.bar` for nb parts, then every
/// thread arrives (relaxed) on the cluster barrier that clusterExchange waits on, so no block
/// sends before every receiver's barrier is initialised.
__device__ __forceinline__ void clusterExchangeArm(ClusterExchange& x, int nb) {
    const unsigned bar = smemAddr(&x.bar);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads(); // the init before any use (racecheck flags init then expect_tx without it)
    if (threadIdx.x == 0)
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(nb * (int)sizeof(SoftmaxState)) : "memory");
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}
/// Every thread of each of the nb blocks (rank: this block's rank in the cluster; s: this block's
/// {max, sum}, the same in every thread): returns the whole row's {max, sum} to every thread. A
/// block may exit as soon as this returns: nothing is sent to it afterwards.
__device__ __forceinline__ SoftmaxState clusterExchange(ClusterExchange& x, SoftmaxState s, int nb, int rank) {
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory"); // every receiver is armed
    const int t = (int)threadIdx.x;
    if (t < nb) { // thread k sends to block k
        unsigned dst, bar;
        asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(dst) : "r"(smemAddr(&x.parts[rank])), "r"(t));
        asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(bar) : "r"(smemAddr(&x.bar)), "r"(t));
        asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];"
                     ::"r"(dst), "f"(s.max), "f"(s.sum), "r"(bar) : "memory");
    }
    mbarWait<true>(smemAddr(&x.bar), 0);
    SoftmaxState o = warpkit::softmaxStateEmpty();
    if ((t & 31) < nb) o = x.parts[t & 31];
    return warpkit::warpReduceSoftmaxState<32>(o);
}
#endif

// ---- 2 and 3. block and cluster paths ------------------------------------------------------------
// Threads threads, C chunks of V elements each: a slice of Threads*C*V columns in registers.
// Without a cluster one block holds the whole row. In a cluster of N blocks, block rank k holds
// columns [k*slice, (k+1)*slice); after the block reductions the blocks swap their {max, sum}
// (clusterExchange: pushed into each other's shared memory), merge, and rescale their slices.
template <typename T, int Kind, int Threads, int C>
__global__ void __launch_bounds__(Threads) softmaxBlockKernel(const T* __restrict__ x, T* __restrict__ y, int cols, bool vec) {
    constexpr int V = Vec<T>::V, P = C * V, slice = Threads * P;
    __shared__ warpkit::BlockReduceScratch<float, Threads> red;
    int rank = 0, nblocks = 1;
#if WARPKIT_ARCH >= 900
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    nblocks = (int)cluster.num_blocks();
    rank = (int)cluster.block_rank();
    __shared__ ClusterExchange xch; // the cluster's {max, sum} parts
    if (nblocks > 1) clusterExchangeArm(xch, nblocks);
#endif
    const size_t row = blockIdx.x / nblocks;
    const T* p = x + row * cols;
    T* q = y + row * cols;
    const int t = threadIdx.x, base = rank * slice;
    T v[P];
#pragma unroll
    for (int c = 0; c < C; ++c)
        loadSlots<T, V>(&v[c * V], p, cols, vec, base + (c * Threads + t) * V, base + c * V * Threads + t, Threads, true);
    auto rmax = [&](float m) { return warpkit::blockReduce<Threads>(m, warpkit::Max{}, red); };
    auto rsum = [&](float s) { return warpkit::blockReduce<Threads>(s, warpkit::Sum{}, red); };
    if (nblocks == 1) {
        warpkit::detail::softmaxCore<Kind>(v, rmax, rsum);
    } else {
#if WARPKIT_ARCH >= 900
        warpkit::detail::softmaxCore<Kind>(v, rmax, rsum, [&](SoftmaxState mine) { return clusterExchange(xch, mine, nblocks, rank); });
#endif
    }
#pragma unroll
    for (int c = 0; c < C; ++c)
        storeSlots<T, V>(q, &v[c * V], cols, vec, base + (c * Threads + t) * V, base + c * V * Threads + t, Threads, true);
}

// ---- 4. shared-memory path -------------------------------------------------------------------
// The row is staged in dynamic shared memory as T; three sweeps over it (max, sum, write).
constexpr int kSmemThreads = 1024;
template <typename T, int Kind>
__global__ void __launch_bounds__(kSmemThreads) softmaxSmemKernel(const T* __restrict__ x, T* __restrict__ y, int cols, bool vec) {
    constexpr int V = Vec<T>::V;
    extern __shared__ uint4 smem_raw[];
    T* row = reinterpret_cast<T*>(smem_raw);
    __shared__ warpkit::BlockReduceScratch<float, kSmemThreads> red;
    const T* p = x + (size_t)blockIdx.x * cols;
    T* q = y + (size_t)blockIdx.x * cols;
    float m = -__builtin_huge_valf();
    const int chunks = vec ? cols / V : cols;
    for (int i = threadIdx.x; i < chunks; i += kSmemThreads) {
        T e[V];
        if (vec) { loadV<T, V>(e, p + i * V, true, 0); reinterpret_cast<uint4*>(row)[i] = *reinterpret_cast<uint4*>(e); }
        else { e[0] = p[i]; row[i] = e[0]; }
#pragma unroll
        for (int k = 0; k < (vec ? V : 1); ++k) m = warpkit::Max{}(m, warpkit::detail::Arith<T>::to_acc(e[k]));
    }
    m = warpkit::blockReduce<kSmemThreads>(m, warpkit::Max{}, red); // its barriers publish `row`
    const float ms = m == -__builtin_huge_valf() ? 0.0f : m;
    float s = 0.0f;
    for (int i = threadIdx.x; i < cols; i += kSmemThreads)
        s += warpkit::detail::expDiff(warpkit::detail::Arith<T>::to_acc(row[i]), ms);
    s = warpkit::blockReduce<kSmemThreads>(s, warpkit::Sum{}, red);
    const bool masked = (Kind & warpkit::SoftmaxMasked) && m == -__builtin_huge_valf();
    const float ls = masked ? 0.0f : logf(s), inv = masked ? 0.0f : 1.0f / s;
    for (int i = threadIdx.x; i < chunks; i += kSmemThreads) {
        T e[V];
        const int n = vec ? V : 1;
#pragma unroll
        for (int k = 0; k < V; ++k) {
            if (k >= n) break;
            const float xv = warpkit::detail::Arith<T>::to_acc(row[i * n + k]);
            const float o = (Kind & warpkit::SoftmaxLog) ? (xv - ms) - ls : warpkit::detail::expDiff(xv, ms) * inv;
            e[k] = warpkit::detail::Arith<T>::from_acc(o);
        }
        if (vec) reinterpret_cast<uint4*>(q)[i] = *reinterpret_cast<uint4*>(e);
        else q[i] = e[0];
    }
}

// ---- Hopper helpers (16-byte vector math) ------------------------------------------------------
#if WARPKIT_ARCH >= 900
__device__ __forceinline__ float ex2Fast(float a) { // 2^a, ~2 ulp; -inf -> 0, NaN -> NaN
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
    return r;
}
/// Running max of the 16 bytes `u` into `acc` (NaN-propagating): fp32 one value per word,
/// 16-bit types two per word (packed max; the caller unpacks the final pair).
template <typename T> __device__ __forceinline__ void maxChunk(unsigned& acc, const uint4& u) {
    const unsigned w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        if constexpr (sizeof(T) == 4) acc = __float_as_uint(warpkit::Max{}(__uint_as_float(acc), __uint_as_float(w[k])));
        else if constexpr (warpkit::detail::IsSame<T, __half>::value) asm("max.NaN.f16x2 %0, %0, %1;" : "+r"(acc) : "r"(w[k]));
        else asm("max.NaN.bf16x2 %0, %0, %1;" : "+r"(acc) : "r"(w[k]));
    }
}
/// -inf in maxChunk's accumulator layout.
template <typename T> __device__ __forceinline__ unsigned maxChunkInit() {
    if constexpr (sizeof(T) == 4) return 0xff800000u;
    else if constexpr (warpkit::detail::IsSame<T, __half>::value) return 0xfc00fc00u;
    else return 0xff80ff80u;
}
/// The float max held by maxChunk's accumulator.
template <typename T> __device__ __forceinline__ float maxChunkValue(unsigned acc) {
    if constexpr (sizeof(T) == 4) return __uint_as_float(acc);
    else {
        T h[2];
        __builtin_memcpy(h, &acc, 4);
        return warpkit::Max{}(warpkit::detail::Arith<T>::to_acc(h[0]), warpkit::detail::Arith<T>::to_acc(h[1]));
    }
}
constexpr float kLog2e = 1.4426950408889634f;
/// Per-row output constants from the row's {max, sum} (Kind's rules for an all -inf row).
struct RowOut { float gm, scale, ls, l2s; };
template <int Kind> __device__ __forceinline__ RowOut rowOut(SoftmaxState st) {
    const bool empty_ = st.max == -__builtin_huge_valf(); // the whole row is -inf
    RowOut r{empty_ ? 0.0f : st.max, 1.0f / st.sum, logf(st.sum), -log2f(st.sum)}; // all -inf: NaN below
    if ((Kind & warpkit::SoftmaxMasked) && empty_) { r.scale = r.ls = 0.0f; r.l2s = -__builtin_huge_valf(); }
    return r;
}
/// f applied to each of the V elements of the 16 bytes `u` (as float), packed back as T.
template <typename T, typename F> __device__ __forceinline__ uint4 mapVec(uint4 u, F f) {
    constexpr int V = Vec<T>::V;
    using A = warpkit::detail::Arith<T>;
    T e[V];
    __builtin_memcpy(e, &u, 16);
#pragma unroll
    for (int k = 0; k < V; ++k) e[k] = A::from_acc(f(A::to_acc(e[k])));
    __builtin_memcpy(&u, e, 16);
    return u;
}
/// The outputs of the 16 bytes `u` (V elements), packed back into 16 bytes.
template <typename T, int Kind> __device__ __forceinline__ uint4 outVec(uint4 u, const RowOut& ro) {
    return mapVec<T>(u, [&](float xv) {
        if constexpr (Kind & warpkit::SoftmaxLog) return (xv - ro.gm) - ro.ls;
        else if constexpr (sizeof(T) == 4) return warpkit::detail::expDiff(xv, ro.gm) * ro.scale;
        else return ex2Fast(__fmaf_rn(xv - ro.gm, kLog2e, ro.l2s)); // 16-bit: the scale folded into the exponent
    });
}
/// Sum of 2^((x - ms) * log2 e) over the V elements of `u`.
template <typename T> __device__ __forceinline__ float sumVec(uint4 u, float ms) {
    constexpr int V = Vec<T>::V;
    T e[V];
    __builtin_memcpy(e, &u, 16);
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < V; ++k) s += ex2Fast((warpkit::detail::Arith<T>::to_acc(e[k]) - ms) * kLog2e);
    return s;
}
/// exp(x - ms) for the V elements of `u` (fp32: the accurate split exp), packed back as T; their
/// float sum is added to `sum` (pairwise, so the dependency chain is short).
template <typename T> __device__ __forceinline__ uint4 expSumVec(uint4 u, float ms, float& sum) {
    constexpr int V = Vec<T>::V;
    using A = warpkit::detail::Arith<T>;
    T e[V];
    float f[V];
    __builtin_memcpy(e, &u, 16);
#pragma unroll
    for (int k = 0; k < V; ++k) {
        const float xv = A::to_acc(e[k]);
        f[k] = sizeof(T) == 4 ? warpkit::detail::expDiff(xv, ms) : ex2Fast((xv - ms) * kLog2e);
        e[k] = A::from_acc(f[k]);
    }
#pragma unroll
    for (int w = 1; w < V; w *= 2)
#pragma unroll
        for (int k = 0; k + w < V; k += 2 * w) f[k] += f[k + w];
    sum += f[0];
    __builtin_memcpy(&u, e, 16);
    return u;
}
/// The V elements of `u` times c.
template <typename T> __device__ __forceinline__ uint4 scaleVec(uint4 u, float c) {
    return mapVec<T>(u, [&](float xv) { return xv * c; });
}
/// One step of a fused max+sum sweep: the running per-thread {tm, sum} takes the 16 bytes `u`; the
/// sum is rescaled when `u` raises the max (rare after the first few vectors). NaN or +inf: NaN.
template <typename T> __device__ __forceinline__ void statsStep(const uint4& u, float& tm, float& sum) {
    unsigned vm = maxChunkInit<T>();
    maxChunk<T>(vm, u);
    const float v = maxChunkValue<T>(vm);
    if (v > tm) { sum *= ex2Fast((tm - v) * kLog2e); tm = v; } // from -inf: sum is 0, stays 0
    sum += sumVec<T>(u, tm == -__builtin_huge_valf() ? 0.0f : tm);
}
/// The block's {max, sum} from every thread's running {tm, sum} (statsStep). Every thread calls
/// and gets it.
template <int Threads>
__device__ __forceinline__ SoftmaxState blockStats(float tm, float sum, warpkit::BlockReduceScratch<float, Threads>& red) {
    const float m = warpkit::blockReduce<Threads>(tm, warpkit::Max{}, red);
    sum *= ex2Fast((tm - (m == -__builtin_huge_valf() ? 0.0f : m)) * kLog2e);
    return SoftmaxState{m, warpkit::blockReduce<Threads>(sum, warpkit::Sum{}, red)};
}
#endif

// ---- 6. staged cluster path (Hopper) -----------------------------------------------------------
// One cluster of N blocks per row (N = 1 when the row fits one slice): block rank k bulk-copies its
// slice (<= ~72 KB, so 3 blocks fit an SM) into dynamic shared memory as up to kStageMaxPieces
// pieces, each with its own mbarrier (thread 0 issues them all at once; no registers are held while
// the bytes land). With several resident blocks per SM, blocks in different phases keep the memory
// pipe busy; the less time a block spends computing, the sooner its shared memory takes the next
// row, so the sweeps are kept short:
//   plain kinds (kStageExp | kStageFused, the default): piece by piece as each lands, each thread
//     takes its max over its vectors of the piece, then writes exp(x - its running max) back over
//     x (rounded to T) and sums them; the {max, sum} exchange (clusterExchange when N > 1); a write sweep
//     that only scales, by one factor per piece: one exp per element, and only the last piece's
//     sweeps lie between the last byte landing and the exchange. (kStageExp alone: a max sweep,
//     then one exp sweep relative to the block max.)
//   otherwise: a max sweep and a sum-of-exp sweep (or one fused sweep with a running {max, sum},
//     kStageFused), the exchange, and a write sweep that computes each output from x.
constexpr int kStageThreads = 256, kStageMaxPieces = 8;
/// Staged-path options: kStageFused: max and sum in one sweep (with kStageExp: piece by piece as
/// the pieces land); kStageExp (plain kinds): exps stored in shared memory, the write sweep only
/// scales them (16-bit outputs are rounded twice to T);
/// kStageLoadBalance: the load-balancing cluster scheduling policy (host side).
/// kStageGlobal: no cluster; the blocks of a row exchange {max, sum} through a global-memory
/// workspace (any number of blocks a row, scheduled one by one as the GPU frees room for them).
enum { kStageFused = 1, kStageExp = 2, kStageLoadBalance = 4, kStageGlobal = 8 };
/// Whether the kernel stores exps piece by piece, with each thread's running max after each piece
/// in the dynamic shared memory after the slice (the host sizes that memory by the same rule).
__host__ __device__ constexpr bool stagePieceMaxes(int kind, int flags) {
    return !(kind & warpkit::SoftmaxLog) && (flags & (kStageFused | kStageExp)) == (kStageFused | kStageExp);
}
/// Global mode's workspace: counters gx ([0] tickets taken, [1] blocks finished, [2 + r] blocks
/// of row r that published their part; all 0 at launch, and the last block to finish clears
/// them again) and parts (row r's blocks' {max, sum} at parts[r * N + rank]).
#if WARPKIT_ARCH >= 900
__device__ __forceinline__ unsigned ldAcquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
#endif
template <typename T, int Kind, int Threads>
__global__ void __launch_bounds__(Threads) softmaxStagedKernel(const T* __restrict__ x, T* __restrict__ y, int cols, int slice, int piece,
                                                               int flags, unsigned* gx, SoftmaxState* gparts, int rows, int gn) {
#if WARPKIT_ARCH >= 900
    constexpr int V = Vec<T>::V;
    namespace cg = cooperative_groups;
    extern __shared__ uint4 stg_buf[];
    __shared__ warpkit::BlockReduceScratch<float, Threads> red;
    __shared__ ClusterExchange xch; // cluster mode: the row's blocks' {max, sum}
    __shared__ alignas(8) unsigned long long full[kStageMaxPieces]; // piece k has landed
    __shared__ unsigned s_id;     // row * N + rank
    const int nb = gx ? gn : (int)cg::this_cluster().num_blocks(), t = threadIdx.x;
    if (!gx && nb > 1) clusterExchangeArm(xch, nb);
    // Cluster mode: block rank k of cluster r (1-D clusters: rank = blockIdx.x % N). Global mode:
    // the blocks take (row, rank) tickets in order, so a block only ever waits for blocks that
    // are already running or for the next ones to start (no deadlock while N blocks fit the GPU).
    if (t == 0) s_id = gx ? atomicAdd(&gx[0], 1u) : blockIdx.x;
    __syncthreads();
    const size_t row = s_id / (unsigned)nb;
    const int rank = (int)(s_id % (unsigned)nb);
    const int base = rank * slice, len = cols - base < slice ? cols - base : slice, np = (len + piece - 1) / piece;
    if (t == 0) {
        for (int k = 0; k < np; ++k)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smemAddr(&full[k])) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        for (int k = 0; k < np; ++k) {
            const int off = k * piece, n = len - off < piece ? len - off : piece;
            const unsigned bytes = (unsigned)n * (unsigned)sizeof(T), bar = smemAddr(&full[k]);
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                         ::"r"(smemAddr(stg_buf + off / V)), "l"(x + row * cols + base + off), "r"(bytes), "r"(bar)
                         : "memory");
        }
    }
    __syncthreads(); // barriers initialised before anyone waits on them
    const int nv = len / V, pv = piece / V;
    constexpr float ninf = -__builtin_huge_valf();
    // Piece k is vectors [k * pv, pieceEnd(k)).
    auto pieceEnd = [&](int k) { return (k + 1) * pv < nv ? (k + 1) * pv : nv; };
    // f(i) for this thread's 16-byte vectors i, piece by piece as each lands.
    auto landed = [&](auto f) {
        for (int k = 0; k < np; ++k) {
            mbarWait(smemAddr(&full[k]), 0);
            const int end = pieceEnd(k);
#pragma unroll 4
            for (int i = k * pv + t; i < end; i += Threads) f(i);
        }
    };
    // The block max (packed 16-bit max, piece by piece as they land).
    auto maxSweep = [&] {
        unsigned mx = maxChunkInit<T>();
        landed([&](int i) { maxChunk<T>(mx, stg_buf[i]); });
        return warpkit::blockReduce<Threads>(maxChunkValue<T>(mx), warpkit::Max{}, red);
    };
    // The row's {max, sum} from this block's (N > 1: clusterExchange, or the global workspace).
    auto exchange = [&](SoftmaxState s) {
        if (gx && nb > 1) { // global mode: parts in the workspace, one arrival counter per row
            unsigned* arrive = gx + 2;
            if (t == 0) {
                gparts[row * nb + rank] = s;
                asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(arrive + row) : "memory");
                while (ldAcquire(arrive + row) < (unsigned)nb) __nanosleep(64);
            }
            __syncthreads(); // thread 0 has seen every part of the row
            SoftmaxState o = warpkit::softmaxStateEmpty();
            for (int k = t & 31; k < nb; k += 32) {
                const float2 p = __ldcg(reinterpret_cast<const float2*>(gparts + row * nb + k));
                o = warpkit::softmaxStateMerge(o, SoftmaxState{p.x, p.y});
            }
            s = warpkit::warpReduceSoftmaxState<32>(o);
        } else if (nb > 1) {
            s = clusterExchange(xch, s, nb, rank);
        }
        return s;
    };
    float sum = 0.0f;
    SoftmaxState st;
    uint4* q = reinterpret_cast<uint4*>(y + row * cols + base);
    if (!(Kind & warpkit::SoftmaxLog) && (flags & kStageExp)) {
        // The scale for stored exps relative to m: exp(m - row max) / row sum. m of -inf (they are
        // all 0): zeros, unless the whole row is -inf (NaN; masked kinds 0). NaN or +inf in the
        // row: the sum is NaN, so is every output.
        auto scaleFor = [&](float m, SoftmaxState g) {
            if (m == ninf) return (g.max == ninf && !(Kind & warpkit::SoftmaxMasked)) ? __builtin_nanf("") : 0.0f;
            return warpkit::detail::expDiff(m, g.max) / g.sum;
        };
        if (stagePieceMaxes(Kind, flags)) {
            // Piece by piece as each lands: this thread's max over its vectors of the piece, then
            // exp(x - running max) stored over x and summed (the sum rescaled when the max rises;
            // NaN makes the max NaN). Only the last piece's sweeps lie between its landing and
            // the exchange. pms[k * Threads + t]: thread t's running max after piece k, kept in
            // the dynamic shared memory after the slice (loops over k stay rolled: one copy of
            // the sweeps' code).
            float* pms = reinterpret_cast<float*>(stg_buf + slice / V);
            float tm = ninf;
            for (int k = 0; k < np; ++k) {
                mbarWait(smemAddr(&full[k]), 0);
                const int end = pieceEnd(k);
                unsigned vm = maxChunkInit<T>();
#pragma unroll 4
                for (int i = k * pv + t; i < end; i += Threads) maxChunk<T>(vm, stg_buf[i]);
                const float v = maxChunkValue<T>(vm);
                if (!(v <= tm)) { sum *= ex2Fast((tm - v) * kLog2e); tm = v; } // from -inf: sum is 0, stays 0
                const float ms = tm == ninf ? 0.0f : tm;
#pragma unroll 4
                for (int i = k * pv + t; i < end; i += Threads) stg_buf[i] = expSumVec<T>(stg_buf[i], ms, sum);
                pms[k * Threads + t] = tm;
            }
            const SoftmaxState g = exchange(blockStats<Threads>(tm, sum, red));
            for (int k = 0; k < np; ++k) {
                const float c = scaleFor(pms[k * Threads + t], g);
                const int end = pieceEnd(k);
#pragma unroll 4
                for (int i = k * pv + t; i < end; i += Threads) q[i] = scaleVec<T>(stg_buf[i], c);
            }
        } else { // a max sweep, then one exp sweep relative to the block max
            st.max = maxSweep();
            const float ms = st.max == ninf ? 0.0f : st.max; // a slice of only -inf: every exp is 0
#pragma unroll 4
            for (int i = t; i < nv; i += Threads) stg_buf[i] = expSumVec<T>(stg_buf[i], ms, sum); // each thread its own vectors
            st.sum = warpkit::blockReduce<Threads>(sum, warpkit::Sum{}, red);
            const float c = scaleFor(st.max, exchange(st));
#pragma unroll 4
            for (int i = t; i < nv; i += Threads) q[i] = scaleVec<T>(stg_buf[i], c);
        }
    } else {
        if (flags & kStageFused) {
            float tm = ninf; // one sweep: a running {max, sum} per thread
            landed([&](int i) { statsStep<T>(stg_buf[i], tm, sum); });
            st = blockStats<Threads>(tm, sum, red);
        } else {
            // Sweep 1: max. Sweep 2: sum of exp(x - max); NaN or +inf in the row: NaN.
            st.max = maxSweep();
            const float ms = st.max == ninf ? 0.0f : st.max; // all -inf: every exp is 0
#pragma unroll 4
            for (int i = t; i < nv; i += Threads) sum += sumVec<T>(stg_buf[i], ms);
            st.sum = warpkit::blockReduce<Threads>(sum, warpkit::Sum{}, red);
        }
        const RowOut ro = rowOut<Kind>(exchange(st));
#pragma unroll 4
        for (int i = t; i < nv; i += Threads) q[i] = outVec<T, Kind>(stg_buf[i], ro);
    }
    if (gx) { // the last block to finish clears the counters for the next launch
        __shared__ bool last;
        __syncthreads(); // this block is done with the workspace
        if (t == 0) last = atomicAdd(&gx[1], 1u) == gridDim.x - 1;
        __syncthreads();
        if (last) {
            __threadfence();
            for (int i = t; i < rows + 2; i += Threads) gx[i] = 0;
        }
    }
#endif
}

// ---- 5. online two-pass path -------------------------------------------------------------------
constexpr int kTwoPassThreads = 1024;
template <typename T, int Kind>
__global__ void __launch_bounds__(kTwoPassThreads) softmaxTwoPassKernel(const T* __restrict__ x, T* __restrict__ y, int cols, bool vec) {
    constexpr int V = Vec<T>::V;
    const T* p = x + (size_t)blockIdx.x * cols;
    T* q = y + (size_t)blockIdx.x * cols;
    const int chunks = vec ? cols / V : cols, n = vec ? V : 1;
    SoftmaxState st = warpkit::softmaxStateEmpty();
    for (int i = threadIdx.x; i < chunks; i += kTwoPassThreads) {
        T e[V];
        if (vec) loadV<T, V>(e, p + i * V, true, 0);
        else e[0] = p[i];
        // Chunk max first, then one online update of the chunk: one rescale per chunk.
        float cm = warpkit::detail::Arith<T>::to_acc(e[0]);
#pragma unroll
        for (int k = 1; k < V; ++k)
            if (k < n) cm = warpkit::Max{}(cm, warpkit::detail::Arith<T>::to_acc(e[k]));
        const float cms = cm == -__builtin_huge_valf() ? 0.0f : cm;
        float cs = 0.0f;
#pragma unroll
        for (int k = 0; k < V; ++k)
            if (k < n) cs += warpkit::detail::expDiff(warpkit::detail::Arith<T>::to_acc(e[k]), cms);
        if (cm == __builtin_huge_valf()) cs = __builtin_nanf("");
        st = warpkit::softmaxStateMerge(st, SoftmaxState{cm, cs});
    }
    st = warpkit::blockReduceSoftmaxState<kTwoPassThreads>(st);
    for (int i = threadIdx.x; i < chunks; i += kTwoPassThreads) {
        T e[V];
        if (vec) loadV<T, V>(e, p + i * V, true, 0);
        else e[0] = p[i];
#pragma unroll
        for (int k = 0; k < V; ++k)
            if (k < n) e[k] = warpkit::detail::Arith<T>::from_acc(warpkit::softmaxApply<Kind>(st, warpkit::detail::Arith<T>::to_acc(e[k])));
        if (vec) reinterpret_cast<uint4*>(q)[i] = *reinterpret_cast<uint4*>(e);
        else q[i] = e[0];
    }
}

// ---- dispatcher --------------------------------------------------------------------------------
struct DeviceInfo {
    int sm = 0, smemOptin = 0;
    bool clusters = false;
};
static DeviceInfo deviceInfo() {
    static DeviceInfo info;
    static bool done = false;
    if (!done) {
        int dev = 0, major = 0, minor = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
        cudaDeviceGetAttribute(&info.smemOptin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
        info.sm = major * 10 + minor;
        info.clusters = major >= 9;
        done = true;
    }
    return info;
}

constexpr int kMaxClusterCols = 262144;
/// Longest row the warp path holds: 32 lanes x 8 chunks of 16 bytes (fp32 1024, 16-bit 2048).
template <typename T> constexpr int maxWarpCols() { return 32 * 8 * Vec<T>::V; }
/// Longest row the block path holds: 1024 threads x 16 values.
template <typename T> constexpr int maxBlockCols() { return 1024 * 16; }

/// The path Auto picks for `cols` columns of T.
template <typename T> static Path autoPath(int cols) {
    const DeviceInfo d = deviceInfo();
    if (cols <= maxWarpCols<T>()) return PathWarp;
    if (cols <= 512 * 16) return PathBlock;
    // Rows the register cluster path handles at >= 0.94x copy on H100 stay there (bench/softmax.cu).
    // 16-bit rows of more than 32 KB and fp32 rows of more than 256 KB: the staged path (16-bit 2.5 /
    // 2.3 / 2.0 TB/s -> 2.8 / 2.6 / 2.5 at 32768 / 65536 / 262144 cols on H100, fp32 262144 2.47 ->
    // 2.57 with 128 threads); shorter fp32 rows measured the same on both and stay in registers.
    if (d.clusters && cols <= kMaxClusterCols)
        return cols > (sizeof(T) == 2 ? 16384 : 65536) ? PathStaged : PathCluster;
    if (cols <= maxBlockCols<T>()) return PathBlock;
    if ((size_t)cols * sizeof(T) + 16 <= (size_t)d.smemOptin) return PathSmem;
    return PathTwoPass;
}

/// Whether `path` can run `cols` columns of T on this device.
template <typename T> static bool pathSupports(Path path, int cols) {
    const DeviceInfo d = deviceInfo();
    switch (path) {
    case PathAuto: case PathTwoPass: return true;
    case PathWarp: return cols <= maxWarpCols<T>();
    case PathBlock: return cols <= maxBlockCols<T>();
    case PathCluster: case PathStaged: return d.clusters && cols <= kMaxClusterCols;
    case PathSmem: return (size_t)cols * sizeof(T) + 16 <= (size_t)d.smemOptin;
    }
    return false;
}

template <typename T, int Kind, int W, int C>
static cudaError_t launchWarp(const T* x, T* y, int rows, int cols, bool vec, cudaStream_t st) {
    using Cfg = WarpCfg<T, W, C>;
    const long long blocks = ((long long)rows + Cfg::rowsPerBlock - 1) / Cfg::rowsPerBlock;
    softmaxWarpKernel<T, Kind, W, C><<<(unsigned)blocks, kWarpThreads, 0, st>>>(x, y, rows, cols, vec);
    return cudaGetLastError();
}

static void clusterConfig(cudaLaunchConfig_t* cfg, cudaLaunchAttribute* attr, int n);

template <typename T, int Kind, int Threads, int C>
static cudaError_t launchBlock(const T* x, T* y, int rows, int cols, bool vec, int clusterN, cudaStream_t st) {
    auto kern = softmaxBlockKernel<T, Kind, Threads, C>;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)((long long)rows * clusterN));
    cfg.blockDim = dim3(Threads);
    cfg.stream = st;
    cudaLaunchAttribute attr[1];
    if (deviceInfo().clusters) { // a cluster of 1 when the row fits one block
        if (clusterN > 8) {
            cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
            if (e != cudaSuccess) return e;
        }
        clusterConfig(&cfg, attr, clusterN);
    }
    return cudaLaunchKernelEx(&cfg, kern, x, y, cols, vec);
}

/// Launch configuration with a cluster of n blocks along x.
static void clusterConfig(cudaLaunchConfig_t* cfg, cudaLaunchAttribute* attr, int n) {
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = (unsigned)n;
    attr->val.clusterDim.y = 1;
    attr->val.clusterDim.z = 1;
    cfg->attrs = attr;
    cfg->numAttrs = 1;
}

/// How many clusters of cfg's cluster size of `kern` (cfg: block size, dynamic shared memory)
/// the device holds at once (cached: the query costs host time).
template <typename K> static int activeClusters(K kern, const cudaLaunchConfig_t& cfg) {
    struct Entry { const void* kern; unsigned threads, n; size_t bytes; int count; };
    static Entry cache[16];
    static int used = 0;
    const unsigned n = cfg.attrs[0].val.clusterDim.x;
    for (int i = 0; i < used; ++i)
        if (cache[i].kern == (const void*)kern && cache[i].threads == cfg.blockDim.x && cache[i].n == n && cache[i].bytes == cfg.dynamicSmemBytes)
            return cache[i].count;
    cudaLaunchConfig_t q = cfg;
    q.gridDim = dim3(n);
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, kern, &q) != cudaSuccess) clusters = 0;
    cudaGetLastError();
    cache[used < 16 ? used++ : 15] = Entry{(const void*)kern, cfg.blockDim.x, n, cfg.dynamicSmemBytes, clusters};
    return clusters;
}

/// How many clusters of n blocks of (Threads, C) the device can hold at once (0: none fit).
template <typename T, int Kind, int Threads, int C> static int clusterFits(int n) {
    if (n < 1 || n > 16) return 0;
    auto kern = softmaxBlockKernel<T, Kind, Threads, C>;
    if (n > 8 && cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    cudaLaunchConfig_t cfg = {};
    cfg.blockDim = dim3(Threads);
    cudaLaunchAttribute attr[1];
    clusterConfig(&cfg, attr, n);
    return activeClusters(kern, cfg);
}

/// Cluster path. Each block of the cluster holds a slice of the row in registers:
///   variant 1: 512 threads x 16 values    variant 2: 512 threads x 32 values
///   variant 3: 1024 threads x 32 values   variant 4: 1024 threads x 16 values
/// Variant 0 (the dispatcher's pick, from bench/softmax.cu's comparison on H100): clusters of at
/// most 8 blocks, the smallest slices that get there: fp32 1 then 3, 16-bit 2 then 3 (and 3 as
/// a single block for 16-bit rows of 16385..32768). Returns
/// cudaErrorInvalidValue when the variant cannot cover the row with <= 16 blocks.
template <typename T, int Kind>
static cudaError_t rowSoftmaxCluster(const T* x, T* y, int rows, int cols, bool vec, int variant, cudaStream_t st) {
    constexpr int V = Vec<T>::V, C16 = 16 / V, C32 = 32 / V;
    auto blocks = [&](int slice) { return (cols + slice - 1) / slice; };
    if (variant == 0) {
        const int first = sizeof(T) == 4 ? 1 : 2;
        variant = blocks(first == 1 ? 512 * 16 : 512 * 32) <= 8 ? first : 3;
        // 16-bit rows of 16385..32768: one block of 1024 x 32 beat a cluster of two (2.42 vs
        // 2.10 TB/s for fp16 at 32768 on H100).
        if (sizeof(T) == 2 && blocks(512 * 32) > 1 && blocks(1024 * 32) == 1) variant = 3;
    }
    int n = 0;
    switch (variant) {
    case 1: n = blocks(512 * 16); break;
    case 2: n = blocks(512 * 32); break;
    case 3: n = blocks(1024 * 32); break;
    case 4: n = blocks(1024 * 16); break;
    }
    if (n < 1 || n > 16 || (n > 8 && clusterFits<T, Kind, 1024, C32>(n) == 0 && variant == 3)) return cudaErrorInvalidValue;
    switch (variant) {
    case 1: return launchBlock<T, Kind, 512, C16>(x, y, rows, cols, vec, n, st);
    case 2: return launchBlock<T, Kind, 512, C32>(x, y, rows, cols, vec, n, st);
    case 3: return launchBlock<T, Kind, 1024, C32>(x, y, rows, cols, vec, n, st);
    default: return launchBlock<T, Kind, 1024, C16>(x, y, rows, cols, vec, n, st);
    }
}

/// Shared memory a staged block uses besides its slice (reduce scratch, parts,
/// mbarriers), rounded up; the slices get the rest of the opt-in limit at most.
constexpr int kSliceStaticBytes = 2048;
/// Lets `kern` take `smemBytes` of dynamic shared memory (the opt-in limit) and run in clusters of
/// more than 8 blocks (non-portable sizes, up to 16 on H100).
template <typename K> static cudaError_t allowBigSmemClusters(K kern, int smemBytes) {
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smemBytes);
    if (e == cudaSuccess) e = cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    return e;
}

/// Blocks per row (*n) and columns per block (*slice) for slices of at most sliceBytes: n = row
/// bytes / sliceBytes rounded up, slices balanced and a multiple of 16 bytes (a last block left
/// empty by the rounding is dropped). False when the row needs more than maxBlocks blocks.
template <typename T> static bool sliceShape(int cols, int sliceBytes, int* n, int* slice, long long maxBlocks = 16) {
    constexpr int V = Vec<T>::V;
    long long k = ((long long)cols * (long long)sizeof(T) + sliceBytes - 1) / sliceBytes;
    if (k > maxBlocks) return false;
    k = k < 1 ? 1 : k;
    *slice = (int)(((cols + k - 1) / k + V - 1) / V * V);
    *n = (cols + *slice - 1) / *slice;
    return true;
}

/// The dispatcher's staged shape: slice target, pieces per block, 256 threads, stored exps (plain
/// kinds), else one fused max+sum sweep (bench/softmax.cu: on H100 256 threads beat 512 and 1024,
/// fused beat two sweeps). Rows of more than 8 blocks also ask for load-balancing cluster scheduling.
constexpr int kStageSliceBytes = 64 * 1024, kStagePieces = 4;
constexpr int kStageFlags = kStageFused | kStageExp;

/// Global mode's workspace (samples/softmax.cu keeps one per device, grown as needed, zeroed when
/// made; releaseStageWorkspace frees it): launches in global mode must not overlap, so use one
/// stream per device for them.
struct StageWorkspace { unsigned* counters; SoftmaxState* parts; size_t rows, parts_n; };
static StageWorkspace g_stageWs[8];

/// Frees the current device's global-mode workspace (waits for the device first).
static void releaseStageWorkspace() {
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev >= 8) return;
    if (g_stageWs[dev].counters || g_stageWs[dev].parts) cudaDeviceSynchronize(); // no launch may still use it
    cudaFree(g_stageWs[dev].counters);
    cudaFree(g_stageWs[dev].parts);
    g_stageWs[dev] = StageWorkspace{};
}

/// The current device's workspace for rows x n blocks (counters null when it cannot be made).
static StageWorkspace stageWorkspace(int rows, int n) {
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev >= 8) return StageWorkspace{};
    StageWorkspace& w = g_stageWs[dev];
    const size_t needRows = (size_t)rows, needParts = (size_t)rows * (size_t)n;
    if (w.rows < needRows || w.parts_n < needParts) {
        releaseStageWorkspace();
        if (cudaMalloc(&w.counters, (needRows + 2) * sizeof(unsigned)) != cudaSuccess ||
            cudaMalloc(&w.parts, needParts * sizeof(SoftmaxState)) != cudaSuccess ||
            cudaMemset(w.counters, 0, (needRows + 2) * sizeof(unsigned)) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
            releaseStageWorkspace();
            return w;
        }
        w.rows = needRows;
        w.parts_n = needParts;
    }
    return w;
}

/// Staged path (16-byte aligned rows only: `vec`; otherwise the register cluster path runs).
/// Blocks per row n = row bytes / sliceBytes rounded up, slices balanced, a multiple of 16 bytes,
/// each loaded as `pieces` bulk copies (1..kStageMaxPieces). flags: the kStage* options. One
/// cluster of n blocks per row (n <= 16), or with kStageGlobal no clusters and any n up to the
/// blocks the GPU holds at once.
/// cudaErrorInvalidValue without clusters (sm_90), when a slice does not fit the opt-in shared
/// memory, when the row needs too many blocks, or when no cluster of more than 8 can be resident;
/// cudaErrorMemoryAllocation when global mode's workspace cannot be allocated.
template <typename T, int Kind, int Threads = kStageThreads>
static cudaError_t rowSoftmaxStaged(const T* x, T* y, int rows, int cols, bool vec, int sliceBytes, int pieces, cudaStream_t st,
                                    int flags = kStageFlags) {
    constexpr int V = Vec<T>::V;
    const DeviceInfo d = deviceInfo();
    if (!d.clusters || sliceBytes < 16 || pieces < 1 || pieces > kStageMaxPieces) return cudaErrorInvalidValue;
    if (!vec) return rowSoftmaxCluster<T, Kind>(x, y, rows, cols, false, 0, st);
    auto kern = softmaxStagedKernel<T, Kind, Threads>;
    const int maxBytes = d.smemOptin - kSliceStaticBytes;
    static bool attrsSet = false; // once per kernel instantiation
    if (!attrsSet) {
        if (cudaError_t e = allowBigSmemClusters(kern, maxBytes)) return e;
        attrsSet = true;
    }
    const bool global = flags & kStageGlobal;
    int n = 0, slice = 0;
    if (!sliceShape<T>(cols, sliceBytes, &n, &slice, global ? 1 << 20 : 16)) return cudaErrorInvalidValue;
    const int piece = ((slice + pieces - 1) / pieces + V - 1) / V * V;
    // The slice, then (stored exps piece by piece) each thread's running max after each piece.
    const int bytes = slice * (int)sizeof(T) + (stagePieceMaxes(Kind, flags) ? (slice + piece - 1) / piece * Threads * (int)sizeof(float) : 0);
    if (bytes > maxBytes) return cudaErrorInvalidValue;
    cudaLaunchConfig_t cfg = {};
    cfg.blockDim = dim3(Threads);
    cfg.dynamicSmemBytes = (size_t)bytes;
    cfg.stream = st;
    cfg.gridDim = dim3((unsigned)((long long)rows * n));
    const int kflags = flags & (kStageFused | kStageExp);
    cudaLaunchAttribute attr[2];
    if (global) { // every block of a row must be able to run at once: clusters of one = resident blocks
        clusterConfig(&cfg, attr, 1);
        if (activeClusters(kern, cfg) < n) return cudaErrorInvalidValue;
        cfg.numAttrs = 0; // launched without a cluster
        const StageWorkspace ws = stageWorkspace(rows, n);
        if (!ws.counters) return cudaErrorMemoryAllocation;
        return cudaLaunchKernelEx(&cfg, kern, x, y, cols, slice, piece, kflags, ws.counters, ws.parts, rows, n);
    }
    clusterConfig(&cfg, attr, n);
    if (n > 8 && activeClusters(kern, cfg) == 0) return cudaErrorInvalidValue; // non-portable size: is one resident at all?
    if (flags & kStageLoadBalance) {
        attr[1].id = cudaLaunchAttributeClusterSchedulingPolicyPreference;
        attr[1].val.clusterSchedulingPolicyPreference = cudaClusterSchedulingPolicyLoadBalancing;
        cfg.numAttrs = 2;
    }
    return cudaLaunchKernelEx(&cfg, kern, x, y, cols, slice, piece, kflags, (unsigned*)nullptr, (SoftmaxState*)nullptr, rows, n);
}

/// y = softmax(x) over each row of a rows x cols row-major matrix (Kind: a warpkit::SoftmaxKind).
/// rows, cols >= 1. `path` forces a strategy (tests use this); PathAuto picks by row length.
/// Returns cudaErrorInvalidValue when the forced path cannot take this many columns.
template <typename T, int Kind = warpkit::SoftmaxPlain>
static cudaError_t rowSoftmax(const T* x, T* y, int rows, int cols, Path path = PathAuto, cudaStream_t st = 0) {
    if (rows < 1 || cols < 1) return cudaErrorInvalidValue;
    if (path == PathAuto) path = autoPath<T>(cols);
    if (!pathSupports<T>(path, cols)) return cudaErrorInvalidValue;
    constexpr int V = Vec<T>::V;
    const bool vec = cols % V == 0 && ((uintptr_t)x % 16) == 0 && ((uintptr_t)y % 16) == 0;
    switch (path) {
    case PathWarp: {
        // Smallest segment that holds the row; 16-bit types move 8 per 16 bytes, fp32 4.
        const int chunkCols = V; // columns per lane per chunk
        if (cols <= 1 * chunkCols) return launchWarp<T, Kind, 1, 1>(x, y, rows, cols, vec, st);
        if (cols <= 2 * chunkCols) return launchWarp<T, Kind, 2, 1>(x, y, rows, cols, vec, st);
        if (cols <= 4 * chunkCols) return launchWarp<T, Kind, 4, 1>(x, y, rows, cols, vec, st);
        if (cols <= 8 * chunkCols) return launchWarp<T, Kind, 8, 1>(x, y, rows, cols, vec, st);
        if (cols <= 16 * chunkCols) return launchWarp<T, Kind, 16, 1>(x, y, rows, cols, vec, st);
        if (cols <= 32 * chunkCols) return launchWarp<T, Kind, 32, 1>(x, y, rows, cols, vec, st);
        if (cols <= 64 * chunkCols) return launchWarp<T, Kind, 32, 2>(x, y, rows, cols, vec, st);
        if (cols <= 128 * chunkCols) return launchWarp<T, Kind, 32, 4>(x, y, rows, cols, vec, st);
        return launchWarp<T, Kind, 32, 8>(x, y, rows, cols, vec, st); // fp32 1024, 16-bit 2048
    }
    case PathBlock: { // 16 values per thread; the smallest block that holds the row
        constexpr int C = 16 / V;
        if (cols <= 128 * 16) return launchBlock<T, Kind, 128, C>(x, y, rows, cols, vec, 1, st);
        if (cols <= 256 * 16) return launchBlock<T, Kind, 256, C>(x, y, rows, cols, vec, 1, st);
        if (cols <= 512 * 16) return launchBlock<T, Kind, 512, C>(x, y, rows, cols, vec, 1, st);
        return launchBlock<T, Kind, 1024, C>(x, y, rows, cols, vec, 1, st);
    }
    case PathCluster: return rowSoftmaxCluster<T, Kind>(x, y, rows, cols, vec, 0, st);
    case PathStaged: { // rows needing more than 16 slices (or a non-resident cluster): register cluster path
        const int flags = kStageFlags | ((size_t)cols * sizeof(T) > (size_t)8 * kStageSliceBytes ? kStageLoadBalance : 0);
        // fp32 rows of 16 blocks: 128 threads measured faster (2.66 vs 2.48 TB/s at 262144 on H100).
        const cudaError_t e = sizeof(T) == 4 && cols > 65536
                                  ? rowSoftmaxStaged<T, Kind, 128>(x, y, rows, cols, vec, kStageSliceBytes, kStagePieces, st, flags)
                                  : rowSoftmaxStaged<T, Kind>(x, y, rows, cols, vec, kStageSliceBytes, kStagePieces, st, flags);
        return e == cudaErrorInvalidValue ? rowSoftmaxCluster<T, Kind>(x, y, rows, cols, vec, 0, st) : e;
    }
    case PathSmem: {
        const size_t bytes = ((size_t)cols * sizeof(T) + 15) / 16 * 16;
        auto kern = softmaxSmemKernel<T, Kind>;
        if (bytes > 48 * 1024) {
            cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
            if (e != cudaSuccess) return e;
        }
        kern<<<rows, kSmemThreads, bytes, st>>>(x, y, cols, vec);
        return cudaGetLastError();
    }
    default:
        softmaxTwoPassKernel<T, Kind><<<rows, kTwoPassThreads, 0, st>>>(x, y, cols, vec);
        return cudaGetLastError();
    }
}

} // namespace rowsm

#ifndef WARPKIT_SOFTMAX_SAMPLE_NO_MAIN
#include <math.h>
#include <stdlib.h>
#include <vector>

// Demo: each path on a few shapes, checked against a double-precision CPU softmax.
template <typename T> static int demo(const char* tname, int rows, int cols, rowsm::Path path) {
    std::vector<T> hx((size_t)rows * cols), hy((size_t)rows * cols);
    unsigned s = 12345u + cols;
    for (auto& e : hx) { s = s * 1664525u + 1013904223u; e = (T)(((s >> 8) / 16777216.0f) * 20.0f - 10.0f); }
    T *dx, *dy;
    cudaMalloc(&dx, hx.size() * sizeof(T));
    cudaMalloc(&dy, hx.size() * sizeof(T));
    cudaMemcpy(dx, hx.data(), hx.size() * sizeof(T), cudaMemcpyHostToDevice);
    cudaError_t e = rowsm::rowSoftmax<T>(dx, dy, rows, cols, path);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    cudaMemcpy(hy.data(), dy, hy.size() * sizeof(T), cudaMemcpyDeviceToHost);
    cudaFree(dx);
    cudaFree(dy);
    if (e != cudaSuccess) { printf("  %-6s %-8s %5d x %-6d CUDA error: %s\n", tname, rowsm::pathName(path), rows, cols, cudaGetErrorString(e)); return 1; }
    double worst = 0;
    for (int r = 0; r < rows; ++r) {
        const T* xr = &hx[(size_t)r * cols];
        double m = -INFINITY, sum = 0;
        for (int c = 0; c < cols; ++c) m = fmax(m, (double)(float)xr[c]);
        for (int c = 0; c < cols; ++c) sum += exp((double)(float)xr[c] - m);
        for (int c = 0; c < cols; ++c) {
            const double want = exp((double)(float)xr[c] - m) / sum, got = (double)(float)hy[(size_t)r * cols + c];
            worst = fmax(worst, fabs(got - want) / fmax(want, sizeof(T) == 4 ? 1e-30 : 1e-3));
        }
    }
    const double tol = sizeof(T) == 4 ? 1e-5 : 1e-2;
    printf("  %-6s %-8s %5d x %-6d max rel err %.2e %s\n", tname, rowsm::pathName(path), rows, cols, worst, worst <= tol ? "ok" : "FAIL");
    return worst <= tol ? 0 : 1;
}

int main() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) { printf("no CUDA device\n"); return 0; }
    int bad = 0;
    const rowsm::Path paths[] = {rowsm::PathWarp, rowsm::PathBlock, rowsm::PathCluster, rowsm::PathSmem, rowsm::PathTwoPass, rowsm::PathStaged};
    const int cols[] = {1, 7, 32, 1000, 1024, 5000, 16384, 100003};
    for (rowsm::Path p : paths)
        for (int c : cols) {
            if (!rowsm::pathSupports<float>(p, c)) continue;
            bad += demo<float>("float", 37, c, p);
            bad += demo<__half>("half", 37, c, p);
            bad += demo<__nv_bfloat16>("bf16", 37, c, p);
        }
    printf(bad ? "softmax sample: %d FAILED\n" : "softmax sample: all ok\n", bad);
    return bad ? 1 : 0;
}
#endif
