// Host tests of include/warpkit/ops.cuh: the operators run on the CPU too, so their NaN, inf,
// signed and tie-breaking rules are checked here without a GPU.
#include "common.cuh"
#include <warpkit/ops.cuh>

using warpkit::ValueIndex;

template <typename T> static void check_max_min_nan(void) {
    const T nan = warpkit::detail::quietNaN<T>();
    const T one = wk_from_double<T>(1.0), two = wk_from_double<T>(2.0);
    const T inf = wk_from_double<T>(INFINITY), ninf = wk_from_double<T>(-INFINITY);
    warpkit::Max mx;
    warpkit::Min mn;
    cr_expect(isnan(wk_to_double(mx(nan, one))), "%s: Max(NaN, 1) must be NaN", wk_type_name<T>());
    cr_expect(isnan(wk_to_double(mx(one, nan))), "%s: Max(1, NaN) must be NaN", wk_type_name<T>());
    cr_expect(isnan(wk_to_double(mn(nan, one))), "%s: Min(NaN, 1) must be NaN", wk_type_name<T>());
    cr_expect(isnan(wk_to_double(mn(one, nan))), "%s: Min(1, NaN) must be NaN", wk_type_name<T>());
    cr_expect(isnan(wk_to_double(mx(nan, inf))), "%s: Max(NaN, inf) must be NaN", wk_type_name<T>());
    cr_expect(wk_to_double(mx(one, two)) == 2.0 && wk_to_double(mx(two, one)) == 2.0, "%s: Max", wk_type_name<T>());
    cr_expect(wk_to_double(mn(one, two)) == 1.0 && wk_to_double(mn(two, one)) == 1.0, "%s: Min", wk_type_name<T>());
    cr_expect(wk_to_double(mx(ninf, inf)) == INFINITY && wk_to_double(mn(ninf, inf)) == -INFINITY, "%s: inf",
              wk_type_name<T>());
    cr_expect(wk_to_double(mx(ninf, ninf)) == -INFINITY, "%s: Max(-inf, -inf)", wk_type_name<T>());
    cr_expect(isnan(wk_to_double(warpkit::Sum{}(inf, ninf))), "%s: inf + -inf must be NaN", wk_type_name<T>());
}

Test(ops, max_min_propagate_nan) {
    check_max_min_nan<float>();
    check_max_min_nan<double>();
    check_max_min_nan<__half>();
    check_max_min_nan<__nv_bfloat16>();
}

template <typename T> static void check_int_ops(T lo, T hi) {
    cr_expect(warpkit::Max{}(lo, hi) == hi && warpkit::Min{}(lo, hi) == lo, "%s: extremes", wk_type_name<T>());
    cr_expect((warpkit::detail::Identity<warpkit::Max, T>::value() == lo), "%s: Max identity", wk_type_name<T>());
    cr_expect((warpkit::detail::Identity<warpkit::Min, T>::value() == hi), "%s: Min identity", wk_type_name<T>());
    cr_expect(warpkit::Sum{}(T(3), T(4)) == T(7), "%s: Sum", wk_type_name<T>());
}

Test(ops, integer_limits_and_identities) {
    check_int_ops<int>(-2147483647 - 1, 2147483647);
    check_int_ops<unsigned>(0u, 0xffffffffu);
    check_int_ops<long long>(-9223372036854775807LL - 1, 9223372036854775807LL);
    check_int_ops<unsigned long long>(0ull, ~0ull);
}

Test(ops, sum_identity_keeps_negative_zero) {
    float z = warpkit::Sum{}(-0.0f, (warpkit::detail::Identity<warpkit::Sum, float>::value()));
    cr_expect(signbit(z), "-0 + identity must stay -0");
}

template <typename T> static void check_arg(void) {
    const T nan = warpkit::detail::quietNaN<T>();
    typedef ValueIndex<T> VI;
    VI a = {wk_from_double<T>(5.0), 7}, b = {wk_from_double<T>(5.0), 3}, c = {wk_from_double<T>(9.0), 9};
    VI n1 = {nan, 12}, n2 = {nan, 4};
    warpkit::ArgMax am;
    warpkit::ArgMin an;
    cr_expect(am(a, b).index == 3 && am(b, a).index == 3, "%s: ArgMax tie goes to the lower index", wk_type_name<T>());
    cr_expect(an(a, b).index == 3 && an(b, a).index == 3, "%s: ArgMin tie goes to the lower index", wk_type_name<T>());
    cr_expect(am(a, c).index == 9 && am(c, a).index == 9, "%s: ArgMax picks the larger", wk_type_name<T>());
    cr_expect(an(a, c).index == 7 && an(c, a).index == 7, "%s: ArgMin picks the smaller", wk_type_name<T>());
    cr_expect(am(c, n1).index == 12 && am(n1, c).index == 12, "%s: ArgMax: NaN wins", wk_type_name<T>());
    cr_expect(an(c, n1).index == 12 && an(n1, c).index == 12, "%s: ArgMin: NaN wins", wk_type_name<T>());
    cr_expect(am(n1, n2).index == 4 && am(n2, n1).index == 4, "%s: ArgMax: first NaN", wk_type_name<T>());
}

Test(ops, argmax_argmin_ties_and_nan) {
    check_arg<float>();
    check_arg<double>();
    check_arg<__half>();
    check_arg<__nv_bfloat16>();
    typedef ValueIndex<int> VI;
    VI a = {-4, 2}, b = {-4, 1};
    cr_expect(warpkit::ArgMax{}(a, b).index == 1 && warpkit::ArgMin{}(b, a).index == 1, "int ties");
}
