// warpkit/device/detail/row_part.cuh: the device pieces the row kernels share: the part of a row a
// thread holds on the register paths (RowPart: its slots, loads and per-column parameters), the
// warp path's layout (WarpRowShape), and the reductions of the threads that share a row part
// (SegmentGroup on the warp path, BlockGroup on the block path). Internal (row_kernels.cuh, row_staged.cuh and the
// algorithms' hooks use them).
#pragma once

#include "row_plan.cuh"
#include "../../block/reduce.cuh"
#include "../../cluster/reduce.cuh"
#include "../../detail/types.cuh"
#include "../../thread/vector.cuh"

namespace warpkit {
namespace detail {

/// -inf in T: the fill of a row's empty register slots.
template <typename T> WARPKIT_DEVICE T negInfAs() { return Arith<T>::from_acc(-__builtin_huge_valf()); }

/// The element types of the row-wise device algorithms.
template <typename T> struct IsRowType {
    static constexpr bool value =
        IsSame<T, float>::value || IsSame<T, __half>::value || IsSame<T, __nv_bfloat16>::value;
};

/// The warp path's layout: each lane of a segment of W lanes holds C body vectors and E head/tail
/// elements of a row (none when Aligned: every row starts on a 16-byte boundary and holds whole
/// vectors); a thread works on R rows at once (at least 16 values in flight).
template <typename T, int W, int C, bool Aligned> struct WarpRowShape {
    static constexpr int V = vectorElems<T>();
    static constexpr int E = Aligned ? 0 : (2 * V - 2 + W - 1) / W; // head + tail elements, at most 2V - 2
    static constexpr int K = C * V + E;
    static constexpr int R = C * V >= 16 ? 1 : 16 / (C * V);
    static constexpr int segs = kRowWarpThreads / W;
    static constexpr int rowsPerBlock = segs * R;
};

/// The body vectors that block `rank` of a staged row's cluster holds: from rank * slice on, at
/// most `slice` of them (none for a block past the row's end).
WARPKIT_DEVICE int stagedVectors(const VectorSplit& sp, int rank, int slice) {
    const long long nv = sp.vectors - (long long)rank * slice;
    return nv < 0 ? 0 : nv < slice ? (int)nv : slice;
}

// ---- a thread's part of a row (register paths) --------------------------------------------------

/// The slots of one row a thread holds on the register paths, in loadShare's layout: body vectors
/// first + t + c*G (c < C) below `end`, then the extra (head/tail) elements t + j*G when `extras`.
/// `full`: every body slot of every thread holds a vector and the row has no head or tail (the
/// full-row kernels, where it is the constant true, so that every test of a slot folds away).
struct RowPart {
    VectorSplit s; // the row's split (of input 0)
    int t, G;      // this thread and the number of threads sharing the part
    int first;     // the part's first body vector
    int end;       // one past its last body vector (at most s.vectors)
    bool extras;   // whether the part holds the row's head and tail elements
    bool full;     // every slot holds an element (the part fills the thread's slots, no extras)
};

WARPKIT_DEVICE RowPart rowPart(const VectorSplit& s, int t, int G, int first, int end, bool extras, bool full = false) {
    const int nv = (int)s.vectors; // rows are shorter than 2^31 elements
    return RowPart{s, t, G, first, end < 0 || end > nv ? nv : end, extras && !full, full};
}
/// How many of the calling thread's body slots hold a vector (slot c does when c < partPieces: the
/// slots are first + t + c x G, increasing).
WARPKIT_DEVICE int partPieces(const RowPart& p) {
    const int left = p.end - p.first - p.t;
    return p.full ? 1 << 30 : left > 0 ? (left + p.G - 1) / p.G : 0;
}
/// Whether body slot c of the calling thread holds a vector, and the column of its first element.
WARPKIT_DEVICE bool partHasVector(const RowPart& p, int c) { return p.full || p.first + p.t + c * p.G < p.end; }
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
template <typename T, int C, int E, bool Full = false, typename F>
WARPKIT_DEVICE void forEachSlot(const RowPart& p, F f) {
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
template <typename T, int C, int E, typename FV, typename FE>
WARPKIT_DEVICE void forEachPiece(const RowPart& p, FV fv, FE fe) {
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
/// Aligned), else element by element, with load hint Hint. Empty slots get `fill`.
template <int C, int E, bool Aligned, int Hint = LoadReadOnly, typename T, int K>
WARPKIT_DEVICE void loadPart(T (&v)[K], const T* q, const RowPart& p, T fill) {
    constexpr int V = vectorElems<T>();
    const bool vec = Aligned || (((size_t)(q + p.s.head)) & 15) == 0;
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const bool ok = partHasVector(p, c);
        Vector16<T> x;
        if (ok) x = loadVectorAt<Hint>(q + partVectorColumn<T>(p, c), vec);
#pragma unroll
        for (int k = 0; k < V; ++k) v[c * V + k] = ok ? x.e[k] : fill;
    }
#pragma unroll
    for (int j = 0; j < E; ++j)
        v[C * V + j] = partHasExtra(p, j) ? loadScalar<Hint>(q + partExtraColumn<T>(p, j)) : fill;
}

/// A full part's loads (RowPart::full): the calling thread's C body vectors first + t + c*G of the
/// 16-byte aligned row q, one 16-byte load each with no bounds test; `fill` in every slot when !ok
/// (a row past the end, whose q is not read). Hint: the loads' cache hint.
template <int C, int Hint = LoadReadOnly, typename T, int K>
WARPKIT_DEVICE void loadFull(T (&v)[K], const T* q, int first, int t, int G, bool ok, T fill) {
    static_assert(K == C * vectorElems<T>(), "loadFull: the register array must hold K = C * vectorElems<T>()");
    constexpr int V = vectorElems<T>();
    const T* at = q + (first + t) * V; // one address, each vector at a constant offset from it
    if (ok) {
#pragma unroll
        for (int c = 0; c < C; ++c) {
            const Vector16<T> x = loadVector<Hint>(at + c * G * V);
#pragma unroll
            for (int k = 0; k < V; ++k) v[c * V + k] = x.e[k];
        }
    } else {
#pragma unroll
        for (int j = 0; j < K; ++j) v[j] = fill;
    }
}
/// A full part's stores: loadFull's slots to the 16-byte aligned row q, one 16-byte store each.
template <int C, typename T, int K> WARPKIT_DEVICE void storeFull(T* q, const T (&v)[K], int first, int t, int G) {
    static_assert(K == C * vectorElems<T>(), "storeFull: the register array must hold K = C * vectorElems<T>()");
    constexpr int V = vectorElems<T>();
    T* at = q + (first + t) * V;
#pragma unroll
    for (int c = 0; c < C; ++c) {
        Vector16<T> x;
#pragma unroll
        for (int k = 0; k < V; ++k) x.e[k] = v[c * V + k];
        storeVector(at + c * G * V, x);
    }
}

/// N elements of Q in one access of N * sizeof(Q) bytes (a power of two up to 16): a vector of an
/// input narrower than the row's type T, read in T's vector columns (device/add_norm.cuh's 16-bit r
/// of a float row: 4 elements, 8 bytes, a float vector).
template <typename Q, int N> struct alignas(N * sizeof(Q)) RowVec { Q e[N]; };
/// N elements of Q from p: one access when `vec` (p aligned to N * sizeof(Q)), else one at a time.
/// A whole vector of Q is loadVectorAt's load.
template <int N, int Hint, typename Q> WARPKIT_DEVICE RowVec<Q, N> loadRowVec(const Q* p, bool vec) {
    RowVec<Q, N> v;
    if constexpr (N == vectorElems<Q>()) {
        const Vector16<Q> w = loadVectorAt<Hint>(p, vec);
        __builtin_memcpy(&v, &w, sizeof(v));
    } else if (vec) {
        using W = typename RawWord<N*(int)sizeof(Q)>::type;
        const W w = loadWord<Hint>(reinterpret_cast<const W*>(p));
        __builtin_memcpy(&v, &w, sizeof(v));
    } else {
#pragma unroll
        for (int k = 0; k < N; ++k) v.e[k] = loadScalar<Hint>(p + k);
    }
    return v;
}

/// loadPart from an array q of a narrower type Q (the row's split is of T): each body slot's
/// vectorElems<T>() elements of Q by one access where q's body is aligned to it (always when
/// Aligned: rowsAlignedAs<T>), else element by element, each widened exactly to T (T is float).
template <int C, int E, bool Aligned, int Hint = LoadReadOnly, typename T, typename Q, int K>
WARPKIT_DEVICE void loadPart(T (&v)[K], const Q* q, const RowPart& p, T fill) {
    static_assert(sizeof(Q) < sizeof(T), "loadPart: a second input type Q must be narrower than the row's T");
    constexpr int V = vectorElems<T>();
    const bool vec = Aligned || (((size_t)(q + p.s.head)) & (V * sizeof(Q) - 1)) == 0;
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const bool ok = partHasVector(p, c);
        RowVec<Q, V> x;
        if (ok) x = loadRowVec<V, Hint>(q + partVectorColumn<T>(p, c), vec);
#pragma unroll
        for (int k = 0; k < V; ++k) v[c * V + k] = ok ? Arith<T>::from_acc(Arith<Q>::to_acc(x.e[k])) : fill;
    }
#pragma unroll
    for (int j = 0; j < E; ++j)
        v[C * V + j] = partHasExtra(p, j)
                           ? Arith<T>::from_acc(Arith<Q>::to_acc(loadScalar<Hint>(q + partExtraColumn<T>(p, j))))
                           : fill;
}

/// N per-column parameters (LayerNorm's w or b) from columns [col, col + N) of q as floats: `dflt`
/// when q is null, one 16-byte load when N is a whole vector and `vec` (q + col aligned), else one
/// by one.
template <int N, typename T>
WARPKIT_DEVICE void loadColumns(const T* q, int col, bool vec, float dflt, float (&out)[N]) {
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
/// rowsAligned for an array of Q read in T's vector columns (loadPart): every row starts on
/// vectorElems<T>() * sizeof(Q) bytes and holds whole groups of vectorElems<T>() elements. Host.
template <typename T, typename Q> inline bool rowsAlignedAs(const Q* q, long long ld, int cols) {
    constexpr int V = vectorElems<T>();
    return cols % V == 0 && ((size_t)q & (V * sizeof(Q) - 1)) == 0 && ld % V == 0;
}

// ---- the reductions of a row part's threads -----------------------------------------------------
// A group is the set of threads sharing one row part: a segment of W lanes (warp path), or a block
// whose row may be split over a cluster (block path). Every thread of the group calls each function
// with its own value and gets the group's result.

/// A segment of W lanes holding a whole row (warp path).
template <int W> struct SegmentGroup {};
/// A block holding its part of a row; the row's cluster (if any) exchanges X through xch. Copies:
/// the body pieces a thread's column vectors were copied to shared memory for (R30; 0: none).
template <int Threads, typename X, int Copies = 0> struct BlockGroup {
    ClusterExchange<X>* xch;
    unsigned* round;
};
/// Whether group type G is a segment of a warp (the warp path), whose kernels' occupancy their
/// registers set.
template <typename G> struct GroupIsSegment { static constexpr bool value = false; };
template <int W> struct GroupIsSegment<SegmentGroup<W>> { static constexpr bool value = true; };

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

template <int Threads, typename X, int K> WARPKIT_DEVICE float groupSum(const BlockGroup<Threads, X, K>&, float v) {
    return blockReduceSum<Threads>(v);
}
template <int Threads, typename X, int K> WARPKIT_DEVICE float groupMax(const BlockGroup<Threads, X, K>&, float v) {
    return blockReduceMax<Threads>(v);
}
template <int Threads, typename X, int K, int N>
WARPKIT_DEVICE void groupSums(const BlockGroup<Threads, X, K>&, float (&v)[N]) {
    blockReduceSum<Threads>(v);
}
template <int Threads, typename X, int K, typename Op>
WARPKIT_DEVICE X groupCombine(const BlockGroup<Threads, X, K>& g, X v, Op op) {
    return clusterReduce(*g.xch, *g.round, v, op);
}
/// The group's (and the row's cluster's) reduction of any value by an exact, associative and
/// commutative operator (so the order of the combines does not matter).
template <int W, typename V, typename Op> WARPKIT_DEVICE V groupReduce(SegmentGroup<W>, V v, Op op) {
    return warpReduce<W>(v, op);
}
template <int Threads, typename X, int K, typename Op>
WARPKIT_DEVICE X groupReduce(const BlockGroup<Threads, X, K>& g, X v, Op op) {
    return groupCombine(g, blockReduce<Threads>(v, op), op);
}
template <int Threads, typename X, int K> WARPKIT_DEVICE bool groupSplit(const BlockGroup<Threads, X, K>&) {
    return clusterBlocks() > 1;
}
/// The row's first element as float, read from memory (it lives in one block of the cluster). The
/// read precedes every block's first exchange, and no block writes before its last, so in-place
/// calls read it before it is overwritten.
template <int Threads, typename X, int K, typename T>
WARPKIT_DEVICE float groupFirst(const BlockGroup<Threads, X, K>&, float, const T* row) {
    return Arith<T>::to_acc(loadScalar(row));
}

/// N elements as floats, as Arith<T>::to_acc (the same bits). A bfloat16 is the float's high half:
/// a 32-bit word of two gives the even one by a shift and the odd one by a mask, where
/// __bfloat162float extracts each half first (the odd one in two instructions).
template <int N, typename T> WARPKIT_DEVICE void rowWiden(const T* v, float* x) {
    if constexpr (IsSame<T, __nv_bfloat16>::value) {
#pragma unroll
        for (int j = 0; j + 1 < N; j += 2) {
            unsigned w;
            __builtin_memcpy(&w, v + j, 4);
            x[j] = __uint_as_float(w << 16);
            x[j + 1] = __uint_as_float(w & 0xffff0000u);
        }
        if constexpr (N % 2 != 0) x[N - 1] = Arith<T>::to_acc(v[N - 1]);
    } else {
#pragma unroll
        for (int j = 0; j < N; ++j) x[j] = Arith<T>::to_acc(v[j]);
    }
}

template <int NI, int K, typename T> WARPKIT_DEVICE void rowToFloat(const T (&v)[NI][K], float (&x)[NI][K]) {
#pragma unroll
    for (int i = 0; i < NI; ++i) rowWiden<K>(v[i], x[i]);
}
template <int K, typename T> WARPKIT_DEVICE void rowFromFloat(const float (&x)[K], T (&v)[K]) {
#pragma unroll
    for (int j = 0; j < K; ++j) v[j] = Arith<T>::from_acc(x[j]);
}

} // namespace detail
} // namespace warpkit
