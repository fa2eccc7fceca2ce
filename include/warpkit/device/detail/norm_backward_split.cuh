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
// registers (one read).
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
/// in order; zeros past r1); a warp's butterfly of these gives every lane of every block the same
/// bits. Wait: each record read until it is flagged ready (the one-pass kernel, where other blocks
/// publish them while it runs); else read once from L2 (written by an earlier kernel), a plain load
/// of the two words' low halves, the pair (statusPublish's layout), which the compiler may schedule
/// freely (the volatile read spilled the second kernel's fp32 form on sm_90).
template <bool Wait, typename T>
WARPKIT_DEVICE float2 nbSliceSums(const NormBackwardParams<T>& p, long long row, long long r1) {
    float2 a = make_float2(0.0f, 0.0f);
    if (row >= r1) return a;
    const unsigned long long* q = p.sums + row * p.slices * kNbSumsWords;
    for (int k = (int)threadIdx.x % 32; k < p.slices; k += 32) {
        float2 v;
        if constexpr (Wait) {
            while (statusRead(q + k * kNbSumsWords, v) != kNbSumsReady) {
            }
        } else {
            const uint4 u = __ldcg(reinterpret_cast<const uint4*>(q + k * kNbSumsWords));
            v = make_float2(__uint_as_float(u.x), __uint_as_float(u.z));
        }
        a.x += v.x, a.y += v.y;
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
    float2 sc = nbSliceSums<false>(p, first, r1), sn;
    for (long long row = r1 - 1; row >= r0; --row) {
        const long long next = row > r0 ? row - 1 : r1; // r1: an empty row
        nbLoadRow<Gs, Vec>(p, next, r1, t, c0, nxt);
        sn = nbSliceSums<false>(p, next, r1);
        const float s0 = warpReduce<32>(sc.x, Sum{}), s1 = warpReduce<32>(sc.y, Sum{});
        nbStoreRow<T, Gs, Vec, Res, R>(p, res, cur, w, p.mean != nullptr ? s0 * p.invN : 0.0f, s1 * p.invN, row, t, c0);
        cur = nxt, sc = sn;
    }
}

/// Stage (one-pass split kernel): row `row`'s totals of its slices' pairs into tot, once every
/// slice has published its own: warp 0 waits on the records (nbSliceSums<true>) and adds them as
/// the second kernel does, then the block's barrier. Every thread of the block calls; all get tot.
template <typename T>
WARPKIT_DEVICE void nbRowTotals(const NormBackwardParams<T>& p, long long row, long long r1, float (&tot)[2]) {
    __shared__ float sh[2];
    if (threadIdx.x < 32) {
        const float2 a = nbSliceSums<true>(p, row, r1);
        const float s0 = warpReduce<32>(a.x, Sum{}), s1 = warpReduce<32>(a.y, Sum{});
        if (threadIdx.x == 0) sh[0] = s0, sh[1] = s1;
    }
    __syncthreads(); // (the next write of sh follows the next row's nbGroupSums barrier)
    tot[0] = sh[0], tot[1] = sh[1];
}

/// Stage (the split path's blocks, both kernels): block (s, b) takes slice s of part b's rows one at
/// a time (the next row's loads in flight): each row's slice sums published (nbPublishSums), and
/// with OnePass the row's totals once every slice's are there (nbRowTotals) and the slice's dx from
/// the registers; its dw / db terms in registers, then the part's partials of the slice. Every
/// thread of the block calls.
template <bool OnePass, typename T, bool Vec, bool Res, typename R>
WARPKIT_DEVICE void nbSliceRows(const NormBackwardParams<T>& p, const NbRes<T, Res, R>& res) {
    constexpr int Gs = kNbSliceThreads, W = vectorElems<T>(), C = kNbElems / W; // slots of a vector either way
    __shared__ float red[2][Gs / 32][2];
    const int t = (int)threadIdx.x, c0 = (int)blockIdx.x * kNbSliceCols;
    long long r0, r1;
    nbPartRows(p, (int)blockIdx.y, &r0, &r1);
    alignas(16) T w[C][W];
    float aw[C][W] = {}, ab[C][W] = {};
    nbLoadWeights<Gs, Vec>(p, t, c0, w);
    NbRow<T, C, W> cur, nxt;
    nbLoadRow<Gs, Vec>(p, r0, r1, t, c0, cur);
    for (long long row = r0; row < r1; ++row) {
        nbLoadRow<Gs, Vec>(p, row + 1, r1, t, c0, nxt);
        float s[2];
        nbRowTerms(cur, w, s, aw, ab);
        nbGroupSums<Gs, Gs>(s, red, (int)(row - r0));
        if (t == 0) nbPublishSums(p, row, (int)blockIdx.x, s);
        if constexpr (OnePass) {
            float tot[2];
            nbRowTotals(p, row, r1, tot);
            nbStoreRow<T, Gs, Vec, Res, R>(p, res, cur, w, p.mean != nullptr ? tot[0] * p.invN : 0.0f, tot[1] * p.invN,
                                           row, t, c0);
        }
        cur = nxt;
    }
    if (p.pw != nullptr || p.pb != nullptr) nbBlockPartials<Gs, Gs, Vec>(p, aw, ab, (int)blockIdx.y, c0);
}

// Split path (N2), one pass (dx wanted, every block resident at once: a cooperative launch; the
// sums' records cleared first): nbSliceRows with each row's dx from the registers, its totals added
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
