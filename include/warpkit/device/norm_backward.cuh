// warpkit/device/norm_backward.cuh: the gradients of rowLayerNorm and rowRmsNorm (device/norm.cuh)
// over the last dimension of a rows x cols matrix, called from the host.
//
//   warpkit::rowLayerNormBackward(dy, x, w, mean, rstd, dx, dw, db, rows, cols[, lddy, ldx, lddx], ws, &bytes, stream)
//   warpkit::rowRmsNormBackward(dy, x, w, rstd, dx, dw, rows, cols[, lddy, ldx, lddx], ws, &bytes, stream)
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
// cols) alone: fixed row blocks (normBackwardPlan) write partials to the workspace, a second kernel
// adds them in block order (no atomics): the same bits on every call, stream and GPU.
//
// Workspace: CUB's two-call rule (workspace null: *workspaceBytes gets the bytes needed, 0 without
// dw and db or with rows or cols 0, and nothing runs; else it must be at least that). Any alignment.
// Conventions (docs/design.md): returns cudaError_t; asynchronous on `stream`; allocates nothing;
// bad arguments (rows < 0, cols < 0, an ld < cols, workspaceBytes null, a workspace too small, null
// dy, x, rstd or (LayerNorm) mean with rows and cols > 0, dx == dy or dx == x with a different ld)
// return cudaErrorInvalidValue and write nothing. Paths (normBackwardPlan, rules N1-N3 in
// docs/tuning.md): rows of up to 8192 columns live in registers, 8 elements of each input a thread,
// a warp or a block of threads per row, read once (unaligned rows past 4096 columns, and rows past
// 8192, stream twice).
#pragma once

#include "../block/reduce.cuh"
#include "../detail/host.cuh"
#include "../thread/vector.cuh"
#include "detail/row_part.cuh"

namespace warpkit {
namespace detail {

// ---- the plan (host) ----------------------------------------------------------------------------

constexpr int kNbElems = 8;           // elements of each input a thread holds on the register path
constexpr int kNbMaxGroup = 1024;     // the widest row group: rows of up to 8 x 1024 columns in registers
constexpr int kNbMaxParts = 512;      // row blocks, so partial sums (N3)
constexpr int kNbStreamThreads = 512; // the streamed path's block
constexpr int kNbFinishCols = 32;     // the final sum: columns a block
constexpr int kNbFinishLanes = 8;     // the final sum: threads a column

/// How a call spreads: `group` threads per row (0: the streamed path, a block a row) in blocks of
/// `threads`, the rows split into `parts` blocks of consecutive rows.
struct NormBackwardPlan {
    int group, threads, parts;
};

/// The plan for rows x cols, from (rows, cols) alone, so that dw and db's order of summation (and
/// so their bits) is the same on every GPU. N1: the narrowest group of 32..1024 threads holding the
/// row at kNbElems elements a thread, in blocks of at least 256 threads (several groups a block).
/// N2: longer rows stream, a block a row. N3: one block for each block's worth of rows (threads /
/// group rows at a time), at most kNbMaxParts.
inline NormBackwardPlan normBackwardPlan(long long rows, int cols) {
    NormBackwardPlan p{0, kNbStreamThreads, 1};
    if ((long long)kNbMaxGroup * kNbElems >= cols) { // N1
        p.group = 32;
        while ((long long)p.group * kNbElems < cols) p.group *= 2;
        p.threads = p.group > 256 ? p.group : 256;
    }
    const long long per = p.group > 0 ? p.threads / p.group : 1; // N2 / N3
    const long long parts = (rows + per - 1) / per;
    p.parts = (int)(parts < 1 ? 1 : parts < kNbMaxParts ? parts : kNbMaxParts);
    return p;
}

/// Workspace bytes: `arrays` (dw, db wanted) float partials of cols a part, 16 for alignment.
inline size_t normBackwardBytes(long long rows, int cols, int arrays) {
    if (rows <= 0 || cols <= 0 || arrays == 0) return 0;
    return (size_t)arrays * (size_t)normBackwardPlan(rows, cols).parts * (size_t)cols * sizeof(float) + 16;
}

// ---- the kernels ----------------------------------------------------------------------------------

template <typename T> struct NormBackwardParams {
    const T* dy;
    const T* x;
    const T* w;
    const float* mean; // null for RMSNorm
    const float* rstd;
    T* dx;     // null: not written
    float* pw; // partial sums of dw: parts x cols (null: dw not wanted)
    float* pb; // of db
    long long rows, lddy, ldx, lddx;
    int cols, parts;
    float invN; // 1 / cols
};

/// The rows [*r0, *r1) of part `part`: a balanced split of p.rows into p.parts.
template <typename T>
WARPKIT_DEVICE void nbPartRows(const NormBackwardParams<T>& p, int part, long long* r0, long long* r1) {
    *r0 = p.rows * part / p.parts;
    *r1 = p.rows * (part + 1) / p.parts;
}

/// One row's share of a thread on the register path: C slots of W elements of dy and x (slot c:
/// columns (t + c * Gs) * W ..), its statistics, and whether it is a row at all.
template <typename T, int C, int W> struct NbRow {
    alignas(16) T dy[C][W];
    alignas(16) T x[C][W];
    float mean, rstd;
    bool ok;
};

/// W elements at q: one 16-byte load when W is a whole vector (q aligned), else one element.
template <int W, typename T> WARPKIT_DEVICE void nbLoad(const T* q, T (&v)[W]) {
    if constexpr (W == vectorElems<T>()) *reinterpret_cast<Vector16<T>*>(v) = loadVector<LoadReadOnly>(q);
    else v[0] = loadScalar<LoadReadOnly>(q);
}

/// Stage: row `row` (< r1, else an empty row) of the calling thread (lane t of its group) into r;
/// empty slots hold zeros.
template <int Gs, typename T, int C, int W>
WARPKIT_DEVICE void nbLoadRow(const NormBackwardParams<T>& p, long long row, long long r1, int t, NbRow<T, C, W>& r) {
    r.ok = row < r1;
    const long long q = r.ok ? row : 0;
    r.mean = r.ok && p.mean != nullptr ? p.mean[q] : 0.0f;
    r.rstd = r.ok ? p.rstd[q] : 0.0f;
    const T* dy = p.dy + q * p.lddy;
    const T* x = p.x + q * p.ldx;
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const int col = (t + c * Gs) * W;
        if (r.ok && col < p.cols) {
            nbLoad<W>(dy + col, r.dy[c]);
            nbLoad<W>(x + col, r.x[c]);
        } else {
#pragma unroll
            for (int e = 0; e < W; ++e) r.dy[c][e] = r.x[c][e] = Arith<T>::from_acc(0.0f);
        }
    }
}

/// Stage: the thread's terms of the row's two sums, s[0] = sum(g), s[1] = sum(g * xhat), and (a
/// real row) its terms of dw and db added to its accumulators acc (shared memory: the thread's
/// kNbElems / 4 float4 of dw at acc[k * Threads], then as many of db; registers would cap the
/// blocks an SM).
template <int Threads, typename T, int C, int W>
WARPKIT_DEVICE void nbRowTerms(const NbRow<T, C, W>& r, const float (&w)[C][W], float4* acc, float (&s)[2]) {
    constexpr int K = C * W;
    float xh[K], dy[K];
    s[0] = s[1] = 0.0f;
#pragma unroll
    for (int j = 0; j < K; ++j) {
        dy[j] = Arith<T>::to_acc(r.dy[j / W][j % W]);
        xh[j] = (Arith<T>::to_acc(r.x[j / W][j % W]) - r.mean) * r.rstd;
        const float g = dy[j] * w[j / W][j % W];
        s[0] += g;
        s[1] += g * xh[j];
    }
    if (!r.ok) return;
#pragma unroll
    for (int k = 0; k < K / 4; ++k) {
        float4 a = acc[k * Threads], b = acc[(K / 4 + k) * Threads];
        a.x += dy[4 * k] * xh[4 * k], a.y += dy[4 * k + 1] * xh[4 * k + 1];
        a.z += dy[4 * k + 2] * xh[4 * k + 2], a.w += dy[4 * k + 3] * xh[4 * k + 3];
        b.x += dy[4 * k], b.y += dy[4 * k + 1], b.z += dy[4 * k + 2], b.w += dy[4 * k + 3];
        acc[k * Threads] = a, acc[(K / 4 + k) * Threads] = b;
    }
}

/// Stage: the group's totals of s. A warp: shuffles. Wider groups: each warp's totals to red, one
/// barrier (every thread of the block calls), then the group's warps' totals in warp order; red
/// alternates between two buffers by `it`, so that the next call's stores never meet this one's
/// loads.
template <int Threads, int Gs> WARPKIT_DEVICE void nbGroupSums(float (&s)[2], float (*red)[Threads / 32][2], int it) {
    s[0] = warpReduce<32>(s[0], Sum{});
    s[1] = warpReduce<32>(s[1], Sum{});
    if constexpr (Gs > 32) {
        const int warp = (int)threadIdx.x / 32, first = warp / (Gs / 32) * (Gs / 32);
        float(*buf)[2] = red[it & 1];
        if (threadIdx.x % 32 == 0) buf[warp][0] = s[0], buf[warp][1] = s[1];
        __syncthreads();
        s[0] = s[1] = 0.0f;
#pragma unroll
        for (int k = 0; k < Gs / 32; ++k) s[0] += buf[first + k][0], s[1] += buf[first + k][1];
    }
}

/// Stage: the row's dx from its sums s (group totals), slot by slot.
template <typename T, int Gs, int C, int W>
WARPKIT_DEVICE void nbStoreRow(const NormBackwardParams<T>& p, const NbRow<T, C, W>& r, const float (&w)[C][W],
                               const float (&s)[2], long long row, int t) {
    const float m1 = p.mean != nullptr ? s[0] * p.invN : 0.0f, m2 = s[1] * p.invN;
    T* dx = p.dx + row * p.lddx;
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const int col = (t + c * Gs) * W;
        if (col >= p.cols) continue;
        alignas(16) T o[W];
#pragma unroll
        for (int e = 0; e < W; ++e) {
            const float xh = (Arith<T>::to_acc(r.x[c][e]) - r.mean) * r.rstd;
            o[e] = Arith<T>::from_acc(r.rstd * (Arith<T>::to_acc(r.dy[c][e]) * w[c][e] - m1 - xh * m2));
        }
        T* q = dx + col;
        if constexpr (W == vectorElems<T>()) storeVector(q, *reinterpret_cast<const Vector16<T>*>(o));
        else storeScalar(q, o[0]);
    }
}

/// Stage: the block's partial sums of dw and db: group 0 adds the groups' accumulators (accs:
/// the block's, thread-major as nbRowTerms keeps them) in group order and writes the part's row of
/// the partials.
template <int Threads, int Gs, typename T, int C, int W>
WARPKIT_DEVICE void nbBlockPartials(const NormBackwardParams<T>& p, const float4* accs) {
    constexpr int K = C * W, G = Threads / Gs;
    const int t = (int)threadIdx.x;
    __syncthreads(); // every group's last accumulation is done
    if (t >= Gs) return;
    const size_t base = (size_t)blockIdx.x * p.cols;
#pragma unroll
    for (int k = 0; k < K / 4; ++k) {
        float4 a = accs[k * Threads + t], b = accs[(K / 4 + k) * Threads + t];
        for (int g = 1; g < G; ++g) {
            const float4 u = accs[k * Threads + g * Gs + t], v = accs[(K / 4 + k) * Threads + g * Gs + t];
            a.x += u.x, a.y += u.y, a.z += u.z, a.w += u.w;
            b.x += v.x, b.y += v.y, b.z += v.z, b.w += v.w;
        }
        const float aw[4] = {a.x, a.y, a.z, a.w}, ab[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int j = 4 * k + e, col = (t + j / W * Gs) * W + j % W; // element j of the slots
            if ((t + j / W * Gs) * W >= p.cols) continue;
            if (p.pw != nullptr) p.pw[base + col] = aw[e];
            if (p.pb != nullptr) p.pb[base + col] = ab[e];
        }
    }
}

// Register path: block b takes part b's rows; its Threads / Gs groups of Gs threads take a row
// each at a time (group k rows r0 + k, r0 + k + G, ...), each thread 16 elements of each input,
// 16-bit vector slots keep the next row's loads in flight while the current row is reduced
// (Prefetch; the registers allow it there). Two blocks of 256 an SM at least (128 registers). Vec: every row of dy, x
// and dx, and w, is 16-byte aligned and cols a whole number of vectors (slots of a vector); else slots of one element.
template <typename T, int Threads, int Gs, bool Vec>
__global__ void __launch_bounds__(Threads, Threads < 512 ? 512 / Threads : 1)
    normBackwardKernel(NormBackwardParams<T> p) {
    constexpr int W = Vec ? vectorElems<T>() : 1, C = kNbElems / W, G = Threads / Gs;
    constexpr bool Prefetch = Vec && sizeof(T) == 2;
    static_assert(C * W % 4 == 0, "normBackwardKernel: kNbElems must be a multiple of 4");
    __shared__ float red[2][Threads / 32][2];
    extern __shared__ float4 nbAcc[]; // 2 x kNbElems / 4 float4 a thread: nbRowTerms
    float4* acc = nbAcc + threadIdx.x;
    const int t = (int)threadIdx.x % Gs, g = (int)threadIdx.x / Gs;
    long long r0, r1;
    nbPartRows(p, (int)blockIdx.x, &r0, &r1);
    const int iters = (int)((r1 - r0 + G - 1) / G);
    float w[C][W];
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const int col = (t + c * Gs) * W;
        T wt[W];
        if (p.w != nullptr && col < p.cols) nbLoad<W>(p.w + col, wt);
#pragma unroll
        for (int e = 0; e < W; ++e) {
            w[c][e] = p.w != nullptr && col < p.cols ? Arith<T>::to_acc(wt[e]) : 1.0f;
        }
    }
#pragma unroll
    for (int k = 0; k < C * W / 2; ++k) acc[k * Threads] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    NbRow<T, C, W> cur, nxt;
    nbLoadRow<Gs>(p, r0 + g, r1, t, cur);
    for (int it = 0; it < iters; ++it) {
        const long long row = r0 + (long long)it * G + g;
        if constexpr (Prefetch) nbLoadRow<Gs>(p, row + G, r1, t, nxt);
        float s[2];
        nbRowTerms<Threads>(cur, w, acc, s);
        nbGroupSums<Threads, Gs>(s, red, it);
        if (cur.ok && p.dx != nullptr) nbStoreRow<T, Gs>(p, cur, w, s, row, t);
        if constexpr (Prefetch) cur = nxt;
        else nbLoadRow<Gs>(p, row + G, r1, t, cur);
    }
    if (p.pw != nullptr || p.pb != nullptr) nbBlockPartials<Threads, Gs, T, C, W>(p, nbAcc);
}

// Streamed path (rows past 16 x kNbMaxGroup columns): block b takes part b's rows one at a time,
// thread t columns t, t + Threads, ...: the two sums in one sweep, then dx and the part's partial
// sums (kept in the workspace: written by the part's first row, added to by the others) in a second.
template <typename T, int Threads> __global__ void __launch_bounds__(Threads)
    normBackwardStreamKernel(NormBackwardParams<T> p) {
    const int t = (int)threadIdx.x;
    long long r0, r1;
    nbPartRows(p, (int)blockIdx.x, &r0, &r1);
    float* pw = p.pw != nullptr ? p.pw + (size_t)blockIdx.x * p.cols : nullptr;
    float* pb = p.pb != nullptr ? p.pb + (size_t)blockIdx.x * p.cols : nullptr;
    for (long long row = r0; row < r1; ++row) {
        const T* dy = p.dy + row * p.lddy;
        const T* x = p.x + row * p.ldx;
        const float mean = p.mean != nullptr ? p.mean[row] : 0.0f, rstd = p.rstd[row];
        float s[2] = {0.0f, 0.0f};
        for (int col = t; col < p.cols; col += Threads) {
            const float d = Arith<T>::to_acc(loadScalar<LoadReadOnly>(dy + col));
            const float g = d * (p.w != nullptr ? Arith<T>::to_acc(p.w[col]) : 1.0f);
            s[0] += g;
            s[1] += g * ((Arith<T>::to_acc(loadScalar<LoadReadOnly>(x + col)) - mean) * rstd);
        }
        blockReduceSum<Threads>(s);
        const float m1 = p.mean != nullptr ? s[0] * p.invN : 0.0f, m2 = s[1] * p.invN;
        for (int col = t; col < p.cols; col += Threads) {
            const float d = Arith<T>::to_acc(loadScalar<LoadReadOnly>(dy + col));
            const float xh = (Arith<T>::to_acc(loadScalar<LoadReadOnly>(x + col)) - mean) * rstd;
            const float g = d * (p.w != nullptr ? Arith<T>::to_acc(p.w[col]) : 1.0f);
            if (pw != nullptr) pw[col] = (row == r0 ? 0.0f : pw[col]) + d * xh;
            if (pb != nullptr) pb[col] = (row == r0 ? 0.0f : pb[col]) + d;
            if (p.dx != nullptr) p.dx[row * p.lddx + col] = Arith<T>::from_acc(rstd * (g - m1 - xh * m2));
        }
    }
}

/// The final sums: out[k][col] = the sum over parts, in part order, of src[k][part][col] (k =
/// blockIdx.y); kNbFinishLanes threads a column take every kNbFinishLanes-th part, then the first
/// adds their sums in lane order. parts = 0: zeros.
template <typename T> struct NbFinish {
    const float* src[2];
    T* out[2];
    int parts, cols;
};
template <typename T> __global__ void __launch_bounds__(kNbFinishCols* kNbFinishLanes)
    normBackwardFinishKernel(NbFinish<T> f) {
    __shared__ float part[kNbFinishLanes][kNbFinishCols];
    const int cx = (int)threadIdx.x % kNbFinishCols, lane = (int)threadIdx.x / kNbFinishCols;
    const int col = (int)blockIdx.x * kNbFinishCols + cx;
    const float* src = blockIdx.y == 0 ? f.src[0] : f.src[1]; // (an indexed parameter array: a stack copy)
    float s = 0.0f;
    if (col < f.cols)
        for (int k = lane; k < f.parts; k += kNbFinishLanes) s += src[(size_t)k * f.cols + col];
    part[lane][cx] = s;
    __syncthreads();
    if (lane != 0 || col >= f.cols) return;
#pragma unroll
    for (int k = 1; k < kNbFinishLanes; ++k) s += part[k][cx];
    (blockIdx.y == 0 ? f.out[0] : f.out[1])[col] = Arith<T>::from_acc(s);
}

// ---- the host side ----------------------------------------------------------------------------------

/// Whether the register path may take vector slots: every row of dy, x and dx (if written) and w
/// (if given) start on 16 bytes and cols is a whole number of vectors.
template <typename T> inline bool nbVec(const NormBackwardParams<T>& p) {
    return rowsAligned(p.dy, p.lddy, p.cols) && rowsAligned(p.x, p.ldx, p.cols) &&
           (p.dx == nullptr || rowsAligned(p.dx, p.lddx, p.cols)) && ((size_t)p.w & 15) == 0;
}

template <typename T, int Gs>
inline cudaError_t nbLaunchRegs(const NormBackwardParams<T>& p, const NormBackwardPlan& pl, int dev, cudaStream_t st) {
    constexpr int Threads = Gs > 256 ? Gs : 256, smem = Threads * kNbElems * 2 * (int)sizeof(float);
    // Element slots in groups of 1024 would spill (fp32): those rows take the streamed kernel, whose
    // sums over a part's rows run in the same order.
    auto kern = normBackwardKernel<T, Threads, Gs, true>;
    if (!nbVec(p)) {
        if constexpr (Gs == 1024)
            return launchKernel(normBackwardStreamKernel<T, kNbStreamThreads>, pl.parts, kNbStreamThreads, st, p);
        else kern = normBackwardKernel<T, Threads, Gs, false>;
    }
    WARPKIT_TRY(allowDynamicSmem(kern, dev, smem));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)pl.parts);
    cfg.blockDim = dim3(Threads);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = st;
    return cudaLaunchKernelEx(&cfg, kern, p);
}

/// The main kernel of plan pl (one for each group size of N1, the streamed one for N2).
template <typename T>
inline cudaError_t nbLaunch(const NormBackwardParams<T>& p, const NormBackwardPlan& pl, cudaStream_t st) {
    int dev = 0;
    DeviceProps d;
    if (pl.group > 0) WARPKIT_TRY(currentDevice(&dev, &d));
    switch (pl.group) {
    case 32:
        return nbLaunchRegs<T, 32>(p, pl, dev, st);
    case 64:
        return nbLaunchRegs<T, 64>(p, pl, dev, st);
    case 128:
        return nbLaunchRegs<T, 128>(p, pl, dev, st);
    case 256:
        return nbLaunchRegs<T, 256>(p, pl, dev, st);
    case 512:
        return nbLaunchRegs<T, 512>(p, pl, dev, st);
    case 1024:
        return nbLaunchRegs<T, 1024>(p, pl, dev, st);
    default:
        return launchKernel(normBackwardStreamKernel<T, kNbStreamThreads>, pl.parts, kNbStreamThreads, st, p);
    }
}

/// Both calls: the checks, the workspace rule, then the main kernel and the final sums.
template <typename T> inline cudaError_t rowNormBackward(NormBackwardParams<T> p, bool rms, T* dw, T* db,
                                                         void* workspace, size_t* workspaceBytes, cudaStream_t stream) {
    const long long rows = p.rows;
    const int cols = p.cols;
    if (rows < 0 || cols < 0 || p.lddy < cols || p.ldx < cols || p.lddx < cols || workspaceBytes == nullptr)
        return cudaErrorInvalidValue;
    if (rows > 0 && cols > 0 &&
        (p.dy == nullptr || p.x == nullptr || p.rstd == nullptr || (!rms && p.mean == nullptr) ||
         (p.dx != nullptr && p.dx == p.dy && p.lddx != p.lddy) || (p.dx != nullptr && p.dx == p.x && p.lddx != p.ldx)))
        return cudaErrorInvalidValue;
    const int arrays = (dw != nullptr) + (db != nullptr);
    const size_t need = normBackwardBytes(rows, cols, arrays);
    if (workspace == nullptr) {
        *workspaceBytes = need;
        return cudaSuccess;
    }
    if (*workspaceBytes < need) return cudaErrorInvalidValue;
    if (cols == 0) return cudaSuccess;
    const NormBackwardPlan pl = normBackwardPlan(rows, cols);
    NbFinish<T> f{{nullptr, nullptr}, {nullptr, nullptr}, rows > 0 ? pl.parts : 0, cols};
    if (rows > 0) {
        float* ws = reinterpret_cast<float*>(((size_t)workspace + 15) & ~(size_t)15);
        const size_t n = (size_t)pl.parts * (size_t)cols;
        p.pw = dw != nullptr ? ws : nullptr;
        p.pb = db != nullptr ? ws + (dw != nullptr ? n : 0) : nullptr;
        p.parts = pl.parts;
        p.invN = 1.0f / (float)cols;
        WARPKIT_TRY(nbLaunch(p, pl, stream));
    }
    const int k = arrays;
    f.src[0] = dw != nullptr ? p.pw : p.pb, f.out[0] = dw != nullptr ? dw : db, f.src[1] = p.pb, f.out[1] = db;
    if (k == 0) return cudaSuccess;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)((cols + kNbFinishCols - 1) / kNbFinishCols), (unsigned)k);
    cfg.blockDim = dim3(kNbFinishCols * kNbFinishLanes);
    cfg.stream = stream;
    return cudaLaunchKernelEx(&cfg, normBackwardFinishKernel<T>, f);
}

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
    const detail::NormBackwardParams<T> p{dy,   x,    w,   mean, rstd, dx, nullptr, nullptr,
                                          rows, lddy, ldx, lddx, cols, 1,  0.0f};
    return detail::rowNormBackward(p, false, dw, db, workspace, workspaceBytes, stream);
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
    const detail::NormBackwardParams<T> p{dy,   x,    w,   nullptr, rstd, dx, nullptr, nullptr,
                                          rows, lddy, ldx, lddx,    cols, 1,  0.0f};
    return detail::rowNormBackward(p, true, dw, static_cast<T*>(nullptr), workspace, workspaceBytes, stream);
}

/// rowRmsNormBackward of contiguous rows x cols matrices (ld = cols). Host; asynchronous.
template <typename T>
inline cudaError_t rowRmsNormBackward(const T* dy, const T* x, const typename detail::NonDeduced<T>::type* w,
                                      const float* rstd, typename detail::NonDeduced<T>::type* dx,
                                      typename detail::NonDeduced<T>::type* dw, long long rows, int cols,
                                      void* workspace, size_t* workspaceBytes, cudaStream_t stream = 0) {
    return rowRmsNormBackward(dy, x, w, rstd, dx, dw, rows, cols, cols, cols, cols, workspace, workspaceBytes, stream);
}

} // namespace warpkit
