// samples/softmax.cu: softmax over the last dimension of a rows x cols matrix (float, __half,
// __nv_bfloat16), with a host dispatcher that picks one of five paths by row length:
//
//   1. Warp:     cols <= 1024: a segment of Width lanes (1..32) per row, up to 32 values per lane,
//                several rows per warp and per thread, row in registers, no barriers.
//   2. Block:    one block per row, 16 values per thread in registers (cols <= 16384; Auto
//                uses it up to 8192).
//   3. Cluster:  (Hopper, sm_90) a thread-block cluster per row (cols <= 262144): each block
//                keeps its slice in registers, publishes its {max, sum} in shared memory and
//                reads the others' through distributed shared memory (DSMEM), so each element
//                is read once and written once however long the row.
//   4. Smem:     one block per row, row staged in dynamic shared memory (up to the device's
//                opt-in limit, 227 KB on H100): the one-read path for GPUs without clusters.
//   5. TwoPass:  online softmax: pass 1 streams the row into a SoftmaxState, pass 2 re-reads it
//                and writes. Any length, any GPU; reads the row twice.
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

enum Path { PathAuto = 0, PathWarp, PathBlock, PathCluster, PathSmem, PathTwoPass };
static const char* pathName(Path p) {
    static const char* n[] = {"auto", "warp", "block", "cluster", "smem", "twopass"};
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

// ---- 2 and 3. block and cluster paths ------------------------------------------------------------
// Threads threads, C chunks of V elements each: a slice of Threads*C*V columns in registers.
// Without a cluster one block holds the whole row. In a cluster of N blocks, block rank k holds
// columns [k*slice, (k+1)*slice); after the block reductions each block publishes its {max, sum}
// in shared memory, reads the others' through DSMEM, merges, and rescales its slice.
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
    __shared__ SoftmaxState part; // this block's {max, sum}, read by the cluster's other blocks
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
        warpkit::detail::softmaxCore<Kind>(v, rmax, rsum, [&](SoftmaxState mine) {
            if (t == 0) part = mine;
            cluster.sync(); // every block's part is published
            SoftmaxState o = warpkit::softmaxStateEmpty();
            const int lane = t & 31;
            if (lane < nblocks) o = *cluster.map_shared_rank(&part, lane);
            o = warpkit::warpReduceSoftmaxState<32>(o); // every lane: the whole row's state
            // Done reading the others' `part`; the matching wait comes just before exit.
            asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
            return o;
        });
#endif
    }
#pragma unroll
    for (int c = 0; c < C; ++c)
        storeSlots<T, V>(q, &v[c * V], cols, vec, base + (c * Threads + t) * V, base + c * V * Threads + t, Threads, true);
#if WARPKIT_ARCH >= 900
    if (nblocks > 1) asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); // keep `part` alive
#endif
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

constexpr int kMaxWarpCols = 1024, kMaxClusterCols = 262144;
/// Longest row the block path holds: 1024 threads x 16 values.
template <typename T> constexpr int maxBlockCols() { return 1024 * 16; }

/// The path Auto picks for `cols` columns of T.
template <typename T> static Path autoPath(int cols) {
    const DeviceInfo d = deviceInfo();
    if (cols <= kMaxWarpCols) return PathWarp;
    if (cols <= 512 * 16) return PathBlock;
    if (d.clusters && cols <= kMaxClusterCols) return PathCluster;
    if (cols <= maxBlockCols<T>()) return PathBlock;
    if ((size_t)cols * sizeof(T) + 16 <= (size_t)d.smemOptin) return PathSmem;
    return PathTwoPass;
}

/// Whether `path` can run `cols` columns of T on this device.
template <typename T> static bool pathSupports(Path path, int cols) {
    const DeviceInfo d = deviceInfo();
    switch (path) {
    case PathAuto: case PathTwoPass: return true;
    case PathWarp: return cols <= kMaxWarpCols;
    case PathBlock: return cols <= maxBlockCols<T>();
    case PathCluster: return d.clusters && cols <= kMaxClusterCols;
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

/// How many clusters of n blocks of (Threads, C) the device can hold at once (0: none fit).
/// Cached per kernel and n: the occupancy query costs host time.
template <typename T, int Kind, int Threads, int C> static int clusterFits(int n) {
    static int cache[17] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    if (n < 1 || n > 16) return 0;
    if (cache[n] >= 0) return cache[n];
    auto kern = softmaxBlockKernel<T, Kind, Threads, C>;
    int clusters = 0;
    if (n <= 8 || cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) == cudaSuccess) {
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3((unsigned)n);
        cfg.blockDim = dim3(Threads);
        cudaLaunchAttribute attr[1];
        clusterConfig(&cfg, attr, n);
        if (cudaOccupancyMaxActiveClusters(&clusters, kern, &cfg) != cudaSuccess) clusters = 0;
    }
    cudaGetLastError();
    return cache[n] = clusters;
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
        return launchWarp<T, Kind, 32, 32 / V>(x, y, rows, cols, vec, st); // fp32: 8 chunks
    }
    case PathBlock: { // 16 values per thread; the smallest block that holds the row
        constexpr int C = 16 / V;
        if (cols <= 128 * 16) return launchBlock<T, Kind, 128, C>(x, y, rows, cols, vec, 1, st);
        if (cols <= 256 * 16) return launchBlock<T, Kind, 256, C>(x, y, rows, cols, vec, 1, st);
        if (cols <= 512 * 16) return launchBlock<T, Kind, 512, C>(x, y, rows, cols, vec, 1, st);
        return launchBlock<T, Kind, 1024, C>(x, y, rows, cols, vec, 1, st);
    }
    case PathCluster: return rowSoftmaxCluster<T, Kind>(x, y, rows, cols, vec, 0, st);
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
    const rowsm::Path paths[] = {rowsm::PathWarp, rowsm::PathBlock, rowsm::PathCluster, rowsm::PathSmem, rowsm::PathTwoPass};
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
