// warpkit/device/softmax.cuh: softmax over the last dimension of a rows x cols matrix, called from
// the host.
//
//   warpkit::rowSoftmax(x, y, rows, cols, stream)                         y = softmax(x), row by row
//   warpkit::rowSoftmax(x, y, rows, cols, kind, ldx, ldy, stream)         any kind, row strides
//
// Types: float, __half, __nv_bfloat16 (read and written in that type, computed in float).
// Kinds, NaN/inf rules and accuracy: thread/softmax.cuh (as PyTorch's torch.softmax and
// torch.log_softmax; the Masked kinds give zeros / -inf for a row of all -inf).
// Shapes: any rows >= 0 and cols >= 0 (either 0 is a no-op that writes nothing), row strides ldx, ldy >= cols (in
// elements), any pointer alignment (each row's aligned body moves in 16-byte accesses, its head
// and tail element by element), 64-bit row counts. In place: x == y with ldx == ldy. Otherwise x
// and y must not overlap.
// Conventions (docs/design.md): returns cudaError_t; asynchronous on `stream`; allocates nothing;
// bad arguments (rows < 0, cols < 0, ld < cols, null pointers with rows and cols > 0, an unknown kind,
// x == y with ldx != ldy) return cudaErrorInvalidValue and launch nothing. Host state (device
// properties, occupancy answers) is cached per device and thread-safe; any number of host
// threads, streams and devices may call at once.
//
// Paths, picked by row length and row count (device/detail/row_plan.cuh, rules R1-R12 and R24;
// why: docs/tuning.md): short packed rows whose length is not a whole number of 16 bytes in tiles
// of rows staged through shared memory (device/detail/row_short.cuh), a warp segment per row (up
// to 1024 fp32 / 2048 16-bit columns), a block per row, a cluster of blocks per row holding the row
// in registers (sm_90), a cluster staging the row in shared memory (sm_90), and a streamed
// two-pass fallback. Every path but the last reads each element once and writes it once.
#pragma once

#include "../softmax.cuh"
#include "../thread/vector.cuh"
#include "../detail/host.cuh"
#include "../detail/async.cuh"
#include "detail/row_launch.cuh"
#include "detail/softmax_block.cuh"

namespace warpkit {
namespace detail {


// ---- 1. warp path: a segment of W lanes per row --------------------------------------------------
// Each lane holds C body vectors and E head/tail elements of a row; a thread works on R rows at
// once (at least 16 values in flight). Aligned: every row starts on a 16-byte boundary and holds
// whole vectors (in x and y), so no lane needs head/tail slots (fewer registers, no exps of -inf
// padding): the dispatcher checks that once per call.

template <typename T, int Kind, int W, int C, bool Aligned>
WARPKIT_DEVICE void softmaxWarpRows(const T* x, T* y, long long rows, int cols, long long ldx, long long ldy, bool masked) {
    using S = WarpRowShape<T, W, C, Aligned>;
    const int seg = (int)threadIdx.x / W, l = (int)threadIdx.x % W;
    const long long row0 = (long long)blockIdx.x * S::rowsPerBlock + seg;
    T v[S::R][S::K];
    VectorSplit sp[S::R];
#pragma unroll
    for (int r = 0; r < S::R; ++r) {
        const long long row = row0 + (long long)r * S::segs;
        const bool ok = row < rows;
        const T* p = x + (ok ? row : 0) * ldx;
        const int n = ok ? cols : 0; // a row past the end: nothing loaded, all -inf
        sp[r] = Aligned ? VectorSplit{0, 0, n / S::V} : vectorSplit(p, n);
        loadShare<C, S::E, LoadReadOnly>(v[r], p, sp[r], l, W, negInfAs<T>(), 0, -1);
    }
#pragma unroll
    for (int r = 0; r < S::R; ++r)
        softmaxCore<Kind>(v[r], [](float m) { return warpReduce<W>(m, Max{}); },
                          [](float s) { return warpReduce<W>(s, Sum{}); }, NoCombine{}, masked);
#pragma unroll
    for (int r = 0; r < S::R; ++r) {
        const long long row = row0 + (long long)r * S::segs;
        if (row < rows) storeShare<C, S::E>(y + row * ldy, sp[r], v[r], l, W, 0, -1);
    }
}

// The two instantiations differ in their launch bounds: the aligned kernels get ptxas's own
// register choice (measured at the copy ceiling); the unaligned ones, with head/tail slots, ask
// for room for one block an SM, since ptxas's choice spilled a few of them.
template <typename T, int Kind, int W, int C>
__global__ void __launch_bounds__(kRowWarpThreads)
    softmaxWarpKernelAligned(const T* x, T* y, long long rows, int cols, long long ldx, long long ldy, bool masked) {
    softmaxWarpRows<T, Kind, W, C, true>(x, y, rows, cols, ldx, ldy, masked);
}
template <typename T, int Kind, int W, int C>
__global__ void __launch_bounds__(kRowWarpThreads, 1)
    softmaxWarpKernel(const T* x, T* y, long long rows, int cols, long long ldx, long long ldy, bool masked) {
    softmaxWarpRows<T, Kind, W, C, false>(x, y, rows, cols, ldx, ldy, masked);
}

// ---- 2. block path: a block, or a cluster of blocks, per row; the row in registers ---------------
// Block k of a row's cluster holds body vectors [k*slice, (k+1)*slice), C a thread; block 0 also
// holds the head and tail elements (none when Aligned, as on the warp path). The row's state:
// softmaxBlockRow (device/detail/softmax_block.cuh), per-warp parts, one barrier, one exchange.
// Each instance held to the registers of its values (32 a thread for 16 values, 64 for 32): the
// blocks an SM the plans count on (R4, R6-R10, R28). sm_80's plain head/tail forms spill a few
// bytes at 32, and sm_75 has half the threads an SM: there, ptxas's choice.
template <typename T, int Kind, int C, int Threads, bool Aligned> constexpr int softmaxBlockMinBlocks() {
    return WARPKIT_ARCH >= 900 || (WARPKIT_ARCH >= 800 && (Aligned || (Kind & SoftmaxLog)))
               ? 65536 / (Threads * (C * vectorElems<T>() <= 16 ? 32 : 64))
               : 1;
}
template <typename T, int Kind, int Threads, int C, bool Aligned>
__global__ void __launch_bounds__(Threads, softmaxBlockMinBlocks<T, Kind, C, Threads, Aligned>())
    softmaxBlockKernel(const T* x, T* y, int cols, long long ldx, long long ldy, bool masked, int slice) {
    constexpr int E = Aligned ? 0 : 1, K = C * vectorElems<T>() + E;
    __shared__ SoftmaxState slots[Threads / 32];
    __shared__ ClusterExchange<SoftmaxState> xch;
    const unsigned nb = clusterBlocks(), rank = clusterBlockRank();
    const long long row = blockIdx.x / nb;
    const T* p = x + row * ldx;
    const VectorSplit sp = Aligned ? VectorSplit{0, 0, cols / vectorElems<T>()} : vectorSplit(p, cols);
    const int first = (int)rank * slice, end = first + slice; // rows are shorter than 2^31 elements
    T v[K];
    loadShare<C, E, LoadReadOnly>(v, p, sp, (int)threadIdx.x, Threads, negInfAs<T>(), first, end, rank == 0);
    // The exchange's set-up (a block barrier, the cluster arrive) after the loads are issued: its
    // barrier then overlaps their round trip instead of delaying it (few long rows are latency).
    unsigned round = clusterExchangeInit(xch);
    // This thread's vector slots that hold values (loadShare's: i = first + t + c x Threads < end).
    const int vend = end > (int)sp.vectors ? (int)sp.vectors : end, i0 = first + (int)threadIdx.x;
    const int live = i0 < vend ? (vend - i0 + Threads - 1) / Threads : 0;
    softmaxBlockRow<Kind, Threads, C>(v, live < C ? live : C, slots, xch, round, masked);
    storeShare<C, E>(y + row * ldy, sp, v, (int)threadIdx.x, Threads, first, end, rank == 0);
}

// ---- 3. staged path (sm_90): a cluster per row, each block's slice in shared memory --------------
#if WARPKIT_ARCH >= 900
/// Running max of the 16 bytes `u` into `acc` (NaN-propagating): fp32 one value a word, 16-bit two
/// a word (a packed max; maxChunkValue unpacks the final pair).
template <typename T> WARPKIT_DEVICE void maxChunk(unsigned& acc, const uint4& u) {
    const unsigned w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        if constexpr (sizeof(T) == 4) acc = __float_as_uint(Max{}(__uint_as_float(acc), __uint_as_float(w[k])));
        else if constexpr (IsSame<T, __half>::value) asm("max.NaN.f16x2 %0, %0, %1;" : "+r"(acc) : "r"(w[k]));
        else asm("max.NaN.bf16x2 %0, %0, %1;" : "+r"(acc) : "r"(w[k]));
    }
}
/// -inf in maxChunk's accumulator layout.
template <typename T> WARPKIT_DEVICE unsigned maxChunkInit() {
    if constexpr (sizeof(T) == 4) return 0xff800000u;
    else if constexpr (IsSame<T, __half>::value) return 0xfc00fc00u;
    else return 0xff80ff80u;
}
/// The float max held by maxChunk's accumulator.
template <typename T> WARPKIT_DEVICE float maxChunkValue(unsigned acc) {
    if constexpr (sizeof(T) == 4) {
        return __uint_as_float(acc);
    } else {
        T h[2];
        __builtin_memcpy(h, &acc, 4);
        return Max{}(Arith<T>::to_acc(h[0]), Arith<T>::to_acc(h[1]));
    }
}
/// f applied to each element of the 16 bytes `u` (as float), packed back as T.
template <typename T, typename F> WARPKIT_DEVICE uint4 mapVec(uint4 u, F f) {
    Vector16<T> e;
    __builtin_memcpy(&e, &u, 16);
#pragma unroll
    for (int k = 0; k < vectorElems<T>(); ++k) e.e[k] = Arith<T>::from_acc(f(Arith<T>::to_acc(e.e[k])));
    __builtin_memcpy(&u, &e, 16);
    return u;
}
/// exp(x - ms) for the elements of `u` (fp32: the precise exp, 16-bit: the fast one), packed back
/// as T; their float sum is added to `sum` pairwise (a short dependency chain).
template <typename T> WARPKIT_DEVICE uint4 expSumVec(uint4 u, float ms, float& sum) {
    constexpr int V = vectorElems<T>();
    Vector16<T> e;
    float f[V];
    __builtin_memcpy(&e, &u, 16);
#pragma unroll
    for (int k = 0; k < V; ++k) {
        f[k] = expDiff<sizeof(T) == 4>(Arith<T>::to_acc(e.e[k]), ms);
        e.e[k] = Arith<T>::from_acc(f[k]);
    }
#pragma unroll
    for (int w = 1; w < V; w *= 2)
#pragma unroll
        for (int k = 0; k + w < V; k += 2 * w) f[k] += f[k + w];
    sum += f[0];
    __builtin_memcpy(&u, &e, 16);
    return u;
}
/// One step of a fused max+sum sweep: the running per-thread {tm, sum} takes the 16 bytes `u`; the
/// sum is rescaled when `u` raises the max (rare after the first few vectors). NaN or +inf: NaN.
template <typename T> WARPKIT_DEVICE void statsStep(const uint4& u, float& tm, float& sum) {
    unsigned vm = maxChunkInit<T>();
    maxChunk<T>(vm, u);
    const float v = maxChunkValue<T>(vm);
    if (v > tm) { sum *= expDiff<false>(tm, v); tm = v; } // from -inf: sum is 0, stays 0
    const float ms = tm == negInf() ? 0.0f : tm;
    Vector16<T> e;
    __builtin_memcpy(&e, &u, 16);
#pragma unroll
    for (int k = 0; k < vectorElems<T>(); ++k) sum += expDiff<false>(Arith<T>::to_acc(e.e[k]), ms);
}
/// The running {tm, sum} takes one more value (a head or tail element). NaN or +inf: NaN.
WARPKIT_DEVICE void statsStepOne(float x, float& tm, float& sum) {
    if (!(x <= tm)) { sum *= expDiff<false>(tm, x); tm = x; } // NaN x: tm becomes NaN
    sum += expDiff<false>(x, tm == negInf() ? 0.0f : tm);
}
/// The block's {max, sum} from every thread's running {tm, sum}. Every thread calls and gets it.
template <int Threads> WARPKIT_DEVICE SoftmaxState blockStats(float tm, float sum, BlockReduceScratch<float, Threads>& red) {
    const float m = blockReduce<Threads>(tm, Max{}, red);
    sum *= expDiff<false>(tm, m == negInf() ? 0.0f : m);
    return SoftmaxState{m, blockReduce<Threads>(sum, Sum{}, red)};
}

/// A staged softmax block: its slice of `nv` vectors in shared memory (from body vector `base` of
/// the row), bulk-copied in `np` pieces of `piece` vectors on the barriers `full`, and the row's
/// output body qb (16-byte aligned when vecOut).
template <typename T> struct SoftmaxStagedBlock {
    uint4* stage;
    unsigned long long* full;
    int piece, base, nv, np;
    T* qb;
    bool vecOut;
};
template <typename T> WARPKIT_DEVICE int softmaxPieceEnd(const SoftmaxStagedBlock<T>& b, int k) {
    return (k + 1) * b.piece < b.nv ? (k + 1) * b.piece : b.nv;
}
/// Stores the block's vector i: the 16-byte words go out as they are (measured: 2.89 TB/s for
/// fp32 rows of 262144, against 2.62 through storeVectorAt's Vector16 round trip).
template <typename T> WARPKIT_DEVICE void softmaxStagedStore(const SoftmaxStagedBlock<T>& b, int i, uint4 u) {
    constexpr int V = vectorElems<T>();
    if (b.vecOut) {
        reinterpret_cast<uint4*>(b.qb)[b.base + i] = u;
    } else {
        Vector16<T> e;
        __builtin_memcpy(&e, &u, 16);
#pragma unroll
        for (int k = 0; k < V; ++k) b.qb[(long long)(b.base + i) * V + k] = e.e[k];
    }
}

/// Plain kinds, the sweep as pieces land: each thread's max over its vectors of the piece, then
/// exp(x - its running max) written back over x (rounded to T) and summed; the running max after
/// each piece goes to pms[k * Threads + t].
template <typename T, int Threads>
WARPKIT_DEVICE void softmaxStagedExpSweep(const SoftmaxStagedBlock<T>& b, float* pms, float& tm, float& sum) {
    const int t = (int)threadIdx.x;
    for (int k = 0; k < b.np; ++k) {
        mbarWait(smemAddr(&b.full[k]), 0);
        const int end = softmaxPieceEnd(b, k);
        unsigned vm = maxChunkInit<T>();
#pragma unroll 4
        for (int i = k * b.piece + t; i < end; i += Threads) maxChunk<T>(vm, b.stage[i]);
        const float v = maxChunkValue<T>(vm);
        if (!(v <= tm)) {
            sum *= expDiff<false>(tm, v);
            tm = v;
        } // from -inf: sum is 0, stays 0
        const float ms = tm == negInf() ? 0.0f : tm;
#pragma unroll 4
        for (int i = k * b.piece + t; i < end; i += Threads) b.stage[i] = expSumVec<T>(b.stage[i], ms, sum);
        pms[k * Threads + t] = tm;
    }
}

/// Plain kinds, the write sweep: the stored exps of piece k are relative to pms[k], so each is
/// scaled by exp(pms[k] - max) / sum. A thread whose vectors were all -inf (pms = -inf) writes
/// scale * 0: zeros, or NaN when the row holds a NaN or +inf (the scale is NaN) or is all -inf
/// without masking (1/0 * 0).
template <typename T, int Threads>
WARPKIT_DEVICE void softmaxStagedScaleSweep(const SoftmaxStagedBlock<T>& b, const float* pms, const SoftmaxFactors& f) {
    const int t = (int)threadIdx.x;
    for (int k = 0; k < b.np; ++k) {
        const float m = pms[k * Threads + t];
        const float c = m == negInf() ? f.scale * 0.0f : expDiff(m, f.max) * f.scale;
        const int end = softmaxPieceEnd(b, k);
#pragma unroll 4
        for (int i = k * b.piece + t; i < end; i += Threads)
            softmaxStagedStore(b, i, mapVec<T>(b.stage[i], [&](float e) { return e * c; }));
    }
}

/// Log kinds, the fused max+sum sweep as pieces land.
template <typename T, int Threads>
WARPKIT_DEVICE void softmaxStagedStatsSweep(const SoftmaxStagedBlock<T>& b, float& tm, float& sum) {
    for (int k = 0; k < b.np; ++k) {
        mbarWait(smemAddr(&b.full[k]), 0);
        const int end = softmaxPieceEnd(b, k);
#pragma unroll 4
        for (int i = k * b.piece + (int)threadIdx.x; i < end; i += Threads) statsStep<T>(b.stage[i], tm, sum);
    }
}
#endif

/// Block k of the row's cluster bulk-copies its `slice` body vectors into dynamic shared memory in
/// pieces of `piece` vectors, each with its own mbarrier (thread 0 issues them all at once; no
/// registers are held while the bytes land); block 0 also takes the head and tail elements, one a
/// thread, in registers. With several resident blocks per SM, blocks in different phases keep the
/// memory pipe busy, so the sweeps are kept short:
///   plain kinds: the exp sweep as pieces land (softmaxStagedExpSweep), the {max, sum} exchange,
///     a write sweep that only scales, by one factor a piece (the running max after each piece is
///     kept in the shared memory after the slice): one exp per element, and only the last piece's
///     sweeps lie between the last byte landing and the exchange;
///   log kinds: one fused max+sum sweep as pieces land, the exchange, a write sweep from x.
template <typename T, int Kind, int Threads>
__global__ void __launch_bounds__(Threads) softmaxStagedKernel(const T* x, T* y, int cols, long long ldx, long long ldy,
                                                               bool masked, int slice, int piece) {
#if WARPKIT_ARCH >= 900
    constexpr int V = vectorElems<T>();
    extern __shared__ __align__(128) uint4 wk_stage[]; // bulk copies land on 128-byte boundaries
    __shared__ BlockReduceScratch<float, Threads> red;
    __shared__ ClusterExchange<SoftmaxState> xch;
    __shared__ alignas(8) unsigned long long full[kStageMaxPieces];
    unsigned round = clusterExchangeInit(xch);
    const int nb = (int)clusterBlocks(), rank = (int)clusterBlockRank(), t = (int)threadIdx.x;
    const long long row = blockIdx.x / nb;
    const T* p = x + row * ldx;
    const VectorSplit sp = vectorSplit(p, cols);
    const int base = rank * slice;
    const int nv = stagedVectors(sp, rank, slice);
    const int np = (nv + piece - 1) / piece;
    if (t == 0) {
        const uint4* src[1] = {reinterpret_cast<const uint4*>(p + sp.head) + base};
        stagePieces(wk_stage, 0, src, nv, piece, full);
    }
    // Head and tail elements (block 0): thread t holds element t of them.
    const bool hasX = rank == 0 && t < sp.head + sp.tail;
    const float xe = hasX ? Arith<T>::to_acc(loadScalar(p + extraIndex<int>(sp, t, V))) : negInf();
    __syncthreads(); // the barriers are initialised before anyone waits on them
    T* q = y + row * ldy;
    T* qb = q + sp.head;
    const SoftmaxStagedBlock<T> b{wk_stage, full, piece, base, nv, np, qb, ((size_t)qb & 15) == 0};
    float tm = negInf(), sum = 0.0f;
    if constexpr (!(Kind & SoftmaxLog)) {
        float* pms = reinterpret_cast<float*>(wk_stage + slice);
        softmaxStagedExpSweep<T, Threads>(b, pms, tm, sum);
        if (hasX) statsStepOne(xe, tm, sum);
        const SoftmaxState g = clusterReduceSoftmaxState(xch, round, blockStats<Threads>(tm, sum, red));
        const SoftmaxFactors f = masked ? softmaxFactors<SoftmaxMasked>(g) : softmaxFactors<SoftmaxPlain>(g);
        softmaxStagedScaleSweep<T, Threads>(b, pms, f);
        if (hasX) storeScalar(q + extraIndex<int>(sp, t, V), Arith<T>::from_acc(softmaxApply<SoftmaxPlain>(f, xe)));
    } else {
        softmaxStagedStatsSweep<T, Threads>(b, tm, sum);
        if (hasX) statsStepOne(xe, tm, sum);
        const SoftmaxState g = clusterReduceSoftmaxState(xch, round, blockStats<Threads>(tm, sum, red));
        const SoftmaxFactors f = masked ? softmaxFactors<SoftmaxLogMasked>(g) : softmaxFactors<SoftmaxLog>(g);
#pragma unroll 4
        for (int i = t; i < nv; i += Threads)
            softmaxStagedStore(b, i, mapVec<T>(wk_stage[i], [&](float e) { return softmaxApply<SoftmaxLog>(f, e); }));
        if (hasX) storeScalar(q + extraIndex<int>(sp, t, V), Arith<T>::from_acc(softmaxApply<SoftmaxLog>(f, xe)));
    }
#else
    (void)x; (void)y; (void)cols; (void)ldx; (void)ldy; (void)masked; (void)slice; (void)piece;
#endif
}

// ---- 4. streamed path: any GPU, any length ---------------------------------------------------------
// Each block (a cluster of up to 16 on sm_90) streams its slice of the row twice: an online
// {max, sum} of every 16-byte vector, then the outputs. Reads each element twice.
template <typename T, int Kind, int Threads>
__global__ void __launch_bounds__(Threads)
    softmaxStreamKernel(const T* x, T* y, int cols, long long ldx, long long ldy, bool masked, int slice) {
    constexpr int V = vectorElems<T>(), L = 4; // L vectors in flight a thread
    __shared__ ClusterExchange<SoftmaxState> xch;
    unsigned round = clusterExchangeInit(xch);
    const unsigned nb = clusterBlocks(), rank = clusterBlockRank();
    const int t = (int)threadIdx.x;
    const long long row = blockIdx.x / nb;
    const T* p = x + row * ldx;
    const VectorSplit sp = vectorSplit(p, cols);
    const T* body = p + sp.head;
    const long long first = (long long)rank * slice;
    const long long end = first + slice < sp.vectors ? first + slice : sp.vectors;
    const bool hasX = rank == 0 && t < sp.head + sp.tail;
    const float xe = hasX ? Arith<T>::to_acc(loadScalar(p + extraIndex<int>(sp, t, V))) : negInf();
    SoftmaxState st = softmaxStateEmpty();
    for (long long i = first + t; i < end; i += (long long)L * Threads) {
        Vector16<T> v[L];
#pragma unroll
        for (int k = 0; k < L; ++k)
            if (i + (long long)k * Threads < end) v[k] = loadVector<LoadReadOnly>(body + (i + (long long)k * Threads) * V);
#pragma unroll
        for (int k = 0; k < L; ++k)
            if (i + (long long)k * Threads < end) st = softmaxStateUpdate(st, v[k].e);
    }
    if (hasX) st = softmaxStateUpdate(st, xe);
    st = clusterReduceSoftmaxState(xch, round, blockReduceSoftmaxState<Threads>(st));
    const SoftmaxFactors f = masked ? softmaxFactors<Kind | SoftmaxMasked>(st) : softmaxFactors<Kind>(st);
    T* q = y + row * ldy;
    T* qb = q + sp.head;
    const bool vecOut = ((size_t)qb & 15) == 0;
    for (long long i = first + t; i < end; i += Threads) {
        Vector16<T> v = loadVector<LoadReadOnly>(body + i * V);
        softmaxApply<Kind>(f, v.e);
        storeVectorAt(qb + i * V, v, vecOut);
    }
    if (hasX) storeScalar(q + extraIndex<int>(sp, t, V), Arith<T>::from_acc(softmaxApply<Kind>(f, xe)));
}

// ---- host side: rowSoftmax on the row runner (device/detail/row_launch.cuh) ------------------------

/// rowSoftmax's rows for the runner: the runner plans and falls back as for the row family, and
/// launches the kernels above through the rowLaunch* overloads below.
template <typename T, int Kind> struct SoftmaxRows {
    using Elem = T;
    static constexpr int kWarpChunks = 1; // R1: segments of one vector a lane first
    static constexpr bool kReduceWarp = false;
    const T* x;
    T* y;
    long long ldx, ldy;
    bool masked;
};
template <typename T, int Kind> struct RowRunner<SoftmaxRows<T, Kind>> { static constexpr bool softmax = true; };

/// Every row of x and y on a 16-byte boundary and of whole vectors: the kernels without head/tail
/// slots.
template <typename T, int Kind> inline bool rowAligned(const SoftmaxRows<T, Kind>& s, int cols) {
    return rowsAligned(s.x, s.ldx, cols) && rowsAligned(s.y, s.ldy, cols);
}

/// The short path's hooks (device/detail/row_short.cuh): the rows, and one row over W lanes.
template <typename T, int Kind> WARPKIT_HD RowShortIO<T> rowShortRows(const SoftmaxRows<T, Kind>& s) {
    return RowShortIO<T>{s.x, s.y, s.ldx, s.ldy};
}
template <int W, typename T, int Kind, int K>
WARPKIT_DEVICE void rowShortRow(const SoftmaxRows<T, Kind>& s, T (&v)[K]) {
    softmaxCore<Kind>(
        v, [](float m) { return warpReduce<W>(m, Max{}); }, [](float x) { return warpReduce<W>(x, Sum{}); },
        NoCombine{}, s.masked);
}

template <int W, int C, bool Aligned, typename T, int Kind>
inline cudaError_t rowLaunchWarp(const SoftmaxRows<T, Kind>& s, long long rows, int cols, cudaStream_t st) {
    using S = WarpRowShape<T, W, C, Aligned>;
    return launchRowBlocks(rows, S::rowsPerBlock, [&](long long r0, long long n, int blocks) {
        auto kern = Aligned ? softmaxWarpKernelAligned<T, Kind, W, C> : softmaxWarpKernel<T, Kind, W, C>;
        return launchKernel(kern, blocks, kRowWarpThreads, st, s.x + r0 * s.ldx, s.y + r0 * s.ldy, n, cols, s.ldx,
                            s.ldy, s.masked);
    });
}

template <int Threads, int C, bool Aligned, typename T, int Kind>
inline cudaError_t rowLaunchBlock(const RowPlan& p, const SoftmaxRows<T, Kind>& s, long long rows, int cols,
                                  bool clusters, int dev, cudaStream_t st) {
    auto kern = softmaxBlockKernel<T, Kind, Threads, C, Aligned>;
    return launchRows(kern, rows, p.blocks, Threads, 0, clusters, dev, st,
                      [&](const cudaLaunchConfig_t& cfg, long long r0) {
                          return cudaLaunchKernelEx(&cfg, kern, s.x + r0 * s.ldx, s.y + r0 * s.ldy, cols, s.ldx, s.ldy,
                                                    s.masked, p.slice);
                      });
}

template <typename T, int Kind> inline cudaError_t rowLaunchStaged(const RowPlan& p, const SoftmaxRows<T, Kind>& s,
                                                                   long long rows, int cols, int dev, cudaStream_t st) {
    auto kern = softmaxStagedKernel<T, Kind, kStageThreads>;
    const int np = (p.slice + p.piece - 1) / p.piece;
    const int smem = p.slice * 16 + ((Kind & SoftmaxLog) ? 0 : np * kStageThreads * (int)sizeof(float));
    return launchRows(kern, rows, p.blocks, kStageThreads, smem, true, dev, st,
                      [&](const cudaLaunchConfig_t& cfg, long long r0) {
                          return cudaLaunchKernelEx(&cfg, kern, s.x + r0 * s.ldx, s.y + r0 * s.ldy, cols, s.ldx, s.ldy,
                                                    s.masked, p.slice, p.piece);
                      });
}

template <typename T, int Kind> inline cudaError_t rowLaunchStream(const RowPlan& p, const SoftmaxRows<T, Kind>& s,
                                                                   long long rows, int cols, bool clusters, int dev,
                                                                   cudaStream_t st) {
    auto kern = softmaxStreamKernel<T, Kind, kStreamThreads>;
    return launchRows(kern, rows, p.blocks, kStreamThreads, 0, clusters && p.blocks > 1, dev, st,
                      [&](const cudaLaunchConfig_t& cfg, long long r0) {
                          return cudaLaunchKernelEx(&cfg, kern, s.x + r0 * s.ldx, s.y + r0 * s.ldy, cols, s.ldx, s.ldy,
                                                    s.masked, p.slice);
                      });
}

template <typename T, int Kind>
inline cudaError_t rowSoftmaxKind(const T* x, T* y, long long rows, int cols, long long ldx, long long ldy, bool masked,
                                  cudaStream_t st) {
    int dev = 0;
    DeviceProps d;
    WARPKIT_TRY(currentDevice(&dev, &d));
    const RowPlan p = rowPlanFor(rowSoftmaxQuery((int)sizeof(T), rows, cols, d.sms, d.clusters));
    return rowRun(p, SoftmaxRows<T, Kind>{x, y, ldx, ldy, masked}, rows, cols, dev, d, st);
}


} // namespace detail

/// y = softmax of each row of x (Kind: a SoftmaxKind), for a rows x cols matrix whose row r starts
/// at x + r * ldx (and y + r * ldy). Host; asynchronous on `stream`. See the header comment for
/// shapes, alignment, in-place use, errors and NaN/inf rules.
template <typename T>
inline cudaError_t rowSoftmax(const T* x, T* y, long long rows, int cols, SoftmaxKind kind, long long ldx, long long ldy,
                              cudaStream_t stream = 0) {
    static_assert(detail::IsRowType<T>::value, "rowSoftmax: element type T must be float, __half or __nv_bfloat16");
    if (rows < 0 || cols < 0 || ldx < cols || ldy < cols || (int)kind < 0 || (int)kind > 3)
        return cudaErrorInvalidValue;
    if (rows == 0 || cols == 0) return cudaSuccess;
    if (x == nullptr || y == nullptr || (x == y && ldx != ldy)) return cudaErrorInvalidValue;
    const bool masked = (kind & SoftmaxMasked) != 0;
    if (kind & SoftmaxLog) return detail::rowSoftmaxKind<T, SoftmaxLog>(x, y, rows, cols, ldx, ldy, masked, stream);
    return detail::rowSoftmaxKind<T, SoftmaxPlain>(x, y, rows, cols, ldx, ldy, masked, stream);
}

/// y = softmax(x) over each row of a contiguous rows x cols matrix (ld = cols). Host; asynchronous
/// on `stream`.
template <typename T> inline cudaError_t rowSoftmax(const T* x, T* y, long long rows, int cols, cudaStream_t stream = 0) {
    return rowSoftmax(x, y, rows, cols, SoftmaxPlain, cols, cols, stream);
}

} // namespace warpkit
