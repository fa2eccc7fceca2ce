// tests/softmax_common.cuh: the double-precision softmax reference and row checks shared by
// tests/softmax.cu (the primitives) and tests/device/softmax.cu (rowSoftmax).
#pragma once

#include "common.cuh"
#include <warpkit/thread/softmax.cuh>
#include <vector>

// ---- reference ---------------------------------------------------------------------------------
/// Double-precision softmax of one row with PyTorch's rules (masked kinds: all -inf -> 0 / -inf).
static void ref_softmax(int kind, const double* x, int n, double* y) {
    bool nan = false, pinf = false, allninf = true;
    double m = -INFINITY;
    for (int i = 0; i < n; ++i) {
        if (isnan(x[i])) nan = true;
        else if (x[i] == INFINITY) pinf = true;
        if (!(x[i] == -INFINITY)) allninf = false;
        if (!isnan(x[i])) m = fmax(m, x[i]);
    }
    const bool log_ = kind & warpkit::SoftmaxLog, masked = kind & warpkit::SoftmaxMasked;
    if (nan || pinf || (allninf && !masked)) { for (int i = 0; i < n; ++i) y[i] = NAN; return; }
    if (allninf) { for (int i = 0; i < n; ++i) y[i] = log_ ? -INFINITY : 0.0; return; }
    double s = 0;
    for (int i = 0; i < n; ++i) s += exp(x[i] - m);
    for (int i = 0; i < n; ++i) y[i] = log_ ? x[i] - m - log(s) : exp(x[i] - m) / s;
}

/// got vs want: plain kinds relative (tol * want + abs floor), log kinds tol * (1 + |want|).
static bool close_out(int kind, double got, double want, double tol, double floor_) {
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    if (isnan(got) || isinf(got)) return false;
    if (kind & warpkit::SoftmaxLog) return fabs(got - want) <= tol * (1.0 + fabs(want));
    return fabs(got - want) <= tol * fabs(want) + floor_;
}
template <typename T> static double tol_of(void) { return sizeof(T) == 4 ? 1e-5 : 1e-2; }
template <typename T> static double floor_of(void) { return sizeof(T) == 4 ? 1e-37 : 1e-7; }

/// Fill one row: mode picks the pattern (random at several scales, NaN, +inf, all -inf, some -inf,
/// a first half of -inf).
template <typename T> static void fill_row(wk_rng* r, T* x, int n, int mode) {
    static const double scales[] = {1.0, 10.0, 100.0, 3e3};
    const double sc = scales[mode & 3];
    for (int i = 0; i < n; ++i) x[i] = wk_from_double<T>(wk_uniform(r, -sc, sc));
    switch (mode % 9) {
    case 4: x[wk_int(r, 0, n - 1)] = wk_from_double<T>(NAN); break;
    case 5: x[wk_int(r, 0, n - 1)] = wk_from_double<T>(INFINITY); break;
    case 6: for (int i = 0; i < n; ++i) x[i] = wk_from_double<T>(-INFINITY); break;
    case 7: for (int i = 0; i < n; i += 3) x[i] = wk_from_double<T>(-INFINITY); break;
    case 8: for (int i = 0; i < n / 2; ++i) x[i] = wk_from_double<T>(-INFINITY); break; // whole slices of -inf
    default: break;
    }
}

/// Check rows x cols outputs (row r at x + r * ldx, y + r * ldy) against the reference; also row
/// sums for plain kinds. Returns the number of mismatches (logs the first three).
template <typename T> static int check_rows_ld(const char* what, int kind, const T* x, long long ldx, const T* y,
                                               long long ldy, long long rows, int cols) {
    std::vector<double> xd(cols), yd(cols);
    const double tol = tol_of<T>(), fl = floor_of<T>();
    int bad = 0;
    for (long long r = 0; r < rows && bad < 3; ++r) {
        for (int c = 0; c < cols; ++c) xd[c] = wk_to_double(x[(size_t)r * ldx + c]);
        ref_softmax(kind, xd.data(), cols, yd.data());
        double sum = 0;
        bool finite = true;
        for (int c = 0; c < cols; ++c) {
            const double got = wk_to_double(y[(size_t)r * ldy + c]);
            sum += got;
            finite = finite && !isnan(yd[c]);
            if (!close_out(kind, got, yd[c], tol, fl) && bad++ < 3)
                cr_log_error("%s %s kind %d: %lld x %d row %lld col %d: got %.9g want %.9g (x %.9g)", what,
                             wk_type_name<T>(), kind, rows, cols, r, c, got, yd[c], xd[c]);
        }
        const bool zeros = (kind & warpkit::SoftmaxMasked) && yd[0] == 0.0;
        if (!(kind & warpkit::SoftmaxLog) && finite && !zeros && fabs(sum - 1.0) > tol * 2 && bad++ < 3)
            cr_log_error("%s %s: %lld x %d row %lld sums to %.9g", what, wk_type_name<T>(), rows, cols, r, sum);
    }
    return bad;
}

/// check_rows_ld for contiguous rows, as one expectation.
template <typename T>
static void check_rows(const char* what, int kind, const T* x, const T* y, int rows, int cols) {
    const int bad = check_rows_ld(what, kind, x, cols, y, cols, rows, cols);
    cr_expect(bad == 0, "%s %s kind %d (%d x %d): %d mismatches", what, wk_type_name<T>(), kind, rows, cols, bad);
}
