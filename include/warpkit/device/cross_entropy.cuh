// warpkit/device/cross_entropy.cuh: cross-entropy loss of each row of logits against an integer
// target, and its gradient in the same pass, called from the host.
//
//   warpkit::rowCrossEntropy(logits, targets, loss, rows, cols, stream)
//   warpkit::rowCrossEntropy(logits, targets, loss, grad, rows, cols, ignoreIndex, labelSmoothing,
//                            gradScale, ldLogits, ldGrad, stream)
//
// Per row r with target t = targets[r] and lse = log(sum_j exp(x_j)) (x: the row's logits), as
// torch.nn.functional.cross_entropy(x, t, reduction='none', ignore_index, label_smoothing = e):
//   loss[r] = lse - x_t                                        (e = 0)
//   loss[r] = (1 - e) * (lse - x_t) + e * (lse - mean_j x_j)   (0 < e <= 1)
//   grad[r][j] = gradScale * (softmax(x)_j - e / cols - (1 - e) * (j == t))
// gradScale = 1 gives the gradient of the summed loss; 1 / (rows whose target is not ignoreIndex)
// gives that of the mean (reduction='mean'). A row whose target is ignoreIndex gets loss 0 and a
// gradient of zeros. One read of the logits, one write of the gradient: grad may be a separate
// buffer or the logits themselves (grad == logits with ldGrad == ldLogits), and the two give
// bitwise the same values.
//
// Types: logits and grad float, __half or __nv_bfloat16 (computed in float); targets are int64
// (long long), PyTorch's class-index type, so a torch tensor of targets is passed as it is; loss is
// float. loss or grad may be nullptr (not both): only the other is written.
// Shapes: any rows >= 0 (0 is a no-op), any cols >= 1, row strides ldLogits, ldGrad >= cols, any
// pointer alignment, 64-bit row counts. cols = 0 stays an error: a row then has a loss but no valid
// target (targets lie in [0, cols)), so there is nothing defined to write.
//
// NaN and infinities, as PyTorch: a NaN or +inf logit makes the row's loss and gradient NaN; a row
// of all -inf gives NaN; a -inf logit has probability 0 (a finite gradient), and the loss is +inf
// when the target's logit is -inf or, with e > 0, when any logit is -inf (the smoothing term);
// e = 1 with a -inf target logit gives NaN (0 * inf, as PyTorch). Where PyTorch raises a device-side assertion (a
// target outside [0, cols) that is not ignoreIndex), the row's loss and gradient are NaN. A row whose target is
// ignoreIndex gets exactly 0 loss and gradient whatever its logits. Accuracy: float rows take the
// precise exp, 16-bit rows the fast one (thread/softmax.cuh).
//
// Conventions (docs/design.md): returns cudaError_t; asynchronous on `stream`; allocates nothing;
// bad arguments (rows < 0, cols < 1, ldLogits < cols, ldGrad < cols with a grad, null logits or
// targets with rows > 0, null loss and grad, grad == logits with ldGrad != ldLogits,
// labelSmoothing outside [0, 1]) return cudaErrorInvalidValue and launch nothing. Paths:
// the row family's rules (device/detail/row_plan.cuh; docs/design.md), with warp lanes of 4 vectors
// or more; the loss alone (no gradient) takes the rules without per-element outputs: many rows of
// 1032..6151 columns (16-bit; fp32 2052..3075) a warp a row, streamed (R16), many other rows of
// 4097..8192 columns staged in one block (R17), and rows past 8192 columns in slices of about
// 32 KB (R18-R20).
#pragma once

#include "detail/row_launch.cuh"

namespace warpkit {
namespace detail {

/// What the parts of a row combine: the softmax state {max, sum of exp(x - max)} of their logits,
/// the logits' sum and the target's logit (a sum: only the part holding it adds it, others add 0).
struct CrossEntropyState {
    float max, sum, sumx, xt;
};
struct CrossEntropyMerge {
    WARPKIT_HD CrossEntropyState operator()(CrossEntropyState a, CrossEntropyState b) const {
        const SoftmaxState m = softmaxStateMerge(SoftmaxState{a.max, a.sum}, SoftmaxState{b.max, b.sum});
        return CrossEntropyState{m.max, m.sum, a.sumx + b.sumx, a.xt + b.xt};
    }
};

template <typename T> struct CrossEntropyParams {
    using Elem = T;
    using Exchange = CrossEntropyState;
    using Merge = CrossEntropyMerge;
    struct Acc {
        SoftmaxState st; // streamed path: this thread's running softmax state, logit sum and x_t
        float sumx, xt;
        int target, mode;
    };
    static constexpr int kInputs = 1;
    static constexpr int kColumns = 0;
    static constexpr bool kOutFast = true;    // rowOutFastOk: a row with a valid target
    static constexpr bool kReduceWarp = true; // the loss alone may take the warp-streamed path
    // Warp path: 4 vectors a lane, so that a warp shares a short row's own work (three sums, a
    // log, the target's load) over more rows (R1).
    static constexpr int kWarpChunks = 4;
    const T* x;
    const long long* targets;
    float* loss;
    T* grad;
    long long ldx, ldg, ignore;
    float smoothing, scale;
};

/// A row's factors: probabilities exp(x - max) * scale; the loss; the gradient's terms. mode: 0 a
/// valid target, 1 ignored (loss and gradient 0), 2 out of range (NaN).
struct CrossEntropyRow {
    float max, scale, loss, hot, smooth, gscale;
    int target, mode;
};

template <typename T> inline CrossEntropyParams<T> rowAt(CrossEntropyParams<T> p, long long r0) {
    p.x += r0 * p.ldx;
    p.targets += r0;
    if (p.loss) p.loss += r0;
    if (p.grad) p.grad += r0 * p.ldg;
    return p;
}
template <typename T> inline bool rowAligned(const CrossEntropyParams<T>& p, int cols) {
    return rowsAligned(p.x, p.ldx, cols) && (p.grad == nullptr || rowsAligned(p.grad, p.ldg, cols));
}
template <typename T> WARPKIT_DEVICE const T* rowInput(const CrossEntropyParams<T>& p, int, long long row) { return p.x + row * p.ldx; }
template <typename T> WARPKIT_DEVICE T* rowOutput(const CrossEntropyParams<T>& p, long long row) {
    return p.grad != nullptr ? p.grad + row * p.ldg : nullptr;
}
template <typename T> WARPKIT_DEVICE T rowFill(const CrossEntropyParams<T>&, int) { return negInfAs<T>(); }

/// The row's target column (-1 when there is none) and its mode (CrossEntropyRow).
template <typename T> WARPKIT_DEVICE int crossEntropyTarget(const CrossEntropyParams<T>& p, long long row, int cols, int* mode) {
    const long long t = p.targets[row];
    *mode = t == p.ignore ? 1 : (t < 0 || t >= cols) ? 2 : 0;
    return *mode == 0 ? (int)t : -1;
}

/// The row's factors and loss from its combined state.
template <typename T>
WARPKIT_DEVICE CrossEntropyRow crossEntropyRow(const CrossEntropyParams<T>& p, const CrossEntropyState& st, int target, int mode, int cols) {
    const SoftmaxFactors sf = softmaxFactors<SoftmaxPlain>(SoftmaxState{st.max, st.sum});
    CrossEntropyRow f;
    f.max = sf.max;
    f.scale = sf.scale;
    f.hot = 1.0f - p.smoothing;
    const float rcols = welfordRcp((float)cols); // 1 / cols (1 ulp)
    f.smooth = p.smoothing * rcols;
    f.gscale = p.scale;
    f.target = target;
    f.mode = mode;
    const float nll = (sf.max - st.xt) + sf.logSum; // lse - x_t, x_t - max first: exact near the max
    const float smoothed = (sf.max - st.sumx * rcols) + sf.logSum;
    // e = 0 leaves the smoothing term out (its 0 * inf would turn a -inf logit's +inf into NaN).
    const float loss = p.smoothing > 0.0f ? f.hot * nll + p.smoothing * smoothed : nll;
    f.loss = mode == 0 ? loss : mode == 1 ? 0.0f : __builtin_nanf("");
    return f;
}

/// The gradient of an element whose probability is prob, in a row with a valid target (mode 0): at
/// a column other than the target (Off) and at the target (At).
WARPKIT_DEVICE float crossEntropyGradOff(const CrossEntropyRow& f, float prob) { return f.gscale * (prob - f.smooth); }
WARPKIT_DEVICE float crossEntropyGradAt(const CrossEntropyRow& f, float prob) { return f.gscale * ((prob - f.smooth) - f.hot); }
/// Every gradient element of a row without a valid target: 0 when ignored (mode 1), NaN when out
/// of range (mode 2).
WARPKIT_DEVICE float crossEntropyGradNoTarget(const CrossEntropyRow& f) { return f.mode == 1 ? 0.0f : __builtin_nanf(""); }
/// The gradient of the element at column col whose probability is prob, in any row.
WARPKIT_DEVICE float crossEntropyGrad(const CrossEntropyRow& f, float prob, int col) {
    const float g = col == f.target ? crossEntropyGradAt(f, prob) : crossEntropyGradOff(f, prob);
    return f.mode == 0 ? g : crossEntropyGradNoTarget(f);
}

/// Whether the calling thread's part slots hold column `target` (>= 0) of the row: a body vector
/// first + t + c*G below end, or extra element t + j*G (loadShare's layout). One thread a row does.
template <typename T> WARPKIT_DEVICE bool partHoldsColumn(const RowPart& part, int target) {
    constexpr int V = vectorElems<T>();
    const int rel = target - part.s.head;
    if (rel >= 0 && rel < (int)part.s.vectors * V) {
        const int vec = rel / V;
        return vec >= part.first && vec < part.end && (vec - part.first) % part.G == part.t;
    }
    const int e = rel < 0 ? target : part.s.head + (rel - (int)part.s.vectors * V); // its extra index
    return part.extras && e % part.G == part.t;
}

/// Register paths: the part's max, then {sum of exp(x - max), sum of x (with smoothing), x_t} (the
/// exps kept in the slots), the parts' states merged across the cluster, the loss, then the
/// gradient in place from the kept exps (one exp per element). x_t is read directly by the one
/// thread whose slots hold it, so no element is compared with the target: it is that column's
/// only writer, and reads it before it writes anything.
template <int C, int E, typename T, int K, typename G>
WARPKIT_DEVICE CrossEntropyRow rowRegs(const CrossEntropyParams<T>& p, long long row, int cols, const RowPart& part, float (&x)[1][K], G g) {
    int mode;
    const int target = crossEntropyTarget(p, row, cols, &mode);
    const bool own = target >= 0 && partHoldsColumn<T>(part, target);
    const float xt = own ? Arith<T>::to_acc(loadScalar(rowInput(p, 0, row) + target)) : 0.0f;
    float m = x[0][0]; // empty slots hold -inf
#pragma unroll
    for (int j = 1; j < K; ++j) m = Max{}(m, x[0][j]);
    m = groupMax(g, m);
    const float ms = m == negInf() ? 0.0f : m; // all -inf: every exp is 0 and the sum 0
    float s[3] = {0.0f, 0.0f, xt};
    if (p.smoothing > 0.0f) forEachSlot<T, C, E>(part, [&](int j, int, bool ok) { s[1] += ok ? x[0][j] : 0.0f; });
#pragma unroll
    for (int j = 0; j < K; ++j) { // an empty slot's -inf gives exp 0
        x[0][j] = expDiff<sizeof(T) == 4>(x[0][j], ms); // 16-bit rows: the fast exp
        s[0] += x[0][j];
    }
    groupSums(g, s);
    const CrossEntropyState mine{m, s[0], s[1], s[2]};
    const CrossEntropyState st = groupCombine(g, mine, CrossEntropyMerge{});
    const CrossEntropyRow f = crossEntropyRow(p, st, target, mode, cols);
    if (p.grad != nullptr) {
        if (f.mode != 0) {
            const float v = crossEntropyGradNoTarget(f);
#pragma unroll
            for (int j = 0; j < K; ++j) x[0][j] = v;
            return f;
        }
        // The kept exps are relative to this part's max: probabilities are exp * scale * exp(part
        // max - row max). A part of only -inf in a row with other values: zeros (NaN scale: NaN).
        float k = f.scale;
        if (groupSplit(g)) k *= m == negInf() && st.max != negInf() ? 0.0f : expDiff(ms, f.max);
#pragma unroll
        for (int j = 0; j < K; ++j) x[0][j] = crossEntropyGradOff(f, x[0][j] * k);
        // The target's own term, from the same exp of the same value.
        if (own)
            forEachSlot<T, C, E>(part, [&](int j, int col, bool ok) {
                if (ok && col == target) x[0][j] = crossEntropyGradAt(f, expDiff<sizeof(T) == 4>(xt, ms) * k);
            });
    }
    return f;
}

template <typename T> WARPKIT_DEVICE typename CrossEntropyParams<T>::Acc
rowStatsInit(const CrossEntropyParams<T>& p, long long row, int cols, bool first) {
    typename CrossEntropyParams<T>::Acc a{softmaxStateEmpty(), 0.0f, 0.0f, -1, 0};
    a.target = crossEntropyTarget(p, row, cols, &a.mode);
    // x_t, read by the row's first thread before its block's exchange: every write of the row
    // (in place) comes after the exchange.
    if (a.target >= 0 && first) a.xt = Arith<T>::to_acc(loadScalar(rowInput(p, 0, row) + a.target));
    return a;
}
template <int N, typename T> WARPKIT_DEVICE void
rowStatsAdd(const CrossEntropyParams<T>&, typename CrossEntropyParams<T>::Acc& a, const float (&x)[1][N], int) {
    a.st = softmaxStateUpdateExp<sizeof(T) == 4>(a.st, x[0]); // 16-bit rows: the fast exp
#pragma unroll
    for (int k = 0; k < N; ++k) a.sumx += x[0][k];
}
/// The calling thread's part of the row's state.
template <typename T> WARPKIT_DEVICE CrossEntropyState rowStatsExchange(const CrossEntropyParams<T>&,
                                                                        const typename CrossEntropyParams<T>::Acc& a) {
    return CrossEntropyState{a.st.max, a.st.sum, a.sumx, a.xt};
}
template <int Threads, typename T>
WARPKIT_DEVICE CrossEntropyState rowStatsTotal(const CrossEntropyParams<T>& p,
                                               const typename CrossEntropyParams<T>::Acc& a) {
    return blockReduce<Threads>(rowStatsExchange(p, a), CrossEntropyMerge{});
}
template <typename T>
WARPKIT_DEVICE CrossEntropyRow rowFactors(const CrossEntropyParams<T>& p, const typename CrossEntropyParams<T>::Acc& a,
                                          const CrossEntropyState& st, long long, const VectorSplit&, int cols) {
    return crossEntropyRow(p, st, a.target, a.mode, cols);
}
template <int N, typename T>
WARPKIT_DEVICE void rowOut(const CrossEntropyParams<T>&, const CrossEntropyRow& f, float (&x)[1][N], int col) {
#pragma unroll
    for (int k = 0; k < N; ++k) x[0][k] = crossEntropyGrad(f, expDiff<sizeof(T) == 4>(x[0][k], f.max) * f.scale, col + k);
}
/// The staged path's whole-vector gradients take rowOutFast in a row with a valid target.
template <typename T> WARPKIT_DEVICE bool rowOutFastOk(const CrossEntropyParams<T>&, const CrossEntropyRow& f) {
    return f.mode == 0;
}
/// rowOut in a row with a valid target (mode 0): the target's column is checked once a
/// vector rather than once an element (the same values).
template <int N, typename T>
WARPKIT_DEVICE void rowOutFast(const CrossEntropyParams<T>&, const CrossEntropyRow& f, float (&x)[1][N], int col) {
    float prob[N];
#pragma unroll
    for (int k = 0; k < N; ++k) prob[k] = expDiff<sizeof(T) == 4>(x[0][k], f.max) * f.scale;
    if ((unsigned)(f.target - col) < (unsigned)N) {
#pragma unroll
        for (int k = 0; k < N; ++k) x[0][k] = col + k == f.target ? crossEntropyGradAt(f, prob[k]) : crossEntropyGradOff(f, prob[k]);
    } else {
#pragma unroll
        for (int k = 0; k < N; ++k) x[0][k] = crossEntropyGradOff(f, prob[k]);
    }
}
template <typename T> WARPKIT_DEVICE void rowOutputs(const CrossEntropyParams<T>& p, const CrossEntropyRow& f, long long row) {
    if (p.loss) p.loss[row] = f.loss;
}

} // namespace detail

/// Cross-entropy loss (and, when grad is not null, its gradient times gradScale) of each row of
/// logits against targets[row], for a rows x cols matrix whose row r starts at logits + r *
/// ldLogits (grad + r * ldGrad). loss: a float array of rows values, or nullptr. Host; asynchronous
/// on `stream`. See the header comment for the formulas, shapes, in-place use, errors and NaN/inf.
template <typename T>
inline cudaError_t rowCrossEntropy(const T* logits, const long long* targets, float* loss, typename detail::NonDeduced<T>::type* grad,
                                   long long rows, int cols,
                                   long long ignoreIndex, float labelSmoothing, float gradScale, long long ldLogits,
                                   long long ldGrad, cudaStream_t stream = 0) {
    static_assert(detail::IsRowType<T>::value, "rowCrossEntropy: element type T must be float, __half or __nv_bfloat16");
    if (rows < 0 || cols < 1 || ldLogits < cols || (grad != nullptr && ldGrad < cols) ||
        !(labelSmoothing >= 0.0f && labelSmoothing <= 1.0f))
        return cudaErrorInvalidValue;
    if (rows == 0) return cudaSuccess;
    if (logits == nullptr || targets == nullptr || (loss == nullptr && grad == nullptr) ||
        (grad == logits && ldGrad != ldLogits))
        return cudaErrorInvalidValue;
    const detail::CrossEntropyParams<T> p{logits, targets, loss, grad, ldLogits, ldGrad, ignoreIndex, labelSmoothing, gradScale};
    return detail::rowOpDispatch(p, rows, cols, stream, grad == nullptr);
}

/// The loss alone of a contiguous rows x cols matrix of logits (ld = cols), with PyTorch's
/// defaults: ignore index -100, no label smoothing. Host; asynchronous on `stream`.
template <typename T>
inline cudaError_t rowCrossEntropy(const T* logits, const long long* targets, float* loss, long long rows, int cols,
                                   cudaStream_t stream = 0) {
    return rowCrossEntropy(logits, targets, loss, (T*)nullptr, rows, cols, -100LL, 0.0f, 1.0f, cols, cols, stream);
}

} // namespace warpkit
