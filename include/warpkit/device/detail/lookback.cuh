// warpkit/device/detail/lookback.cuh: the decoupled look-back of a single-pass scan over tiles
// (Merrill and Garland), with a deterministic left fold. Internal: device/scan.cuh uses it.
//
// The tile code knows three verbs, and the host two:
//   lookbackPublishAggregate(status, tile, agg)        one thread: tile's aggregate agg(tile)
//   lookbackPublishPrefix(status, tile, incl)          one thread: tile's inclusive prefix incl(tile)
//   lookbackExclusivePrefix(status, tile, op, kept)    one warp: incl(tile - 1), the same bits
//                                                      whatever the other tiles have published
//   lookbackBytes<T>(tiles), lookbackClear<T>(...)     host: the records' size; clear them on a stream
// Everything else here (status records, windows, the fold) is the verbs' own.
//
// Status records. A tile's record is one 64-bit word per 32-bit piece of T (an even count above
// one, so that a record moves as 16-byte accesses), each word holding a piece of the value and the
// record's flag (0 invalid, 1 aggregate, 2 inclusive prefix). One relaxed 64-bit store publishes a
// piece together with its flag, and a reader accepts a record only when all its words carry the
// same flag. So no fence is needed (a release at GPU scope waits for the SM's output stores to
// drain), and no 16-byte atomicity is assumed.
//
// Determinism. The inclusive prefix of tile t is DEFINED as the left chain incl(t) = incl(t-1) op
// agg(t), and a record only ever holds agg(t) or incl(t). The look-back of tile i finds the nearest
// j < i whose record holds incl(j), with every tile between holding agg(k), and folds LEFT to
// right: ((incl(j) op agg(j+1)) op agg(j+2)) ... op agg(i-1). Each step is exactly the chain's
// definition of the next incl, so the result is incl(i-1) bit for bit, whichever j the timing gave
// (by induction over i). A CUB-style tree over the window would change the association, and the
// rounding, with j. Cost: the fold is serial, one op per tile looked past; the shuffles that gather
// a window do not depend on the running value, so a window of 32 costs about 32 op latencies.
#pragma once

#include "../../detail/async.cuh"
#include "../../detail/shfl.cuh"

namespace warpkit {
namespace detail {

/// The status record of a T and the look-back's shared memory.
template <typename T> struct LookbackShape {
    /// 64-bit words of a record: one per 32-bit piece of T, an even count above one.
    static constexpr int pieces = (int)((sizeof(T) + 3) / 4);
    static constexpr int words = pieces == 1 ? 1 : (pieces + 1) / 2 * 2;
    /// Windows of 32 aggregates kept in shared memory (2 KB at most, 2 to 8 windows).
    static constexpr int keep0 = (int)(2048 / (32 * sizeof(T)));
    static constexpr int keep = keep0 < 2 ? 2 : (keep0 > 8 ? 8 : keep0);
    /// Bytes of the `kept` buffer lookbackExclusivePrefix takes.
    static constexpr int keptBytes = keep * 32 * (int)sizeof(T);
};

constexpr unsigned kTileInvalid = 0;   // status flag: nothing published (the clear's zeros)
constexpr unsigned kTileAggregate = 1; // the tile's aggregate
constexpr unsigned kTilePrefix = 2;    // the inclusive prefix through the tile
constexpr unsigned kTileMixed = 3;     // (read only) the words disagree: a record being rewritten
constexpr unsigned kTileNone = 4;      // (read only) a tile before tile 0

/// Publishes `flag` and `v` in the status record at p. One thread.
template <typename T> WARPKIT_DEVICE void statusPublish(unsigned long long* p, unsigned flag, const T& v) {
    constexpr int SW = LookbackShape<T>::words;
    unsigned piece[SW];
#pragma unroll
    for (int k = 0; k < SW; ++k) piece[k] = 0;
    __builtin_memcpy(piece, &v, sizeof(T));
    unsigned long long w[SW];
#pragma unroll
    for (int k = 0; k < SW; ++k) w[k] = (unsigned long long)flag << 32 | piece[k];
    if constexpr (SW == 1) {
        storeRelaxedGpu(p, w[0]);
    } else {
#pragma unroll
        for (int k = 0; k < SW; k += 2) storeRelaxedGpu2(p + k, w[k], w[k + 1]);
    }
}

/// Reads the status record at p: returns its flag (kTileMixed when its words disagree) and its
/// value in v. Any thread.
template <typename T> WARPKIT_DEVICE unsigned statusRead(const unsigned long long* p, T& v) {
    constexpr int SW = LookbackShape<T>::words;
    unsigned long long w[SW];
    if constexpr (SW == 1) {
        w[0] = loadRelaxedGpu(p);
    } else {
#pragma unroll
        for (int k = 0; k < SW; k += 2) loadRelaxedGpu2(p + k, w[k], w[k + 1]);
    }
    unsigned flag = (unsigned)(w[0] >> 32);
    unsigned piece[SW];
#pragma unroll
    for (int k = 0; k < SW; ++k) {
        piece[k] = (unsigned)w[k];
        if ((unsigned)(w[k] >> 32) != flag) flag = kTileMixed;
    }
    __builtin_memcpy(&v, piece, sizeof(T));
    return flag;
}

/// acc op v(lane from) op v(lane from + 1) ... op v(lane 31), left to right. All 32 lanes call with
/// the same acc and from; all get the result.
template <typename T, typename Op> WARPKIT_DEVICE T lookbackFoldWindow(T acc, const T& v, int from, Op op) {
#pragma unroll
    for (int k = 0; k < 32; ++k) {
        const T x = shflIdx(v, k);
        if (k >= from) acc = op(acc, x);
    }
    return acc;
}

/// Reads the status records of N windows of 32 tiles, window d holding tiles base - 32 (d + 1)
/// + lane, and finds the nearest inclusive prefix: *found = its window and *p its lane, or
/// *found = -1; *wait = true when a tile after it (or, with none, any tile) has published
/// nothing yet. The whole warp calls.
template <int N, typename T> WARPKIT_DEVICE void lookbackReadWindows(const unsigned long long* status, long long base,
                                                                     T (&v)[N], int* found, int* p, bool* wait) {
    const int lane = (int)laneId();
    unsigned flag[N];
#pragma unroll
    for (int d = 0; d < N; ++d) {
        const long long t = base - 32 * (d + 1) + lane;
        flag[d] = t >= 0 ? statusRead<T>(status + t * LookbackShape<T>::words, v[d]) : kTileNone;
    }
    *found = -1;
    *wait = false;
#pragma unroll
    for (int d = 0; d < N; ++d) {
        if (*found < 0 && !*wait) {
            const unsigned prefix = __ballot_sync(WARPKIT_FULL_MASK, flag[d] == kTilePrefix);
            const unsigned stall = __ballot_sync(WARPKIT_FULL_MASK, flag[d] == kTileInvalid || flag[d] == kTileMixed);
            const int pd = prefix ? 31 - __clz((int)prefix) : -1; // nearest inclusive prefix
            const int q = stall ? 31 - __clz((int)stall) : -1;    // nearest tile not ready
            if (q > pd) {
                *wait = true;
            } else if (pd >= 0) {
                *found = d;
                *p = pd;
            }
        }
    }
}

/// incl(j) at lane p of window `found` of v, op the aggregates after it, op the nearer windows of
/// v, op the K windows of aggregates in kept (nearest first), left to right. The whole warp calls.
template <int N, typename T, typename Op>
WARPKIT_DEVICE T lookbackFoldFound(const T (&v)[N], int found, int p, const T* kept, int K, Op op) {
    const int lane = (int)laneId();
    T acc = T{};
#pragma unroll
    for (int d = N - 1; d >= 0; --d) {
        if (d == found) {
            acc = lookbackFoldWindow(shflIdx(v[d], p), v[d], p + 1, op);
        } else if (d < found) {
            acc = lookbackFoldWindow(acc, v[d], 0, op);
        }
    }
    for (int d = K - 1; d >= 0; --d) acc = lookbackFoldWindow(acc, kept[d * 32 + lane], 0, op);
    return acc;
}

/// Publishes agg(tile), the op-chain of tile `tile`'s own elements. One thread.
template <typename T>
WARPKIT_DEVICE void lookbackPublishAggregate(unsigned long long* status, long long tile, const T& agg) {
    statusPublish(status + tile * LookbackShape<T>::words, kTileAggregate, agg);
}

/// Publishes incl(tile), the inclusive prefix through tile `tile` (tile 0: its aggregate, or init op
/// it for an exclusive scan). One thread.
template <typename T>
WARPKIT_DEVICE void lookbackPublishPrefix(unsigned long long* status, long long tile, const T& incl) {
    statusPublish(status + tile * LookbackShape<T>::words, kTilePrefix, incl);
}

/// The exclusive prefix of tile `tile` (>= 1): incl(tile - 1), formed by the deterministic left
/// fold (header comment). One warp calls, all 32 lanes; all get it. It reads the window of the 32
/// tiles before `tile`; when that holds only aggregates, it keeps them in `kept` (shared memory of
/// LookbackShape<T>::keptBytes, 16-byte aligned) and reads the keep - 1 windows before it at once
/// (one round trip); when those hold only aggregates too, or a tile after the nearest prefix has
/// published nothing yet, it waits and starts over.
template <typename T, typename Op>
WARPKIT_DEVICE T lookbackExclusivePrefix(const unsigned long long* status, long long tile, Op op, T* kept) {
    constexpr int D = LookbackShape<T>::keep - 1;
    const int lane = (int)laneId();
    unsigned sleep = 0;
    for (;;) {
        int found, p;
        bool wait;
        T v0[1];
        lookbackReadWindows(status, tile, v0, &found, &p, &wait);
        if (!wait) {
            if (found >= 0) return lookbackFoldFound(v0, found, p, kept, 0, op);
            if (tile > 32) {
                kept[lane] = v0[0];
                __syncwarp();
                T v[D];
                lookbackReadWindows(status, tile - 32, v, &found, &p, &wait);
                if (!wait && found >= 0) return lookbackFoldFound(v, found, p, kept, 1, op);
            }
        }
        sleep = sleep < 32 ? 32 : (sleep < 512 ? sleep * 2 : 512);
        __nanosleep(sleep);
    }
}

/// Bytes of the status records of `tiles` tiles (the buffer must be 16-byte aligned).
template <typename T> constexpr size_t lookbackBytes(long long tiles) {
    return (size_t)tiles * LookbackShape<T>::words * 8;
}

/// Clears the status records of `tiles` tiles on `stream` (every record invalid). Host.
template <typename T>
inline cudaError_t lookbackClear(unsigned long long* status, long long tiles, cudaStream_t stream) {
    return cudaMemsetAsync(status, 0, lookbackBytes<T>(tiles), stream);
}

} // namespace detail
} // namespace warpkit
