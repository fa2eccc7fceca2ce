// warpkit/device/select.cuh: stream compaction that does NOT keep the input order, called from the
// host: out receives every element x of in[0 .. n) with pred(x), *numSelected their count.
//
//   warpkit::deviceSelectUnordered(in, out, n, pred, numSelected, workspace, &bytes, stream)
//   warpkit::SelectGreater{t}        a predicate: x > t
//
// Order. The kept elements come out in an order that varies from run to run. The input's 16-byte
// aligned body is cut into warp chunks of 2048 elements; a chunk's kept elements land in one
// contiguous run, the chunks in the order their atomics happen; inside a chunk, rows of 128 stay
// in order and each row's kept elements are grouped by position mod 4. The (at most 6) elements
// before the body and after it are placed one by one. The multiset and the count are exact. For
// the input order use cub::DeviceSelect::If, which pays a decoupled look-back scan for it.
//
// How it works. Each warp takes a chunk as 16 rows of one 16-byte vector a lane (16 loads in
// flight a lane). It counts its kept elements with a warp sum and reserves room for the whole
// chunk with ONE atomicAdd on the count; per row, four ballots (one per vector component) and
// popc of the lanes below give each kept element its place, and the row is stored component-major
// (all kept .x in lane order, then .y, .z, .w), so each store instruction writes one contiguous
// run. One wave of blocks (occupancy x SMs), fewer for a small n.
//
// Types: any 4-byte T (float, int, unsigned). pred: a functor `bool pred(T)` callable on the
// device, evaluated twice per element (keep it pure). Any alignment of in and out; any n >= 0
// (64-bit). in and out must not overlap; out needs room for the kept elements only.
//
// Conventions (docs/design.md). Host; returns cudaError_t; asynchronous on `stream`: a
// cudaMemsetAsync of *numSelected to 0, then one kernel whose warps add their counts to it, so
// *numSelected is final when the stream gets past the call (0 for n = 0: the memset alone). The
// call needs no workspace: the size query reports 1 byte, so that the two-call pattern (query,
// allocate, call) hands it a non-null pointer, and any workspace of at least that size is
// accepted and left untouched. Bad arguments (n < 0, a null workspaceBytes or numSelected, a null
// in or out with n > 0, *workspaceBytes < 1) return cudaErrorInvalidValue, and nothing is
// launched or written. Host caches are per device and thread-safe.
#pragma once

#include "../detail/host.cuh"
#include "../thread/vector.cuh"
#include "../warp/reduce.cuh"
#include "../warp/vote.cuh"

namespace warpkit {

/// Predicate x > threshold (false for NaN), for deviceSelectUnordered. Host or device.
template <typename T> struct SelectGreater {
    T threshold;
    WARPKIT_HD bool operator()(T x) const { return x > threshold; }
};
template <typename T> SelectGreater(T) -> SelectGreater<T>;

namespace detail {

constexpr int kSelectThreads = 256;                            // threads per block
constexpr int kSelectRows = 16;                                // 16-byte rows in flight per lane
constexpr long long kSelectChunk = 32 * 4 * kSelectRows;       // elements per warp chunk
constexpr size_t kSelectWorkspaceBytes = 1;

/// Bits 0..3: which of the 4 elements of `v` are kept (none when the vector is past the end).
template <typename T, typename Pred> WARPKIT_DEVICE unsigned keep4(const Vector16<T>& v, bool valid, Pred pred) {
    return valid ? (unsigned)pred(v.e[0]) | (unsigned)pred(v.e[1]) << 1 | (unsigned)pred(v.e[2]) << 2 |
                       (unsigned)pred(v.e[3]) << 3
                 : 0u;
}

/// One warp chunk of the 16-byte-aligned body: row j is the vector c/4 + 32j + lane of body.
/// Full: every vector of the chunk is below nvec (no guards). All 32 lanes call.
template <bool Full, typename T, typename Pred>
WARPKIT_DEVICE void selectChunk(const T* __restrict__ body, long long nvec, T* __restrict__ out,
                                unsigned long long* count, Pred pred, long long c, unsigned lane) {
    constexpr int R = kSelectRows;
    Vector16<T> v[R];
#pragma unroll
    for (int j = 0; j < R; ++j) {
        const long long i = c / 4 + 32 * j + lane;
        if (Full || i < nvec) v[j] = loadVector<LoadStreaming>(body + 4 * i);
    }
    unsigned mine = 0;
#pragma unroll
    for (int j = 0; j < R; ++j) mine += __popc(keep4(v[j], Full || c / 4 + 32 * j + lane < nvec, pred));
    const unsigned total = warpReduceSum(mine);
    unsigned long long base = 0;
    if (lane == 0 && total) base = atomicAdd(count, (unsigned long long)total);
    base = __shfl_sync(WARPKIT_FULL_MASK, base, 0);
    T* dst = out + base; // this chunk's run; the offsets inside it fit in 32 bits
    const unsigned lt = laneMaskLt();
    unsigned row = 0;
#pragma unroll
    for (int j = 0; j < R; ++j) {
        const unsigned m = keep4(v[j], Full || c / 4 + 32 * j + lane < nvec, pred);
        const unsigned b0 = __ballot_sync(WARPKIT_FULL_MASK, m & 1u), b1 = __ballot_sync(WARPKIT_FULL_MASK, m & 2u);
        const unsigned b2 = __ballot_sync(WARPKIT_FULL_MASK, m & 4u), b3 = __ballot_sync(WARPKIT_FULL_MASK, m & 8u);
        const unsigned c0 = __popc(b0), c1 = __popc(b1), c2 = __popc(b2), c3 = __popc(b3);
        if (m & 1u) storeScalar<StoreStreaming>(dst + (row + __popc(b0 & lt)), v[j].e[0]);
        if (m & 2u) storeScalar<StoreStreaming>(dst + (row + c0 + __popc(b1 & lt)), v[j].e[1]);
        if (m & 4u) storeScalar<StoreStreaming>(dst + (row + c0 + c1 + __popc(b2 & lt)), v[j].e[2]);
        if (m & 8u) storeScalar<StoreStreaming>(dst + (row + c0 + c1 + c2 + __popc(b3 & lt)), v[j].e[3]);
        row += c0 + c1 + c2 + c3;
    }
}

/// Compacts in[0 .. n), split as s = vectorSplit(in, n), into out; *count (0 on entry) ends as
/// the number kept. Warps take chunks of the body grid-stride; the grid's first lanes take the
/// head and tail elements (fewer than 8) one each.
template <typename T, typename Pred>
__global__ void __launch_bounds__(kSelectThreads)
    deviceSelectKernel(const T* __restrict__ in, VectorSplit s, T* __restrict__ out, unsigned long long* count,
                       Pred pred) {
    const unsigned lane = laneId();
    const T* body = in + s.head;
    const long long nvec = s.vectors;
    const long long warp = ((long long)blockIdx.x * kSelectThreads + threadIdx.x) >> 5;
    const long long warps = ((long long)gridDim.x * kSelectThreads) >> 5;
    long long c = warp * kSelectChunk;
    for (; c + kSelectChunk <= 4 * nvec; c += warps * kSelectChunk)
        selectChunk<true>(body, nvec, out, count, pred, c, lane);
    if (c < 4 * nvec) selectChunk<false>(body, nvec, out, count, pred, c, lane);
    if (blockIdx.x == 0 && (int)threadIdx.x < s.head + s.tail) {
        const T x = in[extraIndex(s, (int)threadIdx.x, 4)];
        if (pred(x)) out[atomicAggInc(count)] = x;
    }
}

} // namespace detail

/// Copies every x of in[0 .. n) with pred(x) to out[0 .. *numSelected), in no particular order
/// (see the header comment), and sets *numSelected (device memory) to their count. Host;
/// asynchronous on `stream`. Workspace and errors: see the header comment.
template <typename T, typename Pred>
inline cudaError_t deviceSelectUnordered(const T* in, T* out, long long n, Pred pred, unsigned long long* numSelected,
                                         void* workspace, size_t* workspaceBytes, cudaStream_t stream = 0) {
    static_assert(sizeof(T) == 4 && __is_trivially_copyable(T),
                  "deviceSelectUnordered: element type T must be a 4-byte trivially copyable type (float, int, "
                  "unsigned)");
    if (workspaceBytes == nullptr || n < 0) return cudaErrorInvalidValue;
    if (workspace == nullptr) {
        *workspaceBytes = detail::kSelectWorkspaceBytes;
        return cudaSuccess;
    }
    if (numSelected == nullptr || (n > 0 && (in == nullptr || out == nullptr)) ||
        *workspaceBytes < detail::kSelectWorkspaceBytes)
        return cudaErrorInvalidValue;
    const VectorSplit s = vectorSplit(in, n);
    int blocks = 1;
    if (n > 0)
        WARPKIT_TRY(detail::gridBlocks(detail::deviceSelectKernel<T, Pred>, detail::kSelectThreads,
                                       (4 * s.vectors + detail::kSelectChunk - 1) / detail::kSelectChunk,
                                       detail::kSelectThreads / 32, 1ll << 30, &blocks));
    WARPKIT_TRY(cudaMemsetAsync(numSelected, 0, sizeof(*numSelected), stream));
    if (n == 0) return cudaSuccess;
    return detail::launchKernel(detail::deviceSelectKernel<T, Pred>, blocks, detail::kSelectThreads, stream, in, s, out,
                                numSelected, pred);
}

} // namespace warpkit
