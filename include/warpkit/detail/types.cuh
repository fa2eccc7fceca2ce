// warpkit/detail/types.cuh: type traits and numeric helpers (no STL).
// Internal: include a public header instead.
#pragma once

#include <cuda_fp16.h>
#include <cuda_bf16.h>

#include "config.cuh"

namespace warpkit {
namespace detail {

template <typename A, typename B> struct IsSame { static constexpr bool value = false; };
template <typename A> struct IsSame<A, A> { static constexpr bool value = true; };

/// X in a position where a template argument is not deduced (a parameter that takes its type
/// from another one, so that a literal such as 0 converts).
template <typename X> struct NonDeduced { using type = X; };

template <typename T> struct RemoveCV { using type = T; };
template <typename T> struct RemoveCV<const T> { using type = T; };
template <typename T> struct RemoveCV<volatile T> { using type = T; };
template <typename T> struct RemoveCV<const volatile T> { using type = T; };

/// True for types the shuffle helpers can move: trivially copyable, not a reference; also the
/// packed 16-bit pairs, which CUDA 13 made not trivially copyable (a user-provided copy
/// constructor that copies the 32 bits), so they are accepted by name.
template <typename T> struct IsShufflable {
    static constexpr bool value = __is_trivially_copyable(T);
};
template <> struct IsShufflable<__half2> { static constexpr bool value = true; };
template <> struct IsShufflable<__nv_bfloat162> { static constexpr bool value = true; };

/// Packed pairs of 16-bit floats (__half2, __nv_bfloat162): reduced and scanned lane-wise (.x with
/// .x, .y with .y), in float2 by the precise forms. `Scalar` is the type of one half.
template <typename T> struct Packed16 { static constexpr bool value = false; };
template <> struct Packed16<__half2> {
    static constexpr bool value = true;
    using Scalar = __half;
    static WARPKIT_HD float2 to_acc(__half2 v) { return __half22float2(v); }
    static WARPKIT_HD __half2 from_acc(float2 v) { return __float22half2_rn(v); }
};
template <> struct Packed16<__nv_bfloat162> {
    static constexpr bool value = true;
    using Scalar = __nv_bfloat16;
    // Element by element: CUDA 12.0/12.1 declare the pair conversions for sm_80+ only.
    static WARPKIT_HD float2 to_acc(__nv_bfloat162 v) {
        return make_float2(__bfloat162float(v.x), __bfloat162float(v.y));
    }
    static WARPKIT_HD __nv_bfloat162 from_acc(float2 v) {
        return __nv_bfloat162(__float2bfloat16_rn(v.x), __float2bfloat16_rn(v.y));
    }
};

/// Arithmetic traits of the element types the built-in operators accept.
/// `Acc` is the type arithmetic happens in (float for the 16-bit floats).
template <typename T> struct Arith {
    static constexpr bool supported = false;
    static constexpr bool is_float = false;
    using Acc = T;
};

#define WARPKIT_DETAIL_INT_ARITH(T, LO, HI)                                               \
    template <> struct Arith<T> {                                                         \
        static constexpr bool supported = true;                                           \
        static constexpr bool is_float = false;                                           \
        using Acc = T;                                                                    \
        static WARPKIT_HD T lowest() { return LO; }                                       \
        static WARPKIT_HD T highest() { return HI; }                                      \
        static WARPKIT_HD Acc to_acc(T v) { return v; }                                   \
        static WARPKIT_HD T from_acc(Acc v) { return v; }                                 \
    };
WARPKIT_DETAIL_INT_ARITH(int, (-2147483647 - 1), 2147483647)
WARPKIT_DETAIL_INT_ARITH(unsigned, 0u, 0xffffffffu)
WARPKIT_DETAIL_INT_ARITH(long long, (-9223372036854775807LL - 1), 9223372036854775807LL)
WARPKIT_DETAIL_INT_ARITH(unsigned long long, 0ull, 0xffffffffffffffffull)
#undef WARPKIT_DETAIL_INT_ARITH

template <> struct Arith<float> {
    static constexpr bool supported = true;
    static constexpr bool is_float = true;
    using Acc = float;
    static WARPKIT_HD float lowest() { return -__builtin_huge_valf(); }
    static WARPKIT_HD float highest() { return __builtin_huge_valf(); }
    static WARPKIT_HD float to_acc(float v) { return v; }
    static WARPKIT_HD float from_acc(float v) { return v; }
};
template <> struct Arith<double> {
    static constexpr bool supported = true;
    static constexpr bool is_float = true;
    using Acc = double;
    static WARPKIT_HD double lowest() { return -__builtin_huge_val(); }
    static WARPKIT_HD double highest() { return __builtin_huge_val(); }
    static WARPKIT_HD double to_acc(double v) { return v; }
    static WARPKIT_HD double from_acc(double v) { return v; }
};
template <> struct Arith<__half> {
    static constexpr bool supported = true;
    static constexpr bool is_float = true;
    using Acc = float;
    static WARPKIT_HD float lowest() { return -__builtin_huge_valf(); }
    static WARPKIT_HD float highest() { return __builtin_huge_valf(); }
    static WARPKIT_HD float to_acc(__half v) { return __half2float(v); }
    static WARPKIT_HD __half from_acc(float v) { return __float2half_rn(v); }
};
template <> struct Arith<__nv_bfloat16> {
    static constexpr bool supported = true;
    static constexpr bool is_float = true;
    using Acc = float;
    static WARPKIT_HD float lowest() { return -__builtin_huge_valf(); }
    static WARPKIT_HD float highest() { return __builtin_huge_valf(); }
    static WARPKIT_HD float to_acc(__nv_bfloat16 v) { return __bfloat162float(v); }
    static WARPKIT_HD __nv_bfloat16 from_acc(float v) { return __float2bfloat16_rn(v); }
};

/// NaN test that works for every supported type on host and device (false for integers).
template <typename T> WARPKIT_HD bool isNaN(T v) {
    if constexpr (Arith<T>::is_float) {
        auto a = Arith<T>::to_acc(v);
        return a != a;
    } else {
        return false;
    }
}

/// Canonical quiet NaN in type T (floats only).
template <typename T> WARPKIT_HD T quietNaN() {
    if constexpr (IsSame<T, double>::value) {
        return __builtin_nan("");
    } else {
        return Arith<T>::from_acc(__builtin_nanf(""));
    }
}

} // namespace detail
} // namespace warpkit

/// Readable compile-time error for an element type the built-in operators do not accept.
#define WARPKIT_CHECK_ARITH_TYPE(T, fn)                                                          \
    static_assert(::warpkit::detail::Arith<T>::supported,                                        \
                  fn ": element type T must be int, unsigned, long long, unsigned long "         \
                     "long, float, double, __half or __nv_bfloat16 (__half2 and __nv_bfloat162 " \
                     "where the function lists them; for other types use the generic form "      \
                     "with your own operator)")

/// Readable compile-time error for a type that cannot be moved through shuffles.
#define WARPKIT_CHECK_SHUFFLABLE(T, fn)                                                   \
    static_assert(::warpkit::detail::IsShufflable<T>::value,                              \
                  fn ": value type T must be trivially copyable (a plain struct or scalar)")
