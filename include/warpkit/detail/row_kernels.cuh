// warpkit/detail/row_kernels.cuh: the kernels and host dispatch shared by the row-wise device
// algorithms built on rowSoftmax's paths: rowLayerNorm and rowRmsNorm (device/norm.cuh),
// rowCrossEntropy (device/cross_entropy.cuh) and rowSoftmaxBackward (device/softmax_backward.cuh).
// Internal: include one of those headers instead.
//
// Each algorithm is a params struct P (plain data: pointers, strides, scalars) with the types
//   P::Elem (T), P::kInputs (row arrays read: 1 or 2), P::kColumns (per-column arrays read, such
//   as LayerNorm's w and b: 0..2), P::kOutFast (rowOutFast below), P::kReduceWarp (calls without
//   per-element outputs may take the warp-streamed path), P::kWarpChunks (the fewest vectors a lane
//   of the warp path holds: 1, 2 or 4, rowWarpPlan), P::Exchange and P::Merge
//   (what the blocks of a row's cluster combine, and the operator), P::Acc (a thread's running
//   statistics when streamed or staged),
// and free functions overloaded on P (found by argument-dependent lookup):
//   rowAt(p, r0)                    the params of the rows from r0 on (host; launch chunks)
//   rowAligned(p, cols)             every row of every row array starts on 16 bytes and holds whole
//                                   vectors (host; picks the instantiation without head/tail slots)
//   rowStageable(p)                 the inputs bulk-copy with input 0's split (host; default: one
//                                   input)
//   rowInput(p, k, row), rowOutput(p, row)   row pointers (the output may be null: nothing stored)
//   rowFill(p, k)                   the value of input k's empty register slots
//   rowColumn(p, k), rowSetColumns(p, c, origin)   column array k (null: not used), and reading
//                                   them from staged copies (P::kColumns > 0 only)
//   rowRegs<C, E>(p, row, cols, part, x, g)  register paths: the row's statistics from the calling
//                                   thread's slots x (floats) through the group g's reductions, the
//                                   outputs written into x[0]; returns the row's factors
//   rowStreamInit(p, row, cols, first), rowStreamAdd<N>, rowStreamTotal<Threads>, rowStreamRow,
//   rowStreamOut<N>                 the streamed and staged paths: a thread's running statistics
//                                   (`first`: the thread is its row's first), a vector at a time, the
//                                   block's total, the row's factors, the outputs a vector at a time
//   rowStreamExchange(p, acc)       (P::kReduceWarp only) a thread's statistics as P::Exchange, for
//                                   the warp-streamed path's shuffles
//   rowOutFast(p, f), rowStreamOutFast<N>   (P::kOutFast only) whether a row's whole-vector outputs
//                                   on the staged path may take the algorithm's branch-free form,
//                                   checked once a row, and that form
//   rowStagedTotal<Threads>(p, acc, sweep)   the staged path's block statistics (default: the
//                                   streamed adds; LayerNorm overloads it with its exact two-pass)
//   rowOutputs(p, f, row)           the per-row outputs (mean, rstd, loss), by one thread a row.
//
// Paths (rowOpPlan: rowPlan's, detail/rows.cuh, with P::kWarpChunks vectors a lane on the warp path,
// 16-bit rows of 1025..4096 columns in blocks of 128 threads, and fp32 rows past 8192 columns and
// many 16-bit rows of 4097..8192 staged):
// warp, block (register clusters), staged (sm_90: slices in shared memory, bulk-copied) and
// streamed; and for calls without per-element outputs (rowReducePlan), warp-streamed. A staged plan
// that cannot run (inputs aligned differently, no clusters) becomes a register cluster plan
// (rowRegisterPlan). Every path but the streamed one reads each element once and writes each
// output once.
#pragma once

#include "rows.cuh"
#include "async.cuh"
#include "../cluster/reduce.cuh"
#include "../thread/softmax.cuh"
#include "../block/reduce.cuh"
#include "../welford.cuh"

namespace warpkit {
namespace detail {

// ---- a thread's part of a row (register paths) --------------------------------------------------

/// The slots of one row a thread holds on the register paths, in loadShare's layout: body vectors
/// first + t + c*G (c < C) below `end`, then the extra (head/tail) elements t + j*G when `extras`.
struct RowPart {
    VectorSplit s; // the row's split (of input 0)
    int t, G;      // this thread and the number of threads sharing the part
    int first;     // the part's first body vector
    int end;       // one past its last body vector (at most s.vectors)
    bool extras;   // whether the part holds the row's head and tail elements
};

WARPKIT_DEVICE RowPart rowPart(const VectorSplit& s, int t, int G, int first, int end, bool extras) {
    const int nv = (int)s.vectors; // rows are shorter than 2^31 elements
    return RowPart{s, t, G, first, end < 0 || end > nv ? nv : end, extras};
}
/// Whether body slot c of the calling thread holds a vector, and the column of its first element.
WARPKIT_DEVICE bool partHasVector(const RowPart& p, int c) { return p.first + p.t + c * p.G < p.end; }
template <typename T> WARPKIT_DEVICE int partVectorColumn(const RowPart& p, int c) {
    return p.s.head + (p.first + p.t + c * p.G) * vectorElems<T>();
}
/// Whether extra slot j of the calling thread holds an element, and its column.
WARPKIT_DEVICE bool partHasExtra(const RowPart& p, int j) { return p.extras && p.t + j * p.G < p.s.head + p.s.tail; }
template <typename T> WARPKIT_DEVICE int partExtraColumn(const RowPart& p, int j) {
    return extraIndex<int>(p.s, p.t + j * p.G, vectorElems<T>());
}
/// Elements of the whole part (all G threads together).
template <typename T> WARPKIT_DEVICE int partElems(const RowPart& p) {
    const int nv = p.end > p.first ? p.end - p.first : 0;
    return nv * vectorElems<T>() + (p.extras ? p.s.head + p.s.tail : 0);
}

/// f(slot, column, holds) for each of the calling thread's C*V + E slots (column is meaningless
/// where the slot holds no element). Full: the caller knows every body slot holds a vector, so
/// `holds` is the constant true there.
template <typename T, int C, int E, bool Full = false, typename F> WARPKIT_DEVICE void forEachSlot(const RowPart& p, F f) {
    constexpr int V = vectorElems<T>();
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const bool ok = Full || partHasVector(p, c);
        const int col = partVectorColumn<T>(p, c);
#pragma unroll
        for (int k = 0; k < V; ++k) f(c * V + k, col + k, ok);
    }
#pragma unroll
    for (int j = 0; j < E; ++j) f(C * V + j, partExtraColumn<T>(p, j), partHasExtra(p, j));
}

/// forEachSlot, split on whether the calling thread's C body slots all hold vectors (every thread
/// of a row but the last few): for those the compiler drops the per-element selects on `holds`.
template <typename T, int C, int E, typename F> WARPKIT_DEVICE void forEachSlotSplit(const RowPart& p, F f) {
    if (partHasVector(p, C - 1)) forEachSlot<T, C, E, true>(p, f);
    else forEachSlot<T, C, E>(p, f);
}

/// For the calling thread's filled slots: fv(slot, column) for each body vector (V slots from
/// `slot`), fe(slot, column) for each extra element.
template <typename T, int C, int E, typename FV, typename FE> WARPKIT_DEVICE void forEachPiece(const RowPart& p, FV fv, FE fe) {
    constexpr int V = vectorElems<T>();
#pragma unroll
    for (int c = 0; c < C; ++c)
        if (partHasVector(p, c)) fv(c * V, partVectorColumn<T>(p, c));
#pragma unroll
    for (int j = 0; j < E; ++j)
        if (partHasExtra(p, j)) fe(C * V + j, partExtraColumn<T>(p, j));
}

/// loadShare of the part's slots from row q of another array, whose rows may be aligned
/// differently from the split's row: 16-byte loads where q's body is aligned (always when
/// Aligned), else element by element. Empty slots get `fill`.
template <int C, int E, bool Aligned, typename T, int K> WARPKIT_DEVICE void loadPart(T (&v)[K], const T* q, const RowPart& p, T fill) {
    constexpr int V = vectorElems<T>();
    const bool vec = Aligned || (((size_t)(q + p.s.head)) & 15) == 0;
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const bool ok = partHasVector(p, c);
        Vector16<T> x;
        if (ok) x = loadVectorAt<LoadReadOnly>(q + partVectorColumn<T>(p, c), vec);
#pragma unroll
        for (int k = 0; k < V; ++k) v[c * V + k] = ok ? x.e[k] : fill;
    }
#pragma unroll
    for (int j = 0; j < E; ++j)
        v[C * V + j] = partHasExtra(p, j) ? loadScalar<LoadReadOnly>(q + partExtraColumn<T>(p, j)) : fill;
}

/// N per-column parameters (LayerNorm's w or b) from columns [col, col + N) of q as floats: `dflt`
/// when q is null, one 16-byte load when N is a whole vector and `vec` (q + col aligned), else one
/// by one.
template <int N, typename T> WARPKIT_DEVICE void loadColumns(const T* q, int col, bool vec, float dflt, float (&out)[N]) {
    if (q == nullptr) {
#pragma unroll
        for (int k = 0; k < N; ++k) out[k] = dflt;
    } else if constexpr (N == vectorElems<T>()) {
        const Vector16<T> v = loadVectorAt(q + col, vec);
#pragma unroll
        for (int k = 0; k < N; ++k) out[k] = Arith<T>::to_acc(v.e[k]);
    } else {
#pragma unroll
        for (int k = 0; k < N; ++k) out[k] = Arith<T>::to_acc(loadScalar(q + col + k));
    }
}

/// Whether every row of q (row stride ld) starts on 16 bytes and holds whole vectors. Host.
template <typename T> inline bool rowsAligned(const T* q, long long ld, int cols) {
    constexpr int V = vectorElems<T>();
    return cols % V == 0 && ((size_t)q & 15) == 0 && ld % V == 0;
}

// ---- the reductions of a row part's threads -----------------------------------------------------
// A group is the set of threads sharing one row part: a segment of W lanes (warp path), or a block
// whose row may be split over a cluster (block path). Every thread of the group calls each function
// with its own value and gets the group's result.

/// A segment of W lanes holding a whole row (warp path).
template <int W> struct SegmentGroup {};
/// A block holding its part of a row; the row's cluster (if any) exchanges X through xch.
template <int Threads, typename X> struct BlockGroup {
    ClusterExchange<X>* xch;
    unsigned* round;
};

template <int W> WARPKIT_DEVICE float groupSum(SegmentGroup<W>, float v) { return warpReduce<W>(v, Sum{}); }
template <int W> WARPKIT_DEVICE float groupMax(SegmentGroup<W>, float v) { return warpReduce<W>(v, Max{}); }
template <int W, int N> WARPKIT_DEVICE void groupSums(SegmentGroup<W>, float (&v)[N]) {
#pragma unroll
    for (int k = 0; k < N; ++k) v[k] = warpReduce<W>(v[k], Sum{});
}
/// The combine across the row's blocks: a segment holds the whole row.
template <int W, typename X, typename Op> WARPKIT_DEVICE X groupCombine(SegmentGroup<W>, X v, Op) { return v; }
/// Whether the row is split over several blocks.
template <int W> WARPKIT_DEVICE bool groupSplit(SegmentGroup<W>) { return false; }
/// The row's first element as float: `lane0` of the segment's first lane (which holds it).
template <int W, typename T> WARPKIT_DEVICE float groupFirst(SegmentGroup<W>, float lane0, const T*) {
    return shflIdx(lane0, 0, W);
}

template <int Threads, typename X> WARPKIT_DEVICE float groupSum(const BlockGroup<Threads, X>&, float v) {
    return blockReduceSum<Threads>(v);
}
template <int Threads, typename X> WARPKIT_DEVICE float groupMax(const BlockGroup<Threads, X>&, float v) {
    return blockReduceMax<Threads>(v);
}
template <int Threads, typename X, int N> WARPKIT_DEVICE void groupSums(const BlockGroup<Threads, X>&, float (&v)[N]) {
    blockReduceSum<Threads>(v);
}
template <int Threads, typename X, typename Op> WARPKIT_DEVICE X groupCombine(const BlockGroup<Threads, X>& g, X v, Op op) {
    return clusterReduce(*g.xch, *g.round, v, op);
}
template <int Threads, typename X> WARPKIT_DEVICE bool groupSplit(const BlockGroup<Threads, X>&) { return clusterBlocks() > 1; }
/// The row's first element as float, read from memory (it lives in one block of the cluster). The
/// read precedes every block's first exchange, and no block writes before its last, so in-place
/// calls read it before it is overwritten.
template <int Threads, typename X, typename T> WARPKIT_DEVICE float groupFirst(const BlockGroup<Threads, X>&, float, const T* row) {
    return Arith<T>::to_acc(loadScalar(row));
}

template <int NI, int K, typename T> WARPKIT_DEVICE void rowToFloat(const T (&v)[NI][K], float (&x)[NI][K]) {
#pragma unroll
    for (int i = 0; i < NI; ++i)
#pragma unroll
        for (int j = 0; j < K; ++j) x[i][j] = Arith<T>::to_acc(v[i][j]);
}
template <int K, typename T> WARPKIT_DEVICE void rowFromFloat(const float (&x)[K], T (&v)[K]) {
#pragma unroll
    for (int j = 0; j < K; ++j) v[j] = Arith<T>::from_acc(x[j]);
}

// The algorithms' functions that callers name with explicit template arguments, declared here so
// that those calls parse as template calls (C++17); argument-dependent lookup finds the overloads.
struct RowOpNone;
template <int C, int E> void rowRegs(RowOpNone*);
template <int N> void rowStreamAdd(RowOpNone*);
template <int Threads> void rowStreamTotal(RowOpNone*);
template <int N> void rowStreamOut(RowOpNone*);
template <int N> void rowStreamOutFast(RowOpNone*);
/// rowStreamOutFast for algorithms without one (P::kOutFast false): named in the staged kernel's
/// discarded branch, never run.
template <int N, typename P, typename F, typename X> WARPKIT_DEVICE void rowStreamOutFast(const P& p, const F& f, X& x, int col) {
    rowStreamOut<N>(p, f, x, col);
}
template <bool B> struct RowBool {
    static constexpr bool value = B;
};

// ---- 1. warp path: a segment of W lanes per row ---------------------------------------------------
// The layout and rows a thread of rowSoftmax's warp kernel (WarpRowShape); rows past the end load
// nothing and store nothing.
template <typename P, int W, int C, bool Aligned>
__global__ void __launch_bounds__(kRowWarpThreads) rowOpWarpKernel(P p, long long rows, int cols) {
    using T = typename P::Elem;
    using S = WarpRowShape<T, W, C, Aligned>;
    constexpr int NI = P::kInputs;
    const int seg = (int)threadIdx.x / W, l = (int)threadIdx.x % W;
    const long long row0 = (long long)blockIdx.x * S::rowsPerBlock + seg;
    T v[S::R][NI][S::K];
    RowPart part[S::R];
#pragma unroll
    for (int r = 0; r < S::R; ++r) {
        const long long row = row0 + (long long)r * S::segs;
        const bool ok = row < rows;
        const T* x = rowInput(p, 0, ok ? row : 0);
        const int n = ok ? cols : 0; // a row past the end: every slot empty
        const VectorSplit sp = Aligned ? VectorSplit{0, 0, n / S::V} : vectorSplit(x, n);
        part[r] = rowPart(sp, l, W, 0, -1, true);
        loadShare<C, S::E, LoadReadOnly>(v[r][0], x, sp, l, W, rowFill(p, 0), 0, -1);
        if constexpr (NI > 1) loadPart<C, S::E, Aligned>(v[r][1], rowInput(p, 1, ok ? row : 0), part[r], rowFill(p, 1));
    }
#pragma unroll
    for (int r = 0; r < S::R; ++r) {
        const long long row = row0 + (long long)r * S::segs;
        float x[NI][S::K];
        rowToFloat(v[r], x);
        const auto f = rowRegs<C, S::E>(p, row < rows ? row : 0, cols, part[r], x, SegmentGroup<W>{});
        if (l == 0 && row < rows) rowOutputs(p, f, row);
        rowFromFloat(x[0], v[r][0]);
    }
#pragma unroll
    for (int r = 0; r < S::R; ++r) {
        const long long row = row0 + (long long)r * S::segs;
        T* y = row < rows ? rowOutput(p, row) : nullptr;
        if (y != nullptr) storeShare<C, S::E>(y, part[r].s, v[r][0], l, W, 0, -1);
    }
}

// ---- 2. block path: a block, or a cluster of blocks, per row; the row in registers -----------------
// Block k of a row's cluster holds body vectors [k*slice, (k+1)*slice), C a thread; block 0 also
// holds the head and tail elements (none when Aligned). The blocks combine P::Exchange values with
// clusterReduce.
template <typename P, int Threads, int C, bool Aligned>
__global__ void __launch_bounds__(Threads) rowOpBlockKernel(P p, int cols, int slice) {
    using T = typename P::Elem;
    constexpr int NI = P::kInputs, E = Aligned ? 0 : 1, K = C * vectorElems<T>() + E;
    __shared__ ClusterExchange<typename P::Exchange> xch;
    unsigned round = clusterExchangeInit(xch);
    const unsigned nb = clusterBlocks(), rank = clusterBlockRank();
    const int t = (int)threadIdx.x;
    const long long row = blockIdx.x / nb;
    const T* x0 = rowInput(p, 0, row);
    const VectorSplit sp = Aligned ? VectorSplit{0, 0, cols / vectorElems<T>()} : vectorSplit(x0, cols);
    const int first = (int)rank * slice; // rows are shorter than 2^31 elements
    const RowPart part = rowPart(sp, t, Threads, first, first + slice, rank == 0);
    T v[NI][K];
    loadShare<C, E, LoadReadOnly>(v[0], x0, sp, t, Threads, rowFill(p, 0), first, part.end, rank == 0);
    if constexpr (NI > 1) loadPart<C, E, Aligned>(v[1], rowInput(p, 1, row), part, rowFill(p, 1));
    float x[NI][K];
    rowToFloat(v, x);
    BlockGroup<Threads, typename P::Exchange> g{&xch, &round};
    const auto f = rowRegs<C, E>(p, row, cols, part, x, g);
    if (rank == 0 && t == 0) rowOutputs(p, f, row);
    T* y = rowOutput(p, row);
    if (y == nullptr) return;
    rowFromFloat(x[0], v[0]);
    storeShare<C, E>(y, sp, v[0], t, Threads, first, part.end, rank == 0);
}

// ---- 3. streamed path: any GPU, any length ----------------------------------------------------------
// The statistics sweep of the streamed paths (below, and the warp-streamed one): rowStreamAdd of
// body vectors i0, i0 + S, i0 + 2S, ... below `end` of every input (input k's body 16-byte aligned
// where vec[k]), L vectors of each in flight.
template <int S, int L, typename P, int NI>
WARPKIT_DEVICE void rowStreamSweep(const P& p, typename P::Acc& acc, const typename P::Elem* const (&in)[NI], const bool (&vec)[NI],
                                   const VectorSplit& sp, int i0, int end) {
    using T = typename P::Elem;
    constexpr int V = vectorElems<T>();
    for (int i = i0; i < end; i += L * S) {
        Vector16<T> q[L][NI];
#pragma unroll
        for (int u = 0; u < L; ++u)
#pragma unroll
            for (int k = 0; k < NI; ++k)
                if (i + u * S < end) q[u][k] = loadVectorAt<LoadReadOnly>(in[k] + sp.head + (i + u * S) * V, vec[k]);
#pragma unroll
        for (int u = 0; u < L; ++u) {
            if (i + u * S < end) {
                float xf[NI][V];
#pragma unroll
                for (int k = 0; k < NI; ++k)
#pragma unroll
                    for (int e = 0; e < V; ++e) xf[k][e] = Arith<T>::to_acc(q[u][k].e[e]);
                rowStreamAdd<V>(p, acc, xf, sp.head + (i + u * S) * V);
            }
        }
    }
}

// Each block (a cluster of up to 16 on sm_90) streams its slice of the row twice: the statistics a
// 16-byte vector at a time, then the outputs. Reads each element twice.
template <typename P, int Threads>
__global__ void __launch_bounds__(Threads) rowOpStreamKernel(P p, int cols, int slice) {
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
    for (int k = 0; k < NI; ++k) in[k] = rowInput(p, k, row);
    const VectorSplit sp = vectorSplit(in[0], cols);
#pragma unroll
    for (int k = 0; k < NI; ++k) vec[k] = (((size_t)(in[k] + sp.head)) & 15) == 0;
    const int first = (int)rank * slice;
    const int end = first + slice < sp.vectors ? first + slice : (int)sp.vectors;
    // Head and tail elements (block 0): thread t holds element t of them, from the first sweep on.
    const bool hasX = rank == 0 && t < sp.head + sp.tail;
    const int xcol = extraIndex<int>(sp, t, V);
    float xe[NI][1];
#pragma unroll
    for (int k = 0; k < NI; ++k) xe[k][0] = hasX ? Arith<T>::to_acc(loadScalar(in[k] + xcol)) : 0.0f;
    typename P::Acc acc = rowStreamInit(p, row, cols, rank == 0 && t == 0);
    rowStreamSweep<Threads, L>(p, acc, in, vec, sp, first + t, end);
    if (hasX) rowStreamAdd<1>(p, acc, xe, xcol);
    const typename P::Exchange total = clusterReduce(xch, round, rowStreamTotal<Threads>(p, acc), typename P::Merge{});
    const auto f = rowStreamRow(p, acc, total, row, sp, cols);
    if (rank == 0 && t == 0) rowOutputs(p, f, row);
    T* y = rowOutput(p, row);
    if (y == nullptr) return;
    const bool vecOut = (((size_t)(y + sp.head)) & 15) == 0;
    for (int i = first + t; i < end; i += Threads) {
        float xf[NI][V];
#pragma unroll
        for (int k = 0; k < NI; ++k) {
            const Vector16<T> q = loadVectorAt<LoadReadOnly>(in[k] + sp.head + i * V, vec[k]);
#pragma unroll
            for (int e = 0; e < V; ++e) xf[k][e] = Arith<T>::to_acc(q.e[e]);
        }
        rowStreamOut<V>(p, f, xf, sp.head + i * V);
        Vector16<T> o;
#pragma unroll
        for (int e = 0; e < V; ++e) o.e[e] = Arith<T>::from_acc(xf[0][e]);
        storeVectorAt(y + sp.head + i * V, o, vecOut);
    }
    if (hasX) {
        rowStreamOut<1>(p, f, xe, xcol);
        storeScalar(y + xcol, Arith<T>::from_acc(xe[0][0]));
    }
}

// ---- 4. staged path (sm_90): a cluster per row, each block's slice in shared memory ----------------
// Block k of a row's cluster bulk-copies its `slice` body vectors of each input into dynamic shared
// memory, in pieces of `piece` vectors (one mbarrier a piece; thread 0 issues every copy at once, so
// no registers are held while the bytes land and several blocks share an SM). Block 0 also holds the
// head and tail elements, one a thread, in registers. The statistics come from the shared copy as
// each piece lands (rowStagedTotal), the blocks combine them with clusterReduce, and a second sweep
// of the shared copy writes the outputs. Reads each element once; every block finishes its reads
// before its first exchange and writes only after its last, so in-place calls are safe.

/// The block's statistics from its staged values as the streamed path takes them: sweep(f) calls
/// f(x, col) for each of the calling thread's vectors (float x[NI][V]) and extra elements (float
/// x[NI][1]), col being the column of x's first element; each goes to rowStreamAdd, and the block's
/// total is rowStreamTotal's. Every thread of the block calls it and gets the result.
template <int Threads, typename P, typename Sweep>
WARPKIT_DEVICE typename P::Exchange rowStagedStreamTotal(const P& p, typename P::Acc& a, Sweep sweep) {
    sweep([&](const auto& x, int col) { rowStreamAdd(p, a, x, col); });
    return rowStreamTotal<Threads>(p, a);
}

/// The staged path's block statistics: rowStagedStreamTotal, unless the algorithm overloads it
/// (LayerNorm's exact two-pass).
template <int Threads, typename P, typename Sweep>
WARPKIT_DEVICE typename P::Exchange rowStagedTotal(const P& p, typename P::Acc& a, Sweep sweep) {
    return rowStagedStreamTotal<Threads>(p, a, sweep);
}

/// Whether every row of the algorithm's inputs can be bulk-copied with input 0's split: each input's
/// rows have input 0's alignment modulo 16 bytes. Host. One input: always.
template <typename P> inline bool rowStageable(const P&) { return P::kInputs == 1; }

/// The most shared memory a staged block takes with its column arrays' slices (else it reads them
/// from global memory): more would leave too few blocks an SM to overlap their phases (H100,
/// RMSNorm fp32 262144 columns, 128 KB a block: 0.68x copy; 16-bit, 64 KB: 0.87x against 0.77x
/// reading w from L2; LayerNorm fp32 262144 at 192 KB a block: 0.48x against 0.54x).
constexpr int kStageMaxBytes = 64 * 1024;
/// The staged slice of rowReducePlan.
constexpr int kStageReduceSliceBytes = 32 * 1024;

// Per-column arrays (P::kColumns of them: LayerNorm's w and b, rowColumn) are read once a row; when
// `stageCols` (the host gave them shared memory: rowStagesColumns) and each in use starts the
// block's slice on 16 bytes, the block bulk-copies their slices too, on a barrier of their own
// after the row's pieces, and the output sweep reads them there (rowSetColumns): from L2 they
// would cost a round trip a batch of vectors.
template <typename P, int Threads>
__global__ void __launch_bounds__(Threads) rowOpStagedKernel(P p, int cols, int slice, int piece, bool stageCols) {
#if WARPKIT_ARCH >= 900
    using T = typename P::Elem;
    constexpr int NI = P::kInputs, NC = P::kColumns, V = vectorElems<T>();
    extern __shared__ __align__(128) uint4 wk_row_stage[]; // NI slices, then the staged columns'; 128-byte aligned
    __shared__ ClusterExchange<typename P::Exchange> xch;
    __shared__ alignas(8) unsigned long long full[kStageMaxPieces + 1]; // the pieces', then the columns'
    unsigned round = clusterExchangeInit(xch);
    const int nb = (int)clusterBlocks(), rank = (int)clusterBlockRank(), t = (int)threadIdx.x;
    const long long row = blockIdx.x / nb;
    const T* in[NI];
#pragma unroll
    for (int k = 0; k < NI; ++k) in[k] = rowInput(p, k, row);
    const VectorSplit sp = vectorSplit(in[0], cols);
    const int base = rank * slice;
    const int nv = stagedVectors(sp, rank, slice);
    const int np = (nv + piece - 1) / piece;
    const T* col[NC > 0 ? NC : 1] = {}; // the column arrays' slices (global), null where not in use
    int nc = 0;                         // how many are in use
    if constexpr (NC > 0) {
#pragma unroll
        for (int k = 0; k < NC; ++k) {
            col[k] = rowColumn(p, k);
            if (col[k] != nullptr) {
                col[k] += sp.head + (long long)base * V;
                stageCols = stageCols && ((size_t)col[k] & 15) == 0;
                ++nc;
            }
        }
    }
    stageCols = stageCols && nc > 0 && nv > 0;
    const unsigned colsBar = smemAddr(&full[kStageMaxPieces]);
    if (t == 0) {
        if (stageCols) mbarInit(colsBar, 1);
        const uint4* src[NI];
#pragma unroll
        for (int i = 0; i < NI; ++i) src[i] = reinterpret_cast<const uint4*>(in[i] + sp.head) + base;
        stagePieces(wk_row_stage, slice, src, nv, piece, full);
        // The columns land on their own barrier, after the row's pieces: the statistics never wait
        // for them, only the output sweep does.
        if (stageCols) {
            mbarArriveExpectTx(colsBar, (unsigned)(nv * 16 * nc));
#pragma unroll
            for (int c = 0, j = 0; c < NC; ++c)
                if (col[c] != nullptr) bulkCopyToShared(smemAddr(wk_row_stage + (NI + j++) * slice), col[c], (unsigned)nv * 16u, colsBar);
        }
    }
    // Head and tail elements (block 0): thread t holds element t of them.
    // (recomputed where used: held across the sweeps, ptxas spills the predicate to local memory)
    auto hasX = [&] { return rank == 0 && t < sp.head + sp.tail; };
    const int xcol = extraIndex<int>(sp, t, V);
    float xe[NI][1];
#pragma unroll
    for (int k = 0; k < NI; ++k) xe[k][0] = hasX() ? Arith<T>::to_acc(loadScalar(in[k] + xcol)) : 0.0f;
    typename P::Acc acc = rowStreamInit(p, row, cols, rank == 0 && t == 0);
    __syncthreads(); // the barriers are initialised before anyone waits on them
    // The calling thread's staged vector i (of its block's slice) as floats, input by input.
    auto staged = [&](int i, float (&x)[NI][V]) {
#pragma unroll
        for (int k = 0; k < NI; ++k) {
            Vector16<T> e;
            const uint4 u = wk_row_stage[k * slice + i];
            __builtin_memcpy(&e, &u, 16);
#pragma unroll
            for (int j = 0; j < V; ++j) x[k][j] = Arith<T>::to_acc(e.e[j]);
        }
    };
    // Each sweep waits for the pieces it reads (at once after the first sweep).
    auto sweep = [&](auto f) {
        for (int k = 0; k < np; ++k) {
            mbarWait(smemAddr(&full[k]), 0);
            const int end = (k + 1) * piece < nv ? (k + 1) * piece : nv;
#pragma unroll 2
            for (int i = k * piece + t; i < end; i += Threads) {
                float x[NI][V];
                staged(i, x);
                f(x, sp.head + (base + i) * V);
            }
        }
        if (hasX()) f(xe, xcol);
    };
    const typename P::Exchange total =
        clusterReduce(xch, round, rowStagedTotal<Threads>(p, acc, sweep), typename P::Merge{});
    // The body's outputs read the staged column slices (ps); the head and tail's, the arrays (p).
    P ps = p;
    if constexpr (NC > 0) {
        if (stageCols) {
            mbarWait(colsBar, 0);
            const T* c[NC];
#pragma unroll
            for (int k = 0, j = 0; k < NC; ++k)
                c[k] = col[k] != nullptr ? reinterpret_cast<const T*>(wk_row_stage + (NI + j++) * slice) : nullptr;
            rowSetColumns(ps, c, sp.head + base * V);
        }
    }
    const auto f = rowStreamRow(ps, acc, total, row, sp, cols);
    if (rank == 0 && t == 0) rowOutputs(p, f, row);
    T* y = rowOutput(p, row);
    if (y == nullptr) return;
    T* yb = y + sp.head;
    const bool vecOut = ((size_t)yb & 15) == 0; // y's rows may be aligned differently from x's
    // U vectors at a time, every store after every output of the batch: the loads an algorithm
    // makes per column (LayerNorm's w and b, when not staged) are all in flight at once rather
    // than one L2 round trip a vector (a store in between could alias them). 16-bit rows batch 2:
    // 8 values a vector, each with its w and b, in 56 registers (4 took 72-78, and spilled for
    // bf16).
    constexpr int U = NC > 0 && sizeof(T) == 4 ? 4 : 2;
    // Fast: rowOutFast held, checked once a row so that the sweep has no per-vector branch.
    auto out = [&](int n, int i0, auto fast) {
        float x[U][NI][V];
#pragma unroll
        for (int u = 0; u < U; ++u)
            if (u < n) staged(i0 + u * Threads, x[u]);
        if constexpr (decltype(fast)::value) {
#pragma unroll
            for (int u = 0; u < U; ++u) {
                if (u >= n) break;
                rowStreamOutFast<V>(ps, f, x[u], sp.head + (base + i0 + u * Threads) * V);
            }
        } else {
#pragma unroll
            for (int u = 0; u < U; ++u)
                if (u < n) rowStreamOut<V>(ps, f, x[u], sp.head + (base + i0 + u * Threads) * V);
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            if (u >= n) break;
            Vector16<T> o;
#pragma unroll
            for (int j = 0; j < V; ++j) o.e[j] = Arith<T>::from_acc(x[u][0][j]);
            const int i = i0 + u * Threads;
            // The aligned store spelled out: through storeVectorAt(..., vecOut) the compiler merges
            // both branches into element stores (LayerNorm fp32: no STG.E.128 left in the SASS).
            if (vecOut) {
                uint4 w;
                __builtin_memcpy(&w, &o, 16);
                reinterpret_cast<uint4*>(yb)[base + i] = w;
            } else {
                storeVectorAt(yb + (long long)(base + i) * V, o, false);
            }
        }
    };
    auto outAll = [&](auto fast) {
        int i0 = t;
        for (; i0 + (U - 1) * Threads < nv; i0 += U * Threads) out(U, i0, fast);
        if (i0 < nv) out((nv - i0 + Threads - 1) / Threads, i0, fast);
    };
    if constexpr (P::kOutFast) {
        if (rowOutFast(ps, f)) outAll(RowBool<true>{});
        else outAll(RowBool<false>{});
    } else {
        outAll(RowBool<false>{});
    }
    if (hasX()) {
        rowStreamOut<1>(p, f, xe, xcol);
        storeScalar(y + xcol, Arith<T>::from_acc(xe[0][0]));
    }
#else
    (void)p, (void)cols, (void)slice, (void)piece, (void)stageCols; // launched on sm_90 and newer only
#endif
}

// ---- 5. warp-streamed path: per-row outputs only, a warp per row -----------------------------------
// For calls that write no per-element output (the cross-entropy loss alone; P::kReduceWarp): each
// warp streams one row once (rowStreamSweep), kRowReduceWarpChunks 16-byte vectors a lane in
// flight, the lanes' states combined with shuffles (rowStreamExchange, P::Merge), and lane 0
// writes the row's outputs. No barriers and no shared memory, so every warp runs independently of
// the others.
constexpr int kRowReduceWarpChunks = 4; // 16-bit: 53-64 registers (8 measured no faster)
template <typename P>
__global__ void __launch_bounds__(kRowWarpThreads) rowReduceWarpKernel(P p, long long rows, int cols) {
    using T = typename P::Elem;
    constexpr int V = vectorElems<T>();
    static_assert(P::kInputs == 1, "rowReduceWarpKernel: P::kInputs must be 1");
    const int lane = (int)threadIdx.x % 32;
    const long long row = (long long)blockIdx.x * (kRowWarpThreads / 32) + (int)threadIdx.x / 32;
    if (row >= rows) return; // the whole warp
    const T* x = rowInput(p, 0, row);
    const VectorSplit sp = vectorSplit(x, cols);
    typename P::Acc acc = rowStreamInit(p, row, cols, lane == 0);
    const T* const in[1] = {x};
    const bool vec[1] = {true}; // the split's body is aligned
    rowStreamSweep<32, kRowReduceWarpChunks>(p, acc, in, vec, sp, lane, (int)sp.vectors);
    if (lane < sp.head + sp.tail) { // head and tail elements: at most 2V - 2 < 32, one a lane
        const int col = extraIndex<int>(sp, lane, V);
        const float xe[1][1] = {{Arith<T>::to_acc(loadScalar<LoadReadOnly>(x + col))}};
        rowStreamAdd<1>(p, acc, xe, col);
    }
    const typename P::Exchange total = warpReduce<32>(rowStreamExchange(p, acc), typename P::Merge{});
    const auto f = rowStreamRow(p, acc, total, row, sp, cols);
    if (lane == 0) rowOutputs(p, f, row);
}

// ---- host side -------------------------------------------------------------------------------------

/// The register plan for a row that rowPlan stages but that cannot (or should not) be staged: the
/// first of 256 threads x 16 values, 512 x 16 and 512 x 32 a block whose cluster of at most 16
/// blocks holds the row in registers, else the streamed path over 16 blocks.
template <typename T> inline RowPlan rowRegisterPlan(int cols) {
    const long long vecs = (long long)cols / vectorElems<T>();
    const int shapes[3][2] = {{256, rowC16<T>()}, {512, rowC16<T>()}, {512, rowC32<T>()}};
    for (const auto& s : shapes) {
        const long long per = (long long)s[0] * s[1];
        const long long n = (vecs + per - 1) / per;
        if (n <= kRowMaxClusterBlocks) return rowBlockPlan(vecs, n, s[0], s[1]);
    }
    return rowStreamPlan(vecs, kRowMaxClusterBlocks);
}

template <typename P, int W, int C, bool Aligned>
inline cudaError_t launchRowOpWarp(const P& p, long long rows, int cols, cudaStream_t st) {
    using S = WarpRowShape<typename P::Elem, W, C, Aligned>;
    return launchRowBlocks(rows, S::rowsPerBlock, [&](long long r0, long long n, int blocks) {
        return launchKernel(rowOpWarpKernel<P, W, C, Aligned>, blocks, kRowWarpThreads, st, rowAt(p, r0), n, cols);
    });
}

/// The warp path's launch for each shape rowWarpPlan(cols, M) gives, M = P::kWarpChunks: one lane of
/// 1, 2, .., M vectors, then 2..32 lanes of M, then 32 lanes of 2M, .., 8.
template <typename P, bool Aligned>
inline cudaError_t rowOpWarp(const RowPlan& pl, const P& p, long long rows, int cols, cudaStream_t st) {
    constexpr int M = P::kWarpChunks;
    static_assert(M == 1 || M == 2 || M == 4, "P::kWarpChunks: the fewest vectors a lane of the warp path holds, 1, 2 or 4");
#define WARPKIT_DETAIL_ROW_WARP_CASE(W, C)                                                \
    if (pl.width == W && pl.chunks == C) return launchRowOpWarp<P, W, C, Aligned>(p, rows, cols, st);
    WARPKIT_DETAIL_ROW_WARP_CASE(1, 1)
    if constexpr (M >= 2) { WARPKIT_DETAIL_ROW_WARP_CASE(1, 2) }
    if constexpr (M >= 4) { WARPKIT_DETAIL_ROW_WARP_CASE(1, 4) }
    WARPKIT_DETAIL_ROW_WARP_CASE(2, M) WARPKIT_DETAIL_ROW_WARP_CASE(4, M) WARPKIT_DETAIL_ROW_WARP_CASE(8, M)
    WARPKIT_DETAIL_ROW_WARP_CASE(16, M) WARPKIT_DETAIL_ROW_WARP_CASE(32, M)
    if constexpr (M < 2) { WARPKIT_DETAIL_ROW_WARP_CASE(32, 2) }
    if constexpr (M < 4) { WARPKIT_DETAIL_ROW_WARP_CASE(32, 4) }
    WARPKIT_DETAIL_ROW_WARP_CASE(32, 8)
#undef WARPKIT_DETAIL_ROW_WARP_CASE
    return cudaErrorInvalidConfiguration;
}

template <typename P, int Threads, int C, bool Aligned>
inline cudaError_t launchRowOpBlock(const RowPlan& pl, const P& p, long long rows, int cols, bool clusters, int dev,
                                    cudaStream_t st) {
    auto kern = rowOpBlockKernel<P, Threads, C, Aligned>;
    return launchRows(kern, rows, pl.blocks, Threads, 0, clusters, dev, st, [&](const cudaLaunchConfig_t& cfg, long long r0) {
        return cudaLaunchKernelEx(&cfg, kern, rowAt(p, r0), cols, pl.slice);
    });
}

template <typename P, bool Aligned>
inline cudaError_t rowOpBlock(const RowPlan& pl, const P& p, long long rows, int cols, bool clusters, int dev, cudaStream_t st) {
    using T = typename P::Elem;
    constexpr int C16 = rowC16<T>(), C32 = rowC32<T>();
#define WARPKIT_DETAIL_ROW_BLOCK_CASE(N, C)                                               \
    if (pl.threads == N && pl.chunks == C) return launchRowOpBlock<P, N, C, Aligned>(pl, p, rows, cols, clusters, dev, st);
    WARPKIT_DETAIL_ROW_BLOCK_CASE(128, C16) WARPKIT_DETAIL_ROW_BLOCK_CASE(256, C16) WARPKIT_DETAIL_ROW_BLOCK_CASE(512, C16)
    WARPKIT_DETAIL_ROW_BLOCK_CASE(1024, C16) WARPKIT_DETAIL_ROW_BLOCK_CASE(512, C32)
    WARPKIT_DETAIL_ROW_BLOCK_CASE(128, C32)
#undef WARPKIT_DETAIL_ROW_BLOCK_CASE
    return cudaErrorInvalidConfiguration;
}

/// The column arrays (P::kColumns) the algorithm's params use. Host.
template <typename P> inline int rowColumnsInUse(const P& p) {
    int nc = 0;
    if constexpr (P::kColumns > 0)
        for (int k = 0; k < P::kColumns; ++k) nc += rowColumn(p, k) != nullptr;
    return nc;
}

/// Whether a staged block of `slice` vectors also stages the column arrays in use: at most as many
/// as its inputs (each costs the shared memory of a slice; LayerNorm's w and b together, which
/// would triple it, measured slower than reading them from L2: fp32 65536 columns 0.82x copy
/// against 0.93x, 16-bit 0.74x against 0.77x), within kStageMaxBytes.
template <typename P> inline bool rowStagesColumns(const P& p, int slice) {
    const int nc = rowColumnsInUse(p);
    return nc > 0 && nc <= P::kInputs && (P::kInputs + nc) * slice * 16 <= kStageMaxBytes;
}

/// Launches the staged plan `pl` (sm_90): clusters of pl.blocks blocks, the inputs' slices (and the
/// staged column arrays') in dynamic shared memory.
template <typename P>
inline cudaError_t launchRowOpStaged(const RowPlan& pl, const P& p, long long rows, int cols, int dev, cudaStream_t st) {
    auto kern = rowOpStagedKernel<P, kStageThreads>;
    const bool stageCols = rowStagesColumns(p, pl.slice);
    const int smem = (P::kInputs + (stageCols ? rowColumnsInUse(p) : 0)) * pl.slice * 16;
    return launchRows(kern, rows, pl.blocks, kStageThreads, smem, true, dev, st, [&](const cudaLaunchConfig_t& cfg, long long r0) {
        return cudaLaunchKernelEx(&cfg, kern, rowAt(p, r0), cols, pl.slice, pl.piece, stageCols);
    });
}

/// Launches the warp-streamed path: a warp per row, blocks of kRowWarpThreads.
template <typename P> inline cudaError_t launchRowReduceWarp(const P& p, long long rows, int cols, cudaStream_t st) {
    return launchRowBlocks(rows, kRowWarpThreads / 32, [&](long long r0, long long n, int blocks) {
        return launchKernel(rowReduceWarpKernel<P>, blocks, kRowWarpThreads, st, rowAt(p, r0), n, cols);
    });
}

/// Runs plan `pl` (from rowPlan) of the algorithm with params p on device `dev` with properties d.
template <typename P>
inline cudaError_t rowOpRun(RowPlan pl, const P& p, long long rows, int cols, int dev, const DeviceProps& d, cudaStream_t st) {
    using T = typename P::Elem;
    constexpr int V = vectorElems<T>();
    const bool aligned = rowAligned(p, cols);
    // Staged plans need clusters and inputs that bulk-copy with one split. fp32 rows with column
    // arrays and slices past 32 KB (LayerNorm and RMSNorm past 131072 columns; their columns are
    // then too large to stage, kStageMaxBytes, and each thread waits on many batches of w and b
    // from L2) run faster in register clusters (262144 columns: 0.81-0.86x copy against 0.54-0.59x).
    if (pl.path == RowStaged &&
        (!(d.clusters && rowStageable(p)) || (sizeof(T) == 4 && rowColumnsInUse(p) > 0 && pl.slice * 16 > 32 * 1024)))
        pl = rowRegisterPlan<T>(cols);
    for (;;) {
        cudaError_t e = cudaErrorInvalidConfiguration;
        switch (pl.path) {
        case RowWarp:
            return aligned ? rowOpWarp<P, true>(pl, p, rows, cols, st) : rowOpWarp<P, false>(pl, p, rows, cols, st);
        case RowBlock:
            e = aligned ? rowOpBlock<P, true>(pl, p, rows, cols, d.clusters, dev, st)
                        : rowOpBlock<P, false>(pl, p, rows, cols, d.clusters, dev, st);
            break;
        case RowStaged:
            e = launchRowOpStaged(pl, p, rows, cols, dev, st);
            break;
        case RowWarpStream:
            if constexpr (P::kReduceWarp) return launchRowReduceWarp(p, rows, cols, st);
            break;
        case RowStream: {
            auto kern = rowOpStreamKernel<P, kStreamThreads>;
            e = launchRows(kern, rows, pl.blocks, kStreamThreads, 0, d.clusters && pl.blocks > 1, dev, st,
                           [&](const cudaLaunchConfig_t& cfg, long long r0) {
                               return cudaLaunchKernelEx(&cfg, kern, rowAt(p, r0), cols, pl.slice);
                           });
            if (pl.blocks <= 8) return e;
            break;
        }
        default:
            break;
        }
        // A cluster the device cannot hold (a non-portable size on a partitioned GPU, say): the
        // streamed path, in clusters of at most 8.
        if (e != cudaErrorInvalidConfiguration) return e;
        pl = rowStreamPlan(((long long)cols + V - 1) / V, d.clusters ? 8 : 1);
    }
}

/// Whether plan p holds each row in registers in one block of 512 threads (16-bit rows of 4097..8192
/// columns, fp32 of 4097..8192), for more rows than a wave of four blocks an SM. Such a block waits
/// on its loads with little else resident to overlap them (two blocks an SM); the staged path's
/// blocks hold no registers while their bytes land, and run faster there when the rows are many
/// (few rows, one wave, keep registers: 500 x 8192 16-bit LayerNorm 0.58x copy against 0.53x).
inline bool rowWideBlock(const RowPlan& p, long long rows, int sms) {
    return p.path == RowBlock && p.blocks == 1 && p.threads == 512 && rows > 4LL * sms;
}

/// The row family's base plan: rowPlan's, with two changes for rows of up to 4096 columns.
///  - Warp path: each lane holds P::kWarpChunks vectors or more (rowWarpPlan).
///  - 16-bit rows of 129..512 vectors (1025..4096 columns, plus a head and tail): one block of 128
///    threads x 2 or 4 vectors, in place of rowPlan's warp segments of 8 vectors a lane (129..256)
///    and blocks of 256 threads x 2 (257..512). That is 64 bytes a thread in flight, as fp32 rows of
///    the same bytes have (H100, 2^26 elements, 4096 columns: LayerNorm 0.96x copy against 0.89x,
///    the cross-entropy loss 0.87x against 0.71x; 2048 columns: its gradient 0.95x against 0.60x,
///    LayerNorm 0.96x against 0.88x).
template <typename P> inline RowPlan rowFamilyPlan(long long rows, int cols, int sms, bool clusters) {
    using T = typename P::Elem;
    const long long vecs = (long long)cols / vectorElems<T>();
    if (sizeof(T) == 2 && vecs > 128 && vecs <= 512) return rowBlockPlan(vecs, 1, 128, vecs <= 256 ? rowC16<T>() : rowC32<T>());
    const RowPlan p = rowPlan<T>(rows, cols, sms, clusters);
    return p.path == RowWarp ? rowWarpPlan<T>(cols, P::kWarpChunks) : p;
}

/// The row family's plan: rowFamilyPlan's, except that on sm_90 many 16-bit rows of 4097..8192
/// columns are staged in one block (below), and rows longer than 8192 columns that are not few (whose
/// register clusters would not cover every SM at once) are staged in 16 KB slices for fp32 too.
/// rowSoftmax keeps fp32 rows of up to 65536 columns in register clusters; these algorithms do
/// more per element (two sweeps, per-column w and b) and run faster staged (H100, 2^26 elements,
/// fp32 16384..65536 columns: LayerNorm 0.93x copy staged against 0.85-0.88x, RMSNorm 0.97x
/// against 0.91-0.96x, the cross-entropy gradient at 50257 columns 0.95x against 0.78x).
template <typename P> inline RowPlan rowOpPlan(long long rows, int cols, int sms, bool clusters) {
    using T = typename P::Elem;
    const RowPlan p = rowFamilyPlan<P>(rows, cols, sms, clusters);
    if (!clusters || p.path != RowBlock) return p;
    // 16-bit rows of 4097..8192 columns: staged in one block, a slice of at most 16 KB (rowWideBlock;
    // H100, 2^26 elements, 8192 columns: LayerNorm 0.92x copy against 0.72x, RMSNorm 0.98x against
    // 0.81x, the cross-entropy gradient 0.96x against 0.76x; 4104 columns 0.78-1.00x against
    // 0.49-0.89x). fp32 rows of 4097..8192 keep registers (0.94-0.99x; staged 0.76x).
    if (sizeof(T) == 2 && rowWideBlock(p, rows, sms))
        return rowStagedPlan((long long)cols / vectorElems<T>(), kStageSliceAimBytes);
    if (cols <= 8192) return p;
    if (p.threads == 512 || rows * p.blocks <= 4LL * sms) return p; // rowPlan's few-rows clusters
    return rowStagedPlan((long long)cols / vectorElems<T>(), kStageSliceAimBytes);
}

/// The plan for an algorithm that writes per-row outputs only (rowCrossEntropy's loss alone). Many
/// rows of 129..768 vectors (16-bit; fp32 513..768): a warp per row, streamed (RowWarpStream). Many
/// other rows of 4097..8192 columns: on sm_90 staged in one block. Rows longer than 8192 columns: on
/// sm_90 the staged path in slices of about 32 KB (each element is read once, and no registers
/// wait on memory; larger than the 16 KB of the paths with outputs: the sweep is short, so fewer
/// blocks and exchanges a row pay), 16 KB when the rows would not cover every SM; elsewhere, and
/// past what 16 staged blocks hold, the streamed path, which then also reads once (4 vectors a
/// thread in flight; a cluster of up to 16 blocks a row on sm_90, enough for 8 blocks an SM, none
/// with fewer than 2048 vectors). Other rows take rowFamilyPlan's.
template <typename P> inline RowPlan rowReducePlan(long long rows, int cols, int sms, bool clusters) {
    using T = typename P::Elem;
    const long long vecs = (long long)cols / vectorElems<T>();
    if (cols <= 8192) {
        // Many rows (8 warps an SM) of 129..768 vectors (16-bit), 513..768 (fp32, which one block
        // of 256 threads would leave a quarter empty or more): a warp per row, streamed, on any GPU
        // (H100, 2^26 elements, the loss alone, x copy: 16-bit 3072 columns 0.97-1.01 against 0.74,
        // 4096 0.92-0.94 against 0.87-0.88, 4104 0.94-0.98 against 0.82; fp32 3072 0.99-1.00
        // against 0.88; 16-bit 8192 and fp32 4096 measured faster on the paths below).
        if (rows >= 8LL * sms && vecs > (sizeof(T) == 2 ? 128 : 512) && vecs <= 768)
            return rowWarpStreamPlan();
        // Rows of 4097..8192 columns (rowWideBlock), every type: staged in one block, a slice of at
        // most 32 KB (H100, 2^26 elements, 8192 columns: 16-bit 0.89x copy against 0.57x, fp32
        // 1.02x against 0.82x; 6144 columns 0.84x / 0.98x against 0.44x / 0.69x).
        const RowPlan p = rowFamilyPlan<P>(rows, cols, sms, clusters);
        if (clusters && rowWideBlock(p, rows, sms)) return rowStagedPlan(vecs, kStageReduceSliceBytes);
        return p;
    }
    long long n = 1;
    if (clusters) {
        const long long n32 = (vecs * 16 + kStageReduceSliceBytes - 1) / kStageReduceSliceBytes;
        const RowPlan s = rowStagedPlan(vecs, rows * n32 < sms ? kStageSliceAimBytes : kStageReduceSliceBytes);
        if (s.path == RowStaged) return s;
        n = (8LL * sms + rows - 1) / rows;
        const long long most = vecs / 2048 > 1 ? vecs / 2048 : 1;
        n = n < most ? n : most;
        n = n < kRowMaxClusterBlocks ? n : kRowMaxClusterBlocks;
    }
    return rowStreamPlan(vecs, n);
}

/// rowOpRun with the dispatcher's plan for rows x cols on the current device: rowOpPlan's, or
/// rowReducePlan's when `reduceOnly` (nothing written per element).
template <typename P> inline cudaError_t rowOpDispatch(const P& p, long long rows, int cols, cudaStream_t st, bool reduceOnly = false) {
    int dev = 0;
    DeviceProps d;
    WARPKIT_TRY(currentDevice(&dev, &d));
    const RowPlan pl = reduceOnly ? rowReducePlan<P>(rows, cols, d.sms, d.clusters) : rowOpPlan<P>(rows, cols, d.sms, d.clusters);
    return rowOpRun(pl, p, rows, cols, dev, d, st);
}

} // namespace detail
} // namespace warpkit
