// warpkit/device/detail/segment_block.cuh: the softmax's block tier behind device/segment.cuh: a
// segment past the plan's longRows, of at most kSegBlockMaxElems elements (all its heads), with
// 1, 2, 4, 8 or 16 heads, is done by one block, as rowSoftmax does a row. Internal: include
// warpkit/device/segment.cuh.
//
// A segment of L rows and H heads is the contiguous run of L * H elements x[begin * H ..), an
// L x H matrix whose softmax runs down each column. The block reads the run with 16-byte loads of
// its 16-byte aligned vectors (the partial vectors at its two ends element by element, only inside
// the run), in windows of kSegBlockThreads * R vectors (R a thread: 32 elements a thread). Thread t
// holds vectors t, t + BT, ... of a window; since BT * V is a multiple of H (H a power of two up to
// 16), element k of each of its vectors always belongs to the same head. So a thread keeps one slot
// a vector element (V slots), and
//   1. the slots' maxima: a max over the thread's vectors, the slots of one head folded together
//      (slot j with j + o, for H <= V), an xor butterfly over the lanes holding the same heads (lane
//      offsets from H / V up: lanes equal modulo H / V), then the warps' values in warp order
//      through shared memory; every thread gets its heads' maxima;
//   2. the same for the sums of exp(x - max) (one exp an element; the plain kinds keep the exps);
//   3. softmaxFactors a slot and one multiply (plain) or two subtractions (log) an element, stored.
// A segment of several windows merges each window's {max, sum} into its slots' states in window
// order (softmaxStateMerge), then a second read of the windows (from L2 mostly: the block has just
// read them) writes softmaxApply. NaN, inf and all -inf rules are thread/softmax.cuh's.
//
// Bits. Every step is commutative per pair (butterflies of IEEE max.NaN and +) or in a fixed order
// (a thread's vectors, the warps, the windows), and the vectors are cut by the run's address modulo
// 16 bytes: the result depends only on the segment's values, length, heads and the alignment of x
// there, never on the grid, the order the blocks take the segments, or y.
//
// The segments come from the work list (segment_kernels.cuh): an entry with stride 0 is a block-tier
// segment (its pair is head 0's), taken in turn by the blocks with one atomicAdd on counter[3] each;
// the entries of the chunk kernels' pairs are skipped.
#pragma once

#include "segment_algos.cuh"
#include "../../detail/shfl.cuh"
#include "../../detail/lane.cuh"
#include "../../thread/vector.cuh"

namespace warpkit {
namespace detail {

/// The block tier's block size, and the segments it takes: at most this many elements (rows x heads).
constexpr int kSegBlockThreads = 256;
constexpr long long kSegBlockMaxElems = 32768;

/// Whether A's long segments may take the block tier: the softmax (all four kinds).
template <typename A> struct SegBlockSoftmax { static constexpr bool value = false; };
template <typename T, int Kind> struct SegBlockSoftmax<SegSoftmaxAlgo<T, Kind>> { static constexpr bool value = true; };

/// Whether a segment of `rows` rows and `heads` heads fits the block tier (past longRows, checked
/// by the caller). Host or device.
WARPKIT_HD bool segBlockFits(long long rows, int heads) {
    return heads >= 1 && heads <= 16 && (heads & (heads - 1)) == 0 && rows * heads <= kSegBlockMaxElems;
}

/// The block tier's window (kSegBlockThreads threads x 32 elements): a slice of the slice tier
/// (segment_slice.cuh).
constexpr long long kSegWindowElems = kSegBlockThreads * 32;
/// The workspace's room for slice slots: items x heads / kSegSliceSlotElems (segSliceSlots gives a
/// segment of n > kSegBlockMaxElems elements at most (n / 8192 + 2) 33 / 32 + 2 < n / 2048 of them).
constexpr long long kSegSliceSlotElems = 2048;

/// log2 of a power of two. Host or device.
WARPKIT_HD int segLog2(unsigned p) {
    int l = 0;
    while ((1u << l) < p) ++l;
    return l;
}

/// The slice slots a segment of `rows` rows and `heads` heads takes in the slice tier: one a window
/// (a bound on its windows at any alignment), one a group of `group` windows and one for its totals
/// (segment_slice.cuh); 0 when it is not for the slice tier (heads not 1, 2, 4, 8 or 16, at most
/// kSegBlockMaxElems elements, or group 0). Past longRows checked by the caller. Host or device.
WARPKIT_HD long long segSliceSlots(long long rows, int heads, int group) {
    if (group <= 0 || heads < 1 || heads > 16 || (heads & (heads - 1)) != 0 || rows <= kSegBlockMaxElems / heads)
        return 0;
    const long long windows = rows * heads / kSegWindowElems + 2;
    return windows + ((windows + group - 1) >> segLog2((unsigned)group)) + 1;
}

/// op over the slots of one head: the thread's slots (Hs = min(heads, V) distinct), the lanes equal
/// modulo P = max(heads / V, 1) (an xor butterfly), then the BT / 32 warps in order through red.
/// Every thread of the team calls (a team: the block, or BT = 32 one warp, which needs no red and no
/// barrier); every thread ends with its heads' values in all V slots.
template <int BT, int V, typename Op>
WARPKIT_DEVICE void segBlockAll(float (&s)[V], int Hs, int P, Op op, float (&red)[BT / 32][4][8]) {
    const int lane = (int)laneId(), warp = (int)(threadIdx.x & (BT - 1)) / 32;
#pragma unroll
    for (int o = V / 2; o >= 1; o >>= 1) // slot j holds head (c + j) mod heads: fold j + o into j
        if (o >= Hs)
#pragma unroll
            for (int j = 0; j < o; ++j) s[j] = op(s[j], s[j + o]);
#pragma unroll
    for (int j = 0; j < V; ++j)
        if (j < Hs)
#pragma unroll 1
            for (int o = P; o < 32; o <<= 1) s[j] = op(s[j], shflXor(s[j], o));
    if constexpr (BT > 32) {
        if (lane < P)
#pragma unroll
            for (int j = 0; j < V; ++j)
                if (j < Hs) red[warp][lane][j] = s[j];
        __syncthreads();
#pragma unroll
        for (int j = 0; j < V; ++j)
            if (j < Hs) {
                float acc = red[0][lane & (P - 1)][j];
#pragma unroll
                for (int w = 1; w < BT / 32; ++w) acc = op(acc, red[w][lane & (P - 1)][j]);
                s[j] = acc;
            }
    }
#pragma unroll
    for (int o = 1; o < V; o <<= 1) // back to every slot
        if (o >= Hs)
#pragma unroll
            for (int j = 0; j < o; ++j) s[j + o] = s[j];
}

/// The run's window geometry: xa = x's run moved back to its first 16-byte boundary (m elements),
/// n elements in the run. Vector q covers run elements q * V - m .. q * V - m + V - 1.
template <typename T> struct SegBlockRun {
    const T* xa;
    T* ya;     // y's run moved back by m (vector stores when y's run has x's alignment)
    bool yVec; // y's run has x's alignment modulo 16 bytes
    int m, n;
};

/// Thread t's R vectors of the window from vector q0 (q0 + t, q0 + t + BT, ...; t the thread's index
/// in its team of BT threads), as float; elements outside the run are -inf and not read.
template <int BT, int R, int V, typename T>
WARPKIT_DEVICE void segBlockLoad(float (&v)[R][V], const SegBlockRun<T>& g, int q0) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int q = q0 + r * BT + (int)(threadIdx.x & (BT - 1)), i0 = q * V - g.m;
        if (i0 >= 0 && i0 + V <= g.n) {
            const Vector16<T> w = loadVector(g.xa + q * V);
#pragma unroll
            for (int k = 0; k < V; ++k) v[r][k] = Arith<T>::to_acc(w.e[k]);
        } else {
#pragma unroll
            for (int k = 0; k < V; ++k)
                v[r][k] = i0 + k >= 0 && i0 + k < g.n ? Arith<T>::to_acc(g.xa[q * V + k]) : negInf();
        }
    }
}

/// Writes out(v) of thread t's R vectors of the window from vector q0 (only elements in the run).
template <int BT, int R, int V, typename T, typename F>
WARPKIT_DEVICE void segBlockStore(const float (&v)[R][V], const SegBlockRun<T>& g, int q0, F out) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int q = q0 + r * BT + (int)(threadIdx.x & (BT - 1)), i0 = q * V - g.m;
        if (g.yVec && i0 >= 0 && i0 + V <= g.n) {
            Vector16<T> w;
#pragma unroll
            for (int k = 0; k < V; ++k) w.e[k] = Arith<T>::from_acc(out(v[r][k], k));
            storeVector(g.ya + q * V, w);
        } else {
#pragma unroll
            for (int k = 0; k < V; ++k)
                if (i0 + k >= 0 && i0 + k < g.n) g.ya[q * V + k] = Arith<T>::from_acc(out(v[r][k], k));
        }
    }
}

/// One window's slot states: mx its heads' maxima, sm their sums of exp(x - max) (max taken as 0 when
/// it is -inf: every exp is then 0), one exp an element; StoreExp: v becomes those exps (the plain
/// kinds' numerators). Every thread of the team calls.
template <int BT, bool StoreExp, bool Precise, int R, int V> WARPKIT_DEVICE void
segBlockWindow(float (&v)[R][V], float (&mx)[V], float (&sm)[V], int Hs, int P, float (&red)[2][BT / 32][4][8]) {
#pragma unroll
    for (int k = 0; k < V; ++k) {
        mx[k] = v[0][k];
#pragma unroll
        for (int r = 1; r < R; ++r) mx[k] = Max{}(mx[k], v[r][k]);
    }
    segBlockAll<BT>(mx, Hs, P, Max{}, red[0]);
#pragma unroll
    for (int k = 0; k < V; ++k) {
        const float ms = mx[k] == negInf() ? 0.0f : mx[k];
        sm[k] = 0.0f;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const float e = expDiff<Precise>(v[r][k], ms);
            if constexpr (StoreExp) v[r][k] = e;
            sm[k] += e;
        }
    }
    segBlockAll<BT>(sm, Hs, P, Sum{}, red[1]);
}

/// The softmax (Kind) of one segment (rows [begin, begin + rows), rows * heads < 2^31 - 16, heads a
/// power of two up to 16) by a team of BT threads (the block, or BT = 32 a warp), E elements a thread
/// a window (the block tier: the block, kSegBlockMaxElems elements at most, 32; see the header
/// comment); ahead() runs once the first window's loads are issued (work that can wait on memory
/// beside them). Every thread of the team calls.
template <int BT, int E = 32, typename T, int Kind, typename F>
WARPKIT_DEVICE void segBlockSoftmax(const SegSoftmaxAlgo<T, Kind>& a, long long begin, int rows, int heads,
                                    float (&red)[2][BT / 32][4][8], F ahead) {
    constexpr int V = vectorElems<T>(), R = E / V, W = BT * R; // vectors a window
    static_assert(E % V == 0 && R >= 1, "segBlockSoftmax: E (elements a thread) must be a multiple of a vector's");
    constexpr bool kPrecise = sizeof(T) == 4;
    const T* xs = a.x + begin * heads;
    const int m = (int)(((size_t)xs / sizeof(T)) & (V - 1)), n = rows * heads;
    T* ys = a.y + begin * heads;
    const SegBlockRun<T> g{xs - m, ys - m, (((size_t)ys / sizeof(T)) & (V - 1)) == (size_t)m, m, n};
    const int Hs = heads < V ? heads : V, P = heads > V ? heads / V : 1, vectors = (n + m + V - 1) / V;
    float v[R][V], mx[V], sm[V];
    SoftmaxFactors f[V];
    if (vectors <= W) { // one window: one read, one exp an element (as rowSoftmax)
        segBlockLoad<BT>(v, g, 0);
        ahead();
        segBlockWindow<BT, !(Kind & SoftmaxLog), kPrecise>(v, mx, sm, Hs, P, red);
#pragma unroll
        for (int k = 0; k < V; ++k) f[k] = softmaxFactors<Kind>(SoftmaxState{mx[k], sm[k]});
        segBlockStore<BT>(v, g, 0, [&](float x, int k) {
            return (Kind & SoftmaxLog) ? (x - f[k].max) - f[k].logSum : x * f[k].scale;
        });
        return;
    }
    SoftmaxState st[V];
#pragma unroll
    for (int k = 0; k < V; ++k) st[k] = softmaxStateEmpty();
#pragma unroll 1
    for (int q0 = 0; q0 < vectors; q0 += W) { // windows in order: their states merged in that order
        segBlockLoad<BT>(v, g, q0);
        if (q0 == 0) ahead();
        segBlockWindow<BT, false, kPrecise>(v, mx, sm, Hs, P, red);
#pragma unroll
        for (int k = 0; k < V; ++k) st[k] = softmaxStateMerge(st[k], SoftmaxState{mx[k], sm[k]});
    }
#pragma unroll
    for (int k = 0; k < V; ++k) f[k] = softmaxFactors<Kind>(st[k]);
#pragma unroll 1
    for (int q0 = 0; q0 < vectors; q0 += W) { // the second read: in place, each element is read and
        segBlockLoad<BT>(v, g, q0);           // written by the same thread
        segBlockStore<BT>(v, g, q0, [&](float x, int k) { return softmaxApply<Kind, kPrecise>(f[k], x); });
    }
}

} // namespace detail
} // namespace warpkit
