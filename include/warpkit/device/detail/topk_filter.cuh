// warpkit/device/detail/topk_filter.cuh: the kernel of rules T1 / T2 (k <= 256, split S3): a threshold
// filter that reads each element once with 16-byte loads and keeps only those that can still reach
// the top k. Internal: include warpkit/device/topk.cuh.
//
// Each warp of the block owns a buffer of packed keys in shared memory and a threshold: kth, the
// smallest of the k largest keys it has kept (0 until it has kept k), and cut, kth's value as a
// float (times sgn = -1 for the smallest, so one compare serves both orders). Per item (a row slice):
//   1. filter (topkWarpFilter): the warp reads its share of the slice, kTopKFilterLoads 16-byte loads
//      in flight a lane (the scalar head and tail: warp 0). A vector none of whose elements passes
//      the raw compare !(v x sgn < cut) (one float compare an element; NaN passes) costs nothing
//      more; otherwise its elements are packed (topkPack) and those above kth appended to the buffer
//      (ballot + popc, no atomics);
//   2. flush (topkWarpFlush): when an append would pass the warp's cap (2k + 64, at most the buffer),
//      the warp alone (no block barrier) keeps the k largest of its buffer by a radix select over it
//      and raises kth and cut to the smallest of them;
//   3. merge (topkBlockMerge): the block selects the k largest of its warps' kept keys (blockTopKSelect);
//   4. finish (topkFilterFinish): the outputs, ranked (blockTopKSort), or the mask. With several
//      slices a row, each slice leaves its k keys in the workspace; the block that finishes the
//      row's last slice (an atomic counter a row, after a __threadfence) runs stages 1-3 over the
//      row's slices x k keys (read past L1) and then stage 4.
// An element is dropped only when its warp has kept k keys above it, so the set merged is a superset
// of the top k, and the answer (the k largest distinct packed keys) is the same bits for any split.
// For random data about k ln(n / k) of a warp's n elements pass; ascending rows pass every element
// (a flush every cap - k of them): correct, slower.
#pragma once

#include "../../thread/vector.cuh"
#include "topk_kernels.cuh"

namespace warpkit {
namespace detail {

constexpr int kTopKFilterWarps = kTopKThreads / 32;
constexpr int kTopKFilterCap = 2 * kTopKFilterMaxK; // keys a warp's buffer holds
constexpr int kTopKFilterLoads = 4;                 // 16-byte loads in flight a lane
// Blocks an SM the kernel is built for: 3 on sm_90 (80 registers); 2 before, where the 16-bit kernel
// needs more registers (it spills at 80 on sm_75 and sm_80).
constexpr int kTopKFilterBlocksPerSm = WARPKIT_ARCH == 0 || WARPKIT_ARCH >= 900 ? 3 : 2;

/// A warp's buffer and its radix-select histogram.
struct TopKWarpBuffer {
    unsigned long long keys[kTopKFilterCap];
    unsigned hist[256];
};

/// The filter kernel's shared memory: the warps' buffers, reused by the block merge.
struct TopKFilterShared {
    union {
        TopKWarpBuffer warp[kTopKFilterWarps];
        BlockTopKScratch<kTopKFilterMaxK> merge;
    };
    int kept[kTopKFilterWarps]; // keys each warp kept (stage 3)
    int last;                   // this block finished its row's last slice
};

/// A warp's filter state (the same in every lane).
struct TopKWarpState {
    int n;                  // keys in the buffer
    int cap;                // flush before n would pass it
    unsigned long long kth; // the buffer's k-th largest key after the last flush; 0 before
    float cut;              // kth's value x sgn (-inf before)
};

WARPKIT_DEVICE TopKWarpState topkWarpStart(int k) {
    const int cap = 2 * k + 64;
    return {0, cap < kTopKFilterCap ? cap : kTopKFilterCap, 0ull, -__builtin_huge_valf()};
}

/// Stage 1's raw compare: false only if v's packed key is below kth. E: the row's type, or packed keys.
template <typename E> WARPKIT_DEVICE bool topkMayPass(E v, const TopKWarpState& st, float sgn) {
    if constexpr (IsSame<E, unsigned long long>::value) return v > st.kth;
    else return !(Arith<E>::to_acc(v) * sgn < st.cut);
}

/// The packed key of element `index` of value v (an input of packed keys is its own key).
template <typename E> WARPKIT_DEVICE unsigned long long topkKeyOf(E v, unsigned index, bool largest) {
    if constexpr (IsSame<E, unsigned long long>::value) return v;
    else return topkPack(v, index, largest);
}

/// The smallest of the k largest of keys[0 .. n) (distinct, nonzero; n >= k >= 1) or a key at or below
/// it above every smaller key: the prefix where exactly k keys lie at or above. A radix select on
/// 8-bit digits from the top, over shared memory, with the warp's own histogram. All 32 lanes of the
/// warp call (converged); every lane gets the answer.
WARPKIT_DEVICE unsigned long long topkWarpRadixSelect(const unsigned long long* keys, int n, int k, unsigned* hist) {
    const int lane = (int)laneId();
    unsigned long long prefix = 0, mask = 0;
    unsigned need = (unsigned)k;
    for (int shift = 56; shift >= 0; shift -= 8) {
        for (int i = lane; i < 256; i += 32) hist[i] = 0;
        __syncwarp();
        for (int i = lane; i < n; i += 32) {
            const unsigned long long key = keys[i];
            if ((key & mask) == prefix) atomicAdd(&hist[(unsigned)(key >> shift) & 255u], 1u);
        }
        __syncwarp();
        const RadixBucket b = radixFindBucket(hist, need);
        need -= b.above;
        prefix |= (unsigned long long)b.bucket << shift;
        mask |= 255ull << shift;
        __syncwarp(); // every lane has read hist before the next pass clears it
        if (b.count == need) break;
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
    st.cut = sgn * Arith<T>::to_acc(topkUnpackValue<T>(st.kth, largest));
}

/// Appends this lane's key when `take` (the warp's takers in lane order), flushing first when the
/// buffer would pass its cap. All 32 lanes of the warp call (converged).
template <typename T> WARPKIT_DEVICE void topkWarpAppend(TopKWarpBuffer& b, TopKWarpState& st, int k, bool largest,
                                                         float sgn, bool take, unsigned long long key) {
    unsigned ballot = __ballot_sync(WARPKIT_FULL_MASK, take);
    if (ballot == 0u) return;
    if (st.n + __popc(ballot) > st.cap) {
        topkWarpFlush<T>(b, st, k, largest, sgn);
        take = take && key > st.kth;
        ballot = __ballot_sync(WARPKIT_FULL_MASK, take);
    }
    if (take) b.keys[st.n + __popc(ballot & laneMaskLt())] = key;
    st.n += __popc(ballot);
}

/// Stage 1 over the run p[0 .. n) (element i: index index0 + i): warp w of the block takes the body's
/// chunks of 32 vectors w, w + W, ... (kTopKFilterLoads chunks in flight), warp 0 also the scalar head
/// and tail. E: T (a row of x) or unsigned long long (packed candidates, read past L1). All threads of
/// the block call; each warp updates its own buffer and state.
template <typename T, typename E> WARPKIT_DEVICE void topkWarpFilter(const E* p, int n, unsigned index0, int k,
                                                                     bool largest, float sgn, TopKWarpBuffer& b,
                                                                     TopKWarpState& st) {
    constexpr int V = vectorElems<E>(), U = kTopKFilterLoads, W = kTopKFilterWarps;
    constexpr int Hint = IsSame<E, unsigned long long>::value ? LoadL2Only : LoadStreaming;
    const int lane = (int)laneId(), warp = (int)(threadIdx.x / 32);
    const VectorSplit sp = vectorSplit(p, n);
    if (warp == 0 && sp.head + sp.tail > 0) { // at most 2 V - 2 < 32 scalars
        const bool has = lane < sp.head + sp.tail;
        const int i = (int)extraIndex<int>(sp, has ? lane : 0, V);
        const E v = has ? loadScalar<Hint>(p + i) : E();
        const unsigned long long key = topkKeyOf(v, index0 + (unsigned)i, largest);
        topkWarpAppend<T>(b, st, k, largest, sgn, has && topkMayPass(v, st, sgn) && key > st.kth, key);
    }
    const E* body = p + sp.head;
    const int nv = (int)sp.vectors;
    for (int c = warp * 32; c < nv; c += U * W * 32) {
        Vector16<E> v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int vi = c + u * W * 32 + lane;
            v[u] = vi < nv ? loadVector<Hint>(body + (size_t)vi * V) : Vector16<E>{};
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int vi = c + u * W * 32 + lane;
            bool any = false;
#pragma unroll
            for (int e = 0; e < V; ++e) any |= vi < nv && topkMayPass(v[u].e[e], st, sgn);
            if (!__any_sync(WARPKIT_FULL_MASK, any)) continue;
#pragma unroll
            for (int e = 0; e < V; ++e) {
                const unsigned long long key = topkKeyOf(v[u].e[e], index0 + (unsigned)(sp.head + vi * V + e), largest);
                const bool take = vi < nv && topkMayPass(v[u].e[e], st, sgn) && key > st.kth;
                topkWarpAppend<T>(b, st, k, largest, sgn, take, key);
            }
        }
    }
}

/// Stage 3: the k largest of the warps' kept keys into s.merge.keys[0 .. n), n returned (min(k, keys
/// kept)). Every thread of the block calls (converged).
template <typename T>
WARPKIT_DEVICE int topkBlockMerge(TopKFilterShared& s, TopKWarpState& st, int k, bool largest, float sgn) {
    const int t = (int)threadIdx.x, warp = t / 32;
    if (st.n > k) topkWarpFlush<T>(s.warp[warp], st, k, largest, sgn);
    if (laneId() == 0) s.kept[warp] = st.n;
    __syncthreads();
    unsigned long long keys[kTopKFilterWarps]; // st.n <= k <= kTopKFilterMaxK = the block's threads
#pragma unroll
    for (int w = 0; w < kTopKFilterWarps; ++w) keys[w] = t < s.kept[w] ? s.warp[w].keys[t] : 0ull;
    __syncthreads(); // the buffers are read before the merge scratch (their union) is written
    return blockTopKSelect<kTopKThreads>(keys, k, s.merge).selected;
}

/// Stage 4: row `row`'s outputs from its n best keys in s.merge.keys (n <= k): ranked values and
/// indices, or the masked row. Every thread of the block calls (converged).
template <typename T> WARPKIT_DEVICE void topkFilterFinish(const TopKRows<T>& io, const TopKLevel& lv, long long row,
                                                           TopKFilterShared& s, int n) {
    const int t = (int)threadIdx.x;
    if (io.masked) {
        const unsigned long long least = blockReduceMin<kTopKThreads>(t < n ? s.merge.keys[t] : ~0ull);
        topkMaskRow(io, lv.cols, row, least);
    } else {
        blockTopKSort<kTopKThreads>(s.merge, n);
        if (t < n) topkWriteOutput(io, lv.k, row, t, s.merge.keys[t]);
    }
    __syncthreads(); // s is read before the next item writes it
}

/// Stage 4 of a slice of a split row: its k keys to the workspace (zeros past n); returns true in the
/// block that finished the row's last slice (its writes then see every slice's). Every thread calls.
WARPKIT_DEVICE bool topkFilterHandOff(const TopKLevel& lv, long long row, long long item, TopKFilterShared& s, int n) {
    const int t = (int)threadIdx.x;
    if (t < lv.k) lv.cout[item * lv.k + t] = t < n ? s.merge.keys[t] : 0ull;
    __threadfence();
    __syncthreads();
    if (t == 0) s.last = atomicAdd(&lv.done[row], 1u) == (unsigned)lv.slices - 1u;
    __syncthreads();
    const bool last = s.last != 0;
    if (last) __threadfence();
    return last;
}

/// The kernel of rules T1 / T2 (k <= kTopKFilterMaxK) under split S3: see the header comment.
template <typename T> __global__ void __launch_bounds__(kTopKThreads, kTopKFilterBlocksPerSm)
    topkFilterKernel(TopKRows<T> io, TopKLevel lv) {
    __shared__ TopKFilterShared s;
    const int k = lv.k;
    const bool largest = io.largest;
    const float sgn = largest ? 1.f : -1.f;
    TopKWarpBuffer& b = s.warp[threadIdx.x / 32];
    for (TopKItem it = topkFirstItem(lv); it.row < lv.rows; topkNextItem(lv, it)) {
        const long long row = it.row, item = row * lv.slices + it.slice;
        const long long end = it.slice * lv.seg + lv.seg < lv.len ? it.slice * lv.seg + lv.seg : lv.len;
        const long long lo = it.slice * lv.seg < end ? it.slice * lv.seg : end;
        TopKWarpState st = topkWarpStart(k);
        topkWarpFilter<T>(io.x + row * io.ldx + lo, (int)(end - lo), (unsigned)lo, k, largest, sgn, b, st);
        int n = topkBlockMerge<T>(s, st, k, largest, sgn);
        if (lv.slices > 1) {
            if (!topkFilterHandOff(lv, row, item, s, n)) continue;
            st = topkWarpStart(k);
            const unsigned long long* cand = lv.cout + row * lv.slices * k;
            topkWarpFilter<T>(cand, lv.slices * k, 0u, k, largest, sgn, b, st);
            n = topkBlockMerge<T>(s, st, k, largest, sgn);
        }
        topkFilterFinish(io, lv, row, s, n);
    }
}

} // namespace detail
} // namespace warpkit
