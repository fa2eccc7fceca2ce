// warpkit/device/detail/norm_backward_kernels.cuh: the stages of rowLayerNormBackward and
// rowRmsNormBackward (device/norm_backward.cuh), and their register-path (N1) and final (N5)
// kernels, on the paths of norm_backward_plan.cuh. Internal: include warpkit/device/norm_backward.cuh.
//
// A thread holds kNbElems columns of a row (or of a slice of it) in C slots of W elements: slot c
// at columns c0 + (t + c * Gs) * W .. + W, t its lane in its group of Gs threads, c0 the slice's
// first column. Its columns are the same for every row it takes, so it keeps its terms of dw and db
// in registers (fp32) over its rows. Register path: W a 16-byte vector (vector slots) or 1 (element
// slots). Split path: W a vector at every alignment (unaligned rows load and store it an element at
// a time), so that each slice's row sums add the same columns in the same order on every alignment
// and path: there dx, like dw and db, has the same bits for aligned and unaligned rows. The stages'
// arithmetic is explicitly rounded (_rn intrinsics) for the same reason: a plain a * b + c may be
// contracted differently in kernels that reuse the product (the one-pass kernel does).
//
// normBackwardKernel (N1), block b over part b's rows, each group of Gs threads a row at a time:
//   1. nbLoadWeights: the thread's columns of w, once;
//   2. nbLoadRow (and nbLoadRes: dres, the Add calls): the row's dy and x, up to 3 rows ahead of
//      the one reduced (nbRowsAhead: as many as the registers hold);
//   3. nbRowTerms: the thread's terms of sum(g) and sum(g * xhat), its dw / db terms added to its
//      registers;
//   4. nbGroupSums: the group's totals (shuffles, then the group's warps in warp order);
//   5. nbStoreRow: dx;
//   6. nbBlockPartials: the groups' dw / db registers added in group order, the part's row of
//      partials.
// The split path's kernels (N2), from these stages: norm_backward_split.cuh.
// normBackwardFinishKernel (N5): dw and db, the parts' partials added in an order fixed by the
// shape, each thread's loads in flight at once; on sm_90 launched with Programmatic Dependent Launch
// after normBackwardKernel, which lets it in early (pdlLaunchDependents), waiting for that whole grid
// before any load (pdlWait).
#pragma once

#include "../../block/reduce.cuh"
#include "../../detail/pdl.cuh"
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
    T* dx;                    // null: not written
    float* pw;                // partial sums of dw: parts x cols (null: dw not wanted)
    float* pb;                // of db
    unsigned long long* sums; // split path: rows x slices records of (sum(g), sum(g * xhat)) (nbPublishSums)
    long long rows, lddy, ldx, lddx;
    int cols, parts, slices;
    float invN; // 1 / cols
};

/// The Add calls' params on the host (rowLayerNormBackwardAdd): a residual gradient dres added into
/// dx (null: none), row r at dres + r * lddres; with a residual of another type R (the mixed calls),
/// dr gets dx's values rounded once to R too, row r at dr + r * lddr.
template <typename T, typename R = T> struct NbAddParams : NormBackwardParams<T> {
    const T* dres;
    long long lddres;
    R* dr;
    long long lddr;
};
/// The kernels' dres, a parameter of its own beside NormBackwardParams (empty without Res): a
/// parameter block past 128 bytes cost ptxas spills (16 bytes at 80 registers on sm_90, 300 at 64
/// on sm_75). R other than T: dr too (the residual's gradient in its own type).
template <typename T, bool Res, typename R = T> struct NbRes {
    const T* dres;
    long long lddres;
    R* dr;
    long long lddr;
};
template <typename T> struct NbRes<T, true, T> {
    const T* dres;
    long long lddres;
};
template <typename T, typename R> struct NbRes<T, false, R> {};

/// The rows [*r0, *r1) of part `part`: a balanced split of p.rows into p.parts.
template <typename T>
WARPKIT_DEVICE void nbPartRows(const NormBackwardParams<T>& p, int part, long long* r0, long long* r1) {
    *r0 = p.rows * part / p.parts;
    *r1 = p.rows * (part + 1) / p.parts;
}

/// One row's share of a thread: C slots of W elements of dy and x, its statistics, whether it is a
/// row at all, and (A: the register path's Add calls) its slots of dres, loaded with the row.
template <typename T, int C, int W, bool A = false> struct NbRow {
    alignas(16) T dy[C][W];
    alignas(16) T x[C][W];
    alignas(16) T a[A ? C : 1][W]; // (unused without A: no registers)
    float mean, rstd;
    bool ok;
};

/// The slot of W elements at q, columns col .. col + W of a row of `cols` (fill past its end): Vec,
/// one 16-byte load (q aligned, cols a whole number of vectors); else one element at a time.
template <bool Vec, typename T, int W> WARPKIT_DEVICE void nbLoad(const T* q, int col, int cols, T fill, T (&v)[W]) {
    if constexpr (Vec) {
        static_assert(W == vectorElems<T>(), "nbLoad: Vec needs slots of a whole vector (W)");
        if (col < cols) *reinterpret_cast<Vector16<T>*>(v) = loadVector<LoadReadOnly>(q);
        else
#pragma unroll
            for (int e = 0; e < W; ++e) v[e] = fill;
    } else {
#pragma unroll
        for (int e = 0; e < W; ++e) v[e] = col + e < cols ? loadScalar<LoadReadOnly>(q + e) : fill;
    }
}

/// Stage: row `row` (< r1, else an empty row) of the calling thread (lane t of its group, slice
/// from column c0) into r (Vec: see nbLoad); empty slots and elements past cols hold zeros.
template <int Gs, bool Vec, typename T, int C, int W, bool A> WARPKIT_DEVICE void
nbLoadRow(const NormBackwardParams<T>& p, long long row, long long r1, int t, int c0, NbRow<T, C, W, A>& r) {
    r.ok = row < r1;
    const long long q = r.ok ? row : 0;
    r.mean = r.ok && p.mean != nullptr ? p.mean[q] : 0.0f;
    r.rstd = r.ok ? p.rstd[q] : 0.0f;
    const T* dy = p.dy + q * p.lddy;
    const T* x = p.x + q * p.ldx;
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const int col = c0 + (t + c * Gs) * W;
        if (Vec ? r.ok && col < p.cols : r.ok) {
            nbLoad<Vec>(dy + col, col, p.cols, Arith<T>::from_acc(0.0f), r.dy[c]);
            nbLoad<Vec>(x + col, col, p.cols, Arith<T>::from_acc(0.0f), r.x[c]);
        } else {
#pragma unroll
            for (int e = 0; e < W; ++e) r.dy[c][e] = r.x[c][e] = Arith<T>::from_acc(0.0f);
        }
    }
}

/// Stage (the register path's Add calls): row `row`'s slots of dres into r.a, beside its dy and x
/// (nbLoadRow), so that its loads are in flight with theirs and not on the row's critical path after
/// the row sums; zeros for an empty row and past cols.
template <int Gs, bool Vec, typename T, bool Res, typename R, int C, int W> WARPKIT_DEVICE void
nbLoadRes(const NormBackwardParams<T>& p, const NbRes<T, Res, R>& res, long long row, int t, NbRow<T, C, W, true>& r) {
    const T* q = res.dres + (r.ok ? row : 0) * res.lddres;
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const int col = (t + c * Gs) * W;
        if (Vec ? r.ok && col < p.cols : r.ok) nbLoad<Vec>(q + col, col, p.cols, Arith<T>::from_acc(0.0f), r.a[c]);
        else
#pragma unroll
            for (int e = 0; e < W; ++e) r.a[c][e] = Arith<T>::from_acc(0.0f);
    }
}

/// xhat = (x - mean) * rstd, each step rounded (no contraction: the same bits in every kernel).
WARPKIT_DEVICE float nbXhat(float x, float mean, float rstd) { return __fmul_rn(__fsub_rn(x, mean), rstd); }

/// Stage: the thread's terms of the row's two sums, s[0] = sum(g), s[1] = sum(g * xhat), slot by
/// slot, and (a real row) its terms of dw and db added to its registers aw, ab; every step an
/// explicitly rounded intrinsic, so that every kernel gets the same bits for the same columns.
template <typename T, int C, int W, bool A> WARPKIT_DEVICE void
nbRowTerms(const NbRow<T, C, W, A>& r, const T (&w)[C][W], float (&s)[2], float (&aw)[C][W], float (&ab)[C][W]) {
    s[0] = s[1] = 0.0f;
#pragma unroll
    for (int c = 0; c < C; ++c)
#pragma unroll
        for (int e = 0; e < W; ++e) {
            const float dy = Arith<T>::to_acc(r.dy[c][e]), xh = nbXhat(Arith<T>::to_acc(r.x[c][e]), r.mean, r.rstd);
            const float g = __fmul_rn(dy, Arith<T>::to_acc(w[c][e]));
            s[0] = __fadd_rn(s[0], g);
            s[1] = __fmaf_rn(g, xh, s[1]);
            if (r.ok) aw[c][e] = __fmaf_rn(dy, xh, aw[c][e]), ab[c][e] = __fadd_rn(ab[c][e], dy);
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

/// Stage: the row's dx (slice from column c0) from m1 = sum(g) / n (0 for RMSNorm) and m2 =
/// sum(g * xhat) / n, slot by slot: rstd * (fma(dy, w, -m1) - xhat * m2), each step rounded
/// explicitly as in nbRowTerms, plus (Res: the Add calls, p.dres given) dres's element, read here,
/// once (or, A, already in r.a: nbLoadRes), and added in float before dx's one rounding (R other than
/// T: and before dr's, from the same float). Vec: vector loads and stores (dr: W elements of R at
/// once); else one element at a time, up to cols.
template <typename T, int Gs, bool Vec, bool Res, typename R, int C, int W, bool A>
WARPKIT_DEVICE void nbStoreRow(const NormBackwardParams<T>& p, const NbRes<T, Res, R>& res, const NbRow<T, C, W, A>& r,
                               const T (&w)[C][W], float m1, float m2, long long row, int t, int c0) {
    static_assert(!A || Res, "nbStoreRow: a row holding dres (A) needs Res");
    constexpr bool Dr = Res && !IsSame<R, T>::value; // the residual's gradient in its own type too
    T* dx = p.dx + row * p.lddx;
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const int col = c0 + (t + c * Gs) * W;
        if (col >= p.cols) continue;
        alignas(16) T o[W], a[W];
        if constexpr (A)
#pragma unroll
            for (int e = 0; e < W; ++e) a[e] = r.a[c][e];
        else if constexpr (Res)
            nbLoad<Vec>(res.dres + row * res.lddres + col, col, p.cols, Arith<T>::from_acc(0.0f), a);
#pragma unroll
        for (int e = 0; e < W; ++e) {
            const float xh = nbXhat(Arith<T>::to_acc(r.x[c][e]), r.mean, r.rstd);
            const float gm = __fmaf_rn(Arith<T>::to_acc(r.dy[c][e]), Arith<T>::to_acc(w[c][e]), -m1);
            float d = __fmul_rn(r.rstd, __fmaf_rn(-xh, m2, gm));
            if constexpr (Res) d = __fadd_rn(d, Arith<T>::to_acc(a[e]));
            o[e] = Arith<T>::from_acc(d);
        }
        T* q = dx + col;
        if constexpr (Vec) storeVector(q, *reinterpret_cast<const Vector16<T>*>(o));
        else
#pragma unroll
            for (int e = 0; e < W; ++e)
                if (col + e < p.cols) storeScalar(q + e, o[e]);
        if constexpr (Dr) { // T is float: o holds d itself, rounded here once to R
            RowVec<R, W> o2;
#pragma unroll
            for (int e = 0; e < W; ++e) o2.e[e] = Arith<R>::from_acc(Arith<T>::to_acc(o[e]));
            R* q2 = res.dr + row * res.lddr + col;
            if constexpr (Vec) *reinterpret_cast<RowVec<R, W>*>(q2) = o2;
            else
#pragma unroll
                for (int e = 0; e < W; ++e)
                    if (col + e < p.cols) storeScalar(q2 + e, o2.e[e]);
        }
    }
}

/// Stage: the block's partial sums of dw and db into row `part` of the partials: the groups'
/// registers added in group order by group 0 (through shared memory; every thread of the block
/// calls), which writes the row (its slice from column c0).
template <int Threads, int Gs, bool Vec, typename T, int C, int W> WARPKIT_DEVICE void
nbBlockPartials(const NormBackwardParams<T>& p, float (&aw)[C][W], float (&ab)[C][W], int part, int c0) {
    constexpr int G = Threads / Gs;
    const int t = (int)threadIdx.x % Gs;
    if constexpr (G > 1) {
        __shared__ float buf[2][C * W][Threads]; // [dw or db][element of the slots][thread]
        const int g = (int)threadIdx.x / Gs;
        if (g > 0)
#pragma unroll
            for (int j = 0; j < C * W; ++j)
                buf[0][j][threadIdx.x] = aw[j / W][j % W], buf[1][j][threadIdx.x] = ab[j / W][j % W];
        __syncthreads();
        if (g > 0) return;
        for (int k = 1; k < G; ++k)
#pragma unroll
            for (int j = 0; j < C * W; ++j)
                aw[j / W][j % W] += buf[0][j][k * Gs + t], ab[j / W][j % W] += buf[1][j][k * Gs + t];
    }
    const size_t base = (size_t)part * p.cols;
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const int col = c0 + (t + c * Gs) * W;
        if (col >= p.cols) continue;
#pragma unroll
        for (int e = 0; e < W; ++e) {
            if (!Vec && col + e >= p.cols) break; // (Vec: cols is a whole number of vectors)
            if (p.pw != nullptr) p.pw[base + col + e] = aw[c][e];
            if (p.pb != nullptr) p.pb[base + col + e] = ab[c][e];
        }
    }
}

/// Stage: the thread's columns of w (1 without w or past cols), slot by slot (Vec: see nbLoad), kept
/// in T (half the registers of float for 16-bit types; widened where used, exactly).
template <int Gs, bool Vec, typename T, int C, int W>
WARPKIT_DEVICE void nbLoadWeights(const NormBackwardParams<T>& p, int t, int c0, T (&w)[C][W]) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const int col = c0 + (t + c * Gs) * W;
        if (p.w != nullptr && (!Vec || col < p.cols))
            nbLoad<Vec>(p.w + col, col, p.cols, Arith<T>::from_acc(1.0f), w[c]);
        else
#pragma unroll
            for (int e = 0; e < W; ++e) w[c][e] = Arith<T>::from_acc(1.0f);
    }
}

/// Blocks an SM that a kernel's launch bounds ask for, at `threads` a block: 512 threads an SM (the
/// register path: its registers hold rows in flight, nbRowsAhead; 16-bit in blocks of 256: 3 blocks
/// of one row ahead each); with vector slots on the split
/// path 768 (fp32; 16-bit in the one-pass kernel) or 1024 (16-bit). The one-pass kernel in fp32:
/// 768 on sm_90 (its grid of 384 needs 3 an SM on 132 SMs), 512 before (80 registers spilled on
/// sm_75/80, whose GPUs hold that grid at neither bound). ptxas -v on sm_75/80/90 shows no spills at
/// these bounds and spills past them.
template <typename T, bool Vec, bool Split, bool OnePass = false> constexpr int nbMinBlocks(int threads) {
    const int onePass = sizeof(T) == 2 || WARPKIT_ARCH >= 900 ? 768 : 512;
    const int perSm = !Vec                                  ? 512
                      : OnePass                             ? onePass
                      : Split                               ? (sizeof(T) == 2 ? 1024 : 768)
                      : nbNarrow16((int)sizeof(T), threads) ? 768
                                                            : 512;
    return perSm / threads > 1 ? perSm / threads : 1;
}

/// The contract of the kernels' element type (checked at each kernel's entry).
template <typename T> struct NbTypeCheck {
    static_assert(IsRowType<T>::value, "norm backward kernels: T must be float, __half or __nv_bfloat16");
    static_assert(kNbElems % vectorElems<T>() == 0,
                  "norm backward kernels: kNbElems must be a multiple of a vector's elements");
    static constexpr bool ok = true;
};

/// Rows a group of the register path keeps in flight ahead of the one it reduces, at `threads` a
/// block and `group` threads a row (N1): none in blocks of 1024 (the 64 registers a thread do not
/// hold two rows: 16-bit spilled); 3 for 16-bit vector slots in blocks of 512 (1 block an SM: up to
/// 124 registers); 1 for 16-bit in blocks of 256, which keep 3 blocks an SM instead (nbMinBlocks:
/// measured faster at 768 and 1024 columns than 3 rows ahead at 2 an SM); 2 for fp32 vector slots in blocks of 256 or
/// 512 (101-119), with dres (Res) only on sm_90 in blocks of 256 and groups of at most 128 (126-128 registers there;
/// sm_80 spilled 4 bytes, groups of 256 on sm_90 too); 1 elsewhere (element slots: a slot an element, twice the
/// registers a row). ptxas -v on sm_75/80/90: no spills.
template <typename T, bool Vec, bool Res> WARPKIT_HD constexpr int nbRowsAhead(int threads, int group) {
    return threads >= 1024                       ? 0
           : !Vec                                ? 1
           : sizeof(T) == 2                      ? (nbNarrow16((int)sizeof(T), threads) ? 1 : 3)
           : !Res                                ? 2
           : threads != 256                      ? 1
           : WARPKIT_ARCH >= 900 && group <= 128 ? 2
                                                 : 1;
}

/// Whether the register path's Add calls load dres with the row (nbLoadRes: its slots in every row
/// buffer) rather than after the row sums, where its latency stood on each row's critical path:
/// vector slots in blocks of at most 512 (element slots in blocks of 512 spilled), but not 16-bit in
/// blocks of 256, whose 3 blocks an SM leave no registers for it (spilled 4-12 bytes on sm_90).
template <typename T, bool Vec, bool Res> WARPKIT_HD constexpr bool nbResAhead(int threads) {
    return Res && Vec && threads < 1024 && !nbNarrow16((int)sizeof(T), threads);
}

/// Stage: row `row` into r: nbLoadRow, then (A) nbLoadRes.
template <int Gs, bool Vec, typename T, bool Res, typename R, int C, int W, bool A>
WARPKIT_DEVICE void nbLoadRowRes(const NormBackwardParams<T>& p, const NbRes<T, Res, R>& res, long long row,
                                 long long r1, int t, NbRow<T, C, W, A>& r) {
    nbLoadRow<Gs, Vec>(p, row, r1, t, 0, r);
    if constexpr (A) nbLoadRes<Gs, Vec>(p, res, row, t, r);
}

// Register path (N1): block b takes part b's rows; its Threads / Gs groups of Gs threads take a row
// each at a time (group k rows r0 + k, r0 + k + G, ...), each thread kNbElems elements of each
// input, nbRowsAhead rows' loads (with dres's, nbResAhead) in flight while the current row is
// reduced. Vec: every row of dy, x and dx, and w, is 16-byte aligned and cols a whole number of
// vectors (slots of a vector); else slots of one element. Res: dx gets res's dres added (the Add
// calls).
template <typename T, int Threads, int Gs, bool Vec, bool Res, typename R = T>
__global__ void __launch_bounds__(Threads, nbMinBlocks<T, Vec, false>(Threads))
    normBackwardKernel(NormBackwardParams<T> p, NbRes<T, Res, R> res) {
    static_assert(NbTypeCheck<T>::ok, "norm backward kernels: T (see NbTypeCheck)");
    static_assert(Gs >= 32 && Gs <= kNbMaxGroup && (Gs & (Gs - 1)) == 0,
                  "normBackwardKernel: Gs (threads a row) must be a power of two in 32..1024");
    static_assert(Threads >= Gs && Threads % Gs == 0 && Threads <= 1024,
                  "normBackwardKernel: Threads must be a multiple of Gs, at most 1024");
    static_assert(Vec || Gs < kNbMaxGroup,
                  "normBackwardKernel: element slots (Vec false) need Gs <= 512 (1024 spills)");
    constexpr int W = Vec ? vectorElems<T>() : 1, C = kNbElems / W, G = Threads / Gs;
    constexpr int Ahead = nbRowsAhead<T, Vec, Res>(Threads, Gs);
    constexpr bool A = nbResAhead<T, Vec, Res>(Threads);
    __shared__ float red[2][Threads / 32][2];
    // The final sum (launched next when dw or db is wanted: never a caller's kernel) may be placed as
    // SMs free up; it waits for this whole grid itself.
    if (p.pw != nullptr || p.pb != nullptr) pdlLaunchDependents();
    const int t = (int)threadIdx.x % Gs, g = (int)threadIdx.x / Gs;
    long long r0, r1;
    nbPartRows(p, (int)blockIdx.x, &r0, &r1);
    const int iters = (int)((r1 - r0 + G - 1) / G);
    alignas(16) T w[C][W];
    float aw[C][W] = {}, ab[C][W] = {};
    nbLoadWeights<Gs, Vec>(p, t, 0, w);
    NbRow<T, C, W, A> cur, nxt, nx2, nx3;
    nbLoadRowRes<Gs, Vec>(p, res, r0 + g, r1, t, cur);
    if constexpr (Ahead >= 2) nbLoadRowRes<Gs, Vec>(p, res, r0 + g + G, r1, t, nxt);
    if constexpr (Ahead >= 3) nbLoadRowRes<Gs, Vec>(p, res, r0 + g + 2 * G, r1, t, nx2);
    for (int it = 0; it < iters; ++it) {
        const long long row = r0 + (long long)it * G + g;
        if constexpr (Ahead == 1) nbLoadRowRes<Gs, Vec>(p, res, row + G, r1, t, nxt);
        if constexpr (Ahead == 2) nbLoadRowRes<Gs, Vec>(p, res, row + 2 * G, r1, t, nx2);
        if constexpr (Ahead == 3) nbLoadRowRes<Gs, Vec>(p, res, row + 3 * G, r1, t, nx3);
        float s[2];
        nbRowTerms(cur, w, s, aw, ab);
        nbGroupSums<Threads, Gs>(s, red, it);
        if (cur.ok && p.dx != nullptr)
            nbStoreRow<T, Gs, Vec, Res, R>(p, res, cur, w, p.mean != nullptr ? s[0] * p.invN : 0.0f, s[1] * p.invN, row,
                                           t, 0);
        if constexpr (Ahead == 0) nbLoadRowRes<Gs, Vec>(p, res, row + G, r1, t, cur);
        if constexpr (Ahead >= 1) cur = nxt;
        if constexpr (Ahead >= 2) nxt = nx2;
        if constexpr (Ahead >= 3) nx2 = nx3;
    }
    if (p.pw != nullptr || p.pb != nullptr) nbBlockPartials<Threads, Gs, Vec>(p, aw, ab, (int)blockIdx.x, 0);
}

/// The final sums (N5): out[k][col] = the sum over parts of src[k][part][col] (k = blockIdx.y), in an
/// order fixed by (parts, lanes): `lanes` threads a column (a power of two, 1..kNbFinishMaxLanes),
/// lane l adding parts l, l + lanes, ... in part order, then lane 0 adding the lanes' sums in lane
/// order. A block holds kNbFinishThreads / lanes columns, lane l of its column c at thread
/// l * (kNbFinishThreads / lanes) + c: a warp reads 32 consecutive columns of a part, or (16 or 32
/// lanes) whole 32-byte sectors of 2 or 4 parts. parts = 0: zeros.
template <typename T> struct NbFinish {
    const float* src[2];
    T* out[2];
    int parts, cols, lanes;
};

/// Stage: the sum of the n partials at q, q + step, ... (one column, every lanes-th part), added in
/// that order; each round of kNbFinishLoads loads issued before its first add, so that the plan's
/// parts (at most kNbFinishLoads a thread, N5) cost one trip to L2. Loads bypass L1 (LoadL2Only):
/// the partials were written by another grid, which may have run beside this one until
/// pdlWait. The slots past n hold +0 and are added unpredicated (a predicate a slot passes the
/// 7 that ptxas has, and it then splits the loads into rounds): the same bits, as a sum begun at +0
/// is never -0, and x + 0 = x for every other x, NaN and inf included.
WARPKIT_DEVICE float nbFinishColumn(const float* q, size_t step, int n) {
    float s = 0.0f;
    for (int m = n; m > 0; m -= kNbFinishLoads) { // m: the partials left
        float v[kNbFinishLoads];
#pragma unroll
        for (int i = 0; i < kNbFinishLoads; ++i, q += step) v[i] = i < m ? loadScalar<LoadL2Only>(q) : 0.0f;
#pragma unroll
        for (int i = 0; i < kNbFinishLoads; ++i) s = __fadd_rn(s, v[i]);
    }
    return s;
}

/// Stage: lane 0's total of its column cx: its sum s, then lanes 1 .. lanes - 1's in lane order,
/// through red (kNbFinishThreads floats; one barrier: every thread of the block calls, with its lane's
/// sum; the loads of the other lanes' sums issued before the adds, +0 past lanes as in
/// nbFinishColumn). Lane 0 gets the total.
WARPKIT_DEVICE float nbFinishCombine(float s, float* red, int lanes, int ncols, int cx, int lane) {
    red[threadIdx.x] = s;
    __syncthreads();
    if (lane != 0) return s;
    float v[kNbFinishMaxLanes];
#pragma unroll
    for (int k = 1; k < kNbFinishMaxLanes; ++k) v[k] = k < lanes ? red[k * ncols + cx] : 0.0f;
#pragma unroll
    for (int k = 1; k < kNbFinishMaxLanes; ++k) s = __fadd_rn(s, v[k]);
    return s;
}

/// The final sum's kernel (N5): see NbFinish. Launched after the main kernel, on sm_90 after the
/// register path's with Programmatic Dependent Launch where the device and this code allow
/// (norm_backward.cuh): every thread waits for the main kernel first (pdlWait), so that the
/// final sum never completes before it either, and work after the call in the stream finds dx
/// written too. Bounds of 1 block an SM: ptxas then holds all kNbFinishLoads loads in flight (40-46
/// registers on sm_75/80/90); aiming at full occupancy (32) it issued them in rounds of 4-11.
template <typename T> __global__ void __launch_bounds__(kNbFinishThreads, 1) normBackwardFinishKernel(NbFinish<T> f) {
    __shared__ float red[kNbFinishThreads];
    const int shift = __ffs(f.lanes) - 1, ncols = kNbFinishThreads >> shift; // lanes: a power of two
    const int cx = (int)threadIdx.x & (ncols - 1), lane = (int)threadIdx.x >> (__ffs(ncols) - 1);
    const unsigned col = blockIdx.x * (unsigned)ncols + (unsigned)cx; // (cols < 2^31: no wrap)
    const bool in = col < (unsigned)f.cols;
    const float* src = blockIdx.y == 0 ? f.src[0] : f.src[1]; // (an indexed parameter array: a stack copy)
    const int n = in && lane < f.parts ? ((f.parts - 1 - lane) >> shift) + 1 : 0;
    pdlWait();
    float s = nbFinishColumn(src + (size_t)lane * (size_t)f.cols + col, (size_t)f.cols << shift, n);
    if (f.lanes > 1) s = nbFinishCombine(s, red, f.lanes, ncols, cx, lane);
    if (lane != 0 || !in) return;
    (blockIdx.y == 0 ? f.out[0] : f.out[1])[col] = Arith<T>::from_acc(s);
}

} // namespace detail
} // namespace warpkit
