// warpkit/device/detail/segment_team.cuh: rule G10's kernel behind device/segment.cuh: the softmax
// of segments long on average, a team of threads a segment straight from the offsets, in place of
// the group kernel and its list for every segment a team holds. Internal: include
// warpkit/device/segment.cuh.
//
// A team is a warp (2 teams a block of 64), a block of 64 or a block of 256 threads: the plan's
// `team`, set by the mean length (docs/tuning.md, G10). Team j of block b takes segment
// b * teams + j, one segment a team (a grid of one block for every `teams` segments, so the
// hardware hands the blocks out as SMs free up, whatever the lengths' spread; small blocks, so that
// a block's slot frees as soon as its few segments are done, not its slowest of many). A segment of
//   - no rows: nothing is written;
//   - at most four windows (the team's threads x SegTeam::elems elements): the block tier's softmax
//     by the team (segBlockSoftmax: one read and one exp an element for one window, else a pass of
//     window states then a second read); a warp team combines its lanes by xor butterflies alone,
//     with no shared memory and no barrier;
//   - more: listed by the team's first warp for stage 4 (segmentBlockKernel), as the group kernel
//     lists one (segBlockAppend: a block-tier entry up to kSegBlockMaxElems elements, else the slice
//     tier's slots); only a segment that finds no room (segments that overlap) is done by the team
//     itself, a head at a time: a fold of its rows thread-strided, the team's ordered tree, and a
//     pass that writes (segTeamFold: few registers, any length).
//
// Bits. A segment's order depends on the team (the plan), its length, its heads and x's address
// modulo 16 bytes (the block tier's windows), never on the grid or which team ran first.
#pragma once

#include "segment_direct.cuh"

namespace warpkit {
namespace detail {

/// A team of TT threads for segments of H heads (1 or 4) of ES-byte values: elements a thread a
/// window (24 for a block of one head of 4-byte values, else 16: the most that keeps 64 registers
/// with no spill on sm_90), the block it runs in (2 warp teams: 16 blocks an SM hold the 32 warps
/// of 64 registers on sm_75 and sm_86 as well), the blocks an SM holds at least (64 registers a
/// thread: 80 unbounded measured slower; a block of 256 with 4 heads 80, where 64 spilled), and the
/// most elements (rows x heads) of a segment it does itself: four windows.
template <int TT, int H, int ES> struct SegTeam {
    static_assert(TT == 32 || TT == 64 || TT == 256, "SegTeam: TT (threads a team) must be 32, 64 or 256");
    static_assert(H == 1 || H == 4, "SegTeam: H (heads) must be 1 or 4");
    static_assert(!(TT == 256 && H == 4) || ES == 4, "SegTeam: ES (value bytes) must be 4 for TT 256 with H 4");
    static constexpr int elems = H == 1 && TT > 32 && ES == 4 ? 24 : 16;
    static constexpr int block = TT == 32 ? 64 : TT;
    static constexpr int minBlocks = (kSegSmThreads < 1024 ? kSegSmThreads : 1024) / block - (H == 4 && TT == 256);
    static constexpr long long maxElems = 4ll * TT * elems;
};

/// Segment s (rows [b, b + rows), past the team's four windows) listed for stage 4 by the team's
/// first warp (segBlockAppend); returns, in every thread of the team, whether it got room. Every
/// thread of the team calls.
template <int TT> WARPKIT_DEVICE bool segTeamList(const SegList<SoftmaxState>& l, long long s, long long b,
                                                  long long rows, int heads, int sliceGroup, int* room) {
    pdlWait(); // the counters, cleared by the kernel before (segmentTeamLaunch)
    const long long slots = segSliceSlots(rows, heads, sliceGroup);
    const bool fits = segBlockFits(rows, heads) || slots > 0;
    bool got = false;
    if (threadIdx.x % TT < 32) got = shflIdx((int)segBlockAppend(l, fits && laneId() == 0, slots, s, b, rows), 0) != 0;
    if constexpr (TT == 32) {
        return got;
    } else {
        if (threadIdx.x == 0) *room = got;
        __syncthreads();
        got = *room != 0;
        __syncthreads(); // read before the team's next segment stores it
        return got;
    }
}

/// The softmax of segment rows [b, b + rows) by a team of TT threads a head at a time (a segment
/// without room in the list): thread t folds rows t, t + TT, ... (foldRows, 4 loads in flight), the
/// team's ordered tree (warpTree, then the warps in order), and writeRows from the total. Every
/// thread of the team calls.
template <int TT, typename A> WARPKIT_DEVICE void segTeamFold(const A& a, long long b, long long rows, int heads) {
    __shared__ SoftmaxState warps[TT / 32];
    const long long t = (long long)(threadIdx.x & (TT - 1));
    for (int h = 0; h < heads; ++h) {
        SoftmaxState st = warpTree(a, foldRows<A, 4>(a, b, h, heads, t, rows, TT));
        if constexpr (TT > 32) {
            if (laneId() == 0) warps[t / 32] = st;
            __syncthreads();
            st = warps[0];
            for (int w = 1; w < TT / 32; ++w) st = a.merge(st, warps[w]);
            __syncthreads(); // read before the next head stores them
        }
        writeRows(a, a.prepare(st), b, h, heads, t, rows, TT);
    }
}

/// Stage 1 of rule G10: segment `first` + blockIdx.x * teams + the team's index by the team (see
/// the header comment); a longer one listed for stage 4. One segment a team and no loop (a
/// grid-strided loop around the same body ran slower: docs/tuning.md, G10), so a call with more
/// segments than one grid holds launches several grids (segmentGridsLaunch). Before it exits, block 0
/// waits for the grid before it (the clearing kernel, when one ran), so this grid completes after
/// that one.
template <int TT, int H, typename A, typename O>
__global__ void __launch_bounds__(SegTeam<TT, H, (int)sizeof(typename A::Elem)>::block,
                                  SegTeam<TT, H, (int)sizeof(typename A::Elem)>::minBlocks)
    segmentTeamKernel(A a, SegOffsets<O> off, long long first, long long segments, long long items, int sliceGroup,
                      SegList<SoftmaxState> list) {
    static_assert(SegBlockSoftmax<A>::value, "segmentTeamKernel: A must be the softmax (SegSoftmaxAlgo)");
    using Team = SegTeam<TT, H, (int)sizeof(typename A::Elem)>;
    constexpr int teams = Team::block / TT, E = Team::elems;
    __shared__ float red[2][TT / 32][4][8];
    __shared__ int room; // a listed segment's room (teams of a block)
    pdlLaunchDependents();
    const long long s = first + (long long)blockIdx.x * teams + threadIdx.x / TT;
    long long ob = 0, oe = 0, b = 0;
    segmentBoundsAt(off, s, segments, &ob, &oe);           // (0, 0) past the last segment
    const long long rows = segmentClip(ob, oe, items, &b); // the same in every thread of the team
    if (rows > 0 && rows * H <= Team::maxElems) segBlockSoftmax<TT, E>(a, b, (int)rows, H, red, [] {});
    else if (rows > 0 && !segTeamList<TT>(list, s, b, rows, H, sliceGroup, &room)) segTeamFold<TT>(a, b, rows, H);
    if (blockIdx.x == 0) pdlWait();
}

/// Rule G10's launches: the clearing kernel when a segment can be past a team's four windows, the
/// team kernel, then stage 4 (the block and slice tiers) for what it listed (the list's room:
/// `entries` entries, `slots` slots); on sm_90 each programmatically behind the one before. Host.
template <int TT, int H, typename A, typename O>
inline cudaError_t segmentTeamLaunch(const A& a, SegOffsets<O> off, long long segments, long long items, int sliceGroup,
                                     long long entries, long long slots, const SegList<SoftmaxState>& list, int dev,
                                     int cc, cudaStream_t stream) {
    using Team = SegTeam<TT, H, (int)sizeof(typename A::Elem)>;
    constexpr int BT = Team::block, teams = BT / TT;
    const bool longs = items > Team::maxElems / H; // a segment can be listed
    bool early = false;
    auto team = segmentTeamKernel<TT, H, A, O>;
    if (longs) {
        WARPKIT_TRY(launchKernel(segmentClearKernel<SoftmaxState>, 1, 32, stream, list));
        WARPKIT_TRY(pdlAllowed(team, dev, cc, &early));
    }
    WARPKIT_TRY(segmentGridsLaunch(team, teams, BT, stream, early, a, off, segments, items, sliceGroup, list));
    if (!longs) return cudaSuccess;
    return segmentBlockLaunch(a, H, sliceGroup, entries, slots, list, dev, cc, true, stream);
}

} // namespace detail
} // namespace warpkit
