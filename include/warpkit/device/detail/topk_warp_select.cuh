// warpkit/device/detail/topk_warp_select.cuh: the kernel of rules W2-W4 (short rows, k <= 32), G lanes
// a row, 32 / G rows a warp. Internal: include warpkit/device/topk.cuh.
//
// The bounded select (2 <= k and ceil(k / 2) <= G; topkBoundSelect), per group of G lanes:
//   1. bound: each lane reads its share of the row (16-byte vectors g, g + G, ... of the aligned
//      body, coalesced, 16 elements in flight; then the scalar head and tail; topkLaneVisit) and keeps
//      the two largest 32-bit order keys it saw (topkOrderKey, inverted for the smallest). B1, the
//      k-th largest of the G lanes' largest keys (k <= G), has k elements at or above it; B2, the
//      ceil(k / 2)-th largest of their second keys, has ceil(k / 2) lanes of two such elements. So
//      every element of the row's top k has a key >= B = max(B1, B2) (topkGroupKth: a bitonic sort
//      of one key a lane over the group);
//   2. gather: the lanes read their shares again (from L1 or L2) and append the packed keys
//      (topkPack) of the elements at or above B to the row's slots in shared memory (a shared
//      counter a row: the slots' order does not matter, the set does);
//   3. rank: a kept key's rank is the number of kept keys above it (the packed keys are distinct),
//      each lane of the group counting for keys g, g + G, ...; ranks below k are written at once
//      (or the row masked at the rank k-1 key). Random rows keep about 12 keys at 128 columns and
//      k = 8 (docs/tuning.md, W2-W4).
// When a row of the warp keeps more than its slots hold (topkBoundCap: 32 to 128 keys; ties at B:
// constant rows, few distinct values), the warp takes the list select for all its rows. Both give the
// same bits: the k largest of distinct packed keys.
//
// The list select (k = 1, k > 2 G, and the bounded select's overflow):
//   1. select (topkLaneSelect): each lane keeps its KL = nextpow2(k) largest packed keys of its
//      share sorted in registers: a key enters only when it beats the lane's KL-th (one 64-bit
//      compare an element once the list has filled). KL = 1: a running max;
//   2. merge (topkGroupMerge): log2(G) butterfly rounds; in round d a lane takes the elementwise max
//      of its list and lane l ^ d's list reversed (a bitonic sequence holding the KL best of both)
//      and sorts it by log2(KL) in-register merge stages. Every lane of the group ends with the
//      row's KL best keys, descending (packed keys are unique: one answer, ties to the lowest index);
//   3. finish: ranks 0 .. k-1 written (rank j by lane j mod G), or the row masked at the rank k-1 key.
#pragma once

#include "topk_kernels.cuh"

namespace warpkit {
namespace detail {

/// Calls f(value, column, valid) for each element lane g of the G lanes of a row holds: its 16-byte
/// vectors g, g + G, ... of the row's aligned body (16 elements in flight; slots past the body come
/// with valid false), then the scalar head and tail elements g, g + G, .... Any lane, alone.
template <int G, typename T, typename F> WARPKIT_DEVICE void topkLaneVisit(const T* x, int cols, int g, F&& f) {
    constexpr int V = vectorElems<T>(), U = 16 / V; // elements a vector; vectors in flight a lane (16 elements)
    const VectorSplit sp = vectorSplit(x, cols);
    const int nv = (int)sp.vectors;
    const T* body = x + sp.head;
    for (int i = g; i < nv; i += U * G) {
        Vector16<T> v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = i + u * G < nv ? loadVector(body + (i + u * G) * V) : Vector16<T>{};
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
            for (int e = 0; e < V; ++e) f(v[u].e[e], sp.head + (i + u * G) * V + e, i + u * G < nv);
    }
    for (int e = g; e < sp.head + sp.tail; e += G) {
        const int c = extraIndex<int>(sp, e, V);
        f(loadScalar(x + c), c, true);
    }
}

/// Inserts key into a lane's list best[0 .. KL) (descending: the lane's KL largest keys so far) when
/// it beats best[KL - 1]. Compile-time indices only (a runtime index would put best[] in local memory).
/// Any thread, alone.
template <int KL> WARPKIT_DEVICE void topkLaneInsert(unsigned long long (&best)[KL], unsigned long long key) {
    if constexpr (KL == 1) {
        best[0] = key > best[0] ? key : best[0];
    } else if (key > best[KL - 1]) {
        staticFor<0, KL - 1>([&](auto ic) {
            constexpr int i = KL - 1 - decltype(ic)::value; // KL-1 down to 1: best[i - 1] is still the old key
            best[i] = key > best[i - 1] ? best[i - 1] : (key > best[i] ? key : best[i]);
        });
        best[0] = key > best[0] ? key : best[0];
    }
}

/// Stage 1 of the list select: lane g of the G lanes of `row` keeps its KL best packed keys of the
/// row in best[] (descending; kTopKEmpty where it saw fewer). Any lane, alone.
template <int G, int KL, typename T> WARPKIT_DEVICE void topkLaneSelect(const TopKRows<T>& io, long long row, int cols,
                                                                        int g, unsigned long long (&best)[KL]) {
    topkLaneVisit<G>(io.x + row * io.ldx, cols, g, [&](T v, int c, bool valid) {
        topkLaneInsert(best, valid ? topkPack(v, (unsigned)c, io.largest) : kTopKEmpty);
    });
}

/// Stage 2 of the list select: the lists of each aligned group of G lanes merged, so that every lane
/// of the group holds the group's KL best keys, descending. All 32 lanes call (converged).
template <int G, int KL> WARPKIT_DEVICE void topkGroupMerge(unsigned long long (&best)[KL]) {
    unsigned char none[KL];
    const unsigned lane = laneId();
#pragma unroll
    for (int d = 1; d < G; d *= 2) {
        // the max of the list and the partner's reversed: the KL best of both, a bitonic sequence
        staticFor<0, (KL + 1) / 2>([&](auto jc) {
            constexpr int j = decltype(jc)::value, r = KL - 1 - j;
            const unsigned long long fromR = shflXor(best[r], d);
            if constexpr (j != r) {
                const unsigned long long fromJ = shflXor(best[j], d);
                best[r] = fromJ > best[r] ? fromJ : best[r];
            }
            best[j] = fromR > best[j] ? fromR : best[j];
        });
        // sorted by the in-register stages of warp/sort.cuh's network (runs of 64 KL: all in order)
        staticFor<0, 5>([&](auto sc) {
            constexpr int stride = (KL / 2) >> decltype(sc)::value;
            if constexpr (stride >= 1) bitonicStage<KL, true, false, 64 * KL, stride>(best, none, lane);
        });
    }
}

/// Kept keys a row of the bounded select holds: random rows keep about 12 (8 lanes, k <= 8), 31 (8
/// lanes, k = 16) and 52 (32 lanes, k = 32) keys; see docs/tuning.md, W2-W4.
__host__ __device__ constexpr int topkBoundCap(int G, int KL) {
    return G == 8 ? (KL <= 8 ? 32 : 64) : (KL <= 16 ? 64 : 128);
}

/// The bounded select's shared memory, one a warp: the kept keys of each of its R rows (a row's slots
/// padded by one key, so that the groups' reads of their rows fall in different banks), their counts
/// and the rank k-1 key of each row (rowTopKMask).
template <int R, int Cap> struct TopKBoundSlots {
    unsigned long long keys[R][Cap + 1];
    unsigned long long kth[R];
    int count[R];
};

/// The p-th largest (p < G) of the keys v of the lanes of each aligned group of G lanes, in every
/// lane of the group: a bitonic sort of one key a lane, descending. All 32 lanes call (converged).
template <int G> WARPKIT_DEVICE unsigned topkGroupKth(unsigned v, int p) {
    const unsigned lane = laneId();
#pragma unroll
    for (int size = 2; size <= G; size *= 2)
#pragma unroll
        for (int d = size / 2; d > 0; d /= 2) {
            const unsigned o = shflXor(v, d);
            const bool desc = size == G || (lane & (unsigned)size) == 0u; // the last merge: the whole group
            const bool low = (lane & (unsigned)d) == 0u;
            v = low == desc ? (o > v ? o : v) : (o < v ? o : v);
        }
    return shflIdx(v, (int)(lane & ~(unsigned)(G - 1)) + p);
}

/// The bounded select of `row` (see the header comment) by its G lanes, lane g of them; live: row <
/// rows (other lanes take part with no elements). Returns false, with nothing written, when a row of
/// the warp keeps more keys than its slots hold (the same answer in every lane: the caller then takes
/// the list select). All 32 lanes call (converged).
template <int G, int Cap, typename T> WARPKIT_DEVICE bool topkBoundSelect(const TopKRows<T>& io, long long row,
                                                                          bool live, int cols, int k, int g,
                                                                          TopKBoundSlots<32 / G, Cap>& s) {
    const int slot = (int)laneId() / G;
    const T* x = io.x + (live ? row : 0) * io.ldx;
    const bool largest = io.largest;
    // 1. bound: the lane's two largest keys (0 where it holds fewer elements: B is then 0 or lower)
    unsigned first = 0u, second = 0u;
    if (live)
        topkLaneVisit<G>(x, cols, g, [&](T v, int, bool valid) {
            const unsigned key = valid ? topkRankKey(v, largest) : 0u;
            const unsigned lower = key < first ? key : first;
            second = lower > second ? lower : second;
            first = key > first ? key : first;
        });
    const unsigned b1 = k <= G ? topkGroupKth<G>(first, k - 1) : 0u, b2 = topkGroupKth<G>(second, (k + 1) / 2 - 1);
    const unsigned bound = b1 > b2 ? b1 : b2;
    __syncwarp(); // the last item's slots and counts are read before they are reset
    if (g == 0) s.count[slot] = 0;
    __syncwarp();
    // 2. gather the packed keys of the elements at or above the bound
    if (live)
        topkLaneVisit<G>(x, cols, g, [&](T v, int c, bool valid) {
            const unsigned key = topkRankKey(v, largest);
            if (valid && key >= bound) {
                const int at = atomicAdd(&s.count[slot], 1);
                if (at < Cap) s.keys[slot][at] = topkPackRankKey(key, (unsigned)c);
            }
        });
    __syncwarp();
    const int n = s.count[slot];
    if (__any_sync(WARPKIT_FULL_MASK, n > Cap)) return false;
    // 3. rank by counting: lane g takes kept keys g, g + G, ..., PC at a time, and counts over one
    //    sweep of the row's kept keys those above each; ranks below k written. Random rows need one
    //    sweep (n <= PC G); a warp sweeps again only while some row has keys left
    constexpr int P = Cap / G, PC = P < 4 ? P : 4;
    for (int q0 = 0; q0 < P; q0 += PC) {
        if (!__any_sync(WARPKIT_FULL_MASK, q0 * G < n)) break;
        unsigned long long mine[PC];
        int rank[PC];
#pragma unroll
        for (int q = 0; q < PC; ++q) {
            const int i = g + (q0 + q) * G;
            mine[q] = i < n ? s.keys[slot][i] : ~0ull; // ~0: above every kept key (not written below)
            rank[q] = 0;
        }
#pragma unroll 4
        for (int j = 0; j < n; ++j) {
            const unsigned long long other = s.keys[slot][j];
#pragma unroll
            for (int q = 0; q < PC; ++q) rank[q] += other > mine[q] ? 1 : 0;
        }
#pragma unroll
        for (int q = 0; q < PC; ++q) {
            if (g + (q0 + q) * G >= n || rank[q] >= k) continue;
            if (!io.masked) topkWriteOutput(io, k, row, rank[q], mine[q]);
            else if (rank[q] == k - 1) s.kth[slot] = mine[q];
        }
    }
    if (io.masked) {
        __syncwarp(); // the rank k-1 key is written before it is read
        if (live) topkMaskColumns(io, cols, row, s.kth[slot], g, G);
    }
    return true;
}

/// Blocks an SM the warp select is built for: registers for KL keys a lane (2 KL) and 4 vectors in flight.
constexpr int topkSelectBlocksPerSm(int KL) { return KL <= 8 ? 4 : (KL == 16 ? 3 : 2); }

/// The kernel of rules W2-W4 (k <= KL <= 32, G lanes a row): see the header comment.
template <typename T, int KL, int G> __global__ void __launch_bounds__(kTopKWarpRows * 32, topkSelectBlocksPerSm(KL))
    topkWarpSelectKernel(TopKRows<T> io, long long rows, int cols, int k) {
    constexpr int R = 32 / G; // rows a warp
    constexpr int Cap = topkBoundCap(G, KL);
    __shared__ TopKBoundSlots<R, Cap> slots[kTopKWarpRows];
    const unsigned lane = laneId();
    const int g = (int)(lane % G);
    // the bounded select takes k <= 2 G; KL = nextpow2(k) < 2 k, so KL >= 4 G never does
    const bool bounded = KL >= 2 && KL < 4 * G && (k + 1) / 2 <= G;
    const long long step = (long long)gridDim.x * kTopKWarpRows * R;
    for (long long first = ((long long)blockIdx.x * kTopKWarpRows + threadIdx.x / 32) * R; first < rows;
         first += step) {
        const long long row = first + lane / G;
        if (bounded && topkBoundSelect<G, Cap>(io, row, row < rows, cols, k, g, slots[threadIdx.x / 32])) continue;
        unsigned long long best[KL];
#pragma unroll
        for (int j = 0; j < KL; ++j) best[j] = kTopKEmpty;
        if (row < rows) topkLaneSelect<G>(io, row, cols, g, best);
        topkGroupMerge<G>(best);
        if (row >= rows) continue;
        if (io.masked) {
            unsigned long long kth = 0; // best[k - 1], picked with compile-time indices
            staticFor<0, KL>([&](auto jc) {
                if (decltype(jc)::value == k - 1) kth = best[decltype(jc)::value];
            });
            topkMaskColumns(io, cols, row, kth, g, G);
            continue;
        }
        staticFor<0, KL>([&](auto jc) {
            constexpr int j = decltype(jc)::value;
            if (j < k && j % G == g) topkWriteOutput(io, k, row, j, best[j]);
        });
    }
}

} // namespace detail
} // namespace warpkit
