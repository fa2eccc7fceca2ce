// warpkit/device/softmax_backward.cuh: the gradient of rowSoftmax over the last dimension of a
// rows x cols matrix, called from the host.
//
//   warpkit::rowSoftmaxBackward(y, dy, dx, rows, cols, stream)
//   warpkit::rowSoftmaxBackward(y, dy, dx, rows, cols, kind, ldy, lddy, lddx, stream)
//
// Per row, from the forward output y and the gradient dy of the output, as PyTorch's
// torch._softmax_backward_data / torch._log_softmax_backward_data:
//   SoftmaxPlain, SoftmaxMasked:      dx = y * (dy - sum_j(dy_j * y_j))
//   SoftmaxLog, SoftmaxLogMasked:     dx = dy - exp(y) * sum_j(dy_j)
// (the masked kinds' backward is their unmasked formula: a masked row of zeros (or -inf) gets a
// gradient of zeros (or dy)). The kind is the one the forward rowSoftmax call used.
//
// Types: float, __half, __nv_bfloat16 (read and written in that type, computed in float). Shapes:
// any rows >= 0 and cols >= 0 (either 0 is a no-op that writes nothing), row strides ldy, lddy, lddx >= cols, any
// pointer alignment (each array's rows may be aligned differently), 64-bit row counts. In place: dx may be dy (lddx ==
// lddy) or y (lddx == ldy); otherwise dx must not overlap them.
//
// NaN and infinities: the formulas in float with IEEE rules, as PyTorch's kernels: a NaN in y or dy
// (or an inf * 0 in the sum) makes the row's sum NaN and so every output of the row NaN.
// Accuracy: float rows take the precise exp, 16-bit rows the fast one (thread/softmax.cuh).
//
// Conventions (docs/design.md): returns cudaError_t; asynchronous on `stream`; allocates nothing;
// bad arguments (rows < 0, cols < 0, an ld < cols, null pointers with rows and cols > 0, an unknown kind, dx
// == dy or dx == y with a different ld) return cudaErrorInvalidValue and launch nothing. Paths:
// the row family's rules (device/detail/row_plan.cuh; docs/design.md); staged rows stage y and dy
// both when dy's rows are aligned as y's, else take register clusters (R15). Aligned rows that fill
// every slot of a register plan run its full-row kernel (no slot tested; K5, K7), with the general
// kernel's bits.
#pragma once

#include "detail/row_launch.cuh"

namespace warpkit {
namespace detail {

template <typename T> struct SoftmaxBackwardParams {
    using Elem = T;
    using Exchange = float; // a part's sum of dy * y (log: of dy)
    using Merge = Sum;
    using Acc = float;
    static constexpr int kInputs = 2; // y, dy
    static constexpr int kColumns = 0;
    static constexpr bool kOutFast = false;
    static constexpr bool kReduceWarp = false;
    static constexpr bool kFullRows = true; // full-row kernels (K5, K7)
    // Warp path: segments of one vector a lane first (R1).
    static constexpr int kWarpChunks = 1;
    const T* y;
    const T* dy;
    T* dx;
    long long ldy, lddy, lddx;
    bool log;
};

template <typename T> inline SoftmaxBackwardParams<T> rowAt(SoftmaxBackwardParams<T> p, long long r0) {
    p.y += r0 * p.ldy;
    p.dy += r0 * p.lddy;
    p.dx += r0 * p.lddx;
    return p;
}
template <typename T> inline bool rowAligned(const SoftmaxBackwardParams<T>& p, int cols) {
    return rowsAligned(p.y, p.ldy, cols) && rowsAligned(p.dy, p.lddy, cols) && rowsAligned(p.dx, p.lddx, cols);
}
/// Staged rows bulk-copy y and dy with y's split: every row of dy has y's alignment modulo 16 bytes.
template <typename T> inline bool rowStageable(const SoftmaxBackwardParams<T>& p) {
    return ((size_t)p.dy - (size_t)p.y) % 16 == 0 && ((p.lddy - p.ldy) * (long long)sizeof(T)) % 16 == 0;
}
template <typename T> WARPKIT_DEVICE const T* rowInput(const SoftmaxBackwardParams<T>& p, int k, long long row) {
    return k == 0 ? p.y + row * p.ldy : p.dy + row * p.lddy;
}
template <typename T> WARPKIT_DEVICE T* rowOutput(const SoftmaxBackwardParams<T>& p, long long row) { return p.dx + row * p.lddx; }
template <typename T> WARPKIT_DEVICE T rowFill(const SoftmaxBackwardParams<T>&, int) { return Arith<T>::from_acc(0.0f); }

/// The term element (y, dy) adds to the row's sum.
template <typename T> WARPKIT_DEVICE float softmaxBackwardTerm(const SoftmaxBackwardParams<T>& p, float y, float dy) {
    return p.log ? dy : dy * y;
}
/// dx of element (y, dy) in a row whose sum is s.
template <typename T> WARPKIT_DEVICE float softmaxBackwardOut(const SoftmaxBackwardParams<T>& p, float s, float y, float dy) {
    return p.log ? dy - expDiff<sizeof(T) == 4>(y, 0.0f) * s : y * (dy - s);
}

/// Register paths: one sum over the row (empty slots hold zeros), then the outputs in place.
template <int C, int E, typename T, int K, typename G>
WARPKIT_DEVICE float rowRegs(const SoftmaxBackwardParams<T>& p, long long, int, const RowPart&, float (&x)[2][K], G g) {
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < K; ++j) s += softmaxBackwardTerm(p, x[0][j], x[1][j]);
    s = groupCombine(g, groupSum(g, s), Sum{});
#pragma unroll
    for (int j = 0; j < K; ++j) x[0][j] = softmaxBackwardOut(p, s, x[0][j], x[1][j]);
    return s;
}

template <typename T> WARPKIT_DEVICE float rowStatsInit(const SoftmaxBackwardParams<T>&, long long, int, bool) {
    return 0.0f;
}
template <int N, typename T>
WARPKIT_DEVICE void rowStatsAdd(const SoftmaxBackwardParams<T>& p, float& s, const float (&x)[2][N], int) {
#pragma unroll
    for (int k = 0; k < N; ++k) s += softmaxBackwardTerm(p, x[0][k], x[1][k]);
}
template <int Threads, typename T> WARPKIT_DEVICE float rowStatsTotal(const SoftmaxBackwardParams<T>&, float s) {
    return blockReduceSum<Threads>(s);
}
template <typename T>
WARPKIT_DEVICE float rowFactors(const SoftmaxBackwardParams<T>&, float, float s, long long, const VectorSplit&, int) {
    return s;
}
template <int N, typename T>
WARPKIT_DEVICE void rowOut(const SoftmaxBackwardParams<T>& p, float s, float (&x)[2][N], int) {
#pragma unroll
    for (int k = 0; k < N; ++k) x[0][k] = softmaxBackwardOut(p, s, x[0][k], x[1][k]);
}
template <typename T> WARPKIT_DEVICE void rowOutputs(const SoftmaxBackwardParams<T>&, float, long long) {}

} // namespace detail

/// dx = the gradient of y = rowSoftmax(x, kind) given dy, for rows x cols matrices whose row r
/// starts at y + r * ldy, dy + r * lddy and dx + r * lddx. Host; asynchronous on `stream`. See the
/// header comment for the formulas, shapes, in-place use, errors and NaN/inf rules.
template <typename T>
inline cudaError_t rowSoftmaxBackward(const T* y, const T* dy, T* dx, long long rows, int cols, SoftmaxKind kind, long long ldy,
                                      long long lddy, long long lddx, cudaStream_t stream = 0) {
    static_assert(detail::IsRowType<T>::value, "rowSoftmaxBackward: element type T must be float, __half or __nv_bfloat16");
    if (rows < 0 || cols < 0 || ldy < cols || lddy < cols || lddx < cols || (int)kind < 0 || (int)kind > 3)
        return cudaErrorInvalidValue;
    if (rows == 0 || cols == 0) return cudaSuccess;
    if (y == nullptr || dy == nullptr || dx == nullptr || (dx == dy && lddx != lddy) || (dx == y && lddx != ldy))
        return cudaErrorInvalidValue;
    const detail::SoftmaxBackwardParams<T> p{y, dy, dx, ldy, lddy, lddx, (kind & SoftmaxLog) != 0};
    return detail::rowOpDispatch(p, rows, cols, stream);
}

/// dx = the gradient of y = rowSoftmax(x) (SoftmaxPlain) given dy, contiguous rows x cols
/// matrices (ld = cols). Host; asynchronous on `stream`.
template <typename T>
inline cudaError_t rowSoftmaxBackward(const T* y, const T* dy, T* dx, long long rows, int cols, cudaStream_t stream = 0) {
    return rowSoftmaxBackward(y, dy, dx, rows, cols, SoftmaxPlain, cols, cols, cols, stream);
}

} // namespace warpkit
