// warpkit/device/detail/topk_filter_stages.cuh: the parts of the T1 / T2 threshold filter
// (topk_filter.cuh, whose header comment describes the stages) that one warp runs on its share of a
// row slice: the shared-memory layout, the warp state, stage 1 (the filter) and stage 2 (the flush).
// Stage 0 (the sample bound): topk_filter_sample.cuh. Internal: include warpkit/device/topk.cuh.
#pragma once

#include "../../thread/vector.cuh"
#include "topk_kernels.cuh"

namespace warpkit {
namespace detail {

constexpr int kTopKFilterWarps = kTopKThreads / 32;
constexpr int kTopKFilterCap = 2 * kTopKFilterMaxK; // keys a warp's buffer holds
constexpr int kTopKFilterLoads = 4;                 // 16-byte loads in flight a lane
// Blocks an SM the kernel is built for: 4 on sm_90 (the S3 plan's count); 2 before.
constexpr int kTopKFilterBlocksPerSm = WARPKIT_ARCH == 0 || WARPKIT_ARCH >= 900 ? 4 : 2;

/// A warp's buffer and its radix-select histogram.
struct TopKWarpBuffer {
    unsigned long long keys[kTopKFilterCap];
    alignas(16) unsigned hist[256]; // 16-byte aligned: radixFindBucket's vector loads
};

/// The merges' shared memory: the block select's scratch and the keys it selected, and the
/// candidates of a split row's slices, staged when they fit (stage 5).
struct TopKMergeShared {
    BlockTopKScratch<kTopKFilterMaxK> sel;
    unsigned long long stage[kTopKFilterStage];
};
static_assert(sizeof(TopKMergeShared) <= sizeof(TopKWarpBuffer) * kTopKFilterWarps,
              "topk_filter: the merge's shared memory must fit in the warps' buffers");

/// A warp's share of a merge's key bounds (stages 3, 5): smallest nonzero key, OR, AND, nonzero count.
struct TopKWarpBounds {
    unsigned long long lo, ors, ands;
    unsigned nonzero;
};

/// The filter kernel's shared memory: the warps' buffers, reused by the merges.
struct TopKFilterShared {
    union {
        TopKWarpBuffer warp[kTopKFilterWarps];
        TopKMergeShared merge;
    };
    BlockRadixScratch sample;                // stage 0's select
    int kept[kTopKFilterWarps];              // keys each warp kept (stage 3)
    TopKWarpBounds bounds[kTopKFilterWarps]; // each warp's bounds of the keys selected from (3, 5)
    int last;                                // this block finished its row's last slice
};

/// A warp's filter state (the same in every lane).
struct TopKWarpState {
    int n;                  // keys in the buffer
    int cap;                // flush before n would pass it
    unsigned long long kth; // the buffer's k-th largest key after the last flush; before: 0 or stage 0's
    float cut;              // kth's value x sgn (NaN or stage 0's before a flush)
};

WARPKIT_DEVICE TopKWarpState topkWarpStart(int k) {
    const int cap = 2 * k + 64;
    return {0, cap < kTopKFilterCap ? cap : kTopKFilterCap, 0ull, __int_as_float(0x7fffffff)};
}

/// The raw threshold of kth: its value x sgn; -FLT_MIN for a zero or a subnormal, so that every zero
/// and subnormal passes (-0.0 ranks below +0.0 but compares equal; a flush-to-zero build compares
/// subnormals as zeros).
template <typename T> WARPKIT_DEVICE float topkCutOf(unsigned long long kth, bool largest, float sgn) {
    const float c = sgn * Arith<T>::to_acc(topkUnpackValue<T>(kth, largest)), tiny = 1.17549435e-38f;
    return c > -tiny && c < tiny ? -tiny : c;
}

/// The packed pair of a 16-bit float type.
template <typename T> struct TopKPacked { using type = __nv_bfloat162; };
template <> struct TopKPacked<__half> { using type = __half2; };

/// Stage 1's raw compare: false only if v's packed key is below kth. Strict (an equal value fails;
/// NaN passes): a warp visits its elements in rising index order, so an element equal in value to kth
/// comes after kth's element and its packed key is below kth.
template <typename T> WARPKIT_DEVICE bool topkMayPass(T v, const TopKWarpState& st, float sgn) {
    return !(Arith<T>::to_acc(v) * sgn <= st.cut);
}

#if WARPKIT_ARCH >= 800
/// fp16 / bf16: the packed maximum (Largest) or minimum of the pairs of the lane's U vectors, NaN kept
/// (max.NaN / min.NaN), or for the minimum with DropNaN, NaN dropped unless every value is NaN; one
/// instruction for two elements. Any thread calls, alone.
template <bool Largest, bool DropNaN, typename T, int U>
WARPKIT_DEVICE typename TopKPacked<T>::type topkPairBest(const Vector16<T> (&v)[U]) {
    constexpr int V = vectorElems<T>();
    using P = typename TopKPacked<T>::type;
    P m = reinterpret_cast<const P*>(v[0].e)[0];
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
        for (int j = u == 0 ? 1 : 0; j < V / 2; ++j) {
            const P x = reinterpret_cast<const P*>(v[u].e)[j];
            m = Largest ? __hmax2_nan(m, x) : DropNaN ? __hmin2(m, x) : __hmin2_nan(m, x);
        }
    return m;
}
#endif

/// Whether any element of the lane's U vectors passes stage 1's raw compare, the order fixed (no
/// multiply by sgn). fp32: one compare an element. fp16 / bf16 on sm_80 and newer: the packed maximum
/// (minimum) of the pairs, NaN kept (one instruction for two elements), then two compares.
template <bool Largest, typename T, int U> WARPKIT_DEVICE bool topkAnyMayPass(const Vector16<T> (&v)[U], float cut) {
    constexpr int V = vectorElems<T>();
#if WARPKIT_ARCH >= 800
    if constexpr (!IsSame<T, float>::value) {
        const typename TopKPacked<T>::type m = topkPairBest<Largest, false>(v);
        const float lo = Arith<T>::to_acc(m.x), hi = Arith<T>::to_acc(m.y);
        return Largest ? !(lo <= cut) || !(hi <= cut) : !(lo >= -cut) || !(hi >= -cut);
    }
#endif
    bool any = false;
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
        for (int e = 0; e < V; ++e) {
            const float x = Arith<T>::to_acc(v[u].e[e]);
            any |= Largest ? !(x <= cut) : !(x >= -cut);
        }
    return any;
}

/// The lane's elements of its U vectors that pass stage 1's raw compare (as topkAnyMayPass), as bits
/// u V + e (a vector only when some lane's passes: one vote a vector). All 32 lanes call.
template <bool Largest, typename T, int U> WARPKIT_DEVICE unsigned topkRoundMask(const Vector16<T> (&v)[U], float cut) {
    constexpr int V = vectorElems<T>();
    static_assert(U * V <= 32, "topkRoundMask: a lane's elements of a round must fit a 32-bit mask");
    unsigned m = 0;
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const Vector16<T> one[1] = {v[u]};
        if (!__any_sync(WARPKIT_FULL_MASK, topkAnyMayPass<Largest>(one, cut))) continue;
#pragma unroll
        for (int e = 0; e < V; ++e) {
            const float x = Arith<T>::to_acc(v[u].e[e]);
            if (Largest ? !(x <= cut) : !(x >= -cut)) m |= 1u << (u * V + e);
        }
    }
    return m;
}

/// Stage 1's common path: from round c (warp-uniform), the first round at or below cLast in which
/// some lane's elements are not all below cut, with this lane's topkRoundMask of it in `mask`; cLast +
/// step when none (mask untouched). The rounds it reads are whole (every vector in the body), so the
/// loads need no bounds checks; the order is fixed so the compare needs no multiply. All 32 lanes of
/// the warp call (converged).
template <bool Largest, typename T>
WARPKIT_DEVICE int topkScanQuiet(const T* body, int c, int cLast, float cut, unsigned& mask) {
    constexpr int V = vectorElems<T>(), U = kTopKFilterLoads, Stride = kTopKFilterWarps * 32 * V;
    const T* q = body + (size_t)(c + (int)laneId()) * V;
    for (; c <= cLast; c += U * kTopKFilterWarps * 32, q += U * Stride) {
        Vector16<T> v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = loadVector<LoadStreaming>(q + u * Stride);
        if (__any_sync(WARPKIT_FULL_MASK, topkAnyMayPass<Largest>(v, cut))) {
            mask = topkRoundMask<Largest>(v, cut);
            break;
        }
    }
    return c;
}

/// The topkRoundMask of the lane's vectors in the last, partial round from c (vectors c + u W 32 +
/// lane below nv; the others read nothing and get no bits). All 32 lanes call.
template <bool Largest, typename T> WARPKIT_DEVICE unsigned topkPartialMask(const T* body, int c, int nv, float cut) {
    constexpr int V = vectorElems<T>(), U = kTopKFilterLoads, W = kTopKFilterWarps;
    Vector16<T> v[U];
    unsigned valid = 0;
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const int vi = c + u * W * 32 + (int)laneId();
        v[u] = vi < nv ? loadVector<LoadStreaming>(body + (size_t)vi * V) : Vector16<T>{};
        valid |= vi < nv ? ((1u << V) - 1u) << u * V : 0u;
    }
    return topkRoundMask<Largest>(v, cut) & valid;
}

/// The smallest of the k largest of keys[0 .. n) (distinct, nonzero; n > k >= 1) or a key at or below
/// it above every smaller key: the prefix where exactly k keys lie at or above. A radix select on
/// 8-bit digits from the highest bit where the keys differ, over shared memory, with the warp's own
/// histogram. All 32 lanes of the warp call (converged); every lane gets the answer.
WARPKIT_DEVICE unsigned long long topkWarpRadixSelect(const unsigned long long* keys, int n, int k, unsigned* hist) {
    const int lane = (int)laneId();
    __syncwarp(); // the keys the warp's lanes appended are visible
    unsigned long long lo = ~0ull, hi = 0ull;
    for (int i = lane; i < n; i += 32) {
        const unsigned long long key = keys[i];
        lo = key < lo ? key : lo;
        hi = key > hi ? key : hi;
    }
    lo = warpReduceMin(lo);
    hi = warpReduceMax(hi);
    const int top = 63 - __clzll((long long)(lo ^ hi)); // the highest bit where keys differ (n >= 2)
    unsigned long long mask = top == 63 ? 0ull : ~0ull << (top + 1), prefix = lo & mask;
    unsigned need = (unsigned)k;
    for (int shift = top >= 7 ? top - 7 : 0;; shift = shift >= 8 ? shift - 8 : 0) {
        for (int i = lane; i < 256; i += 32) hist[i] = 0;
        __syncwarp();
        for (int i = lane; i < n; i += 32) {
            const unsigned long long key = keys[i];
            if ((key & mask) == prefix) atomicAdd(&hist[(unsigned)(key >> shift) & 255u], 1u);
        }
        __syncwarp();
        const RadixBucket b = radixFindBucket(hist, need);
        need -= b.above;
        prefix |= (unsigned long long)b.bucket << shift; // bits under mask: already those of prefix
        mask |= 255ull << shift;
        __syncwarp(); // every lane has read hist before the next pass clears it
        if (b.count == need || shift == 0) break;
    }
    return prefix;
}

/// Stage 2: the warp keeps the k largest of its buffer's st.n keys (st.n > k) at keys[0 .. k) and
/// raises kth and cut to the smallest of them. All 32 lanes of the warp call (converged).
template <typename T>
WARPKIT_DEVICE void topkWarpFlush(TopKWarpBuffer& b, TopKWarpState& st, int k, bool largest, float sgn) {
    const unsigned long long floor = topkWarpRadixSelect(b.keys, st.n, k, b.hist);
    const unsigned lane = laneId();
    unsigned long long least = ~0ull;
    int out = 0;
    // in place: the writes of a chunk of 32 go below its end, after every lane has read it
    for (int base = 0; base < st.n; base += 32) {
        const int i = base + (int)lane;
        const unsigned long long key = i < st.n ? b.keys[i] : 0ull;
        const bool keep = key != 0ull && key >= floor;
        const unsigned ballot = __ballot_sync(WARPKIT_FULL_MASK, keep);
        __syncwarp();
        if (keep) {
            b.keys[out + __popc(ballot & laneMaskLt())] = key;
            least = key < least ? key : least;
        }
        out += __popc(ballot);
    }
    __syncwarp();
    st.n = out;
    st.kth = warpReduceMin(least);
    st.cut = topkCutOf<T>(st.kth, largest, sgn);
}

/// Whether every non-NaN element that passes stage 1's raw compare has a packed key above st.kth, so
/// that topkWarpTake need not compare packed keys (only drop NaN, which passes the raw compare, for
/// the smallest): no kth yet (0), or a cut that is a number of magnitude at least 2 FLT_MIN (a value
/// strictly beyond it has a larger order key than kth's value; one equal to stage 0's bound Q has a
/// key >= Q, above kth = (Q << 32) - 1). Not so for a NaN cut (kth NaN, or stage 0's bound -inf or
/// NaN: every element passes) or one near zero (-0.0 ranks below +0.0 but compares equal; subnormals
/// may flush to zero). Any thread calls, alone.
WARPKIT_DEVICE bool topkCutExact(const TopKWarpState& st) {
    return st.kth == 0ull || (st.cut == st.cut && !(fabsf(st.cut) < 2.35098870e-38f));
}

/// Takes this lane's elements v[0 .. valid) (indices index, index + 1, ...) whose packed keys pass kth
/// into the buffer, flushing first when it would pass its cap (at most once: a flush leaves k keys,
/// and k + 32 V fits the buffer). k >= 2 (k = 1: topkBestFilter). All 32 lanes of the warp call
/// (converged), with their own elements.
template <typename T, int V> WARPKIT_DEVICE void topkWarpTake(const T (&v)[V], int valid, unsigned index, int k,
                                                              bool largest, float sgn, TopKWarpBuffer& b,
                                                              TopKWarpState& st) {
    unsigned m = 0; // the elements to take (their keys are recomputed where needed: fewer registers)
#pragma unroll
    for (int e = 0; e < V; ++e)
        if (e < valid && topkMayPass(v[e], st, sgn)) m |= 1u << e;
    if (__ballot_sync(WARPKIT_FULL_MASK, m != 0u) == 0u) return; // most vectors of a flagged round
    if (!topkCutExact(st)) {
#pragma unroll
        for (int e = 0; e < V; ++e)
            if (topkPack(v[e], index + (unsigned)e, largest) <= st.kth) m &= ~(1u << e);
    } else if (!largest && st.kth != 0ull) { // NaN passes the raw compare but ranks last
#pragma unroll
        for (int e = 0; e < V; ++e)
            if (isNaN(v[e])) m &= ~(1u << e);
    }
    if (__ballot_sync(WARPKIT_FULL_MASK, m != 0u) == 0u) return;
    unsigned total = 0;
    unsigned before = warpInclusiveSum((unsigned)__popc(m), total) - (unsigned)__popc(m);
    if (st.n + (int)total > st.cap && st.n > k) {
        topkWarpFlush<T>(b, st, k, largest, sgn);
#pragma unroll
        for (int e = 0; e < V; ++e)
            if (topkPack(v[e], index + (unsigned)e, largest) <= st.kth) m &= ~(1u << e);
        before = warpInclusiveSum((unsigned)__popc(m), total) - (unsigned)__popc(m);
    }
    int o = st.n + (int)before;
    for (unsigned r = m; r != 0u; r &= r - 1u) { // the lane's own takes only (few), in index order
        const int e = __ffs((int)r) - 1;
        T x = v[0]; // v[e] by selects: a register array indexed at run time would go to local memory
#pragma unroll
        for (int j = 1; j < V; ++j) x = e == j ? v[j] : x;
        b.keys[o++] = topkPack(x, index + (unsigned)e, largest);
    }
    st.n += (int)total;
}

/// A round at once (a flagged whole one, or the last, partial one): m holds the lane's elements that
/// pass the raw compare (topkRoundMask of its vectors c + u W 32 + lane of body; element e of vector vi
/// has index index + vi V + e). If the warp's buffer has room for all of them (after a flush if
/// needed), each lane takes its set bits one a step, reading the element again (from cache), and
/// appends its packed key when above kth (exact: also after a flush in this round, and for NaN or
/// near-zero cuts), in ballot order. Returns false, having taken nothing, when even an emptied buffer
/// has no room (topkWarpFilter then goes vector by vector). All 32 lanes of the warp call (converged).
template <typename T> WARPKIT_DEVICE bool topkTakeRound(unsigned m, const T* body, int c, unsigned index, int k,
                                                        bool largest, float sgn, TopKWarpBuffer& b, TopKWarpState& st) {
    constexpr unsigned V = vectorElems<T>(), Stride = kTopKFilterWarps * 32 * V;
    const unsigned first = (unsigned)(c + (int)laneId()) * V; // of the lane's vector 0 in body
    const int total = (int)warpReduceSum((unsigned)__popc(m));
    if (st.n + total > st.cap && st.n > k) topkWarpFlush<T>(b, st, k, largest, sgn);
    if (st.n + total > st.cap) return false;
    const int steps = (int)warpReduceMax((unsigned)__popc(m)); // the busiest lane's passing elements
    for (int i = 0; i < steps; ++i) {
        unsigned long long key = 0ull;
        if (m != 0u) {
            const unsigned bit = (unsigned)__ffs((int)m) - 1u, at = first + bit / V * Stride + bit % V;
            m &= m - 1u;
            key = topkPack(loadScalar(body + at), index + at, largest);
            key = key > st.kth ? key : 0ull;
        }
        const unsigned ballot = __ballot_sync(WARPKIT_FULL_MASK, key != 0ull);
        if (key != 0ull) b.keys[st.n + __popc(ballot & laneMaskLt())] = key;
        st.n += __popc(ballot);
    }
    return true;
}

/// Stage 1 over the run p[0 .. n) (element i: index index0 + i): warp w of the block takes the body's
/// rounds of U x 32 vectors (chunks of 32 vectors w, w + W, ...), warp 0 also the scalar head (first)
/// and tail (last), so each warp visits its elements in rising index order. topkScanQuiet passes the
/// rounds none of whose elements passes the raw compare; a flagged round (and the last, partial one)
/// goes through topkTakeRound, or when its passing elements would not fit the buffer, vector by
/// vector: only the vectors holding some lane's passing elements go through topkWarpTake (one copy
/// of the code, not unrolled, read again from cache by those lanes). All threads of the block call;
/// each warp updates its own buffer and state.
template <typename T> WARPKIT_DEVICE void topkWarpFilter(const T* p, int n, unsigned index0, int k, bool largest,
                                                         float sgn, TopKWarpBuffer& b, TopKWarpState& st) {
    constexpr int V = vectorElems<T>(), U = kTopKFilterLoads, W = kTopKFilterWarps;
    const int lane = (int)laneId(), warp = (int)(threadIdx.x / 32);
    const VectorSplit sp = vectorSplit(p, n);
    const int nv = (int)sp.vectors, cLast = nv - ((U - 1) * W + 1) * 32; // rounds from c <= cLast are whole
    if (warp == 0 && sp.head > 0) {                                      // fewer than V scalars each
        const T x[1] = {lane < sp.head ? loadScalar<LoadStreaming>(p + lane) : T()};
        topkWarpTake<T>(x, lane < sp.head ? 1 : 0, index0 + (unsigned)lane, k, largest, sgn, b, st);
    }
    const T* body = p + sp.head;
    const unsigned index = index0 + (unsigned)sp.head; // of body[0]
    for (int c = warp * 32; c < nv; c += U * W * 32) {
        unsigned m = 0; // bit u V + e: the lane's element e of vector u of the round passes the raw compare
        c = largest ? topkScanQuiet<true>(body, c, cLast, st.cut, m) : topkScanQuiet<false>(body, c, cLast, st.cut, m);
        if (c >= nv) break;
        if (c > cLast)
            m = largest ? topkPartialMask<true>(body, c, nv, st.cut) : topkPartialMask<false>(body, c, nv, st.cut);
        if (topkTakeRound<T>(m, body, c, index, k, largest, sgn, b, st)) continue;
        // kth only rises, so an element not flagged here (its key at or below kth) cannot pass later
        unsigned flags = 0; // bit u: the lane's vector u of the round may hold a survivor
#pragma unroll
        for (int u = 0; u < U; ++u) flags |= (m >> u * V & ((1u << V) - 1u)) != 0u ? 1u << u : 0u;
#pragma unroll 1
        for (int u = 0; u < U; ++u) {
            if (__ballot_sync(WARPKIT_FULL_MASK, flags >> u & 1u) == 0u) continue; // no lane's vector u passes
            const int vi = c + u * W * 32 + lane;
            const bool mine = (flags >> u & 1u) != 0u;
            const Vector16<T> x = mine ? loadVector<LoadStreaming>(body + (size_t)vi * V) : Vector16<T>{};
            topkWarpTake<T>(x.e, mine ? V : 0, index + (unsigned)(vi * V), k, largest, sgn, b, st);
        }
    }
    if (warp == 0 && sp.tail > 0) {
        const int i = sp.head + nv * V + lane;
        const T x[1] = {lane < sp.tail ? loadScalar<LoadStreaming>(p + i) : T()};
        topkWarpTake<T>(x, lane < sp.tail ? 1 : 0, index0 + (unsigned)i, k, largest, sgn, b, st);
    }
}

} // namespace detail
} // namespace warpkit
