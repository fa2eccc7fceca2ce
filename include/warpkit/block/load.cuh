// warpkit/block/load.cuh: a block loads or stores a tile of BlockThreads * K elements in blocked
// or striped order, and stages a tile with a halo in shared memory (a stencil's input).
//
// Orders (t = the thread's linear index in the block, 0 .. BlockThreads-1; v = its K registers):
//   blocked:  v[k] = tile element t * K + k      (each thread a contiguous run)
//   striped:  v[k] = tile element k * BlockThreads + t   (each step of k a contiguous block row)
// The tile starts at p; only its first `n` elements exist (n may be anything: >= the tile size
// means all of it, <= 0 none). Loads give `fill` for elements at or past n; stores skip them.
//
// Accesses. Blocked: a thread whose run is whole (t * K + K <= n), with p 16-byte aligned and
// K * sizeof(T) a multiple of 16, moves it with K * sizeof(T) / 16 vector accesses; otherwise
// element by element. Striped: one element a step, each step a contiguous row of the block
// (coalesced); K loads are issued before any is used.
//
// Tile with a halo (blockLoadTileHalo): the slot-to-element map is
//   smem[j] = p[start - Halo + j]   for j = 0 .. Tile + 2 * Halo - 1,
// and `fill` where start - Halo + j lies outside [0, n). So the tile's element start + i sits in
// smem[Halo + i], and its left and right neighbours within Halo are in the same array. The body
// (smem[Halo .. Halo + Tile)) is read with 16-byte loads, vector i by thread i mod BlockThreads,
// when it is whole (start >= 0, start + Tile <= n), p + start and smem + Halo are 16-byte aligned
// and Tile * sizeof(T) is a multiple of 16 (pick Halo * sizeof(T) a multiple of 16 and declare
// smem with alignas(16)); otherwise element by element. The 2 * Halo halo slots are loaded by the
// first threads.
//
// Participation: every thread of the block calls with the same arguments (BlockThreads must be
// the block's size); none of these functions holds a barrier: after blockLoadTileHalo, call
// __syncthreads() before any thread reads slots another thread wrote, and before the next call
// that reuses smem, make sure every thread has finished reading it (another barrier).
//
// Types: any T whose size divides 16 (float, __half, int, double, ...). Hint: a cache hint of
// thread/vector.cuh (LoadDefault, LoadReadOnly, LoadStreaming; StoreDefault, StoreStreaming).
#pragma once

#include "../thread/vector.cuh"
#include "../detail/lane.cuh"

#define WARPKIT_CHECK_TILE_SHAPE(BT, K, fn)                                                          \
    static_assert((BT) >= 1 && (BT) <= 1024 && (K) >= 1,                                             \
                  fn ": template parameters BlockThreads (the block size, 1..1024) and K (elements " \
                     "a thread, >= 1) are out of range")

namespace warpkit {
namespace detail {

template <typename T, int K> struct BlockedVectors {
    static constexpr bool ok = (K * sizeof(T)) % 16 == 0;
    static constexpr int count = (int)(K * sizeof(T) / 16);
};

} // namespace detail

/// Load the tile p[0 .. BlockThreads * K) in blocked order: v[k] = p[t * K + k], `fill` at or past
/// n. Every thread of the block calls; each gets its own K elements.
template <int BlockThreads, int K, int Hint = LoadDefault, typename T>
WARPKIT_DEVICE void blockLoadBlocked(T (&v)[K], const T* p, long long n, T fill) {
    WARPKIT_CHECK_TILE_SHAPE(BlockThreads, K, "blockLoadBlocked");
    WARPKIT_CHECK_VECTOR_TYPE(T, "blockLoadBlocked");
    const long long first = (long long)linearThreadId() * K;
    if constexpr (detail::BlockedVectors<T, K>::ok) {
        if (((size_t)p & 15) == 0 && first + K <= n) {
#pragma unroll
            for (int i = 0; i < detail::BlockedVectors<T, K>::count; ++i) {
                const Vector16<T> x = loadVector<Hint>(p + first + i * vectorElems<T>());
#pragma unroll
                for (int j = 0; j < vectorElems<T>(); ++j) v[i * vectorElems<T>() + j] = x.e[j];
            }
            return;
        }
    }
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] = first + k < n ? loadScalar<Hint>(p + first + k) : fill;
}

/// Load the tile in striped order: v[k] = p[k * BlockThreads + t], `fill` at or past n. Every
/// thread of the block calls; each gets its own K elements.
template <int BlockThreads, int K, int Hint = LoadDefault, typename T>
WARPKIT_DEVICE void blockLoadStriped(T (&v)[K], const T* p, long long n, T fill) {
    WARPKIT_CHECK_TILE_SHAPE(BlockThreads, K, "blockLoadStriped");
    WARPKIT_CHECK_VECTOR_TYPE(T, "blockLoadStriped");
    const long long t = (long long)linearThreadId();
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const long long i = (long long)k * BlockThreads + t;
        v[k] = i < n ? loadScalar<Hint>(p + i) : fill;
    }
}

/// Store v in blocked order: p[t * K + k] = v[k] for t * K + k < n. Every thread of the block calls
/// with the same p and n; each stores its own K elements.
template <int BlockThreads, int K, int Hint = StoreDefault, typename T>
WARPKIT_DEVICE void blockStoreBlocked(T* p, const T (&v)[K], long long n) {
    WARPKIT_CHECK_TILE_SHAPE(BlockThreads, K, "blockStoreBlocked");
    WARPKIT_CHECK_VECTOR_TYPE(T, "blockStoreBlocked");
    const long long first = (long long)linearThreadId() * K;
    if constexpr (detail::BlockedVectors<T, K>::ok) {
        if (((size_t)p & 15) == 0 && first + K <= n) {
#pragma unroll
            for (int i = 0; i < detail::BlockedVectors<T, K>::count; ++i) {
                Vector16<T> x;
#pragma unroll
                for (int j = 0; j < vectorElems<T>(); ++j) x.e[j] = v[i * vectorElems<T>() + j];
                storeVector<Hint>(p + first + i * vectorElems<T>(), x);
            }
            return;
        }
    }
#pragma unroll
    for (int k = 0; k < K; ++k)
        if (first + k < n) storeScalar<Hint>(p + first + k, v[k]);
}

/// Store v in striped order: p[k * BlockThreads + t] = v[k] where that index is < n. Every thread
/// of the block calls with the same p and n; each stores its own K elements.
template <int BlockThreads, int K, int Hint = StoreDefault, typename T>
WARPKIT_DEVICE void blockStoreStriped(T* p, const T (&v)[K], long long n) {
    WARPKIT_CHECK_TILE_SHAPE(BlockThreads, K, "blockStoreStriped");
    WARPKIT_CHECK_VECTOR_TYPE(T, "blockStoreStriped");
    const long long t = (long long)linearThreadId();
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const long long i = (long long)k * BlockThreads + t;
        if (i < n) storeScalar<Hint>(p + i, v[k]);
    }
}

/// Stage p[start - Halo .. start + Tile + Halo) in smem[0 .. Tile + 2 * Halo): smem[j] =
/// p[start - Halo + j], `fill` outside [0, n) (see the header comment for the map and when the
/// body takes 16-byte loads). Every thread of the block calls; no barrier inside: __syncthreads()
/// before reading the slots.
template <int BlockThreads, int Tile, int Halo, int Hint = LoadReadOnly, typename T>
WARPKIT_DEVICE void blockLoadTileHalo(T* smem, const T* p, long long n, long long start, T fill) {
    WARPKIT_CHECK_TILE_SHAPE(BlockThreads, 1, "blockLoadTileHalo");
    WARPKIT_CHECK_VECTOR_TYPE(T, "blockLoadTileHalo");
    static_assert(Tile >= 1, "blockLoadTileHalo: template parameter Tile (elements in the body) must be >= 1");
    static_assert(Halo >= 0, "blockLoadTileHalo: template parameter Halo must be >= 0");
    const int t = (int)linearThreadId();
    constexpr int V = vectorElems<T>();
    bool vec = (Tile * sizeof(T)) % 16 == 0 && start >= 0 && start + Tile <= n;
    vec = vec && (((size_t)(p + start) | (size_t)(smem + Halo)) & 15) == 0;
    if (vec) {
        // Up to 4 vectors a thread in flight: all loads of a batch are issued before its stores.
        constexpr int kVecs = Tile / V, kPer = (kVecs + BlockThreads - 1) / BlockThreads;
        constexpr int kBatch = kPer < 4 ? kPer : 4;
        for (int b = 0; b < kPer; b += kBatch) {
            Vector16<T> r[kBatch];
#pragma unroll
            for (int k = 0; k < kBatch; ++k) {
                const int i = t + (b + k) * BlockThreads;
                if (i < kVecs) r[k] = loadVector<Hint>(p + start + (long long)i * V);
            }
#pragma unroll
            for (int k = 0; k < kBatch; ++k) {
                const int i = t + (b + k) * BlockThreads;
                if (i < kVecs) storeVector(smem + Halo + i * V, r[k]);
            }
        }
    } else {
        for (int i = t; i < Tile; i += BlockThreads) {
            const long long e = start + i;
            smem[Halo + i] = e >= 0 && e < n ? loadScalar<Hint>(p + e) : fill;
        }
    }
    for (int j = t; j < 2 * Halo; j += BlockThreads) {
        const int slot = j < Halo ? j : Tile + j;
        const long long e = start - Halo + slot;
        smem[slot] = e >= 0 && e < n ? loadScalar<Hint>(p + e) : fill;
    }
}

} // namespace warpkit

#undef WARPKIT_CHECK_TILE_SHAPE
