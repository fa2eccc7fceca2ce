// warpkit/device/detail/softmax_block.cuh: the body of rowSoftmax's block kernel (a block, or a
// cluster of blocks, per row; the row in registers): the row's state from per-warp parts with one
// block barrier and one cluster exchange. Internal.
//
// Each warp takes its own part's state (its max, then the exps of the slots that hold values: no
// block barrier before the exps, so a warp whose loads landed starts its exps while the others'
// are in flight); lane 0 puts it in a slot; after one barrier, softmaxMergeLanes folds the slots
// into the block's state (warp 0 only, when the block sends it across a cluster); the blocks swap
// their states with clusterGather, and every warp folds the cluster's parts the same way. Each output is then the
// warp part's exp times one per-thread factor (the reciprocal sum times exp(part max - row max)).
// Bits: every fold is a fixed butterfly of commutative operations, so every lane and every run
// gets the same bits.
#pragma once

#include "../../cluster/reduce.cuh"
#include "../../thread/softmax.cuh"
#include "../../thread/vector.cuh"
#include "../../warp/reduce.cuh"

namespace warpkit {
namespace detail {

/// The max of v over the whole warp, NaN-propagating (max.NaN's bits: any NaN gives 0x7fffffff),
/// every lane gets it. sm_80+: one redux.sync on an order-preserving integer image of the float
/// (negatives' magnitude bits flipped) instead of 5 dependent shuffle + max steps.
WARPKIT_DEVICE float warpMaxAll(float v) {
#if WARPKIT_ARCH >= 800
    const unsigned b = v != v ? 0x7fffffffu : __float_as_uint(v);
    const int k = (int)((b & 0x80000000u) ? b ^ 0x7fffffffu : b);
    const unsigned r = (unsigned)redux<Max>(WARPKIT_FULL_MASK, k);
    return __uint_as_float((r & 0x80000000u) ? r ^ 0x7fffffffu : r);
#else
    return warpReduce<32>(v, Max{});
#endif
}

/// The state of the W parts held by W-lane segments, lane l of a segment holding part l (empty
/// parts {-inf, 0}): the max over the lanes, then the sum of each part's sum rescaled to it, one
/// precise exp a lane. W: a power of two, 1..32; every lane of a segment gets the same bits.
/// The segments must hold the same parts (lane l's part is lane l % W's), so the max is taken over
/// the whole warp at once (warpMaxAll).
template <int W> WARPKIT_DEVICE SoftmaxState softmaxMergeLanes(SoftmaxState p) {
    const float m = warpMaxAll(p.max);
    const float ms = m == negInf() ? 0.0f : m; // all parts empty: every sum is 0
    // An empty part's exp is 0 (expDiff clamps -inf); NaN or +inf anywhere: the sum is NaN.
    return SoftmaxState{m, warpReduce<W>(p.sum * expDiff(p.max, ms), Sum{})};
}

/// Softmax of one row over this block's Threads threads, C vectors (K = C x V values, plus a head/
/// tail slot when K > C x V) each (io, in place; unused slots -inf), and over the cluster's blocks
/// when clusterBlocks() > 1 (xch, round as for clusterGather; clusterExchangeInit first). live: how
/// many of this thread's C vector slots hold values (the first `live`); the others get no exps, so
/// a short last slice (R28's: 4.6 of 8 vectors a thread at fp32 151936) costs no exps of -inf.
/// Same bits as with every slot's exp (each of those adds exactly 0). slots: Threads / 32 states
/// of __shared__ scratch, used once. masked adds SoftmaxMasked to Kind.
template <int Kind, int Threads, int C, typename T, int K>
WARPKIT_DEVICE void softmaxBlockRow(T (&io)[K], int live, SoftmaxState* slots, ClusterExchange<SoftmaxState>& xch,
                                    unsigned& round, bool masked) {
    constexpr int W = Threads / 32, V = vectorElems<T>(), E = K - C * V;
    static_assert(Threads % 32 == 0 && W >= 1 && W <= 32 && (W & (W - 1)) == 0,
                  "softmaxBlockRow: Threads must be 32 times a power of two, at most 1024");
    static_assert(C >= 1 && (E == 0 || E == 1), "softmaxBlockRow: K must be C * vectorElems<T>() (+ 1 head/tail slot)");
    constexpr bool Plain = !(Kind & SoftmaxLog), Precise = sizeof(T) == 4; // 16-bit rows: the fast exp
    float v[K];
#pragma unroll
    for (int j = 0; j < K; ++j) v[j] = Arith<T>::to_acc(io[j]);
    // The warp's max (empty slots are -inf), then its exps and their sum (partState's order).
    float m = v[0];
#pragma unroll
    for (int j = 1; j < K; ++j) m = Max{}(m, v[j]);
    // The head/tail forms take the shuffles: redux.sync's uniform registers spilled fp32 128 / 256 x 4.
    m = E == 0 ? warpMaxAll(m) : warpReduce<32>(m, Max{});
    const float ms = m == negInf() ? 0.0f : m; // all -inf: every exp is 0 and the sum 0
    float s = 0.0f;
#pragma unroll
    for (int c = 0; c < C; ++c) {
        if (c < live) {
#pragma unroll
            for (int k = 0; k < V; ++k) {
                const float e = expDiff<Precise, true>(v[c * V + k], ms);
                if constexpr (Plain) v[c * V + k] = e;
                s += e;
            }
        }
    }
    if constexpr (E == 1) {
        const float e = expDiff<Precise, true>(v[C * V], ms);
        if constexpr (Plain) v[C * V] = e;
        s += e;
    }
    const SoftmaxState part{m, warpReduce<32>(s, Sum{})};
    const unsigned lane = laneId(), warp = linearThreadId() / 32u, nb = clusterBlocks();
    if (lane == 0) slots[warp] = part;
    __syncthreads();
    SoftmaxState row = part;
    if (nb == 1) {
        row = softmaxMergeLanes<W>(slots[lane % W]);
    } else {
        if (warp == 0) row = softmaxMergeLanes<W>(slots[lane % W]); // threads 0..nb-1 send it
        clusterGather(xch, round, row);
        const int k = (int)(lane & 15u);
        row = softmaxMergeLanes<16>(k < (int)nb ? clusterPart(xch, round, k) : softmaxStateEmpty());
    }
    const SoftmaxFactors f = masked ? softmaxFactors<Kind | SoftmaxMasked>(row) : softmaxFactors<Kind>(row);
    if constexpr (!Plain) {
#pragma unroll
        for (int j = 0; j < K; ++j) io[j] = Arith<T>::from_acc((v[j] - f.max) - f.logSum);
    } else {
        // This warp's exps were relative to its own max. A part of only -inf (its exps all 0) in a
        // row that has other values gets scale * 0: zeros, or NaN when the row holds a NaN or +inf.
        const bool partEmpty = part.max == negInf() && row.max != negInf();
        const float scale = f.scale * (partEmpty ? 0.0f : expDiff(part.max == negInf() ? 0.0f : part.max, f.max));
#pragma unroll
        for (int j = 0; j < K; ++j) io[j] = Arith<T>::from_acc(v[j] * scale);
    }
}

} // namespace detail
} // namespace warpkit
