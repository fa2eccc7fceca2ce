// warpkit/warp/exchange.cuh: rearrange K values a lane between blocked and striped order across a
// warp (CUB's WarpExchange), and the 32 x 32 transpose in registers.
//
// Orders (l = the lane, v = its K values; the warp holds 32 * K items):
//   blocked:  v[k] = item l * K + k
//   striped:  v[k] = item k * 32 + l
// warpExchangeBlockedToStriped turns the first into the second, warpExchangeStripedToBlocked the
// reverse. They go through shared memory: each warp passes its own WarpExchangeScratch<T, K>
// (declare it __shared__, one per warp that exchanges at the same time; 32 * K items plus one pad
// item per 32, so that both the blocked and the striped accesses of 4-byte items are free of bank
// conflicts). One scratch serves any number of calls back to back: each call ends with a
// __syncwarp after its reads.
//
// The square case, K = 32, is a transpose of the 32 x 32 matrix the warp holds (row l in lane l):
// warpTranspose(v) does it in registers, no scratch: five butterfly stages, each exchanging 16
// values a lane with the lane whose index differs in one bit (80 shuffles of T and 160 selects);
// warpExchange* with K = 32 and a scratch does it with 32 shared stores and loads a lane.
//
// Participation: all 32 lanes of the warp call together (converged); each gets its own K values.
// Types: any trivially copyable T (the transpose also __half2 and __nv_bfloat162).
#pragma once

#include "../detail/shfl.cuh"

namespace warpkit {

/// Shared scratch of one warp's exchange of K values of T a lane (declare it __shared__).
template <typename T, int K> struct WarpExchangeScratch { T items[32 * K + K]; };

namespace detail {
/// Slot of item i: one pad item after every 32.
WARPKIT_DEVICE int exchangeSlot(int i) { return i + (i >> 5); }

template <bool ToStriped, int K, typename T>
WARPKIT_DEVICE void warpExchangeImpl(T (&v)[K], WarpExchangeScratch<T, K>& s) {
    const int l = (int)laneId();
#pragma unroll
    for (int k = 0; k < K; ++k) s.items[exchangeSlot(ToStriped ? l * K + k : k * 32 + l)] = v[k];
    __syncwarp();
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] = s.items[exchangeSlot(ToStriped ? k * 32 + l : l * K + k)];
    __syncwarp();
}
} // namespace detail

#define WARPKIT_DETAIL_EXCHANGE_CHECKS(fn)                                           \
    static_assert(K >= 1, fn ": template parameter K (values a lane) must be >= 1"); \
    WARPKIT_CHECK_SHUFFLABLE(T, fn)

/// Blocked to striped: on entry v[k] = item l * K + k, on return item k * 32 + l. All 32 lanes call,
/// converged, with the same scratch; each gets its own K items in v.
template <int K, typename T>
WARPKIT_DEVICE void warpExchangeBlockedToStriped(T (&v)[K], WarpExchangeScratch<T, K>& scratch) {
    WARPKIT_DETAIL_EXCHANGE_CHECKS("warpExchangeBlockedToStriped");
    detail::warpExchangeImpl<true>(v, scratch);
}
/// Striped to blocked: on entry v[k] = item k * 32 + l, on return item l * K + k. All 32 lanes call,
/// converged, with the same scratch; each gets its own K items in v.
template <int K, typename T>
WARPKIT_DEVICE void warpExchangeStripedToBlocked(T (&v)[K], WarpExchangeScratch<T, K>& scratch) {
    WARPKIT_DETAIL_EXCHANGE_CHECKS("warpExchangeStripedToBlocked");
    detail::warpExchangeImpl<false>(v, scratch);
}
#undef WARPKIT_DETAIL_EXCHANGE_CHECKS

/// Transpose the 32 x 32 matrix the warp holds, in registers: on entry v[j] of lane l is M[l][j], on
/// return M[j][l] (blocked <-> striped for K = 32). All 32 lanes call, converged; each gets its column.
template <typename T> WARPKIT_DEVICE void warpTranspose(T (&v)[32]) {
    WARPKIT_CHECK_SHUFFLABLE(T, "warpTranspose");
    if constexpr (detail::IsShufflable<T>::value) {
        const unsigned lane = laneId();
#pragma unroll
        for (int b = 1; b < 32; b <<= 1) {
            // A lane with bit b set swaps its slots j (bit b clear) for its partner's slots j | b.
            // Opaque selects (muxWords) keep the compiler from splitting the stage into two
            // divergent copies of its shuffles.
            const unsigned upper = 0u - (unsigned)((lane & b) != 0);
#pragma unroll
            for (int j = 0; j < 32; ++j) {
                if (j & b) continue;
                const T recv = detail::shflXor(detail::muxWords(upper, v[j], v[j | b]), b);
                v[j] = detail::muxWords(upper, recv, v[j]);
                v[j | b] = detail::muxWords(upper, v[j | b], recv);
            }
        }
    }
}

} // namespace warpkit
