// warpkit/device/detail/row_kernels.cuh: the kernels of the row-wise device algorithms
// (device/norm.cuh, cross_entropy.cuh, softmax_backward.cuh), generic over the algorithm's params
// P (the contract: row_op.cuh), each a short body over named stages:
//   rowOpWarpKernel     a segment of W lanes per row, several rows a warp, the row in registers
//   rowOpBlockKernel    a block, or a cluster of blocks, per row, the row in registers
//   rowOpStreamKernel   any GPU, any length: each block streams its slice twice
//   rowReduceWarpKernel per-row outputs only: a warp per row streams it once
// The staged kernel (rowOpStagedKernel, sm_90: a cluster per row, each block's slice bulk-copied to
// shared memory) is in row_staged.cuh. Which one runs a shape: row_plan.cuh; their launches:
// row_launch.cuh. The full-row forms of the register paths read the row inputs with P's load hint
// (RowLoadHint, row_op.cuh); the general forms and the streamed path (each element read twice) keep
// the read-only loads. Internal.
#pragma once

#include "row_op.cuh"
#include "row_staged.cuh"
#include "../../cluster/reduce.cuh"
#include "../../thread/softmax.cuh"
#include "../../block/reduce.cuh"
#include "../../welford.cuh"

namespace warpkit {
namespace detail {

// ---- 1. warp path: a segment of W lanes per row ---------------------------------------------------
// The layout and rows a thread as rowSoftmax's warp kernel (WarpRowShape), in blocks of Threads
// (kRowWarpThreads; R25's shape kRowWarpFitThreads): Threads / W segments a block, each R rows;
// rows past the end load nothing and store nothing.

/// The blocks an SM that the warp kernel's launch bounds ask for: in blocks of kRowWarpThreads none
/// (0: ptxas's own register choice; asking for 1 moves R25's 48 registers to 64); in larger blocks
/// 32 warps an SM (at most 64 registers a thread), so that a params type needing more registers
/// does not leave one block an SM.
constexpr int rowWarpMinBlocks(int threads) { return threads > kRowWarpThreads ? 1024 / threads : 0; }
/// Rows a block of `threads` of the warp kernel holds.
template <typename T, int W, int C, bool Aligned> WARPKIT_HD constexpr int rowWarpRowsPerBlock(int threads) {
    return threads / W * WarpRowShape<T, W, C, Aligned>::R;
}

// Full (P::kFullRows; rowRun decides per launch): every row is aligned and fills the W x C slots
// of its segment (cols == W * C * V), so that no slot is tested (RowPart::full): a row's loads and
// stores are C unconditional 16-byte accesses from one address; a warp whose one row is past the
// end returns, any other row past the end is fill values, neither loaded nor stored.
template <typename P, int W, int C, bool Aligned, int Threads = kRowWarpThreads, bool Full = false>
__global__ void __launch_bounds__(Threads, rowWarpMinBlocks(Threads)) rowOpWarpKernel(P p, long long rows, int cols) {
    using T = typename P::Elem;
    using S = WarpRowShape<T, W, C, Aligned>;
    static_assert(Threads % W == 0 && Threads % 32 == 0 && Threads <= 1024,
                  "rowOpWarpKernel: Threads must be a multiple of 32 and of W, at most 1024");
    static_assert(!Full || Aligned, "rowOpWarpKernel: Full rows must be Aligned");
    constexpr int NI = P::kInputs, segs = Threads / W;
    constexpr int LH = Full ? RowLoadHint<P>::value : LoadReadOnly;
    const int seg = (int)threadIdx.x / W, l = (int)threadIdx.x % W;
    const long long row0 = (long long)blockIdx.x * rowWarpRowsPerBlock<T, W, C, Aligned>(Threads) + seg;
    if constexpr (Full && S::R == 1 && W == 32)
        if (row0 >= rows) return; // the warp's one row is past the end (its shuffles are its own)
    T v[S::R][NI][S::K];
    RowPart part[S::R];
#pragma unroll
    for (int r = 0; r < S::R; ++r) {
        const long long row = row0 + (long long)r * segs;
        const bool ok = row < rows;
        const T* x = rowInput(p, 0, ok ? row : 0);
        if constexpr (Full) {
            part[r] = rowPart(VectorSplit{0, 0, W * C}, l, W, 0, -1, false, true);
            loadFull<C, LH>(v[r][0], x, 0, l, W, ok, rowFill(p, 0));
            if constexpr (NI > 1) loadPart<C, 0, true, LH>(v[r][1], rowInput1(p, ok ? row : 0), part[r], rowFill(p, 1));
        } else {
            const int n = ok ? cols : 0; // a row past the end: every slot empty
            const VectorSplit sp = Aligned ? VectorSplit{0, 0, n / S::V} : vectorSplit(x, n);
            part[r] = rowPart(sp, l, W, 0, -1, true);
            loadShare<C, S::E, LoadReadOnly>(v[r][0], x, sp, l, W, rowFill(p, 0), 0, -1);
            if constexpr (NI > 1)
                loadPart<C, S::E, Aligned>(v[r][1], rowInput1(p, ok ? row : 0), part[r], rowFill(p, 1));
        }
    }
#pragma unroll
    for (int r = 0; r < S::R; ++r) {
        const long long row = row0 + (long long)r * segs;
        float x[NI][S::K];
        rowToFloat(v[r], x);
        const auto f = rowRegs<C, S::E>(p, row < rows ? row : 0, cols, part[r], x, SegmentGroup<W>{});
        if (l == 0 && row < rows) rowOutputs(p, f, row);
        rowFromFloat(x[0], v[r][0]);
    }
#pragma unroll
    for (int r = 0; r < S::R; ++r) {
        const long long row = row0 + (long long)r * segs;
        T* y = row < rows ? rowOutput(p, row) : nullptr;
        if (y == nullptr) continue;
        if constexpr (Full) storeFull<C>(y, v[r][0], 0, l, W);
        else storeShare<C, S::E>(y, part[r].s, v[r][0], l, W, 0, -1);
    }
}

// ---- 2. block path: a block, or a cluster of blocks, per row; the row in registers -----------------
// Block k of a row's cluster holds body vectors [k*slice, (k+1)*slice), C a thread; block 0 also
// holds the head and tail elements (none when Aligned). The blocks combine P::Exchange values with
// clusterReduce. Full (as the warp path's): aligned rows of exactly the cluster's blocks x Threads
// x C vectors (slice == Threads * C), every slot of every thread holding a vector. Copy (R30; the
// launch gave dynamic shared memory for them): P's column vectors of each thread's first pieces
// are copied there (rowBlockColumnPieces), the group telling P's outputs how many.
template <typename P, int Threads, int C, bool Aligned, bool Full = false, bool Copy = false>
__global__ void __launch_bounds__(Threads, rowBlockMinBlocks<P, Threads, C, Aligned, Full, Copy>())
    rowOpBlockKernel(P p, int cols, int slice) {
    using T = typename P::Elem;
    static_assert(!Full || Aligned, "rowOpBlockKernel: Full rows must be Aligned");
    constexpr int NI = P::kInputs, E = Aligned ? 0 : 1, K = C * vectorElems<T>() + E;
    constexpr int LH = Full ? RowLoadHint<P>::value : LoadReadOnly;
    __shared__ ClusterExchange<typename P::Exchange> xch;
    unsigned round = clusterExchangeInit(xch);
    const unsigned nb = clusterBlocks(), rank = clusterBlockRank();
    const int t = (int)threadIdx.x;
    const long long row = blockIdx.x / nb;
    const T* x0 = rowInput(p, 0, row);
    const VectorSplit sp = Aligned ? VectorSplit{0, 0, cols / vectorElems<T>()} : vectorSplit(x0, cols);
    const int first = (int)rank * slice; // rows are shorter than 2^31 elements
    const RowPart part = rowPart(sp, t, Threads, first, first + slice, rank == 0, Full);
    // R30: the first pieces' column vectors to shared memory, issued before the row's loads (their
    // addresses then hold no registers beside the row's), landing while those are in flight.
    constexpr int CP = Copy ? rowBlockColumnPieces<P, Threads, C, Aligned, Full>() : 0;
    if constexpr (CP > 0) {
        extern __shared__ __align__(16) uint4 wk_row_cols[];
        rowBlockColumnsIssue<CP>(p, part, wk_row_cols);
    }
    T v[NI][K];
    if constexpr (Full) loadFull<C, LH>(v[0], x0, first, t, Threads, true, rowFill(p, 0));
    else loadShare<C, E, LoadReadOnly>(v[0], x0, sp, t, Threads, rowFill(p, 0), first, part.end, rank == 0);
    if constexpr (NI > 1) loadPart<C, E, Aligned, LH>(v[1], rowInput1(p, row), part, rowFill(p, 1));
    float x[NI][K];
    rowToFloat(v, x);
    BlockGroup<Threads, typename P::Exchange, CP> g{&xch, &round};
    const auto f = rowRegs<C, E>(p, row, cols, part, x, g);
    if (rank == 0 && t == 0) rowOutputs(p, f, row);
    T* y = rowOutput(p, row);
    if (y == nullptr) return;
    rowFromFloat(x[0], v[0]);
    if constexpr (Full) storeFull<C>(y, v[0], first, t, Threads);
    else storeShare<C, E>(y, sp, v[0], t, Threads, first, part.end, rank == 0);
}

// ---- 3. streamed path: any GPU, any length ----------------------------------------------------------
// The streamed kernels carry the inputs' rows as pointers to P::Elem; an input 1 of another type
// (RowElem1<P>, narrower) is carried by its address and read as its own type by these helpers, a
// vector of P::Elem's columns at a time, widened exactly (for inputs of one type they are the plain
// pointer arithmetic and loads).
template <typename P> struct RowInputsAlike {
    static constexpr bool value = IsSame<RowElem1<P>, typename P::Elem>::value;
};
/// Input k's row pointer (inputs of two types; of one type: rowInput).
template <typename P> WARPKIT_DEVICE const typename P::Elem* rowInputPtr(const P& p, int k, long long row) {
    return k == 0 ? rowInput(p, 0, row) : reinterpret_cast<const typename P::Elem*>(rowInput1(p, row));
}
/// Element a + b of input k's row q (q + a + b for inputs of one type).
template <typename P>
WARPKIT_DEVICE const typename P::Elem* rowInputAt(const typename P::Elem* q, int k, int a, int b) {
    if constexpr (RowInputsAlike<P>::value) return q + a + b;
    else
        return k == 0 ? q + a + b
                      : reinterpret_cast<const typename P::Elem*>(reinterpret_cast<const RowElem1<P>*>(q) + a + b);
}
/// Whether a vector of input k's elements at q is one aligned access.
template <typename P> WARPKIT_DEVICE bool rowInputVec(const typename P::Elem* q, int k) {
    constexpr int V = vectorElems<typename P::Elem>();
    return (((size_t)q) & ((k == 0 ? 16 : V * sizeof(RowElem1<P>)) - 1)) == 0;
}
/// A vector of P::Elem's columns of input k at q, as P::Elem (see loadVectorAt).
template <int Hint, typename P>
WARPKIT_DEVICE Vector16<typename P::Elem> rowInputVector(const typename P::Elem* q, int k, bool vec) {
    using T = typename P::Elem;
    using T1 = RowElem1<P>;
    if constexpr (RowInputsAlike<P>::value) {
        return loadVectorAt<Hint>(q, vec);
    } else {
        if (k == 0) return loadVectorAt<Hint>(q, vec);
        const RowVec<T1, vectorElems<T>()> w = loadRowVec<vectorElems<T>(), Hint>(reinterpret_cast<const T1*>(q), vec);
        Vector16<T> o;
#pragma unroll
        for (int e = 0; e < vectorElems<T>(); ++e) o.e[e] = Arith<T>::from_acc(Arith<T1>::to_acc(w.e[e]));
        return o;
    }
}
/// One element of input k at q, as float.
template <typename P> WARPKIT_DEVICE float rowInputScalar(const typename P::Elem* q, int k) {
    if constexpr (RowInputsAlike<P>::value) return Arith<typename P::Elem>::to_acc(loadScalar(q));
    else if (k == 0) return Arith<typename P::Elem>::to_acc(loadScalar(q));
    else return Arith<RowElem1<P>>::to_acc(loadScalar(reinterpret_cast<const RowElem1<P>*>(q)));
}

// The statistics sweep of the streamed paths (below, and the warp-streamed one): rowStatsAdd of
// body vectors i0, i0 + S, i0 + 2S, ... below `end` of every input (input k's body 16-byte aligned
// where vec[k]), L vectors of each in flight.
template <int S, int L, typename P, int NI>
WARPKIT_DEVICE void rowStreamSweep(const P& p, typename P::Acc& acc, const typename P::Elem* const (&in)[NI],
                                   const bool (&vec)[NI], const VectorSplit& sp, int i0, int end) {
    using T = typename P::Elem;
    constexpr int V = vectorElems<T>();
    for (int i = i0; i < end; i += L * S) {
        Vector16<T> q[L][NI];
#pragma unroll
        for (int u = 0; u < L; ++u)
#pragma unroll
            for (int k = 0; k < NI; ++k)
                if (i + u * S < end) {
                    if constexpr (RowInputsAlike<P>::value)
                        q[u][k] = loadVectorAt<LoadReadOnly>(in[k] + sp.head + (i + u * S) * V, vec[k]);
                    else
                        q[u][k] = rowInputVector<LoadReadOnly, P>(rowInputAt<P>(in[k], k, sp.head, (i + u * S) * V), k,
                                                                  vec[k]);
                }
#pragma unroll
        for (int u = 0; u < L; ++u) {
            if (i + u * S < end) {
                float xf[NI][V];
#pragma unroll
                for (int k = 0; k < NI; ++k)
#pragma unroll
                    for (int e = 0; e < V; ++e) xf[k][e] = Arith<T>::to_acc(q[u][k].e[e]);
                rowStatsAdd<V>(p, acc, xf, sp.head + (i + u * S) * V);
            }
        }
    }
}

// Each block (a cluster of up to 16 on sm_90) streams its slice of the row twice: the statistics a
// 16-byte vector at a time, then the outputs. Reads each element twice.
template <typename P, int Threads> __global__ void __launch_bounds__(Threads)
    rowOpStreamKernel(P p, int cols, int slice) {
    using T = typename P::Elem;
    constexpr int NI = P::kInputs, V = vectorElems<T>(), L = 4 / NI; // L vectors of each input in flight
    __shared__ ClusterExchange<typename P::Exchange> xch;
    unsigned round = clusterExchangeInit(xch);
    const unsigned nb = clusterBlocks(), rank = clusterBlockRank();
    const int t = (int)threadIdx.x;
    const long long row = blockIdx.x / nb;
    const T* in[NI];
    bool vec[NI]; // whether input k's body is 16-byte aligned (input 0's always is)
#pragma unroll
    for (int k = 0; k < NI; ++k) in[k] = RowInputsAlike<P>::value ? rowInput(p, k, row) : rowInputPtr(p, k, row);
    const VectorSplit sp = vectorSplit(in[0], cols);
#pragma unroll
    for (int k = 0; k < NI; ++k)
        vec[k] = RowInputsAlike<P>::value ? (((size_t)(in[k] + sp.head)) & 15) == 0
                                          : rowInputVec<P>(rowInputAt<P>(in[k], k, sp.head, 0), k);
    const int first = (int)rank * slice;
    const int end = first + slice < sp.vectors ? first + slice : (int)sp.vectors;
    // Head and tail elements (block 0): thread t holds element t of them, from the first sweep on.
    const bool hasX = rank == 0 && t < sp.head + sp.tail;
    const int xcol = extraIndex<int>(sp, t, V);
    float xe[NI][1];
#pragma unroll
    for (int k = 0; k < NI; ++k)
        if constexpr (RowInputsAlike<P>::value) xe[k][0] = hasX ? Arith<T>::to_acc(loadScalar(in[k] + xcol)) : 0.0f;
        else xe[k][0] = hasX ? rowInputScalar<P>(rowInputAt<P>(in[k], k, xcol, 0), k) : 0.0f;
    typename P::Acc acc = rowStatsInit(p, row, cols, rank == 0 && t == 0);
    if constexpr (!RowStatsGiven<P>::value) { // statistics given from outside: one read
        rowStreamSweep<Threads, L>(p, acc, in, vec, sp, first + t, end);
        if (hasX) rowStatsAdd<1>(p, acc, xe, xcol);
    }
    const typename P::Exchange total = clusterReduce(xch, round, rowStatsTotal<Threads>(p, acc), typename P::Merge{});
    const auto f = rowFactors(p, acc, total, row, sp, cols);
    if (rank == 0 && t == 0) rowOutputs(p, f, row);
    T* y = rowOutput(p, row);
    if (y == nullptr) return;
    const bool vecOut = (((size_t)(y + sp.head)) & 15) == 0;
    for (int i = first + t; i < end; i += Threads) {
        float xf[NI][V];
#pragma unroll
        for (int k = 0; k < NI; ++k) {
            Vector16<T> q;
            if constexpr (RowInputsAlike<P>::value) q = loadVectorAt<LoadReadOnly>(in[k] + sp.head + i * V, vec[k]);
            else q = rowInputVector<LoadReadOnly, P>(rowInputAt<P>(in[k], k, sp.head, i * V), k, vec[k]);
#pragma unroll
            for (int e = 0; e < V; ++e) xf[k][e] = Arith<T>::to_acc(q.e[e]);
        }
        rowOut<V>(p, f, xf, sp.head + i * V);
        Vector16<T> o;
#pragma unroll
        for (int e = 0; e < V; ++e) o.e[e] = Arith<T>::from_acc(xf[0][e]);
        storeVectorAt(y + sp.head + i * V, o, vecOut);
    }
    if (hasX) {
        rowOut<1>(p, f, xe, xcol);
        storeScalar(y + xcol, Arith<T>::from_acc(xe[0][0]));
    }
}

// ---- 4. warp-streamed path: per-row outputs only, a warp per row -----------------------------------
// For calls that write no per-element output (the cross-entropy loss alone; P::kReduceWarp): each
// warp streams one row once (rowStreamSweep), kRowReduceWarpChunks 16-byte vectors a lane in
// flight, the lanes' states combined with shuffles (rowStatsExchange, P::Merge), and lane 0
// writes the row's outputs. No barriers and no shared memory, so every warp runs independently of
// the others.
constexpr int kRowReduceWarpChunks = 4; // R16 (16-bit: 53-64 registers)
template <typename P> __global__ void __launch_bounds__(kRowWarpThreads)
    rowReduceWarpKernel(P p, long long rows, int cols) {
    using T = typename P::Elem;
    constexpr int V = vectorElems<T>();
    static_assert(P::kInputs == 1, "rowReduceWarpKernel: P::kInputs must be 1");
    const int lane = (int)threadIdx.x % 32;
    const long long row = (long long)blockIdx.x * (kRowWarpThreads / 32) + (int)threadIdx.x / 32;
    if (row >= rows) return; // the whole warp
    const T* x = rowInput(p, 0, row);
    const VectorSplit sp = vectorSplit(x, cols);
    typename P::Acc acc = rowStatsInit(p, row, cols, lane == 0);
    const T* const in[1] = {x};
    const bool vec[1] = {true}; // the split's body is aligned
    rowStreamSweep<32, kRowReduceWarpChunks>(p, acc, in, vec, sp, lane, (int)sp.vectors);
    if (lane < sp.head + sp.tail) { // head and tail elements: at most 2V - 2 < 32, one a lane
        const int col = extraIndex<int>(sp, lane, V);
        const float xe[1][1] = {{Arith<T>::to_acc(loadScalar<LoadReadOnly>(x + col))}};
        rowStatsAdd<1>(p, acc, xe, col);
    }
    const typename P::Exchange total = warpReduce<32>(rowStatsExchange(p, acc), typename P::Merge{});
    const auto f = rowFactors(p, acc, total, row, sp, cols);
    if (lane == 0) rowOutputs(p, f, row);
}

} // namespace detail
} // namespace warpkit
