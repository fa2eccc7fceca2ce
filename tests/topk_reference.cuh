// tests/topk_reference.cuh: the order of top-k selection, written for the host references of the
// top-k tests on its own (not from warpkit's keys): NaN above every number, -0.0 just below +0.0;
// ties are left to the caller (a stable sort keeps the lower index first).
#pragma once

#include <math.h>

/// True when value a ranks strictly before value b among the largest (largest) or the smallest.
static inline bool wk_ranks_before(double a, double b, bool largest) {
    const bool na = isnan(a), nb = isnan(b);
    if (na || nb) return largest ? (na && !nb) : (nb && !na);
    if (a == b && a == 0) return largest ? (!signbit(a) && signbit(b)) : (signbit(a) && !signbit(b));
    return largest ? a > b : a < b;
}
