// warpkit/device/detail/segment_direct.cuh: rule G6's kernels behind device/segment.cuh (stage 1b
// of segment_plan.cuh): the kernel that clears the list's counters, and the direct kernel, a block
// a segment straight from the offsets for every segment (segDirectFold in registers; a pair past
// directRows listed by its block for the chunk kernels of segment_long.cuh, or folded by it in
// their order when it finds no room: segDirectLong); rule G11's team kernel (a team of lanes a
// segment) and rule G12's page kernel (a page of segments a block, its teams looping over the
// page's non-empty ones). Internal: include warpkit/device/segment.cuh.
#pragma once

#include "segment_long.cuh"
#include "segment_plan.cuh"

namespace warpkit {
namespace detail {

/// Threads an SM holds on the architecture compiled for (WARPKIT_SM_THREADS).
constexpr int kSegSmThreads = WARPKIT_SM_THREADS;

/// Blocks of the direct kernel an SM holds at least: for a one-word state and element 1536 threads
/// (40 registers: the batch of loads and little else, no list) or all an SM holds where that is
/// fewer, else the chunk kernel's.
template <int LT, typename A> struct SegDirectMinBlocks {
    static constexpr int value = SegChunkBatch<A>::kOneWord ? (kSegSmThreads < 1536 ? kSegSmThreads : 1536) / LT
                                                            : SegChunkMinBlocks<LT, A>::value;
};

/// foldRows' fold (one head) of rows first, first + LT, ... below `rows` < 2^31 from element `base`,
/// with forRows' batches (full batches load unpredicated, the last one clamps its loads to the
/// thread's last row and predicates only its folds) in 32-bit row arithmetic, so that the direct
/// kernel fits its 40 registers. Row r is row `at` + r of its segment (what take sees).
template <int LT, typename A, int kBatch>
WARPKIT_DEVICE typename A::State segDirectFold(const A& a, long long base, int first, int rows, long long at) {
    typename A::State st = a.identity();
    int r = first;
    for (; r + (kBatch - 1) * LT < rows; r += kBatch * LT) {
        typename A::Elem x[kBatch];
#pragma unroll
        for (int k = 0; k < kBatch; ++k) x[k] = a.load(base + r + k * LT);
#pragma unroll
        for (int k = 0; k < kBatch; ++k) st = a.take(st, x[k], at + r + k * LT);
    }
    if (r < rows) {
        const int n = (rows - 1 - r) / LT; // the thread's rows here: r, ..., r + n * LT (n < kBatch)
        const long long b = base + r;
        typename A::Elem x[kBatch];
#pragma unroll
        for (int k = 0; k < kBatch; ++k) x[k] = a.load(b + (unsigned)((k < n ? k : n) * LT));
#pragma unroll
        for (int k = 0; k < kBatch; ++k)
            if (k <= n) st = a.take(st, x[k], at + r + k * LT);
    }
    return st;
}

/// Rule G6's first kernel when a segment can be listed: the list's six counters cleared (one warp)
/// in place of a cudaMemsetAsync, so that the direct kernel can be launched programmatically behind
/// it (its blocks placed at once; only a block that lists a pair waits for this grid, pdlWait).
template <typename S> __global__ void __launch_bounds__(32) segmentClearKernel(SegList<S> list) {
    pdlLaunchDependents();
    if (threadIdx.x < 6) list.counter[threadIdx.x] = 0ull;
}

/// A pair of more than directRows rows met by the direct kernel: listed for the chunk kernels as
/// the group kernel lists one (listAppend: one atomicAdd on the entries and one on the chunks,
/// every chunk handed out below the capacity given its owner, -1 when the pair found no room). A
/// pair without room (only segments that overlap) is folded here with the chunk kernels' order:
/// chunk c's partial is the block tree of segDirectFold over its rows (foldRows' order; 4 loads in
/// flight, so that this rare path fits the direct kernel's registers), thread c / per merges the
/// partials in chunk order (per = ceil(chunks / LT)), then the block tree: segmentChunkJoin's, so
/// the same bits as listed, by one block. Every thread of the block calls.
template <int LT, typename A> WARPKIT_DEVICE void segDirectLong(const A& a, const SegList<typename A::State>& l,
                                                                long long s, long long b, long long rows,
                                                                long long chunkRows) {
    using S = typename A::State;
    __shared__ long long given[2]; // the pair's entry (-1: no room) and its first chunk
    __shared__ S part;
    const long long n = segCeilDiv(rows, chunkRows);
    pdlWait(); // the counters, cleared by the kernel before (segmentLaunch)
    if (threadIdx.x == 0) {
        const long long e = (long long)atomicAdd(l.counter, 1ull);
        const long long c0 = (long long)atomicAdd(l.counter + 1, (unsigned long long)n);
        const bool room = e < l.maxEntries && c0 < l.maxChunks && n <= l.maxChunks - c0;
        if (room) l.entries[e] = SegEntry{s, b, rows, c0, 1, 0u, 0};
        given[0] = room ? e : -1;
        given[1] = c0;
    }
    __syncthreads();
    const long long e = given[0], c0 = given[1];
    for (long long k = threadIdx.x; k < n && c0 + k < l.maxChunks; k += LT) l.owner[c0 + k] = (int)e;
    if (e < 0) {
        const long long per = segCeilDiv(n, LT);
        S acc = a.identity();
        long long owner = 0, taken = 0; // the thread that merges chunk c: c / per, counted
#pragma unroll 1
        for (long long r0 = 0; r0 < rows; r0 += chunkRows) {
            const int m = (int)(rows - r0 < chunkRows ? rows - r0 : chunkRows);
            const S p = blockTree<LT>(a, segDirectFold<LT, A, 4>(a, b + r0, (int)threadIdx.x, m, r0));
            if (threadIdx.x == 0) part = p;
            __syncthreads();
            if ((long long)threadIdx.x == owner) acc = a.merge(acc, part);
            if (++taken == per) owner += 1, taken = 0;
            __syncthreads(); // part is read before the next chunk's is stored
        }
        const S total = blockTree<LT>(a, acc);
        if (threadIdx.x == 0) a.finish(s, total);
    }
    __syncthreads(); // `given` is read before the block's next segment stores it
}

/// Stage 1b, rule G6 (one head, one-pass algorithms, a plan with directRows): segment `first` +
/// blockIdx.x by the block (a grid of one block a segment, so the hardware hands the blocks out as
/// SMs free up, whatever the lengths' spread; no loop: a call with more segments than one grid
/// holds launches several grids, segmentGridsLaunch), straight from the offsets, in place of the
/// group kernel. An empty segment writes its empty value; one of up to
/// directRows <= chunkRows rows is folded in registers: thread t folds rows t, t + LT, ...
/// (segDirectFold, SegChunkBatch::direct loads in flight), then the block tree and a one-chunk pair's
/// second tree: a listed chunk's order, so the same bits as the chunk kernels give a pair of one
/// chunk, and an order set by the segment's length alone. A longer one is listed for the chunk
/// kernels (or, without room, folded here: segDirectLong). Before it exits, block 0 waits for the
/// grid before it (pdlWait: the clearing kernel, when one ran), so this grid completes after that
/// one and the chunk kernels, which wait for this grid, see the cleared counters too.
template <int LT, typename A, typename O> __global__ void __launch_bounds__(LT, SegDirectMinBlocks<LT, A>::value)
    segmentDirectKernel(A a, SegOffsets<O> off, long long first, long long segments, long long items,
                        long long directRows, long long chunkRows, SegList<typename A::State> list) {
    WARPKIT_CHECK_SEGMENT_ALGO(A, "segmentDirectKernel");
    static_assert(!A::kTwoPass, "segmentDirectKernel: A must be a one-pass algorithm (kTwoPass false)");
    pdlLaunchDependents();
    const long long s = first + blockIdx.x; // below segments: the grid holds no block past the last
    long long ob = 0, oe = 0, b = 0;
    segmentBoundsAt(off, s, segments, &ob, &oe);
    const long long rows = segmentClip(ob, oe, items, &b); // the same in every thread
    if (rows > directRows) {
        segDirectLong<LT>(a, list, s, b, rows, chunkRows);
    } else if (rows == 0) {
        if (threadIdx.x == 0) a.empty(s);
    } else {
        const typename A::State part =
            blockTree<LT>(a, segDirectFold<LT, A, SegChunkBatch<A>::direct>(a, b, (int)threadIdx.x, (int)rows, 0));
        if (threadIdx.x < 32) {
            const typename A::State total = segOneChunkTotal<LT>(a, part);
            if (threadIdx.x == 0) a.finish(s, total);
        }
    }
    if (blockIdx.x == 0) pdlWait();
}

/// The segments past directRows that a warp's lanes hold (`lists`: this lane's segment s, its first
/// element b and its rows): listed for the chunk kernels (listAppend), or, finding no room (only
/// segments that overlap), folded by the warp with their math (longPairByWarp, LT the chunk kernels'
/// threads; 4 loads in flight, so that this rare path fits the team kernels' registers). Waits for
/// the kernel before (pdlWait: it cleared the counters) only when some lane lists. All 32 lanes call.
template <int LT, typename A> WARPKIT_DEVICE void segWarpListLongs(const A& a, const SegList<typename A::State>& list,
                                                                   bool lists, long long s, long long b, long long rows,
                                                                   long long chunkRows) {
    if (!__any_sync(WARPKIT_FULL_MASK, lists)) return;
    pdlWait(); // the counters, cleared by the kernel before
#pragma unroll 1
    for (unsigned m = __ballot_sync(WARPKIT_FULL_MASK, listAppend(list, lists, s, 0, 1, b, rows, chunkRows)); m;
         m &= m - 1) {
        const int src = __ffs(m) - 1;
        longPairByWarp<LT, A, 4>(a, shflIdx(s, src), shflIdx(b, src), shflIdx(rows, src), 1, chunkRows);
    }
}

/// Stage 1b of rule G11 (G6's direct path with teams of TT lanes: a plan's team, 8, 16 or 32; 64 / TT
/// teams a block of 64 threads, 1152 threads an SM: 56 registers, no spill): segment `first` +
/// blockIdx.x x (64 / TT) + the team's index by the team, straight from the offsets, one segment a
/// team and no loop (segmentGridsLaunch), for segments too short on average for a block each. An
/// empty segment writes its empty value; one of up to directRows rows is folded in registers: lane t
/// of the team folds rows t, t + TT, ... (segDirectFold), then the team's lanes in order
/// (warpSegmentedReduce over the team's lanes): an order set by the team and the length alone; a
/// longer one is listed for the chunk kernels or, finding no room, folded by the warp
/// (segWarpListLongs). Block 0 waits for the grid before it before it exits (see
/// segmentDirectKernel).
template <int TT, int LT, typename A, typename O>
__global__ void __launch_bounds__(64, (kSegSmThreads < 1152 ? kSegSmThreads : 1152) / 64)
    segmentDirectTeamKernel(A a, SegOffsets<O> off, long long first, long long segments, long long items,
                            long long directRows, long long chunkRows, SegList<typename A::State> list) {
    WARPKIT_CHECK_SEGMENT_ALGO(A, "segmentDirectTeamKernel");
    static_assert(!A::kTwoPass, "segmentDirectTeamKernel: A must be a one-pass algorithm (kTwoPass false)");
    static_assert(TT == 8 || TT == 16 || TT == 32, "segmentDirectTeamKernel: TT (lanes a team) must be 8, 16 or 32");
    using S = typename A::State;
    pdlLaunchDependents();
    const int lane = (int)laneId(), t = lane % TT;
    const long long s = first + (long long)blockIdx.x * (64 / TT) + threadIdx.x / TT;
    long long ob = 0, oe = 0, b = 0;
    segmentBoundsAt(off, s, segments, &ob, &oe);           // (0, 0) past the last segment
    const long long rows = segmentClip(ob, oe, items, &b); // the same in every lane of the team
    const bool folds = rows > 0 && rows <= directRows;
    const S part = folds ? segDirectFold<TT, A, SegChunkBatch<A>::direct>(a, b, t, (int)rows, 0) : a.identity();
    const S total = warpSegmentedReduce(part, SegMerge<A>{a}, WarpSegment{lane - t, lane - t + TT - 1});
    if (t == 0 && s < segments) {
        if (rows == 0) a.empty(s);
        else if (folds) a.finish(s, total);
    }
    segWarpListLongs<LT>(a, list, t == 0 && rows > directRows, s, b, rows, chunkRows);
    if (blockIdx.x == 0) pdlWait();
}

/// Stage 1b of rule G12 (G11's teams for segments short on average, where a team a segment would
/// cost a block for every few empty ones): a page of kSegDirectPage segments a block of as many
/// threads. Each thread loads one segment's offsets, writes an empty one's value at once and keeps
/// one of up to directRows rows, in page order, in shared memory; then warp w takes the kept
/// segments w x (32 / TT), w x (32 / TT) + kSegDirectPage / TT, ... (32 / TT at a time, a team
/// each) and folds them as the team kernel does (segDirectFold, warpSegmentedReduce over the team's
/// lanes: the same bits). A page of empty segments costs one round trip for its offsets. A segment
/// past directRows is listed (or folded without room) by the warp of the thread that loaded it, as
/// the team kernel lists one. Block 0 waits for the grid before it, then exits (see
/// segmentDirectKernel).
template <int TT, int LT, typename A, typename O>
__global__ void __launch_bounds__(kSegDirectPage, (kSegSmThreads < 1152 ? kSegSmThreads : 1152) / kSegDirectPage)
    segmentDirectPageKernel(A a, SegOffsets<O> off, long long first, long long segments, long long items,
                            long long directRows, long long chunkRows, SegList<typename A::State> list) {
    WARPKIT_CHECK_SEGMENT_ALGO(A, "segmentDirectPageKernel");
    static_assert(!A::kTwoPass, "segmentDirectPageKernel: A must be a one-pass algorithm (kTwoPass false)");
    static_assert(TT == 8 || TT == 16 || TT == 32, "segmentDirectPageKernel: TT (lanes a team) must be 8, 16 or 32");
    static_assert(kSegDirectPage == 64, "segmentDirectPageKernel: a page is the block's two warps");
    using S = typename A::State;
    __shared__ long long base[kSegDirectPage];
    __shared__ int len[kSegDirectPage], kept[kSegDirectPage], counts[2];
    pdlLaunchDependents();
    const int lane = (int)laneId(), w = (int)threadIdx.x / 32;
    // 1. the page's offsets, a segment a thread; empty ones written, the others kept in page order
    const long long s0 = first + (long long)blockIdx.x * kSegDirectPage, s = s0 + threadIdx.x;
    long long ob = 0, oe = 0, b = 0;
    segmentBoundsAt(off, s, segments, &ob, &oe); // (0, 0) past the last segment
    const long long rows = segmentClip(ob, oe, items, &b);
    if (s < segments && rows == 0) a.empty(s);
    const bool keeps = rows > 0 && rows <= directRows;
    const unsigned km = __ballot_sync(WARPKIT_FULL_MASK, keeps);
    if (lane == 0) counts[w] = __popc(km);
    __syncthreads();
    if (keeps) {
        kept[(w == 0 ? 0 : counts[0]) + __popc(km & laneMaskLt())] = (int)threadIdx.x;
        base[threadIdx.x] = b;
        len[threadIdx.x] = (int)rows;
    }
    __syncthreads();
    const int count = counts[0] + counts[1];
    // 2. the kept segments, a team each
#pragma unroll 1
    for (int k0 = w * (32 / TT); k0 < count; k0 += kSegDirectPage / TT) {
        const int k = k0 + lane / TT, idx = k < count ? kept[k] : 0;
        // the team's lane read here, inside the loop: with it hoisted, the compiler made a copy of
        // the loop for lane 0 of each team and another for the rest, and each warp ran both
        int t;
        asm volatile("mov.u32 %0, %%laneid;" : "=r"(t));
        t &= TT - 1;
        const S part = segDirectFold<TT, A, SegChunkBatch<A>::direct>(a, k < count ? base[idx] : 0, t,
                                                                      k < count ? len[idx] : 0, 0);
        const S total = warpSegmentedReduce(part, SegMerge<A>{a}, WarpSegment{lane - t, lane - t + TT - 1});
        if (t == 0 && k < count) a.finish(s0 + idx, total);
    }
    // 3. the longer ones, by the warp of the thread that loaded them
    segWarpListLongs<LT>(a, list, rows > directRows, s, b, rows, chunkRows);
    if (blockIdx.x == 0) pdlWait();
}

/// Launches a kernel that takes one segment a team and no loop (G6's direct kernel, G10's and G11's
/// team kernels: parameters a, off, first, segments, then `rest`), `teams` segments a block of
/// `threads`, as grids of up to 2^30 blocks, grid g from segment first = g x 2^30 x teams; the first
/// grid programmatically where `early`, the others plainly, each behind the grid before it. Host.
template <typename... Params, typename A, typename O, typename... Rest>
inline cudaError_t segmentGridsLaunch(void (*kernel)(Params...), int teams, int threads, cudaStream_t stream,
                                      bool early, const A& a, SegOffsets<O> off, long long segments, Rest... rest) {
    const long long perGrid = (1ll << 30) * teams; // segments a grid of 2^30 blocks takes
    for (long long first = 0; first < segments; first += perGrid) {
        const long long n = segments - first < perGrid ? segments - first : perGrid;
        WARPKIT_TRY(pdlLaunch(kernel, dim3((unsigned)((n + teams - 1) / teams)), dim3(threads), stream,
                              early && first == 0, a, off, first, segments, rest...));
    }
    return cudaSuccess;
}

/// Rules G11 and G12's launch: the team kernel of `team` lanes (8, 16 or 32; values of up to 4
/// bytes, segTeamCompiled), or for `page` kSegDirectPage the page kernel of teams of
/// kSegDirectPageTeam (G12), as segmentGridsLaunch's grids, the first programmatically where a
/// segment can be listed (`longs`: the clearing kernel ran before it). Any other team or page:
/// cudaErrorInvalidConfiguration. Host.
template <int LT, typename A, typename O>
inline cudaError_t segmentDirectTeamLaunch(const A& a, SegOffsets<O> off, long long segments, long long items, int team,
                                           int page, long long directRows, long long chunkRows,
                                           const SegList<typename A::State>& list, bool longs, int dev, int cc,
                                           cudaStream_t stream) {
    if constexpr (sizeof(typename A::Elem) <= 4) {
        auto k = page == kSegDirectPage && team == kSegDirectPageTeam
                     ? segmentDirectPageKernel<kSegDirectPageTeam, LT, A, O>
                 : page != 0  ? nullptr
                 : team == 8  ? segmentDirectTeamKernel<8, LT, A, O>
                 : team == 16 ? segmentDirectTeamKernel<16, LT, A, O>
                 : team == 32 ? segmentDirectTeamKernel<32, LT, A, O>
                              : nullptr;
        if (k == nullptr) return cudaErrorInvalidConfiguration;
        bool early = false;
        if (longs) WARPKIT_TRY(pdlAllowed(k, dev, cc, &early));
        return segmentGridsLaunch(k, page != 0 ? page : 64 / team, 64, stream, early, a, off, segments, items,
                                  directRows, chunkRows, list);
    } else {
        return cudaErrorInvalidConfiguration;
    }
}

} // namespace detail
} // namespace warpkit
