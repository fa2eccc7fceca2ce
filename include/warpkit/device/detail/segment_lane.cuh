// warpkit/device/detail/segment_lane.cuh: rule G9's kernel behind device/segment.cuh (stage 1b of
// segment_plan.cuh, a plan with laneRows): a lane a segment, for short segments on average.
// Internal: include warpkit/device/segment.cuh.
//
// Warp w of the grid-stride loop takes segments 32 w .. 32 w + 31, one a lane. A segment of at
// most laneRows rows is folded by its own lane, left to right from the identity (segLaneFold); a
// longer one is recorded for the rest kernel, where a warp folds one of up to longRows rows (lanes
// strided, warpTree) and lists a longer one for the chunk kernels (listAppend, as the group kernel
// lists), or, when it finds no room (only segments that overlap), folds it with the chunk
// kernels' math. Each order depends on the segment's length alone, so the bits never depend on the
// grid, the device or which warp ran first. Any offsets: begin/end arrays, CSR, offsets that go
// back or overlap (each segment is read on its own). The lane kernel fills an SM with threads (on
// sm_90 2048 of 32 registers) and loads each step's offsets during the step before, so its cost is
// the bytes: no tile, scan or second pass; no warp of it waits on a longer segment, which the rest
// kernel's warps take after it.
//
// The softmax holds a segment's rows in registers: one read and one exp an element
// (segment_softmax.cuh). At means up to 2 (a plan's perLane kSegLaneLeanRows: segLaneSoftmaxLean)
// only by its own lane, up to that many rows, so that the kernel keeps 32 registers; at longer
// means (segLaneSoftmax) by its own lane up to kSegRegRows rows, by a group of
// kSegLaneGroup lanes up to kSegLaneGroupRows (a step's such segments eight groups at a time), by
// its lane's fold and a second read up to laneRows. A lane's stores write a few elements of lines
// that its neighbours' stores write too, so a step whose segments are all in registers and back to
// back, with more than kSegLaneStageRows rows together, stages its outputs in shared memory and
// writes them in one coalesced pass. The rest kernel takes a segment of up to 32 kSegRegRows rows
// in the warp's registers, a longer one of 4-byte values by windows (segmentSoftmaxWide).
#pragma once

#include "segment_direct.cuh"
#include "segment_softmax.cuh"

namespace warpkit {
namespace detail {

/// The softmax's lean lane kernel (a plan's perLane at most this: the means up to 2) holds this
/// many rows of a segment in a lane's registers, and nothing else in registers or shared memory.
constexpr int kSegLaneLeanRows = 4;

/// Blocks of the lane kernel an SM holds at least (RK: the softmax's rows a lane holds in
/// registers): all the threads an SM holds for a one-word floating-point state and element and for
/// the lean softmax (32 registers on sm_90: its loads in flight set the speed), else the direct
/// kernel's (32-bit integers spill 16 bytes at 32 registers).
template <int LT, typename A, int RK> struct SegLaneMinBlocks {
    static constexpr int value = SegChunkBatch<A>::kOneWord && Arith<typename A::Elem>::is_float
                                     ? kSegSmThreads / LT
                                     : SegDirectMinBlocks<LT, A>::value;
};
/// The softmax's other form: 1280 threads an SM (48 registers on sm_90: its registers and lane
/// groups fit without spilling), or all an SM holds where that is fewer.
template <int LT, typename T, int K, int RK> struct SegLaneMinBlocks<LT, SegSoftmaxAlgo<T, K>, RK> {
    static constexpr int value =
        RK <= kSegLaneLeanRows ? kSegSmThreads / LT : (kSegSmThreads < 1280 ? kSegSmThreads : 1280) / LT;
};

/// Whether the lane kernel and its rest kernel run algorithm A: the one-pass kinds (reduce,
/// log-sum-exp) and the softmax.
template <typename A> struct SegLane { static constexpr bool value = SegDirect<A>::value || SegRegSoftmax<A>::value; };

/// The softmax's lane kernel (segLaneSoftmax): a segment of up to kSegLaneGroupRows rows in the
/// registers of kSegLaneGroup lanes; a warp step's outputs staged from kSegLaneStageRows rows, in a
/// stage of kSegLaneStageCap elements a warp.
constexpr int kSegLaneGroup = 4, kSegLaneGroupRows = kSegLaneGroup * kSegRegRows, kSegLaneStageCap = 512;
constexpr int kSegLaneStageRows = 96;

/// Whether segLaneFold takes a batch of values at once: the log-sum-exp's state (one max over the
/// batch, then an exp a value and one rescale: no branch a value, so the batch's loads stay ahead).
template <typename A> struct SegLaneBatchTake { static constexpr bool value = false; };
template <typename T> struct SegLaneBatchTake<SegLogSumExpAlgo<T>> { static constexpr bool value = true; };

/// Left fold of rows [0, rows) of the segment at element `base` by one lane: batches of 4 loads in
/// flight, then the last rows one at a time (a short segment issues only its own loads); the
/// log-sum-exp takes its last rows as one batch too, the missing ones -inf (which add nothing).
template <typename A> WARPKIT_DEVICE typename A::State segLaneFold(const A& a, long long base, int rows) {
    using E = typename A::Elem;
    typename A::State st = a.identity();
    int r = 0;
    for (; r + 4 <= rows; r += 4) {
        E x[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) x[k] = a.load(base + r + k);
        if constexpr (SegLaneBatchTake<A>::value) {
            st = softmaxStateUpdate(st, x);
        } else {
#pragma unroll
            for (int k = 0; k < 4; ++k) st = a.take(st, x[k], r + k);
        }
    }
    if constexpr (SegLaneBatchTake<A>::value) {
        if (r < rows) {
            E x[3];
#pragma unroll
            for (int k = 0; k < 3; ++k) x[k] = r + k < rows ? a.load(base + r + k) : Arith<E>::from_acc(negInf());
            st = softmaxStateUpdate(st, x);
        }
    } else {
        for (; r < rows; ++r) st = a.take(st, a.load(base + r), r);
    }
    return st;
}

/// The lean form of segLaneSoftmax (means up to 2): a segment of up to kSegLaneLeanRows rows in its
/// lane's registers, a longer one of up to laneRows rows by its lane's fold and a second read; no
/// lane groups and no stage, so that the kernel keeps 32 registers and every thread an SM holds
/// (a step of segments this short writes few lines). `valid`: this lane's segment is a segment.
template <typename T, int Kind> WARPKIT_DEVICE void segLaneSoftmaxLean(const SegSoftmaxAlgo<T, Kind>& a, bool valid,
                                                                       long long b, long long rows, int laneRows) {
    if (!valid || rows == 0 || rows > laneRows) return;
    if (rows <= kSegLaneLeanRows)
        return segmentSoftmaxRegs<T, Kind, kSegLaneLeanRows>(a.x + b, a.y + b, 1, 0, (int)rows, 1);
    writeRows(a, a.prepare(segLaneFold(a, b, (int)rows)), b, 0, 1, 0, rows, 1);
}

/// The softmax's warp step (one head): every segment of at most laneRows rows, each in registers
/// where it fits: up to kSegRegRows rows by its own lane, up to kSegLaneGroupRows by a group of
/// kSegLaneGroup lanes (the step's such segments eight at a time, as segmentSoftmaxTier's groups);
/// longer ones by their lane's left fold and a second read. Where the step's segments are all in
/// registers, each begins where the lane before ends, and together they hold more than
/// kSegLaneStageRows rows (and fit `stage`, kSegLaneStageCap elements of this warp's), their
/// outputs are staged in shared memory and written by the warp in one coalesced pass: a lane's own
/// stores would each write a piece of lines its neighbours write too. Each segment's order depends
/// on its length alone (staged or not). `valid`: this lane's segment is a segment (lanes past the
/// last, `last`, are not; lane 0's is). All 32 lanes call.
template <typename T, int Kind> WARPKIT_DEVICE void segLaneSoftmax(const SegSoftmaxAlgo<T, Kind>& a, T* stage,
                                                                   bool valid, long long b, long long rows, int last,
                                                                   int laneRows) {
    constexpr int G = kSegLaneGroup, GR = kSegLaneGroupRows;
    const int lane = (int)laneId();
    // 1. staged or not: the same for every lane
    const long long end = b + rows, prevEnd = __shfl_up_sync(WARPKIT_FULL_MASK, end, 1);
    const bool fits = !valid || (rows <= GR && (lane == 0 || b == prevEnd));
    const long long first = shflIdx(b, 0);
    const long long total = shflIdx(end, last) - first;
    const bool staged = __all_sync(WARPKIT_FULL_MASK, fits) && total > kSegLaneStageRows && total <= kSegLaneStageCap;
    // 2. the segments in registers, written to y or to the stage
    if (valid && rows > 0 && rows <= kSegRegRows)
        segmentSoftmaxRegs<T, Kind>(a.x + b, staged ? stage + (b - first) : a.y + b, 1, 0, (int)rows, 1);
    const unsigned mid = __ballot_sync(WARPKIT_FULL_MASK, valid && rows > kSegRegRows && rows <= GR);
    const int count = __popc(mid);
#pragma unroll 1
    for (int k0 = 0; k0 < count; k0 += 32 / G) {
        const int k = k0 + lane / G; // this group's segment: mid's k-th lane
        const int src = k < count ? (int)__fns(mid, 0u, k + 1) : 0;
        const long long pb = shflIdx(b, src);
        const int pr = shflIdx((int)rows, src);
        segmentSoftmaxRegs<T, Kind>(a.x + pb, staged ? stage + (pb - first) : a.y + pb, 1, lane & (G - 1),
                                    k < count ? pr : 0, G);
    }
    // 3. the longer ones by their lane (never staged)
    if (valid && rows > GR && rows <= laneRows) {
        const SoftmaxState st = segLaneFold(a, b, (int)rows);
        writeRows(a, a.prepare(st), b, 0, 1, 0, rows, 1);
    }
    if (!staged) return;
    __syncwarp();
    for (int i = lane; i < (int)total; i += 32) a.y[first + i] = stage[i];
    __syncwarp(); // the stage is read before the next step writes it
}

/// Stage 1b, rule G9 (one head, the one-pass algorithms and the softmax, a plan with laneRows):
/// every segment, a lane a segment (see the file's head); RK: the softmax's rows a lane holds in
/// registers (kSegLaneLeanRows: its lean form). `lists`: some segment can be past laneRows (items
/// > laneRows); then the counters were cleared by the kernel before (segmentClearKernel), which
/// only a warp that records a step waits for (pdlWait), and block 0 waits before it exits so that
/// the kernels after, which wait for this grid, see the cleared counters too. A warp step with
/// segments past laneRows is recorded (list.noRoom: the step's first segment and a mask of its
/// lanes; one record a step at most) for segmentLaneRestKernel: no warp here waits on a longer
/// segment, so the grid's warps stay evenly loaded whatever the lengths' spread.
template <int LT, typename A, typename O, int RK = kSegRegRows>
__global__ void __launch_bounds__(LT, SegLaneMinBlocks<LT, A, RK>::value)
    segmentLaneKernel(A a, SegOffsets<O> off, long long segments, long long items, int laneRows, bool lists,
                      SegList<typename A::State> list) {
    WARPKIT_CHECK_SEGMENT_ALGO(A, "segmentLaneKernel");
    static_assert(SegLane<A>::value, "segmentLaneKernel: A must be a one-pass algorithm (SegDirect) or the "
                                     "softmax (SegRegSoftmax)");
    pdlLaunchDependents();
    const int lane = (int)laneId();
    const long long stride = (long long)gridDim.x * LT;
    long long s0 = (long long)blockIdx.x * LT + (threadIdx.x & ~31u), nb = 0, ne = 0;
    segmentBoundsAt(off, s0 + lane, segments, &nb, &ne);
    for (; s0 < segments; s0 += stride) {
        // 1. this lane's segment: empty, or folded here when short; the next step's offsets load
        //    meanwhile (two round trips a step would otherwise follow each other)
        const long long s = s0 + lane;
        long long b = 0;
        const long long rows = segmentClip(nb, ne, items, &b); // 0 past the last segment
        segmentBoundsAt(off, s + stride, segments, &nb, &ne);
        if constexpr (SegRegSoftmax<A>::value && RK <= kSegLaneLeanRows) {
            segLaneSoftmaxLean(a, s < segments, b, rows, laneRows);
        } else if constexpr (SegRegSoftmax<A>::value) {
            __shared__ typename A::Elem stage[LT / 32][kSegLaneStageCap];
            const long long left = segments - s0 - 1;
            segLaneSoftmax(a, stage[threadIdx.x / 32], s < segments, b, rows, left < 31 ? (int)left : 31, laneRows);
        } else if (s < segments && rows <= laneRows) {
            if (rows == 0) a.empty(s);
            else a.finish(s, segLaneFold(a, b, (int)rows));
        }
        // 2. the longer ones, recorded for the rest kernel
        const unsigned rest = __ballot_sync(WARPKIT_FULL_MASK, rows > laneRows);
        if (lists && rest != 0u && lane == 0) {
            pdlWait(); // the counters, cleared by the kernel before
            list.noRoom[atomicAdd(list.counter + 2, 1ull)] = SegNoRoom{s0, rest};
        }
    }
    if (blockIdx.x == 0) pdlWait();
}

/// Stage 1c of rule G9: the lane kernel's recorded steps, warp w of the grid taking records w,
/// w + warps, ... (each step's record loads during the one before). A recorded segment past
/// longRows is listed for the chunk kernels (listAppend); one of up to longRows rows is folded by
/// the warp (lanes strided, SegTierBatch loads in flight a lane, warpTree in lane order: an order
/// set by its length), and a listed one that found no room (only segments that overlap) with the
/// chunk kernels' math (longPairByWarp). Waits for the lane kernel (pdlWait).
template <int BT, int LT, typename A, typename O> __global__ void __launch_bounds__(BT, 2)
    segmentLaneRestKernel(A a, SegOffsets<O> off, long long segments, long long items, long long longRows,
                          long long chunkRows, SegList<typename A::State> list) {
    WARPKIT_CHECK_SEGMENT_ALGO(A, "segmentLaneRestKernel");
    pdlLaunchDependents();
    pdlWait(); // the lane kernel's records
    const int lane = (int)laneId();
    const long long steps = (long long)list.counter[2], warps = (long long)gridDim.x * (BT / 32);
    long long t = ((long long)blockIdx.x * BT + threadIdx.x) / 32;
    SegNoRoom r = t < steps ? list.noRoom[t] : SegNoRoom{0, 0u};
    for (; t < steps; t += warps) {
        const SegNoRoom next = t + warps < steps ? list.noRoom[t + warps] : SegNoRoom{0, 0u};
        const long long p = r.first + lane;
        long long ob = 0, oe = 0, b = 0;
        segmentBoundsAt(off, p, (r.mask >> lane) & 1u ? segments : 0, &ob, &oe);
        const long long rows = segmentClip(ob, oe, items, &b); // 0 for the lanes not recorded
        const unsigned noRoom =
            __ballot_sync(WARPKIT_FULL_MASK, listAppend(list, rows > longRows, p, 0, 1, b, rows, chunkRows));
        unsigned folds = __ballot_sync(WARPKIT_FULL_MASK, rows > 0 && rows <= longRows);
        if constexpr (SegRegSoftmax<A>::value) { // in registers by the warp, as the group kernel's 32-lane tier
            const unsigned inRegs =
                folds & __ballot_sync(WARPKIT_FULL_MASK, rows <= 32 * kSegRegRows || kSegWideRegs<typename A::Elem>);
            if (inRegs) segmentSoftmaxTier(a, 32, inRegs, b, (int)rows, 0, 1);
            folds &= ~inRegs;
        }
#pragma unroll 1
        for (unsigned m = folds; m; m &= m - 1) {
            const int src = __ffs(m) - 1;
            const long long sb = shflIdx(b, src), sr = shflIdx(rows, src);
            const typename A::State st = warpTree(a, foldRows<A, SegTierBatch<A>::value>(a, sb, 0, 1, lane, sr, 32));
            if (lane == 0) a.finish(r.first + src, st);
            if constexpr (A::kTwoPass) writeRows(a, a.prepare(st), sb, 0, 1, lane, sr, 32);
        }
#pragma unroll 1
        for (unsigned m = noRoom; m; m &= m - 1) {
            const int src = __ffs(m) - 1;
            longPairByWarp<LT>(a, r.first + src, shflIdx(b, src), shflIdx(rows, src), 1, chunkRows);
        }
        r = next;
    }
}

} // namespace detail
} // namespace warpkit
