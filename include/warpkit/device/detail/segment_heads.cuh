// warpkit/device/detail/segment_heads.cuh: the softmax's stage 1 for 2, 4 or 8 heads (plan rule
// G8), in place of the group kernel (segment_kernels.cuh) when x is aligned to a row's vector
// access (y at any alignment: its rows are then stored element by element). Internal: include
// warpkit/device/segment.cuh.
//
// The group kernel takes (segment, head) pairs: a pair's rows are heads elements apart, so a lane
// loads 4 or 2 bytes of every 16 or more, and a step of 32 pairs holds 32 / heads segments. This
// kernel takes segments: a warp step is 32 segments (lane l loads segment g + l's offsets), and a
// row (its H heads, H * sizeof(T) bytes: 8 to 64) is one to four vector loads of up to 16 bytes.
//   * A segment of r <= 32 * R rows (R = rows a lane holds: 8 for H <= 4, 4 for H = 8, so that a
//     lane holds at most 32 values) takes a lane group of G
//     lanes, G the smallest power of two with G * R >= r; the groups of one width run together (the tiers, 32 / G
//     segments a round, as the group kernel's). Lane j of a group loads rows j, j + G, ... into registers (every load
//     before any use), then for each head: the max (an xor butterfly over the G lanes, max.NaN), the sum of exp(x -
//     max) (max taken as 0 for an all -inf head; plain kinds keep the exps), a butterfly of sums, softmaxFactors, and
//     the stores, one row a vector store.
//   * A segment of 32 * R < r <= longRows rows takes the whole warp by windows of 32 * R rows:
//     each window's per-head max and sum as above, merged into the head's state in window order;
//     then a second read writes (softmaxApply).
//   * Longer segments are listed for the block and slice tiers exactly as the group kernel lists
//     them (segBlockAppend, by the segment's head-0 pair); one that finds no room (only segments
//     that overlap) lists its H pairs for the chunk kernels (listAppend), and the pair steps of
//     those without room go to list.noRoom, one entry a 32-pair step (its first pair, its lanes' masks
//     OR-ed).
// Bits: each butterfly combines lanes with a commutative operator, so a group's lanes end with the
// same bits and the tree depends only on G (a function of the length); the sum over a lane's rows
// runs in row order; the windows merge in order. The result depends only on the segment's values
// and length. In place (y == x) works: every element is read before it is written, by the lane that
// writes it (the wide path's second read is its own lane's rows).
#pragma once

#include "segment_kernels.cuh"

namespace warpkit {
namespace detail {

/// Rows of a segment a lane holds in registers for H heads: at most 32 values and 8 rows. (16 heads
/// stay on G3: one row a lane measured slower than its pairs, tuning.md G8.)
template <int H> WARPKIT_HD constexpr int segHeadsRows() { return H >= 8 ? 4 : 8; }

/// The vector type of `Bytes` bytes (4, 8 or 16).
template <int Bytes> struct SegHeadsChunk { using type = unsigned; };
template <> struct SegHeadsChunk<8> { using type = uint2; };
template <> struct SegHeadsChunk<16> { using type = uint4; };

/// The vector access of one row of H values of T: its chunk type and count (chunks of up to 16 bytes).
template <typename T, int H> struct SegHeadsRow {
    static constexpr int bytes = H * (int)sizeof(T);
    static constexpr int chunk = bytes >= 16 ? 16 : bytes;
    static constexpr int chunks = bytes / chunk;
    using C = typename SegHeadsChunk<chunk>::type;
};

/// Whether the heads kernel runs a softmax of T with `heads` heads: 2, 4 or 8 heads of 2- or
/// 4-byte values, x aligned to a row's chunk (SegHeadsRow). y's alignment does not enter, so that
/// the kernel, and with it the result's bits, never depends on where the output lies. Host.
template <typename T> inline bool segHeadsAligned(const T* x, int heads) {
    const size_t chunk = heads * sizeof(T) >= 16 ? 16 : heads * sizeof(T);
    return (heads == 2 || heads == 4 || heads == 8) && (sizeof(T) == 2 || sizeof(T) == 4) && ((size_t)x % chunk) == 0;
}

/// Row p's H values as floats (p aligned to the row's chunk).
template <typename T, int H> WARPKIT_DEVICE void segHeadsLoad(const T* p, float* v) {
    using R = SegHeadsRow<T, H>;
    typename R::C c[R::chunks];
#pragma unroll
    for (int i = 0; i < R::chunks; ++i) c[i] = reinterpret_cast<const typename R::C*>(p)[i];
    const T* t = reinterpret_cast<const T*>(c);
#pragma unroll
    for (int h = 0; h < H; ++h) v[h] = Arith<T>::to_acc(t[h]);
}

/// Stores H floats as row p's values: a vector store a chunk where p is aligned to the row's chunk,
/// else element by element (every row of y has the same alignment, so the branch is uniform), the
/// same values either way.
template <typename T, int H> WARPKIT_DEVICE void segHeadsStore(T* p, const float* v) {
    using R = SegHeadsRow<T, H>;
    if ((reinterpret_cast<size_t>(p) & (size_t)(R::chunk - 1)) != 0) {
#pragma unroll
        for (int h = 0; h < H; ++h) p[h] = Arith<T>::from_acc(v[h]);
        return;
    }
    typename R::C c[R::chunks];
    T* t = reinterpret_cast<T*>(c);
#pragma unroll
    for (int h = 0; h < H; ++h) t[h] = Arith<T>::from_acc(v[h]);
#pragma unroll
    for (int i = 0; i < R::chunks; ++i) reinterpret_cast<typename R::C*>(p)[i] = c[i];
}

/// segGroupAll (segment_softmax.cuh) of each of H values, the heads' shuffles of one butterfly step
/// issued together (independent, so their latencies overlap). All 32 lanes call, with the same G.
template <int H, typename Op> WARPKIT_DEVICE void segGroupAllHeads(float* v, int G, Op op) {
#pragma unroll 1
    for (int o = 1; o < G; o <<= 1)
#pragma unroll
        for (int h = 0; h < H; ++h) v[h] = op(v[h], shflXor(v[h], o));
}

/// The softmax (Kind) of one short segment of `rows` rows (rows <= G * R) at row b, by G lanes, this
/// one lane j of them (rows j, j + G, ...). rows = 0 writes nothing. All 32 lanes call when G > 1
/// (the butterflies), with the same G; a lane alone may call with G = 1.
template <int H, typename T, int Kind>
WARPKIT_DEVICE void segHeadsShort(const SegSoftmaxAlgo<T, Kind>& a, long long b, int rows, int j, int G) {
    constexpr int R = segHeadsRows<H>();
    constexpr bool kPrecise = sizeof(T) == 4;
    const T* x = a.x + b * H;
    T* y = a.y + b * H;
    const int mine = rows - j <= 0 ? 0 : (rows - j + G - 1) >> (__ffs(G) - 1); // this lane's rows (G: 2^n)
    float v[R][H];
#pragma unroll
    for (int k = 0; k < R; ++k) {
        if (k < mine) segHeadsLoad<T, H>(x + (j + k * G) * H, v[k]);
        else
#pragma unroll
            for (int h = 0; h < H; ++h) v[k][h] = negInf();
    }
    float m[H], s[H];
#pragma unroll
    for (int h = 0; h < H; ++h) {
        m[h] = v[0][h];
#pragma unroll
        for (int k = 1; k < R; ++k) m[h] = Max{}(m[h], v[k][h]);
    }
    segGroupAllHeads<H>(m, G, Max{});
#pragma unroll
    for (int h = 0; h < H; ++h) {
        const float ms = m[h] == negInf() ? 0.0f : m[h]; // all -inf: every exp is 0 and the sum 0
        s[h] = 0.0f;
#pragma unroll
        for (int k = 0; k < R; ++k) {
            if (k >= mine) break;
            const float e = expDiff<kPrecise>(v[k][h], ms);
            if constexpr (!(Kind & SoftmaxLog)) v[k][h] = e;
            s[h] += e;
        }
    }
    segGroupAllHeads<H>(s, G, Sum{});
#pragma unroll
    for (int h = 0; h < H; ++h) {
        const SoftmaxFactors f = softmaxFactors<Kind>(SoftmaxState{m[h], s[h]});
        m[h] = f.max;
        s[h] = (Kind & SoftmaxLog) ? f.logSum : f.scale;
    }
#pragma unroll
    for (int k = 0; k < R; ++k) {
        if (k >= mine) break;
        float r[H];
#pragma unroll
        for (int h = 0; h < H; ++h) r[h] = (Kind & SoftmaxLog) ? (v[k][h] - m[h]) - s[h] : v[k][h] * s[h];
        segHeadsStore<T, H>(y + (j + k * G) * H, r);
    }
}

/// The softmax (Kind) of one segment of `rows` rows at row b by the whole warp, in windows of 32 * R
/// rows (rows * H < 2^31): each window's per-head max and sum (butterflies) merged into the head's
/// state in window order, then a second read writes. All 32 lanes call, with the same segment.
template <int H, typename T, int Kind>
WARPKIT_DEVICE void segHeadsWide(const SegSoftmaxAlgo<T, Kind>& a, long long b, int rows) {
    constexpr int R = segHeadsRows<H>(), W = 32 * R;
    constexpr bool kPrecise = sizeof(T) == 4;
    const int lane = (int)laneId();
    const T* x = a.x + b * H;
    T* y = a.y + b * H;
    float sm[H], ss[H];
#pragma unroll
    for (int h = 0; h < H; ++h) {
        sm[h] = negInf();
        ss[h] = 0.0f;
    }
#pragma unroll 1
    for (int w0 = 0; w0 < rows; w0 += W) {
        float v[R][H];
#pragma unroll
        for (int k = 0; k < R; ++k) {
            const int r = w0 + lane + 32 * k;
            if (r < rows) segHeadsLoad<T, H>(x + r * H, v[k]);
            else
#pragma unroll
                for (int h = 0; h < H; ++h) v[k][h] = negInf();
        }
        float m[H], t[H];
#pragma unroll
        for (int h = 0; h < H; ++h) {
            m[h] = v[0][h];
#pragma unroll
            for (int k = 1; k < R; ++k) m[h] = Max{}(m[h], v[k][h]);
        }
        segGroupAllHeads<H>(m, 32, Max{});
#pragma unroll
        for (int h = 0; h < H; ++h) {
            const float ms = m[h] == negInf() ? 0.0f : m[h];
            t[h] = 0.0f;
#pragma unroll
            for (int k = 0; k < R; ++k) t[h] += expDiff<kPrecise>(v[k][h], ms); // -inf past the rows: 0
        }
        segGroupAllHeads<H>(t, 32, Sum{});
#pragma unroll
        for (int h = 0; h < H; ++h) {
            const SoftmaxState st = softmaxStateMerge(SoftmaxState{sm[h], ss[h]}, SoftmaxState{m[h], t[h]});
            sm[h] = st.max;
            ss[h] = st.sum;
        }
    }
#pragma unroll
    for (int h = 0; h < H; ++h) {
        const SoftmaxFactors f = softmaxFactors<Kind>(SoftmaxState{sm[h], ss[h]});
        sm[h] = f.max; // with the one factor softmaxApply<Kind, kPrecise> reads
        ss[h] = (Kind & SoftmaxLog) ? f.logSum : (kPrecise ? f.scale : f.log2Scale);
    }
    constexpr int KW = R / 2 > 0 ? R / 2 : 1; // the write pass: half a window a batch
#pragma unroll 1
    for (int w0 = 0; w0 < rows; w0 += 32 * KW) {
        float v[KW][H];
#pragma unroll
        for (int k = 0; k < KW; ++k) {
            const int r = w0 + lane + 32 * k;
            if (r < rows) segHeadsLoad<T, H>(x + r * H, v[k]);
        }
#pragma unroll
        for (int k = 0; k < KW; ++k) {
            const int r = w0 + lane + 32 * k;
            if (r >= rows) break;
            float o[H];
#pragma unroll
            for (int h = 0; h < H; ++h) {
                const SoftmaxFactors f{sm[h], ss[h], ss[h], ss[h]};
                o[h] = softmaxApply<Kind, kPrecise>(f, v[k][h]);
            }
            segHeadsStore<T, H>(y + r * H, o);
        }
    }
}

/// Stage 1 for H heads (see the header comment): warp steps of 32 segments, grid-stride; long
/// segments listed as the group kernel lists them, the later stages unchanged.
template <int BT, int H, typename T, int Kind, typename O> __global__ void __launch_bounds__(BT, 2)
    segmentHeadsKernel(SegSoftmaxAlgo<T, Kind> a, SegOffsets<O> off, long long segments, long long items,
                       long long longRows, long long chunkRows, int sliceGroup, SegList<SoftmaxState> list) {
    static_assert(H == 2 || H == 4 || H == 8, "segmentHeadsKernel: H is 2, 4 or 8");
    constexpr int R = segHeadsRows<H>(), L = 32 / H; // L: segments of one 32-pair step
    pdlLaunchDependents();                           // the no-room kernel's blocks may be placed beside this grid
    const int lane = (int)laneId();
    const long long stride = (long long)gridDim.x * BT;
    long long nb = 0, ne = 0, nb1 = 0, ne1 = 0;
    const long long g0 = ((long long)blockIdx.x * BT + threadIdx.x) / 32 * 32;
    // each step's offsets load two steps ahead, so that a step can start its next step's rows
    // toward L2 (as the group kernel's)
    segmentBoundsAt(off, g0 + lane, segments, &nb, &ne);
    segmentBoundsAt(off, g0 + stride + lane, segments, &nb1, &ne1);
    for (long long g = g0; g < segments; g += stride) {
        // 1. this lane's segment; the next step's rows toward L2; the offsets of the step after
        const long long s = g + lane;
        long long b = 0, b1 = 0;
        const long long rows = segmentClip(nb, ne, items, &b), rows1 = segmentClip(nb1, ne1, items, &b1);
        if (rows1 > 0 && rows1 <= longRows) prefetchL2(a.x + b1 * H);
        nb = nb1;
        ne = ne1;
        segmentBoundsAt(off, s + 2 * stride, segments, &nb1, &ne1);
        // 2. long segments: the block and slice tiers, else (no room) the chunk kernels by pairs (a
        //    call a head; heads 1 to listAppend, so that a lane's chunks stay contiguous)
        const bool isLong = rows > longRows;
        const long long slots = isLong ? segSliceSlots(rows, H, sliceGroup) : 0;
        const bool fits = isLong && (segBlockFits(rows, H) || slots > 0);
        const bool room = segBlockAppend(list, fits, slots, s * H, b, rows);
        const bool rest = isLong && !room;
        if (__any_sync(WARPKIT_FULL_MASK, rest)) {
            unsigned mask = 0u;
#pragma unroll 1
            for (int h = 0; h < H; ++h)
                if (listAppend(list, rest, s * H + h, h, 1, b, rows, chunkRows)) mask |= 1u << ((lane % L) * H + h);
#pragma unroll
            for (int o = 1; o < L; o <<= 1) mask |= shflXor(mask, o); // the lanes of one pair step
            if (mask != 0u && lane % L == 0)
                list.noRoom[atomicAdd(list.counter + 2, 1ull)] = SegNoRoom{s * H / 32 * 32, mask};
        }
        // 3. the short segments by tiers of lane-group width G (only the tiers in use)
        const int mine = isLong ? 0 : (int)rows;
        int mineG = 1;
        while (mineG < 32 && mineG * R < mine) mineG <<= 1;
        const unsigned tiers = segmentTiers(mine > 0 ? (unsigned)mineG : 0u);
        if (mine > 0 && mineG == 1) segHeadsShort<H>(a, b, mine, 0, 1);
#pragma unroll 1
        for (int G = 2; G <= 32; G <<= 1) {
            if (!(tiers & (unsigned)G)) continue;
            const unsigned tier = __ballot_sync(WARPKIT_FULL_MASK, mine > 0 && mineG == G);
            const int count = __popc(tier), groups = 32 / G, j = lane & (G - 1);
#pragma unroll 1
            for (int first = 0; first < count; first += groups) {
                const int k = first + lane / G; // this group's segment: the tier's k-th lane
                const int src = k < count ? (int)__fns(tier, 0u, k + 1) : 0;
                const long long pb = shflIdx(b, src);
                const int pr = shflIdx(mine, src);
                if (G == 32 && pr > 32 * R) segHeadsWide<H>(a, pb, pr); // one segment a round
                else segHeadsShort<H>(a, pb, k < count ? pr : 0, j, G);
            }
        }
    }
}

/// Launches stage 1 for H = heads (2, 4 or 8): the heads kernel, grid as the group kernel's.
template <int BT, typename T, int Kind, typename O>
inline cudaError_t segmentHeadsLaunch(const SegSoftmaxAlgo<T, Kind>& a, SegOffsets<O> off, long long segments,
                                      int heads, long long items, long long longRows, long long chunkRows,
                                      int sliceGroup, const SegList<SoftmaxState>& list, cudaStream_t stream) {
    auto go = [&](auto k) -> cudaError_t {
        int blocks = 0;
        WARPKIT_TRY(gridBlocks(k, BT, segments, BT, 1ll << 30, &blocks));
        return launchKernel(k, blocks, BT, stream, a, off, segments, items, longRows, chunkRows, sliceGroup, list);
    };
    if (heads == 2) return go(segmentHeadsKernel<BT, 2, T, Kind, O>);
    if (heads == 4) return go(segmentHeadsKernel<BT, 4, T, Kind, O>);
    if (heads == 8) return go(segmentHeadsKernel<BT, 8, T, Kind, O>);
    return cudaErrorInvalidValue;
}

} // namespace detail
} // namespace warpkit
