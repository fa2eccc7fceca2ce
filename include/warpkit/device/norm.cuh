// warpkit/device/norm.cuh: LayerNorm and RMSNorm over the last dimension of a rows x cols matrix,
// called from the host.
//
//   warpkit::rowLayerNorm(x, y, rows, cols, w, b, eps, stream)
//   warpkit::rowLayerNorm(x, y, rows, cols, w, b, eps, mean, rstd, ldx, ldy, stream)
//       y = (x - mean) * rstd * w + b per row, rstd = 1 / sqrt(var + eps) (var: the population
//       variance, as torch.nn.functional.layer_norm); optionally writes each row's mean and rstd.
//   warpkit::rowRmsNorm(x, y, rows, cols, w, eps, stream)
//   warpkit::rowRmsNorm(x, y, rows, cols, w, eps, rstd, ldx, ldy, stream)
//       y = x * rstd * w per row, rstd = 1 / sqrt(mean(x^2) + eps) (torch.nn.functional.rms_norm);
//       optionally writes each row's rstd.
//
// Types: float, __half, __nv_bfloat16 for x, y, w and b (read and written in that type); the
// statistics are float, and mean / rstd are float arrays of `rows` values. w and b are vectors of
// `cols` elements, each optional (nullptr: w = 1, b = 0), at any alignment. eps: any finite value; a
// negative one as torch: a row with var + eps < 0 gets a NaN rstd and NaN outputs, its mean as usual.
// Shapes: any rows >= 0 and cols >= 0 (either 0 is a no-op that writes nothing), row strides ldx, ldy >= cols
// (elements), any pointer alignment, 64-bit row counts. In place: x == y with ldx == ldy; otherwise x and y must not
// overlap.
//
// Statistics. Exact two-pass where the row lives in registers or shared memory (every path but
// the streamed one):
// pass 1 sums x - s, pass 2 sums the squares of (x - s) - mean(x - s), where s is the row's first
// element, so a row far from zero with a tiny spread (1e6 + N(0, 1e-3)) loses nothing to the
// rounding of its mean, and a constant row has variance 0 exactly. The blocks of a row split over a
// cluster combine their exact {count, mean, m2} with Chan's formula (cluster/welford.cuh). Streamed
// rows (longer than 262144 columns, or longer than the block path's rows before sm_90) use Welford
// updates (thread/welford.cuh) of the same shifted values (RMSNorm: a plain sum of squares).
//
// NaN and infinities, as PyTorch: a row holding a NaN or an infinity gives NaN outputs and a NaN
// rstd (LayerNorm; its mean is NaN or +-inf); for RMSNorm a NaN gives NaN everywhere, and an
// infinity (with no NaN) gives rstd 0, so 0 for the finite elements and NaN for the infinite ones.
// eps = 0 on a constant row gives NaN (0 * inf), as in PyTorch. Accuracy: the float statistics,
// then one rounding of each output to T.
//
// Conventions (docs/design.md): returns cudaError_t; asynchronous on `stream`; allocates nothing;
// bad arguments (rows < 0, cols < 0, ld < cols, null x or y with rows and cols > 0, x == y with
// ldx != ldy, eps NaN or infinite) return cudaErrorInvalidValue and launch nothing. Host caches are per device
// and thread-safe. Paths: the row family's rules (device/detail/row_plan.cuh; docs/design.md),
// with warp lanes of 2 vectors or more; RMSNorm's w is staged beside its rows (R22), LayerNorm's w
// and b are read from memory, by one 16-byte load each a vector when both are given and aligned
// (device/detail/row_staged.cuh). Aligned rows that fill every slot of a register plan run its
// full-row kernel (no slot tested; K5), with the general kernel's bits. The full-row kernels read x
// through the read-only path with an L2 evict-first policy and store y with plain stores (K7).
#pragma once

#include "detail/row_launch.cuh"

namespace warpkit {
namespace detail {

/// LayerNorm (rms = false) or RMSNorm (rms = true; b and mean are null) of rows x cols.
template <typename T> struct NormParams {
    using Elem = T;
    using Exchange = WelfordState; // a block's {count, mean, m2} of x - shift
    using Merge = WelfordMerge;
    struct Acc {
        WelfordState st; // this thread's Welford state of x - shift (streamed path)
        float shift;
    };
    static constexpr int kInputs = 1;
    static constexpr int kColumns = 2; // w and b: per-column arrays (rowColumn)
    static constexpr bool kOutFast = true; // rowOutFastOk: w and b given and aligned
    static constexpr bool kReduceWarp = false;
    static constexpr bool kFullRows = true; // full-row kernels (K5)
    // fp32 register clusters of 512 x 32 values (R15 at 262144 columns): w of a thread's first 6 of
    // 8 pieces copied to shared memory as the row loads when b is null (R30: 48 KB a block, two an
    // SM; rowBlockColumnArrays), two blocks an SM (at most 64 registers).
    static constexpr int kBlockColumnPieces = sizeof(T) == 4 ? 6 : 0;
    static constexpr int kBlockMinBlocks512 = sizeof(T) == 4 ? 2 : 0;
    // Full-row kernels: x read once through the read-only path, its L2 lines evicted first; y stored
    // as usual for the kernel that reads it next (K7).
    static constexpr int kLoadHint = LoadReadOnlyEvictFirst;
    // Warp path: 2 vectors a lane (R1).
    static constexpr int kWarpChunks = 2;
    const T* x;
    T* y;
    const T* w;
    const T* b;
    float* mean;
    float* rstd;
    long long ldx, ldy;
    float eps;
    bool rms;
};

/// A row's factors: y = ((x - shift) - off) * rstd * w + b (RMSNorm: y = (x - shift) * rstd * w with
/// shift 0), where mean = shift + off; vecW / vecB: w / b are given and 16-byte aligned where the
/// row's body is (both: rowOutFastOk).
struct NormRow {
    float shift, off, rstd;
    bool vecW, vecB;
};

template <typename T> inline NormParams<T> rowAt(NormParams<T> p, long long r0) {
    p.x += r0 * p.ldx;
    p.y += r0 * p.ldy;
    if (p.mean) p.mean += r0;
    if (p.rstd) p.rstd += r0;
    return p;
}
template <typename T> inline bool rowAligned(const NormParams<T>& p, int cols) {
    return rowsAligned(p.x, p.ldx, cols) && rowsAligned(p.y, p.ldy, cols);
}
template <typename T> WARPKIT_DEVICE const T* rowInput(const NormParams<T>& p, int, long long row) { return p.x + row * p.ldx; }
template <typename T> WARPKIT_DEVICE T* rowOutput(const NormParams<T>& p, long long row) { return p.y + row * p.ldy; }
template <typename T> WARPKIT_DEVICE T rowFill(const NormParams<T>&, int) { return Arith<T>::from_acc(0.0f); }
template <typename T> WARPKIT_HD const T* rowColumn(const NormParams<T>& p, int k) { return k == 0 ? p.w : p.b; }
/// w and b read from copies c whose element 0 is column `origin`'s (a staged block's slice in
/// shared memory): p.w + col then addresses column col's copy. Integer arithmetic: the pointers
/// themselves may lie outside the copies.
template <typename T> WARPKIT_DEVICE void rowSetColumns(NormParams<T>& p, const T* const (&c)[2], int origin) {
    const size_t back = (size_t)origin * sizeof(T);
    p.w = c[0] != nullptr ? reinterpret_cast<const T*>((size_t)c[0] - back) : nullptr;
    p.b = c[1] != nullptr ? reinterpret_cast<const T*>((size_t)c[1] - back) : nullptr;
}

/// The factors of a row from the merged {count, mean, m2} of its x - shift.
template <typename T> WARPKIT_DEVICE NormRow normRow(const NormParams<T>& p, const WelfordState& st, float shift, const VectorSplit& sp) {
    // RMSNorm: mean(x^2) = m2 / n + mean^2 (shift 0), two non-negative terms. 1 / n by the Welford
    // reciprocal (1 ulp; the IEEE division's slow path costs a stack frame in the small kernels).
    const float m2n = st.m2 * welfordRcp((float)st.count);
    const float var = p.rms ? m2n + st.mean * st.mean : m2n;
    NormRow f;
    f.shift = shift;
    f.off = st.mean;
    f.rstd = rsqrtf(var + p.eps);
    f.vecW = p.w != nullptr && (((size_t)(p.w + sp.head)) & 15) == 0;
    f.vecB = p.b != nullptr && (((size_t)(p.b + sp.head)) & 15) == 0;
    return f;
}

/// What a row's slots hold when their outputs are made: x, x - shift, or x - shift - off (normRegs'
/// on the warp path, where off is the row's own), and the centred value from it (the same bits).
enum NormSlots { NormRaw = 0, NormShifted = 1, NormCentered = 2 };
template <int S> WARPKIT_DEVICE float normCentered(float x, float shift, float off) {
    return S == NormCentered ? x : (S == NormShifted ? x : x - shift) - off;
}

/// The outputs of N consecutive elements from column col, in place over their values x (holding
/// what S says: NormSlots).
template <int N, int S, typename T>
WARPKIT_DEVICE void normOut(const NormParams<T>& p, const NormRow& f, float* x, int col) {
    float w[N], b[N];
    loadColumns<N>(p.w, col, f.vecW, 1.0f, w);
    loadColumns<N>(p.b, col, f.vecB, 0.0f, b);
    const float off = p.rms ? 0.0f : f.off;
#pragma unroll
    for (int k = 0; k < N; ++k) x[k] = normCentered<S>(x[k], f.shift, off) * f.rstd * w[k] + b[k];
}

/// normOut of a whole vector (N = V elements) with w (W) and b (B) each read by one 16-byte load,
/// with no null or alignment branch (the caller knows them given and aligned: f.vecW and f.vecB, or
/// a full row's part), so that a caller's loads for several vectors issue together (the general
/// path's predicated scalar fallbacks cost about 30 instructions a vector). Without w: 1, without
/// b: 0, as normOut (the same bits: f.off is 0 for RMSNorm).
template <int N, bool W, bool B, int S, typename T>
WARPKIT_DEVICE void normOutVec(const NormParams<T>& p, const NormRow& f, float* x, int col) {
    static_assert(N == vectorElems<T>(), "normOutVec: N must be a whole vector");
    float w[N], b[N];
    if constexpr (W) rowWiden<N>(loadVector(p.w + col).e, w);
    if constexpr (B) rowWiden<N>(loadVector(p.b + col).e, b);
#pragma unroll
    for (int k = 0; k < N; ++k)
        x[k] = normCentered<S>(x[k], f.shift, f.off) * f.rstd * (W ? w[k] : 1.0f) + (B ? b[k] : 0.0f);
}

/// The block kernel's outputs after its copies of w (R30; RMSNorm, LayerNorm with w alone):
/// normOutVec's branch-free form with b as 0 (the same bits as normOut), w from the block's shared
/// copies for the first CP body pieces and from global memory for the rest, then `extra` over the
/// head and tail slots.
template <int CP, int C, int E, int S, typename T, int K, typename FE> WARPKIT_DEVICE void
normOutCopied(const NormParams<T>& p, const NormRow& f, const RowPart& part, float (&x)[K], FE extra) {
    constexpr int V = vectorElems<T>();
    // The copies (rowBlockColumnsIssue), this thread's own: its wait needs no barrier.
    extern __shared__ __align__(16) uint4 wk_row_cols[];
    asyncCopyWait(0);
    const int np = partPieces(part); // this thread's body pieces: c < np (partHasVector)
#pragma unroll
    for (int c = 0; c < C; ++c) {
        if (c >= np) break;
        Vector16<T> w;
        if (c < CP) {
            const uint4 uw = wk_row_cols[c * part.G + part.t];
            __builtin_memcpy(&w, &uw, 16);
        } else {
            w = loadVector(p.w + partVectorColumn<T>(part, c));
        }
        float wf[V];
        rowWiden<V>(w.e, wf);
        float* xs = &x[c * V];
#pragma unroll
        for (int k = 0; k < V; ++k) xs[k] = normCentered<S>(xs[k], f.shift, f.off) * f.rstd * wf[k] + 0.0f;
    }
#pragma unroll
    for (int j = 0; j < E; ++j)
        if (partHasExtra(part, j)) extra(C * V + j, partExtraColumn<T>(part, j));
}

/// The body pieces whose w a block group's kernel copied (BlockGroup's Copies; 0: a warp segment).
template <typename G> struct NormGroupCopies { static constexpr int value = 0; };
template <int N, typename X, int K> struct NormGroupCopies<BlockGroup<N, X, K>> { static constexpr int value = K; };

/// The column arrays the block kernel copies (R30, the launch's dynamic shared memory: this x
/// kBlockColumnPieces x threads x 16 bytes): w when it is given and b is not (RMSNorm); none with
/// b (LayerNorm's w and b, 96 KB a block, left the x loads too little L1: docs/tuning.md R30). Host.
template <typename T> inline int rowBlockColumnArrays(const NormParams<T>& p) {
    return p.w != nullptr && p.b == nullptr ? 1 : 0;
}

/// The block kernel's copies (R30; the launch gave shared memory for them: rowBlockColumnArrays):
/// each thread cp.asyncs w's vectors of its first CP body pieces to slots c x G + t of `smem` (the
/// dynamic shared memory) when w is aligned where the row's body is and b is null (normOutCopied's
/// condition in normRegs); otherwise the outputs read global memory. sm_80 and newer.
template <int CP, typename T>
WARPKIT_DEVICE void rowBlockColumnsIssue(const NormParams<T>& p, const RowPart& part, uint4* smem) {
#if WARPKIT_ARCH >= 800
    if (p.w == nullptr || p.b != nullptr || (((size_t)(p.w + part.s.head)) & 15) != 0) return;
    const int np = partPieces(part);
#pragma unroll 1
    for (int c = 0; c < CP; ++c) {
        if (c >= np) break;
        asyncCopy16(&smem[c * part.G + part.t], p.w + partVectorColumn<T>(part, c));
    }
    asyncCopyCommit();
#else
    (void)p, (void)part, (void)smem;
#endif
}

/// Register paths: exact two-pass statistics of the part (shifted by the row's first element,
/// `first(lead)` where lead is this thread's first slot), the parts' {count, mean, m2} merged across
/// the cluster, then `before()` (every read of the row and every group reduction done), then the
/// outputs in place. The row is x[0] (the other NI - 1 rows of x are not read). Keep: the slots stay
/// x through before() (the shift is subtracted where each use needs it, with the same bits), so that
/// before() can store them (device/add_norm.cuh stores h); otherwise they become x - shift in the
/// first pass (and, on the warp path, x - shift - off in the second, which the outputs scale).
template <int C, int E, bool Keep, typename T, int NI, int K, typename G, typename F, typename B>
WARPKIT_DEVICE NormRow normRegs(const NormParams<T>& p, const RowPart& part, float (&x)[NI][K], G g, F first,
                                B before) {
    constexpr int V = vectorElems<T>();
    // The slots' contents at the outputs: centred on the warp path, whose off is the row's mean
    // (less the shift); on the block path off is the block's, and the cluster's is f.off.
    constexpr int kSlots = Keep ? NormRaw : GroupIsSegment<G>::value ? NormCentered : NormShifted;
    const int n = partElems<T>(part);
    float shift = 0.0f, off = 0.0f;
    if (!p.rms) {
        // The row's first element: the first thread's first extra slot when the row has a head (or
        // no body), else its first body slot.
        float lead = x[0][0];
        if constexpr (E > 0) {
            if (part.s.head > 0 || part.s.vectors == 0) lead = x[0][C * V];
        }
        shift = first(lead);
        // The slots become x - shift (RMSNorm: shift 0, left as they are; Keep: left as x).
        float s = 0.0f;
        forEachSlotSplit<T, C, E>(part, [&](int j, int, bool ok) {
            if constexpr (Keep) {
                s += ok ? x[0][j] - shift : 0.0f;
            } else {
                x[0][j] -= shift;
                s += ok ? x[0][j] : 0.0f;
            }
        });
        s = groupSum(g, s);
        off = n > 0 ? s * welfordRcp((float)n) : 0.0f; // a block of a cluster may hold none of the row
    }
    float q = 0.0f;
    forEachSlotSplit<T, C, E>(part, [&](int j, int, bool ok) {
        const float d = ok ? (Keep ? x[0][j] - shift : x[0][j]) - off : 0.0f;
        q += d * d;
        if constexpr (kSlots == NormCentered) x[0][j] = d;
    });
    q = groupSum(g, q);
    const WelfordState st = groupCombine(g, WelfordState{(unsigned)n, off, q}, WelfordMerge{});
    const NormRow f = normRow(p, st, shift, part.s);
    before();
    auto extra = [&](int j, int col) { normOut<1, kSlots>(p, f, &x[0][j], col); };
    // LayerNorm with w and b (RMSNorm has no b): the branch-free form, whose w and b loads for every
    // piece the compiler hoists together. Not for a thread of more than 32 values (it would spill),
    // nor for a warp-path thread of more than 16: there the hoisted loads set the kernel's registers,
    // RMSNorm's too (same kernel), and rows of these widths need the occupancy more than the fewer
    // instructions (sm_90, general vs branch-free: fp32 32 lanes x 6 48 vs 71 registers, x 8 63 vs
    // 119; 16-bit 32 lanes x 4 64 vs 80; docs/tuning.md R25).
    constexpr bool fast = C * V <= (GroupIsSegment<G>::value ? 16 : 32);
    // The pieces whose w the kernel copied (R30: the one kernel that copies, else 0 and none of that
    // path compiled), when w is aligned and b null (rowBlockColumnsIssue's condition).
    constexpr int kCopies = NormGroupCopies<G>::value;
    if (part.full) { // a full row (the constant true there): the w and b given are aligned (rowRunsFull)
        auto vec = [&](auto w, auto b) {
            forEachPiece<T, C, E>(
                part,
                [&](int j, int col) {
                    normOutVec<V, decltype(w)::value, decltype(b)::value, kSlots>(p, f, &x[0][j], col);
                },
                extra);
        };
        if (p.w != nullptr && p.b != nullptr) vec(RowBool<true>{}, RowBool<true>{});
        else if (p.w != nullptr) vec(RowBool<true>{}, RowBool<false>{});
        else if (p.b != nullptr) vec(RowBool<false>{}, RowBool<true>{});
        else vec(RowBool<false>{}, RowBool<false>{});
    } else if (kCopies > 0 && f.vecW && p.b == nullptr) { // the block kernel copied w (R30)
        if constexpr (kCopies > 0) normOutCopied<kCopies, C, E, kSlots>(p, f, part, x[0], extra);
    } else if (fast && f.vecW && f.vecB)
        forEachPiece<T, C, E>(
            part, [&](int j, int col) { normOutVec<V, true, true, kSlots>(p, f, &x[0][j], col); }, extra);
    else
        forEachPiece<T, C, E>(
            part, [&](int j, int col) { normOut<V, kSlots>(p, f, &x[0][j], col); }, extra);
    return f;
}
template <int C, int E, typename T, int K, typename G>
WARPKIT_DEVICE NormRow rowRegs(const NormParams<T>& p, long long row, int, const RowPart& part, float (&x)[1][K], G g) {
    auto first = [&](float lead) { return groupFirst(g, lead, rowInput(p, 0, row)); };
    return normRegs<C, E, false>(p, part, x, g, first, [] {});
}

template <typename T>
WARPKIT_DEVICE typename NormParams<T>::Acc rowStatsInit(const NormParams<T>& p, long long row, int, bool) {
    return typename NormParams<T>::Acc{welfordEmpty(), p.rms ? 0.0f : Arith<T>::to_acc(loadScalar(p.x + row * p.ldx))};
}
/// LayerNorm: Welford updates of x - shift. RMSNorm: the sum of squares in m2 (mean 0), so that an
/// infinity gives rstd 0 as in the register paths (a Welford update would make it NaN).
template <int N, typename T>
WARPKIT_DEVICE void rowStatsAdd(const NormParams<T>& p, typename NormParams<T>::Acc& a, const float (&x)[1][N], int) {
    float d[N];
#pragma unroll
    for (int k = 0; k < N; ++k) d[k] = x[0][k] - a.shift;
    if (p.rms) {
#pragma unroll
        for (int k = 0; k < N; ++k) a.st.m2 += d[k] * d[k];
        a.st.count += N;
    } else {
        a.st = welfordUpdate(a.st, d);
    }
}
template <int Threads, typename T>
WARPKIT_DEVICE WelfordState rowStatsTotal(const NormParams<T>&, const typename NormParams<T>::Acc& a) {
    return blockReduceWelford<Threads>(a.st);
}
/// Staged rows (in shared memory): LayerNorm's exact two-pass over the block's x - shift, the sum,
/// then the squares about the block's mean; RMSNorm's sum of squares as streamed.
template <int Threads, typename T, typename Sweep>
WARPKIT_DEVICE WelfordState rowStatsSweep(const NormParams<T>& p, typename NormParams<T>::Acc& a, Sweep sweep) {
    if (p.rms) return rowStatsSweepAdds<Threads>(p, a, sweep);
    float s[2] = {0.0f, 0.0f}; // sum of x - shift, count (a slice is far below 2^24 elements)
    sweep([&](const auto& x, int) {
        constexpr int N = sizeof(x[0]) / sizeof(float);
#pragma unroll
        for (int k = 0; k < N; ++k) s[0] += x[0][k] - a.shift;
        s[1] += (float)N;
    });
    blockReduceSum<Threads>(s);
    const float off = s[1] > 0.0f ? s[0] * welfordRcp(s[1]) : 0.0f;
    float q = 0.0f;
    sweep([&](const auto& x, int) {
        constexpr int N = sizeof(x[0]) / sizeof(float);
#pragma unroll
        for (int k = 0; k < N; ++k) {
            const float d = (x[0][k] - a.shift) - off;
            q += d * d;
        }
    });
    q = blockReduceSum<Threads>(q);
    return WelfordState{(unsigned)s[1], off, q};
}
template <typename T> WARPKIT_DEVICE NormRow rowFactors(const NormParams<T>& p, const typename NormParams<T>::Acc& a,
                                                        const WelfordState& st, long long, const VectorSplit& sp, int) {
    return normRow(p, st, a.shift, sp);
}
template <int N, typename T>
WARPKIT_DEVICE void rowOut(const NormParams<T>& p, const NormRow& f, float (&x)[1][N], int col) {
    normOut<N, NormRaw>(p, f, x[0], col);
}
/// The staged path's whole-vector outputs take rowOutFast when this holds (rowOutFastOk).
template <typename T> WARPKIT_DEVICE bool rowOutFastOk(const NormParams<T>&, const NormRow& f) {
    return f.vecW && f.vecB;
}
template <int N, typename T>
WARPKIT_DEVICE void rowOutFast(const NormParams<T>& p, const NormRow& f, float (&x)[1][N], int col) {
    normOutVec<N, true, true, NormRaw>(p, f, x[0], col);
}
template <typename T> WARPKIT_DEVICE void rowOutputs(const NormParams<T>& p, const NormRow& f, long long row) {
    if (p.mean) p.mean[row] = f.shift + f.off;
    if (p.rstd) p.rstd[row] = f.rstd;
}

template <typename T>
inline cudaError_t rowNorm(const NormParams<T>& p, long long rows, int cols, cudaStream_t stream) {
    if (rows < 0 || cols < 0 || p.ldx < cols || p.ldy < cols || !__builtin_isfinite(p.eps))
        return cudaErrorInvalidValue;
    if (rows == 0 || cols == 0) return cudaSuccess;
    if (p.x == nullptr || p.y == nullptr || (p.x == p.y && p.ldx != p.ldy)) return cudaErrorInvalidValue;
    return rowOpDispatch(p, rows, cols, stream);
}

} // namespace detail

/// LayerNorm of each row of x into y: y = (x - mean) * rstd * w + b with rstd = 1 / sqrt(var + eps),
/// for a rows x cols matrix whose row r starts at x + r * ldx (and y + r * ldy). w, b: cols
/// elements each, or nullptr (w = 1, b = 0). mean, rstd: float arrays of rows values that get each
/// row's statistics, or nullptr. Host; asynchronous on `stream`. See the header comment for shapes,
/// alignment, in-place use, errors, accuracy and NaN/inf rules.
template <typename T>
inline cudaError_t rowLayerNorm(const T* x, T* y, long long rows, int cols, const typename detail::NonDeduced<T>::type* w,
                                const typename detail::NonDeduced<T>::type* b, float eps, float* mean, float* rstd, long long ldx,
                                long long ldy, cudaStream_t stream = 0) {
    static_assert(detail::IsRowType<T>::value, "rowLayerNorm: element type T must be float, __half or __nv_bfloat16");
    return detail::rowNorm(detail::NormParams<T>{x, y, w, b, mean, rstd, ldx, ldy, eps, false}, rows, cols, stream);
}

/// rowLayerNorm of a contiguous rows x cols matrix (ld = cols), without the mean and rstd outputs.
/// Host; asynchronous on `stream`.
template <typename T>
inline cudaError_t rowLayerNorm(const T* x, T* y, long long rows, int cols, const typename detail::NonDeduced<T>::type* w,
                                const typename detail::NonDeduced<T>::type* b, float eps, cudaStream_t stream = 0) {
    return rowLayerNorm(x, y, rows, cols, w, b, eps, nullptr, nullptr, cols, cols, stream);
}

/// RMSNorm of each row of x into y: y = x * rstd * w with rstd = 1 / sqrt(mean(x^2) + eps), rows
/// as for rowLayerNorm. w: cols elements or nullptr (w = 1). rstd: a float array of rows values, or
/// nullptr. Host; asynchronous on `stream`. See the header comment.
template <typename T>
inline cudaError_t rowRmsNorm(const T* x, T* y, long long rows, int cols, const typename detail::NonDeduced<T>::type* w, float eps,
                              float* rstd, long long ldx, long long ldy, cudaStream_t stream = 0) {
    static_assert(detail::IsRowType<T>::value, "rowRmsNorm: element type T must be float, __half or __nv_bfloat16");
    return detail::rowNorm(detail::NormParams<T>{x, y, w, nullptr, nullptr, rstd, ldx, ldy, eps, true}, rows, cols, stream);
}

/// rowRmsNorm of a contiguous rows x cols matrix (ld = cols), without the rstd output. Host;
/// asynchronous on `stream`.
template <typename T>
inline cudaError_t rowRmsNorm(const T* x, T* y, long long rows, int cols, const typename detail::NonDeduced<T>::type* w, float eps,
                              cudaStream_t stream = 0) {
    return rowRmsNorm(x, y, rows, cols, w, eps, nullptr, cols, cols, stream);
}

} // namespace warpkit
