// warpkit/device/detail/topk_filter_sample.cuh: stage 0 of the T1 / T2 threshold filter
// (topk_filter.cuh, whose header comment describes the stages), the sample bound: each lane's sample
// keys, the block's radix select of their k-th largest, and the warp state raised to it. The layout
// and warp state, stages 1 and 2: topk_filter_stages.cuh. Internal: include warpkit/device/topk.cuh.
#pragma once

#include "topk_filter_stages.cuh"

namespace warpkit {
namespace detail {

constexpr int kTopKSampleShare = 8; // stage 0 samples 1 / 8 of a warp's rounds
// From k = kTopKSampleWideK, 1 / kTopKSampleWideShare of them while that is at most kTopKSampleWideRounds
// (survivors scale as k x rows / sampled rows; a sampled round is read again from L2 by stage 1).
constexpr int kTopKSampleWideK = 32, kTopKSampleWideShare = 2, kTopKSampleWideRounds = 8;

/// The raw threshold of stage 0's bound Q (a 32-bit order key, as topkPack's top half): Q's value x sgn
/// one float step lower, so that the strict compare passes every element of value Q (any index);
/// NaN (every element passes) when Q's value x sgn is -inf or NaN. Zeros and subnormals as topkCutOf.
template <typename T> WARPKIT_DEVICE float topkCutBelow(unsigned q, bool largest, float sgn) {
    const float c = topkCutOf<T>((unsigned long long)q << 32, largest, sgn); // nonzero
    if (!(c > -__int_as_float(0x7f800000))) return __int_as_float(0x7fffffff);
    return __int_as_float(__float_as_int(c) + (c > 0.f ? -1 : 1)); // +inf: FLT_MAX; -FLT_MAX: -inf
}

/// m folded with the best of v's elements (max, or min when !Largest), NaN dropped unless every value
/// is NaN: the result is the value of an element of v or the m given (NaN: none yet). fp16 / bf16 on
/// sm_80 and newer: packed pairs first. Any thread calls, alone.
template <bool Largest, typename T> WARPKIT_DEVICE float topkFoldBest(const Vector16<T>& v, float m) {
    constexpr int V = vectorElems<T>();
#if WARPKIT_ARCH >= 800
    if constexpr (!IsSame<T, float>::value) {
        using P = typename TopKPacked<T>::type;
        P p = reinterpret_cast<const P*>(v.e)[0];
#pragma unroll
        for (int j = 1; j < V / 2; ++j) {
            const P x = reinterpret_cast<const P*>(v.e)[j];
            p = Largest ? __hmax2(p, x) : __hmin2(p, x);
        }
        const float lo = Arith<T>::to_acc(p.x), hi = Arith<T>::to_acc(p.y);
        return Largest ? fmaxf(m, fmaxf(lo, hi)) : fminf(m, fminf(lo, hi));
    } else
#endif
    {
#pragma unroll
        for (int e = 0; e < V; ++e) {
            const float x = Arith<T>::to_acc(v.e[e]);
            m = Largest ? fmaxf(m, x) : fminf(m, x);
        }
        return m;
    }
}

/// Stage 0's sample keys of this lane: for each of its U vector slots (u: body vectors c + (r U + u)
/// W 32 of its warp's first R rounds r, c = warp x 32 + lane), the order key (largest: topkOrderKey;
/// smallest: its complement, so NaN gives 0) of the best of their elements, an element of the slot;
/// 0 for a slot with no element. All 32 lanes of the warp call (converged).
template <bool Largest, typename T>
WARPKIT_DEVICE void topkSampleKeys(const T* body, int nv, int R, unsigned (&key)[kTopKFilterLoads]) {
    constexpr int V = vectorElems<T>(), U = kTopKFilterLoads, Stride = kTopKFilterWarps * 32;
    const int c = (int)(threadIdx.x / 32) * 32 + (int)laneId();
    float m[U];
#pragma unroll
    for (int u = 0; u < U; ++u) m[u] = __int_as_float(0x7fffffff);
#pragma unroll 2 // two rounds' loads in flight: R is up to kTopKSampleWideRounds, each a wait on memory
    for (int r = 0; r < R; ++r) {
        Vector16<T> x[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int vi = c + (r * U + u) * Stride;
            x[u] = vi < nv ? loadVector<LoadDefault>(body + (size_t)vi * V) : Vector16<T>{};
        }
#pragma unroll
        for (int u = 0; u < U; ++u)
            if (c + (r * U + u) * Stride < nv) m[u] = topkFoldBest<Largest>(x[u], m[u]);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const unsigned k = topkOrderKey(Arith<T>::from_acc(m[u])); // exact: m[u] is an element's value
        key[u] = c + u * Stride < nv ? (Largest ? k : ~k) : 0u;
    }
}

/// Stage 0's select: a key Q with at least k of the block's sample keys at or above it, within the
/// top `Bits` bits of the k-th largest (its lower bits zero); 0 when fewer than k keys are nonzero.
/// A radix select of 8-bit digits from the top (radixDigitCount / radixFindBucket) that stops early
/// when the bucket holds exactly the keys still needed, and after Bits bits: a 16-bit type's keys
/// vary only in their top 16 (topkOrderKey), so its ties at the k-th value take 2 passes, not 4;
/// fp32 stops after 24 (3 passes): Q is then below the k-th by less than 2^-15 of its value, which
/// lets through a negligible share more of the slice. Every thread of the block calls (converged),
/// with the same k.
template <int Bits>
WARPKIT_DEVICE unsigned topkSampleSelect(const unsigned (&key)[kTopKFilterLoads], int k, BlockRadixScratch& s) {
    const int t = (int)threadIdx.x;
    for (int i = t; i < 512; i += kTopKThreads) (&s.hist[0][0])[i] = 0;
    __syncthreads();
    unsigned prefix = 0, mask = 0, need = (unsigned)k;
    for (int shift = 24, p = 0; shift >= 32 - Bits; shift -= 8, ++p) {
        radixDigitCount(key, prefix, mask, shift, s.hist[p & 1]);
        __syncthreads();
        const RadixBucket b = radixFindBucket(s.hist[p & 1], need);
        if (b.bucket < 0) return 0u; // fewer than k nonzero keys (pass 0: every warp the same)
        need -= b.above;
        prefix |= (unsigned)b.bucket << shift;
        mask |= 255u << shift;
        if (t < 256) s.hist[(p + 1) & 1][t] = 0; // read by pass p - 1, before the barrier above
        __syncthreads();
        if (b.count == need) break; // the bucket's keys are all needed: lower digits need not be looked at
    }
    return prefix;
}

/// Stage 0 over the run p[0 .. n): raises st's kth and cut to the sample's bound (see the header
/// comment) when the block's lanes sampled at least k elements whose keys are nonzero; else leaves st.
/// The sample: the first 1 / kTopKSampleShare of a warp's rounds (at least one; for k >=
/// kTopKSampleWideK, 1 / kTopKSampleWideShare of them up to kTopKSampleWideRounds if that is more).
/// Every thread of the block calls (converged), with the same k >= 2.
template <typename T> WARPKIT_DEVICE void topkSampleCut(const T* p, int n, int k, bool largest, float sgn,
                                                        BlockRadixScratch& scratch, TopKWarpState& st) {
    constexpr int RoundVectors = kTopKFilterLoads * kTopKFilterWarps * 32;
    const VectorSplit sp = vectorSplit(p, n);
    const int nv = (int)sp.vectors, rounds = (nv + RoundVectors - 1) / RoundVectors;
    int R = rounds > kTopKSampleShare ? rounds / kTopKSampleShare : 1;
    if (k >= kTopKSampleWideK) {
        const int share = rounds / kTopKSampleWideShare;
        const int wide = share < kTopKSampleWideRounds ? share : kTopKSampleWideRounds;
        R = wide > R ? wide : R;
    }
    unsigned key[kTopKFilterLoads];
    if (largest) topkSampleKeys<true>(p + sp.head, nv, R, key);
    else topkSampleKeys<false>(p + sp.head, nv, R, key);
    constexpr int KeyBits = sizeof(T) == 4 ? 24 : 16; // see topkSampleSelect
    const unsigned q = topkSampleSelect<KeyBits>(key, k, scratch);
    if (q == 0u) return;
    st.kth = ((unsigned long long)q << 32) - 1ull;
    st.cut = topkCutBelow<T>(q, largest, sgn);
}

} // namespace detail
} // namespace warpkit
