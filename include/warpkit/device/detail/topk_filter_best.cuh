// warpkit/device/detail/topk_filter_best.cuh: stage 1 of the T1 threshold filter for k = 1
// (topk_filter.cuh's header comment describes the stages): the warp's running best, raised once a
// round. Internal: include warpkit/device/topk.cuh.
//
// State. Each warp keeps `best`, the largest order key (topkPack's top half: topkOrderKey, its
// complement for the smallest) of the whole rounds it has read, and `cut`, best's raw threshold; both
// are the same in every lane. Each lane keeps `own`, the largest packed key it has taken from warp 0's
// scalar head and tail, and `at`, the round in which it holds best's first element (or none).
//
// A round is kTopKFilterLoads 16-byte loads a lane, as topkWarpFilter's. Quiet round: fp16 / bf16 on
// sm_80 and newer take the lane's best value b of the round by packed max (min) of the pairs (16
// instructions for 32 elements) and compare it with cut; fp32 (and sm_75) compare each element
// (topkAnyMayPass); then one vote. A flagged round (and the last, partial one): each lane's round key
// kb (16-bit: b's key, exact but for a zero or subnormal b, whose sign and bits the packed compare may
// not keep; those, and fp32 / sm_75, by the exact fold topkRoundFirst), one warp max kw (redux.sync on
// sm_80 and newer), and only if kw > best: best = kw, cut raised, and `at` = this round in the lanes
// whose kb is kw, none in the others. No index is sought in the loop: at the end, the lanes with a
// round `at` read it again (the lowest first, 64 bytes; the others only the vectors before its first
// element of key best, none when that is in its vector 0) and take their first element of key best
// into `own` (the exact fold). Rows in rising order flag every round and pay about
// 60 instructions a round (2 an element for bf16), not a 64-bit warp max a vector; random rows flag
// about ln(rounds) rounds and keep the warp-wide cut. Rows of zeros flag every round (the cut of a zero
// passes every zero) and fold exactly.
//
// Exact: the whole rounds of a warp visit indices in rising order, round by round (every lane's round
// r lies below every lane's round r + 1; the partial round comes last). An element that fails the raw
// compare has a key at or below best; one of a flagged round whose kw does not pass best has too; so
// it lies after best's first element and ranks below it. Best's first element lies in the round that
// last raised best, in the lane of lowest index among those whose kb is best, and that lane's first
// element of key best is it; so the block max over `own` is the largest packed key of the slice.
#pragma once

#include "topk_filter_stages.cuh"

namespace warpkit {
namespace detail {

/// Blocks an SM the k = 1 kernel is built for: 4 on sm_90 (as the k >= 2 kernel); 3 before, as many as
/// the k >= 2 kernel's registers leave room for on sm_80 (its shared memory allows 3).
constexpr int kTopKBestBlocksPerSm = WARPKIT_ARCH == 0 || WARPKIT_ARCH >= 900 ? 4 : 3;

/// k = 1's raw threshold of a best packed key: topkCutOf, but +inf for a NaN best when largest (only
/// NaN passes then; NaN ranks first). Any thread calls, alone.
template <typename T> WARPKIT_DEVICE float topkLaneCut(unsigned long long best, bool largest, float sgn) {
    const float c = topkCutOf<T>(best, largest, sgn);
    return c == c || !largest ? c : __int_as_float(0x7f800000);
}

/// k = 1: own raised to the largest packed key of v[0 .. valid) (indices index, index + 1, ...). Any
/// thread calls, alone.
template <typename T, int V>
WARPKIT_DEVICE void topkLaneTake(const T (&v)[V], int valid, unsigned index, bool largest, unsigned long long& own) {
#pragma unroll
    for (int e = 0; e < V; ++e) {
        const unsigned long long key = topkPack(v[e], index + (unsigned)e, largest);
        own = e < valid && key > own ? key : own;
    }
}

/// Whether k = 1's rounds take the packed path (fp16 / bf16 on sm_80 and newer).
template <typename T> struct TopKBestPacked {
    static constexpr bool value = WARPKIT_ARCH >= 800 && !IsSame<T, float>::value;
};

/// k = 1's running best of a warp (see the header comment); `own` is the lane's.
struct TopKBest {
    unsigned long long own; // the lane's largest packed key taken
    long long best;         // the warp's largest order key of its whole rounds; -1: none yet
    float cut;              // best's raw threshold (NaN: none yet, every element passes)
    int at;                 // the round (its first vector c) in which the lane holds best's first element; -1
};

/// topkOrderKey of element e of v, complemented for the smallest; 16-bit types from the bits (the same
/// key, fewer instructions). Any thread calls, alone.
template <bool Largest, typename T> WARPKIT_DEVICE unsigned topkElementKey(const Vector16<T>& v, int e) {
    if constexpr (IsSame<T, float>::value) {
        return topkRankKey(v.e[e], Largest);
    } else {
        unsigned short h;
        __builtin_memcpy(&h, &v.e[e], 2);
        const unsigned b = (unsigned)h << 16, inf = IsSame<T, __half>::value ? 0x7c000000u : 0x7f800000u;
        const unsigned key = (b & 0x7fffffffu) > inf ? 0xffffffffu : (b & 0x80000000u) ? ~b : b ^ 0x80000000u;
        return Largest ? key : ~key;
    }
}

/// The first of the largest order keys (topkOrderKey, complemented for the smallest) of the lane's
/// round v, its offset in pos (vector u, element e: u W 32 V + e, W the block's warps: rising index).
/// Any thread calls, alone.
template <bool Largest, typename T, int U>
WARPKIT_DEVICE unsigned topkRoundFirst(const Vector16<T> (&v)[U], unsigned& pos) {
    constexpr int V = vectorElems<T>(), Step = kTopKFilterWarps * 32 * V;
    unsigned key = topkElementKey<Largest>(v[0], 0);
    pos = 0;
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
        for (int e = u == 0 ? 1 : 0; e < V; ++e) {
            const unsigned x = topkElementKey<Largest>(v[u], e);
            pos = x > key ? (unsigned)(u * Step + e) : pos; // strict: the first of equal keys stays
            key = x > key ? x : key;
        }
    return key;
}

/// fp16 / bf16 on sm_80 and newer: the best of the lane's round v in both halves of the word: the
/// largest, NaN when any is NaN; the smallest of the non-NaN, NaN when all are NaN. An element's bits,
/// except that a NaN may come back as another NaN and, among zeros and subnormals, the compare may
/// take any of them. Any thread calls, alone.
template <bool Largest, typename T, int U> WARPKIT_DEVICE unsigned topkRoundBestBits(const Vector16<T> (&v)[U]) {
    unsigned w = 0;
#if WARPKIT_ARCH >= 800
    using P = typename TopKPacked<T>::type;
    P m = topkPairBest<Largest, true>(v);
    const P s = __lowhigh2highlow(m);
    m = Largest ? __hmax2_nan(m, s) : __hmin2(m, s);
    __builtin_memcpy(&w, &m, 4);
#endif
    return w;
}

/// The low 16 bits of w as a T (fp16 / bf16). Any thread calls, alone.
template <typename T> WARPKIT_DEVICE T topkLowHalf(unsigned w) {
    const unsigned short h = (unsigned short)w;
    T x;
    __builtin_memcpy(&x, &h, 2);
    return x;
}

/// The lane's round from vector c (vectors c + u W 32 + lane); a vector at or past nv, or of u >= uEnd,
/// reads nothing and holds `last` (the order's last value: -inf, or NaN for the smallest). Any thread
/// calls, alone.
template <typename T, int U>
WARPKIT_DEVICE void topkLoadRound(const T* body, int c, int nv, int uEnd, T last, Vector16<T> (&v)[U]) {
    constexpr int V = vectorElems<T>();
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const int vi = c + u * kTopKFilterWarps * 32 + (int)laneId();
        if (vi < nv && u < uEnd) v[u] = loadVector<LoadStreaming>(body + (size_t)vi * V);
        else
#pragma unroll
            for (int e = 0; e < V; ++e) v[u].e[e] = last;
    }
}

/// own raised to the packed key of the first of the largest elements of the lane's vectors u < uEnd
/// (uEnd >= 1) of the round from vector c (body's vector 0: index `first`); returns its u. Any thread
/// calls, alone.
template <bool Largest, typename T> WARPKIT_DEVICE int topkTakeRound(const T* body, int c, int nv, int uEnd, T last,
                                                                     unsigned first, unsigned long long& own) {
    constexpr int V = vectorElems<T>(), Step = kTopKFilterWarps * 32 * V;
    Vector16<T> v[kTopKFilterLoads];
    topkLoadRound(body, c, nv, uEnd, last, v);
    unsigned pos;
    const unsigned key = topkRoundFirst<Largest>(v, pos);
    const unsigned index = first + (unsigned)((c + (int)laneId()) * V) + pos;
    const unsigned long long packed = topkPackRankKey(key, index);
    own = packed > own ? packed : own;
    return (int)(pos / Step);
}

/// A flagged round, or the last, partial one, of the warp from vector c (see the header comment): the
/// lane's round v, `bits` its topkRoundBestBits (packed path; else unused), `valid` whether the lane has
/// an element in it (the others hold the order's last value). All 32 lanes of the warp call (converged).
template <bool Largest, typename T, int U>
WARPKIT_DEVICE void topkBestRound(const Vector16<T> (&v)[U], unsigned bits, int c, bool valid, TopKBest& s) {
    unsigned kb, pos = 0;
    if constexpr (TopKBestPacked<T>::value) {
        const T b = topkLowHalf<T>(bits);
        constexpr unsigned Exponent = IsSame<T, __half>::value ? 0x7c00u : 0x7f80u;
        // b's key is the round's largest unless b is a zero or subnormal (the packed compare may return
        // any of them: the exact fold); every NaN has the same key
        if ((bits & Exponent) == 0u) kb = topkRoundFirst<Largest>(v, pos);
        else kb = topkRankKey(b, Largest);
    } else {
        kb = topkRoundFirst<Largest>(v, pos);
    }
    kb = valid ? kb : 0u;
    const unsigned kw = warpReduceMax(kb);
    if ((long long)kw <= s.best) return; // the same in every lane: nothing of the round ranks above best
    s.best = (long long)kw;
    s.cut = topkLaneCut<T>((unsigned long long)kw << 32, Largest, Largest ? 1.f : -1.f);
    s.at = valid && kb == kw ? c : -1;
}

/// Stage 1 for k = 1 over the run p[0 .. n) (element i: index index0 + i), topkWarpFilter's rounds:
/// warp w of the block takes the body's rounds of U x 32 vectors (chunks of 32 vectors w, w + W, ...),
/// warp 0 also the scalar head (first) and tail (last); see the header comment. st.kth gets the lane's
/// `own` (stage 3 takes the block's max). Every thread of the block calls (converged).
template <bool Largest, typename T>
WARPKIT_DEVICE void topkBestFilter(const T* p, int n, unsigned index0, TopKWarpState& st) {
    constexpr int V = vectorElems<T>(), U = kTopKFilterLoads, W = kTopKFilterWarps, Stride = W * 32 * V;
    const int lane = (int)laneId(), warp = (int)(threadIdx.x / 32);
    const VectorSplit sp = vectorSplit(p, n);
    const int nv = (int)sp.vectors, cLast = nv - ((U - 1) * W + 1) * 32; // rounds from c <= cLast are whole
    TopKBest s = {0ull, -1ll, __int_as_float(0x7fffffff), -1};
    if (warp == 0 && lane < sp.head) {
        const T x[1] = {loadScalar<LoadStreaming>(p + lane)};
        topkLaneTake<T>(x, 1, index0 + (unsigned)lane, Largest, s.own);
    }
    const T* body = p + sp.head;
    int c = warp * 32;
    const T* q = body + (size_t)(c + lane) * V;
    for (; c <= cLast; c += U * W * 32, q += U * Stride) {
        Vector16<T> v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = loadVector<LoadStreaming>(q + u * Stride);
        unsigned bits = 0;
        bool pass;
        if constexpr (TopKBestPacked<T>::value) {
            bits = topkRoundBestBits<Largest>(v);
            const float b = Arith<T>::to_acc(topkLowHalf<T>(bits));
            pass = Largest ? !(b <= s.cut) : !(b >= -s.cut); // NaN passes
        } else {
            pass = topkAnyMayPass<Largest>(v, s.cut);
        }
        if (__any_sync(WARPKIT_FULL_MASK, pass)) topkBestRound<Largest>(v, bits, c, true, s);
    }
    const T last = Largest ? Arith<T>::from_acc(-__int_as_float(0x7f800000)) : quietNaN<T>();
    if (c < nv) { // the last, partial round
        Vector16<T> v[U];
        topkLoadRound(body, c, nv, U, last, v);
        unsigned bits = 0;
        if constexpr (TopKBestPacked<T>::value) bits = topkRoundBestBits<Largest>(v);
        topkBestRound<Largest>(v, bits, c, c + lane < nv, s);
    }
    // the lanes holding best (in round s.at, the same in all of them) read it again: first the lowest,
    // whose first element of key best lies in its vector u0; then the others, only their vectors below
    // u0 (where alone an earlier one can lie: the lanes below the lowest hold none)
    const unsigned holders = __ballot_sync(WARPKIT_FULL_MASK, s.at >= 0);
    if (holders != 0u) {
        const int lead = __ffs((int)holders) - 1;
        const unsigned first = index0 + (unsigned)sp.head; // the body's vector 0
        int u0 = 0;
        if (lane == lead) u0 = topkTakeRound<Largest>(body, s.at, nv, U, last, first, s.own);
        u0 = __shfl_sync(WARPKIT_FULL_MASK, u0, lead);
        if (s.at >= 0 && lane != lead && u0 > 0) topkTakeRound<Largest>(body, s.at, nv, u0, last, first, s.own);
    }
    if (warp == 0 && lane < sp.tail) {
        const int i = sp.head + nv * V + lane;
        const T x[1] = {loadScalar<LoadStreaming>(p + i)};
        topkLaneTake<T>(x, 1, index0 + (unsigned)i, Largest, s.own);
    }
    st.kth = s.own;
}

} // namespace detail
} // namespace warpkit
