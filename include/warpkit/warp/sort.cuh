// warpkit/warp/sort.cuh: bitonic sort and merge of 32 * K values held by a warp, K a lane.
//
//   warpBitonicSort<K[, Descending]>(keys[K])                 sort the warp's 32 * K keys
//   warpBitonicSortPairs<K[, Descending]>(keys[K], values[K]) the same, each value moving with its key
//   warpBitonicMerge<K[, Descending]>(keys[K])                sort a bitonic sequence (one merge)
//   warpBitonicMergePairs<K[, Descending]>(keys[K], values[K])
//
// Layout ("blocked"): element e = lane * K + j is keys[j] of lane `lane`. After a sort, lane 0 holds
// the first K elements in order, lane 1 the next K, and so on; ascending by default, descending
// with Descending = true.
//
// K: a power of two, 1 .. 32 (32 * K = 32 .. 1024 elements a warp); the keys stay in registers.
// Key: any type with operator< that is a strict weak order (unsigned, int, float without NaN, a
// packed 64-bit key); Value: any trivially copyable type. The network is not stable: keys that
// compare equal may come out in any order, and their values with them. For a deterministic order
// make keys unique, e.g. pack (key, index) into one 64-bit word (warp/topk.cuh's topkPack).
//
// How it works. The bitonic network on 32 * K elements: log2(32K) * (log2(32K) + 1) / 2 stages
// of compare-exchanges at distance d. Stages with d < K exchange registers of one lane (no
// shuffle); stages with d >= K pair lane l with lane l ^ (d / K), each keeping the lower or the
// higher of its own key and its partner's (one shuffle a key, two for a 64-bit one).
//
// Participation: all 32 lanes of the warp call together (converged); each lane gets its own K
// elements of the result.
#pragma once

#include "../detail/shfl.cuh"

/// Compile-time check of the keys a lane holds in the warp sorts.
#define WARPKIT_CHECK_SORT_K(K, fn)                              \
    static_assert((K) >= 1 && (K) <= 32 && ((K) & ((K)-1)) == 0, \
                  fn ": template parameter K (keys a lane) must be a power of two, 1 .. 32")

namespace warpkit {
namespace detail {

/// True when a comes strictly before b in the sort's order.
template <bool Descending, typename Key> WARPKIT_DEVICE bool sortsBefore(const Key& a, const Key& b) {
    if constexpr (Descending) return b < a;
    else return a < b;
}

/// A compile-time loop: f(IntConst<J>{}) for J = Begin .. End-1, so that register indices are
/// constants whatever the unroller decides (a runtime index would put the array in local memory).
template <int J> struct IntConst { static constexpr int value = J; };
template <int Begin, int End, typename F> WARPKIT_DEVICE void staticFor(F&& f) {
    if constexpr (Begin < End) {
        f(IntConst<Begin>{});
        staticFor<Begin + 1, End>(f);
    }
}

/// One stage of the bitonic network: compare-exchange at distance Stride inside runs of Size
/// (runs whose first element e has e & Size == 0 go in the sort's order, the others reversed).
/// HasValues: values[] move with keys[] (else values is an unused dummy).
template <int K, bool Descending, bool HasValues, int Size, int Stride, typename Key, typename Value>
WARPKIT_DEVICE void bitonicStage(Key (&keys)[K], Value (&values)[K], unsigned lane) {
    if constexpr (Stride < K) {
        staticFor<0, K>([&](auto jc) {
            constexpr int j = decltype(jc)::value, p = j | Stride;
            if constexpr ((j & Stride) == 0) {
                const bool inOrder = ((lane * K + j) & Size) == 0;
                const bool swap =
                    inOrder ? sortsBefore<Descending>(keys[p], keys[j]) : sortsBefore<Descending>(keys[j], keys[p]);
                if (swap) {
                    const Key t = keys[j];
                    keys[j] = keys[p];
                    keys[p] = t;
                    if constexpr (HasValues) {
                        const Value u = values[j];
                        values[j] = values[p];
                        values[p] = u;
                    }
                }
            }
        });
    } else {
        staticFor<0, K>([&](auto jc) {
            constexpr int j = decltype(jc)::value;
            const Key other = shflXor(keys[j], Stride / K);
            const unsigned e = lane * K + j;
            // The lower element of an in-order pair keeps the one that comes first.
            const bool keepFirst = ((e & Size) == 0) == ((e & Stride) == 0);
            const bool take =
                keepFirst ? sortsBefore<Descending>(other, keys[j]) : sortsBefore<Descending>(keys[j], other);
            if constexpr (HasValues) {
                const Value otherValue = shflXor(values[j], Stride / K);
                if (take) values[j] = otherValue;
            }
            if (take) keys[j] = other;
        });
    }
}

/// The stages of runs Size .. N, from distance Stride down (all compile-time).
template <int K, bool Descending, bool HasValues, int Size, int Stride, typename Key, typename Value>
WARPKIT_DEVICE void bitonicStages(Key (&keys)[K], Value (&values)[K], unsigned lane) {
    constexpr int N = 32 * K;
    bitonicStage<K, Descending, HasValues, (Size == N ? 2 * N : Size), Stride>(keys, values, lane);
    if constexpr (Stride > 1) bitonicStages<K, Descending, HasValues, Size, Stride / 2>(keys, values, lane);
    else if constexpr (Size < N) bitonicStages<K, Descending, HasValues, 2 * Size, Size>(keys, values, lane);
}

/// The whole network (Merge: only its last phase, which sorts a bitonic sequence).
template <int K, bool Descending, bool Merge, bool HasValues, typename Key, typename Value>
WARPKIT_DEVICE void warpBitonic(Key (&keys)[K], Value (&values)[K]) {
    constexpr int N = 32 * K;
    if constexpr (Merge) bitonicStages<K, Descending, HasValues, N, N / 2>(keys, values, laneId());
    else bitonicStages<K, Descending, HasValues, 2, 1>(keys, values, laneId());
}

} // namespace detail

/// Sorts the warp's 32 * K keys (ascending, or descending with Descending = true); after the call
/// lane l holds elements l * K .. l * K + K - 1 of the sorted sequence in keys[0 .. K). Not stable.
/// All 32 lanes call (converged); each lane gets its own K keys.
template <int K, bool Descending = false, typename Key> WARPKIT_DEVICE void warpBitonicSort(Key (&keys)[K]) {
    WARPKIT_CHECK_SORT_K(K, "warpBitonicSort");
    WARPKIT_CHECK_SHUFFLABLE(Key, "warpBitonicSort");
    unsigned char none[K];
    detail::warpBitonic<K, Descending, false, false>(keys, none);
}

/// As warpBitonicSort, with values[j] moving with keys[j]. All 32 lanes call (converged); each lane
/// gets its own K keys and their values.
template <int K, bool Descending = false, typename Key, typename Value>
WARPKIT_DEVICE void warpBitonicSortPairs(Key (&keys)[K], Value (&values)[K]) {
    WARPKIT_CHECK_SORT_K(K, "warpBitonicSortPairs");
    WARPKIT_CHECK_SHUFFLABLE(Key, "warpBitonicSortPairs");
    WARPKIT_CHECK_SHUFFLABLE(Value, "warpBitonicSortPairs");
    detail::warpBitonic<K, Descending, false, true>(keys, values);
}

/// Sorts a bitonic sequence of 32 * K keys (one that rises then falls, or falls then rises, e.g.
/// an ascending run of 16 K followed by a descending one: two sorted lists, the second reversed)
/// in log2(32 K) stages. All 32 lanes call (converged); each lane gets its own K keys.
template <int K, bool Descending = false, typename Key> WARPKIT_DEVICE void warpBitonicMerge(Key (&keys)[K]) {
    WARPKIT_CHECK_SORT_K(K, "warpBitonicMerge");
    WARPKIT_CHECK_SHUFFLABLE(Key, "warpBitonicMerge");
    unsigned char none[K];
    detail::warpBitonic<K, Descending, true, false>(keys, none);
}

/// As warpBitonicMerge, with values[j] moving with keys[j]. All 32 lanes call (converged); each lane
/// gets its own K keys and their values.
template <int K, bool Descending = false, typename Key, typename Value>
WARPKIT_DEVICE void warpBitonicMergePairs(Key (&keys)[K], Value (&values)[K]) {
    WARPKIT_CHECK_SORT_K(K, "warpBitonicMergePairs");
    WARPKIT_CHECK_SHUFFLABLE(Key, "warpBitonicMergePairs");
    WARPKIT_CHECK_SHUFFLABLE(Value, "warpBitonicMergePairs");
    detail::warpBitonic<K, Descending, true, true>(keys, values);
}

} // namespace warpkit
