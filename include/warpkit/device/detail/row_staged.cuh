// warpkit/device/detail/row_staged.cuh: the staged kernel of the row-wise device algorithms
// (rowOpStagedKernel, sm_90: a cluster per row, each block's slice bulk-copied to shared memory),
// generic over the algorithm's params P (the contract: row_op.cuh), and its stages. The other row
// kernels: row_kernels.cuh; which one runs a shape: row_plan.cuh; their launches: row_launch.cuh.
// Internal.
#pragma once

#include "row_op.cuh"
#include "../../detail/async.cuh"
#include "../../cluster/reduce.cuh"

namespace warpkit {
namespace detail {

// ---- the staged path (sm_90): a cluster per row, each block's slice in shared memory -------------
// Block k of a row's cluster bulk-copies its `slice` body vectors of each input into dynamic shared
// memory, in pieces of `piece` vectors (one mbarrier a piece; thread 0 issues every copy at once, so
// no registers are held while the bytes land and several blocks share an SM). Block 0 also holds the
// head and tail elements, one a thread, in registers. The statistics come from the shared copy as
// each piece lands (rowStatsSweep), the blocks combine them with clusterReduce, and a second sweep
// of the shared copy writes the outputs. Reads each element once; every block finishes its reads
// before its first exchange and writes only after its last, so in-place calls are safe.

// Per-column arrays (P::kColumns of them: LayerNorm's w and b, rowColumn) are read once a row; when
// `stageCols` (the host gave them shared memory: rowStagesColumns) and each in use starts the
// block's slice on 16 bytes, the block bulk-copies their slices too, on a barrier of their own
// after the row's pieces, and the output sweep reads them there (rowSetColumns): from L2 they
// would cost a round trip a batch of vectors.

/// A staged block's slice: the shared copy (NI slices of `slice` vectors, then the staged column
/// arrays'), the pieces' barriers, and where its `nv` vectors lie in the row.
struct RowStagedSlice {
    uint4* smem;
    unsigned long long* full; // kStageMaxPieces pieces' barriers, then the columns'
    VectorSplit sp;
    int slice, piece, base, nv, np;
};

/// Stage: the column arrays in use, each moved to the block's slice (col[k], null where not in
/// use); `stageCols` stays set only when every one of them starts the slice on 16 bytes. Returns how
/// many are in use.
template <typename P, int NC, typename T> WARPKIT_DEVICE int
rowStagedColumns(const P& p, const RowStagedSlice& s, const T* (&col)[NC > 0 ? NC : 1], bool& stageCols) {
    int nc = 0;
    if constexpr (NC > 0) {
#pragma unroll
        for (int k = 0; k < NC; ++k) {
            col[k] = rowColumn(p, k);
            if (col[k] != nullptr) {
                col[k] += s.sp.head + (long long)s.base * vectorElems<T>();
                stageCols = stageCols && ((size_t)col[k] & 15) == 0;
                ++nc;
            }
        }
    }
    stageCols = stageCols && nc > 0 && s.nv > 0;
    return nc;
}

#if WARPKIT_ARCH >= 900
/// Stage (thread 0 alone): the barriers, and every bulk copy of the slice (stagePieces); the
/// columns land on their own barrier, after the row's pieces, so that the statistics never wait for
/// them, only the output sweep does.
template <int NI, int NC, typename T>
WARPKIT_DEVICE void rowStagedIssue(const RowStagedSlice& s, const T* const (&in)[NI],
                                   const T* const (&col)[NC > 0 ? NC : 1], int nc, bool stageCols) {
    const unsigned colsBar = smemAddr(&s.full[kStageMaxPieces]);
    if (stageCols) mbarInit(colsBar, 1);
    const uint4* src[NI];
#pragma unroll
    for (int i = 0; i < NI; ++i) src[i] = reinterpret_cast<const uint4*>(in[i] + s.sp.head) + s.base;
    stagePieces(s.smem, s.slice, src, s.nv, s.piece, s.full);
    if (stageCols) {
        mbarArriveExpectTx(colsBar, (unsigned)(s.nv * 16 * nc));
#pragma unroll
        for (int c = 0, j = 0; c < NC; ++c)
            if (col[c] != nullptr)
                bulkCopyToShared(smemAddr(s.smem + (NI + j++) * s.slice), col[c], (unsigned)s.nv * 16u, colsBar);
    }
}

/// The calling thread's staged vector i (of its block's slice) as floats, input by input.
template <typename T, int NI, int V>
WARPKIT_DEVICE void rowStagedLoad(const RowStagedSlice& s, int i, float (&x)[NI][V]) {
#pragma unroll
    for (int k = 0; k < NI; ++k) {
        Vector16<T> e;
        const uint4 u = s.smem[k * s.slice + i];
        __builtin_memcpy(&e, &u, 16);
#pragma unroll
        for (int j = 0; j < V; ++j) x[k][j] = Arith<T>::to_acc(e.e[j]);
    }
}

/// Stage (a sweep, repeatable): f(x, col) for each of the calling thread's staged vectors, piece by
/// piece as each lands (at once after the first sweep), then for its head or tail element xe when
/// it holds one (hasX(), evaluated after the loop).
template <int Threads, typename T, int NI, typename H, typename F>
WARPKIT_DEVICE void rowStagedSweep(const RowStagedSlice& s, H hasX, float (&xe)[NI][1], int xcol, F f) {
    constexpr int V = vectorElems<T>();
    const int t = (int)threadIdx.x;
    for (int k = 0; k < s.np; ++k) {
        mbarWait(smemAddr(&s.full[k]), 0);
        const int end = (k + 1) * s.piece < s.nv ? (k + 1) * s.piece : s.nv;
#pragma unroll 2
        for (int i = k * s.piece + t; i < end; i += Threads) {
            float x[NI][V];
            rowStagedLoad<T>(s, i, x);
            f(x, s.sp.head + (s.base + i) * V);
        }
    }
    if (hasX()) f(xe, xcol);
}

/// Stage: once the columns' copies land, ps reads them from shared memory (rowSetColumns).
template <typename P, int NC, typename T>
WARPKIT_DEVICE void rowStagedColumnsUse(P& ps, const RowStagedSlice& s, const T* const (&col)[NC > 0 ? NC : 1]) {
    if constexpr (NC > 0) {
        constexpr int NI = P::kInputs;
        mbarWait(smemAddr(&s.full[kStageMaxPieces]), 0);
        const T* c[NC];
#pragma unroll
        for (int k = 0, j = 0; k < NC; ++k)
            c[k] = col[k] != nullptr ? reinterpret_cast<const T*>(s.smem + (NI + j++) * s.slice) : nullptr;
        rowSetColumns(ps, c, s.sp.head + s.base * vectorElems<T>());
    }
}

/// Stage: the outputs of n <= U of the calling thread's vectors i0, i0 + Threads, ...: every store
/// after every output of the batch, so that the loads an algorithm makes per column (LayerNorm's w
/// and b, when not staged) are all in flight at once rather than one L2 round trip a vector (a
/// store in between could alias them). Fast: rowOutFastOk held for the row.
template <int U, int Threads, typename P, typename F, typename Fast>
WARPKIT_DEVICE void rowStagedOutBatch(const P& ps, const F& f, const RowStagedSlice& s, int n, int i0,
                                      typename P::Elem* yb, bool vecOut, Fast) {
    using T = typename P::Elem;
    constexpr int NI = P::kInputs, V = vectorElems<T>();
    float x[U][NI][V];
#pragma unroll
    for (int u = 0; u < U; ++u)
        if (u < n) rowStagedLoad<T>(s, i0 + u * Threads, x[u]);
    if constexpr (Fast::value) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
            if (u >= n) break;
            rowOutFast<V>(ps, f, x[u], s.sp.head + (s.base + i0 + u * Threads) * V);
        }
    } else {
#pragma unroll
        for (int u = 0; u < U; ++u)
            if (u < n) rowOut<V>(ps, f, x[u], s.sp.head + (s.base + i0 + u * Threads) * V);
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
            reinterpret_cast<uint4*>(yb)[s.base + i] = w;
        } else {
            storeVectorAt(yb + (long long)(s.base + i) * V, o, false);
        }
    }
}

/// Stage: the outputs of the calling thread's staged vectors, in batches of U (16-bit rows batch 2:
/// 8 values a vector, each with its w and b, in 56 registers; 4 took 72-78, and spilled for bf16).
template <int Threads, typename P, typename F, typename Fast> WARPKIT_DEVICE void
rowStagedOutAll(const P& ps, const F& f, const RowStagedSlice& s, typename P::Elem* yb, bool vecOut, Fast fast) {
    constexpr int U = P::kColumns > 0 && sizeof(typename P::Elem) == 4 ? 4 : 2;
    int i0 = (int)threadIdx.x;
    for (; i0 + (U - 1) * Threads < s.nv; i0 += U * Threads)
        rowStagedOutBatch<U, Threads>(ps, f, s, U, i0, yb, vecOut, fast);
    if (i0 < s.nv) rowStagedOutBatch<U, Threads>(ps, f, s, (s.nv - i0 + Threads - 1) / Threads, i0, yb, vecOut, fast);
}
#endif

template <typename P, int Threads> __global__ void __launch_bounds__(Threads)
    rowOpStagedKernel(P p, int cols, int slice, int piece, bool stageCols) {
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
    for (int k = 0; k < NI; ++k) in[k] = rowInput(p, k, row); // inputs of one type (rowLaunchStaged)
    const VectorSplit sp = vectorSplit(in[0], cols);
    const int nv = stagedVectors(sp, rank, slice);
    const RowStagedSlice s{wk_row_stage, full, sp, slice, piece, rank * slice, nv, (nv + piece - 1) / piece};
    const T* col[NC > 0 ? NC : 1] = {}; // the column arrays' slices (global), null where not in use
    const int nc = rowStagedColumns<P, NC>(p, s, col, stageCols);
    if (t == 0) rowStagedIssue<NI, NC>(s, in, col, nc, stageCols);
    // Head and tail elements (block 0): thread t holds element t of them.
    // (recomputed where used: held across the sweeps, ptxas spills the predicate to local memory)
    auto hasX = [&] { return rank == 0 && t < s.sp.head + s.sp.tail; };
    const int xcol = extraIndex<int>(s.sp, t, V);
    float xe[NI][1];
#pragma unroll
    for (int k = 0; k < NI; ++k) xe[k][0] = hasX() ? Arith<T>::to_acc(loadScalar(in[k] + xcol)) : 0.0f;
    typename P::Acc acc = rowStatsInit(p, row, cols, rank == 0 && t == 0);
    __syncthreads(); // the barriers are initialised before anyone waits on them
    auto sweep = [&](auto f) { rowStagedSweep<Threads, T>(s, hasX, xe, xcol, f); };
    const typename P::Exchange total =
        clusterReduce(xch, round, rowStatsSweep<Threads>(p, acc, sweep), typename P::Merge{});
    // The body's outputs read the staged column slices (ps); the head and tail's, the arrays (p).
    P ps = p;
    if (stageCols) rowStagedColumnsUse<P, NC>(ps, s, col);
    const auto f = rowFactors(ps, acc, total, row, s.sp, cols);
    if (rank == 0 && t == 0) rowOutputs(p, f, row);
    T* y = rowOutput(p, row);
    if (y == nullptr) return;
    T* yb = y + s.sp.head;
    const bool vecOut = ((size_t)yb & 15) == 0; // y's rows may be aligned differently from x's
    if constexpr (P::kOutFast) {
        if (rowOutFastOk(ps, f)) rowStagedOutAll<Threads>(ps, f, s, yb, vecOut, RowBool<true>{});
        else rowStagedOutAll<Threads>(ps, f, s, yb, vecOut, RowBool<false>{});
    } else {
        rowStagedOutAll<Threads>(ps, f, s, yb, vecOut, RowBool<false>{});
    }
    if (hasX()) {
        rowOut<1>(p, f, xe, xcol);
        storeScalar(y + xcol, Arith<T>::from_acc(xe[0][0]));
    }
#else
    (void)p, (void)cols, (void)slice, (void)piece, (void)stageCols; // launched on sm_90 and newer only
#endif
}

} // namespace detail
} // namespace warpkit
