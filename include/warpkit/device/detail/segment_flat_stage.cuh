// warpkit/device/detail/segment_flat_stage.cuh: the flat pass's tile (plan rules G5 and G7): its
// constants and shared-memory layout, its span on the merge path, and stage 1's loads (a tile's
// segment ends, read a batch at a time into marks and slots, and its elements into shared memory,
// by cp.async or 16-byte loads). The pass is described in segment_flat.cuh, which folds what these
// load. Internal: include warpkit/device/segment.cuh.
#pragma once

#include "../../detail/async.cuh"
#include "../../thread/vector.cuh"
#include "segment_kernels.cuh"

namespace warpkit {
namespace detail {

constexpr int kFlatThreads = 128, kFlatItems = 32;   // 32 elements a thread: its fixed cost a tile over more
constexpr int kFlatTile = kFlatThreads * kFlatItems; // path items a tile: fixed, so the bits are too
constexpr int kFlatGroup = 256;                      // tiles a group (stage 2a): fixed too

/// Where shared-memory slot i of a tile's elements lives: a word of padding every 32, so the threads
/// of a warp, each at its own 32 elements, fall in different banks (unpadded: 32-way conflicts).
WARPKIT_HD constexpr int flatPad(int i) { return i + (i >> 5); }

/// The clipped offset c[j] (j in [0, segments]); CSR offsets only (end = begin + 1).
template <typename O> WARPKIT_DEVICE long long flatOffset(SegOffsets<O> o, long long j, long long items) {
    const long long v = (long long)o.begin[j];
    return v < 0 ? 0 : (v > items ? items : v);
}

/// Whether A's fold needs each element's row in its segment (ArgMax / ArgMin).
template <typename A> struct SegFlatRows { static constexpr bool value = false; };
template <typename T, typename V, typename Out, typename Op> struct SegFlatRows<SegReduceAlgo<T, V, Out, Op, true>> {
    static constexpr bool value = true;
};

/// Whether A's results go out through shared memory (State and Elem one type: a segment's result
/// takes its last element's slot once that is folded): then every result of a tile is written by
/// one coalesced pass, not by the thread that folds its end (at mean 1, 32 sectors a store).
template <typename A> struct SegFlatStaged {
    static constexpr bool value = IsSame<typename A::State, typename A::Elem>::value;
};

/// A staged tile's segAt[j] for segment s0 + j when it is empty (kFlatEmpty) or has nothing to write
/// from the tile (kFlatNone); otherwise its last element's slot (below kFlatTile).
constexpr unsigned short kFlatEmpty = 0xfffe, kFlatNone = 0xffff;

/// Where slot p of a tile's segment numbers (segAt) lives: a 16-bit slot of padding every 64, so
/// the threads of a warp, each at its own 32 elements, read different banks.
WARPKIT_HD constexpr int flatSegPad(int p) { return p + ((p >> 6) << 1); }

/// Offset v clipped to [lo, hi] (the clip range [0, items] narrowed to the tile's elements and one
/// more each side), relative to the tile's first element x0: exact for every offset of a tile in
/// order, whose ends lie in [x0, x0 + nX].
template <typename O> WARPKIT_DEVICE int flatRel(O v, long long lo, long long hi, long long x0) {
    const long long w = (long long)v;
    return (int)((w < lo ? lo : (w > hi ? hi : w)) - x0);
}

/// Whether a tile's elements go to shared memory by 4-byte cp.async, issued before its ends are
/// read, so they are in flight with the ends' loads and no register holds an element (sm_80 and
/// newer, 4-byte elements); otherwise by 16-byte loads after the ends.
template <typename T> WARPKIT_HD constexpr bool flatAsyncElems() {
#if WARPKIT_ARCH >= 800
    return sizeof(T) == 4;
#else
    return false;
#endif
}

/// Blocks of the tile kernel an SM holds at least (launch bounds): for 4-byte values 8 on sm_90 (64
/// registers; 25.3 KB of shared memory a block with the marks as bits, so 8 fit in 228 KB) and 7
/// before it (72 registers), 6 for 16-bit values and for ArgMax / ArgMin (80 registers: the rows).
/// Each holds a batch of 8 segment ends a thread (flatStage) and the next tile's first ends with no
/// spill on sm_75 to sm_90. The softmax (two-pass: its tile's 16 KB of factors beside the elements,
/// 37.5 KB a block for 4-byte values, so 6 fit) 6.
template <typename A> WARPKIT_HD constexpr int flatMinBlocks() {
#if WARPKIT_ARCH >= 900
    constexpr int kWide = 8;
#else
    constexpr int kWide = 7;
#endif
    if constexpr (A::kTwoPass) return 6;
    else return sizeof(typename A::Elem) == 4 && !SegFlatRows<A>::value ? kWide : 6;
}

/// The elements p[0 .. nX) to elems[flatPad(i)] by cp.async, element threadIdx.x + 128 m of a
/// thread (its slot flatPad(threadIdx.x) + 132 m: a warp's slots consecutive), in one group the
/// thread waits for (asyncCopyWait) before the block's next barrier makes them visible. Copies go
/// in groups of 8 with one branch a group: past nX a copy zero-fills its slot (below flatPad of
/// kFlatTile) and reads nothing. On sm_90 each branch target before a cp.async costs 3 issue slots
/// (ptxas pads it), so a branch a copy cost about 5 instructions a copy where this costs 1.
template <typename T> WARPKIT_DEVICE void flatCopyElems(const T* p, int nX, T* elems) {
    static_assert(kFlatThreads % 32 == 0, "flatCopyElems: whole warps, so flatPad is linear in m");
    constexpr int kGroup = 8;
    static_assert(kFlatItems % kGroup == 0, "flatCopyElems: whole groups of a thread's kFlatItems copies");
    T* at = elems + flatPad((int)threadIdx.x);
    const T* from = p + threadIdx.x;
    const int n = nX - (int)threadIdx.x;
#pragma unroll
    for (int g = 0; g < kFlatItems / kGroup; ++g) {
        if (g * kGroup * kFlatThreads >= n) break;
#pragma unroll
        for (int k = 0; k < kGroup; ++k) {
            const int m = g * kGroup + k;
            const bool take = m * kFlatThreads < n;
            asyncCopy4Fill(at + m * flatPad(kFlatThreads), take ? from + m * kFlatThreads : from, take);
        }
    }
    asyncCopyCommit();
}

/// The elements p[0 .. nX) to elems[flatPad(i)] through registers, 16-byte loads where the
/// alignment allows.
template <typename T> WARPKIT_DEVICE void flatLoadElems(const T* p, int nX, T* elems) {
    constexpr int V = vectorElems<T>();
    const VectorSplit sp = vectorSplit(p, nX);
    const int head = sp.head, body = (int)sp.vectors;
    if ((int)threadIdx.x < head) elems[flatPad((int)threadIdx.x)] = p[threadIdx.x]; // head, tail: below V
    // A thread's vectors lie 128 V elements apart, a multiple of 32: their slots are consecutive
    // for all of them (7 threads in 8; all when p is aligned) or straddle a pad for all of them.
    if (((head + (int)threadIdx.x * V) & 31) + V <= 32) {
#pragma unroll 4
        for (int j = (int)threadIdx.x; j < body; j += kFlatThreads) {
            const Vector16<T> v = loadVector(p + head + j * V);
            T* at = elems + flatPad(head + j * V);
#pragma unroll
            for (int k = 0; k < V; ++k) at[k] = v.e[k];
        }
    } else {
#pragma unroll 4
        for (int j = (int)threadIdx.x; j < body; j += kFlatThreads) {
            const Vector16<T> v = loadVector(p + head + j * V);
#pragma unroll
            for (int k = 0; k < V; ++k) elems[flatPad(head + j * V + k)] = v.e[k];
        }
    }
    const int tail = head + body * V + (int)threadIdx.x;
    if (tail < nX) elems[flatPad(tail)] = p[tail];
}

/// The path item where tile boundary t lies (t = tiles: the path's end).
WARPKIT_DEVICE long long flatDiagonal(long long t, long long path) {
    return t * kFlatTile < path ? t * kFlatTile : path;
}

/// A tile's span: its path items [d0, d1) hold s1 - s0 segment ends (*nS) and the elements *x0 ..
/// *x0 + *nX (both counts 0 when the splits are out of order). Returns whether they are in order.
WARPKIT_DEVICE bool flatSpan(long long e0, long long path, long long tile, long long s0, long long s1, long long* x0,
                             int* nS, int* nX) {
    const long long d0 = flatDiagonal(tile, path), d1 = flatDiagonal(tile + 1, path);
    const long long x1 = e0 + d1 - s1;
    *x0 = e0 + d0 - s0;
    const bool inOrder = s1 >= s0 && x1 >= *x0;
    *nS = inOrder ? (int)(s1 - s0) : 0;
    *nX = inOrder ? (int)(x1 - *x0) : 0;
    return inOrder;
}

/// What a tile needs first, loaded a tile ahead (flatAhead) so it arrives while the tile before is
/// folded: the offsets of its first kFlatAheadEnds kFlatThreads segment ends (as flatEndLoads loads
/// them: v[u] = ob[kFlatAheadEnds threadIdx.x + u]), and its head's clipped offsets c0 = c[s0],
/// c1 = c[s0 + 1] (x0 with no end).
constexpr int kFlatAheadEnds = 2;
template <typename O> struct FlatAhead {
    O v[kFlatAheadEnds + 1];
    long long c0, c1;
};

/// The offsets of a batch of K kFlatThreads segment ends of a tile with nS >= 1 ends from ob (its
/// first segment's begin): thread t takes ends base + K t + u (u < K), whose pairs are (v[u],
/// v[u + 1]) with v[u] = ob[base + K t + u] (u <= K; the index clipped to nS, a valid offset), so K
/// pairs cost K + 1 registers of offsets, not 2 K, and a batch of 1024 ends fits where 512 did.
/// Unconditional, so all K + 1 loads are in flight together (behind a branch each they went one
/// round trip a pair). A warp's loads span 32 K + 1 consecutive offsets (every sector they touch is
/// used).
template <int K, typename O> WARPKIT_DEVICE void flatEndLoads(const O* ob, int nS, int base, O (&v)[K + 1]) {
    const int j0 = base + K * (int)threadIdx.x;
#pragma unroll
    for (int u = 0; u <= K; ++u) v[u] = ob[j0 + u < nS ? j0 + u : nS];
}

/// The tile's marks: bit i % 32 of word i / 32 set when a segment ends at element i (thread t's 32
/// elements are word t). kFlatMarkBytes of shared memory: 512 for the reductions, which frees 3.5 KB
/// of a byte map (8 blocks an SM on sm_90); the softmax keeps kFlatTile bytes, whose first 1 KB
/// also holds its run table (segment_flat_softmax.cuh).
constexpr int kFlatMarkBytes = kFlatTile / 8;

/// When p: the bits `bit` or-ed into the shared word at CTA address `word` (marks of several
/// threads share a word). Predicated, no branch; the address is a 32-bit shared one, so the
/// compiler does not rebuild the generic window base at every end.
WARPKIT_DEVICE void flatMark(unsigned word, unsigned bit, bool p) {
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %2, 0;\n\t@q red.shared.or.b32 [%0], %1;\n\t}" ::"r"(word),
                 "r"(bit), "r"((unsigned)p)
                 : "memory");
}
/// When p: as flatMark, by an atomic that returns the word before it; returns whether this thread
/// set the bit (it was clear), so of the threads that mark one bit of a tile exactly one gets true
/// (not p: false). The one writer of a slot kept by the marked element (flatEnds).
WARPKIT_DEVICE bool flatMarkFirst(unsigned word, unsigned bit, bool p) {
    unsigned old = bit; // not p: as if already set
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %3, 0;\n\t@q atom.shared.or.b32 %0, [%1], %2;\n\t}"
                 : "+r"(old)
                 : "r"(word), "r"(bit), "r"((unsigned)p)
                 : "memory");
    return (old & bit) == 0u;
}
/// When p: the 16-bit v to the shared slot at CTA address `at` (predicated, as flatMark).
WARPKIT_DEVICE void flatStoreSlot(unsigned at, unsigned v, bool p) {
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %2, 0;\n\t@q st.shared.u16 [%0], %1;\n\t}" ::"r"(at),
                 "h"((unsigned short)v), "r"((unsigned)p)
                 : "memory");
}

/// Stage 1, part 1a: segments s0 + j, j = base + K threadIdx.x + u (u < K, and j < nS), their
/// offsets v[u], v[u + 1] from flatEndLoads, read as the clipped offsets relative to the tile,
/// (b, e) = (c[s0 + j], c[s0 + j + 1]) - x0, a thread its K segments: an empty one is written, one
/// whose last element e - 1 is in the tile gets its mark (atomicOr of bit e - 1: ends of several
/// threads share a word) and segAt[flatSegPad(e - 1)] = j (staged: segAt[j] = e - 1, kFlatEmpty for
/// an empty one, written then with the results in one coalesced pass, or kFlatNone for one with
/// nothing to write from the tile: the head, or an end at the tile's start). No barrier: returns ok
/// and whether this thread's pairs are in order (b <= e, each end inside the tile); flatOpen ANDs
/// that over the block. Every shared slot has one writer for any offsets: a staged slot is by j; a
/// slot by element is written only by the thread whose atomic set its mark (flatMarkFirst), as two
/// nonempty segments can share an end only where the offsets go back (in a tile that passes, the
/// clipped offsets rise over all its pairs, and each segment begins at the end before it). A tile
/// out of order is flagged, its marks cleared and nothing it staged is read, and stage 2 writes
/// every segment again after it; every index written stays inside its array.
template <int K, typename A, typename O>
WARPKIT_DEVICE bool flatEnds(const A& a, const O (&v)[K + 1], long long s0, int nS, int base, long long lo,
                             long long hi, long long x0, int nX, bool ok, unsigned char* marks, unsigned short* segAt) {
    const int j0 = base + K * (int)threadIdx.x;
    int r[K + 1];
#pragma unroll
    for (int u = 0; u <= K; ++u) r[u] = flatRel(v[u], lo, hi, x0);
    unsigned good = ok ? 1u : 0u; // b <= e, e in [0, nX] (unsigned: one compare); bit operations
#pragma unroll
    for (int u = 0; u < K; ++u)
        good &= (unsigned)((j0 + u >= nS) | ((r[u] <= r[u + 1]) & ((unsigned)r[u + 1] <= (unsigned)nX)));
    // every offset is used before any write: the K + 1 loads stay in flight together (left to
    // itself the compiler moves each load to its pair's writes, a round trip a pair)
    asm volatile("" : "+r"(good)::"memory");
    const unsigned words = smemAddr(marks), slots = SegFlatStaged<A>::value ? smemAddr(segAt) : 0u;
    constexpr bool byEnd = !SegFlatStaged<A>::value && !A::kTwoPass; // segAt by element (softmax: ranks)
#pragma unroll
    for (int u = 0; u < K; ++u) {
        const int j = j0 + u, b = r[u], e = r[u + 1];
        const bool in = j < nS, ends = in & (b < e) & ((unsigned)(e - 1) < (unsigned)nX);
        const unsigned word = words + 4u * (unsigned)((e - 1) >> 5), bit = 1u << ((e - 1) & 31);
        if constexpr (byEnd) { // the slot by its mark's first setter: one writer, whatever the offsets
            const bool first = flatMarkFirst(word, bit, ends);
            if (in && b == e) a.empty(s0 + j);
            if (first) segAt[flatSegPad(e - 1)] = (unsigned short)j;
        } else {
            flatMark(word, bit, ends);
            if constexpr (SegFlatStaged<A>::value) {
                const unsigned at = b == e ? kFlatEmpty : ends && b >= 0 ? e - 1 : kFlatNone;
                flatStoreSlot(slots + 2u * (unsigned)j, at, in);
            } else if (in && b == e) {
                a.empty(s0 + j);
            }
        }
    }
    return good != 0u;
}

/// Stage 1, part 1: the tile's nS segment ends (flatEnds: the first kFlatAheadEnds a thread loaded
/// ahead in ah, then batches of 8 a thread while more than 256 are left, else 2, so longer segments
/// load few spare offsets) and its elements x0 .. x0 + nX, which go to elems[flatPad(i)]: with
/// flatAsyncElems by cp.async issued before the ends and waited for after them; otherwise by
/// flatLoadElems after the ends. They are in shared memory for the block after its next barrier.
/// Returns whether the offsets are in order (b <= e, and each end inside the tile).
template <typename A, typename O> WARPKIT_DEVICE bool flatStage(const A& a, SegOffsets<O> o, long long items,
                                                                long long s0, int nS, long long x0, int nX,
                                                                const FlatAhead<O>& ah, unsigned char* marks,
                                                                unsigned short* segAt, typename A::Elem* elems) {
    using T = typename A::Elem;
    constexpr int kBatch = 8; // ends a thread: their 9 offsets fit flatMinBlocks' registers
    if constexpr (flatAsyncElems<T>()) flatCopyElems(segStageSource(a) + x0, nX, elems);
    const long long lo = x0 > 0 ? x0 - 1 : 0, hi = x0 + nX + 1 < items ? x0 + nX + 1 : items;
    const O* ob = o.begin + s0;
    if constexpr (A::kTwoPass) __syncthreads(); // the softmax's run table (in the marks) cleared first
    bool ok = nS == 0 || flatEnds<kFlatAheadEnds>(a, ah.v, s0, nS, 0, lo, hi, x0, nX, true, marks, segAt);
#pragma unroll 1
    for (int base = kFlatAheadEnds * kFlatThreads; ok && base < nS;) { // no barrier inside: ok is per thread
        if (nS - base > 2 * kFlatThreads) {
            O v[kBatch + 1];
            flatEndLoads<kBatch>(ob, nS, base, v);
            ok = flatEnds<kBatch>(a, v, s0, nS, base, lo, hi, x0, nX, ok, marks, segAt);
            base += kBatch * kFlatThreads;
        } else {
            O v[3];
            flatEndLoads<2>(ob, nS, base, v);
            ok = flatEnds<2>(a, v, s0, nS, base, lo, hi, x0, nX, ok, marks, segAt);
            base += 2 * kFlatThreads;
        }
    }
    if constexpr (flatAsyncElems<T>()) asyncCopyWait(0);
    else flatLoadElems(segStageSource(a) + x0, nX, elems);
    return ok;
}

/// This thread's 32 marks (elements 32 threadIdx.x .. + 31) as bits 0 .. 31, then cleared for the
/// next tile.
WARPKIT_DEVICE unsigned flatTakeMarks(unsigned char* marks) {
    static_assert(kFlatItems == 32, "flatTakeMarks: a run of 32 marks");
    unsigned* const at = reinterpret_cast<unsigned*>(marks) + threadIdx.x;
    const unsigned bits = *at;
    *at = 0u;
    return bits;
}

} // namespace detail
} // namespace warpkit
