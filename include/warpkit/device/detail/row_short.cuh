// warpkit/device/detail/row_short.cuh: the short-row path (RowShort, rule R24 of row_plan.cuh) and
// its launch. Rows of a few 16-byte vectors whose length is not a whole number of them leave most
// lanes of a warp segment idle and take element accesses; here a block takes a tile of whole rows
// of a packed matrix (ld == cols, 16-byte aligned bases), whose elements are one contiguous run
// starting on 16 bytes, and moves it with 16-byte accesses only, every thread busy:
//   load      the tile's vectors into shared memory (all of a thread's loads in flight at once);
//   rows      a segment of W lanes per row, K elements a lane (lane l: elements l, l + W, ...),
//             read from shared memory, the algorithm's row hook on them, written back in place;
//   store     the tile's vectors from shared memory.
// The matrix's last elements past its last whole vector (fewer than 16 bytes) move one by one.
//
// The algorithm's hooks (found by argument-dependent lookup; rowSoftmax's: device/softmax.cuh):
//   rowShortRows(r) -> RowShortIO<T>   its rows' input and output (host and device)
// The launch: row_launch.cuh (rowLaunchShort).
//   rowShortRow<W>(r, v)               a row spread over a segment of W lanes, K slots each
//                                      (T v[K], empty slots -inf), its outputs in place; every lane
//                                      of the segment calls (rows past the matrix's end too)
// Internal.
#pragma once

#include "row_plan.cuh"
#include "row_part.cuh"
#include "../../thread/vector.cuh"

namespace warpkit {
namespace detail {

/// The rows of a short-path call: input x, output y (may be x), row strides in elements.
template <typename T> struct RowShortIO {
    const T* x;
    T* y;
    long long ldx, ldy;
};

/// Whether the rows are packed as the short path needs: row strides of cols, 16-byte aligned bases.
/// Host.
template <typename T> inline bool rowShortPacked(const RowShortIO<T>& io, int cols) {
    return io.ldx == cols && io.ldy == cols && ((size_t)io.x & 15) == 0 && ((size_t)io.y & 15) == 0;
}

// Declared so that rowShortRow<W>(...) parses as a template call (C++17); argument-dependent lookup
// finds the algorithms' overloads.
struct RowShortNone;
template <int W> void rowShortRow(RowShortNone*);

constexpr int kRowShortTileVecs = kRowShortTileBytes / 16;
constexpr int kRowShortLoads = kRowShortTileVecs / kRowShortThreads; // vectors a thread moves
constexpr int kRowShortBatch = 4; // loads a thread has in flight (8 spilled on sm_80 and sm_90)

/// Stage load: the tile's n elements from x (16-byte aligned) into shared memory s, in batches of
/// kRowShortBatch vectors a thread (all of a batch's loads in flight at once). Every thread of the
/// block calls.
template <typename T> WARPKIT_DEVICE void rowShortLoad(uint4* s, const T* x, int n) {
    constexpr int V = vectorElems<T>(), B = kRowShortBatch, S = kRowShortThreads;
    const int nv = n / V, t = (int)threadIdx.x;
    const uint4* xv = reinterpret_cast<const uint4*>(x);
#pragma unroll
    for (int b = 0; b < kRowShortLoads; b += B) {
        uint4 u[B];
#pragma unroll
        for (int k = 0; k < B; ++k)
            if (t + (b + k) * S < nv) u[k] = loadWord<LoadReadOnly>(xv + t + (b + k) * S);
#pragma unroll
        for (int k = 0; k < B; ++k)
            if (t + (b + k) * S < nv) s[t + (b + k) * S] = u[k];
    }
    if (t < n - nv * V) reinterpret_cast<T*>(s)[nv * V + t] = loadScalar<LoadReadOnly>(x + nv * V + t);
}

/// Stage store: the tile's n elements from shared memory s to y (16-byte aligned). Every thread of
/// the block calls.
template <typename T> WARPKIT_DEVICE void rowShortStore(const uint4* s, T* y, int n) {
    constexpr int V = vectorElems<T>(), L = kRowShortLoads;
    const int nv = n / V, t = (int)threadIdx.x;
    uint4* yv = reinterpret_cast<uint4*>(y);
#pragma unroll
    for (int k = 0; k < L; ++k)
        if (t + k * kRowShortThreads < nv)
            storeWord<StoreDefault>(yv + t + k * kRowShortThreads, s[t + k * kRowShortThreads]);
    if (t < n - nv * V) storeScalar(y + nv * V + t, reinterpret_cast<const T*>(s)[nv * V + t]);
}

/// Whether the short path's segments of W lanes, K slots a lane, rotate their slots (R24): 2-byte
/// elements in two segments a warp of 5 slots (rows of 65..79 elements, 32.5..39.5 words apart)
/// put both rows' reads of a slot on the same banks (2 wavefronts); the odd segment's slot j then
/// holds element l + ((j + 1) % K) * W, and the two reads of a slot fall on disjoint banks.
template <typename T, int W, int K> WARPKIT_HD constexpr bool rowShortRotates() {
    return sizeof(T) == 2 && W == 16 && K == 5;
}

/// Stage rows: the tile's nr rows of cols elements in shared memory s, a segment of W lanes a row,
/// in passes of every segment of the block at once (the same number of passes for every thread, so
/// that each segment's shuffles see all its lanes; a row past nr is all -inf and not written back).
/// Lane l's slot j holds element l + j * W, one slot on in the odd segments of rotating shapes.
template <int W, int K, typename R, typename T>
WARPKIT_DEVICE void rowShortRowsPass(const R& r, T* s, int nr, int cols) {
    constexpr int segs = kRowShortThreads / W;
    constexpr bool rot = rowShortRotates<T, W, K>();
    const int seg = (int)threadIdx.x / W, l = (int)threadIdx.x % W;
    const int sh = rot && (seg & 1) ? W : 0; // the odd segment's first element, and its wrap below
    const int passes = (nr + segs - 1) / segs;
    for (int q = seg; q < passes * segs; q += segs) {
        const bool ok = q < nr;
        T* row = s + q * cols;
        T v[K];
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const int e = l + j * W + sh - (j == K - 1 ? sh * K : 0);
            v[j] = ok && e < cols ? row[e] : negInfAs<T>();
        }
        rowShortRow<W>(r, v);
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const int e = l + j * W + sh - (j == K - 1 ? sh * K : 0);
            if (ok && e < cols) row[e] = v[j];
        }
    }
}

/// Block b takes rows first + [b * tileRows, (b + 1) * tileRows) below `end` (first and
/// tileRows from rowShortPlan's multiples: the tile starts on 16 bytes, and every pass of
/// rowShortRowsPass is full but the last tile's). In place (x == y) is safe: a block reads its
/// whole tile before it writes.
template <typename R, int W, int K> __global__ void __launch_bounds__(kRowShortThreads, 8)
    rowShortKernel(R r, long long first, long long end, int cols, int tileRows) {
    using T = typename R::Elem;
    __shared__ uint4 tile[kRowShortTileVecs];
    const RowShortIO<T> io = rowShortRows(r);
    const long long r0 = first + (long long)blockIdx.x * tileRows;
    const int nr = end - r0 < tileRows ? (int)(end - r0) : tileRows;
    const long long e0 = r0 * cols;
    rowShortLoad(tile, io.x + e0, nr * cols);
    __syncthreads();
    rowShortRowsPass<W, K>(r, reinterpret_cast<T*>(tile), nr, cols);
    __syncthreads();
    rowShortStore(tile, io.y + e0, nr * cols);
}

} // namespace detail
} // namespace warpkit
