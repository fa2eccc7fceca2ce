// warpkit/device/detail/norm_backward_kernels.cuh: the kernels of rowLayerNormBackward and
// rowRmsNormBackward (device/norm_backward.cuh), on the paths of norm_backward_plan.cuh.
// Internal: include warpkit/device/norm_backward.cuh.
//
// normBackwardKernel (N1), block b over part b's rows, each group of Gs threads a row at a time:
//   1. nbLoadWeights: the thread's kNbElems columns of w, once;
//   2. nbLoadRow: the row's dy and x, kNbElems of each a thread (vector or element slots); 16-bit
//      vector rows load the next row while the current one is reduced;
//   3. nbRowTerms: the thread's terms of sum(g) and sum(g * xhat), and its dw / db terms added to
//      its accumulators in shared memory;
//   4. nbGroupSums: the group's totals (shuffles, then the group's warps in warp order);
//   5. nbStoreRow: dx;
//   6. nbBlockPartials: the groups' accumulators added in group order, the part's row of partials.
// normBackwardStreamKernel (N2): a block a row, the two sums in one read, dx and the partials in a
// second. normBackwardFinishKernel: dw and db, the partials added in part order (N3).
#pragma once

#include "../../block/reduce.cuh"
#include "../../thread/vector.cuh"
#include "norm_backward_plan.cuh"
#include "row_part.cuh"

namespace warpkit {
namespace detail {

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

/// Stage: the thread's columns of w as float (1 without w or past cols), slot by slot.
template <int Gs, typename T, int C, int W>
WARPKIT_DEVICE void nbLoadWeights(const NormBackwardParams<T>& p, int t, float (&w)[C][W]) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const int col = (t + c * Gs) * W;
        T wt[W];
        if (p.w != nullptr && col < p.cols) nbLoad<W>(p.w + col, wt);
#pragma unroll
        for (int e = 0; e < W; ++e) w[c][e] = p.w != nullptr && col < p.cols ? Arith<T>::to_acc(wt[e]) : 1.0f;
    }
}

// Register path (N1): block b takes part b's rows; its Threads / Gs groups of Gs threads take a row
// each at a time (group k rows r0 + k, r0 + k + G, ...), each thread kNbElems elements of each
// input; 16-bit vector slots keep the next row's loads in flight while the current row is reduced
// (Prefetch; the registers allow it there). Blocks under 512 threads: 512 / Threads blocks an SM
// at least. Vec: every row of dy, x and dx, and w, is 16-byte aligned and cols a whole number of
// vectors (slots of a vector); else slots of one element. Dynamic shared memory: Threads x
// kNbElems x 2 floats (the accumulators).
template <typename T, int Threads, int Gs, bool Vec>
__global__ void __launch_bounds__(Threads, Threads < 512 ? 512 / Threads : 1)
    normBackwardKernel(NormBackwardParams<T> p) {
    static_assert(IsRowType<T>::value, "normBackwardKernel: T must be float, __half or __nv_bfloat16");
    static_assert(Gs >= 32 && Gs <= kNbMaxGroup && (Gs & (Gs - 1)) == 0,
                  "normBackwardKernel: Gs (threads a row) must be a power of two in 32..1024");
    static_assert(Threads >= Gs && Threads % Gs == 0 && Threads <= 1024,
                  "normBackwardKernel: Threads must be a multiple of Gs, at most 1024");
    static_assert(Vec || Gs < kNbMaxGroup,
                  "normBackwardKernel: element slots (Vec false) need Gs <= 512 (1024 spills)");
    static_assert(kNbElems % 4 == 0 && kNbElems % vectorElems<T>() == 0,
                  "normBackwardKernel: kNbElems must be a multiple of 4 and of a vector's elements");
    constexpr int W = Vec ? vectorElems<T>() : 1, C = kNbElems / W, G = Threads / Gs;
    constexpr bool Prefetch = Vec && sizeof(T) == 2;
    __shared__ float red[2][Threads / 32][2];
    extern __shared__ float4 nbAcc[]; // 2 x kNbElems / 4 float4 a thread: nbRowTerms
    float4* acc = nbAcc + threadIdx.x;
    const int t = (int)threadIdx.x % Gs, g = (int)threadIdx.x / Gs;
    long long r0, r1;
    nbPartRows(p, (int)blockIdx.x, &r0, &r1);
    const int iters = (int)((r1 - r0 + G - 1) / G);
    float w[C][W];
    nbLoadWeights<Gs>(p, t, w);
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

// Streamed path (N2: the rows N1 does not take): block b takes part b's rows one at a time,
// thread t columns t, t + Threads, ...: the two sums in one sweep, then dx and the part's partial
// sums (kept in the workspace: written by the part's first row, added to by the others) in a second.
template <typename T, int Threads> __global__ void __launch_bounds__(Threads)
    normBackwardStreamKernel(NormBackwardParams<T> p) {
    static_assert(IsRowType<T>::value, "normBackwardStreamKernel: T must be float, __half or __nv_bfloat16");
    static_assert(Threads % 32 == 0 && Threads >= 32 && Threads <= 1024,
                  "normBackwardStreamKernel: Threads must be a multiple of 32 in 32..1024");
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

} // namespace detail
} // namespace warpkit
