// warpkit/device/topk.cuh: the k largest (or smallest) values of each row and their indices, called
// from the host.
//
//   warpkit::rowTopK(x, values, indices, rows, cols, k, largest, ldx, workspace, &bytes, stream)
//   warpkit::rowTopK(x, values, indices, rows, cols, k, largest, ldx, stream)      no workspace
//   warpkit::rowArgMax(x, values, indices, rows, cols, ldx[, workspace, &bytes], stream), rowArgMin
//
// Semantics. Row r is x[r * ldx + c], c = 0 .. cols-1. values[r * k + j] and indices[r * k + j],
// j = 0 .. k-1, get the row's j-th largest value (largest = true) or j-th smallest, and its column:
// ranked, equal values by lowest column, NaN above every number (so first for the largest, last for
// the smallest, as torch.topk), -0.0 just below +0.0 (warp/topk.cuh). The values are copied from x
// bit for bit. The answer is one fixed set in one fixed order: the same bits on every call, stream
// and launch shape. rowArgMax / rowArgMin: k = 1 (the first NaN if there is one).
//
// Types: x and values float, __half or __nv_bfloat16; indices int or long long. values may be null
// (indices only). Any rows >= 0 (64-bit), 1 <= k <= min(cols, 2048) (larger k: cudaErrorNotSupported),
// ldx >= cols, any alignment of x, values and indices. x must not overlap the outputs.
//
// Workspace (CUB's two-call rule). With workspace == nullptr the call writes the bytes it needs to
// *workspaceBytes (at least 1) and returns. The size depends on rows, cols, k and the device. The
// workspace splits a row over several blocks when rows are few (topk_plan.cuh); it may hold
// anything on entry, needs no alignment, and two calls in flight at once must not share one. The
// form without a workspace takes one block a row: the same answer, slower for few rows.
//
// Conventions (docs/design.md). Host; returns cudaError_t; asynchronous on `stream`; allocates
// nothing. Bad arguments (rows < 0, cols < 0, and with rows > 0: k < 1 or k > cols, ldx < cols, a null
// x or indices, a null workspaceBytes, *workspaceBytes smaller than the size asked for) return
// cudaErrorInvalidValue, and nothing is launched or written. Host caches are per device and
// thread-safe.
//
// How it works: device/detail/topk_plan.cuh (rules T1-T3, S1-S2) and topk_kernels.cuh.
#pragma once

#include "../detail/host.cuh"
#include "detail/topk_kernels.cuh"

namespace warpkit {
namespace detail {

/// Launches level `lv` of plan p with the kernel of its rule (level 0 reads x).
template <typename T, bool FromX>
inline cudaError_t topkLaunch(const TopKPlan& p, const TopKRows<T>& io, const TopKLevel& lv, cudaStream_t stream) {
    void (*kernel)(TopKRows<T>, TopKLevel) = topkArgMaxKernel<T, FromX>;
    if (p.kernel == TopKStream) kernel = p.runK == 1 ? topkStreamKernel<T, FromX, 1> : topkStreamKernel<T, FromX, 8>;
    int blocks = 1;
    WARPKIT_TRY(gridBlocks(kernel, kTopKThreads, lv.rows * lv.slices, 1, 1LL << 30, &blocks));
    return launchKernel(kernel, blocks, kTopKThreads, stream, io, lv);
}

/// rowTopK's dispatcher: checks, the plan, the levels. useWorkspace: the workspace form.
template <typename T, typename Idx>
inline cudaError_t rowTopKDispatch(const T* x, T* values, Idx* indices, long long rows, int cols, int k, bool largest,
                                   long long ldx, bool useWorkspace, void* workspace, size_t* workspaceBytes,
                                   cudaStream_t stream) {
    WARPKIT_CHECK_TOPK_TYPE(T, "rowTopK");
    static_assert(IsSame<Idx, int>::value || IsSame<Idx, long long>::value,
                  "rowTopK: index type Idx must be int or long long");
    if (rows < 0 || cols < 0 || (useWorkspace && workspaceBytes == nullptr)) return cudaErrorInvalidValue;
    const bool none = rows == 0;
    if (!none && (k < 1 || k > cols || ldx < cols || x == nullptr || indices == nullptr)) return cudaErrorInvalidValue;
    int dev = 0;
    DeviceProps d = {};
    if (!none) WARPKIT_TRY(currentDevice(&dev, &d));
    const TopKPlan p = none ? TopKPlan{} : topkPlan(rows, cols, k, d.sms, useWorkspace);
    const size_t need = (p.workspaceBytes ? p.workspaceBytes + 8 : 0) + 1; // + alignment slack, at least 1
    if (useWorkspace && workspace == nullptr) {
        *workspaceBytes = need;
        return cudaSuccess;
    }
    if (useWorkspace && *workspaceBytes < need) return cudaErrorInvalidValue;
    if (none) return cudaSuccess;
    if (p.kernelRule[0] == 0) return cudaErrorNotSupported;
    unsigned long long* buf[2] = {nullptr, nullptr};
    if (p.workspaceBytes) {
        const size_t a = (reinterpret_cast<size_t>(workspace) + 7) & ~(size_t)7;
        buf[0] = reinterpret_cast<unsigned long long*>(a);
        buf[1] = buf[0] + rows * p.len[1]; // buffer 0's largest user is level 0 (rows x len[1] keys)
    }
    const TopKRows<T> io = {x, ldx, largest, values, indices, IsSame<Idx, long long>::value};
    for (int i = 0; i < p.levels; ++i) {
        const bool last = i + 1 == p.levels;
        const TopKLevel lv = {rows,
                              p.len[i],
                              p.slices[i],
                              (p.len[i] + p.slices[i] - 1) / p.slices[i],
                              k,
                              i ? buf[(i - 1) & 1] : nullptr,
                              last ? nullptr : buf[i & 1]};
        TopKPlan q = p;
        if (i) q.kernel = TopKStream; // later levels always merge candidates with the streamed select
        const cudaError_t e = i ? topkLaunch<T, false>(q, io, lv, stream) : topkLaunch<T, true>(q, io, lv, stream);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

} // namespace detail

/// The k largest (largest = true) or smallest values of each row of x, ranked, with their columns,
/// using a workspace for few rows (see the header comment). Host; asynchronous on `stream`.
template <typename T, typename Idx>
inline cudaError_t rowTopK(const T* x, T* values, Idx* indices, long long rows, int cols, int k, bool largest,
                           long long ldx, void* workspace, size_t* workspaceBytes, cudaStream_t stream = 0) {
    return detail::rowTopKDispatch(x, values, indices, rows, cols, k, largest, ldx, true, workspace, workspaceBytes,
                                   stream);
}

/// rowTopK without a workspace: one block a row. Host; asynchronous on `stream`.
template <typename T, typename Idx> inline cudaError_t rowTopK(const T* x, T* values, Idx* indices, long long rows,
                                                               int cols, int k, bool largest, long long ldx,
                                                               cudaStream_t stream = 0) {
    return detail::rowTopKDispatch(x, values, indices, rows, cols, k, largest, ldx, false, nullptr, nullptr, stream);
}

// rowArgMax (largest, LARGEST = true): each row's largest value and its column: the first NaN, else
// the lowest column of the maximum. rowArgMin: the smallest, the lowest column of the minimum (NaN
// only for an all-NaN row). rowTopK with k = 1; both forms (workspace or not). Host; asynchronous.
#define WARPKIT_DETAIL_ROW_ARG(NAME, LARGEST)                                                                        \
    template <typename T, typename Idx> inline cudaError_t NAME(const T* x, T* values, Idx* indices, long long rows, \
                                                                int cols, long long ldx, void* workspace,            \
                                                                size_t* workspaceBytes, cudaStream_t stream = 0) {   \
        return rowTopK(x, values, indices, rows, cols, 1, LARGEST, ldx, workspace, workspaceBytes, stream);          \
    }                                                                                                                \
    template <typename T, typename Idx> inline cudaError_t NAME(const T* x, T* values, Idx* indices, long long rows, \
                                                                int cols, long long ldx, cudaStream_t stream = 0) {  \
        return rowTopK(x, values, indices, rows, cols, 1, LARGEST, ldx, stream);                                     \
    }
WARPKIT_DETAIL_ROW_ARG(rowArgMax, true)
WARPKIT_DETAIL_ROW_ARG(rowArgMin, false)
#undef WARPKIT_DETAIL_ROW_ARG

} // namespace warpkit
