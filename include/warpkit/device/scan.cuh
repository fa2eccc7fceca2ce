// warpkit/device/scan.cuh: prefix scans of a whole array, called from the host, in ONE pass over
// the data (every element read once and written once), bitwise deterministic for floats.
//
//   warpkit::deviceInclusiveScan(in, out, n, op, workspace, &bytes, stream)        out[i] = in[0] op ... op in[i]
//   warpkit::deviceExclusiveScan(in, out, n, op, init, workspace, &bytes, stream)  out[0] = init,
//                                                  out[i] = init op in[0] op ... op in[i-1]
//   warpkit::deviceInclusiveSum / deviceExclusiveSum(in, out, n, workspace, &bytes, stream)
//   warpkit::SegmentedPair<T>, SegmentedOp<Op>    a scan restarting at head flags (see below)
//
// This is the way to scan a long array. Write your own tile loop (block/scan.cuh's ...Running
// forms, samples/tiled_scan.cu) only to fuse a scan into other work of one block.
//
// Operators and types. op: any associative `T op(T, T)`, commutative or not (the left operand
// always comes from lower indices); it must be a function of its operands (same operands, same
// bits). T: any trivially copyable, default-constructible type: int, unsigned, long long, float,
// double, structs. Types of 1, 2, 4, 8 or 16 bytes move as 16-byte vectors (thread/vector.cuh);
// others element by element. The Sum forms take int, unsigned, long long, unsigned long long,
// float, double, __half and __nv_bfloat16 and add in T (integers wrap); the exclusive sum's init is 0.
//
// Conventions (docs/design.md). Host; returns cudaError_t; asynchronous on `stream`; allocates
// nothing. Any n >= 0 (64-bit; above 2^32 included; n = 0 does nothing); any element alignment of
// `in` and `out`, independently; in == out (in place) is allowed, any other overlap is not. Bad
// arguments (n < 0, a null workspaceBytes, a null in or out with n > 0, in and out overlapping
// without being equal, *workspaceBytes smaller than the size asked for, more than 2^31 - 1 tiles:
// n above about 2^44 for 4-byte types) return cudaErrorInvalidValue, and nothing is launched or
// written. The device's SM count and shared memory are queried once per device (detail/host.cuh).
// The kernel is a cooperative launch of at most one block an SM: a device too small for even one
// stage (below) gets cudaErrorInvalidConfiguration, and a launch the device cannot make resident
// at all (another context holding every SM) gets the launch's own error.
//
// Workspace (CUB's two-call rule). With workspace == nullptr the call writes the bytes it needs for
// this n and T to *workspaceBytes and returns (0 for n = 0); otherwise *workspaceBytes must be at
// least that. The workspace holds one status record per tile (8 bytes for types of up to 4
// bytes); it may hold anything on entry and needs no alignment: each call clears it with one
// cudaMemsetAsync on `stream` before its kernel. Calls on different streams with different
// workspaces are independent; two calls in flight at once must not share one.
//
// Method (rules S1-S7, measured in docs/tuning.md): Merrill and Garland's decoupled look-back
// over tiles of 480 threads x C 16-byte slots (9600 int or float, 4800 double), with a persistent,
// software-pipelined grid: block b of a grid of one block an SM takes tiles b, b + grid, b + 2 grid,
// ... The launch is cooperative, so the whole grid is resident and a block waiting on any earlier
// tile cannot deadlock. A block is 15 tile warps and one look-back warp, and keeps `stages` tiles in
// shared memory (scanPlan). Row c of a tile is 480 consecutive 16-byte slots, thread g holding slot
// g of each row, so every copy and store instruction of a warp covers 512 contiguous bytes; the
// slots lie on `in`'s 16-byte grid, so only the array's first and last slots are partial. The tile
// threads run, for each tile j, the stages of device/detail/scan_tile.cuh: load (from the stage,
// where async copies put it while earlier tiles were scanned; partial tiles, misaligned or sm_75
// inputs load directly), local scan, publish (the aggregate), stash (the in-tile results back in
// the stage), then finish tile j - lag with the prefix the look-back warp has formed for it
// meanwhile, and refill its stage. The look-back warp forms each tile's exclusive prefix with
// device/detail/lookback.cuh and hands it over through the slots of
// device/detail/scan_handoff.cuh. So each look-back has `lag` tiles' time to wait for the blocks
// before it, and stages - lag - 1 tiles are loading while a block scans. Every pipeline gives the
// same bits.
//
// Determinism: for a given input at a given address modulo 16 bytes, op, T, GPU and build, the
// output is the same bits on every run, whatever the timing: stream, concurrent work, which tiles
// happen to have published what (it does not depend on `out`'s address or on in == out). Within a
// tile everything is in a fixed order (the slot's left fold, the tile scan's fixed tree, the row
// chain), so the tile aggregate agg(t) and every in-tile partial are fixed bits; across tiles the
// look-back's left fold gives incl(t - 1) = the left chain of the aggregates, bit for bit, whichever
// tiles it looked past (device/detail/lookback.cuh; incl(0) = agg(0), or init op agg(0) for the
// exclusive scan). The fold costs one op per tile looked past, in the look-back warp, off the tile
// threads' path; integer, max and min scans gain nothing from the fixed order but pay no more.
//
// Segmented scans. SegmentedPair<T>{value, head} with SegmentedOp<Op>{op}:
//   (a, ha) (+) (b, hb) = (hb ? b : a op b, ha | hb)
// is associative (not commutative), so deviceInclusiveScan over pairs gives, for each element,
// op over its segment up to and including it, a segment starting at every element whose head is
// nonzero (and at element 0). For an exclusive segmented scan, scan the pairs inclusively and
// read, at each element, the previous element's value (init at segment heads).
#pragma once

#include "../detail/host.cuh"
#include "detail/scan_tile.cuh"

namespace warpkit {

/// An element of a segmented scan: a value and its head flag (nonzero: a segment starts here).
template <typename T> struct SegmentedPair {
    T value;
    int head;
};

/// The segmented-scan operator over SegmentedPair: (a, ha) (+) (b, hb) = (hb ? b : a op b, ha | hb).
/// Associative whenever op is; host and device.
template <typename Op> struct SegmentedOp {
    Op op;
    template <typename T>
    WARPKIT_HD SegmentedPair<T> operator()(const SegmentedPair<T>& a, const SegmentedPair<T>& b) const {
        SegmentedPair<T> r;
        r.value = b.head ? b.value : op(a.value, b.value);
        r.head = a.head | b.head;
        return r;
    }
};

namespace detail {

// ---- the plan -------------------------------------------------------------------------------------

/// A pipeline: `stages` tiles in shared memory, each finished `lag` tiles after its scan.
struct ScanPlan {
    int stages; // 0: not even one stage fits (the launch returns cudaErrorInvalidConfiguration)
    int lag;
};

// S3: the stages take the block's shared memory but the kernel's own ScanShared (kScanKernelSmem,
// 8 KB, or the ScanShared itself for element types too large for that), at most kScanMaxStages.
constexpr int kScanKernelSmem = 8 * 1024;
template <typename T> constexpr int scanKernelSmem() {
    return (int)sizeof(ScanShared<T>) > kScanKernelSmem ? (int)sizeof(ScanShared<T>) : kScanKernelSmem;
}
constexpr int kScanMaxStages = 8;

/// A lag rule: with at least `minStages` stages, the lag is `lag`.
struct ScanLagRule {
    const char* id;
    int minStages;
    int lag;
};
/// Scanned top to bottom; the first rule the stages reach decides. Each leaves one stage loading
/// ahead of the one scanned where there are two stages or more.
constexpr ScanLagRule kScanLagRules[] = {
    {"S4", 5, kScanLagMax}, // 5 stages or more: the longest wait for the look-back
    {"S5", 4, 2},
    {"S6", 3, 1},
    {"S7", 0, 0}, // 1 or 2 stages: the prefix waited for at once
};

/// The pipeline for T on a device whose blocks may have smemOptin bytes of shared memory. Host.
template <typename T> inline ScanPlan scanPlan(int smemOptin) {
    const int fit = (smemOptin - scanKernelSmem<T>()) / ScanStage<T>::bytes; // S3
    ScanPlan pl{fit < 0 ? 0 : (fit > kScanMaxStages ? kScanMaxStages : fit), 0};
    for (const ScanLagRule& r : kScanLagRules) {
        if (pl.stages >= r.minStages) {
            pl.lag = r.lag;
            break;
        }
    }
    return pl;
}

/// A pipeline the kernel runs: a lag of 0 to kScanLagMax and a stage beyond it (a stage holds a tile
/// from its load until its store).
constexpr bool scanPipelineRuns(int stages, int lag) { return lag >= 0 && lag <= kScanLagMax && stages > lag; }

/// Tiles of a call on n elements when in's misalignment is `head` elements.
template <typename T> constexpr long long scanTiles(long long n, int head) {
    using S = ScanShape<T>;
    const long long slots = (n + head + S::V - 1) / S::V;
    return (slots + S::tileSlots - 1) / S::tileSlots;
}

/// The largest n a call takes: 2^31 - 1 tiles.
template <typename T> constexpr long long scanMaxElems() {
    return 2147483647LL * ScanShape<T>::tileElems - ScanShape<T>::V;
}

/// Workspace bytes for n elements: 16 bytes of alignment slack and the status records.
template <typename T> constexpr size_t scanWorkspaceBytes(long long n) {
    return n == 0 ? 0 : 16 + lookbackBytes<T>(scanTiles<T>(n, ScanShape<T>::V - 1));
}

// ---- the kernel -----------------------------------------------------------------------------------

/// The one-pass scan (header comment): the look-back warp's loop, or the tile threads' pipeline
/// of stages (device/detail/scan_tile.cuh).
template <typename T, typename Op, bool Exclusive> __global__ void __launch_bounds__(kScanBlockThreads, 1)
    deviceScanKernel(const ScanParams<T, Op> p) {
    using S = ScanShape<T>;
    extern __shared__ uint4 stageShared[]; // stages x C x G slots of V elements
    __shared__ ScanShared<T> sh;
    scanHandInit(sh);
    const int g = (int)threadIdx.x;
    const long long step = gridDim.x;
    const long long count = (p.tiles - (long long)blockIdx.x + step - 1) / step; // tiles of this block
    if (g >= kScanThreads) {
        scanLookBackWarp(p, sh, g & 31, step, count);
        return;
    }
    // Whole tiles with vector loads go through shared memory by async copies on sm_80 and newer.
    const bool async = WARPKIT_ARCH >= 800 && S::vec && p.flags.vecIn && p.flags.prefetch;
    const ScanThread<T> th{g, g & 31, g >> 5, step, reinterpret_cast<T*>(stageShared), async};
#pragma unroll
    for (int st = 0; st < p.stages; ++st) scanPrefetch(p, th, blockIdx.x + st * step, st);
    for (long long j = 0; j < count; ++j) {
        const long long tile = blockIdx.x + j * step;
        const int s = (int)(j % p.stages);
        T x[S::C][S::V], pre[S::C];
        scanTileLoad(p, th, tile, j, s, x);
        const int skip = (tile == 0 && g == 0) ? p.head : 0; // positions before element 0
        const T agg = scanTileScan(p, th, sh, j, skip, x, pre);
        scanTilePublish<Exclusive>(p, th, sh, tile, j, agg);
        scanTileStash<Exclusive>(p, th, s, skip, x, pre);
        // The tile `lag` before: its prefix has had `lag` tiles' time to arrive.
        if (j >= p.lag) scanTileFinish<Exclusive>(p, th, sh, j - p.lag);
        else asyncCopyCommit(); // one group a tile, as the finish's refill
    }
    for (long long j = count > p.lag ? count - p.lag : 0; j < count; ++j) scanTileFinish<Exclusive>(p, th, sh, j);
}

// ---- the launch -----------------------------------------------------------------------------------

/// Scans n >= 1 elements with the pipeline (stages, lag) on at most maxBlocks blocks (0: as many
/// as are resident), the status records at `status` (16-byte aligned, scanWorkspaceBytes - 16
/// bytes): clears them on `stream`, then launches. The arguments are checked by the caller;
/// cudaErrorInvalidValue for a pipeline that is not one (lag above kScanLagMax, stages <= lag).
template <bool Exclusive, typename T, typename Op>
inline cudaError_t deviceScanRun(const T* in, T* out, long long n, Op op, T init, unsigned long long* status,
                                 int stages, int lag, int maxBlocks, cudaStream_t stream) {
    using S = ScanShape<T>;
    if (!scanPipelineRuns(stages, lag) || maxBlocks < 0) return cudaErrorInvalidValue;
    // The slot grid: in's 16-byte grid when in is aligned as T's size, else element by element.
    const size_t a = (size_t)in, b = (size_t)out;
    const bool vecIn = S::vec && a % sizeof(T) == 0;
    const int head = vecIn ? (int)((a % 16) / sizeof(T)) : 0;
    const bool vecOut = S::vec && (b - (size_t)head * sizeof(T)) % 16 == 0;
    const long long tiles = scanTiles<T>(n, head);
    const auto kernel = deviceScanKernel<T, Op, Exclusive>;
    const int smem = stages * ScanStage<T>::bytes;
    int dev = 0, resident = 0;
    DeviceProps d;
    WARPKIT_TRY(currentDevice(&dev, &d));
    WARPKIT_TRY(allowDynamicSmem(kernel, dev, smem));
    WARPKIT_TRY(residentBlocks(kernel, kScanBlockThreads, dev, d.sms, &resident, smem));
    long long blocks = tiles < resident ? tiles : resident;
    if (maxBlocks > 0 && blocks > maxBlocks) blocks = maxBlocks;
    WARPKIT_TRY(lookbackClear<T>(status, tiles, stream));
    // Cooperative: every block of the grid (at most the resident blocks) runs at once.
    cudaLaunchAttribute coop;
    coop.id = cudaLaunchAttributeCooperative;
    coop.val.cooperative = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)blocks);
    cfg.blockDim = dim3((unsigned)kScanBlockThreads);
    cfg.dynamicSmemBytes = (size_t)smem;
    cfg.stream = stream;
    cfg.attrs = &coop;
    cfg.numAttrs = 1;
    const ScanParams<T, Op> p{in,    out,    n,   op,    init, head, ScanFlags{vecIn, vecOut, stages >= lag + 2},
                              tiles, stages, lag, status};
    return cudaLaunchKernelEx(&cfg, kernel, p);
}

template <bool Exclusive, typename T, typename Op>
inline cudaError_t deviceScanLaunch(const T* in, T* out, long long n, Op op, T init, void* workspace,
                                    size_t* workspaceBytes, cudaStream_t stream) {
    if (workspaceBytes == nullptr || n < 0 || n > scanMaxElems<T>()) return cudaErrorInvalidValue;
    const size_t need = scanWorkspaceBytes<T>(n);
    if (workspace == nullptr) {
        *workspaceBytes = need;
        return cudaSuccess;
    }
    if (n == 0) return cudaSuccess;
    const size_t a = (size_t)in, b = (size_t)out, bytes = (size_t)n * sizeof(T);
    if (in == nullptr || out == nullptr || *workspaceBytes < need) return cudaErrorInvalidValue;
    if (a != b && a < b + bytes && b < a + bytes) return cudaErrorInvalidValue;
    int dev = 0;
    DeviceProps d;
    WARPKIT_TRY(currentDevice(&dev, &d));
    const ScanPlan pl = scanPlan<T>(d.smemOptin);
    if (pl.stages < 1) return cudaErrorInvalidConfiguration;
    unsigned long long* status = reinterpret_cast<unsigned long long*>(alignUp16(workspace));
    return deviceScanRun<Exclusive>(in, out, n, op, init, status, pl.stages, pl.lag, 0, stream);
}

} // namespace detail

#define WARPKIT_CHECK_DEVICE_SCAN_TYPE(T, fn)                                                 \
    static_assert(__is_trivially_copyable(T) && __is_constructible(T),                        \
                  fn ": element type T must be trivially copyable and default-constructible " \
                     "(a scalar or a plain struct)")

/// out[i] = in[0] op in[1] op ... op in[i] for i in [0, n), in one pass on `stream`. Host.
/// op: associative (need not be commutative). Workspace, errors, determinism: header comment.
template <typename T, typename Op> inline cudaError_t deviceInclusiveScan(const T* in, T* out, long long n, Op op,
                                                                          void* workspace, size_t* workspaceBytes,
                                                                          cudaStream_t stream = 0) {
    WARPKIT_CHECK_DEVICE_SCAN_TYPE(T, "deviceInclusiveScan");
    return detail::deviceScanLaunch<false>(in, out, n, op, T{}, workspace, workspaceBytes, stream);
}

/// out[0] = init, out[i] = init op in[0] op ... op in[i-1] for i in [1, n), in one pass on
/// `stream`. Host. op: associative (need not be commutative); init: any value (a seed, as CUB's).
template <typename T, typename Op> inline cudaError_t deviceExclusiveScan(const T* in, T* out, long long n, Op op,
                                                                          typename detail::NonDeduced<T>::type init,
                                                                          void* workspace, size_t* workspaceBytes,
                                                                          cudaStream_t stream = 0) {
    WARPKIT_CHECK_DEVICE_SCAN_TYPE(T, "deviceExclusiveScan");
    return detail::deviceScanLaunch<true>(in, out, n, op, init, workspace, workspaceBytes, stream);
}

/// Inclusive prefix sums: out[i] = in[0] + ... + in[i], added in T (integers wrap), in one pass on
/// `stream`. Host. Workspace, errors, determinism: header comment.
template <typename T> inline cudaError_t deviceInclusiveSum(const T* in, T* out, long long n, void* workspace,
                                                            size_t* workspaceBytes, cudaStream_t stream = 0) {
    WARPKIT_CHECK_ARITH_TYPE(T, "deviceInclusiveSum");
    return detail::deviceScanLaunch<false>(in, out, n, Sum{}, T{}, workspace, workspaceBytes, stream);
}

/// Exclusive prefix sums: out[0] = 0, out[i] = in[0] + ... + in[i-1], added in T, in one pass on
/// `stream`. Host. Workspace, errors, determinism: header comment.
template <typename T> inline cudaError_t deviceExclusiveSum(const T* in, T* out, long long n, void* workspace,
                                                            size_t* workspaceBytes, cudaStream_t stream = 0) {
    WARPKIT_CHECK_ARITH_TYPE(T, "deviceExclusiveSum");
    using A = typename detail::Arith<T>::Acc;
    return detail::deviceScanLaunch<true>(in, out, n, Sum{}, detail::Arith<T>::from_acc(A(0)), workspace,
                                          workspaceBytes, stream);
}

#undef WARPKIT_CHECK_DEVICE_SCAN_TYPE

} // namespace warpkit
