// warpkit/device/detail/segment_slice.cuh: the softmax's slice tier behind device/segment.cuh: a
// segment past kSegBlockMaxElems elements (rows x heads) with 1, 2, 4, 8 or 16 heads, cut into
// slices that many blocks take at once, so every SM works even on one giant segment. Internal:
// include warpkit/device/segment.cuh.
//
// The segment's run of n elements is read in the block tier's windows (segment_block.cuh: 256
// threads x 32 elements, vectors cut by the run's address modulo 16 bytes, so thread t's slot k
// holds head (t V + k - m) mod heads in every window); window k is slice k, S windows in all, in
// groups of G (the plan's sliceGroup) slices. The group kernel lists the segment once (entry stride
// -1, chunkBase its first slot) with room for S + ceil(S / G) + 1 slots of `heads` states each
// (segSliceSlots): slot k for slice k, slot S + g for group g, the last for the totals; and a count
// a group. Each of the list's H slots (all segments') is two work items, taken in turn by the block
// kernel's blocks as tickets 0 .. 2 H - 1 (counter[5]):
//   A (ticket t < H, slot t, window k = t - first slot when k < S): window k's per-head max and sum
//     of exp (segBlockWindow) into slot k; the last slice of a group to finish (the group's count)
//     merges the group's slots in a fixed tree into its group slot; the last group to finish (a
//     count in the entry) merges the group slots the same way into the totals, then marks the
//     entry ready (count groups + 1);
//   B (ticket t >= H, slot 2 H - 1 - t, window k as for A): loads its window, waits until the entry
//     is ready, writes softmaxApply of each element (each element read and written by the same
//     thread: in place works).
// So every segment's A items come before any segment's B item, and the B items run backwards: the
// last segment listed first, each segment's windows last to first (the windows read last, likeliest
// still in L2, first). Tickets of a group or totals slot do nothing. x is read twice and y written
// once, by 16-byte loads of all heads at once.
//
// No waits in a chain. Only a B item waits, and only on the A items of its own segment. A block
// holds its current ticket and up to two taken ahead (higher ones), so an A item can sit behind
// another ticket of the block that took it: since all A tickets precede all B tickets, that one is
// an A item too, which never waits. So no A item waits, and each segment is ready a few windows and
// its two merges after its last A ticket is taken, whatever the other segments do (were a segment's
// B items listed right after its own A items, the next segment's A items could sit behind them: a
// wait for the totals a segment, one after another).
// No deadlock: the lowest unfinished ticket is some block's current one (a block takes a ticket only
// while it runs, and runs its tickets in increasing order), and all it can wait on are A tickets
// below it, all finished; so it finishes, whatever the number of blocks resident.
//
// Bits. Each window's states are the block tier's; groups and totals merge in trees fixed by S, G
// and heads (segSliceMerge). So the result depends only on the segment's values, length, heads, x's
// address modulo 16 bytes and G, never on the grid, the order the items are taken, or y.
#pragma once

#include "segment_kernels.cuh"

namespace warpkit {
namespace detail {

/// A slice-tier segment's geometry: its run (segment_block.cuh), n elements, S slices (windows), lg
/// = log2 of the group size, its groups and its first slot.
template <typename T> struct SegSliceGeom {
    SegBlockRun<T> g;
    long long n, slices, groups, base;
    int lg;
};

/// The geometry of the slice-tier entry en (begin, rows, chunkBase = first slot); lg = log2(group).
template <typename T, int Kind>
WARPKIT_DEVICE SegSliceGeom<T> segSliceGeom(const SegSoftmaxAlgo<T, Kind>& a, const SegEntry& en, int heads, int lg) {
    constexpr int V = vectorElems<T>();
    const T* xs = a.x + en.begin * heads;
    T* ys = a.y + en.begin * heads;
    const int m = (int)(((size_t)xs / sizeof(T)) & (V - 1));
    SegSliceGeom<T> s;
    s.g = SegBlockRun<T>{xs - m, ys - m, (((size_t)ys / sizeof(T)) & (V - 1)) == (size_t)m, m, 0};
    s.n = en.rows * heads;
    s.slices = (s.n + m + kSegWindowElems - 1) / kSegWindowElems;
    s.groups = (s.slices + (1ll << lg) - 1) >> lg;
    s.base = en.chunkBase;
    s.lg = lg;
    return s;
}

/// Window w of the segment as a run of its own (segBlockLoad / segBlockStore from vector 0): the
/// first keeps the segment's misalignment m, the others start on a 16-byte boundary; n is clipped
/// to the window, so element offsets stay 32-bit however long the segment.
template <typename T> WARPKIT_DEVICE SegBlockRun<T> segSliceWindow(const SegSliceGeom<T>& s, long long w) {
    const long long at = w * kSegWindowElems, left = s.n + s.g.m - at; // elements from the window's first vector
    SegBlockRun<T> r = s.g;
    r.xa += at;
    r.ya += at;
    r.m = w == 0 ? s.g.m : 0;
    r.n = (int)((left < kSegWindowElems ? left : kSegWindowElems) - r.m);
    return r;
}

/// Starts window w toward L2 (a 128-byte line a thread, only lines that begin inside the run). Every
/// thread calls.
template <typename T> WARPKIT_DEVICE void segSlicePrefetch(const SegSliceGeom<T>& s, long long w) {
    const long long at = w * kSegWindowElems + (long long)threadIdx.x * (128 / (long long)sizeof(T));
    if (w >= 0 && threadIdx.x * 128 < kSegWindowElems * sizeof(T) && at < s.n + s.g.m) prefetchL2(s.g.xa + at);
}

/// The head of this thread's slot k (heads a power of two).
template <int V> WARPKIT_DEVICE int segSliceHead(int k, int m, int heads) {
    return ((int)threadIdx.x * V + k - m) & (heads - 1);
}

/// Slots from .. from + count - 1 (each `heads` states) merged head by head into slot `to`, in a tree
/// fixed by count and heads: the BT / heads threads of a head fold consecutive runs of slots in order,
/// then an ordered scan over those threads (warpSegmentedReduce), then the warps in order. Every
/// thread calls.
template <int BT>
WARPKIT_DEVICE void segSliceMerge(SoftmaxState* states, long long from, long long count, long long to, int heads) {
    __shared__ SoftmaxState warps[BT / 32];
    const int L = BT / heads, h = (int)threadIdx.x / L, j = (int)threadIdx.x % L, lane = (int)laneId();
    const long long per = (count + L - 1) / L, k0 = j * per, k1 = k0 + per < count ? k0 + per : count;
    const SoftmaxState* p = states + from * heads + h;
    SoftmaxState acc = softmaxStateEmpty();
    constexpr int kBatch = 4;
#pragma unroll 1
    for (long long k = k0; k < k1; k += kBatch) { // in order, kBatch loads in flight
        SoftmaxState r[kBatch];
#pragma unroll
        for (int i = 0; i < kBatch; ++i)
            if (k + i < k1) r[i] = loadFromL2(p + (k + i) * heads);
#pragma unroll
        for (int i = 0; i < kBatch; ++i)
            if (k + i < k1) acc = softmaxStateMerge(acc, r[i]);
    }
    const int w = L < 32 ? L : 32, first = lane & ~(w - 1);
    acc = warpSegmentedReduce(acc, SoftmaxStateMerge{}, WarpSegment{first, first + w - 1});
    SoftmaxState* out = states + to * heads + h;
    if (L <= 32) {
        if (j == 0) *out = acc;
        return;
    }
    if (lane == 0) warps[threadIdx.x / 32] = acc;
    __syncthreads();
    if (j == 0) {
        SoftmaxState t = warps[threadIdx.x / 32];
        for (int i = 1; i < L / 32; ++i) t = softmaxStateMerge(t, warps[threadIdx.x / 32 + i]);
        *out = t;
    }
    __syncthreads(); // warps[] is written again by the next merge
}

/// After this block stored slice k's states (each storing thread then fenced): the last slice of the
/// group to finish merges the group, the last group the totals, which it then marks ready. Every
/// thread calls.
template <int BT> WARPKIT_DEVICE void segSliceFinish(const SegList<SoftmaxState>& list, int e, long long base,
                                                     long long slices, long long groups, int lg, long long k,
                                                     int heads) {
    __shared__ bool last;
    const long long g = k >> lg, g0 = g << lg, g1 = g0 + (1ll << lg) < slices ? g0 + (1ll << lg) : slices;
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(list.sliceCount + base + g, 1) == (int)(g1 - g0 - 1);
    __syncthreads();
    if (!last) return;
    __threadfence();
    segSliceMerge<BT>(list.sliceStates, base + g0, g1 - g0, base + slices + g, heads);
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(&list.entries[e].done, 1u) == (unsigned)(groups - 1);
    __syncthreads();
    if (!last) return;
    __threadfence();
    segSliceMerge<BT>(list.sliceStates, base + slices, groups, base + slices + groups, heads);
    __threadfence(); // the totals are visible before the count that says so
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(&list.entries[e].done, 1u); // groups + 1: ready
}

/// The work item of slot k of the slice-tier segment s, entry e: for k < S window k's A item
/// (write false) or B item (write true), for the group and totals slots nothing; ahead() runs once
/// the item's loads are issued. Every thread calls.
template <int BT, typename T, int Kind, typename F>
WARPKIT_DEVICE void segSliceItem(const SegSoftmaxAlgo<T, Kind>& a, const SegList<SoftmaxState>& list, int e,
                                 const SegSliceGeom<T>& s, long long k, bool write, int heads,
                                 float (&red)[2][BT / 32][4][8], F ahead) {
    constexpr int V = vectorElems<T>(), R = 32 / V;
    constexpr bool kPrecise = sizeof(T) == 4;
    if (k >= s.slices) {
        ahead();
        return;
    }
    const int Hs = heads < V ? heads : V, P = heads > V ? heads / V : 1;
    const SegBlockRun<T> g = segSliceWindow(s, k);
    float v[R][V];
    segBlockLoad<BT>(v, g, 0);
    ahead();
    if (!write) { // A: the window's states into slot k
        float mx[V], sm[V];
        segBlockWindow<BT, false, kPrecise>(v, mx, sm, Hs, P, red);
        if ((int)threadIdx.x < P) {
#pragma unroll
            for (int i = 0; i < V; ++i)
                if (i < Hs)
                    list.sliceStates[(s.base + k) * heads + segSliceHead<V>(i, s.g.m, heads)] =
                        SoftmaxState{mx[i], sm[i]};
            __threadfence(); // the states are visible before the count that announces them
        }
        segSliceFinish<BT>(list, e, s.base, s.slices, s.groups, s.lg, k, heads);
        return;
    }
    // B: the window's outputs, once the totals are ready (the loads above already in flight)
    if (threadIdx.x == 0) {
        const volatile unsigned* done = &list.entries[e].done;
        while (*done < (unsigned)(s.groups + 1)) __nanosleep(128);
        __threadfence();
    }
    __syncthreads();
    const SoftmaxState* totals = list.sliceStates + (s.base + s.slices + s.groups) * heads;
    SoftmaxFactors f[V];
#pragma unroll
    for (int i = 0; i < V; ++i) f[i] = softmaxFactors<Kind>(loadFromL2(totals + segSliceHead<V>(i, s.g.m, heads)));
    segBlockStore<BT>(v, g, 0, [&](float x, int i) { return softmaxApply<Kind, kPrecise>(f[i], x); });
}

/// Slice ticket t of the list's `slots` slots (2 slots tickets): t < slots the A item of slot t, else
/// the B item of slot 2 slots - 1 - t (header comment); its owner entry e (-1 past the tickets or for
/// a slot with no segment), its slot k within the segment (a window when k < S) and the entry's
/// begin, rows and first slot (not its count, which other blocks change). Whether it writes (t >= slots)
/// is left to the caller, which holds t: kept here, the flag spilled on sm_80 across the item.
struct SegSliceRef {
    int e;
    long long k;
    SegEntry en;
};
template <typename S> WARPKIT_DEVICE SegSliceRef segSliceRef(const SegList<S>& l, long long t, long long slots) {
    const bool write = t >= slots;
    const long long slot = write ? 2 * slots - 1 - t : t;
    SegSliceRef r{t < 2 * slots ? l.sliceOwner[slot] : -1, 0, SegEntry{}};
    if (r.e >= 0) {
        r.en.begin = l.entries[r.e].begin;
        r.en.rows = l.entries[r.e].rows;
        r.en.chunkBase = l.entries[r.e].chunkBase;
        r.k = slot - r.en.chunkBase;
    }
    return r;
}

} // namespace detail
} // namespace warpkit
