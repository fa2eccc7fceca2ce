// warpkit/warp/topk.cuh: the order of top-k selection (keys) and the k largest or smallest of the
// values a warp holds, with their indices.
//
//   topkOrderKey(v)               32-bit key whose unsigned order is the value order (fp32/fp16/bf16)
//   topkPack(v, index, largest)   64-bit key: the value's rank first, the lower index first on ties
//   topkUnpackIndex(key), topkUnpackValue<T>(key, largest)
//   warpTopK<K>(v[K], index[K], largest, outValues[K], outIndex[K])   the warp's 32 K values, ranked
//
// The order. Values rank as numbers, with two additions that make it total: NaN (of any sign or
// payload) ranks above +inf, as in torch.topk, and -0.0 ranks just below +0.0. For the k largest,
// a larger value comes first; for the k smallest a smaller value comes first, so NaN comes last.
// Equal values come in index order (lowest index first), so the result is one fixed answer whatever
// order the values were visited in.
//
// Keys. topkOrderKey maps a value's bits b to b ^ 0x80000000 for a positive sign and ~b for a
// negative one (16-bit types first widened by a shift: the 16 bits on top), which orders keys as
// the values; every NaN maps to 0xffffffff. topkPack(v, i, largest) is
// (key << 32) | (0xffffffff - i), with key = ~key for the smallest: a larger packed key ranks
// first, and every packed key of an index below 0xffffffff is above 0, so 0 (kTopKEmpty) marks an
// empty slot. The value of a packed key is the key's inverse (bit exact, except that every NaN
// comes back as the canonical quiet NaN).
#pragma once

#include "sort.cuh"

namespace warpkit {

/// The packed key of an empty slot: below every packed key of a value.
constexpr unsigned long long kTopKEmpty = 0;
/// The index that marks an empty slot in warpTopK's index[] (and its rank after every value).
constexpr unsigned kTopKNoIndex = 0xffffffffu;

/// Compile-time check of the value types of top-k selection.
#define WARPKIT_CHECK_TOPK_TYPE(T, fn)                                                                         \
    static_assert(::warpkit::detail::IsSame<T, float>::value || ::warpkit::detail::IsSame<T, __half>::value || \
                      ::warpkit::detail::IsSame<T, __nv_bfloat16>::value,                                      \
                  fn ": value type T must be float, __half or __nv_bfloat16")

/// The 32-bit key of v: unsigned order of keys = the order of values (NaN above +inf, -0.0 just
/// below +0.0). Host or device; any thread calls it on its own.
template <typename T> WARPKIT_HD unsigned topkOrderKey(T v) {
    unsigned b;
    if constexpr (sizeof(T) == 4) {
        __builtin_memcpy(&b, &v, 4);
    } else {
        unsigned short h;
        __builtin_memcpy(&h, &v, 2);
        b = (unsigned)h << 16;
    }
    if (detail::isNaN(v)) return 0xffffffffu;
    return (b & 0x80000000u) ? ~b : (b ^ 0x80000000u);
}

/// The value of a 32-bit key (the inverse of topkOrderKey; NaN as the canonical quiet NaN). Host or
/// device; any thread calls it on its own.
template <typename T> WARPKIT_HD T topkKeyValue(unsigned key) {
    if (key == 0xffffffffu) return detail::quietNaN<T>();
    const unsigned b = (key & 0x80000000u) ? (key ^ 0x80000000u) : ~key;
    T v;
    if constexpr (sizeof(T) == 4) {
        __builtin_memcpy(&v, &b, 4);
    } else {
        const unsigned short h = (unsigned short)(b >> 16);
        __builtin_memcpy(&v, &h, 2);
    }
    return v;
}

namespace detail {
/// topkOrderKey(v), complemented for the smallest: the high word of topkPack's key. Host or device;
/// any thread calls it on its own.
template <typename T> WARPKIT_HD unsigned topkRankKey(T v, bool largest) {
    return largest ? topkOrderKey(v) : ~topkOrderKey(v);
}
/// topkPack's key from its high word (topkRankKey) and the index. Host or device; any thread, alone.
WARPKIT_HD unsigned long long topkPackRankKey(unsigned key, unsigned index) {
    return (unsigned long long)key << 32 | (0xffffffffu - index);
}
} // namespace detail

/// The packed 64-bit key of (v, index): larger packed keys rank first (see the header comment).
/// index < 0xffffffff. Host or device; any thread calls it on its own.
template <typename T> WARPKIT_HD unsigned long long topkPack(T v, unsigned index, bool largest) {
    return detail::topkPackRankKey(detail::topkRankKey(v, largest), index);
}

/// The index of a packed key. Host or device; any thread calls it on its own.
WARPKIT_HD unsigned topkUnpackIndex(unsigned long long packed) { return 0xffffffffu - (unsigned)packed; }

/// The value of a packed key made with the same `largest`. Host or device; any thread calls it on its own.
template <typename T> WARPKIT_HD T topkUnpackValue(unsigned long long packed, bool largest) {
    const unsigned key = (unsigned)(packed >> 32);
    return topkKeyValue<T>(largest ? key : ~key);
}

/// Ranks the warp's 32 * K values: value v[j] of lane l has index index[j] (distinct indices below
/// 0xffffffff; kTopKNoIndex marks an empty slot). On return lane l holds ranks l * K .. l * K + K - 1
/// in outValues / outIndex (rank 0: the largest value, or the smallest when !largest; equal values
/// in index order; empty slots rank last, with index kTopKNoIndex). The k largest are ranks 0 .. k-1,
/// i.e. lanes 0 .. (k-1)/K. K: a power of two, 1 .. 32. All 32 lanes call (converged); each lane gets
/// its own K ranks.
template <int K, typename T> WARPKIT_DEVICE void warpTopK(const T (&v)[K], const unsigned (&index)[K], bool largest,
                                                          T (&outValues)[K], unsigned (&outIndex)[K]) {
    WARPKIT_CHECK_TOPK_TYPE(T, "warpTopK");
    WARPKIT_CHECK_SORT_K(K, "warpTopK");
    unsigned long long keys[K];
#pragma unroll
    for (int j = 0; j < K; ++j) keys[j] = index[j] == kTopKNoIndex ? kTopKEmpty : topkPack(v[j], index[j], largest);
    warpBitonicSort<K, true>(keys);
#pragma unroll
    for (int j = 0; j < K; ++j) {
        outIndex[j] = keys[j] == kTopKEmpty ? kTopKNoIndex : topkUnpackIndex(keys[j]);
        outValues[j] = topkUnpackValue<T>(keys[j], largest);
    }
}

/// warpTopK of the values at indices lane * K + j, of which the first n count (n <= 32 * K; the
/// rest are empty). All 32 lanes call (converged); each lane gets its own K ranks.
template <int K, typename T>
WARPKIT_DEVICE void warpTopK(const T (&v)[K], int n, bool largest, T (&outValues)[K], unsigned (&outIndex)[K]) {
    unsigned index[K];
    const unsigned lane = laneId();
#pragma unroll
    for (int j = 0; j < K; ++j) index[j] = (int)(lane * K + j) < n ? lane * K + j : kTopKNoIndex;
    warpTopK<K>(v, index, largest, outValues, outIndex);
}

} // namespace warpkit
