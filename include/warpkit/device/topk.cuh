// warpkit/device/topk.cuh: the k largest (or smallest) values of each row and their indices, called
// from the host.
//
//   warpkit::rowTopK(x, values, indices, rows, cols, k, largest, ldx, workspace, &bytes, stream)
//   warpkit::rowTopK(x, values, indices, rows, cols, k, largest, ldx, stream)      no workspace
//   warpkit::rowArgMax(x, values, indices, rows, cols, ldx[, workspace, &bytes], stream), rowArgMin
//   warpkit::rowTopKMask(x, y, rows, cols, k, ldx, ldy, workspace, &bytes, stream)   the rest -> -inf
//   warpkit::rowSample(logits, out, rows, cols, temperature, topK, topP, minP, seed, offset, ldx,
//                      workspace, &bytes, stream)        one token a row (seed, offset: values or pointers)
//
// Semantics. Row r is x[r * ldx + c], c = 0 .. cols-1. values[r * k + j] and indices[r * k + j],
// j = 0 .. k-1, get the row's j-th largest value (largest = true) or j-th smallest, and its column:
// ranked, equal values by lowest column, NaN above every number (so first for the largest, last for
// the smallest, as torch.topk), -0.0 just below +0.0 (warp/topk.cuh). The values are copied from x
// bit for bit. The answer is one fixed set in one fixed order: the same bits on every call, stream
// and launch shape. rowArgMax / rowArgMin: k = 1 (the first NaN if there is one).
//
// Types: x and values float, __half or __nv_bfloat16; indices int or long long. values may be null
// (indices only). Any rows >= 0 (64-bit), 1 <= k <= cols (k > 2048 on rows of more than 1024
// columns: ceil(k / 2048) passes over each row, one block a row: correct, not fast),
// ldx >= cols, any alignment of x, values and indices. x must not overlap the outputs.
//
// Workspace (CUB's two-call rule). With workspace == nullptr the call writes the bytes it needs to
// *workspaceBytes (at least 1) and returns. The size depends on rows, cols, k, the type and the device. The
// workspace splits a row over several blocks when rows are few (topk_plan.cuh), in one launch and
// with no memset; it may hold anything on entry (a row's arrival word works as device/reduce.cuh's:
// exact after any completed call and between replays of a captured graph; on arbitrary content a row
// goes wrong only if its word looks like this call's count or the clean word, odds about 2^-48),
// needs no alignment, and two calls in flight at once must not share one. The form without a
// workspace takes one block a row: the same answer, slower for few rows.
//
// Conventions (docs/design.md). Host; returns cudaError_t; asynchronous on `stream`; allocates
// nothing. Bad arguments (rows < 0, cols < 0, and with rows > 0: k < 1 or k > cols, ldx < cols, a null
// x or indices, a null workspaceBytes, *workspaceBytes smaller than the size asked for) return
// cudaErrorInvalidValue, and nothing is launched or written. The size query (workspace == nullptr)
// checks rows, cols, k and the ld's, not the data pointers (CUB's queries pass them null); the size
// depends on neither the pointers nor their alignment. Host caches are per device and thread-safe.
//
// How it works: device/detail/topk_plan.cuh (rules W1-W4, T0-T4, S1-S4), topk_filter.cuh (k <= 256),
// topk_kernels.cuh, topk_sample.cuh (rowSample's draw from rowTopK's candidates) and row_arg.cuh (k = 1
// by rule T0: rowArgMax's kernel).
#pragma once

#include "../detail/host.cuh"
#include "detail/topk_filter.cuh"
#include "detail/topk_kernels.cuh"
#include "detail/topk_warp_select.cuh"
#include "detail/topk_sample.cuh"
#include "detail/row_arg.cuh"

namespace warpkit {
namespace detail {

/// Launches level `lv` of a plan of the streamed select (T3, T4; level 0 reads x).
template <typename T, bool FromX>
inline cudaError_t topkLaunch(const TopKRows<T>& io, const TopKLevel& lv, cudaStream_t stream) {
    void (*kernel)(TopKRows<T>, TopKLevel) = topkStreamKernel<T, FromX, 8>;
    int blocks = 1;
    WARPKIT_TRY(gridBlocks(kernel, kTopKThreads, lv.rows * lv.slices, 1, 1LL << 30, &blocks));
    return launchKernel(kernel, blocks, kTopKThreads, stream, io, lv);
}

/// Launches the warp kernel of rule W1 with K = warpK keys a lane.
template <typename T> inline cudaError_t topkLaunchWarp(int warpK, const TopKRows<T>& io, long long rows, int cols,
                                                        int k, cudaStream_t stream) {
    void (*kernel)(TopKRows<T>, long long, int, int) = topkWarpKernel<T, 32>;
    if (warpK == 1) kernel = topkWarpKernel<T, 1>;
    else if (warpK == 2) kernel = topkWarpKernel<T, 2>;
    else if (warpK == 4) kernel = topkWarpKernel<T, 4>;
    else if (warpK == 8) kernel = topkWarpKernel<T, 8>;
    else if (warpK == 16) kernel = topkWarpKernel<T, 16>;
    int blocks = 1;
    WARPKIT_TRY(gridBlocks(kernel, kTopKWarpRows * 32, rows, kTopKWarpRows, 1LL << 30, &blocks));
    return launchKernel(kernel, blocks, kTopKWarpRows * 32, stream, io, rows, cols, k);
}

/// The warp select kernel (W2-W4) with KL keys a lane and G lanes a row.
template <typename T, int G> inline void (*topkSelectKernel(int KL))(TopKRows<T>, long long, int, int) {
    if (KL == 1) return topkWarpSelectKernel<T, 1, G>;
    if (KL == 2) return topkWarpSelectKernel<T, 2, G>;
    if (KL == 4) return topkWarpSelectKernel<T, 4, G>;
    if (KL == 8) return topkWarpSelectKernel<T, 8, G>;
    if (KL == 16) return topkWarpSelectKernel<T, 16, G>;
    return topkWarpSelectKernel<T, 32, G>;
}

/// Launches the warp select of rules W2-W4: p.warpK keys a lane, p.warpLanes lanes a row.
template <typename T> inline cudaError_t topkLaunchWarpSelect(const TopKPlan& p, const TopKRows<T>& io, long long rows,
                                                              int cols, int k, cudaStream_t stream) {
    void (*kernel)(TopKRows<T>, long long, int, int) =
        p.warpLanes == 8 ? topkSelectKernel<T, 8>(p.warpK) : topkSelectKernel<T, 32>(p.warpK);
    const int rowsPerBlock = kTopKWarpRows * (32 / p.warpLanes);
    int blocks = 1;
    WARPKIT_TRY(gridBlocks(kernel, kTopKWarpRows * 32, rows, rowsPerBlock, 1LL << 30, &blocks));
    return launchKernel(kernel, blocks, kTopKWarpRows * 32, stream, io, rows, cols, k);
}

/// Launches the filter kernel of rules T1 / T2 over p.slices[0] slices a row (S3): one launch. With
/// several, ws (16-byte aligned) holds the slices' candidates, then an arrival word a row (any
/// content on entry: counted under this call's tag, left clean; device/reduce.cuh).
template <typename T> inline cudaError_t topkLaunchFilter(const TopKPlan& p, const TopKRows<T>& io, long long rows,
                                                          int cols, int k, char* ws, cudaStream_t stream) {
    const int slices = p.slices[0];
    static_assert(kTopKFilterStage <= kReduceMaxBlocks, "topkLaunchFilter: slices a row must fit the arrival count");
    unsigned long long* cand = slices > 1 ? reinterpret_cast<unsigned long long*>(ws) : nullptr;
    unsigned long long* done = slices > 1 ? cand + rows * slices * k : nullptr;
    long long seg = (cols + slices - 1) / slices;
    seg = slices > 1 ? (seg + 63) / 64 * 64 : seg; // slices start 16-byte aligned when the row does
    const TopKLevel lv = {rows, cols, slices, seg, cols, k, k, nullptr, cand, done, slices > 1 ? arrivalTag() : 0ull};
    void (*kernel)(TopKRows<T>, TopKLevel) = k == 1         ? topkFilterKernel<T, true, false>
                                             : p.sliceBound ? topkFilterKernel<T, false, true>
                                                            : topkFilterKernel<T, false, false>;
    int blocks = 1;
    WARPKIT_TRY(gridBlocks(kernel, kTopKThreads, rows * slices, 1, 1LL << 30, &blocks));
    return launchKernel(kernel, blocks, kTopKThreads, stream, io, lv);
}

/// Rule T0: rowTopK's k = 1 by rowArgMax's kernel (row_arg.cuh, the row family's read-only plan, A2):
/// the same answer (the first NaN, else the lowest column of the best value; the value bit for bit).
template <typename T>
inline cudaError_t topkLaunchArg(const TopKRows<T>& io, long long rows, int cols, cudaStream_t stream) {
    const RowArgParams<T> p = {{}, io.x, io.values, io.indices, io.idx64, io.largest ? 0u : 0xffffffffu, io.ldx};
    return rowOpDispatch(p, rows, cols, stream, true);
}

/// Plans and runs rowTopK's levels for io over rows x cols, k with the two-call workspace rule:
/// useWorkspace selects the form with one; `extra` bytes of it (16-byte aligned, at *extraPtr) are
/// the caller's (rowSample's candidates), the rest the levels' buffers. argsOk: the caller's checks
/// of its pointers, read as io.x's, by the call that runs and not by the size query. rows = 0
/// launches nothing (the size query still answers).
template <typename T> inline cudaError_t topkRun(const TopKRows<T>& io, long long rows, int cols, int k, bool argsOk,
                                                 bool useWorkspace, void* workspace, size_t* workspaceBytes,
                                                 size_t extra, void** extraPtr, cudaStream_t stream) {
    if (rows < 0 || cols < 0 || (useWorkspace && workspaceBytes == nullptr)) return cudaErrorInvalidValue;
    const bool none = rows == 0, query = useWorkspace && workspace == nullptr;
    if (!none && (k < 1 || k > cols || io.ldx < cols)) return cudaErrorInvalidValue;
    if (!none && !query && (io.x == nullptr || !argsOk)) return cudaErrorInvalidValue; // the query needs no data
    int dev = 0;
    DeviceProps d = {};
    if (!none) WARPKIT_TRY(currentDevice(&dev, &d));
    const TopKPlan p =
        none ? TopKPlan{} : topkPlan(rows, cols, k, d.sms, useWorkspace, io.masked ? 0 : (int)sizeof(T), d.clusters);
    if (!none && p.kernelRule[0] == 0) return cudaErrorNotSupported;
    extra = alignUp16(extra);
    const size_t need = extra + p.workspaceBytes + 16; // + alignment slack (and never 0)
    if (query) {
        *workspaceBytes = need;
        return cudaSuccess;
    }
    if (useWorkspace && *workspaceBytes < need) return cudaErrorInvalidValue;
    if (none) return cudaSuccess;
    char* base = alignUp16(workspace);
    if (extraPtr) *extraPtr = base;
    unsigned long long* buf[2] = {nullptr, nullptr};
    if (p.workspaceBytes) {
        buf[0] = reinterpret_cast<unsigned long long*>(base + extra);
        buf[1] = buf[0] + rows * p.len[1]; // buffer 0's largest user is level 0 (rows x len[1] keys)
    }
    if (p.kernel == TopKArg) return topkLaunchArg(io, rows, cols, stream);
    if (p.kernel == TopKWarp) return topkLaunchWarp(p.warpK, io, rows, cols, k, stream);
    if (p.kernel == TopKWarpSelect) return topkLaunchWarpSelect(p, io, rows, cols, k, stream);
    if (p.kernel == TopKFilter) return topkLaunchFilter(p, io, rows, cols, k, base + extra, stream);
    for (int i = 0; i < p.levels; ++i) {
        const bool last = i + 1 == p.levels;
        const TopKLevel lv = {rows,
                              p.len[i],
                              p.slices[i],
                              (p.len[i] + p.slices[i] - 1) / p.slices[i],
                              cols,
                              k,
                              p.chunkK,
                              i ? buf[(i - 1) & 1] : nullptr,
                              last ? nullptr : buf[i & 1],
                              nullptr,
                              0ull};
        const cudaError_t e = i ? topkLaunch<T, false>(io, lv, stream) : topkLaunch<T, true>(io, lv, stream);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

/// rowArgMax / rowArgMin by rule A1 (topk_plan.cuh): rowTopK with k = 1 and no workspace (the filter
/// kernel, T1, one block a row), on arguments rowArgRun has checked.
template <typename T>
inline cudaError_t rowArgFilter(const RowArgParams<T>& p, long long rows, int cols, cudaStream_t stream) {
    const TopKRows<T> io = {p.x, p.ldx, p.flip == 0u, p.values, p.indices, p.idx64, nullptr, 0};
    return topkRun(io, rows, cols, 1, true, false, nullptr, nullptr, 0, nullptr, stream);
}

/// rowTopK's dispatcher: the type checks, then topkRun.
template <typename T, typename Idx>
inline cudaError_t rowTopKDispatch(const T* x, T* values, Idx* indices, long long rows, int cols, int k, bool largest,
                                   long long ldx, bool useWorkspace, void* workspace, size_t* workspaceBytes,
                                   cudaStream_t stream) {
    WARPKIT_CHECK_TOPK_TYPE(T, "rowTopK");
    static_assert(IsSame<Idx, int>::value || IsSame<Idx, long long>::value,
                  "rowTopK: index type Idx must be int or long long");
    const TopKRows<T> io = {x, ldx, largest, values, indices, IsSame<Idx, long long>::value, nullptr, 0};
    return topkRun(io, rows, cols, k, indices != nullptr, useWorkspace, workspace, workspaceBytes, 0, nullptr, stream);
}

/// rowTopK's ranked candidates of each row (largest or smallest as io says) into the front of the
/// workspace: values (rows x k of T) at *values, then column indices (rows x k int) at *indices, for
/// the calls that finish from them (rowSample, rowTopKShard). Two-call rule: workspace == nullptr
/// writes the bytes needed (the levels' buffers included) to *workspaceBytes. Bad arguments:
/// cudaErrorInvalidValue; k > maxK with rows > 0: cudaErrorNotSupported. *values stays untouched
/// unless candidates were selected (rows > 0 and a workspace).
template <typename T> inline cudaError_t topkCandidates(TopKRows<T> io, long long rows, int cols, int k, bool argsOk,
                                                        int maxK, void* workspace, size_t* workspaceBytes, T** values,
                                                        int** indices, cudaStream_t stream) {
    const size_t n = (size_t)(rows > 0 ? rows : 0) * (size_t)(k > 0 ? k : 0);
    const size_t valueBytes = alignUp16(n * sizeof(T));
    const size_t extra = valueBytes + n * sizeof(int);
    // The call with a workspace checks the pointers before asking the device anything (the size
    // query, which needs none of them, does not); the first topkRun checks and plans only (no
    // launch: its outputs are not known yet).
    if (workspace != nullptr && rows > 0 && (io.x == nullptr || !argsOk)) return cudaErrorInvalidValue;
    size_t bytes = 0;
    WARPKIT_TRY(topkRun(io, rows, cols, k, argsOk, true, nullptr, &bytes, extra, nullptr, stream));
    if (workspaceBytes == nullptr) return cudaErrorInvalidValue;
    if (rows > 0 && k > maxK) return cudaErrorNotSupported;
    if (workspace == nullptr) {
        *workspaceBytes = bytes;
        return cudaSuccess;
    }
    if (*workspaceBytes < bytes) return cudaErrorInvalidValue;
    if (rows == 0) return cudaSuccess;
    char* base = alignUp16(workspace);
    io.values = reinterpret_cast<T*>(base);
    io.indices = base + valueBytes;
    io.idx64 = false;
    WARPKIT_TRY(topkRun(io, rows, cols, k, argsOk, true, workspace, workspaceBytes, extra, nullptr, stream));
    *values = io.values;
    *indices = static_cast<int*>(io.indices);
    return cudaSuccess;
}

/// rowSample's dispatcher: the top-k candidates into the workspace (topkCandidates), then the draw.
template <typename T, typename Idx>
inline cudaError_t rowSampleDispatch(const T* logits, Idx* out, long long rows, int cols, float temperature, int topK,
                                     float topP, float minP, SampleParams sp, long long ldx, void* workspace,
                                     size_t* workspaceBytes, cudaStream_t stream) {
    WARPKIT_CHECK_TOPK_TYPE(T, "rowSample");
    static_assert(IsSame<Idx, int>::value || IsSame<Idx, long long>::value,
                  "rowSample: index type Idx must be int or long long");
    // the scalars are checked for any rows, as rowSampleMerge's (rows = 0 accepts no bad setting)
    if (!sampleArgsOk(temperature, topP, minP) || topK < 0) return cudaErrorInvalidValue;
    const int k = topK == 0 ? cols : topK;
    const bool argsOk = out != nullptr;
    T* values = nullptr;
    int* indices = nullptr;
    const TopKRows<T> io = {logits, ldx, true, nullptr, nullptr, false, nullptr, 0};
    // the draw holds kTopKMaxK candidates a row
    WARPKIT_TRY(
        topkCandidates(io, rows, cols, k, argsOk, kTopKMaxK, workspace, workspaceBytes, &values, &indices, stream));
    if (values == nullptr) return cudaSuccess; // the size query, or no rows
    sp.k = k;
    const bool warp = k <= kSampleWarpMaxK; // a warp holds the candidates: a warp a row, the same ranks
    void (*kernel)(const T*, const int*, Idx*, long long, SampleParams) =
        warp ? rowSampleWarpKernel<T, Idx> : rowSampleKernel<T, Idx>;
    int blocks = 1;
    WARPKIT_TRY(gridBlocks(kernel, kTopKThreads, rows, warp ? kTopKThreads / 32 : 1, 1LL << 30, &blocks));
    return launchKernel(kernel, blocks, kTopKThreads, stream, (const T*)values, (const int*)indices, out, rows, sp);
}

} // namespace detail

/// The k largest (largest = true) or smallest values of each row of x, ranked, with their columns,
/// using a workspace for few rows (see the header comment). Arguments: rows >= 0; with rows > 0,
/// 1 <= k <= cols, ldx >= cols, x and indices not null (values may be null). Workspace: CUB's two-call
/// rule (workspace == nullptr: *workspaceBytes gets the size). Bad arguments (a null workspaceBytes or
/// a too small *workspaceBytes too) return cudaErrorInvalidValue with nothing launched or written.
/// Host; asynchronous on `stream`.
template <typename T, typename Idx>
inline cudaError_t rowTopK(const T* x, T* values, Idx* indices, long long rows, int cols, int k, bool largest,
                           long long ldx, void* workspace, size_t* workspaceBytes, cudaStream_t stream = 0) {
    return detail::rowTopKDispatch(x, values, indices, rows, cols, k, largest, ldx, true, workspace, workspaceBytes,
                                   stream);
}

/// rowTopK without a workspace: one block a row. Arguments and cudaErrorInvalidValue as the workspace
/// form. Host; asynchronous on `stream`.
template <typename T, typename Idx> inline cudaError_t rowTopK(const T* x, T* values, Idx* indices, long long rows,
                                                               int cols, int k, bool largest, long long ldx,
                                                               cudaStream_t stream = 0) {
    return detail::rowTopKDispatch(x, values, indices, rows, cols, k, largest, ldx, false, nullptr, nullptr, stream);
}

/// Each row of x with every value outside its k largest set to -inf, into y (row r at y + r x ldy;
/// y may be x itself when ldy = ldx): the input of a following softmax. Ties and NaN as rowTopK.
/// Host; asynchronous on `stream`; arguments, workspace (two-call rule) and errors as rowTopK; a null
/// y or ldy < cols is invalid too (cudaErrorInvalidValue, nothing written).
template <typename T> inline cudaError_t rowTopKMask(const T* x, T* y, long long rows, int cols, int k, long long ldx,
                                                     long long ldy, void* workspace, size_t* workspaceBytes,
                                                     cudaStream_t stream = 0) {
    WARPKIT_CHECK_TOPK_TYPE(T, "rowTopKMask");
    const detail::TopKRows<T> io = {x, ldx, true, nullptr, nullptr, false, y, ldy};
    if (rows > 0 && ldy < cols) return cudaErrorInvalidValue;
    return detail::topkRun(io, rows, cols, k, y != nullptr, true, workspace, workspaceBytes, 0, nullptr, stream);
}

/// One token a row (out[r], a column of row r), drawn from softmax(logits / temperature) restricted
/// to the row's topK largest logits (0: all columns), then to those of probability at least minP
/// times the largest (min-p), then to the smallest ranked set of probability at least topP (top-p).
/// Random numbers: Philox4x32-10, the draw that curand_init(seed, row, offset) + curand_uniform give
/// (detail/philox.cuh), so a (seed, offset, row) gives the same token on every run and launch shape.
/// The candidates rank as rowTopK's (equal logits by lowest column, NaN first). temperature = 0,
/// topK = 1 or a tiny topP: the argmax (rowArgMax's column). temperature = +inf: every kept logit
/// above -inf weighs alike. Special rows, on any setting: a NaN logit: the first NaN's column; a row
/// of -inf only: column 0; +inf logits: one of them (each weighs 1, the finite ones 0). Arguments:
/// 0 <= temperature <= +inf, 0 < topP <= 1, 0 <= minP <= 1, topK >= 0 (checked for any rows; NaN is
/// out of range), and with rows > 0: topK <= cols, k = topK (or cols) >= 1 and <= 2048 (else
/// cudaErrorNotSupported), ldx >= cols, logits and out not null; rows >= 0.
/// Other values, a null workspaceBytes or a too small *workspaceBytes return cudaErrorInvalidValue
/// with nothing launched or written. Workspace: two-call rule, as rowTopK (it holds the candidates
/// too). Host; asynchronous on `stream`.
template <typename T, typename Idx>
inline cudaError_t rowSample(const T* logits, Idx* out, long long rows, int cols, float temperature, int topK,
                             float topP, float minP, unsigned long long seed, unsigned long long offset, long long ldx,
                             void* workspace, size_t* workspaceBytes, cudaStream_t stream = 0) {
    const detail::SampleParams sp = {temperature, topP, minP, 0, seed, offset, nullptr, nullptr};
    return detail::rowSampleDispatch(logits, out, rows, cols, temperature, topK, topP, minP, sp, ldx, workspace,
                                     workspaceBytes, stream);
}

/// rowSample with the seed and the offset read from device memory when the kernel runs (a captured
/// CUDA graph draws anew each replay once the caller advances *offset). Arguments, workspace and errors
/// as the by-value form; a null seed or offset returns cudaErrorInvalidValue. Host; asynchronous on
/// `stream`.
template <typename T, typename Idx>
inline cudaError_t rowSample(const T* logits, Idx* out, long long rows, int cols, float temperature, int topK,
                             float topP, float minP, const unsigned long long* seed, const unsigned long long* offset,
                             long long ldx, void* workspace, size_t* workspaceBytes, cudaStream_t stream = 0) {
    if (seed == nullptr || offset == nullptr) return cudaErrorInvalidValue;
    const detail::SampleParams sp = {temperature, topP, minP, 0, 0, 0, seed, offset};
    return detail::rowSampleDispatch(logits, out, rows, cols, temperature, topK, topP, minP, sp, ldx, workspace,
                                     workspaceBytes, stream);
}

// rowArgMax (largest, LARGEST = true): each row's largest value and its column: the first NaN, else
// the lowest column of the maximum. rowArgMin: the smallest, the lowest column of the minimum (NaN
// only for an all-NaN row: torch.topk's order; torch.argmin and segmentReduceArgMin return the first
// NaN instead). Zeros rank -0.0 below +0.0 (torch.argmax and cub::ArgMax take them as equal and
// return the first zero). A row of one column gives column 0. The answer of rowTopK with k = 1, by
// one read of each row on the row family's runner (device/detail/row_arg.cuh). Both forms take
// rowTopK's arguments and return its cudaErrorInvalidValue (cols >= 1 when rows > 0); the workspace
// form's size query answers 16 bytes and the workspace is not used. Host; asynchronous on `stream`.
#define WARPKIT_DETAIL_ROW_ARG(NAME, LARGEST)                                                                        \
    template <typename T, typename Idx> inline cudaError_t NAME(const T* x, T* values, Idx* indices, long long rows, \
                                                                int cols, long long ldx, void* workspace,            \
                                                                size_t* workspaceBytes, cudaStream_t stream = 0) {   \
        return detail::rowArgRun(x, values, indices, rows, cols, ldx, LARGEST, true, workspace, workspaceBytes,      \
                                 stream);                                                                            \
    }                                                                                                                \
    template <typename T, typename Idx> inline cudaError_t NAME(const T* x, T* values, Idx* indices, long long rows, \
                                                                int cols, long long ldx, cudaStream_t stream = 0) {  \
        return detail::rowArgRun(x, values, indices, rows, cols, ldx, LARGEST, false, nullptr, nullptr, stream);     \
    }
WARPKIT_DETAIL_ROW_ARG(rowArgMax, true)
WARPKIT_DETAIL_ROW_ARG(rowArgMin, false)
#undef WARPKIT_DETAIL_ROW_ARG

} // namespace warpkit
