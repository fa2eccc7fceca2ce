// warpkit/device/detail/segment_softmax.cuh: the group kernel's short softmax pairs held in
// registers (segment_kernels.cuh, stage 1). Internal: include warpkit/device/segment.cuh.
//
// A short pair of the softmax (rows <= G * kSegRegRows for its lane group of G lanes) is read once:
// lane j of the group loads rows j, j + G, ... (at most kSegRegRows of them) into registers, then
//   1. the group's max: each lane's max, then an xor butterfly over the G lanes (max.NaN);
//   2. the group's sum of exp(x - max) (max taken as 0 when every value is -inf), one exp an
//      element, kept in the registers for the plain kinds; an xor butterfly of sums;
//   3. softmaxFactors of {max, sum} and one multiply (plain) or two subtractions (log) an element,
//      stored from the registers.
// A pair of a whole warp (G = 32) past 32 * kSegRegRows rows goes by windows of that many rows
// (segmentSoftmaxWide): each window's max and sum as above, merged into the pair's state in window
// order, then a second read writes the outputs.
// This is thread/softmax.cuh's partState / softmaxCore for a row spread over G lanes, so the NaN,
// inf and all -inf rules are the same. The online update (an exp and a branch an element), the
// state merges (an exp a step) and the second read of the write pass are gone. 16-bit values take
// the fast exp, as the row primitives do (its error is far below a 16-bit output's rounding).
//
// Bits. Each butterfly step combines two lanes' values with a commutative operator (IEEE + and
// max.NaN), so the lanes of a group end with the same bits, and the tree depends only on G (a
// function of the pair's length); the sum over a lane's rows runs in row order. So the result
// depends only on the pair's values and length, never on the grid or on its neighbours. The windows'
// states are the same bits in every lane (the same merges of the same butterfly results).
#pragma once

#include "segment_algos.cuh"
#include "../../detail/shfl.cuh"

namespace warpkit {
namespace detail {

/// Rows of a pair a lane holds in registers (the plans' perLane for one to sixteen heads).
constexpr int kSegRegRows = 8;

/// Whether the group kernel takes A's short pairs in registers (segmentSoftmaxPair): the softmax.
template <typename A> struct SegRegSoftmax { static constexpr bool value = false; };
template <typename T, int Kind> struct SegRegSoftmax<SegSoftmaxAlgo<T, Kind>> { static constexpr bool value = true; };

/// op over the G aligned lanes of this lane's group (G a power of two, the same in every lane), by
/// an xor butterfly: with op commutative every lane of the group gets the same bits. All 32 lanes
/// call.
template <typename Op> WARPKIT_DEVICE float segGroupAll(float v, int G, Op op) {
#pragma unroll 1
    for (int o = 1; o < G; o <<= 1) v = op(v, shflXor(v, o));
    return v;
}

/// Heads up to this take the register path (a pair's element offsets then fit an int:
/// rows <= 32 * kSegRegRows).
constexpr int kSegRegMaxHeads = 16;

/// The softmax (Kind) of one short pair read from x and written to y (row r at x[r * heads] and
/// y[r * heads]: y may be a shared-memory stage), by G lanes, this one lane j of them (rows j,
/// j + G, ... below rows; rows <= G * kSegRegRows; rows = 0 writes nothing; heads <=
/// kSegRegMaxHeads). All 32 lanes call when G > 1 (the butterflies), with the same G; a lane alone
/// may call with G = 1.
template <typename T, int Kind, int K = kSegRegRows>
WARPKIT_DEVICE void segmentSoftmaxRegs(const T* x, T* y, int heads, int j, int rows, int G) {
    constexpr bool kPrecise = sizeof(T) == 4;
    const int first = j * heads, step = G * heads;                             // element offsets: below 2^12
    const int mine = rows - j <= 0 ? 0 : (rows - j + G - 1) >> (__ffs(G) - 1); // this lane's rows (G: 2^n)
    float v[K];
#pragma unroll
    for (int k = 0; k < K; ++k) // every load before any use: one round trip
        v[k] = k < mine ? Arith<T>::to_acc(x[first + k * step]) : negInf();
    float m = v[0];
#pragma unroll
    for (int k = 1; k < K; ++k) m = Max{}(m, v[k]);
    m = segGroupAll(m, G, Max{});
    const float ms = m == negInf() ? 0.0f : m; // all -inf: every exp is 0 and the sum 0
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        if (k >= mine) break; // rows past the lane's own cost nothing
        const float e = expDiff<kPrecise>(v[k], ms);
        if constexpr (!(Kind & SoftmaxLog)) v[k] = e;
        s += e;
    }
    s = segGroupAll(s, G, Sum{});
    const SoftmaxFactors f = softmaxFactors<Kind>(SoftmaxState{m, s});
#pragma unroll
    for (int k = 0; k < K; ++k) {
        if (k >= mine) break;
        const float r = (Kind & SoftmaxLog) ? (v[k] - f.max) - f.logSum : v[k] * f.scale;
        y[first + k * step] = Arith<T>::from_acc(r);
    }
}

/// segmentSoftmaxRegs on the pair of algorithm a whose first element is at element index `at`.
template <typename T, int Kind> WARPKIT_DEVICE void segmentSoftmaxPair(const SegSoftmaxAlgo<T, Kind>& a, long long at,
                                                                       int heads, int j, int rows, int G) {
    segmentSoftmaxRegs<T, Kind>(a.x + at, a.y + at, heads, j, rows, G);
}

/// Whether whole-warp pairs past 32 * kSegRegRows rows of T go by windows (segmentSoftmaxWide):
/// 4-byte values (with 16-bit ones the group kernel spilled on sm_75 at its 80 registers; they keep
/// the fold and write passes).
template <typename T> constexpr bool kSegWideRegs = sizeof(T) == 4;

/// The softmax (Kind) of one pair by the whole warp, in windows of 32 * kSegRegRows rows (rows * heads
/// < 2^31, heads <= kSegRegMaxHeads): each window's values in registers give its max (a butterfly)
/// and its sum of exps against that max (a butterfly), merged into the pair's state in window order
/// (softmaxStateMerge; every lane holds the same bits); a second read writes the outputs
/// (softmaxApply). Two reads and two exps an element, against the fold's online update a row and its
/// merges. All 32 lanes call, with the same pair.
template <typename T, int Kind>
WARPKIT_DEVICE void segmentSoftmaxWide(const SegSoftmaxAlgo<T, Kind>& a, long long at, int heads, int rows) {
    constexpr int K = kSegRegRows, W = 32 * K;
    constexpr bool kPrecise = sizeof(T) == 4;
    const int lane = (int)laneId();
    const T* x = a.x + at;
    T* y = a.y + at;
    SoftmaxState st = softmaxStateEmpty();
#pragma unroll 1
    for (int w0 = 0; w0 < rows; w0 += W) {
        float v[K];
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const int r = w0 + lane + 32 * k;
            v[k] = r < rows ? Arith<T>::to_acc(x[r * heads]) : negInf();
        }
        float m = v[0];
#pragma unroll
        for (int k = 1; k < K; ++k) m = Max{}(m, v[k]);
        m = segGroupAll(m, 32, Max{});
        const float ms = m == negInf() ? 0.0f : m;
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < K; ++k) s += expDiff<kPrecise>(v[k], ms); // -inf past the rows: 0
        st = softmaxStateMerge(st, SoftmaxState{m, segGroupAll(s, 32, Sum{})});
    }
    const SoftmaxFactors f = softmaxFactors<Kind>(st);
    constexpr int KW = K / 2; // the write pass: half a window a batch (8 spill in 16-bit plain kernels)
#pragma unroll 1
    for (int w0 = 0; w0 < rows; w0 += 32 * KW) {
        float v[KW];
#pragma unroll
        for (int k = 0; k < KW; ++k) {
            const int r = w0 + lane + 32 * k;
            v[k] = r < rows ? Arith<T>::to_acc(x[r * heads]) : 0.0f;
        }
#pragma unroll
        for (int k = 0; k < KW; ++k) {
            const int r = w0 + lane + 32 * k;
            if (r < rows) y[r * heads] = Arith<T>::from_acc(softmaxApply<Kind, kPrecise>(f, v[k]));
        }
    }
}

/// The short pairs of one tier in registers (group width G > 1, the lanes in `tier`, heads <=
/// kSegRegMaxHeads, every pair rows <= G * kSegRegRows, or G = 32 and kSegWideRegs<T>: then by
/// windows, segmentSoftmaxWide): the tier's k-th pair goes to group k % (32 / G) in round
/// k / (32 / G), as segmentTier's (segment_kernels.cuh). Every lane calls.
template <typename T, int Kind> WARPKIT_DEVICE void
segmentSoftmaxTier(const SegSoftmaxAlgo<T, Kind>& a, int G, unsigned tier, long long b, int mine, int head, int heads) {
    const int lane = (int)laneId(), count = __popc(tier), groups = 32 / G, j = lane & (G - 1);
#pragma unroll 1
    for (int first = 0; first < count; first += groups) {
        const int k = first + lane / G; // this group's pair: the tier's k-th lane
        const int src = k < count ? (int)__fns(tier, 0u, k + 1) : 0;
        const long long pb = shflIdx(b, src);
        const int pr = shflIdx(mine, src), ph = shflIdx(head, src);
        if constexpr (kSegWideRegs<T>) {
            if (G == 32 && pr > 32 * kSegRegRows) { // one pair a round
                segmentSoftmaxWide(a, pb * heads + ph, heads, pr);
                continue;
            }
        }
        segmentSoftmaxPair(a, pb * heads + ph, heads, j, k < count ? pr : 0, G);
    }
}

} // namespace detail
} // namespace warpkit
