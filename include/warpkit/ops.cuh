// warpkit/ops.cuh: the binary operators warpkit's reductions and scans use.
//
// Each operator is a plain struct with a call operator that runs on host and device, so you can
// pass it to the generic forms (warpReduce, blockReduce, warpInclusiveScan, ...) and test it on
// the CPU. Any callable `T op(T, T)` works in those generic forms; it must be associative.
// It need not be commutative: warpkit always combines a lower-lane value on the left.
//
// NaN rules (as torch.max / torch.min): Max and Min propagate NaN. If either operand is NaN the
// result is NaN (a canonical quiet NaN), so a segment holding a NaN reduces to NaN. Plain
// fmaxf/fminf would silently drop it. +inf and -inf order as usual.
#pragma once

#include "detail/types.cuh"

namespace warpkit {
namespace detail {

template <typename T> WARPKIT_HD T maxNaN(T a, T b) {
    if constexpr (!Arith<T>::is_float) {
        return a < b ? b : a;
    } else if constexpr (IsSame<T, float>::value) {
#if WARPKIT_ARCH >= 800
        float r;
        asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
        return r;
#else
        return (a != a || b != b) ? __builtin_nanf("") : fmaxf(a, b);
#endif
    } else if constexpr (IsSame<T, double>::value) {
        return (a != a || b != b) ? __builtin_nan("") : fmax(a, b);
    } else {
        return Arith<T>::from_acc(maxNaN(Arith<T>::to_acc(a), Arith<T>::to_acc(b)));
    }
}

template <typename T> WARPKIT_HD T minNaN(T a, T b) {
    if constexpr (!Arith<T>::is_float) {
        return b < a ? b : a;
    } else if constexpr (IsSame<T, float>::value) {
#if WARPKIT_ARCH >= 800
        float r;
        asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
        return r;
#else
        return (a != a || b != b) ? __builtin_nanf("") : fminf(a, b);
#endif
    } else if constexpr (IsSame<T, double>::value) {
        return (a != a || b != b) ? __builtin_nan("") : fmin(a, b);
    } else {
        return Arith<T>::from_acc(minNaN(Arith<T>::to_acc(a), Arith<T>::to_acc(b)));
    }
}

} // namespace detail

/// a + b. For __half and __nv_bfloat16 the sum is formed in float and rounded once.
struct Sum {
    template <typename T> WARPKIT_HD T operator()(T a, T b) const {
        if constexpr (detail::Arith<T>::supported && !detail::IsSame<typename detail::Arith<T>::Acc, T>::value)
            return detail::Arith<T>::from_acc(detail::Arith<T>::to_acc(a) + detail::Arith<T>::to_acc(b));
        else
            return a + b;
    }
};

/// Larger of a and b; NaN if either is NaN.
struct Max {
    template <typename T> WARPKIT_HD T operator()(T a, T b) const { return detail::maxNaN(a, b); }
};

/// Smaller of a and b; NaN if either is NaN.
struct Min {
    template <typename T> WARPKIT_HD T operator()(T a, T b) const { return detail::minNaN(a, b); }
};

/// A value with the index it came from: the element type of argmax / argmin reductions.
template <typename T> struct ValueIndex {
    T value;
    int index;
};

/// Pairs with the larger value win. NaN counts as larger than every number (as torch.argmax).
/// Ties (equal values, or two NaNs) go to the lower index, so the result is the first maximum.
struct ArgMax {
    template <typename T> WARPKIT_HD ValueIndex<T> operator()(ValueIndex<T> a, ValueIndex<T> b) const {
        auto x = detail::Arith<T>::to_acc(a.value);
        auto y = detail::Arith<T>::to_acc(b.value);
        bool xn = detail::isNaN(a.value), yn = detail::isNaN(b.value);
        bool a_wins = xn ? (!yn || a.index < b.index)
                         : (!yn && (x > y || (x == y && a.index < b.index)));
        return a_wins ? a : b;
    }
};

/// Pairs with the smaller value win. NaN counts as smaller than every number (as torch.argmin:
/// a NaN is returned first). Ties go to the lower index, so the result is the first minimum.
struct ArgMin {
    template <typename T> WARPKIT_HD ValueIndex<T> operator()(ValueIndex<T> a, ValueIndex<T> b) const {
        auto x = detail::Arith<T>::to_acc(a.value);
        auto y = detail::Arith<T>::to_acc(b.value);
        bool xn = detail::isNaN(a.value), yn = detail::isNaN(b.value);
        bool a_wins = xn ? (!yn || a.index < b.index)
                         : (!yn && (x < y || (x == y && a.index < b.index)));
        return a_wins ? a : b;
    }
};

namespace detail {
/// Identity element of the built-in operators, in the accumulation type.
template <typename Op, typename T> struct Identity;
template <typename T> struct Identity<Sum, T> {
    static WARPKIT_HD T value() {
        if constexpr (Arith<T>::is_float) return T(-0.0f); // x + (-0) == x, also for x == -0
        else return T(0);
    }
};
template <typename T> struct Identity<Max, T> { static WARPKIT_HD T value() { return Arith<T>::lowest(); } };
template <typename T> struct Identity<Min, T> { static WARPKIT_HD T value() { return Arith<T>::highest(); } };
} // namespace detail

} // namespace warpkit
