// warpkit/detail/shfl.cuh: warp shuffles for any trivially copyable type.
// Internal: include a public header instead.
// 32-bit and smaller scalars map to one shuffle; 64-bit scalars to two; structs are moved as
// ceil(sizeof/4) 32-bit words, so a {float, int} pair costs two shuffles.
#pragma once

#include "lane.cuh"

namespace warpkit {
namespace detail {

enum ShflKind { ShflIdx, ShflUp, ShflDown, ShflXor };

template <ShflKind K> WARPKIT_DEVICE unsigned shflWord(unsigned mask, unsigned w, int arg, int width) {
    if constexpr (K == ShflIdx) return __shfl_sync(mask, w, arg, width);
    else if constexpr (K == ShflUp) return __shfl_up_sync(mask, w, (unsigned)arg, width);
    else if constexpr (K == ShflDown) return __shfl_down_sync(mask, w, (unsigned)arg, width);
    else return __shfl_xor_sync(mask, w, arg, width);
}

/// Shuffle any trivially copyable T. `arg` is the source lane (Idx), delta (Up/Down) or lane
/// mask (Xor); `width` is the shuffle's segment width (a power of two, 1..32).
template <ShflKind K, typename T>
WARPKIT_DEVICE T shfl(unsigned mask, T v, int arg, int width = 32) {
    static_assert(IsShufflable<T>::value, "warpkit: shuffled type T must be trivially copyable");
    if constexpr (sizeof(T) == 4) {
        unsigned w;
        __builtin_memcpy(&w, &v, 4);
        w = shflWord<K>(mask, w, arg, width);
        T r;
        __builtin_memcpy(&r, &w, 4);
        return r;
    } else if constexpr (sizeof(T) < 4) {
        unsigned w = 0;
        __builtin_memcpy(&w, &v, sizeof(T));
        w = shflWord<K>(mask, w, arg, width);
        T r;
        __builtin_memcpy(&r, &w, sizeof(T));
        return r;
    } else {
        constexpr int kWords = (int)((sizeof(T) + 3) / 4);
        unsigned w[kWords];
        w[kWords - 1] = 0;
        __builtin_memcpy(w, &v, sizeof(T));
#pragma unroll
        for (int i = 0; i < kWords; ++i) w[i] = shflWord<K>(mask, w[i], arg, width);
        T r;
        __builtin_memcpy(&r, w, sizeof(T));
        return r;
    }
}

/// mask ? a : b (mask 0 or ~0u) for any trivially copyable T, one lop3 per 32-bit word. The mux is
/// opaque to the compiler, which otherwise may turn many lane-dependent selects on one condition
/// into divergent branches, each with its own copy of the shuffles around them.
template <typename T> WARPKIT_DEVICE T muxWords(unsigned mask, T a, T b) {
    constexpr int W = (int)((sizeof(T) + 3) / 4);
    unsigned wa[W], wb[W], wr[W];
    wa[W - 1] = 0u;
    wb[W - 1] = 0u;
    __builtin_memcpy(wa, &a, sizeof(T));
    __builtin_memcpy(wb, &b, sizeof(T));
#pragma unroll
    for (int i = 0; i < W; ++i) asm("lop3.b32 %0, %1, %2, %3, 0xE4;" : "=r"(wr[i]) : "r"(wa[i]), "r"(wb[i]), "r"(mask));
    T r;
    __builtin_memcpy(&r, wr, sizeof(T));
    return r;
}

template <typename T> WARPKIT_DEVICE T shflIdx(T v, int src, int width = 32, unsigned mask = WARPKIT_FULL_MASK) {
    return shfl<ShflIdx>(mask, v, src, width);
}
template <typename T> WARPKIT_DEVICE T shflUp(T v, int delta, int width = 32, unsigned mask = WARPKIT_FULL_MASK) {
    return shfl<ShflUp>(mask, v, delta, width);
}
template <typename T> WARPKIT_DEVICE T shflDown(T v, int delta, int width = 32, unsigned mask = WARPKIT_FULL_MASK) {
    return shfl<ShflDown>(mask, v, delta, width);
}
template <typename T> WARPKIT_DEVICE T shflXor(T v, int laneMask, int width = 32, unsigned mask = WARPKIT_FULL_MASK) {
    return shfl<ShflXor>(mask, v, laneMask, width);
}

} // namespace detail
} // namespace warpkit
