// warpkit/device/add_norm.cuh: a residual add fused into LayerNorm / RMSNorm, as transformer blocks
// use it, called from the host.
//
//   warpkit::rowAddLayerNorm(x, r, h, y, rows, cols, w, b, eps, mean, rstd, ldx, ldr, ldh, ldy, stream)
//       h = x + r, then y = rowLayerNorm(h): y = (h - mean) * rstd * w + b per row.
//   warpkit::rowAddRmsNorm(x, r, h, y, rows, cols, w, eps, rstd, ldx, ldr, ldh, ldy, stream)
//       h = x + r, then y = rowRmsNorm(h).
//   (and the contiguous forms without statistics: ld = cols)
//
// h is the next residual. Rounding: each element of h is x + r computed in float and rounded once
// to T, and y normalises the rounded h, as PyTorch's unfused `h = x + r; y = layer_norm(h)` does: h
// matches that chain bit for bit. The statistics are shifted by h's first element on every path, as
// rowLayerNorm(h)'s are (so a constant h has variance 0 exactly); y and the statistics match
// rowLayerNorm(h) to float rounding (the two may take different plans).
//
// Types, w, b, eps, mean, rstd, NaN and infinities: as rowLayerNorm / rowRmsNorm (device/norm.cuh),
// applied to h. Mixed types (autocast's residual stream): r may be __half or __nv_bfloat16 with x,
// h, y, w, b float; h = float(x) + float(r), as PyTorch's x + r with type promotion (a float r with
// a 16-bit x: pass r as x). r is read a float vector's 4 elements (8 bytes) at a time. Shapes: any rows >= 0 and cols
// >= 0 (either 0 writes nothing), row strides ldx, ldr, ldh, ldy >= cols (elements), any pointer alignment, each array
// aligned independently of the others. In place: h may be x (ldh == ldx) or r (ldh == ldr; not with mixed types); y
// must overlap none of x, r and h. Each element of h is read (as x or r) and written by the same thread, and h is
// written only where no other thread still reads the row (the warp path: at once; the block path: after the row's
// statistics; the streamed path: in its output sweep), so in-place calls are safe on every path.
//
// Conventions (docs/design.md): returns cudaError_t; asynchronous on `stream`; allocates nothing;
// deterministic; bad arguments (rows < 0, cols < 0, an ld < cols, a null x, r, h or y with rows and
// cols > 0, y equal to x, r or h, h equal to x or r with a different ld, eps NaN or infinite) return
// cudaErrorInvalidValue and launch nothing. Paths: the row family's (device/detail/row_plan.cuh)
// with two inputs: the register paths and the streamed path (the staged path's bulk copies take one
// input, so its plans run in register clusters, R15).
#pragma once

#include "norm.cuh"

namespace warpkit {
namespace detail {

/// rowAddLayerNorm / rowAddRmsNorm: NormParams n of h = x + r (n.x is x), r (of type R: T, or a
/// 16-bit type when T is float, input 1 of the row kernels, widened exactly as it loads), and h.
template <typename T, typename R = T> struct AddNormParams {
    using Elem = T;
    using Elem1 = R;
    using Exchange = WelfordState;
    using Merge = WelfordMerge;
    using Acc = typename NormParams<T>::Acc;
    static constexpr int kInputs = 2;       // x and r
    static constexpr int kColumns = 2;      // w and b
    static constexpr bool kOutFast = false; // the staged path does not run (two inputs)
    static constexpr bool kReduceWarp = false;
    static constexpr int kWarpChunks = 2;
    // R25's warp of 6 vectors a lane on unaligned fp32 rows spilled 8 bytes with the two inputs:
    // those rows take R1's warp of 8 vectors a lane instead (row_op.cuh).
    static constexpr bool kWarpFitUnaligned = false;
    NormParams<T> n;
    const R* r;
    T* h;
    long long ldr, ldh;
};

/// A row's factors (NormRow) and where its h goes.
template <typename T> struct AddNormRow {
    NormRow n;
    T* h;
};

/// h's element from x and r, rounded once to T, as float.
template <typename T> WARPKIT_DEVICE float addRound(float x, float r) {
    return Arith<T>::to_acc(Arith<T>::from_acc(x + r));
}
/// N values of h from the two inputs' N values.
template <int N, typename T> WARPKIT_DEVICE void addRows(const float (&x)[2][N], float (&hx)[1][N]) {
#pragma unroll
    for (int k = 0; k < N; ++k) hx[0][k] = addRound<T>(x[0][k], x[1][k]);
}

template <typename T, typename R> inline AddNormParams<T, R> rowAt(AddNormParams<T, R> p, long long r0) {
    p.n = rowAt(p.n, r0);
    p.r += r0 * p.ldr;
    p.h += r0 * p.ldh;
    return p;
}
template <typename T, typename R> inline bool rowAligned(const AddNormParams<T, R>& p, int cols) {
    return rowAligned(p.n, cols) && rowsAlignedAs<T>(p.r, p.ldr, cols) && rowsAligned(p.h, p.ldh, cols);
}
/// Input k: x, or r where it has x's type (rowInput1: r of either type).
template <typename T, typename R> WARPKIT_DEVICE const T* rowInput(const AddNormParams<T, R>& p, int k, long long row) {
    if constexpr (IsSame<T, R>::value) return k == 0 ? p.n.x + row * p.n.ldx : p.r + row * p.ldr;
    else return p.n.x + row * p.n.ldx;
}
template <typename T, typename R> WARPKIT_DEVICE const R* rowInput1(const AddNormParams<T, R>& p, long long row) {
    return p.r + row * p.ldr;
}
template <typename T, typename R> WARPKIT_DEVICE T* rowOutput(const AddNormParams<T, R>& p, long long row) {
    return rowOutput(p.n, row);
}
template <typename T, typename R> WARPKIT_DEVICE T rowFill(const AddNormParams<T, R>&, int) {
    return Arith<T>::from_acc(0.0f);
}
template <typename T, typename R> WARPKIT_HD const T* rowColumn(const AddNormParams<T, R>& p, int k) {
    return rowColumn(p.n, k);
}
template <typename T, typename R>
WARPKIT_DEVICE void rowSetColumns(AddNormParams<T, R>& p, const T* const (&c)[2], int origin) {
    rowSetColumns(p.n, c, origin);
}

/// N values of h stored from column col of row pointer h (one 16-byte store where N is a whole
/// vector and h + col is aligned).
template <int N, typename T> WARPKIT_DEVICE void addStore(T* h, int col, const float* v) {
    if constexpr (N == vectorElems<T>()) {
        Vector16<T> o;
#pragma unroll
        for (int k = 0; k < N; ++k) o.e[k] = Arith<T>::from_acc(v[k]);
        storeVectorAt(h + col, o, (((size_t)(h + col)) & 15) == 0);
    } else {
#pragma unroll
        for (int k = 0; k < N; ++k) storeScalar(h + col + k, Arith<T>::from_acc(v[k]));
    }
}

/// Whether the threads of group G read only their own elements of the row, the row's first element
/// by shuffle (a warp segment), so that each may store its h as soon as it has it. A block (of a
/// cluster) reads the row's first elements of x and r from memory (groupFirst), which h may overwrite.
template <typename G> struct AddStoresEarly { static constexpr bool value = false; };
template <int W> struct AddStoresEarly<SegmentGroup<W>> { static constexpr bool value = true; };

/// Register paths: h from the slots into x[0], then rowLayerNorm's register statistics and outputs
/// of x[0] (normRegs). h is stored from the slots while they hold h: on the warp path before the
/// statistics (each element is read and written by one lane alone); on the block path once every
/// read of the row and every group reduction is done (normRegs' `before`, its slots kept as h rather
/// than h - shift until then), so h may be x or r on both.
template <int C, int E, typename T, typename R, int K, typename G> WARPKIT_DEVICE AddNormRow<T>
rowRegs(const AddNormParams<T, R>& p, long long row, int, const RowPart& part, float (&x)[2][K], G g) {
    constexpr int V = vectorElems<T>();
#pragma unroll
    for (int j = 0; j < K; ++j) x[0][j] = addRound<T>(x[0][j], x[1][j]);
    auto store = [&] {
        T* h = p.h + row * p.ldh;
        forEachPiece<T, C, E>(
            part, [&](int j, int col) { addStore<V>(h, col, &x[0][j]); },
            [&](int j, int col) { addStore<1>(h, col, &x[0][j]); });
    };
    if constexpr (AddStoresEarly<G>::value) {
        store();
        // The statistics' shift: h's first element, from the lane holding it.
        auto first = [&](float lead) { return groupFirst(g, lead, rowInput(p, 0, row)); };
        return AddNormRow<T>{normRegs<C, E, false>(p.n, part, x, g, first, [] {}), nullptr};
    } else {
        // h's first element from x's and r's in memory (it lives in one block of the cluster; these
        // reads precede every exchange, and store() follows the last).
        auto first = [&](float lead) {
            return addRound<T>(groupFirst(g, lead, rowInput(p, 0, row)), groupFirst(g, lead, rowInput1(p, row)));
        };
        return AddNormRow<T>{normRegs<C, E, true>(p.n, part, x, g, first, store), nullptr};
    }
}

template <typename T, typename R>
WARPKIT_DEVICE typename NormParams<T>::Acc rowStatsInit(const AddNormParams<T, R>& p, long long row, int, bool) {
    const float s = p.n.rms ? 0.0f
                            : addRound<T>(Arith<T>::to_acc(loadScalar(p.n.x + row * p.n.ldx)),
                                          Arith<R>::to_acc(loadScalar(p.r + row * p.ldr)));
    return typename NormParams<T>::Acc{welfordEmpty(), s};
}
template <int N, typename T, typename R> WARPKIT_DEVICE void
rowStatsAdd(const AddNormParams<T, R>& p, typename NormParams<T>::Acc& a, const float (&x)[2][N], int col) {
    float hx[1][N];
    addRows<N, T>(x, hx);
    rowStatsAdd<N>(p.n, a, hx, col);
}
template <int Threads, typename T, typename R>
WARPKIT_DEVICE WelfordState rowStatsTotal(const AddNormParams<T, R>& p, const typename NormParams<T>::Acc& a) {
    return rowStatsTotal<Threads>(p.n, a);
}
template <typename T, typename R>
WARPKIT_DEVICE AddNormRow<T> rowFactors(const AddNormParams<T, R>& p, const typename NormParams<T>::Acc& a,
                                        const WelfordState& st, long long row, const VectorSplit& sp, int) {
    return AddNormRow<T>{normRow(p.n, st, a.shift, sp), p.h + row * p.ldh};
}
/// Streamed (and staged) outputs: h stored, then y of h in place over x[0].
template <int N, typename T, typename R>
WARPKIT_DEVICE void rowOut(const AddNormParams<T, R>& p, const AddNormRow<T>& f, float (&x)[2][N], int col) {
    float hx[1][N];
    addRows<N, T>(x, hx);
    addStore<N>(f.h, col, hx[0]);
    normOut<N, NormRaw>(p.n, f.n, hx[0], col);
#pragma unroll
    for (int k = 0; k < N; ++k) x[0][k] = hx[0][k];
}
template <typename T, typename R>
WARPKIT_DEVICE void rowOutputs(const AddNormParams<T, R>& p, const AddNormRow<T>& f, long long row) {
    rowOutputs(p.n, f.n, row);
}

/// Whether arrays a and b (row strides la, lb) are the same, or do not share a first element.
inline bool addSameOrApart(const void* a, long long la, const void* b, long long lb) { return a != b || la == lb; }

template <typename T, typename R>
inline cudaError_t rowAddNorm(const AddNormParams<T, R>& p, long long rows, int cols, cudaStream_t stream) {
    static_assert(IsRowType<T>::value && (IsSame<R, T>::value || (IsSame<T, float>::value && IsRowType<R>::value)),
                  "rowAddLayerNorm / rowAddRmsNorm: residual type R must be T, or __half / __nv_bfloat16 when T "
                  "is float (h in the promoted type T; pass the wider array as x)");
    if (rows < 0 || cols < 0 || p.n.ldx < cols || p.n.ldy < cols || p.ldr < cols || p.ldh < cols ||
        !__builtin_isfinite(p.n.eps))
        return cudaErrorInvalidValue;
    if (rows == 0 || cols == 0) return cudaSuccess;
    if (p.n.x == nullptr || p.r == nullptr || p.h == nullptr || p.n.y == nullptr) return cudaErrorInvalidValue;
    const void* y = p.n.y;
    if (y == p.n.x || y == p.r || y == p.h || !addSameOrApart(p.h, p.ldh, p.n.x, p.n.ldx) ||
        (IsSame<R, T>::value ? !addSameOrApart(p.h, p.ldh, p.r, p.ldr) : (const void*)p.h == (const void*)p.r))
        return cudaErrorInvalidValue;
    return rowOpDispatch(p, rows, cols, stream);
}

/// The mixed-type calls' result type: cudaError_t where R is not T (the same-type calls take R = T).
template <typename T, typename R, bool Mixed = !IsSame<T, R>::value> struct AddMixed {};
template <typename T, typename R> struct AddMixed<T, R, true> { using type = cudaError_t; };

} // namespace detail

/// h = x + r (each element rounded once to T) and the LayerNorm of h into y, for rows x cols
/// matrices whose row i starts at x + i * ldx (r + i * ldr, h + i * ldh, y + i * ldy). w, b: cols
/// elements each, or nullptr (w = 1, b = 0). mean, rstd: float arrays of rows values that get each
/// row's statistics of h, or nullptr. h may be x or r (in place). Host; asynchronous on `stream`.
/// See the header comment for rounding, shapes, alignment, errors and NaN/inf rules.
template <typename T> inline cudaError_t rowAddLayerNorm(const T* x, const typename detail::NonDeduced<T>::type* r,
                                                         T* h, T* y, long long rows, int cols,
                                                         const typename detail::NonDeduced<T>::type* w,
                                                         const typename detail::NonDeduced<T>::type* b, float eps,
                                                         float* mean, float* rstd, long long ldx, long long ldr,
                                                         long long ldh, long long ldy, cudaStream_t stream = 0) {
    static_assert(detail::IsRowType<T>::value,
                  "rowAddLayerNorm: element type T must be float, __half or __nv_bfloat16");
    const detail::NormParams<T> n{x, y, w, b, mean, rstd, ldx, ldy, eps, false};
    return detail::rowAddNorm(detail::AddNormParams<T>{n, r, h, ldr, ldh}, rows, cols, stream);
}

/// rowAddLayerNorm of contiguous rows x cols matrices (every ld = cols), without the statistics.
/// Host; asynchronous on `stream`.
template <typename T>
inline cudaError_t rowAddLayerNorm(const T* x, const typename detail::NonDeduced<T>::type* r, T* h, T* y,
                                   long long rows, int cols, const typename detail::NonDeduced<T>::type* w,
                                   const typename detail::NonDeduced<T>::type* b, float eps, cudaStream_t stream = 0) {
    return rowAddLayerNorm(x, r, h, y, rows, cols, w, b, eps, nullptr, nullptr, cols, cols, cols, cols, stream);
}

/// h = x + r (each element rounded once to T) and the RMSNorm of h into y, rows as for
/// rowAddLayerNorm. w: cols elements or nullptr (w = 1). rstd: a float array of rows values, or
/// nullptr. h may be x or r. Host; asynchronous on `stream`. See the header comment.
template <typename T>
inline cudaError_t rowAddRmsNorm(const T* x, const typename detail::NonDeduced<T>::type* r, T* h, T* y, long long rows,
                                 int cols, const typename detail::NonDeduced<T>::type* w, float eps, float* rstd,
                                 long long ldx, long long ldr, long long ldh, long long ldy, cudaStream_t stream = 0) {
    static_assert(detail::IsRowType<T>::value, "rowAddRmsNorm: element type T must be float, __half or __nv_bfloat16");
    const detail::NormParams<T> n{x, y, w, nullptr, nullptr, rstd, ldx, ldy, eps, true};
    return detail::rowAddNorm(detail::AddNormParams<T>{n, r, h, ldr, ldh}, rows, cols, stream);
}

/// rowAddRmsNorm of contiguous rows x cols matrices (every ld = cols), without the rstd output.
/// Host; asynchronous on `stream`.
template <typename T> inline cudaError_t rowAddRmsNorm(const T* x, const typename detail::NonDeduced<T>::type* r, T* h,
                                                       T* y, long long rows, int cols,
                                                       const typename detail::NonDeduced<T>::type* w, float eps,
                                                       cudaStream_t stream = 0) {
    return rowAddRmsNorm(x, r, h, y, rows, cols, w, eps, nullptr, cols, cols, cols, cols, stream);
}

/// rowAddLayerNorm with r of another type R than x: a 16-bit r (__half or __nv_bfloat16) of a float
/// x, h = float(x) + float(r) rounded once to float, as PyTorch's x + r with type promotion (for a
/// float r and a 16-bit x, pass r as x: the add is commutative). h may be x, not r. Host;
/// asynchronous on `stream`. See the header comment.
template <typename T, typename R>
inline typename detail::AddMixed<T, R>::type rowAddLayerNorm(const T* x, const R* r, T* h, T* y, long long rows,
                                                             int cols, const typename detail::NonDeduced<T>::type* w,
                                                             const typename detail::NonDeduced<T>::type* b, float eps,
                                                             float* mean, float* rstd, long long ldx, long long ldr,
                                                             long long ldh, long long ldy, cudaStream_t stream = 0) {
    const detail::NormParams<T> n{x, y, w, b, mean, rstd, ldx, ldy, eps, false};
    return detail::rowAddNorm(detail::AddNormParams<T, R>{n, r, h, ldr, ldh}, rows, cols, stream);
}

/// rowAddRmsNorm with r of another type R than x, as the mixed rowAddLayerNorm. Host; asynchronous
/// on `stream`. See the header comment.
template <typename T, typename R>
inline typename detail::AddMixed<T, R>::type rowAddRmsNorm(const T* x, const R* r, T* h, T* y, long long rows, int cols,
                                                           const typename detail::NonDeduced<T>::type* w, float eps,
                                                           float* rstd, long long ldx, long long ldr, long long ldh,
                                                           long long ldy, cudaStream_t stream = 0) {
    const detail::NormParams<T> n{x, y, w, nullptr, nullptr, rstd, ldx, ldy, eps, true};
    return detail::rowAddNorm(detail::AddNormParams<T, R>{n, r, h, ldr, ldh}, rows, cols, stream);
}

} // namespace warpkit
