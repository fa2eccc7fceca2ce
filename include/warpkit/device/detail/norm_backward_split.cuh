// warpkit/device/detail/norm_backward_split.cuh: the split path (N2) of rowLayerNormBackward and
// rowRmsNormBackward (device/norm_backward.cuh): its kernels over slices of kNbSliceCols columns of
// the rows, made of the stages of norm_backward_kernels.cuh (whose header comment describes the
// slots and stages 1-6). Internal: include warpkit/device/norm_backward.cuh.
//
// normBackwardSumsKernel (N2), block (s, b): slice s of part b's rows, one at a time: stages 1-4,
// the slice's two sums to the workspace, then stage 6. normBackwardSplitDxKernel (N2), the same
// slices and parts in reverse order (rows too, so that what the first kernel left in L2 is read
// first): each row's sums over its slices (nbSliceSums, the same order in every block), then the
// slice's dx from a second read. normBackwardOnePassKernel (N2, dx wanted, the grid resident at
// once): the first kernel's blocks, each row's slice pairs exchanged through the sums, dx from the
// row's slots kept in shared memory (one read), written kNbPublishAhead rows behind the row whose
// sums go out, so that no block waits on a row the others have only just published.
//
// The sums: a record of two 64-bit words a row and slice, each word a float of the pair with a
// flag (lookback.cuh's status records: one relaxed 16-byte store publishes it, a reader accepts it
// when both words carry kNbSumsReady). The one-pass kernel's readers wait on the records
// themselves, cleared first: no count, no fence (a release at GPU scope waits for the SM's
// outstanding stores, and was on every row's critical path).
#pragma once

#include "lookback.cuh" // statusPublish, statusRead
#include "norm_backward_kernels.cuh"

namespace warpkit {
namespace detail {

constexpr unsigned kNbSumsReady = 1; // a sums record's flag once published (0: the clear's)
static_assert(LookbackShape<float2>::words == kNbSumsWords, "norm backward: kNbSumsWords must be a float2 record's");

/// Stage: slice `slice`'s pair s of row `row` to its record in the sums, flagged ready. One thread.
template <typename T>
WARPKIT_DEVICE void nbPublishSums(const NormBackwardParams<T>& p, long long row, int slice, const float (&s)[2]) {
    statusPublish(p.sums + (row * p.slices + slice) * kNbSumsWords, kNbSumsReady, make_float2(s[0], s[1]));
}

/// Stage: the calling lane's share of row `row`'s sums over its slices (slices lane, lane + 32, ...
/// in order; zeros past r1), read once from L2 (written by an earlier kernel): a plain load of the
/// two words' low halves, the pair (statusPublish's layout), which the compiler may schedule freely
/// (a volatile read spilled the second kernel's fp32 form on sm_90). A warp's butterfly of these
/// gives every lane of every block the same bits (nbRowTotals adds them in the same order).
template <typename T> WARPKIT_DEVICE float2 nbSliceSums(const NormBackwardParams<T>& p, long long row, long long r1) {
    float2 a = make_float2(0.0f, 0.0f);
    if (row >= r1) return a;
    const unsigned long long* q = p.sums + row * p.slices * kNbSumsWords;
    for (int k = (int)threadIdx.x % 32; k < p.slices; k += 32) {
        const uint4 u = __ldcg(reinterpret_cast<const uint4*>(q + k * kNbSumsWords));
        a.x += __uint_as_float(u.x), a.y += __uint_as_float(u.z);
    }
    return a;
}

// Split path (N2), second kernel (launched when dx is wanted): the blocks of the first kernel in
// reverse, each taking its part's rows in reverse, one at a time with the next row's loads and sums
// in flight: each row's total sums (nbSliceSums, then a warp's butterfly), then the slice's dx.
// Reverse: the first kernel's last rows are the ones still in L2, so they are read first.
template <typename T, bool Vec, bool Res, typename R = T>
__global__ void __launch_bounds__(kNbSliceThreads, nbMinBlocks<T, Vec, true>(kNbSliceThreads))
    normBackwardSplitDxKernel(NormBackwardParams<T> p, NbRes<T, Res, R> res) {
    static_assert(NbTypeCheck<T>::ok, "norm backward kernels: T (see NbTypeCheck)");
    constexpr int Gs = kNbSliceThreads, W = vectorElems<T>(), C = kNbElems / W; // slots of a vector either way
    const int last = (int)(gridDim.x * gridDim.y) - 1 - (int)(blockIdx.y * gridDim.x + blockIdx.x);
    const int t = (int)threadIdx.x, c0 = last % p.slices * kNbSliceCols;
    long long r0, r1;
    nbPartRows(p, last / p.slices, &r0, &r1);
    alignas(16) T w[C][W];
    nbLoadWeights<Gs, Vec>(p, t, c0, w);
    NbRow<T, C, W> cur, nxt;
    const long long first = r1 > r0 ? r1 - 1 : r1; // r1: an empty row (an empty part)
    nbLoadRow<Gs, Vec>(p, first, r1, t, c0, cur);
    float2 sc = nbSliceSums(p, first, r1), sn;
    for (long long row = r1 - 1; row >= r0; --row) {
        const long long next = row > r0 ? row - 1 : r1; // r1: an empty row
        nbLoadRow<Gs, Vec>(p, next, r1, t, c0, nxt);
        sn = nbSliceSums(p, next, r1);
        const float s0 = warpReduce<32>(sc.x, Sum{}), s1 = warpReduce<32>(sc.y, Sum{});
        nbStoreRow<T, Gs, Vec, Res, R>(p, res, cur, w, p.mean != nullptr ? s0 * p.invN : 0.0f, s1 * p.invN, row, t, c0);
        cur = nxt, sc = sn;
    }
}

/// Rows the one-pass kernel publishes ahead of the one whose dx it writes (N2, D): row
/// r's slice sums go out before it waits on row r - D's totals, so the wait overlaps a row's work
/// and finds the other slices' records mostly there (the slices' blocks no longer move in lockstep).
/// The rows in between wait in shared memory (NbHeld): D + 1 rows of a thread's slots, 16 KB (fp32)
/// or 8 KB (16-bit) a row a block.
constexpr int kNbPublishAhead = 1;

/// Stage (one-pass split kernel): row `row`'s totals of its slices' pairs into tot, once every
/// slice has published its own. Every thread reads one record at a time (thread k slice k, then k +
/// kNbSliceThreads, ...) until it is flagged ready, into shared memory, then the block's barrier:
/// one L2 round trip a row up to kNbSliceThreads slices, the polling spread over the block's warps.
/// Then each lane adds its share, slices lane, lane + 32, ... in order, and its warp's butterfly
/// gives the totals: the second kernel's order (nbSliceSums), the same bits in every thread. Every
/// thread of the block calls; all get tot. Two shared buffers alternate by call (rows in order, one
/// call each): a buffer's next write follows the barrier between, which every thread reaches after
/// reading it.
template <typename T> WARPKIT_DEVICE void nbRowTotals(const NormBackwardParams<T>& p, long long row, float (&tot)[2]) {
    constexpr int Gs = kNbSliceThreads, Wp = Gs / 32;
    __shared__ float2 got[2][Wp][32];
    const int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32, rounds = (p.slices + Gs - 1) / Gs;
    const unsigned long long* q = p.sums + row * p.slices * kNbSumsWords;
    float2 a = make_float2(0.0f, 0.0f);
    for (int i = 0; i < rounds; ++i) {
        float2(*b)[32] = got[(row * rounds + i) & 1];
        const int k = i * Gs + (int)threadIdx.x;
        if (k < p.slices) {
            float2 v;
            while (statusRead(q + k * kNbSumsWords, v) != kNbSumsReady) {
            }
            b[warp][lane] = v;
        }
        __syncthreads();
        for (int w = 0; w < Wp && i * Gs + w * 32 + lane < p.slices; ++w) a.x += b[w][lane].x, a.y += b[w][lane].y;
    }
    tot[0] = warpReduce<32>(a.x, Sum{}), tot[1] = warpReduce<32>(a.y, Sum{});
}

/// The one-pass kernel's rows held for their dx: the last D + 1 whose sums went out (D:
/// kNbPublishAhead; the oldest's dx is due), the calling thread's dy and x slots of each in a ring in
/// shared memory ([slot][dy's C slots, then x's][thread], 16 bytes an entry: a warp's accesses are
/// 512 contiguous bytes), their statistics in registers (the same in every thread), oldest first.
/// A thread reads back only what it wrote: no barrier. (Held in registers, the fp32 form spilled at
/// the 80 registers of 3 blocks an SM on sm_90.)
template <int C, int D> struct NbHeld {
    uint4 (*ring)[2 * C][kNbSliceThreads];
    float mean[D + 1], rstd[D + 1];
};

/// Stage (one-pass split kernel): row `row` (its sums published; past r1 an empty row, held alike)
/// into the ring, slot row % (D + 1), and its statistics after the others' (the oldest, D + 1 rows
/// before, dropped). Once a row: the oldest held is then row - D.
template <typename T, int C, int W, int D>
WARPKIT_DEVICE void nbHoldRow(NbHeld<C, D>& h, const NbRow<T, C, W>& r, long long row, int t) {
    static_assert(W * sizeof(T) == sizeof(uint4), "nbHoldRow: W must fill a slot of 16 bytes");
    uint4(*e)[kNbSliceThreads] = h.ring[row % (D + 1)];
#pragma unroll
    for (int c = 0; c < C; ++c) {
        e[c][t] = *reinterpret_cast<const uint4*>(r.dy[c]);
        e[C + c][t] = *reinterpret_cast<const uint4*>(r.x[c]);
    }
#pragma unroll
    for (int k = 0; k < D; ++k) h.mean[k] = h.mean[k + 1], h.rstd[k] = h.rstd[k + 1];
    h.mean[D] = r.mean, h.rstd[D] = r.rstd;
}

/// Stage (one-pass split kernel): the oldest held row, `row` (r0 <= row < r1: nbHoldRow's row - D),
/// from the ring into r, with its statistics.
template <typename T, int C, int W, int D>
WARPKIT_DEVICE void nbHeldRow(const NbHeld<C, D>& h, long long row, int t, NbRow<T, C, W>& r) {
    const uint4(*e)[kNbSliceThreads] = h.ring[row % (D + 1)];
#pragma unroll
    for (int c = 0; c < C; ++c) {
        *reinterpret_cast<uint4*>(r.dy[c]) = e[c][t];
        *reinterpret_cast<uint4*>(r.x[c]) = e[C + c][t];
    }
    r.mean = h.mean[0], r.rstd = h.rstd[0], r.ok = true;
}

/// Stage (the split path's blocks, both kernels): block (s, b) takes slice s of part b's rows one at
/// a time (the next row's loads in flight): each row's slice sums published (nbPublishSums), its dw
/// / db terms in registers, then the part's partials of the slice. With OnePass, each row's dx from
/// its slots too, kNbPublishAhead rows behind: the row held (nbHoldRow) once its sums are out, then
/// the totals of the row that many before (nbRowTotals) and its dx (nbHeldRow, nbStoreRow). Every
/// thread of the block calls.
template <bool OnePass, typename T, bool Vec, bool Res, typename R>
WARPKIT_DEVICE void nbSliceRows(const NormBackwardParams<T>& p, const NbRes<T, Res, R>& res) {
    constexpr int Gs = kNbSliceThreads, W = vectorElems<T>(), C = kNbElems / W; // slots of a vector either way
    constexpr int D = OnePass ? kNbPublishAhead : 0;
    __shared__ float red[2][Gs / 32][2];
    const int t = (int)threadIdx.x, c0 = (int)blockIdx.x * kNbSliceCols;
    long long r0, r1;
    nbPartRows(p, (int)blockIdx.y, &r0, &r1);
    alignas(16) T w[C][W];
    float aw[C][W] = {}, ab[C][W] = {};
    nbLoadWeights<Gs, Vec>(p, t, c0, w);
    NbHeld<C, D> held = {};
    if constexpr (OnePass) {
        __shared__ uint4 ring[D + 1][2 * C][Gs];
        held.ring = ring;
    }
    NbRow<T, C, W> cur, nxt;
    nbLoadRow<Gs, Vec>(p, r0, r1, t, c0, cur);
    if constexpr (OnePass) nxt = cur; // (an empty part loads no other)
    for (long long row = r0; row < r1 + D; ++row) {
        if (row < r1) {
            nbLoadRow<Gs, Vec>(p, row + 1, r1, t, c0, nxt);
            float s[2];
            nbRowTerms(cur, w, s, aw, ab);
            nbGroupSums<Gs, Gs>(s, red, (int)(row - r0));
            if (t == 0) nbPublishSums(p, row, (int)blockIdx.x, s);
        }
        if constexpr (OnePass) {
            nbHoldRow(held, cur, row, t);
            const long long done = row - D; // the row whose dx is due
            if (done >= r0) {
                float tot[2];
                nbRowTotals(p, done, tot);
                NbRow<T, C, W> r;
                nbHeldRow(held, done, t, r);
                nbStoreRow<T, Gs, Vec, Res, R>(p, res, r, w, p.mean != nullptr ? tot[0] * p.invN : 0.0f,
                                               tot[1] * p.invN, done, t, c0);
            }
        }
        cur = nxt; // (past r1: the empty row r1, held and never stored)
    }
    if (p.pw != nullptr || p.pb != nullptr) nbBlockPartials<Gs, Gs, Vec>(p, aw, ab, (int)blockIdx.y, c0);
}

// Split path (N2), one pass (dx wanted, every block resident at once: a cooperative launch; the
// sums' records cleared first): nbSliceRows with each row's dx from its held slots, its totals added
// in the second kernel's order (nbRowTotals). The same bits as the two kernels; one read of dy and x.
template <typename T, bool Vec, bool Res, typename R = T>
__global__ void __launch_bounds__(kNbSliceThreads, nbMinBlocks<T, Vec, true, true>(kNbSliceThreads))
    normBackwardOnePassKernel(NormBackwardParams<T> p, NbRes<T, Res, R> res) {
    static_assert(NbTypeCheck<T>::ok, "norm backward kernels: T (see NbTypeCheck)");
    nbSliceRows<true, T, Vec, Res, R>(p, res);
}

// Split path (N2), first kernel: block (s, b) takes slice s (kNbSliceCols columns from s *
// kNbSliceCols) of part b's rows one at a time (the next row's loads in flight): the slice's two
// sums of each row to p.sums[row * slices + s], its dw / db terms in registers, then the part's
// partials of the slice (nbSliceRows without the one pass's dx).
template <typename T, bool Vec>
__global__ void __launch_bounds__(kNbSliceThreads, nbMinBlocks<T, Vec, true>(kNbSliceThreads))
    normBackwardSumsKernel(NormBackwardParams<T> p) {
    static_assert(NbTypeCheck<T>::ok, "norm backward kernels: T (see NbTypeCheck)");
    nbSliceRows<false, T, Vec, false, T>(p, NbRes<T, false, T>{});
}

} // namespace detail
} // namespace warpkit
