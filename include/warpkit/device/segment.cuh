// warpkit/device/segment.cuh: reductions and softmax over ragged data (segments given by CSR
// offsets or by begin/end arrays), called from the host, for any mix of segment lengths.
//
//   warpkit::segmentReduce(in, out, items, offsets, segments, op, init, workspace, &bytes, stream)
//   warpkit::segmentReduceSum / Max / Min(in, out, items, offsets, segments, workspace, &bytes, stream)
//   warpkit::segmentReduceArgMax / ArgMin(in, ValueIndex<T>* out, items, offsets, segments, ...)
//   warpkit::segmentLogSumExp(x, out, items, offsets, segments, heads, workspace, &bytes, stream)
//   warpkit::segmentSoftmax(x, y, items, offsets, segments, heads, kind, workspace, &bytes, stream)
//   warpkit::segmentSoftmaxBackward(y, dy, dx, items, offsets, segments, heads, kind, workspace, &bytes, stream)
//
// Segments. `offsets` is either a CSR array of segments + 1 entries (segment s is rows
// [offsets[s], offsets[s + 1])) of int or long long, or warpkit::segmentBounds(begins, ends), two
// arrays of `segments` entries each, as cub::DeviceSegmentedReduce takes them (segment s is rows
// [begins[s], ends[s]); segments may overlap or leave gaps). `items` is the number of rows the
// data holds: every segment is clipped to rows [0, items), so nothing outside them is ever read or
// written, whatever the offsets hold. A segment whose end is at or below its begin is EMPTY
// (decreasing CSR offsets included). For offsets past 2^31, pass long long offsets (and an
// `items` past 2^31).
//
// Data. A reduction reads in[0 .. items) and writes out[s] for every segment. The softmax family
// works on x [items, heads] row-major: each of the `heads` columns of a segment independently;
// segmentLogSumExp writes out[s * heads + h]. fp32, fp16 and bf16 values (the reductions also
// int, unsigned, long long, unsigned long long and double), accumulated in float (the generic form:
// in Acc, out's type).
//
// Results. An empty segment gets: Sum 0; Max the lowest value (-inf); Min the highest (+inf);
// the generic form `init`; ArgMax / ArgMin {lowest / highest, index -1}; log-sum-exp -inf; the
// softmax and its backward write nothing for it. ArgMax / ArgMin give the index within the segment
// (0 = its first row) of the first maximum / minimum and its value's bits, NaN winning (as
// torch.argmax and torch.argmin), -0.0 equal to +0.0 (the first zero wins; rowArgMax ranks -0.0
// below +0.0); the index is an int, so those two need segments of fewer than 2^31 rows. Softmax NaN and inf rules are
// thread/softmax.cuh's (PyTorch's); log-sum-exp follows torch.logsumexp (+inf for a segment holding
// +inf, NaN for one holding NaN). The generic form's init must be an identity of op (every lane and
// every chunk starts from it); op must be associative, and need not be commutative (rows are
// always combined in order).
//
// Determinism: the same input gives the same bits on every call, on any stream, whatever the
// timing and launch shape: every value is combined in a fixed order that depends only on the
// plan (segment_plan.cuh) and the segment's length, or, for the flat pass of short segments (rules
// G5 and G7: CSR offsets, one head, a reduction or the softmax), on the clipped offsets
// (segment_flat.cuh, segment_flat_softmax.cuh), or, for the
// softmax's block and slice tiers, also on x's address modulo 16 bytes at the segment
// (segment_block.cuh, segment_slice.cuh), and for the softmax of 2, 4 or 8 heads on whether x is
// aligned to a row's bytes (at most 16: segment_heads.cuh); never on y's address, the device, the
// grid or which block ran first.
// No float atomics are used.
//
// Conventions (docs/design.md). Host; returns cudaError_t; asynchronous on `stream`; allocates
// nothing; no host pass over the offsets and no host synchronisation. segments = 0 does nothing.
// Bad arguments (segments, items < 0, heads < 1, kind not a SoftmaxKind, a null workspaceBytes,
// a null out / offsets with segments > 0, a null input with items > 0, a workspace smaller than
// asked for) return cudaErrorInvalidValue, and nothing is launched or written. Any alignment of
// every pointer. In place (y == x, dx == dy or dx == y) is allowed. A row in several segments
// (overlapping begin/end arrays, CSR offsets that go back) gets each segment's softmax output in no
// fixed order: give the softmax calls segments that do not overlap.
//
// Workspace (CUB's two-call rule). With workspace == nullptr the call writes the bytes it needs to
// *workspaceBytes (at least 1) and returns; the size depends on segments, items, heads, the call and
// the types, and never decreases as any of them grows. It may hold anything on entry and needs no
// alignment; calls in flight at once must not share one. When a segment can be longer than the
// plan's short-segment limit (items above it), each call clears 48 bytes of it with one
// cudaMemsetAsync and runs three or four kernels (five for the softmax); otherwise one kernel. The flat pass (rule G5)
// clears 4 bytes and runs three kernels (four past 2^20 path items); the softmax's (G7, not taken in
// place) one more, which writes the elements of the segments that span its tiles. Rule G6 (one
// head, reductions and log-sum-exp, long on average; G11 medium: 8-32 lanes a segment) runs one
// kernel when items <= directRows, else three (one clears the 48 bytes, no memset). Rule G9 (one
// head, reductions and log-sum-exp, at most 8 rows a segment on average, 32 for the reductions of
// 16-bit values, the softmax at most 5; any offsets) runs one kernel when items <= 64, else three
// (one clears the 48 bytes), and the chunk kernel after them when items > 1024 (the softmax: the
// chunk, write and block kernels). Rule G10 (the softmax of 1 or 4 heads, long on average) runs one
// kernel when no segment can be past a team's four windows, else three (one clears the 48 bytes,
// the team kernel, the block kernel).
//
// How it works: device/detail/segment_plan.cuh (the stages and the rule table) and
// segment_kernels.cuh. Overlapping segments are correct; if their long segments need more room
// than the workspace holds (it is sized for segments that do not overlap), the surplus ones are
// done by single warps (a kernel of their own; under G6 by the block that met them), slower but
// with the same bits.
#pragma once

#include "detail/segment_plan.cuh"
#include "detail/segment_lane.cuh"
#include "detail/segment_team.cuh"
#include "detail/segment_heads.cuh"
#include "detail/segment_flat_run.cuh"

namespace warpkit {

/// Begin/end arrays of segments, as cub::DeviceSegmentedReduce takes them (O: int or long long).
template <typename O> struct SegmentBounds {
    const O* begins;
    const O* ends;
};
/// SegmentBounds from two arrays. Host or device.
template <typename O> WARPKIT_HD SegmentBounds<O> segmentBounds(const O* begins, const O* ends) {
    return SegmentBounds<O>{begins, ends};
}

namespace detail {

template <typename X> struct SegOffsetType {
    static constexpr bool ok = false;
    using O = int;
};
template <> struct SegOffsetType<const int*> {
    static constexpr bool ok = true;
    using O = int;
};
template <> struct SegOffsetType<const long long*> {
    static constexpr bool ok = true;
    using O = long long;
};
template <> struct SegOffsetType<int*> : SegOffsetType<const int*> {};
template <> struct SegOffsetType<long long*> : SegOffsetType<const long long*> {};
template <> struct SegOffsetType<SegmentBounds<int>> : SegOffsetType<const int*> {};
template <> struct SegOffsetType<SegmentBounds<long long>> : SegOffsetType<const long long*> {};

template <typename O> inline SegOffsets<O> segOffsets(const O* csr) { return SegOffsets<O>{csr, csr + 1}; }
template <typename O> inline SegOffsets<O> segOffsets(SegmentBounds<O> b) { return SegOffsets<O>{b.begins, b.ends}; }
template <typename O> inline bool segIsCsr(const O*) { return true; }
template <typename O> inline bool segIsCsr(SegmentBounds<O>) { return false; }
template <typename O> inline bool segOffsetsNull(const O* csr) { return csr == nullptr; }
template <typename O> inline bool segOffsetsNull(SegmentBounds<O> b) {
    return b.begins == nullptr || b.ends == nullptr;
}

#define WARPKIT_CHECK_SEGMENT_OFFSETS(Offs, fn)               \
    static_assert(::warpkit::detail::SegOffsetType<Offs>::ok, \
                  fn ": offsets must be a CSR array of int or long long, or segmentBounds(begins, ends) of them")

/// The workspace's pieces for state type S: the six counters (48 bytes), the entries, the chunk
/// owners, the chunk partials, the entry totals, room for a no-room record a warp step (32 pairs;
/// a plan with minStep < 32 adds room for min(pairs / minStep, 2^14) more: its steps number at
/// most pairs / minStep + 1 and at most pairs / 32 + 1 + resident warps, segmentStepPairs),
/// and for the softmax's slice tier (plan.sliceGroup > 0) an owner entry a slot, a count a slot and
/// `heads` states a slot (segment_slice.cuh; two work items a slot), each 16-byte aligned from the
/// first 16-byte boundary of the workspace. Entries stay below 2^28 (an owner is an int). The slots:
/// a slice-tier segment of n elements takes fewer than n / kSegSliceSlotElems (segSliceSlots), and
/// the segments that do not overlap hold at most items x heads elements.
struct SegSizes {
    long long entries, chunks, words, slots, slotStates;
};
inline SegSizes segSizes(const SegmentPlan& p, long long segments, long long items, int heads) {
    const long long pairs = segments * heads;
    long long e = items / (p.longRows + 1);
    e = e < (1ll << 28) / heads ? e * heads : (1ll << 28) - 1;
    e = e < pairs ? e : pairs;
    long long c = e == 0 ? 0 : items / p.chunkRows;
    c = c < (1ll << 34) / heads ? c * heads + e : (1ll << 36) - 1;
    long long s = e == 0 || p.sliceGroup <= 0 ? 0 : (items < (1ll << 40) / heads ? items * heads : 1ll << 40);
    s = s > kSegBlockMaxElems ? s / kSegSliceSlotElems : 0; // no segment past the block tier: no slots
    long long w = pairs / 32 + 1;
    if (p.minStep < 32) w += (pairs / p.minStep < (1ll << 14) ? pairs / p.minStep : 1ll << 14);
    // the records: no-room steps where a pair can be listed; under G9 a step with a pair past laneRows
    const bool records = p.laneRows > 0 ? items > p.laneRows : e > 0;
    return SegSizes{e, c, records ? w : 0, s, s * heads};
}
inline SegSizes segSizesMax(SegSizes a, SegSizes b) {
    return SegSizes{a.entries > b.entries ? a.entries : b.entries, a.chunks > b.chunks ? a.chunks : b.chunks,
                    a.words > b.words ? a.words : b.words, a.slots > b.slots ? a.slots : b.slots,
                    a.slotStates > b.slotStates ? a.slotStates : b.slotStates};
}
/// The room a call asks for: the largest of its plan's, the long-mean plan's (rule G6 lists pairs
/// from a lower length), the plan with no mean (G1's, whose no-room records G6 lacks) and the
/// shortest mean's (G9's, whose records start past laneRows items), so it never decreases as
/// segments or items grow and the plan enters or leaves G6 or G9.
inline SegSizes segRoom(SegmentKind kind, int elemBytes, int heads, long long segments, long long items, bool csr) {
    const SegmentPlan p = segmentPlan(kind, elemBytes, heads, segments, items, csr);
    const SegmentPlan longMean = segmentPlan(kind, elemBytes, heads, 1, 1ll << 60, csr);
    const SegmentPlan noMean = segmentPlan(kind, elemBytes, heads);
    const SegmentPlan shortMean = segmentPlan(kind, elemBytes, heads, segments > 0 ? segments : 1, 0, csr);
    return segSizesMax(
        segSizesMax(segSizes(p, segments, items, heads), segSizes(longMean, segments, items, heads)),
        segSizesMax(segSizes(noMean, segments, items, heads), segSizes(shortMean, segments, items, heads)));
}
template <typename S> inline size_t segWorkspaceBytes(SegSizes z) {
    if (z.entries == 0 && z.words == 0) return 1;
    return 15 + 48 + alignUp16((size_t)z.entries * sizeof(SegEntry)) + alignUp16((size_t)z.chunks * sizeof(int)) +
           alignUp16((size_t)z.chunks * sizeof(S)) + alignUp16((size_t)z.entries * sizeof(S)) +
           alignUp16((size_t)z.words * sizeof(SegNoRoom)) + alignUp16((size_t)z.slots * 2 * sizeof(int)) +
           alignUp16((size_t)z.slotStates * sizeof(S));
}
template <typename S> inline SegList<S> segList(void* ws, SegSizes z) {
    char* p = alignUp16(ws);
    SegList<S> l;
    l.counter = reinterpret_cast<unsigned long long*>(p);
    l.entries = reinterpret_cast<SegEntry*>(p + 48);
    l.owner = reinterpret_cast<int*>(p + 48 + alignUp16((size_t)z.entries * sizeof(SegEntry)));
    l.partials = reinterpret_cast<S*>(reinterpret_cast<char*>(l.owner) + alignUp16((size_t)z.chunks * sizeof(int)));
    l.totals = reinterpret_cast<S*>(reinterpret_cast<char*>(l.partials) + alignUp16((size_t)z.chunks * sizeof(S)));
    l.noRoom =
        reinterpret_cast<SegNoRoom*>(reinterpret_cast<char*>(l.totals) + alignUp16((size_t)z.entries * sizeof(S)));
    l.sliceOwner =
        reinterpret_cast<int*>(reinterpret_cast<char*>(l.noRoom) + alignUp16((size_t)z.words * sizeof(SegNoRoom)));
    l.sliceCount = l.sliceOwner + z.slots;
    l.sliceStates =
        reinterpret_cast<S*>(reinterpret_cast<char*>(l.sliceOwner) + alignUp16((size_t)z.slots * 2 * sizeof(int)));
    l.maxEntries = z.entries;
    l.maxChunks = z.chunks;
    l.maxSlots = z.slots;
    return l;
}

/// Runs the plan's kernels for algorithm A (see segment_plan.cuh for the stages).
template <int BT, int LT, typename A, typename O>
inline cudaError_t segmentLaunch(const A& a, SegOffsets<O> off, long long segments, int heads, long long items,
                                 const SegmentPlan& p, SegSizes z, void* ws, cudaStream_t stream) {
    using S = typename A::State;
    const SegList<S> list = segList<S>(ws, z);
    // Rule G6 (a plan with directRows), one head, a one-pass algorithm: every segment goes to the
    // direct kernel, and only pairs past directRows rows are listed.
    const bool direct = SegDirect<A>::value && heads == 1 && p.directRows > 0;
    // Rule G9 (a plan with laneRows), one head, a one-pass algorithm or the softmax: every segment
    // goes to the lane kernel, and only pairs past longRows rows are listed.
    const bool lanes = SegLane<A>::value && heads == 1 && p.laneRows > 0;
    const bool longs = items > (direct ? p.directRows : p.longRows); // a pair can be listed: the list and its kernels
    int blocks = 0, dev = 0;
    DeviceProps props;
    WARPKIT_TRY(currentDevice(&dev, &props));
    // On sm_90 the kernels after the first are launched programmatically (pdlAllowed: code compiled
    // for sm_90): their blocks are placed while the kernel before runs and wait for it where they
    // need its results (pdlWait), so each launch's latency overlaps the kernel before it.
    bool early = false;
    if constexpr (SegBlockSoftmax<A>::value) {
        if (p.team > 0) { // rule G10: a team a segment, the longer ones listed for stage 4 (segment_team.cuh)
            const long long e = z.entries, sl = z.slots;
            const int sg = p.sliceGroup, cc = props.cc;
            if (heads == 1 && p.team == 32)
                return segmentTeamLaunch<32, 1>(a, off, segments, items, sg, e, sl, list, dev, cc, stream);
            if (heads == 1 && p.team == 64)
                return segmentTeamLaunch<64, 1>(a, off, segments, items, sg, e, sl, list, dev, cc, stream);
            if (heads == 1 && p.team == 256)
                return segmentTeamLaunch<256, 1>(a, off, segments, items, sg, e, sl, list, dev, cc, stream);
            if (heads == 4 && p.team == 64)
                return segmentTeamLaunch<64, 4>(a, off, segments, items, sg, e, sl, list, dev, cc, stream);
            if constexpr (sizeof(typename A::Elem) == 4)
                if (heads == 4 && p.team == 256)
                    return segmentTeamLaunch<256, 4>(a, off, segments, items, sg, e, sl, list, dev, cc, stream);
            return cudaErrorInvalidConfiguration; // a plan with no compiled kernel (segTeamCompiled)
        }
    }
    if constexpr (SegDirect<A>::value) {
        if (direct) {
            // The counters cleared by a kernel (not a memset), so that the direct kernel's blocks are
            // placed at once behind it; the direct grids: a block a segment, 2^30 blocks a grid.
            if (longs) WARPKIT_TRY(launchKernel(segmentClearKernel<S>, 1, 32, stream, list));
            if (p.team == 0) {
                auto directK = segmentDirectKernel<LT, A, O>;
                if (longs) WARPKIT_TRY(pdlAllowed(directK, dev, props.cc, &early));
                WARPKIT_TRY(segmentGridsLaunch(directK, 1, LT, stream, early, a, off, segments, items, p.directRows,
                                               p.chunkRows, list));
            } else { // rules G11 and G12: teams of p.team lanes (G12: pages of p.page segments), 64 threads a block
                WARPKIT_TRY(segmentDirectTeamLaunch<LT>(a, off, segments, items, p.team, p.page, p.directRows,
                                                        p.chunkRows, list, longs, dev, props.cc, stream));
            }
            if (!longs) return cudaSuccess;
        }
    }
    if constexpr (SegLane<A>::value) {
        if (lanes) { // as the direct kernel: the counters cleared first when a pair can be recorded
            const bool lists = items > p.laneRows;
            if (lists) WARPKIT_TRY(launchKernel(segmentClearKernel<S>, 1, 32, stream, list));
            // the softmax's lean form where the plan's perLane allows it (segment_lane.cuh)
            constexpr int lean = SegRegSoftmax<A>::value ? kSegLaneLeanRows : kSegRegRows;
            auto laneK = p.perLane <= kSegLaneLeanRows ? segmentLaneKernel<LT, A, O, lean>
                                                       : segmentLaneKernel<LT, A, O, kSegRegRows>;
            if (lists) WARPKIT_TRY(pdlAllowed(laneK, dev, props.cc, &early));
            WARPKIT_TRY(gridBlocks(laneK, LT, segments, LT, 1ll << 30, &blocks));
            WARPKIT_TRY(pdlLaunch(laneK, dim3((unsigned)blocks), dim3(LT), stream, early, a, off, segments, items,
                                  p.laneRows, lists, list));
            if (!lists) return cudaSuccess;
            auto rest = segmentLaneRestKernel<BT, LT, A, O>;
            WARPKIT_TRY(pdlAllowed(rest, dev, props.cc, &early));
            WARPKIT_TRY(gridBlocks(rest, BT, z.words, BT / 32, 1ll << 30, &blocks));
            WARPKIT_TRY(pdlLaunch(rest, dim3((unsigned)blocks), dim3(BT), stream, early, a, off, segments, items,
                                  p.longRows, p.chunkRows, list));
            if (!longs) return cudaSuccess;
        }
    }
    if (!direct && !lanes) {
        if (longs) WARPKIT_TRY(cudaMemsetAsync(list.counter, 0, 6 * sizeof(unsigned long long), stream));
        bool byRows = false; // rule G8: stage 1 by segments, a row a vector (segment_heads.cuh)
        if constexpr (SegRegSoftmax<A>::value) {
            byRows = p.byRows && segHeadsAligned(a.x, heads);
            if (byRows)
                WARPKIT_TRY(segmentHeadsLaunch<BT>(a, off, segments, heads, items, p.longRows, p.chunkRows,
                                                   p.sliceGroup, list, stream));
        }
        if (!byRows) {
            // The step: 32 pairs, or fewer (one head, minStep < 32) when the call has fewer than 32
            // pairs a resident warp (segmentStepPairs); never more steps than no-room records fit.
            auto group = segmentGroupKernel<BT, LT, A, O>;
            const long long pairs = segments * heads;
            int step = 32;
            if (heads == 1 && p.minStep < 32) { // only then can the resident warps change the step
                int resident = 0;
                WARPKIT_TRY(residentBlocks(group, BT, dev, props.sms, &resident));
                step = segmentStepPairs(p, pairs, (long long)resident * (BT / 32));
            }
            if (longs && (pairs + step - 1) / step > z.words) step = 32;
            WARPKIT_TRY(gridBlocks(group, BT, pairs, (long long)(BT / 32) * step, 1ll << 30, &blocks));
            WARPKIT_TRY(launchKernel(group, blocks, BT, stream, a, off, segments, heads, items, p.perLane, p.longRows,
                                     p.chunkRows, p.sliceGroup, step, list));
        }
        if (!longs) return cudaSuccess;
        // The no-room kernel: one block an SM at most; with no no-room steps (segments that do not
        // overlap) each warp reads one count and exits, so the launch costs about its own latency.
        auto noRoom = segmentNoRoomKernel<BT, LT, A, O>;
        WARPKIT_TRY(pdlAllowed(noRoom, dev, props.cc, &early));
        WARPKIT_TRY(gridBlocks(noRoom, BT, z.words, BT / 32, props.sms, &blocks));
        WARPKIT_TRY(pdlLaunch(noRoom, dim3((unsigned)blocks), dim3(BT), stream, early, a, off, segments, heads, items,
                              p.chunkRows, list));
    }
    // One head: the listed chunks' rows staged in shared memory for every fold but an addition
    // (tuning.md, "G6 / G1 long pairs": the staged kernel measured slower than segmentChunkKernel on
    // the sums' listed chunks).
    if constexpr (SegChunkStaged<A>::value) {
        if (heads == 1 && !SegAddFold<A>::value) {
            auto staged = segmentChunkStagedKernel<LT, A>;
            WARPKIT_TRY(pdlAllowed(staged, dev, props.cc, &early));
            WARPKIT_TRY(gridBlocks(staged, LT, z.chunks, 1, 1ll << 30, &blocks));
            return pdlLaunch(staged, dim3((unsigned)blocks), dim3(LT), stream, early, a, p.chunkRows, list);
        }
    }
    auto chunk = segmentChunkKernel<LT, A>;
    WARPKIT_TRY(pdlAllowed(chunk, dev, props.cc, &early));
    WARPKIT_TRY(gridBlocks(chunk, LT, z.chunks, 1, 1ll << 30, &blocks));
    WARPKIT_TRY(pdlLaunch(chunk, dim3((unsigned)blocks), dim3(LT), stream, early, a, heads, p.chunkRows, list));
    if constexpr (!A::kTwoPass) return cudaSuccess;
    auto write = segmentWriteKernel<LT, A>;
    WARPKIT_TRY(gridBlocks(write, LT, z.chunks, 1, 1ll << 30, &blocks));
    WARPKIT_TRY(launchKernel(write, blocks, LT, stream, a, heads, p.chunkRows, list));
    if constexpr (SegBlockSoftmax<A>::value) // the softmax's block and slice tiers (stage 4)
        return segmentBlockLaunch(a, heads, p.sliceGroup, z.entries, z.slots, list, dev, props.cc, false, stream);
    return cudaSuccess;
}

/// The common entry: argument checks, the workspace rule, the plan and the launch.
template <typename A, typename Offs> inline cudaError_t segmentRun(const A& a, SegmentKind kind, int elemBytes,
                                                                   bool nullData, bool nullOut, Offs offsets,
                                                                   long long segments, int heads, long long items,
                                                                   void* ws, size_t* wsBytes, cudaStream_t stream) {
    if constexpr (!SegOffsetType<Offs>::ok) {
        return cudaErrorInvalidValue; // refused at compile time by the caller's static_assert
    } else {
        using O = typename SegOffsetType<Offs>::O;
        if (wsBytes == nullptr || segments < 0 || items < 0 || heads < 1 || segments > (1ll << 62) / heads)
            return cudaErrorInvalidValue;
        using S = typename A::State;
        const SegmentPlan p = segmentPlan(kind, elemBytes, heads, segments, items, segIsCsr(offsets));
        const SegSizes z = segRoom(kind, elemBytes, heads, segments, items, segIsCsr(offsets));
        // A call that can take the flat pass asks for the larger of its two workspaces, so the size
        // never decreases as the counts grow, whichever pass the mean length picks.
        const bool flatCapable = SegFlatAlgo<A>::value && segmentFlatCapable(kind, elemBytes, heads);
        const size_t group = segWorkspaceBytes<S>(z);
        const size_t flat = flatCapable ? segFlatBytes<S>(segments, items, SegFlatSoftmax<A>::value) : 0;
        const size_t need = group > flat ? group : flat;
        if (ws == nullptr) {
            *wsBytes = need;
            return cudaSuccess;
        }
        if (*wsBytes < need || (segments > 0 && (nullOut || segOffsetsNull(offsets))) || (items > 0 && nullData))
            return cudaErrorInvalidValue;
        if (segments == 0) return cudaSuccess;
        const SegOffsets<O> off = segOffsets(offsets);
        // The softmax in place (y == x) takes its flat rule's group-kernel fields (G7's are G2's).
        if constexpr (SegFlatAlgo<A>::value)
            if (p.flat && segFlatAllowed(a)) return segmentFlatLaunch(a, off, segments, items, ws, stream);
        if (p.threads == 256 && p.longThreads == 256)
            return segmentLaunch<256, 256>(a, off, segments, heads, items, p, z, ws, stream);
        if (p.threads == 128 && p.longThreads == 128)
            return segmentLaunch<128, 128>(a, off, segments, heads, items, p, z, ws, stream);
        return cudaErrorInvalidConfiguration; // a plan with no compiled kernel (tests/device/segment_plan.cu)
    }
}

#define WARPKIT_CHECK_SEGMENT_SOFTMAX_TYPE(T, fn)             \
    static_assert(::warpkit::detail::IsSoftmaxType<T>::value, \
                  fn ": element type T must be float, __half or __nv_bfloat16")

} // namespace detail

/// out[s] = init op in[b_s] op ... op in[e_s - 1] for each segment s (init for an empty one), in
/// Acc (out's type). init must be an identity of op; op associative. See the header comment.
/// Arguments: items >= 0, segments >= 0; offsets, out not null when segments > 0, in when
/// items > 0. Workspace: CUB's two-call rule (header comment). Bad arguments return
/// cudaErrorInvalidValue with nothing launched or written. Host; asynchronous on `stream`.
template <typename T, typename Acc, typename Op, typename Offs>
inline cudaError_t segmentReduce(const T* in, Acc* out, long long items, Offs offsets, long long segments, Op op,
                                 typename detail::NonDeduced<Acc>::type init, void* workspace, size_t* workspaceBytes,
                                 cudaStream_t stream = 0) {
    WARPKIT_CHECK_SEGMENT_OFFSETS(Offs, "segmentReduce");
    WARPKIT_CHECK_SHUFFLABLE(Acc, "segmentReduce (accumulator, out's type)");
    const detail::SegReduceAlgo<T, Acc, Acc, Op, false> a{in, out, op, init, init};
    return detail::segmentRun(a, detail::SegReduce, (int)sizeof(T), in == nullptr, out == nullptr, offsets, segments, 1,
                              items, workspace, workspaceBytes, stream);
}

// Named forms: out[s] = the sum / maximum / minimum of segment s (0 / lowest / highest when empty),
// accumulated in float for the 16-bit floats and rounded once. Arguments, workspace rule,
// cudaErrorInvalidValue and asynchrony as segmentReduce. Host.
#define WARPKIT_DETAIL_SEGMENT_NAMED(NAME, OP, EMPTY)                                                              \
    template <typename T, typename Offs>                                                                           \
    inline cudaError_t segmentReduce##NAME(const T* in, T* out, long long items, Offs offsets, long long segments, \
                                           void* workspace, size_t* workspaceBytes, cudaStream_t stream = 0) {     \
        WARPKIT_CHECK_REDUCE_TYPE(T, "segmentReduce" #NAME);                                                       \
        WARPKIT_CHECK_SEGMENT_OFFSETS(Offs, "segmentReduce" #NAME);                                                \
        using A = typename detail::Arith<T>::Acc;                                                                  \
        const detail::SegReduceAlgo<T, A, T, OP, false> a{in, out, OP{}, detail::Identity<OP, A>::value(),         \
                                                          detail::Arith<T>::from_acc(EMPTY)};                      \
        return detail::segmentRun(a, detail::SegReduce, (int)sizeof(T), in == nullptr, out == nullptr, offsets,    \
                                  segments, 1, items, workspace, workspaceBytes, stream);                          \
    }
WARPKIT_DETAIL_SEGMENT_NAMED(Sum, Sum, A(0))
WARPKIT_DETAIL_SEGMENT_NAMED(Max, Max, detail::Arith<A>::lowest())
WARPKIT_DETAIL_SEGMENT_NAMED(Min, Min, detail::Arith<A>::highest())
#undef WARPKIT_DETAIL_SEGMENT_NAMED

// ArgMax / ArgMin: out[s] = {value, index in the segment} of the first maximum / minimum (NaN
// wins); an empty segment gets {lowest / highest, -1}. Arguments, workspace rule,
// cudaErrorInvalidValue and asynchrony as segmentReduce. Host.
#define WARPKIT_DETAIL_SEGMENT_ARG(NAME, OP, EMPTY)                                                             \
    template <typename T, typename Offs> inline cudaError_t segmentReduce##NAME(                                \
        const T* in, ValueIndex<T>* out, long long items, Offs offsets, long long segments, void* workspace,    \
        size_t* workspaceBytes, cudaStream_t stream = 0) {                                                      \
        WARPKIT_CHECK_REDUCE_TYPE(T, "segmentReduce" #NAME);                                                    \
        WARPKIT_CHECK_SEGMENT_OFFSETS(Offs, "segmentReduce" #NAME);                                             \
        using V = ValueIndex<T>;                                                                                \
        const T e = detail::Arith<T>::from_acc(EMPTY);                                                          \
        const detail::SegReduceAlgo<T, V, V, OP, true> a{in, out, OP{}, V{e, 2147483647}, V{e, -1}};            \
        return detail::segmentRun(a, detail::SegReduce, (int)sizeof(T), in == nullptr, out == nullptr, offsets, \
                                  segments, 1, items, workspace, workspaceBytes, stream);                       \
    }
WARPKIT_DETAIL_SEGMENT_ARG(ArgMax, ArgMax, detail::Arith<T>::lowest())
WARPKIT_DETAIL_SEGMENT_ARG(ArgMin, ArgMin, detail::Arith<T>::highest())
#undef WARPKIT_DETAIL_SEGMENT_ARG

/// out[s * heads + h] = log(sum(exp(x))) over segment s's rows in column h of x [items, heads]
/// (-inf when empty); see the header comment.
/// Arguments: items >= 0, segments >= 0, heads >= 1; offsets, out not null when segments > 0, x when
/// items > 0. Workspace: CUB's two-call rule (header comment). Bad arguments return
/// cudaErrorInvalidValue with nothing launched or written. Host; asynchronous on `stream`.
template <typename T, typename Offs>
inline cudaError_t segmentLogSumExp(const T* x, T* out, long long items, Offs offsets, long long segments, int heads,
                                    void* workspace, size_t* workspaceBytes, cudaStream_t stream = 0) {
    WARPKIT_CHECK_SEGMENT_SOFTMAX_TYPE(T, "segmentLogSumExp");
    WARPKIT_CHECK_SEGMENT_OFFSETS(Offs, "segmentLogSumExp");
    const detail::SegLogSumExpAlgo<T> a{{x}, out};
    return detail::segmentRun(a, detail::SegLogSumExp, (int)sizeof(T), x == nullptr, out == nullptr, offsets, segments,
                              heads, items, workspace, workspaceBytes, stream);
}

/// y = softmax (kind: SoftmaxPlain, SoftmaxLog, SoftmaxMasked, SoftmaxLogMasked) of each segment's
/// rows, independently in each column of x [items, heads]; rows in no segment, and empty
/// segments, are not written; see the header comment. A kind outside SoftmaxKind is invalid too.
/// Arguments: items >= 0, segments >= 0, heads >= 1; offsets, y not null when segments > 0, x when
/// items > 0. Workspace: CUB's two-call rule (header comment). Bad arguments return
/// cudaErrorInvalidValue with nothing launched or written. Host; asynchronous on `stream`.
template <typename T, typename Offs>
inline cudaError_t segmentSoftmax(const T* x, T* y, long long items, Offs offsets, long long segments, int heads,
                                  SoftmaxKind kind, void* workspace, size_t* workspaceBytes, cudaStream_t stream = 0) {
    WARPKIT_CHECK_SEGMENT_SOFTMAX_TYPE(T, "segmentSoftmax");
    WARPKIT_CHECK_SEGMENT_OFFSETS(Offs, "segmentSoftmax");
    if (kind < 0 || kind > 3) return cudaErrorInvalidValue;
    auto run = [&](auto algo) {
        return detail::segmentRun(algo, detail::SegSoftmax, (int)sizeof(T), x == nullptr, y == nullptr, offsets,
                                  segments, heads, items, workspace, workspaceBytes, stream);
    };
    if (kind == SoftmaxPlain) return run(detail::SegSoftmaxAlgo<T, SoftmaxPlain>{{x}, y});
    if (kind == SoftmaxLog) return run(detail::SegSoftmaxAlgo<T, SoftmaxLog>{{x}, y});
    if (kind == SoftmaxMasked) return run(detail::SegSoftmaxAlgo<T, SoftmaxMasked>{{x}, y});
    return run(detail::SegSoftmaxAlgo<T, SoftmaxLogMasked>{{x}, y});
}

/// dx from the softmax output y and its gradient dy, per segment and column (kind: a log kind takes
/// the log-softmax backward); see the header comment. A kind outside SoftmaxKind is invalid too.
/// Arguments: items >= 0, segments >= 0, heads >= 1; offsets, dx not null when segments > 0, y and dy when
/// items > 0. Workspace: CUB's two-call rule (header comment). Bad arguments return
/// cudaErrorInvalidValue with nothing launched or written. Host; asynchronous on `stream`.
template <typename T, typename Offs>
inline cudaError_t segmentSoftmaxBackward(const T* y, const T* dy, T* dx, long long items, Offs offsets,
                                          long long segments, int heads, SoftmaxKind kind, void* workspace,
                                          size_t* workspaceBytes, cudaStream_t stream = 0) {
    WARPKIT_CHECK_SEGMENT_SOFTMAX_TYPE(T, "segmentSoftmaxBackward");
    WARPKIT_CHECK_SEGMENT_OFFSETS(Offs, "segmentSoftmaxBackward");
    if (kind < 0 || kind > 3) return cudaErrorInvalidValue;
    const bool nullIn = y == nullptr || dy == nullptr;
    if (kind & SoftmaxLog)
        return detail::segmentRun(detail::SegSoftmaxBackwardAlgo<T, true>{y, dy, dx}, detail::SegSoftmaxBackward,
                                  (int)sizeof(T), nullIn, dx == nullptr, offsets, segments, heads, items, workspace,
                                  workspaceBytes, stream);
    return detail::segmentRun(detail::SegSoftmaxBackwardAlgo<T, false>{y, dy, dx}, detail::SegSoftmaxBackward,
                              (int)sizeof(T), nullIn, dx == nullptr, offsets, segments, heads, items, workspace,
                              workspaceBytes, stream);
}

} // namespace warpkit
