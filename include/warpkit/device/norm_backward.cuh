// warpkit/device/norm_backward.cuh: the gradients of rowLayerNorm and rowRmsNorm (device/norm.cuh)
// over the last dimension of a rows x cols matrix, called from the host.
//
//   warpkit::rowLayerNormBackward(dy, x, w, mean, rstd, dx, dw, db, rows, cols[, lddy, ldx, lddx], ws, &bytes, stream)
//   warpkit::rowRmsNormBackward(dy, x, w, rstd, dx, dw, rows, cols[, lddy, ldx, lddx], ws, &bytes, stream)
//   warpkit::rowLayerNormBackwardAdd(dy, x, w, mean, rstd, dres, dx, dw, db, rows, cols, lddy, ldx, lddres, lddx,
//                                    ws, &bytes, stream)
//   warpkit::rowRmsNormBackwardAdd(dy, x, w, rstd, dres, dx, dw, rows, cols, lddy, ldx, lddres, lddx, ws, &bytes,
//                                  stream)
//       the same, with a residual gradient dres added into dx: dx = norm_backward(dy) + dres, the
//       backward of rowAddLayerNorm / rowAddRmsNorm's h (device/add_norm.cuh) in one kernel. dres is
//       read once, where dx is stored, and added in float before dx's one rounding to T (the
//       unfused chain rounds twice: fp32 gives the same bits, 16-bit types agree to 1 ulp). dx is
//       then required; it may be dres (lddx == lddres). Their mixed forms (dr after dx, lddr after
//       lddx) for rowAddLayerNorm's 16-bit residual r of a float x also write dr, r's gradient:
//       the same float values rounded once to r's type (PyTorch's gradient of the promoted add).
//
// From the forward's input x, its weight w and its statistics (the mean and rstd arrays rowLayerNorm
// and rowRmsNorm write; RMSNorm's mean is 0), per row with xhat = (x - mean) * rstd, g = dy * w,
// n = cols, as torch's layer_norm / rms_norm backward:
//   LayerNorm: dx = rstd * (g - sum(g) / n - xhat * sum(g * xhat) / n)
//   RMSNorm:   dx = rstd * (g - xhat * sum(g * xhat) / n)
// and over the rows: dw = sum(dy * xhat), db = sum(dy) (LayerNorm only).
//
// Types: float, __half, __nv_bfloat16 for dy, x, w, dx, dw and db (read and written in that type,
// computed in float); mean and rstd are float arrays of `rows` values. w: cols elements, or nullptr
// (w = 1). dx, dw, db: each optional (nullptr: not computed). Shapes: any rows >= 0, cols >= 0,
// row strides lddy, ldx, lddx >= cols (elements), any pointer alignment (each array's rows may be
// aligned differently), 64-bit row counts. cols = 0: nothing is written (every output is empty).
// rows = 0: dw and db are written as zeros (an empty sum), dx is empty. In place: dx may be dy
// (lddx == lddy) or x (lddx == ldx); otherwise dx must not overlap the inputs.
//
// NaN and infinities: the formulas in float with IEEE rules from the given statistics, as torch's
// kernels: a NaN rstd (LayerNorm: a NaN or inf in the row; RMSNorm: a NaN) makes the row's dx NaN
// and adds NaN to all of dw; an RMSNorm row with an inf (rstd 0) gets NaN dx and NaN in dw's inf
// columns. db sees only dy. Determinism: dw and db are summed in float in an order fixed by (rows,
// cols, element type) alone: fixed ranges of rows (normBackwardPlan) write partials to the workspace, a last
// kernel adds them in range order (no atomics): the same bits on every call, stream, GPU and
// alignment. dx's bits are the same on every call and stream, and past 8192 columns on every
// alignment (the split path holds the same columns a thread and adds them in the same order).
//
// Workspace: CUB's two-call rule (workspace null: *workspaceBytes gets the bytes needed, and
// nothing runs; else it must be at least that). A call with workspace == nullptr checks the shape
// (rows, cols, the ld's) but not the data pointers, which may be null as in CUB's queries. The size
// depends on rows, cols, the type and which of dw and db are given, never on alignment: a query
// with dy, x or rstd null answers the size for dw and db both given (dw alone for RMSNorm), enough
// for whatever outputs the call then brings; with those inputs given, the size for the dw and db
// given. 1 byte (never read or written) with rows or cols 0, or without dw and db on rows the
// register path takes at every alignment (up to 4096 columns): never 0, so that an allocation of
// the size asked for is not a null pointer. Any alignment of the workspace.
// Conventions (docs/design.md): returns cudaError_t; asynchronous on `stream`; allocates nothing;
// bad arguments (rows < 0, cols < 0, an ld < cols, workspaceBytes null, a workspace too small; on
// the call with a workspace: null dy, x, rstd or (LayerNorm) mean with rows and cols > 0, dx == dy
// or dx == x with a different ld; the Add calls: a null dres or dx, dx == dres with a different ld;
// lddres < cols with dres given, on either call) return cudaErrorInvalidValue and write nothing.
//
// How it works: device/detail/norm_backward_plan.cuh (rules N1-N5: rows of up to 8192 columns in
// registers, 8 elements of each input a thread, a warp or a block of threads a row, read once;
// longer rows, and unaligned rows past 4096 columns, cut into slices of 2048 columns over a grid of
// slices x row ranges: where that grid is resident at once, one cooperative kernel that exchanges
// the slices' row sums through the workspace and reads once, else two kernels that read twice: the
// slices' row sums, then dx; the same bits either way), norm_backward_kernels.cuh and
// norm_backward_split.cuh. The final sum of dw / db (N5) follows the register path's kernel on sm_90
// with Programmatic Dependent Launch (its blocks placed while the main kernel ends, each waiting for
// it whole before any access; in CUDA graphs a programmatic edge): one launch, its own error returned.
#pragma once

#include "../detail/host.cuh"
#include "../detail/pdl.cuh"
#include "detail/norm_backward_kernels.cuh"
#include "detail/norm_backward_split.cuh"

namespace warpkit {
namespace detail {

/// Whether the register path may take vector slots: every row of dy, x and dx (if written) and w
/// (if given) start on 16 bytes and cols is a whole number of vectors.
template <typename T, typename R> inline bool nbVec(const NbAddParams<T, R>& p) {
    return rowsAligned(p.dy, p.lddy, p.cols) && rowsAligned(p.x, p.ldx, p.cols) &&
           (p.dx == nullptr || rowsAligned(p.dx, p.lddx, p.cols)) &&
           (p.dres == nullptr || rowsAligned(p.dres, p.lddres, p.cols)) &&
           (p.dr == nullptr || rowsAlignedAs<T>(p.dr, p.lddr, p.cols)) && ((size_t)p.w & 15) == 0;
}

/// The kernels' NbRes of p (with dres: Res; R other than T: dr too).
template <typename T, typename R> inline NbRes<T, true, R> nbRes(const NbAddParams<T, R>& p) {
    if constexpr (IsSame<R, T>::value) return NbRes<T, true, R>{p.dres, p.lddres};
    else return NbRes<T, true, R>{p.dres, p.lddres, p.dr, p.lddr};
}

/// The register path's kernel for groups of Gs threads (N1), vector or element slots as plan pl says,
/// with dres added (Res) or not.
template <typename T, int Gs, bool Res, typename R> inline cudaError_t
nbLaunchRegs(const NormBackwardParams<T>& p, NbRes<T, Res, R> res, const NormBackwardPlan& pl, cudaStream_t st) {
    constexpr int Threads = nbRegsThreads(Gs);
    auto kern = normBackwardKernel<T, Threads, Gs, true, Res, R>;
    if constexpr (Gs < kNbMaxGroup) {
        if (!pl.vec) kern = normBackwardKernel<T, Threads, Gs, false, Res, R>;
    } else if (!pl.vec) {
        return cudaErrorInvalidValue; // no such plan (N1 gives element slots to groups up to 512)
    }
    return launchKernel(kern, pl.parts, Threads, st, p, res);
}
template <typename T, int Gs, typename R>
inline cudaError_t nbLaunchRegs(const NbAddParams<T, R>& p, const NormBackwardPlan& pl, cudaStream_t st) {
    if (p.dres != nullptr) return nbLaunchRegs<T, Gs>(p, nbRes(p), pl, st);
    if constexpr (IsSame<R, T>::value) return nbLaunchRegs<T, Gs>(p, NbRes<T, false>{}, pl, st);
    return cudaErrorInvalidValue; // a residual of another type comes with dres (rowNormBackward)
}

/// The split path's kernels (N2) on a grid of slices x parts: the sums, then (dx wanted) dx, with
/// dres added (Res) or not.
template <typename T, bool Res, typename R> inline cudaError_t
nbLaunchSplit(const NormBackwardParams<T>& p, NbRes<T, Res, R> res, const NormBackwardPlan& pl, cudaStream_t st) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)pl.slices, (unsigned)pl.parts);
    cfg.blockDim = dim3(kNbSliceThreads);
    cfg.stream = st;
    if (p.dx != nullptr) { // one pass where the whole grid is resident at once
        const auto one =
            pl.vec ? normBackwardOnePassKernel<T, true, Res, R> : normBackwardOnePassKernel<T, false, Res, R>;
        int dev = 0, resident = 0;
        DeviceProps d;
        WARPKIT_TRY(currentDevice(&dev, &d));
        WARPKIT_TRY(residentBlocks(one, kNbSliceThreads, dev, d.sms, &resident));
        if ((long long)pl.slices * pl.parts <= resident) {
            const size_t records = (size_t)p.rows * (size_t)pl.slices * kNbSumsWords * sizeof(unsigned long long);
            WARPKIT_TRY(cudaMemsetAsync(p.sums, 0, records, st)); // every record not yet published
            cudaLaunchAttribute coop;
            coop.id = cudaLaunchAttributeCooperative;
            coop.val.cooperative = 1;
            cfg.attrs = &coop;
            cfg.numAttrs = 1;
            return cudaLaunchKernelEx(&cfg, one, p, res);
        }
    }
    WARPKIT_TRY(
        cudaLaunchKernelEx(&cfg, pl.vec ? normBackwardSumsKernel<T, true> : normBackwardSumsKernel<T, false>, p));
    if (p.dx == nullptr) return cudaSuccess;
    return cudaLaunchKernelEx(
        &cfg, pl.vec ? normBackwardSplitDxKernel<T, true, Res, R> : normBackwardSplitDxKernel<T, false, Res, R>, p,
        res);
}

/// The main kernels of plan pl: one for each group size of N1, the split path's two for N2
/// (normBackwardPlanCompiled lists them).
template <typename T, typename R>
inline cudaError_t nbLaunch(const NbAddParams<T, R>& p, const NormBackwardPlan& pl, cudaStream_t st) {
    if (pl.path == NbSplit) {
        if (p.dres != nullptr) return nbLaunchSplit<T>(p, nbRes(p), pl, st);
        if constexpr (IsSame<R, T>::value) return nbLaunchSplit<T>(p, NbRes<T, false>{}, pl, st);
        return cudaErrorInvalidValue; // a residual of another type comes with dres (rowNormBackward)
    }
    switch (pl.group) {
    case 32:
        return nbLaunchRegs<T, 32>(p, pl, st);
    case 64:
        return nbLaunchRegs<T, 64>(p, pl, st);
    case 128:
        return nbLaunchRegs<T, 128>(p, pl, st);
    case 256:
        return nbLaunchRegs<T, 256>(p, pl, st);
    case 512:
        return nbLaunchRegs<T, 512>(p, pl, st);
    case 1024:
        return nbLaunchRegs<T, 1024>(p, pl, st);
    default:
        return cudaErrorInvalidValue; // no such plan
    }
}

/// Both calls: the checks, the workspace rule, then the main kernel and the final sums. add: an Add
/// call (dres required; the mixed ones too). The size query checks the shape only (the data pointers
/// may be null there, as in CUB's queries); the call with a workspace checks the pointers.
template <typename T, typename R> inline cudaError_t rowNormBackward(NbAddParams<T, R> p, bool rms, bool add, T* dw,
                                                                     T* db, void* workspace, size_t* workspaceBytes,
                                                                     cudaStream_t stream) {
    constexpr bool mixed = !IsSame<R, T>::value;
    const long long rows = p.rows;
    const int cols = p.cols;
    if (rows < 0 || cols < 0 || p.lddy < cols || p.ldx < cols || p.lddx < cols || workspaceBytes == nullptr ||
        (p.dres != nullptr && p.lddres < cols) || (mixed && p.lddr < cols))
        return cudaErrorInvalidValue;
    // A query without the inputs (any of dy, x, rstd null: no call could run with it) cannot tell
    // which of dw and db the call will bring: it answers for both, enough for any outputs.
    const bool bare = p.dy == nullptr || p.x == nullptr || p.rstd == nullptr;
    const int arrays = bare && workspace == nullptr ? (rms ? 1 : 2) : (dw != nullptr) + (db != nullptr);
    // At least 1 byte, so that the two-call pattern (query, allocate, call) hands the second call a
    // non-null workspace even where it needs none: an allocation of 0 bytes may be a null pointer,
    // and the call would then be a second query that writes nothing.
    const size_t parts = normBackwardBytes(rows, cols, arrays, (int)sizeof(T));
    const size_t need = parts > 0 ? parts : 1;
    if (workspace == nullptr) {
        *workspaceBytes = need;
        return cudaSuccess;
    }
    const bool work = rows > 0 && cols > 0;
    if (work && add && (p.dres == nullptr || p.dx == nullptr || (p.dx == p.dres && p.lddx != p.lddres)))
        return cudaErrorInvalidValue;
    if constexpr (mixed) { // dr: required, its own array
        const void* dr = p.dr;
        if (work && (dr == nullptr || dr == p.dx || dr == p.dy || dr == p.x || dr == p.dres))
            return cudaErrorInvalidValue;
    }
    if (work &&
        (p.dy == nullptr || p.x == nullptr || p.rstd == nullptr || (!rms && p.mean == nullptr) ||
         (p.dx != nullptr && p.dx == p.dy && p.lddx != p.lddy) || (p.dx != nullptr && p.dx == p.x && p.lddx != p.ldx)))
        return cudaErrorInvalidValue;
    if (*workspaceBytes < need) return cudaErrorInvalidValue;
    if (cols == 0) return cudaSuccess;
    const NormBackwardPlan pl = normBackwardPlan(rows, cols, nbVec(p), (int)sizeof(T));
    NbFinish<T> f{{nullptr, nullptr}, {nullptr, nullptr}, rows > 0 ? pl.parts : 0, cols, pl.finish};
    // The final sum after the register path's kernel (which lets it in early) with Programmatic
    // Dependent Launch; after the split path's kernels (a cooperative one among them), plainly.
    bool overlap = false;
    if (rows > 0 && arrays > 0 && pl.path == NbRegs) {
        int dev = 0;
        DeviceProps d;
        WARPKIT_TRY(currentDevice(&dev, &d));
        WARPKIT_TRY(pdlAllowed(normBackwardFinishKernel<T>, dev, d.cc, &overlap));
    }
    if (rows > 0) {
        float* ws = reinterpret_cast<float*>(alignUp16(workspace));
        const size_t n = (size_t)pl.parts * (size_t)cols;
        p.pw = dw != nullptr ? ws : nullptr;
        p.pb = db != nullptr ? ws + (dw != nullptr ? n : 0) : nullptr;
        p.sums =
            reinterpret_cast<unsigned long long*>(ws + alignUp16((size_t)arrays * n * sizeof(float)) / sizeof(float));
        p.parts = pl.parts;
        p.slices = pl.slices;
        p.invN = 1.0f / (float)cols;
        WARPKIT_TRY(nbLaunch(p, pl, stream));
    }
    const int k = arrays;
    f.src[0] = dw != nullptr ? p.pw : p.pb, f.out[0] = dw != nullptr ? dw : db, f.src[1] = p.pb, f.out[1] = db;
    if (k == 0) return cudaSuccess;
    const int perBlock = kNbFinishThreads / pl.finish;
    return pdlLaunch(normBackwardFinishKernel<T>, dim3((unsigned)((cols + perBlock - 1) / perBlock), (unsigned)k),
                     dim3(kNbFinishThreads), stream, overlap, f);
}

/// The mixed Add calls' result type: cudaError_t where R is not T (the same-type calls take R = T).
template <typename T, typename R, bool Mixed = !IsSame<T, R>::value> struct NbMixed {};
template <typename T, typename R> struct NbMixed<T, R, true> {
    static_assert(IsSame<T, float>::value && IsRowType<R>::value,
                  "rowLayerNormBackwardAdd / rowRmsNormBackwardAdd: the residual's type R must be T, or __half / "
                  "__nv_bfloat16 when T is float");
    using type = cudaError_t;
};

} // namespace detail

/// The gradients of y = rowLayerNorm(x, w, b, eps) given dy: dx (rows x cols, row r at dx + r *
/// lddx), dw and db (cols each), each written when not null; mean and rstd are the forward's
/// statistics outputs (float arrays of rows values). workspace / workspaceBytes: CUB's two-call
/// rule. Host; asynchronous on `stream`. See the header comment for the formulas, shapes, NaN/inf
/// rules, determinism and errors.
template <typename T>
inline cudaError_t rowLayerNormBackward(const T* dy, const T* x, const typename detail::NonDeduced<T>::type* w,
                                        const float* mean, const float* rstd, typename detail::NonDeduced<T>::type* dx,
                                        typename detail::NonDeduced<T>::type* dw,
                                        typename detail::NonDeduced<T>::type* db, long long rows, int cols,
                                        long long lddy, long long ldx, long long lddx, void* workspace,
                                        size_t* workspaceBytes, cudaStream_t stream = 0) {
    static_assert(detail::IsRowType<T>::value,
                  "rowLayerNormBackward: element type T must be float, __half or __nv_bfloat16");
    if constexpr (!detail::IsRowType<T>::value)
        return cudaErrorInvalidValue; // a wrong T: only the assert above reports
    else {
        const detail::NormBackwardParams<T> p{dy,   x,    w,   mean, rstd, dx, nullptr, nullptr, nullptr,
                                              rows, lddy, ldx, lddx, cols, 1,  1,       0.0f};
        return detail::rowNormBackward(detail::NbAddParams<T>{p, nullptr, 0, nullptr, 0}, false, false, dw, db,
                                       workspace, workspaceBytes, stream);
    }
}

/// rowLayerNormBackward of contiguous rows x cols matrices (ld = cols). Host; asynchronous.
template <typename T>
inline cudaError_t rowLayerNormBackward(const T* dy, const T* x, const typename detail::NonDeduced<T>::type* w,
                                        const float* mean, const float* rstd, typename detail::NonDeduced<T>::type* dx,
                                        typename detail::NonDeduced<T>::type* dw,
                                        typename detail::NonDeduced<T>::type* db, long long rows, int cols,
                                        void* workspace, size_t* workspaceBytes, cudaStream_t stream = 0) {
    return rowLayerNormBackward(dy, x, w, mean, rstd, dx, dw, db, rows, cols, cols, cols, cols, workspace,
                                workspaceBytes, stream);
}

/// The gradients of y = rowRmsNorm(x, w, eps) given dy: dx and dw as for rowLayerNormBackward, rstd
/// the forward's statistics output. Host; asynchronous on `stream`. See the header comment.
template <typename T>
inline cudaError_t rowRmsNormBackward(const T* dy, const T* x, const typename detail::NonDeduced<T>::type* w,
                                      const float* rstd, typename detail::NonDeduced<T>::type* dx,
                                      typename detail::NonDeduced<T>::type* dw, long long rows, int cols,
                                      long long lddy, long long ldx, long long lddx, void* workspace,
                                      size_t* workspaceBytes, cudaStream_t stream = 0) {
    static_assert(detail::IsRowType<T>::value,
                  "rowRmsNormBackward: element type T must be float, __half or __nv_bfloat16");
    if constexpr (!detail::IsRowType<T>::value)
        return cudaErrorInvalidValue; // a wrong T: only the assert above reports
    else {
        const detail::NormBackwardParams<T> p{dy,   x,    w,   nullptr, rstd, dx, nullptr, nullptr, nullptr,
                                              rows, lddy, ldx, lddx,    cols, 1,  1,       0.0f};
        return detail::rowNormBackward(detail::NbAddParams<T>{p, nullptr, 0, nullptr, 0}, true, false, dw,
                                       static_cast<T*>(nullptr), workspace, workspaceBytes, stream);
    }
}

/// rowRmsNormBackward of contiguous rows x cols matrices (ld = cols). Host; asynchronous.
template <typename T>
inline cudaError_t rowRmsNormBackward(const T* dy, const T* x, const typename detail::NonDeduced<T>::type* w,
                                      const float* rstd, typename detail::NonDeduced<T>::type* dx,
                                      typename detail::NonDeduced<T>::type* dw, long long rows, int cols,
                                      void* workspace, size_t* workspaceBytes, cudaStream_t stream = 0) {
    return rowRmsNormBackward(dy, x, w, rstd, dx, dw, rows, cols, cols, cols, cols, workspace, workspaceBytes, stream);
}

/// rowLayerNormBackward with a residual gradient added into dx: dx = the LayerNorm gradient + dres
/// (rows x cols, row r at dres + r * lddres; added in float before dx's one rounding). dx is
/// required and may be dres (lddx == lddres) or dy (lddx == lddy). Host; asynchronous on `stream`.
/// See the header comment.
template <typename T> inline cudaError_t
rowLayerNormBackwardAdd(const T* dy, const T* x, const typename detail::NonDeduced<T>::type* w, const float* mean,
                        const float* rstd, const typename detail::NonDeduced<T>::type* dres,
                        typename detail::NonDeduced<T>::type* dx, typename detail::NonDeduced<T>::type* dw,
                        typename detail::NonDeduced<T>::type* db, long long rows, int cols, long long lddy,
                        long long ldx, long long lddres, long long lddx, void* workspace, size_t* workspaceBytes,
                        cudaStream_t stream = 0) {
    static_assert(detail::IsRowType<T>::value,
                  "rowLayerNormBackwardAdd: element type T must be float, __half or __nv_bfloat16");
    if constexpr (!detail::IsRowType<T>::value)
        return cudaErrorInvalidValue; // a wrong T: only the assert above reports
    else {
        const detail::NormBackwardParams<T> p{dy,   x,    w,   mean, rstd, dx, nullptr, nullptr, nullptr,
                                              rows, lddy, ldx, lddx, cols, 1,  1,       0.0f};
        return detail::rowNormBackward(detail::NbAddParams<T>{p, dres, lddres, nullptr, 0}, false, true, dw, db,
                                       workspace, workspaceBytes, stream);
    }
}

/// rowRmsNormBackward with a residual gradient added into dx, as rowLayerNormBackwardAdd. Host;
/// asynchronous on `stream`. See the header comment.
template <typename T>
inline cudaError_t rowRmsNormBackwardAdd(const T* dy, const T* x, const typename detail::NonDeduced<T>::type* w,
                                         const float* rstd, const typename detail::NonDeduced<T>::type* dres,
                                         typename detail::NonDeduced<T>::type* dx,
                                         typename detail::NonDeduced<T>::type* dw, long long rows, int cols,
                                         long long lddy, long long ldx, long long lddres, long long lddx,
                                         void* workspace, size_t* workspaceBytes, cudaStream_t stream = 0) {
    static_assert(detail::IsRowType<T>::value,
                  "rowRmsNormBackwardAdd: element type T must be float, __half or __nv_bfloat16");
    if constexpr (!detail::IsRowType<T>::value)
        return cudaErrorInvalidValue; // a wrong T: only the assert above reports
    else {
        const detail::NormBackwardParams<T> p{dy,   x,    w,   nullptr, rstd, dx, nullptr, nullptr, nullptr,
                                              rows, lddy, ldx, lddx,    cols, 1,  1,       0.0f};
        return detail::rowNormBackward(detail::NbAddParams<T>{p, dres, lddres, nullptr, 0}, true, true, dw,
                                       static_cast<T*>(nullptr), workspace, workspaceBytes, stream);
    }
}

/// rowLayerNormBackwardAdd for a residual r of another type R than x (rowAddLayerNorm's mixed form:
/// T float, R __half or __nv_bfloat16): dx as rowLayerNormBackwardAdd (x's gradient), and dr
/// (rows x cols, row r at dr + r * lddr) the same values rounded once to R (r's gradient, as
/// PyTorch's backward of the promoted add: the float gradient cast to R). dres and dr are
/// required; dr must not overlap the other arrays. Host; asynchronous on `stream`. See the header
/// comment.
template <typename T, typename R> inline typename detail::NbMixed<T, R>::type
rowLayerNormBackwardAdd(const T* dy, const T* x, const typename detail::NonDeduced<T>::type* w, const float* mean,
                        const float* rstd, const typename detail::NonDeduced<T>::type* dres,
                        typename detail::NonDeduced<T>::type* dx, R* dr, typename detail::NonDeduced<T>::type* dw,
                        typename detail::NonDeduced<T>::type* db, long long rows, int cols, long long lddy,
                        long long ldx, long long lddres, long long lddx, long long lddr, void* workspace,
                        size_t* workspaceBytes, cudaStream_t stream = 0) {
    const detail::NormBackwardParams<T> p{dy,   x,    w,   mean, rstd, dx, nullptr, nullptr, nullptr,
                                          rows, lddy, ldx, lddx, cols, 1,  1,       0.0f};
    return detail::rowNormBackward(detail::NbAddParams<T, R>{p, dres, lddres, dr, lddr}, false, true, dw, db, workspace,
                                   workspaceBytes, stream);
}

/// rowRmsNormBackwardAdd for a residual of another type R than x, as the mixed
/// rowLayerNormBackwardAdd. Host; asynchronous on `stream`. See the header comment.
template <typename T, typename R> inline typename detail::NbMixed<T, R>::type
rowRmsNormBackwardAdd(const T* dy, const T* x, const typename detail::NonDeduced<T>::type* w, const float* rstd,
                      const typename detail::NonDeduced<T>::type* dres, typename detail::NonDeduced<T>::type* dx, R* dr,
                      typename detail::NonDeduced<T>::type* dw, long long rows, int cols, long long lddy, long long ldx,
                      long long lddres, long long lddx, long long lddr, void* workspace, size_t* workspaceBytes,
                      cudaStream_t stream = 0) {
    const detail::NormBackwardParams<T> p{dy,   x,    w,   nullptr, rstd, dx, nullptr, nullptr, nullptr,
                                          rows, lddy, ldx, lddx,    cols, 1,  1,       0.0f};
    return detail::rowNormBackward(detail::NbAddParams<T, R>{p, dres, lddres, dr, lddr}, true, true, dw,
                                   static_cast<T*>(nullptr), workspace, workspaceBytes, stream);
}

} // namespace warpkit
