// warpkit/device/detail/segment_flat_split.cuh: the flat pass's split points (segment_flat.cuh
// describes the pass). Internal: include warpkit/device/segment.cuh.
//
// The split of diagonal d is the number of segment ends taken before path item d: the smallest s
// in [max(0, d - elems), min(d, segments)] whose end is not taken (E[s] > c[0] + d - 1 - s). A warp
// searches together, 32 probes a round; a round narrows the range to the probes either side of the
// first end not taken. A search from nothing (flatSplit) takes about log32 of the range in rounds.
// A search from the split s1 of an earlier diagonal d1 (flatSearchAhead: s lies in
// [s1, s1 + d - d1]) starts with 32 probes 8 apart around s1 plus a guessed count, so it usually
// ends in two rounds; stage 1 runs its rounds one between each two of a tile's barriers, so their
// loads wait beside the tile's own (FlatSearch holds the state between them).
#pragma once

#include "segment_kernels.cuh"

namespace warpkit {
namespace detail {

/// The clipped offset c[j] (j in [0, segments]); CSR offsets only (end = begin + 1).
template <typename O> WARPKIT_DEVICE long long flatOffset(SegOffsets<O> o, long long j, long long items) {
    const long long v = (long long)o.begin[j];
    return v < 0 ? 0 : (v > items ? items : v);
}

/// A split search of diagonal d: the split lies in [lo, hi]; the next round probes q + lane * step,
/// those below hi (q >= lo).
struct FlatSearch {
    long long lo, hi, q, step, d;
};

/// The search over [lo, hi] with an even round next (32 probes over the range).
WARPKIT_DEVICE FlatSearch flatSpread(long long lo, long long hi, long long d) {
    const long long step = (hi - lo + 31) / 32;
    return FlatSearch{lo, hi, lo, step > 0 ? step : 1, d};
}

/// This lane's probe of the next round of s: the offset after its position, as read (0 for none;
/// in the offsets' own type, the one register a round in flight holds). Every lane calls.
template <typename O> WARPKIT_DEVICE O flatProbe(SegOffsets<O> o, const FlatSearch& s) {
    const long long p = s.q + (long long)laneId() * s.step;
    return p < s.hi ? o.begin[p + 1] : O(0);
}

/// s after its round (v: each lane's flatProbe, e0 = c[0]): the range between the last probe taken
/// and the first not taken, with an even round next. Every lane calls; every lane gets it.
template <typename O> WARPKIT_DEVICE FlatSearch flatTake(const FlatSearch& s, O v, long long e0, long long items) {
    const long long p = s.q + (long long)laneId() * s.step;
    const long long c = (long long)v < 0 ? 0 : ((long long)v > items ? items : (long long)v);
    const bool probe = p < s.hi, taken = probe && c <= e0 + s.d - 1 - p;
    const unsigned notTaken = __ballot_sync(WARPKIT_FULL_MASK, probe && !taken);
    const unsigned probes = __ballot_sync(WARPKIT_FULL_MASK, probe);
    const int first = notTaken ? __ffs((int)notTaken) - 1 : __popc(probes); // the first probe not taken
    const long long lo = first > 0 ? s.q + (first - 1) * s.step + 1 : s.lo;
    const long long hi = notTaken ? s.q + first * s.step : s.hi;
    return flatSpread(lo, hi, s.d);
}

/// The split of diagonal d, from nothing. Every lane calls; every lane gets it.
template <typename O> WARPKIT_DEVICE long long flatSplit(SegOffsets<O> o, long long segments, long long items,
                                                         long long e0, long long elems, long long d) {
    FlatSearch s = flatSpread(d - elems > 0 ? d - elems : 0, d < segments ? d : segments, d);
    while (s.lo < s.hi) s = flatTake(s, flatProbe(o, s), e0, items);
    return s.lo;
}

/// The search of diagonal d from s1, the split of diagonal d1 <= d, whose tile before had n ends:
/// the split lies in [s1, s1 + d - d1] (clipped to diagonal d's range), and the first round probes
/// 32 positions 8 apart around s1 + n. With offsets out of order any s1 and n give a split in
/// diagonal d's range (the tiles then flag the call).
WARPKIT_DEVICE FlatSearch flatSearchAhead(long long s1, long long n, long long d1, long long d, long long segments,
                                          long long elems) {
    const long long dlo = d - elems > 0 ? d - elems : 0, dhi = d < segments ? d : segments;
    const long long lo = s1 < dlo ? dlo : (s1 > dhi ? dhi : s1);
    const long long far = s1 + (d - d1) < dhi ? s1 + (d - d1) : dhi;
    const long long hi = far < lo ? lo : far;
    long long q = s1 + n - 16 * 8;
    q = q > hi - 1 ? hi - 1 : q;
    return FlatSearch{lo, hi, q < lo ? lo : q, 8, d};
}

/// One round of a search kept in shared memory (*s): takes the round's probes (*v), writes the state
/// back, and sends the next round's probes (*v). The lanes of one warp call, none other touching *s.
template <typename O>
WARPKIT_DEVICE void flatAheadRound(SegOffsets<O> o, long long items, long long e0, FlatSearch* s, O* v) {
    const FlatSearch n = flatTake(*s, *v, e0, items);
    __syncwarp(); // every lane has read *s
    if (laneId() == 0) *s = n;
    *v = flatProbe(o, n);
}

/// The path item where tile boundary t lies (t = tiles: the path's end), tiles of `tile` items.
WARPKIT_DEVICE long long flatDiagonal(long long t, long long path, long long tile) {
    return t * tile < path ? t * tile : path;
}

} // namespace detail
} // namespace warpkit
