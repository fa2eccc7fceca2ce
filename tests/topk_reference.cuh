// tests/topk_reference.cuh: the order of top-k selection, written for the host references of the
// top-k tests on its own (not from warpkit's keys): NaN above every number, -0.0 just below +0.0;
// ties are left to the caller (a stable sort keeps the lower index first). wk_topk_draw: the
// warp and block tests' inputs, rich in NaN, infinities, signed zeros and ties.
#pragma once

#include "common.cuh"
#include <math.h>

/// True when value a ranks strictly before value b among the largest (largest) or the smallest.
static inline bool wk_ranks_before(double a, double b, bool largest) {
    const bool na = isnan(a), nb = isnan(b);
    if (na || nb) return largest ? (na && !nb) : (nb && !na);
    if (a == b && a == 0) return largest ? (!signbit(a) && signbit(b)) : (signbit(a) && !signbit(b));
    return largest ? a > b : a < b;
}

/// NaN, +inf, -inf, -0.0 and +0.0 one draw in `oneIn` each, else an integer in [-span, span].
static inline double wk_topk_draw(wk_rng* r, int oneIn, int span) {
    const long long u = wk_int(r, 0, oneIn - 1);
    return u == 0   ? NAN
           : u == 1 ? INFINITY
           : u == 2 ? -INFINITY
           : u == 3 ? -0.0
           : u == 4 ? 0.0
                    : (double)wk_int(r, -span, span);
}
