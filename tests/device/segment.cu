// Tests of include/warpkit/device/segment.cuh: segmentReduce (Sum/Max/Min, ArgMax/ArgMin, the
// generic form), segmentLogSumExp, segmentSoftmax (plain, log) and segmentSoftmaxBackward, against
// double-precision host references on seeded data.
//   * distributions (scaled down from the bench's): uniform mean 1, 4, 32, 256, 4096; power-law
//     (Zipf-like, one segment of 300000 rows: many chunks); one giant among 20000 empty ones;
//     lengths 0, 1, 31, 32, 33 and both sides of every path boundary (lane-group widths, the
//     long-segment limit of each plan, whole chunks); decreasing CSR offsets (empty segments);
//   * int and long long offsets, CSR and begin/end arrays; heads 1, 2, 3, 4, 8, 16, 17; fp32, fp16, bf16;
//     pointers one element off alignment; NaN, +-inf and all -inf segments (all four softmax kinds);
//   * outputs poisoned first: rows in no segment, and empty segments' softmax rows, stay poisoned;
//   * same bits on every call, from two streams at once, and for overlapping long segments that
//     run on the chunk kernels or (no room left in the workspace) on single warps; long one-head
//     segments at every 4-byte misalignment (the staged chunk kernel) give the same bits; rule G6's
//     direct pairs (a block a pair) in double, long long and __half, and the same bits as listed;
//   * rule G1's warp steps of fewer than 32 pairs (few segments of 200-300 rows): the same bits as
//     with steps of 32 pairs and other lane positions;
//   * more listed chunks than the chunk kernels' blocks (each block takes several); tiny segments
//     at every misalignment; a call of only empty segments;
//   * 64-bit offsets past 2^31 through a virtual base (the data pointer moved back by 2^31 + 5
//     elements: the addresses are never formed outside the real rows, which the clipping proves);
//   * the flat pass (rule G5): tiles spanned, empty runs, offsets going back (also on grids of 1-3
//     blocks, each then taking many tiles in turn), several grid shapes; the softmax's (G7): the
//     same, segments ending on both sides of every kind of tile boundary, past 256 tiles, all
//     four kinds with all -inf segments, in place (the group kernels) with good and bad offsets;
//   * the softmax's block and slice tiers: lengths around their limits, heads 1 to 17, y at another
//     alignment than x and in place with the same bits, nothing written on either side of y's run;
//     one giant segment among empty ones, NaN / +inf in one head of a long segment;
//   * rule G8 (2, 4, 8, 16 heads by segments, a row a vector): every distribution, x off a row's
//     alignment (the group kernel) or within it, in place with the same bits;
//   * rule G9 (a lane a segment): lengths around its lanes', warps' and chunks' limits among short
//     segments, every type and reduction, offsets going back, the same bits at any alignment and
//     for overlapping copies past the workspace's room;
//   * the workspace at base + 1, 3, 8, 15 (rules G1, G2, G5-G9): the bits of an aligned one;
//   * bad arguments (host only, pass without a GPU): cudaErrorInvalidValue, nothing written.
#include "../common.cuh"
#include <warpkit/device/segment.cuh>
#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

using warpkit::detail::Arith;

// ---- inputs ------------------------------------------------------------------------------------
/// CSR offsets (segments + 1) for a named distribution, scaled to about `total` rows.
static std::vector<long long> distribution(int which, long long total, wk_rng* r) {
    std::vector<long long> len;
    auto uniform = [&](long long mean) {
        for (long long t = 0; t < total;) {
            const long long l = mean == 1 ? wk_int(r, 0, 2) : wk_int(r, 0, 2 * mean);
            len.push_back(l);
            t += l;
        }
    };
    switch (which) {
    case 0:
        uniform(1);
        break;
    case 1:
        uniform(4);
        break;
    case 2:
        uniform(32);
        break;
    case 3:
        uniform(256);
        break;
    case 4:
        uniform(4096);
        break;
    case 5: // power-law: lengths ~ 1 / u^1.3, one of 300000 rows
        len.push_back(300000);
        for (long long t = 300000; t < total + 300000;) {
            const double u = wk_uniform(r, 1e-4, 1.0);
            const long long l = (long long)(pow(u, -1.3)) - 1;
            len.push_back(l);
            t += l;
        }
        break;
    case 6: // one giant among 20000 empty segments
        for (int i = 0; i < 20000; ++i) len.push_back(i == 12345 ? total : 0);
        break;
    default: { // every boundary length, both sides (8: each followed by 3 empty segments, so the mean
               // length stays below 2048 and the plan is G1, not G6)
        const long long b[] = {0,    1,    2,    3,    4,    5,    7,     8,     9,     15,    16,    17,   31,   32,
                               33,   63,   64,   65,   127,  128,  129,   255,   256,   257,   1023,  1024, 1025, 2048,
                               4095, 4096, 4097, 8191, 8192, 8193, 16383, 16384, 16385, 32768, 32769, 49153};
        for (int rep = 0; rep < 3; ++rep)
            for (long long l : b) {
                len.push_back(l);
                for (int k = 0; k < (which == 8 ? 3 : 0); ++k) len.push_back(0);
            }
        break;
    }
    }
    std::vector<long long> off(len.size() + 1, 0);
    for (size_t i = 0; i < len.size(); ++i) off[i + 1] = off[i] + len[i];
    return off;
}
static const char* kDistName[] = {
    "mean1", "mean4", "mean32", "mean256", "mean4096", "powerlaw", "giant", "boundaries", "boundaries among empty"};

template <typename T> static T pick(wk_rng* r, bool specials) {
    double x = wk_uniform(r, -4.0, 4.0);
    if (specials) {
        const long long k = wk_int(r, 0, 199);
        if (k == 0) x = NAN;
        else if (k == 1) x = INFINITY;
        else if (k < 12) x = -INFINITY;
        else if (k < 14) x = k == 12 ? -0.0 : 0.0; // ArgMax / ArgMin: equal, the first zero wins
    }
    return wk_from_double<T>(x);
}

/// Workspace of the size the call asks for, filled with garbage.
template <typename F> static void* workspace(F call, size_t* bytes) {
    *bytes = 0;
    WK_CUDA(call(nullptr, bytes));
    cr_assert(*bytes >= 1, "the size query asked for 0 bytes");
    void* w = NULL;
    WK_CUDA(cudaMalloc(&w, *bytes));
    WK_CUDA(cudaMemset(w, 0x7b, *bytes));
    return w;
}

// ---- host references -----------------------------------------------------------------------------
struct Seg {
    long long b, n;
};
static Seg clip(long long b, long long e, long long items) {
    b = std::max(0LL, std::min(b, items));
    e = std::max(0LL, std::min(e, items));
    return Seg{b, e > b ? e - b : 0};
}

/// Softmax-family reference of one (segment, head): the outputs (kind 0 plain, 1 log) and lse.
static void ref_softmax(const std::vector<double>& x, int kind, std::vector<double>* y, double* lse) {
    double m = -INFINITY;
    bool nan = false, pinf = false;
    for (double v : x) {
        nan |= isnan(v);
        pinf |= v == INFINITY;
        if (v > m) m = v;
    }
    y->assign(x.size(), NAN);
    if (nan) {
        *lse = NAN;
        return;
    }
    if (pinf) {
        *lse = INFINITY;
        return;
    }
    if (m == -INFINITY) {
        *lse = -INFINITY;
        return;
    }
    double s = 0;
    for (double v : x) s += exp(v - m);
    *lse = m + log(s);
    for (size_t i = 0; i < x.size(); ++i) (*y)[i] = kind == 0 ? exp(x[i] - m) / s : x[i] - m - log(s);
}

template <typename T> static double out_tol(void) { return sizeof(T) == 4 ? 2e-5 : 2.5 * wk_eps<T>(); }

/// x rounded to T (round to nearest even: past __half's 65504 + 16, to inf).
template <typename T> static double round_to(double x) { return wk_to_double(wk_from_double<T>(x)); }

/// An output of type T against its double reference. The library computes in float and rounds
/// once to T, so a finite reference past T's range is right as inf (a log-softmax gradient of
/// -112477 is -inf in __half). Both finite: wk_close. Otherwise got must lie between the
/// reference moved by out_tol<T>() relative either way, each end rounded to T: inf where the
/// reference is clearly past the range, the largest finite value or inf where it is within that
/// of T's overflow threshold, and never inf for a reference clearly inside the range.
template <typename T> static bool out_close(double got, double want, double tol) {
    if (isnan(want) || isinf(want) || (!isinf(got) && !isinf(round_to<T>(want)))) return wk_close(got, want, tol);
    const double a = round_to<T>(want * (1 - out_tol<T>())), b = round_to<T>(want * (1 + out_tol<T>()));
    return got >= std::min(a, b) && got <= std::max(a, b);
}

// ---- the softmax family on one input -------------------------------------------------------------------
/// Runs segmentSoftmax (plain, log), segmentLogSumExp and segmentSoftmaxBackward on x [items, heads]
/// with CSR offsets `off` (long long, or int when they fit and `int32`), `shift` elements off
/// alignment; checks every output; returns nothing (asserts).
template <typename T> static void softmax_case(const std::vector<long long>& off, long long items, int heads,
                                               bool int32, int shift, bool specials, wk_rng* r, const char* what) {
    const long long segs = (long long)off.size() - 1, n = items * heads;
    std::vector<T> hx(n), hdy(n);
    for (auto& v : hx) v = pick<T>(r, specials);
    for (auto& v : hdy) v = pick<T>(r, false);
    T* dx = wk_alloc<T>(n + shift);
    T* ddy = wk_alloc<T>(n + shift);
    T* dy = wk_alloc<T>(n + shift);
    T* dl = wk_alloc<T>(segs * heads + 1);
    wk_upload(dx + shift, hx.data(), n);
    wk_upload(ddy + shift, hdy.data(), n);
    long long* d64 = wk_alloc<long long>(off.size());
    int* d32 = wk_alloc<int>(off.size());
    wk_upload(d64, off.data(), off.size());
    std::vector<int> o32(off.begin(), off.end());
    wk_upload(d32, o32.data(), o32.size());
    auto call = [&](int op, void* w, size_t* b, cudaStream_t st) -> cudaError_t {
        const T* x = dx + shift;
        T* y = dy + shift;
        const warpkit::SoftmaxKind k = op == 1 ? warpkit::SoftmaxLog : warpkit::SoftmaxPlain;
        if (op <= 1)
            return int32 ? warpkit::segmentSoftmax(x, y, items, d32, segs, heads, k, w, b, st)
                         : warpkit::segmentSoftmax(x, y, items, d64, segs, heads, k, w, b, st);
        if (op == 2)
            return int32 ? warpkit::segmentLogSumExp(x, dl, items, d32, segs, heads, w, b, st)
                         : warpkit::segmentLogSumExp(x, dl, items, d64, segs, heads, w, b, st);
        const warpkit::SoftmaxKind bk = op == 4 ? warpkit::SoftmaxLog : warpkit::SoftmaxPlain;
        return int32 ? warpkit::segmentSoftmaxBackward(x, ddy + shift, y, items, d32, segs, heads, bk, w, b, st)
                     : warpkit::segmentSoftmaxBackward(x, ddy + shift, y, items, d64, segs, heads, bk, w, b, st);
    };
    for (int op = 0; op < 5; ++op) {
        size_t bytes;
        void* w = workspace([&](void* ww, size_t* bb) { return call(op, ww, bb, 0); }, &bytes);
        std::vector<T> got(op == 2 ? segs * heads : n), again(got.size());
        T* dout = op == 2 ? dl : dy + shift;
        for (int run = 0; run < 2; ++run) {
            wk_poison(dout, got.size());
            WK_CUDA(call(op, w, &bytes, 0));
            WK_LAUNCHED();
            wk_download(run ? again.data() : got.data(), dout, got.size());
        }
        cr_assert(memcmp(got.data(), again.data(), got.size() * sizeof(T)) == 0, "%s op %d: two calls differ", what,
                  op);
        std::vector<char> covered(items, 0);
        for (long long s = 0; s < segs; ++s) {
            const Seg g = clip(off[s], off[s + 1], items);
            for (long long i = 0; i < g.n; ++i) covered[g.b + i] = 1;
            for (int h = 0; h < heads; ++h) {
                std::vector<double> x(g.n), y;
                double lse;
                for (long long i = 0; i < g.n; ++i) x[i] = wk_to_double(hx[(g.b + i) * heads + h]);
                if (op == 2) {
                    ref_softmax(x, 0, &y, &lse);
                    const double gv = wk_to_double(got[s * heads + h]);
                    cr_assert(out_close<T>(gv, lse, out_tol<T>() * 4),
                              "%s lse seg %lld head %d (len %lld): %.9g want %.9g", what, s, h, g.n, gv, lse);
                    continue;
                }
                std::vector<double> want(g.n);
                if (op <= 1) {
                    ref_softmax(x, op, &want, &lse);
                } else { // backward from y = x, dy
                    double sum = 0;
                    for (long long i = 0; i < g.n; ++i) {
                        const double dyv = wk_to_double(hdy[(g.b + i) * heads + h]);
                        sum += op == 4 ? dyv : x[i] * dyv;
                    }
                    for (long long i = 0; i < g.n; ++i) {
                        const double dyv = wk_to_double(hdy[(g.b + i) * heads + h]);
                        want[i] = op == 4 ? dyv - exp(x[i]) * sum : x[i] * (dyv - sum);
                    }
                }
                for (long long i = 0; i < g.n; ++i) {
                    const double gv = wk_to_double(got[(g.b + i) * heads + h]);
                    const double tol =
                        op >= 3 ? out_tol<T>() * (1 + fabs(want[i]) + sqrt((double)g.n)) * 8 : out_tol<T>();
                    cr_assert(out_close<T>(gv, want[i], tol),
                              "%s op %d seg %lld head %d row %lld (len %lld): %.9g want %.9g", what, op, s, h, i, g.n,
                              gv, want[i]);
                }
            }
        }
        if (op != 2) { // rows of no segment: untouched
            unsigned char poison[sizeof(T)];
            memset(poison, 0xA5, sizeof poison);
            for (long long i = 0; i < items; ++i)
                if (!covered[i])
                    for (int h = 0; h < heads; ++h)
                        cr_assert(memcmp(&got[i * heads + h], poison, sizeof(T)) == 0, "%s op %d: row %lld written",
                                  what, op, i);
        }
        WK_CUDA(cudaFree(w));
    }
    for (void* p : {(void*)dx, (void*)ddy, (void*)dy, (void*)dl, (void*)d64, (void*)d32}) WK_CUDA(cudaFree(p));
}

// ---- reductions on one input ---------------------------------------------------------------------------------
/// Every reduction of one input against the host; `bounds` passes the CSR offsets as begin/end
/// arrays (never the flat pass: the lane groups, G1 / G6).
template <typename T> static void reduce_case(const std::vector<long long>& off, long long items, bool int32, int shift,
                                              bool specials, wk_rng* r, const char* what, bool bounds = false) {
    const long long segs = (long long)off.size() - 1;
    std::vector<T> hx(items);
    for (auto& v : hx) v = pick<T>(r, specials);
    T* din = wk_alloc<T>(items + shift);
    T* dout = wk_alloc<T>(3 * segs + 1);
    warpkit::ValueIndex<T>* darg = wk_alloc<warpkit::ValueIndex<T>>(2 * segs + 1);
    wk_upload(din + shift, hx.data(), items);
    long long* d64 = wk_alloc<long long>(off.size());
    int* d32 = wk_alloc<int>(off.size());
    wk_upload(d64, off.data(), off.size());
    std::vector<int> o32(off.begin(), off.end());
    wk_upload(d32, o32.data(), o32.size());
    const T* in = din + shift;
    auto call = [&](int op, void* w, size_t* b) -> cudaError_t {
        auto go = [&](auto o) -> cudaError_t {
            switch (op) {
            case 0:
                return warpkit::segmentReduceSum(in, dout, items, o, segs, w, b);
            case 1:
                return warpkit::segmentReduceMax(in, dout + segs, items, o, segs, w, b);
            case 2:
                return warpkit::segmentReduceMin(in, dout + 2 * segs, items, o, segs, w, b);
            case 3:
                return warpkit::segmentReduceArgMax(in, darg, items, o, segs, w, b);
            default:
                return warpkit::segmentReduceArgMin(in, darg + segs, items, o, segs, w, b);
            }
        };
        if (bounds) return int32 ? go(warpkit::segmentBounds(d32, d32 + 1)) : go(warpkit::segmentBounds(d64, d64 + 1));
        return int32 ? go(d32) : go(d64);
    };
    wk_poison(dout, 3 * segs + 1);
    wk_poison(darg, 2 * segs + 1);
    for (int op = 0; op < 5; ++op) {
        size_t bytes;
        void* w = workspace([&](void* ww, size_t* bb) { return call(op, ww, bb); }, &bytes);
        WK_CUDA(call(op, w, &bytes));
        WK_LAUNCHED();
        WK_CUDA(cudaFree(w));
    }
    std::vector<T> got(3 * segs);
    std::vector<warpkit::ValueIndex<T>> arg(2 * segs);
    wk_download(got.data(), dout, got.size());
    wk_download(arg.data(), darg, arg.size());
    for (long long s = 0; s < segs; ++s) {
        const Seg g = clip(off[s], off[s + 1], items);
        double sum = 0, asum = 0, mx = -INFINITY, mn = INFINITY;
        long long amx = -1, amn = -1;
        bool nan = false;
        for (long long i = 0; i < g.n; ++i) {
            const double v = wk_to_double(hx[g.b + i]);
            sum += v;
            asum += fabs(v);
            if (isnan(v)) {
                if (!nan) amx = amn = i;
                nan = true;
            }
            if (!nan && (amx < 0 || v > mx)) {
                mx = v;
                amx = i;
            }
            if (!nan && (amn < 0 || v < mn)) {
                mn = v;
                amn = i;
            }
        }
        if (nan) mx = mn = NAN;
        if constexpr (std::is_integral<T>::value) { // the header: an empty segment's Max / Min is the lowest / highest
            if (g.n == 0) {
                mx = (double)std::numeric_limits<T>::lowest();
                mn = (double)std::numeric_limits<T>::max();
            }
        }
        const double tol = (double)(g.n + 40) * 0x1p-24 * asum / (1 + fabs(sum)) + wk_eps<T>();
        const double gs = wk_to_double(got[s]), gmx = wk_to_double(got[segs + s]),
                     gmn = wk_to_double(got[2 * segs + s]);
        cr_assert(wk_close(gs, sum, tol), "%s sum seg %lld (len %lld): %.9g want %.9g", what, s, g.n, gs, sum);
        cr_assert(wk_close(gmx, mx, 0) && wk_close(gmn, mn, 0), "%s max/min seg %lld (len %lld): %g %g want %g %g",
                  what, s, g.n, gmx, gmn, mx, mn);
        cr_assert(arg[s].index == (int)amx && arg[segs + s].index == (int)amn,
                  "%s argmax/argmin seg %lld (len %lld): %d %d want %lld %lld", what, s, g.n, arg[s].index,
                  arg[segs + s].index, amx, amn);
        // the values: the winner's bits (a NaN's payload, a zero's sign); an empty segment's lowest / highest
        if (g.n > 0)
            cr_assert(memcmp(&arg[s].value, &hx[g.b + amx], sizeof(T)) == 0 &&
                          memcmp(&arg[segs + s].value, &hx[g.b + amn], sizeof(T)) == 0,
                      "%s argmax/argmin seg %lld (len %lld): values %g %g, not the bits of rows %lld %lld", what, s,
                      g.n, wk_to_double(arg[s].value), wk_to_double(arg[segs + s].value), amx, amn);
        else
            cr_assert(wk_to_double(arg[s].value) == mx && wk_to_double(arg[segs + s].value) == mn,
                      "%s argmax/argmin of empty seg %lld: values %g %g want %g %g", what, s,
                      wk_to_double(arg[s].value), wk_to_double(arg[segs + s].value), mx, mn);
        if (g.n == 0) cr_assert(gs == 0 && signbit(gs) == 0, "%s: an empty segment's sum is %g, want +0", what, gs);
    }
    for (void* p : {(void*)din, (void*)dout, (void*)darg, (void*)d64, (void*)d32}) WK_CUDA(cudaFree(p));
}

// ---- tests --------------------------------------------------------------------------------------------------------
Test(device_segment, reduce_every_distribution) {
    WK_REQUIRE_GPU();
    const long long total = wk_quick() ? 40000 : 400000;
    for (int d = 0; d < 9; ++d) { // boundaries: rule G6 (mean past 2048); boundaries among empty: G1
        wk_rng r = wk_rng_make(0x5e60 + d);
        const std::vector<long long> off = distribution(d, total, &r);
        const long long items = off.back();
        char what[96];
        snprintf(what, sizeof what, "%s float", kDistName[d]);
        reduce_case<float>(off, items, d % 2 == 0, d % 3, d >= 5, &r, what);
        snprintf(what, sizeof what, "%s half", kDistName[d]);
        reduce_case<__half>(off, items, false, 1, false, &r, what);
        snprintf(what, sizeof what, "%s bf16", kDistName[d]);
        reduce_case<__nv_bfloat16>(off, items, true, 0, true, &r, what);
        if (warpkit::detail::segmentPlan(warpkit::detail::SegReduce, 4, 1, (long long)off.size() - 1, items, true)
                .flat) { // CSR took the flat pass (G5): the lane groups too, through begin/end arrays
            snprintf(what, sizeof what, "%s float begin/end", kDistName[d]);
            reduce_case<float>(off, items, d % 2 == 1, 1, true, &r, what, true);
        }
    }
}

Test(device_segment, softmax_every_distribution) {
    WK_REQUIRE_GPU();
    const long long total = wk_quick() ? 20000 : 200000;
    const int headsList[] = {1, 3, 4, 17};
    for (int d = 0; d < 8; ++d) {
        wk_rng r = wk_rng_make(0x50f7 + d);
        std::vector<long long> off = distribution(d, total, &r);
        for (int hi = 0; hi < 4; ++hi) {
            const int heads = headsList[hi];
            if (heads > 1 && (d == 4 || d == 5) && wk_quick()) continue;
            char what[96];
            snprintf(what, sizeof what, "%s heads %d float", kDistName[d], heads);
            softmax_case<float>(off, off.back(), heads, hi % 2 == 0, hi, d >= 5, &r, what);
            if (hi <= 2) { // heads 1: the softmax's flat pass (G7) up to a mean of 64
                snprintf(what, sizeof what, "%s heads %d half", kDistName[d], heads);
                softmax_case<__half>(off, off.back(), heads, false, 1, false, &r, what);
                snprintf(what, sizeof what, "%s heads %d bf16", kDistName[d], heads);
                softmax_case<__nv_bfloat16>(off, off.back(), heads, true, 0, true, &r, what);
            }
        }
    }
}

/// Heads 2, 8 and 16 (the register path's widths: 8 rows a lane, one to sixteen heads) over the
/// short and mixed distributions and every boundary length (8, 9, ..., 255, 256, 257: the lane
/// groups' limits, past which G = 32 pairs take the fold and write passes), specials included.
Test(device_segment, softmax_head_widths) {
    WK_REQUIRE_GPU();
    const int dists[] = {0, 1, 2, 3, 5, 7, 8}, headsList[] = {2, 8, 16};
    for (int d : dists) {
        wk_rng r = wk_rng_make(0x4ead + d);
        const std::vector<long long> off = distribution(d, wk_quick() ? 5000 : 20000, &r);
        for (int hi = 0; hi < 3; ++hi) {
            const int heads = headsList[hi];
            char what[96];
            snprintf(what, sizeof what, "%s heads %d float", kDistName[d], heads);
            softmax_case<float>(off, off.back(), heads, hi != 1, hi, d >= 5, &r, what);
            snprintf(what, sizeof what, "%s heads %d %s", kDistName[d], heads, hi == 1 ? "half" : "bf16");
            if (hi == 1) softmax_case<__half>(off, off.back(), heads, true, 1, d >= 5, &r, what);
            else softmax_case<__nv_bfloat16>(off, off.back(), heads, false, 0, true, &r, what);
        }
    }
}

/// x [items, heads] softmax in place (y == x) against the same call out of place: the same bits.
template <typename T>
static void heads_in_place(const std::vector<long long>& off, int heads, wk_rng* r, const char* what) {
    const long long items = off.back(), segs = (long long)off.size() - 1, n = items * heads;
    std::vector<T> hx(n), want(n), got(n);
    for (auto& v : hx) v = pick<T>(r, true);
    T* dx = wk_alloc<T>(n + 1);
    T* dy = wk_alloc<T>(n + 1);
    long long* doff = wk_alloc<long long>(off.size());
    wk_upload(doff, off.data(), off.size());
    for (int kind = 0; kind < 4; ++kind) {
        auto call = [&](T* y, void* w, size_t* b) {
            return warpkit::segmentSoftmax((const T*)dx, y, items, (const long long*)doff, segs, heads,
                                           (warpkit::SoftmaxKind)kind, w, b);
        };
        size_t bytes;
        void* w = workspace([&](void* ww, size_t* bb) { return call(dy, ww, bb); }, &bytes);
        wk_upload(dx, hx.data(), n);
        wk_poison(dy, n);
        WK_CUDA(call(dy, w, &bytes));
        WK_CUDA(call(dx, w, &bytes));
        WK_LAUNCHED();
        wk_download(want.data(), dy, n);
        wk_download(got.data(), dx, n);
        cr_assert(memcmp(got.data(), want.data(), n * sizeof(T)) == 0, "%s kind %d: in place differs", what, kind);
        WK_CUDA(cudaFree(w));
    }
    for (void* q : {(void*)dx, (void*)dy, (void*)doff}) WK_CUDA(cudaFree(q));
}

/// Rule G8 (the softmax of 2, 4 or 8 heads by segments, a row a vector: segment_heads.cuh; 16 heads
/// run G3 beside them): every distribution (lengths 0, 1, 31, 32, 33, each lane-group width's limit
/// G * R and the windows' 32 * R for R = 8, 4 rows a lane, long segments to the block and slice tiers), fp32,
/// fp16 and bf16, NaN and +-inf, int and long long offsets; x one row chunk off 16 bytes (fp32 with
/// 2 heads: still the vector rows), one element off (the group kernel), in place; y one element
/// off an aligned x (this kernel, rows stored element by element) with the same bits as y aligned.
template <typename T>
static void block_tier_bits(const std::vector<long long>& off, int heads, int shift, wk_rng* r, const char* what);
Test(device_segment, softmax_heads_by_rows) {
    WK_REQUIRE_GPU();
    const int dists[] = {0, 1, 2, 3, 5, 7, 8}, headsList[] = {2, 4, 8, 16};
    for (int d : dists) {
        wk_rng r = wk_rng_make(0x8ead + d);
        const std::vector<long long> off = distribution(d, wk_quick() ? 5000 : 20000, &r);
        for (int hi = 0; hi < 4; ++hi) {
            const int heads = headsList[hi];
            if (heads >= 8 && d == 5 && wk_quick()) continue;
            char what[96];
            snprintf(what, sizeof what, "rows %s heads %d float", kDistName[d], heads);
            softmax_case<float>(off, off.back(), heads, hi % 2 == 0, 0, true, &r, what);
            snprintf(what, sizeof what, "rows %s heads %d half", kDistName[d], heads);
            softmax_case<__half>(off, off.back(), heads, hi % 2 == 1, 0, true, &r, what);
            snprintf(what, sizeof what, "rows %s heads %d bf16", kDistName[d], heads);
            softmax_case<__nv_bfloat16>(off, off.back(), heads, false, 0, d >= 5, &r, what);
            if (d == 5) continue;
            snprintf(what, sizeof what, "rows %s heads %d float, 2 elements off", kDistName[d], heads);
            softmax_case<float>(off, off.back(), heads, true, 2, true, &r, what);
            snprintf(what, sizeof what, "rows %s heads %d half, 1 element off", kDistName[d], heads);
            softmax_case<__half>(off, off.back(), heads, false, 1, true, &r, what);
            snprintf(what, sizeof what, "rows %s heads %d float in place", kDistName[d], heads);
            heads_in_place<float>(off, heads, &r, what);
            snprintf(what, sizeof what, "rows %s heads %d bf16 in place", kDistName[d], heads);
            heads_in_place<__nv_bfloat16>(off, heads, &r, what);
            if (heads == 16 || wk_thin(d, 3)) continue; // racecheck: the same kernels as above
            snprintf(what, sizeof what, "rows %s heads %d bf16, y off x", kDistName[d], heads);
            block_tier_bits<__nv_bfloat16>(off, heads, 0, &r, what);
        }
    }
}

/// All four kinds on x [items, heads] with whole -inf pairs among NaN and +-inf: a pair of only
/// -inf gives NaN (plain, log), zeros (masked) or -inf (log masked); the rest as the reference.
/// sparse: for long segments, where pick's NaN and +inf would reach every pair: finite values and
/// 5% -inf, and in segment s one NaN (s % 4 == 1) or one +inf (s % 4 == 2) in head s % heads only.
template <typename T>
static void kinds_case(const std::vector<long long>& off, int heads, wk_rng* r, const char* what, bool sparse = false) {
    const long long items = off.back(), segs = (long long)off.size() - 1, n = items * heads;
    std::vector<T> hx(n);
    for (auto& v : hx)
        v = sparse ? wk_from_double<T>(wk_int(r, 0, 19) == 0 ? -INFINITY : wk_uniform(r, -4, 4)) : pick<T>(r, true);
    for (long long s = 0; sparse && s < segs; ++s)
        if (off[s + 1] > off[s] && (s % 4 == 1 || s % 4 == 2))
            hx[wk_int(r, off[s], off[s + 1] - 1) * heads + s % heads] = wk_from_double<T>(s % 4 == 1 ? NAN : INFINITY);
    for (long long s = 0; s < segs; ++s) // head 0 of every third segment, every head of every fifth: all -inf
        for (int h = 0; h < heads; ++h)
            if ((s % 3 == 0 && h == 0) || s % 5 == 0)
                for (long long i = off[s]; i < off[s + 1]; ++i) hx[i * heads + h] = wk_from_double<T>(-INFINITY);
    T* dx = wk_alloc<T>(n);
    T* dy = wk_alloc<T>(n);
    long long* doff = wk_alloc<long long>(off.size());
    wk_upload(dx, hx.data(), n);
    wk_upload(doff, off.data(), off.size());
    std::vector<T> got(n), again(n);
    for (int kind = 0; kind < 4; ++kind) {
        auto call = [&](void* w, size_t* b) {
            return warpkit::segmentSoftmax((const T*)dx, dy, items, (const long long*)doff, segs, heads,
                                           (warpkit::SoftmaxKind)kind, w, b);
        };
        size_t bytes;
        void* w = workspace(call, &bytes);
        for (int run = 0; run < 2; ++run) {
            wk_poison(dy, n);
            WK_CUDA(call(w, &bytes));
            WK_LAUNCHED();
            wk_download(run ? again.data() : got.data(), dy, n);
        }
        cr_assert(memcmp(got.data(), again.data(), n * sizeof(T)) == 0, "%s kind %d: two calls differ", what, kind);
        for (long long s = 0; s < segs; ++s)
            for (int h = 0; h < heads; ++h) {
                const long long len = off[s + 1] - off[s];
                std::vector<double> x(len), want;
                double lse;
                bool allNegInf = len > 0;
                for (long long i = 0; i < len; ++i) {
                    x[i] = wk_to_double(hx[(off[s] + i) * heads + h]);
                    allNegInf = allNegInf && x[i] == -INFINITY;
                }
                ref_softmax(x, kind & 1, &want, &lse);
                if (allNegInf && (kind & 2)) want.assign(len, (kind & 1) ? -INFINITY : 0.0);
                for (long long i = 0; i < len; ++i) {
                    const double gv = wk_to_double(got[(off[s] + i) * heads + h]);
                    cr_assert(out_close<T>(gv, want[i], out_tol<T>()),
                              "%s kind %d seg %lld head %d row %lld (len %lld): %.9g want %.9g", what, kind, s, h, i,
                              len, gv, want[i]);
                }
            }
        WK_CUDA(cudaFree(w));
    }
    for (void* p : {(void*)dx, (void*)dy, (void*)doff}) WK_CUDA(cudaFree(p));
}

Test(device_segment, softmax_kinds_all_neg_inf) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0x3a5c);
    const long long lens[] = {0,  1,  2,   3,   7,   8,   9,   15,  16,  17,  31,   32,   33,  63,
                              64, 65, 127, 128, 129, 255, 256, 257, 300, 511, 1023, 1024, 1025};
    std::vector<long long> off = {0};
    for (int rep = 0; rep < 2; ++rep)
        for (long long l : lens) off.push_back(off.back() + l);
    const int headsList[] = {1, 2, 3, 4, 8, 16, 17};
    for (int heads : headsList) {
        char what[64];
        snprintf(what, sizeof what, "kinds heads %d float", heads);
        kinds_case<float>(off, heads, &r, what);
        snprintf(what, sizeof what, "kinds heads %d half", heads);
        kinds_case<__half>(off, heads, &r, what);
        snprintf(what, sizeof what, "kinds heads %d bf16", heads);
        kinds_case<__nv_bfloat16>(off, heads, &r, what);
    }
}

Test(device_segment, decreasing_offsets_and_clipping) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0xdec);
    // The data holds 50000 rows. Offsets that go back make empty segments; these never revisit a row
    // (so the softmax's outputs are each written once), and the first reaches past items (clipped).
    // Rows 0..19, 25..49, 90..99 and 5000..29999 are in no segment and must stay poisoned.
    const std::vector<long long> off = {30000, 60000, 100, 5000, 50, 80, 80, 90, 60, 20, 25, 0};
    softmax_case<float>(off, 50000, 2, false, 1, false, &r, "decreasing");
    softmax_case<__half>(off, 50000, 1, true, 0, false, &r, "decreasing half");
    // Offsets that go back into rows of earlier segments (overlapping segments): the per-segment
    // results are still each segment's own.
    const std::vector<long long> overlap = {0, 10, 5, 5, 40, 30, 9000, 8000, 20000, 60000, 70000, 49990, 50000, 0};
    reduce_case<float>(off, 50000, true, 0, false, &r, "decreasing");
    reduce_case<float>(overlap, 50000, false, 3, true, &r, "overlapping");
}

Test(device_segment, specials_nan_inf) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0x1f);
    std::vector<long long> off = {0, 1, 2, 3, 6, 10, 42, 43, 5000, 9000};
    softmax_case<float>(off, 9000, 1, true, 0, true, &r, "specials");
    reduce_case<float>(off, 9000, true, 0, true, &r, "specials");
}

/// Overlapping long segments given by begin/end arrays: 48 copies of the same rows. The workspace
/// (sized for segments that do not overlap) has room for a few, so the rest run on single warps:
/// every copy must be the same bits, for the reduction and the softmax state alike.
Test(device_segment, overlapping_same_bits_on_any_executor) {
    WK_REQUIRE_GPU();
    const long long items = 70001, segs = 48;
    std::vector<float> hx(items);
    wk_rng r = wk_rng_make(0x0e);
    for (auto& v : hx) v = (float)wk_uniform(&r, -3, 3);
    std::vector<long long> b(segs, 3), e(segs, items - 2);
    float* din = wk_alloc<float>(items);
    float* dout = wk_alloc<float>(2 * segs);
    long long *db = wk_alloc<long long>(segs), *de = wk_alloc<long long>(segs);
    wk_upload(din, hx.data(), items);
    wk_upload(db, b.data(), segs);
    wk_upload(de, e.data(), segs);
    const auto bounds = warpkit::segmentBounds((const long long*)db, (const long long*)de);
    size_t bytes;
    void* w = workspace(
        [&](void* ww, size_t* bb) { return warpkit::segmentLogSumExp(din, dout, items, bounds, segs, 1, ww, bb); },
        &bytes);
    WK_CUDA(warpkit::segmentReduceSum(din, dout, items, bounds, segs, w, &bytes));
    WK_CUDA(warpkit::segmentLogSumExp(din, dout + segs, items, bounds, segs, 1, w, &bytes));
    WK_LAUNCHED();
    std::vector<float> got(2 * segs);
    wk_download(got.data(), dout, got.size());
    for (long long s = 1; s < segs; ++s)
        cr_assert(memcmp(&got[s], &got[0], 4) == 0 && memcmp(&got[segs + s], &got[segs], 4) == 0,
                  "copy %lld of the same segment: %.9g / %.9g, copy 0: %.9g / %.9g", s, got[s], got[segs + s], got[0],
                  got[segs]);
    double sum = 0;
    for (long long i = 3; i < items - 2; ++i) sum += hx[i];
    cr_assert(fabs(got[0] - sum) < 1e-3 * (1 + fabs(sum)), "sum %.9g want %.9g", got[0], sum);
    for (void* p : {(void*)din, (void*)dout, (void*)db, (void*)de, w}) WK_CUDA(cudaFree(p));
}

/// segmentReduceSum into out[0, segs) and segmentReduceArgMax into arg, and with All segmentReduceMax
/// into out + stride and segmentLogSumExp into out + 2 * stride, on one workspace filled with
/// garbage: the largest of the calls' queries (the CSR sum and max ask for the flat pass's room,
/// which can exceed log-sum-exp's).
template <bool All, typename T, typename Offs> static void reduce_calls(const T* in, T* out,
                                                                        warpkit::ValueIndex<T>* arg, long long items,
                                                                        Offs offs, long long segs, long long stride) {
    size_t q[4] = {0, 0, 0, 0}, bytes;
    WK_CUDA(warpkit::segmentReduceSum(in, out, items, offs, segs, nullptr, &q[0]));
    WK_CUDA(warpkit::segmentReduceArgMax(in, arg, items, offs, segs, nullptr, &q[1]));
    if constexpr (All) {
        WK_CUDA(warpkit::segmentReduceMax(in, out, items, offs, segs, nullptr, &q[2]));
        WK_CUDA(warpkit::segmentLogSumExp(in, out, items, offs, segs, 1, nullptr, &q[3]));
    }
    const size_t most = std::max(std::max(q[0], q[1]), std::max(q[2], q[3]));
    void* w = workspace(
        [&](void* ww, size_t* bb) {
            *bb = most;
            return ww == nullptr ? cudaSuccess : cudaErrorInvalidValue;
        },
        &bytes);
    WK_CUDA(warpkit::segmentReduceSum(in, out, items, offs, segs, w, &bytes));
    WK_CUDA(warpkit::segmentReduceArgMax(in, arg, items, offs, segs, w, &bytes));
    if constexpr (All) {
        WK_CUDA(warpkit::segmentReduceMax(in, out + stride, items, offs, segs, w, &bytes));
        WK_CUDA(warpkit::segmentLogSumExp(in, out + 2 * stride, items, offs, segs, 1, w, &bytes));
    }
    WK_LAUNCHED();
    WK_CUDA(cudaFree(w));
}

/// Long one-head pairs (the chunk kernels: one chunk, a whole one, two and three) at every 4-byte
/// misalignment: sum, max, ArgMax and log-sum-exp give the same bits at each, and the same as 200
/// overlapping copies by begin/end arrays, most of which find no room in the workspace and run on
/// single warps (the no-room kernel's emulation of the chunk kernels' order).
Test(device_segment, long_pairs_same_bits_any_alignment_and_executor) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0x1a);
    const int copies = 200;
    for (long long len : {8193ll, 9001ll, 16384ll, 16385ll, 40000ll}) { // past G11's directRows (8192)
        std::vector<float> hx(len);
        for (auto& v : hx) v = (float)wk_uniform(&r, -3, 3) * (float)(1 << wk_int(&r, 0, 12)); // order shows in bits
        float* din = wk_alloc<float>(len + 4);
        float* dout = wk_alloc<float>(3 * copies);
        auto* darg = wk_alloc<warpkit::ValueIndex<float>>(copies);
        long long *db = wk_alloc<long long>(copies), *de = wk_alloc<long long>(copies), *dcsr = wk_alloc<long long>(2);
        float want[3] = {0, 0, 0};
        warpkit::ValueIndex<float> wantArg{};
        for (int shift = 0; shift < 4; ++shift) {
            const long long items = len + 4;
            wk_poison(din, items);
            wk_upload(din + shift, hx.data(), len);
            std::vector<long long> b(copies, shift), e(copies, shift + len);
            wk_upload(db, b.data(), copies);
            wk_upload(de, e.data(), copies);
            const long long csrOff[2] = {shift, shift + len};
            wk_upload(dcsr, csrOff, 2);
            auto run = [&](auto offs, long long segs) {
                reduce_calls<true>((const float*)din, dout, darg, items, offs, segs, copies);
            };
            std::vector<float> got(3 * copies);
            std::vector<warpkit::ValueIndex<float>> arg(copies);
            run(warpkit::segmentBounds((const long long*)db, (const long long*)de), (long long)copies);
            wk_download(got.data(), dout, got.size());
            wk_download(arg.data(), darg, arg.size());
            run((const long long*)dcsr, 1ll);
            float csr[3];
            warpkit::ValueIndex<float> csrArg;
            wk_download(csr, dout, 1);
            wk_download(csr + 1, dout + copies, 1);
            wk_download(csr + 2, dout + 2 * copies, 1);
            wk_download(&csrArg, darg, 1);
            if (shift == 0) {
                memcpy(want, csr, sizeof want);
                wantArg = csrArg;
                double sum = 0, asum = 0;
                for (float v : hx) sum += v, asum += fabs(v);
                cr_assert(fabs(want[0] - sum) <= (double)(len + 40) * 0x1p-24 * asum, "len %lld: sum %.9g want %.9g",
                          len, want[0], sum);
            }
            cr_assert(memcmp(csr, want, sizeof want) == 0 && memcmp(&csrArg, &wantArg, sizeof wantArg) == 0,
                      "len %lld shift %d: CSR sum/max/lse %a %a %a, at shift 0 %a %a %a", len, shift, csr[0], csr[1],
                      csr[2], want[0], want[1], want[2]);
            for (int c = 0; c < copies; ++c)
                cr_assert(memcmp(&got[c], &want[0], 4) == 0 && memcmp(&got[copies + c], &want[1], 4) == 0 &&
                              memcmp(&got[2 * copies + c], &want[2], 4) == 0 &&
                              memcmp(&arg[c], &wantArg, sizeof wantArg) == 0,
                          "len %lld shift %d copy %d: sum/max/lse %a %a %a, CSR %a %a %a", len, shift, c, got[c],
                          got[copies + c], got[2 * copies + c], want[0], want[1], want[2]);
        }
        for (void* q : {(void*)din, (void*)dout, (void*)darg, (void*)db, (void*)de, (void*)dcsr}) WK_CUDA(cudaFree(q));
    }
}

/// Rule G1's short warp steps (segmentStepPairs: fewer than 32 pairs a step when the call has fewer
/// than 32 pairs a resident warp): segments of 200-300 rows from an odd offset (32-lane pairs,
/// folded one after another in a step), each followed by 8 empty ones (a mean of about 28: G1 by
/// begin/end arrays; by CSR the flat pass), every reduction against the host in fp32 and fp16 by
/// CSR and begin/end arrays; then sum, max, ArgMax and log-sum-exp by begin/end arrays give the
/// same bits with steps of another size and other lane positions: the same segments behind 5 empty
/// ones and followed by enough empty ones for steps of about 32 pairs.
Test(device_segment, g1_short_steps_same_bits) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0x5e61);
    int dev = 0, sms = 0;
    WK_CUDA(cudaGetDevice(&dev));
    WK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const std::vector<long long> counts =
        wk_quick() ? std::vector<long long>{300, 5000} : std::vector<long long>{300, 5000, 40000};
    for (long long segs : counts) {
        std::vector<long long> off(segs + 1);
        off[0] = 3;
        for (long long s = 0; s < segs; ++s) off[s + 1] = off[s] + (s % 9 == 0 ? wk_int(&r, 200, 300) : 0);
        const long long items = off.back() + 2;
        {
            const warpkit::detail::SegmentPlan plan =
                warpkit::detail::segmentPlan(warpkit::detail::SegReduce, 4, 1, segs, items, false);
            cr_assert(strcmp(warpkit::detail::kSegmentRules[plan.rule].id, "G1") == 0 && plan.minStep < 32,
                      "%lld segments: not rule G1's short steps", segs);
        }
        char what[96];
        snprintf(what, sizeof what, "G1 steps %lld segments float", segs);
        reduce_case<float>(off, items, segs % 2 == 0, 1, true, &r, what);
        snprintf(what, sizeof what, "G1 steps %lld segments float begin/end", segs);
        reduce_case<float>(off, items, false, 3, false, &r, what, true);
        snprintf(what, sizeof what, "G1 steps %lld segments half", segs);
        reduce_case<__half>(off, items, true, 1, true, &r, what);
        snprintf(what, sizeof what, "G1 steps %lld segments half begin/end", segs);
        reduce_case<__half>(off, items, false, 0, false, &r, what, true);

        // the same bits with other steps: CSR alone, then begin/end arrays with 5 empty segments
        // first and 32 x 64 x SMs empty ones after (pairs past 32 a resident warp)
        std::vector<float> hx(items);
        for (auto& v : hx) v = (float)wk_uniform(&r, -3, 3) * (float)(1 << wk_int(&r, 0, 12)); // order shows in bits
        const long long lead = 5, segs2 = lead + segs + 32ll * 64 * sms;
        std::vector<long long> b(segs2, 0), e(segs2, 0);
        for (long long s = 0; s < segs; ++s) b[lead + s] = off[s], e[lead + s] = off[s + 1];
        float* din = wk_alloc<float>(items);
        float* dout = wk_alloc<float>(3 * segs2);
        auto* darg = wk_alloc<warpkit::ValueIndex<float>>(segs2);
        long long *dcsr = wk_alloc<long long>(segs + 1), *db = wk_alloc<long long>(segs2),
                  *de = wk_alloc<long long>(segs2);
        wk_upload(din, hx.data(), items);
        wk_upload(dcsr, off.data(), segs + 1);
        wk_upload(db, b.data(), segs2);
        wk_upload(de, e.data(), segs2);
        wk_poison(dout, 3 * segs2);
        reduce_calls<true>((const float*)din, dout, darg, items,
                           warpkit::segmentBounds((const long long*)dcsr, (const long long*)dcsr + 1), segs, segs);
        std::vector<float> want(3 * segs), got(3 * segs2);
        std::vector<warpkit::ValueIndex<float>> wantArg(segs), arg(segs2);
        wk_download(want.data(), dout, want.size());
        wk_download(wantArg.data(), darg, segs);
        for (long long s = 0; s < segs; s += 9 * 19) { // the log-sum-exp against the host (non-empty ones)
            double m = -INFINITY, t = 0;
            for (long long i = off[s]; i < off[s + 1]; ++i) m = std::max(m, (double)hx[i]);
            for (long long i = off[s]; i < off[s + 1]; ++i) t += exp((double)hx[i] - m);
            const double lse = m + log(t);
            cr_assert(wk_close(want[2 * segs + s], lse, out_tol<float>() * 4), "%lld segments: lse %lld %.9g want %.9g",
                      segs, s, want[2 * segs + s], lse);
        }
        wk_poison(dout, 3 * segs2);
        reduce_calls<true>((const float*)din, dout, darg, items,
                           warpkit::segmentBounds((const long long*)db, (const long long*)de), segs2, segs2);
        wk_download(got.data(), dout, got.size());
        wk_download(arg.data(), darg, segs2);
        for (long long s = 0; s < segs; ++s)
            for (int k = 0; k < 3; ++k)
                cr_assert(memcmp(&got[k * segs2 + lead + s], &want[k * segs + s], 4) == 0,
                          "%lld segments: result %d of segment %lld is %a with 32-pair steps, %a alone", segs, k, s,
                          got[k * segs2 + lead + s], want[k * segs + s]);
        for (long long s = 0; s < segs; ++s)
            cr_assert(memcmp(&arg[lead + s], &wantArg[s], sizeof wantArg[s]) == 0,
                      "%lld segments: ArgMax of segment %lld differs with 32-pair steps", segs, s);
        for (void* q : {(void*)din, (void*)dout, (void*)darg, (void*)dcsr, (void*)db, (void*)de}) WK_CUDA(cudaFree(q));
    }
}

/// One pair of the rows hx, `shift` (0..7) elements into the data, given once by CSR offsets (rule
/// G6: a direct pair) and as 64 overlapping copies by begin/end arrays (rule G1 or G11: listed
/// chunks, most copies on the no-room path's warps): the sum and the ArgMax give the same bits both ways and
/// at every shift (*wantSum, *wantArg: shift 0's, set and checked against the host at shift 0).
template <typename T> static void direct_same_bits(const std::vector<T>& hx, int shift, T* wantSum,
                                                   warpkit::ValueIndex<T>* wantArg, const char* what) {
    namespace wkd = warpkit::detail;
    const int copies = 64;
    const long long len = (long long)hx.size(), items = len + 8;
    const wkd::SegmentPlan csrPlan = wkd::segmentPlan(wkd::SegReduce, (int)sizeof(T), 1, 1, items, true);
    const wkd::SegmentPlan listPlan = wkd::segmentPlan(wkd::SegReduce, (int)sizeof(T), 1, copies, items, false);
    cr_assert(len > csrPlan.longRows && len <= csrPlan.directRows && len > listPlan.longRows &&
                  (listPlan.directRows == 0 || len > listPlan.directRows), // G1, or G11 past its directRows
              "%s len %lld: not direct by CSR (rule %s) and listed by begin/end arrays (rule %s)", what, len,
              wkd::kSegmentRules[csrPlan.rule].id, wkd::kSegmentRules[listPlan.rule].id);
    T* din = wk_alloc<T>(items);
    T* dout = wk_alloc<T>(copies);
    auto* darg = wk_alloc<warpkit::ValueIndex<T>>(copies);
    long long *db = wk_alloc<long long>(copies), *de = wk_alloc<long long>(copies), *dcsr = wk_alloc<long long>(2);
    wk_poison(din, items);
    wk_poison(dout, copies);
    wk_poison(darg, copies); // downloaded whole: ValueIndex's padding bytes are never written
    wk_upload(din + shift, hx.data(), len);
    const std::vector<long long> b(copies, shift), e(copies, shift + len);
    const long long csr[2] = {shift, shift + len};
    wk_upload(db, b.data(), copies);
    wk_upload(de, e.data(), copies);
    wk_upload(dcsr, csr, 2);
    auto run = [&](auto offs, long long segs) { reduce_calls<false>((const T*)din, dout, darg, items, offs, segs, 0); };
    std::vector<T> got(copies);
    std::vector<warpkit::ValueIndex<T>> arg(copies);
    run(warpkit::segmentBounds((const long long*)db, (const long long*)de), (long long)copies);
    wk_download(got.data(), dout, copies);
    wk_download(arg.data(), darg, copies);
    run((const long long*)dcsr, 1ll);
    T csrSum;
    warpkit::ValueIndex<T> csrArg;
    wk_download(&csrSum, dout, 1);
    wk_download(&csrArg, darg, 1);
    if (shift == 0) {
        *wantSum = csrSum;
        *wantArg = csrArg;
        double sum = 0, asum = 0;
        for (const T& v : hx) sum += wk_to_double(v), asum += fabs(wk_to_double(v));
        const double tol = (double)(len + 40) * 0x1p-24 * asum / (1 + fabs(sum)) + wk_eps<T>();
        cr_assert(wk_close(wk_to_double(csrSum), sum, tol), "%s len %lld: sum %.9g want %.9g", what, len,
                  wk_to_double(csrSum), sum);
        const long long at =
            std::max_element(hx.begin(), hx.end(),
                             [](const T& x, const T& y) { return wk_to_double(x) < wk_to_double(y); }) -
            hx.begin();
        cr_assert(csrArg.index == (int)at, "%s len %lld: ArgMax index %d want %lld", what, len, csrArg.index, at);
    }
    // value and index apart: ValueIndex<double> / <__half> have padding bytes no kernel writes
    auto sameArg = [](const warpkit::ValueIndex<T>& a, const warpkit::ValueIndex<T>& b) {
        return memcmp(&a.value, &b.value, sizeof(T)) == 0 && a.index == b.index;
    };
    cr_assert(memcmp(&csrSum, wantSum, sizeof(T)) == 0 && sameArg(csrArg, *wantArg),
              "%s len %lld shift %d: CSR sum %a, at shift 0 %a", what, len, shift, wk_to_double(csrSum),
              wk_to_double(*wantSum));
    for (int c = 0; c < copies; ++c)
        cr_assert(memcmp(&got[c], &csrSum, sizeof(T)) == 0 && sameArg(arg[c], csrArg),
                  "%s len %lld shift %d copy %d: sum %a, CSR %a; ArgMax %d, CSR %d", what, len, shift, c,
                  wk_to_double(got[c]), wk_to_double(csrSum), arg[c].index, csrArg.index);
    for (void* q : {(void*)din, (void*)dout, (void*)darg, (void*)db, (void*)de, (void*)dcsr}) WK_CUDA(cudaFree(q));
}

/// Direct pairs (rule G6: a block a pair of 257 to 16384 rows, read straight from the offsets) in
/// 8-byte and 16-bit types: mean 4096 and every boundary length against the host (double, long
/// long, int offsets, misaligned), and the same bits as listed chunks (direct_same_bits) in double
/// and __half at every misalignment.
Test(device_segment, direct_pairs_wide_and_narrow_types) {
    WK_REQUIRE_GPU();
    for (int d : {4, 7}) {
        wk_rng r = wk_rng_make(0xd1ec + d);
        const std::vector<long long> off = distribution(d, wk_quick() ? 40000 : 200000, &r);
        const long long segs = (long long)off.size() - 1, items = off.back();
        const warpkit::detail::SegmentPlan p =
            warpkit::detail::segmentPlan(warpkit::detail::SegReduce, 8, 1, segs, items, true);
        cr_assert(p.directRows > p.longRows, "%s: the plan (rule %s) has no direct pairs", kDistName[d],
                  warpkit::detail::kSegmentRules[p.rule].id);
        char what[96];
        snprintf(what, sizeof what, "%s double", kDistName[d]);
        reduce_case<double>(off, items, d == 4, 1, true, &r, what);
        snprintf(what, sizeof what, "%s long long", kDistName[d]);
        reduce_case<long long>(off, items, d == 7, 1, false, &r, what);
    }
    wk_rng r = wk_rng_make(0xd1ed);
    for (long long len : {2044ll, 9001ll, 16384ll}) {
        std::vector<double> hd(len);
        std::vector<__half> hh(len);
        for (auto& v : hd) v = wk_uniform(&r, -3, 3) * (double)(1 << wk_int(&r, 0, 30)); // the order shows in bits
        for (auto& v : hh) v = wk_from_double<__half>(wk_uniform(&r, -3, 3) * (double)(1 << wk_int(&r, 0, 8)));
        double wantD = 0;
        __half wantH{};
        warpkit::ValueIndex<double> argD{};
        warpkit::ValueIndex<__half> argH{};
        for (int shift = 0; shift < 8; ++shift) {
            direct_same_bits<double>(hd, shift, &wantD, &argD, "double");
            direct_same_bits<__half>(hh, shift, &wantH, &argH, "half");
        }
    }
}

/// Rule G6's plan for these CSR offsets (reduce, `elemBytes`-byte values, one head), asserted G6.
static void expect_g6(const std::vector<long long>& off, long long items, int elemBytes, bool csr, const char* what) {
    namespace wkd = warpkit::detail;
    const wkd::SegmentPlan p = wkd::segmentPlan(wkd::SegReduce, elemBytes, 1, (long long)off.size() - 1, items, csr);
    cr_assert(strcmp(wkd::kSegmentRules[p.rule].id, "G6") == 0 && p.directRows > 0 && p.team == 0 && !p.flat,
              "%s: the plan is rule %s (team %d), not G6", what, wkd::kSegmentRules[p.rule].id, p.team);
}

/// Rule G6 runs every segment on the direct kernel: empty and short ones (1 to 256 rows, which
/// the group kernel took before) among direct and listed ones (past 16384 rows, 32768 for the
/// reductions of 16-bit values: the chunk
/// kernels, the list built by the direct kernel), against the host for every reduction, log-sum-
/// exp and the types of the family, by CSR (int and long long) and begin/end arrays; and a G6 call
/// whose list stays empty: no segment past 16384 rows, all segments empty, and items <= 16384 (no
/// list at all: one kernel).
Test(device_segment, g6_short_empty_and_listed_segments) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0x96);
    std::vector<long long> len;
    const long long shortLens[] = {0, 1, 2, 7, 31, 32, 33, 100, 255, 256, 257, 0, 0};
    const long long longLens[] = {16384, 16385, 40000, 70001, 5000, 8191, 32768, 20000};
    for (int rep = 0; rep < 6; ++rep) {
        for (long long l : shortLens) len.push_back(l);
        len.push_back(longLens[rep % 8]);
        len.push_back(longLens[(rep + 3) % 8]);
    }
    len.push_back(200000); // and one of 13 chunks: the mean past 4608, where G6 takes 4-byte values
    std::vector<long long> off(len.size() + 1, 0);
    for (size_t i = 0; i < len.size(); ++i) off[i + 1] = off[i] + len[i];
    const long long items = off.back();
    expect_g6(off, items, 4, true, "short, empty and listed");
    expect_g6(off, items, 4, false, "short, empty and listed by begin/end");
    reduce_case<float>(off, items, true, 1, true, &r, "G6 short, empty and listed float int");
    reduce_case<float>(off, items, false, 3, false, &r, "G6 short, empty and listed float begin/end", true);
    reduce_case<__half>(off, items, false, 1, true, &r, "G6 short, empty and listed half");
    // 16-bit values: direct pairs and chunks of 32768 rows (16385, 20000, 32768 direct; 40000 and
    // 70001 listed in 2 and 3 chunks), the chunk kernel's 32 loads in flight (sm_90)
    const warpkit::detail::SegmentPlan p16 =
        warpkit::detail::segmentPlan(warpkit::detail::SegReduce, 2, 1, (long long)len.size(), items, true);
    cr_assert(p16.directRows == 32768 && p16.chunkRows == 32768, "16-bit G6: directRows %lld chunkRows %lld",
              p16.directRows, p16.chunkRows);
    reduce_case<__nv_bfloat16>(off, items, true, 3, true, &r, "G6 short, empty and listed bf16");
    reduce_case<__half>(off, items, false, 2, false, &r, "G6 short, empty and listed half begin/end", true);
    reduce_case<double>(off, items, true, 1, false, &r, "G6 short, empty and listed double");
    reduce_case<long long>(off, items, false, 0, false, &r, "G6 short, empty and listed long long");
    softmax_case<float>(off, items, 1, false, 1, true, &r, "G6 short, empty and listed (log-sum-exp)");
    softmax_case<__nv_bfloat16>(off, items, 1, true, 0, false, &r, "G6 short, empty and listed bf16 (log-sum-exp)");
    // the list stays empty: every segment of at most 16384 rows (some short, some empty)
    std::vector<long long> none(1, 0);
    for (int s = 0; s < 300; ++s)
        none.push_back(none.back() + (s % 5 == 0 ? 0 : s % 5 == 1 ? 17 : wk_int(&r, 4000, 16384)));
    expect_g6(none, none.back(), 4, true, "nothing listed");
    reduce_case<float>(none, none.back(), false, 2, true, &r, "G6 nothing listed");
    // every segment empty (CSR offsets all equal, rows in none of them)
    const std::vector<long long> empty(101, 5000);
    expect_g6(empty, 600000, 4, true, "all empty");
    reduce_case<float>(empty, 600000, true, 0, false, &r, "G6 all empty");
    // items <= 16384: no segment can be listed, the direct kernel alone
    const std::vector<long long> small = {0, 3, 3, 16000}; // 3 segments: mean 5333
    expect_g6(small, 16000, 4, true, "items <= directRows");
    reduce_case<float>(small, 16000, false, 1, true, &r, "G6 items <= directRows");
    reduce_case<float>(small, 16000, true, 2, false, &r, "G6 items <= directRows begin/end", true);
    softmax_case<float>(small, 16000, 1, true, 3, true, &r, "G6 items <= directRows (log-sum-exp)");
}

/// 8 copies of a row of `len` values (whose sum shows the order in its bits) at shifts 0..7: copy c
/// after a gap segment of gap + c zeros and before `ones` segments of one zero each, by CSR offsets.
struct Copies {
    std::vector<float> row, hx;
    std::vector<long long> off, copies, zeros; // CSR offsets; the copies' segments; segments of zeros
};
static Copies copies_at_shifts(long long len, long long gap, int ones, wk_rng* r) {
    Copies c;
    c.row.resize(len);
    for (auto& v : c.row) v = (float)wk_uniform(r, -3, 3) * (float)(1 << wk_int(r, 0, 20));
    c.off.push_back(0);
    for (int k = 0; k < 8; ++k) {
        c.hx.resize(c.hx.size() + gap + k, 0.0f);
        c.off.push_back((long long)c.hx.size()); // the gap
        if (gap > 0) c.zeros.push_back((long long)c.off.size() - 2);
        c.hx.insert(c.hx.end(), c.row.begin(), c.row.end());
        c.off.push_back((long long)c.hx.size()); // the copy
        c.copies.push_back((long long)c.off.size() - 2);
        for (int o = 0; o < ones; ++o) {
            c.hx.push_back(0.0f);
            c.off.push_back((long long)c.hx.size());
            if (o == 0) c.zeros.push_back((long long)c.off.size() - 2);
        }
    }
    return c;
}

/// The sum and ArgMax of the copies by CSR and by begin/end arrays: the first copy's against the
/// host, every copy's the same bits as the first's, the segments of zeros sum 0 with ArgMax 0.
static void copies_same_bits(const Copies& c, float* firstSum = nullptr,
                             warpkit::ValueIndex<float>* firstArg = nullptr) {
    const std::vector<float>&hx = c.hx, &row = c.row;
    const std::vector<long long>&off = c.off, &copies = c.copies, &zeros = c.zeros;
    const long long items = (long long)hx.size(), segs = (long long)off.size() - 1, len = (long long)row.size();
    float* din = wk_alloc<float>(items);
    float* dout = wk_alloc<float>(segs);
    auto* darg = wk_alloc<warpkit::ValueIndex<float>>(segs);
    long long* doff = wk_alloc<long long>(off.size());
    wk_upload(din, hx.data(), items);
    wk_upload(doff, off.data(), off.size());
    auto run = [&](auto offs, std::vector<float>* sum, std::vector<warpkit::ValueIndex<float>>* arg) {
        wk_poison(dout, segs);
        wk_poison(darg, segs);
        reduce_calls<false>((const float*)din, dout, darg, items, offs, segs, 0);
        sum->resize(segs);
        arg->resize(segs);
        wk_download(sum->data(), dout, segs);
        wk_download(arg->data(), darg, segs);
    };
    std::vector<float> csr, bnd;
    std::vector<warpkit::ValueIndex<float>> csrArg, bndArg;
    run((const long long*)doff, &csr, &csrArg);
    run(warpkit::segmentBounds((const long long*)doff, (const long long*)doff + 1), &bnd, &bndArg);
    double sum = 0, asum = 0;
    for (float v : row) sum += v, asum += fabs(v);
    const long long at = std::max_element(row.begin(), row.end()) - row.begin(), k0 = copies[0];
    cr_assert(fabs(csr[k0] - sum) <= (double)(len + 40) * 0x1p-24 * asum, "len %lld: sum %.9g want %.9g", len, csr[k0],
              sum);
    cr_assert(csrArg[k0].index == (int)at, "len %lld: ArgMax %d want %lld", len, csrArg[k0].index, at);
    for (const auto* v : {&csr, &bnd}) {
        const auto& g = *v;
        const auto& ga = v == &csr ? csrArg : bndArg;
        for (long long k : copies)
            cr_assert(memcmp(&g[k], &csr[k0], 4) == 0 && memcmp(&ga[k], &csrArg[k0], 8) == 0,
                      "len %lld segment %lld (%s): sum %a ArgMax %d, the first copy %a %d", len, k,
                      v == &csr ? "CSR" : "begin/end", g[k], ga[k].index, csr[k0], csrArg[k0].index);
        for (long long k : zeros)
            cr_assert(g[k] == 0.0f && ga[k].index == 0, "len %lld zeros %lld: sum %g ArgMax %d", len, k, g[k],
                      ga[k].index);
    }
    if (firstSum != nullptr) *firstSum = csr[k0];
    if (firstArg != nullptr) *firstArg = csrArg[k0];
    for (void* q : {(void*)din, (void*)dout, (void*)darg, (void*)doff}) WK_CUDA(cudaFree(q));
}

/// Under G6 a short segment's order depends on its length alone: the same rows (values whose
/// sum shows the order in its bits) at 8 alignments in one call, by CSR and by begin/end arrays,
/// give the same sum and ArgMax bits, for lengths 1 to 256 (the group kernel's before G6 ran them
/// on the direct kernel) and 257 to 16384.
Test(device_segment, g6_short_segments_same_bits_any_alignment) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0x97);
    const long long lens[] = {1, 2, 5, 31, 32, 33, 64, 100, 200, 255, 256, 257, 3000, 16384};
    for (long long len : lens) { // each copy after a gap of 9300 + shift zeros: the mean stays past 4608
        const Copies c = copies_at_shifts(len, 9300, 0, &r);
        expect_g6(c.off, (long long)c.hx.size(), 4, true, "copies");
        copies_same_bits(c);
    }
}

/// Overlapping segments by begin/end arrays (b, e), the first `copies` of them the one pair `single`
/// (CSR offsets of one segment): sum, max, log-sum-exp and ArgMax of every copy the same bits as
/// the pair's by CSR (that one against the host too), every other segment its own results.
static void overlapping_copies_check(const std::vector<float>& hx, const std::vector<long long>& b,
                                     const std::vector<long long>& e, long long copies,
                                     const std::vector<long long>& single) {
    const long long items = (long long)hx.size(), segs = (long long)b.size();
    float* din = wk_alloc<float>(items);
    float* dout = wk_alloc<float>(3 * segs);
    auto* darg = wk_alloc<warpkit::ValueIndex<float>>(segs);
    long long *db = wk_alloc<long long>(segs), *de = wk_alloc<long long>(segs), *dcsr = wk_alloc<long long>(2);
    wk_upload(din, hx.data(), items);
    wk_upload(db, b.data(), segs);
    wk_upload(de, e.data(), segs);
    wk_upload(dcsr, single.data(), 2);
    auto run = [&](auto offs, long long n) {
        wk_poison(dout, 3 * segs);
        wk_poison(darg, segs);
        reduce_calls<true>((const float*)din, dout, darg, items, offs, n, segs);
    };
    run((const long long*)dcsr, 1ll);
    float want[3];
    warpkit::ValueIndex<float> wantArg;
    wk_download(&want[0], dout, 1);
    wk_download(&want[1], dout + segs, 1);
    wk_download(&want[2], dout + 2 * segs, 1);
    wk_download(&wantArg, darg, 1);
    run(warpkit::segmentBounds((const long long*)db, (const long long*)de), segs);
    std::vector<float> got(3 * segs);
    std::vector<warpkit::ValueIndex<float>> arg(segs);
    wk_download(got.data(), dout, got.size());
    wk_download(arg.data(), darg, arg.size());
    double sum = 0, asum = 0;
    for (long long i = single[0]; i < single[1]; ++i) sum += hx[i], asum += fabs(hx[i]);
    cr_assert(fabs(want[0] - sum) <= (double)(single[1] - single[0] + 40) * 0x1p-24 * asum, "CSR sum %.9g want %.9g",
              want[0], sum);
    for (long long c = 0; c < copies; ++c)
        cr_assert(memcmp(&got[c], &want[0], 4) == 0 && memcmp(&got[segs + c], &want[1], 4) == 0 &&
                      memcmp(&got[2 * segs + c], &want[2], 4) == 0 && memcmp(&arg[c], &wantArg, sizeof wantArg) == 0,
                  "copy %lld: sum/max/lse %a %a %a ArgMax %d, CSR %a %a %a %d", c, got[c], got[segs + c],
                  got[2 * segs + c], arg[c].index, want[0], want[1], want[2], wantArg.index);
    for (long long s = copies; s < segs; ++s) {
        const Seg g = clip(b[s], e[s], items);
        double ss = 0, as = 0, mx = -INFINITY;
        long long am = -1;
        for (long long i = 0; i < g.n; ++i) {
            ss += hx[g.b + i];
            as += fabs(hx[g.b + i]);
            if (am < 0 || hx[g.b + i] > mx) mx = hx[g.b + i], am = i;
        }
        cr_assert(fabs(got[s] - ss) <= (double)(g.n + 40) * 0x1p-24 * as && got[segs + s] == (float)mx &&
                      arg[s].index == (int)am && (g.n > 0 || (got[s] == 0.0f && got[2 * segs + s] == -INFINITY)),
                  "segment %lld (%lld rows): sum %g max %g lse %g ArgMax %d, want %g %g %lld", s, g.n, got[s],
                  got[segs + s], got[2 * segs + s], arg[s].index, ss, mx, am);
    }
    for (void* q : {(void*)din, (void*)dout, (void*)darg, (void*)db, (void*)de, (void*)dcsr}) WK_CUDA(cudaFree(q));
}

/// G6 with overlapping segments past the room: 140 begin/end copies of one pair of 299995 rows (19
/// chunks each; the workspace, sized for segments that do not overlap, has room for 8 of them)
/// among a few short and empty segments. The copies that find no room are folded by their direct
/// kernel block with the chunk kernels' order: every copy gives the same bits for sum, max,
/// log-sum-exp and ArgMax, the same as the pair by CSR alone (listed, with room), and the short
/// and empty segments their own results.
Test(device_segment, g6_overlapping_past_the_room) {
    WK_REQUIRE_GPU();
    const long long items = 700000, copies = 140, segs = copies + 4; // mean past 4608: G6
    std::vector<float> hx(items);
    wk_rng r = wk_rng_make(0x98);
    for (auto& v : hx) v = (float)wk_uniform(&r, -3, 3) * (float)(1 << wk_int(&r, 0, 12));
    std::vector<long long> b(segs, 3), e(segs, items - 2);
    b[copies] = 10, e[copies] = 10;         // empty
    b[copies + 1] = 50, e[copies + 1] = 40; // end below begin: empty
    b[copies + 2] = 7, e[copies + 2] = 8;   // one row
    b[copies + 3] = 100, e[copies + 3] = 300;
    const std::vector<long long> single = {3, items - 2};
    {
        std::vector<long long> asCsr(b.begin(), b.end());
        asCsr.push_back(items);
        expect_g6(asCsr, items, 4, false, "overlapping copies");
        expect_g6(single, items, 4, true, "one pair by CSR");
        const long long room = warpkit::detail::segRoom(warpkit::detail::SegReduce, 4, 1, segs, items, false).chunks;
        cr_assert(room < copies * 43, "room for every copy (%lld chunks): no copy would be folded unlisted", room);
    }
    overlapping_copies_check(hx, b, e, copies, single);
}

/// CSR offsets of the lengths `len`.
static std::vector<long long> csr_of(const std::vector<long long>& len) {
    std::vector<long long> off(len.size() + 1, 0);
    for (size_t i = 0; i < len.size(); ++i) off[i + 1] = off[i] + len[i];
    return off;
}

/// Rule G11's plan for these offsets (reduce and log-sum-exp, `elemBytes`-byte values, one head),
/// asserted: G6's direct path with teams of `team` lanes a segment.
static void expect_g11(const std::vector<long long>& off, long long items, int elemBytes, bool csr, int team,
                       const char* what) {
    namespace wkd = warpkit::detail;
    for (wkd::SegmentKind k : {wkd::SegReduce, wkd::SegLogSumExp}) {
        const wkd::SegmentPlan p = wkd::segmentPlan(k, elemBytes, 1, (long long)off.size() - 1, items, csr);
        cr_assert(p.directRows > 0 && p.team == team, "%s: the plan is rule %s team %d, not G11 team %d", what,
                  wkd::kSegmentRules[p.rule].id, p.team, team);
    }
}

/// The checks of the team rules' tests (G11, G12) on these offsets, for `bytes`-byte values: every
/// reduction and the log-sum-exp against the host, by CSR (int and long long) and begin/end arrays,
/// misaligned, NaN and inf (fp32 and int, or fp16 and bf16).
static void team_cases(const std::vector<long long>& off, long long items, int bytes, wk_rng* r, const char* what) {
    if (bytes == 4) {
        reduce_case<float>(off, items, true, 1, true, r, what);
        reduce_case<float>(off, items, false, 3, true, r, what, true);
        reduce_case<int>(off, items, false, 2, false, r, what);
        softmax_case<float>(off, items, 1, false, 1, true, r, what);
    } else {
        reduce_case<__half>(off, items, false, 1, true, r, what);
        reduce_case<__nv_bfloat16>(off, items, true, 3, true, r, what, true);
        softmax_case<__nv_bfloat16>(off, items, 1, true, 1, false, r, what);
    }
}

/// Rule G11 (teams of 8, 16 and 32 lanes a segment, medium on average) for fp32 and 16-bit values:
/// fillers around the team's mean and single segments on both sides of the team's width, of
/// 1024 rows, of directRows (the team's fold up to it, listed past it) and
/// of one to three chunks, among empty ones, against the host for every reduction and log-sum-exp,
/// by CSR (int and long long) and begin/end arrays, misaligned, NaN and inf.
Test(device_segment, g11_team_paths) {
    WK_REQUIRE_GPU();
    namespace wkd = warpkit::detail;
    wk_rng r = wk_rng_make(0x11a);
    struct Team {
        int bytes, team;
        long long fill, count; // fillers: count segments of 0 .. 2 fill rows
    };
    const Team teams[] = {{4, 8, 120, 3000}, {4, 16, 300, 2000}, {4, 32, 1000, 1000},
                          {2, 8, 150, 4000}, {2, 16, 500, 2000}, {2, 32, 1200, 1500}};
    for (const Team& tm : teams) {
        const wkd::SegmentPlan p = wkd::segmentPlan(wkd::SegReduce, tm.bytes, 1, 1000, 1000 * tm.fill, true);
        const long long T = tm.team, D = p.directRows, C = p.chunkRows;
        const long long edges[] = {1, T - 1, T, T + 1, 1023, 1024, 1025, D - 1, D, D + 1, C, C + 1, 2 * C + 7};
        std::vector<long long> len;
        for (long long e : edges) len.push_back(e), len.push_back(0);
        for (long long k = 0; k < (wk_quick() ? tm.count / 2 : tm.count); ++k)
            len.push_back(wk_int(&r, 0, 2 * tm.fill));
        for (size_t i = 1; i < len.size(); i += 7) std::swap(len[i], len[len.size() - i]); // edges among fillers
        const std::vector<long long> off = csr_of(len);
        const long long items = off.back();
        char what[96];
        snprintf(what, sizeof what, "G11 team %d, %d-byte values", tm.team, tm.bytes);
        expect_g11(off, items, tm.bytes, true, tm.team, what);
        expect_g11(off, items, tm.bytes, false, tm.team, what);
        team_cases(off, items, tm.bytes, &r, what);
    }
}

/// Under G11 a segment's order depends on its length alone: the same rows at 8 alignments, by CSR
/// and begin/end arrays, give the same sum and ArgMax bits for each team, on both sides of its
/// width, of 1024 rows and of directRows (the chunk kernels past it).
Test(device_segment, g11_same_bits_any_alignment) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0x11b);
    for (int team : {8, 16, 32}) {
        const long long mean = team == 8 ? 120 : team == 16 ? 300 : 1000;
        const long long D =
            warpkit::detail::segmentPlan(warpkit::detail::SegReduce, 4, 1, 1000, 1000 * mean, true).directRows;
        for (long long len : {1ll, 7ll, (long long)team + 1, 100ll, 1024ll, 1025ll, D, D + 1, 20000ll}) {
            const long long gap = std::max(2 * mean - len, mean / 2);
            const int ones = (int)std::max(0ll, (gap + len - 2 * mean) / (mean - 1));
            const Copies c = copies_at_shifts(len, gap, ones, &r);
            char what[64];
            snprintf(what, sizeof what, "copies of %lld rows", len);
            expect_g11(c.off, (long long)c.hx.size(), 4, true, team, what);
            copies_same_bits(c);
        }
    }
}

/// G11 with overlapping segments past the room: 8000 (quick: 2000) begin/end copies of one pair of
/// 100000 rows (7 chunks; the workspace, sized for segments that do not overlap, holds some of them)
/// among short segments for teams of 8 and of 32 lanes: the copies that find no room are folded by
/// their warp with the chunk kernels' math; every copy gives the same bits as the pair by CSR alone.
Test(device_segment, g11_overlapping_past_the_room) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0x11c);
    struct Case {
        int team;
        long long copies, shorts, fill;
    };
    const long long q = wk_quick() ? 4 : 1; // make sanitize: a quarter of the copies and short segments
    for (const Case& k : {Case{8, 8000 / q, 100000 / q, 120}, Case{32, 8000 / q, 20000 / q, 1000}}) {
        const long long pair = 100000;
        std::vector<long long> b, e;
        for (long long c = 0; c < k.copies; ++c) b.push_back(3), e.push_back(3 + pair);
        long long at = 3 + pair;
        for (long long s = 0; s < k.shorts; ++s) {
            const long long n = wk_int(&r, 0, 2 * k.fill);
            b.push_back(at), e.push_back(at + n);
            at += n;
        }
        const long long items = at, segs = k.copies + k.shorts;
        std::vector<float> hx(items);
        for (auto& v : hx) v = (float)wk_uniform(&r, -3, 3) * (float)(1 << wk_int(&r, 0, 12));
        {
            std::vector<long long> asCsr(b.begin(), b.end());
            asCsr.push_back(items);
            expect_g11(asCsr, items, 4, false, k.team, "overlapping copies");
            const long long room =
                warpkit::detail::segRoom(warpkit::detail::SegReduce, 4, 1, segs, items, false).chunks;
            cr_assert(room < k.copies * 7, "room for every copy (%lld chunks): no copy would be folded unlisted", room);
        }
        overlapping_copies_check(hx, b, e, k.copies, {3, 3 + pair});
    }
}

/// Rule G12's plan for these offsets (reduce and log-sum-exp, `elemBytes`-byte values, one head),
/// asserted: G11's teams of 8 lanes over pages of 64 segments a block.
static void expect_g12(const std::vector<long long>& off, long long items, int elemBytes, bool csr, const char* what) {
    namespace wkd = warpkit::detail;
    for (wkd::SegmentKind k : {wkd::SegReduce, wkd::SegLogSumExp}) {
        const wkd::SegmentPlan p = wkd::segmentPlan(k, elemBytes, 1, (long long)off.size() - 1, items, csr);
        cr_assert(p.directRows > 0 && p.team == 8 && p.page == 64, "%s: the plan is rule %s team %d page %d, not G12",
                  what, wkd::kSegmentRules[p.rule].id, p.team, p.page);
    }
}

/// Rule G12 (pages of 64 segments a block, teams of 8 lanes, short to medium on average) for fp32
/// and 16-bit values: fillers of 0 to 2 fill rows, runs of 300 empty segments (whole empty pages)
/// with a long segment among them, single segments on both sides of the team's width, of 64 rows,
/// of directRows (the team's fold up to it, listed past it) and of one to three chunks, and a last
/// page that is partial, against the host for every reduction and log-sum-exp, by CSR (int and long
/// long) and begin/end arrays, misaligned, NaN and inf.
Test(device_segment, g12_page_paths) {
    WK_REQUIRE_GPU();
    namespace wkd = warpkit::detail;
    wk_rng r = wk_rng_make(0x12a);
    struct Fill {
        int bytes;
        long long fill, count; // fillers: count segments of 0 .. 2 fill rows
    };
    const Fill fills[] = {{4, 60, 3500}, {4, 70, 3000}, {2, 30, 5000}, {2, 60, 4000}}; // means 47 to 90
    for (const Fill& f : fills) {
        const wkd::SegmentPlan p = wkd::segmentPlan(wkd::SegReduce, f.bytes, 1, 1000, 1000 * 80, true);
        const long long D = p.directRows, C = p.chunkRows;
        const long long edges[] = {1, 7, 8, 9, 63, 64, 65, 1023, D, D + 1, C, C + 1, 2 * C + 7};
        std::vector<long long> len;
        for (long long e : edges) len.push_back(e), len.push_back(0);
        for (long long k = 0; k < f.count; ++k) len.push_back(wk_int(&r, 0, 2 * f.fill));
        for (size_t i = 1; i < len.size(); i += 7) std::swap(len[i], len[len.size() - i]); // edges among fillers
        for (int run = 0; run < 2; ++run) { // empty pages, one run holding a long segment
            const size_t at = len.size() / (2 + run);
            len.insert(len.begin() + (long long)at, 300, 0ll);
            if (run == 1) len[at + 150] = 3 * C + 5;
        }
        if (len.size() % 64 == 0) len.push_back(1); // a partial last page
        const std::vector<long long> off = csr_of(len);
        const long long items = off.back();
        char what[96];
        snprintf(what, sizeof what, "G12 fill %lld, %d-byte values", f.fill, f.bytes);
        expect_g12(off, items, f.bytes, true, what);
        expect_g12(off, items, f.bytes, false, what);
        team_cases(off, items, f.bytes, &r, what);
    }
}

/// Under G12 a segment's order is G11's for a team of 8: the same rows, each at 8 alignments by CSR
/// and begin/end arrays, give the same sum and ArgMax bits at a mean of 80 (G12) as at a mean of
/// 120 (G11, teams of 8), on both sides of the team's width, of 64 rows and of directRows (the chunk
/// kernels past it).
Test(device_segment, g12_same_bits_as_g11) {
    WK_REQUIRE_GPU();
    namespace wkd = warpkit::detail;
    wk_rng r = wk_rng_make(0x12b);
    for (long long len : {1ll, 7ll, 9ll, 64ll, 65ll, 100ll, 1024ll, 1025ll, 20000ll}) {
        float sum[2] = {0.0f, 0.0f};
        warpkit::ValueIndex<float> arg[2] = {};
        const wk_rng start = r;
        for (int m = 0; m < 2; ++m) {
            const long long mean = m == 0 ? 80 : 120;
            const long long gap = std::max(2 * mean - len, mean / 2);
            const int ones = (int)std::max(0ll, (gap + len - 2 * mean) / (mean - 1));
            wk_rng same = start; // the same rows at both means
            const Copies c = copies_at_shifts(len, gap, ones, &same);
            r = same;
            char what[64];
            snprintf(what, sizeof what, "copies of %lld rows, mean %lld", len, mean);
            const long long segs = (long long)c.off.size() - 1, items = (long long)c.hx.size();
            const wkd::SegmentPlan p = wkd::segmentPlan(wkd::SegReduce, 4, 1, segs, items, true);
            if (m == 0) expect_g12(c.off, items, 4, true, what);
            else
                cr_assert(p.directRows > 0 && p.team == 8 && p.page == 0, "%s: the plan is rule %s, not G11 team 8",
                          what, wkd::kSegmentRules[p.rule].id);
            copies_same_bits(c, &sum[m], &arg[m]);
        }
        cr_assert(memcmp(&sum[0], &sum[1], 4) == 0 && memcmp(&arg[0], &arg[1], 8) == 0,
                  "%lld rows: G12 sum %a ArgMax %d, G11 %a %d", len, sum[0], arg[0].index, sum[1], arg[1].index);
    }
}

/// Rule G9's plan for these offsets (reduce, `elemBytes`-byte values, one head), asserted G9.
static void expect_g9(const std::vector<long long>& off, long long items, int elemBytes, bool csr, const char* what) {
    namespace wkd = warpkit::detail;
    const wkd::SegmentPlan p = wkd::segmentPlan(wkd::SegReduce, elemBytes, 1, (long long)off.size() - 1, items, csr);
    cr_assert(p.laneRows > 0 && !p.flat, "%s: the plan is rule %s, not G9", what, wkd::kSegmentRules[p.rule].id);
}

/// Rule G9 (a lane a segment, short on average): segments of 0 to 8 rows with lengths on both
/// sides of every path boundary among them (laneRows: a lane's own; past it the rest kernel's
/// warps; past longRows the chunk kernels, one to three chunks), against the host for every
/// reduction, log-sum-exp and the types of the family, by CSR (int and long long) and begin/end
/// arrays, misaligned; CSR offsets that go back; a call of at most laneRows items (the lane kernel
/// alone) and one of only empty segments; 32-bit integers too.
Test(device_segment, g9_lane_rest_and_listed_segments) {
    WK_REQUIRE_GPU();
    namespace wkd = warpkit::detail;
    wk_rng r = wk_rng_make(0x99);
    const wkd::SegmentPlan p = wkd::segmentPlan(wkd::SegReduce, 4, 1, 1000, 1000, true);
    cr_assert(p.laneRows > 0, "a mean of 1: rule %s, not G9", wkd::kSegmentRules[p.rule].id);
    const long long L = p.laneRows, R = p.longRows, C = p.chunkRows;
    const long long edges[] = {L - 1, L, L + 1, 100, R - 1, R, R + 1, C, C + 1, 2 * C + 7, 40000};
    std::vector<long long> len;
    for (int rep = 0; rep < (wk_quick() ? 1 : 3); ++rep)
        for (long long l : edges) {
            len.push_back(l);
            for (int k = 0; k < 3000; ++k) len.push_back(wk_int(&r, 0, 8));
        }
    const std::vector<long long> off = csr_of(len);
    const long long items = off.back();
    expect_g9(off, items, 4, true, "G9 edges");
    expect_g9(off, items, 4, false, "G9 edges by begin/end");
    expect_g9(off, items, 2, true, "G9 edges 16-bit");
    reduce_case<float>(off, items, true, 1, true, &r, "G9 float int");
    reduce_case<float>(off, items, false, 3, false, &r, "G9 float begin/end", true);
    reduce_case<__half>(off, items, false, 1, true, &r, "G9 half");
    reduce_case<__nv_bfloat16>(off, items, true, 2, true, &r, "G9 bf16");
    reduce_case<__nv_bfloat16>(off, items, false, 1, false, &r, "G9 bf16 begin/end", true);
    reduce_case<double>(off, items, true, 1, false, &r, "G9 double");
    reduce_case<long long>(off, items, false, 0, false, &r, "G9 long long");
    reduce_case<int>(off, items, true, 2, false, &r, "G9 int");
    softmax_case<float>(off, items, 1, false, 1, true, &r, "G9 (log-sum-exp)");
    softmax_case<__half>(off, items, 1, true, 0, false, &r, "G9 half (log-sum-exp)");
    // CSR offsets that go back: every 97th offset moved below the one before (that segment is
    // empty, the next one starts earlier and overlaps it)
    std::vector<long long> back = off;
    for (size_t i = 97; i + 1 < back.size(); i += 97) back[i] = std::max(0LL, back[i - 1] - 5);
    expect_g9(back, items, 4, true, "G9 offsets going back");
    reduce_case<float>(back, items, false, 2, true, &r, "G9 offsets going back");
    // at most laneRows items: no record, no list, the lane kernel alone
    const std::vector<long long> small = {0, 1, 1, 9, 9, 20, 30, 31, 40, 41, L};
    expect_g9(small, L, 4, true, "G9 items <= laneRows");
    reduce_case<float>(small, L, true, 3, true, &r, "G9 items <= laneRows");
    // every segment empty
    const std::vector<long long> empty(501, 1000);
    expect_g9(empty, 3000, 4, true, "G9 all empty");
    reduce_case<float>(empty, 3000, false, 1, false, &r, "G9 all empty");
}

/// Under G9 a segment's order depends on its length alone: the same rows (values whose sum shows
/// the order in its bits) at 8 alignments among short segments, by CSR and by begin/end arrays,
/// give the same sum and ArgMax bits, for lengths on the lane kernel's lanes (1 to laneRows), the
/// rest kernel's warps and the chunk kernels.
Test(device_segment, g9_same_bits_any_alignment) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0x9a);
    const long long lens[] = {1, 5, 63, 64, 65, 300, 1024, 1025, 20000};
    for (long long len : lens) { // each copy followed by 4000 segments of one row: a mean under 8
        const Copies c = copies_at_shifts(len, 0, 4000, &r);
        expect_g9(c.off, (long long)c.hx.size(), 4, true, "copies");
        copies_same_bits(c);
    }
}

/// G9 with overlapping segments past the room: 300 begin/end copies of one pair of 40000 rows (3
/// chunks each; the workspace, sized for segments that do not overlap, has room for some) among
/// 30000 short segments. The rest kernel lists the copies that find room and folds the others with
/// the chunk kernels' math: every copy gives the same bits for sum, max, log-sum-exp and ArgMax,
/// the same as the pair by CSR alone (rule G6: listed), and the short segments their own results.
Test(device_segment, g9_overlapping_past_the_room) {
    WK_REQUIRE_GPU();
    const long long copies = 300, shorts = 30000, pair = 40000;
    wk_rng r = wk_rng_make(0x9b);
    std::vector<long long> b, e;
    for (long long c = 0; c < copies; ++c) b.push_back(3), e.push_back(3 + pair);
    long long at = 3 + pair;
    for (long long k = 0; k < shorts; ++k) {
        const long long n = wk_int(&r, 0, 8);
        b.push_back(at), e.push_back(at + n);
        at += n;
    }
    const long long items = at, segs = copies + shorts;
    std::vector<float> hx(items);
    for (auto& v : hx) v = (float)wk_uniform(&r, -3, 3) * (float)(1 << wk_int(&r, 0, 12));
    {
        std::vector<long long> asCsr(b.begin(), b.end());
        asCsr.push_back(items);
        expect_g9(asCsr, items, 4, false, "overlapping copies");
        const long long room = warpkit::detail::segRoom(warpkit::detail::SegReduce, 4, 1, segs, items, false).chunks;
        cr_assert(room < copies * 3, "room for every copy (%lld chunks): no copy would be folded unlisted", room);
    }
    const std::vector<long long> single = {3, 3 + pair};
    overlapping_copies_check(hx, b, e, copies, single);
}

/// Rule G9's plan for the softmax of these CSR offsets (`elemBytes`-byte values, one head), asserted.
/// `lean`: its lean form (a mean up to 2: perLane kSegLaneLeanRows), else the staged one.
static void expect_g9_softmax(const std::vector<long long>& off, long long items, int elemBytes, const char* what,
                              bool lean = false) {
    namespace wkd = warpkit::detail;
    const wkd::SegmentPlan p = wkd::segmentPlan(wkd::SegSoftmax, elemBytes, 1, (long long)off.size() - 1, items, true);
    cr_assert(p.laneRows > 0 && !p.flat, "%s: the softmax's plan is rule %s, not G9", what,
              wkd::kSegmentRules[p.rule].id);
    cr_assert((p.perLane <= wkd::kSegLaneLeanRows) == lean, "%s: G9's %s form, not the %s one", what,
              lean ? "staged" : "lean", lean ? "lean" : "staged");
}

/// The softmax under G9 (a mean of 2 to 5, one head): runs of warp steps whose segments are staged
/// (0 to 8 rows back to back, more than 96 rows a step), too short to stage (0 to 3 rows), with
/// segments of 9 to 32 rows (a lane group's registers), with segments of 33 to 64 rows (a lane's
/// fold: the step is not staged), and single segments on both sides of every path boundary (the
/// rest kernel's warp, its windows, the chunk kernels), against the host for fp32 (int offsets,
/// misaligned, NaN and inf), half and bf16; a call of one warp step.
Test(device_segment, g9_softmax_lane_paths) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0x9c);
    std::vector<long long> len;
    const long long edges[] = {8, 9, 31, 32, 33, 63, 64, 65, 256, 257, 1024, 1025, 8193};
    for (long long l : edges) len.push_back(l);
    for (int rep = 0; rep < 2; ++rep) { // two: the edges' rows keep the mean under 5
        for (int k = 0; k < 3000; ++k) len.push_back(wk_int(&r, 0, 8));
        for (int k = 0; k < 3000; ++k) len.push_back(wk_int(&r, 0, 3));
        for (int k = 0; k < 3000; ++k) len.push_back(k % 6 == 0 ? wk_int(&r, 9, 32) : wk_int(&r, 0, 8));
        for (int k = 0; k < 3000; ++k) len.push_back(k % 40 == 0 ? wk_int(&r, 33, 64) : wk_int(&r, 2, 6));
    }
    const std::vector<long long> off = csr_of(len);
    const long long items = off.back();
    expect_g9_softmax(off, items, 4, "G9 softmax paths");
    expect_g9_softmax(off, items, 2, "G9 softmax paths 16-bit");
    softmax_case<float>(off, items, 1, true, 1, true, &r, "G9 softmax float");
    softmax_case<__half>(off, items, 1, false, 0, false, &r, "G9 softmax half");
    softmax_case<__nv_bfloat16>(off, items, 1, false, 3, true, &r, "G9 softmax bf16");
    const std::vector<long long> step = {0, 3, 7, 7, 15, 20, 21, 29, 40, 42, 50}; // one step, 10 segments
    expect_g9_softmax(step, 50, 4, "G9 one step");
    softmax_case<float>(step, 50, 1, false, 2, true, &r, "G9 one step");
}

/// The softmax under G9's lean form (a mean up to 2, one head): segments of 0 to 4 rows (a lane's
/// registers), 5 to 64 (a lane's fold and second read) among them, and single segments on both
/// sides of every path boundary (the rest kernel's warp, its windows, the chunk kernels), against
/// the host for fp32 (long long offsets, misaligned, NaN and inf), half (int offsets) and bf16.
Test(device_segment, g9_softmax_lean_paths) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0x9e);
    std::vector<long long> len;
    const long long edges[] = {4, 5, 63, 64, 65, 256, 257, 1024, 1025, 8193};
    for (long long l : edges) len.push_back(l);
    for (int k = 0; k < 20000; ++k) len.push_back(k % 200 == 0 ? wk_int(&r, 5, 64) : wk_int(&r, 0, k % 4 ? 1 : 4));
    const std::vector<long long> off = csr_of(len);
    const long long items = off.back();
    expect_g9_softmax(off, items, 4, "G9 lean paths", true);
    expect_g9_softmax(off, items, 2, "G9 lean paths 16-bit", true);
    softmax_case<float>(off, items, 1, false, 1, true, &r, "G9 lean float");
    softmax_case<__half>(off, items, 1, true, 0, false, &r, "G9 lean half");
    softmax_case<__nv_bfloat16>(off, items, 1, false, 3, true, &r, "G9 lean bf16");
}

/// Rule G10's plan for the softmax of these CSR offsets (`elemBytes`-byte values), asserted: a team
/// of `team` threads a segment.
static void expect_g10(const std::vector<long long>& off, int heads, int elemBytes, int team, const char* what) {
    namespace wkd = warpkit::detail;
    const long long items = off.back(), segs = (long long)off.size() - 1;
    const wkd::SegmentPlan p = wkd::segmentPlan(wkd::SegSoftmax, elemBytes, heads, segs, items, true);
    cr_assert(p.team == team, "%s: the softmax's plan is rule %s team %d, not G10 team %d", what,
              wkd::kSegmentRules[p.rule].id, p.team, team);
}

/// The softmax under G10 (long on average: a team a segment), one head with a warp, a block of 64
/// and of 256 a segment (16-bit values: 64), and 4 heads with a block of 64 and of 256 (16-bit: 64): fillers around the
/// team's mean length and single segments on both sides of each team's window and four windows (past them listed for
/// the block tier, and past 32768 elements for the slice tier), against the host for fp32 (NaN and inf, misaligned, int
/// offsets), half and bf16, two calls with the same bits (softmax_case); y at another alignment and in place with the
/// same bits (block_tier_bits).
Test(device_segment, g10_team_paths) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0x10a);
    const long long edges[] = {1,    31,   32,    33,    511,   512,   513,   1023,  1024, 1025,
                               1535, 1536, 1537,  2047,  2048,  2049,  4095,  4096,  4097, 6143,
                               6144, 6145, 12289, 24575, 24576, 24577, 32768, 32769, 70001};
    struct Team {
        int heads, team, team16; // the team for fp32 and for 16-bit values
        long long fill, count;   // fillers: count segments of 0 .. 2 fill rows
    };
    const Team teams[] = {{1, 32, 32, 150, 3000},
                          {1, 64, 64, 2000, 400},
                          {1, 256, 64, 4000, 300},
                          {4, 64, 64, 300, 300},
                          {4, 256, 64, 2500, 200}};
    for (int t = 0; t < 5; ++t) {
        const Team& tm = teams[t];
        std::vector<long long> len;
        for (long long e : edges) len.push_back(std::max(1LL, e / tm.heads)), len.push_back(0);
        for (long long k = 0; k < (wk_quick() ? tm.count / 3 : tm.count); ++k)
            len.push_back(wk_int(&r, 0, 2 * tm.fill));
        for (size_t i = 1; i < len.size(); i += 7) std::swap(len[i], len[len.size() - i]); // edges among fillers
        const std::vector<long long> off = csr_of(len);
        char what[96];
        snprintf(what, sizeof what, "G10 team %d heads %d", tm.team, tm.heads);
        expect_g10(off, tm.heads, 4, tm.team, what);
        expect_g10(off, tm.heads, 2, tm.team16, what);
        softmax_case<float>(off, off.back(), tm.heads, t % 2 == 0, 1 + t, true, &r, what);
        softmax_case<__half>(off, off.back(), tm.heads, false, t, t % 2 == 1, &r, what);
        softmax_case<__nv_bfloat16>(off, off.back(), tm.heads, true, 3, false, &r, what);
        block_tier_bits<float>(off, tm.heads, t % 4, &r, what);
        block_tier_bits<__nv_bfloat16>(off, tm.heads, 1 + t, &r, what);
    }
}

/// G10 with overlapping segments past the room: begin/end copies of one run [3, 3 + rows) (listed
/// past a team's four windows; the workspace, sized for segments that do not overlap, holds few), so
/// the copies without room are done by their team a head at a time (segTeamFold). Every copy writes
/// the run's softmax, near the host's, in each team and both kinds.
Test(device_segment, g10_overlapping_past_the_room) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0x10b);
    struct Case {
        int heads, team;
        long long rows, copies;
    };
    const Case cases[] = {
        {1, 32, 3000, 12}, {1, 64, 40000, 20}, {1, 256, 100000, 30}, {4, 64, 5000, 20}, {4, 256, 40000, 20}};
    for (const Case& c : cases) {
        const long long items = 3 + c.rows, n = items * c.heads;
        std::vector<long long> b(c.copies, 3), e(c.copies, 3 + c.rows);
        namespace wkd = warpkit::detail;
        const wkd::SegmentPlan p = wkd::segmentPlan(wkd::SegSoftmax, 4, c.heads, c.copies, items, false);
        cr_assert(p.team == c.team, "copies of %lld rows: rule %s team %d, not G10 team %d", c.rows,
                  wkd::kSegmentRules[p.rule].id, p.team, c.team);
        std::vector<float> hx(n);
        for (auto& v : hx) v = (float)wk_uniform(&r, -6, 6);
        float* dx = wk_alloc<float>(n);
        float* dy = wk_alloc<float>(n);
        long long* db = wk_alloc<long long>(c.copies);
        long long* de = wk_alloc<long long>(c.copies);
        wk_upload(dx, hx.data(), n);
        wk_upload(db, b.data(), c.copies);
        wk_upload(de, e.data(), c.copies);
        for (int kind = 0; kind < 2; ++kind) {
            auto call = [&](void* w, size_t* bytes) {
                return warpkit::segmentSoftmax((const float*)dx, dy, items, warpkit::segmentBounds(db, de), c.copies,
                                               c.heads, (warpkit::SoftmaxKind)kind, w, bytes);
            };
            size_t bytes;
            void* w = workspace(call, &bytes);
            wk_poison(dy, n);
            WK_CUDA(call(w, &bytes));
            WK_LAUNCHED();
            std::vector<float> got(n);
            wk_download(got.data(), dy, n);
            for (int h = 0; h < c.heads; ++h) {
                std::vector<double> x(c.rows), want;
                double lse;
                for (long long i = 0; i < c.rows; ++i) x[i] = hx[(3 + i) * c.heads + h];
                ref_softmax(x, kind, &want, &lse);
                for (long long i = 0; i < c.rows; ++i)
                    cr_assert(out_close<float>(got[(3 + i) * c.heads + h], want[i], out_tol<float>() * 4),
                              "copies of %lld rows, team %d, heads %d, kind %d: row %lld head %d: %.9g want %.9g",
                              c.rows, c.team, c.heads, kind, i, h, got[(3 + i) * c.heads + h], want[i]);
            }
            WK_CUDA(cudaFree(w));
        }
        for (void* q : {(void*)dx, (void*)dy, (void*)db, (void*)de}) WK_CUDA(cudaFree(q));
    }
}

/// Under G9 a segment's softmax depends on its length alone: 8 copies of one segment, each among
/// steps that are staged (neighbours of 4 to 8 rows) or not (neighbours of one row), at 8
/// alignments, give the same output bits, near the host's, for lengths of a lane, a lane group, a
/// lane's fold and the rest kernel; so do copies among neighbours of 0 to 2 rows (the lean form);
/// the call in place (y == x) gives the same bits.
Test(device_segment, g9_softmax_same_bits_staged_or_not) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0x9d);
    for (int lean = 0; lean < 2; ++lean)
        for (long long L : {1LL, 4LL, 5LL, 8LL, 9LL, 20LL, 32LL, 33LL, 64LL, 65LL}) {
            std::vector<float> row(L), hx;
            for (auto& v : row) v = (float)wk_uniform(&r, -6, 6);
            std::vector<long long> off = {0}, at;
            for (int k = 0; k < 8; ++k) {
                for (int f = 0; f < (lean ? 100 : 40) + k; ++f) { // the neighbours
                    const long long n = lean ? wk_int(&r, 0, 2) : k % 2 ? 1 : wk_int(&r, 4, 8);
                    for (long long i = 0; i < n; ++i) hx.push_back((float)wk_uniform(&r, -6, 6));
                    off.push_back((long long)hx.size());
                }
                at.push_back((long long)hx.size());
                hx.insert(hx.end(), row.begin(), row.end());
                off.push_back((long long)hx.size());
            }
            const long long items = (long long)hx.size(), segs = (long long)off.size() - 1;
            expect_g9_softmax(off, items, 4, "G9 copies", lean);
            float* dx = wk_alloc<float>(items);
            float* dy = wk_alloc<float>(items);
            long long* doff = wk_alloc<long long>(off.size());
            wk_upload(dx, hx.data(), items);
            wk_upload(doff, off.data(), off.size());
            size_t bytes;
            void* w = workspace(
                [&](void* ww, size_t* bb) {
                    return warpkit::segmentSoftmax((const float*)dx, dy, items, doff, segs, 1, warpkit::SoftmaxPlain,
                                                   ww, bb);
                },
                &bytes);
            wk_poison(dy, items);
            WK_CUDA(
                warpkit::segmentSoftmax((const float*)dx, dy, items, doff, segs, 1, warpkit::SoftmaxPlain, w, &bytes));
            WK_LAUNCHED();
            std::vector<float> got(items);
            wk_download(got.data(), dy, items);
            std::vector<double> x(row.begin(), row.end()), want;
            double lse;
            ref_softmax(x, 0, &want, &lse);
            for (long long i = 0; i < L; ++i)
                cr_assert(out_close<float>(got[at[0] + i], want[i], out_tol<float>()),
                          "length %lld row %lld: %.9g want %.9g", L, i, got[at[0] + i], want[i]);
            for (int k = 1; k < 8; ++k)
                cr_assert(memcmp(&got[at[k]], &got[at[0]], L * sizeof(float)) == 0,
                          "length %lld: copy %d (neighbours of %s) differs from copy 0", L, k,
                          k % 2 ? "one row" : "4-8 rows");
            // in place (y == x): the same bits
            std::vector<float> inPlace(items);
            wk_upload(dy, hx.data(), items);
            WK_CUDA(
                warpkit::segmentSoftmax((const float*)dy, dy, items, doff, segs, 1, warpkit::SoftmaxPlain, w, &bytes));
            WK_LAUNCHED();
            wk_download(inPlace.data(), dy, items);
            cr_assert(memcmp(inPlace.data(), got.data(), items * sizeof(float)) == 0, "length %lld: in place differs%s",
                      L, lean ? " (lean)" : "");
            for (void* q : {(void*)dx, (void*)dy, (void*)doff, w}) WK_CUDA(cudaFree(q));
        }
}

/// Overlapping softmax segments by begin/end arrays: 64 copies of a block-tier segment (5000 rows)
/// and 16 of a slice-tier one (64000 rows), more than the workspace has room for (it is sized for
/// segments that do not overlap), so some copies fall back to the chunk kernels or single warps.
/// Every copy writes the same segment's softmax (up to rounding); rows in neither stay poisoned.
Test(device_segment, overlapping_softmax_past_the_room) {
    WK_REQUIRE_GPU();
    const long long items = 70001, segs = 80;
    std::vector<long long> b(segs, 3), e(segs, 5003); // copies 0..63; 64..79 cover rows 6000..69999
    for (long long s = 64; s < segs; ++s) {
        b[s] = 6000;
        e[s] = 70000;
    }
    wk_rng r = wk_rng_make(0x0f);
    std::vector<float> hx(items);
    for (auto& v : hx) v = (float)wk_uniform(&r, -3, 3);
    float* dx = wk_alloc<float>(items);
    float* dy = wk_alloc<float>(items);
    long long *db = wk_alloc<long long>(segs), *de = wk_alloc<long long>(segs);
    wk_upload(dx, hx.data(), items);
    wk_upload(db, b.data(), segs);
    wk_upload(de, e.data(), segs);
    const auto bounds = warpkit::segmentBounds((const long long*)db, (const long long*)de);
    auto call = [&](void* w, size_t* bb) {
        return warpkit::segmentSoftmax((const float*)dx, dy, items, bounds, segs, 1, warpkit::SoftmaxPlain, w, bb);
    };
    size_t bytes;
    void* w = workspace(call, &bytes);
    wk_poison(dy, items);
    WK_CUDA(call(w, &bytes));
    WK_LAUNCHED();
    std::vector<float> got(items);
    wk_download(got.data(), dy, items);
    for (int part = 0; part < 2; ++part) {
        const long long lo = part ? 6000 : 3, hi = part ? 70000 : 5003;
        std::vector<double> x(hx.begin() + lo, hx.begin() + hi), want;
        double lse;
        ref_softmax(x, 0, &want, &lse);
        for (long long i = lo; i < hi; ++i)
            cr_assert(out_close<float>(got[i], want[i - lo], out_tol<float>()), "row %lld: %.9g want %.9g", i, got[i],
                      want[i - lo]);
    }
    unsigned char poison[4];
    memset(poison, 0xA5, 4);
    for (long long i : {0LL, 1LL, 2LL, 5003LL, 5999LL, 70000LL})
        cr_assert(memcmp(&got[i], poison, 4) == 0, "row %lld (in no segment) written", i);
    for (void* p : {(void*)dx, (void*)dy, (void*)db, (void*)de, w}) WK_CUDA(cudaFree(p));
}

/// Offsets past 2^31: the data pointer moves back by 2^31 + 5 rows, so row 2^31 + 5 + i is element i.
Test(device_segment, offsets_past_2_31) {
    WK_REQUIRE_GPU();
    const long long base = (1LL << 31) + 5, n = 120000;
    wk_rng r = wk_rng_make(0x31);
    std::vector<long long> off = distribution(5, n - 300000 > 0 ? n - 300000 : 20000, &r);
    const long long rows = std::min(off.back(), n);
    for (auto& o : off) o = base + std::min(o, rows);
    std::vector<float> hx(rows);
    for (auto& v : hx) v = (float)wk_uniform(&r, -2, 2);
    float* din = wk_alloc<float>(rows);
    const long long segs = (long long)off.size() - 1;
    float* dout = wk_alloc<float>(segs);
    long long* doff = wk_alloc<long long>(off.size());
    wk_upload(din, hx.data(), rows);
    wk_upload(doff, off.data(), off.size());
    const float* virt = din - base; // never dereferenced outside [base, base + rows)
    size_t bytes;
    void* w = workspace(
        [&](void* ww, size_t* bb) { return warpkit::segmentReduceSum(virt, dout, base + rows, doff, segs, ww, bb); },
        &bytes);
    wk_poison(dout, segs);
    WK_CUDA(warpkit::segmentReduceSum(virt, dout, base + rows, doff, segs, w, &bytes));
    WK_LAUNCHED();
    std::vector<float> got(segs);
    wk_download(got.data(), dout, segs);
    for (long long s = 0; s < segs; ++s) {
        double sum = 0, asum = 0;
        for (long long i = off[s]; i < off[s + 1]; ++i) {
            sum += hx[i - base];
            asum += fabs(hx[i - base]);
        }
        cr_assert(fabs(got[s] - sum) <= (double)(off[s + 1] - off[s] + 40) * 0x1p-24 * asum + 1e-6,
                  "segment %lld at offset %lld: %.9g want %.9g", s, off[s], got[s], sum);
    }
    for (void* p : {(void*)din, (void*)dout, (void*)doff, w}) WK_CUDA(cudaFree(p));
}

/// One segmentSoftmax (plain, fp32) of a seeded x over `off` with `heads` heads, then the same call
/// from two host threads at once, each on its own stream and workspace, `cases` times each: every
/// call gives the first call's bits.
static void two_streams_case(const std::vector<long long>& off, int heads, int cases, wk_rng* r, const char* what) {
    const long long items = off.back(), segs = (long long)off.size() - 1;
    std::vector<float> hx(items * heads);
    for (auto& v : hx) v = (float)wk_uniform(r, -4, 4);
    float* dx = wk_alloc<float>(hx.size());
    long long* doff = wk_alloc<long long>(off.size());
    wk_upload(dx, hx.data(), hx.size());
    wk_upload(doff, off.data(), off.size());
    float* dy[2] = {wk_alloc<float>(hx.size()), wk_alloc<float>(hx.size())};
    std::vector<float> first(hx.size());
    size_t bytes;
    void* w0 = workspace(
        [&](void* ww, size_t* bb) {
            return warpkit::segmentSoftmax(dx, dy[0], items, doff, segs, heads, warpkit::SoftmaxPlain, ww, bb);
        },
        &bytes);
    WK_CUDA(warpkit::segmentSoftmax(dx, dy[0], items, doff, segs, heads, warpkit::SoftmaxPlain, w0, &bytes));
    WK_LAUNCHED();
    wk_download(first.data(), dy[0], first.size());
    void* ws[2] = {w0, NULL};
    WK_CUDA(cudaMalloc(&ws[1], bytes));
    const int bad = wk_two_threads(cases, false, [&](int t, int, cudaStream_t st) {
        size_t b = bytes;
        WK_CUDA(warpkit::segmentSoftmax(dx, dy[t], items, doff, segs, heads, warpkit::SoftmaxPlain, ws[t], &b, st));
        WK_CUDA(cudaStreamSynchronize(st));
        std::vector<float> got(hx.size());
        wk_download(got.data(), dy[t], got.size());
        return memcmp(got.data(), first.data(), got.size() * 4) != 0 ? 1 : 0;
    });
    cr_assert(bad == 0, "%s: %d calls on two streams gave other bits", what, bad);
    for (void* p : {(void*)dx, (void*)doff, (void*)dy[0], (void*)dy[1], ws[0], ws[1]}) WK_CUDA(cudaFree(p));
}

Test(device_segment, two_streams_same_bits) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0x22);
    two_streams_case(distribution(5, 100000, &r), 4, wk_quick() ? 2 : 6, &r, "power-law, 4 heads");
}

/// More listed chunks than the chunk kernels have blocks, so every block takes several chunks and
/// uses the entry and owner it loaded ahead: thousands of pairs of one chunk (1025 .. 2100 rows,
/// past every plan's long-segment limit) around one pair of 2^23 + 7 rows (hundreds of chunks) and
/// runs of empty segments; with 3 heads each segment's heads are chunked together. (The softmax's
/// 1025 .. 2100-row segments of 1 and 4 heads take the block tier instead: thousands of segments
/// for fewer blocks, each block taking several in turn; their 40001-row ones and the 1-head giant
/// the slice tier.)
Test(device_segment, chunks_beyond_the_grid) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0xc4);
    auto build = [&](int segs, long long giant) {
        std::vector<long long> off(1, 0);
        for (int s = 0; s < segs; ++s) {
            const long long len = s == segs / 2 ? giant : s % 7 == 3 ? 0 : wk_int(&r, 1025, 2100);
            off.push_back(off.back() + len);
        }
        return off;
    };
    const int segs = wk_quick() ? 700 : 4000;
    const std::vector<long long> off = build(segs, wk_quick() ? 300007 : (1LL << 23) + 7);
    reduce_case<float>(off, off.back(), false, 1, true, &r, "chunks beyond the grid");
    softmax_case<float>(off, off.back(), 1, false, 3, false, &r, "chunks beyond the grid");
    const std::vector<long long> off4 = build(segs / 2, 40001);
    softmax_case<float>(off4, off4.back(), 4, true, 2, true, &r, "chunks beyond the grid, 4 heads");
    // 3 heads: the softmax's block tier takes only 1, 2, 4, 8 and 16, so these pairs are chunked
    softmax_case<float>(off4, off4.back(), 3, false, 1, true, &r, "chunks beyond the grid, 3 heads");
}

/// CSR offsets for the softmax's block tier with `heads` heads: row counts on both sides of its
/// limits (the plans' longRows of 1024, one window of 8192 elements, two, kSegBlockMaxElems =
/// 32768 elements and one row past it: the slice tier), each followed by an empty segment.
static std::vector<long long> block_tier_offsets(int heads) {
    const long long e[] = {8184, 8191, 8192, 8193, 8200, 16383, 16384, 16385, 16400, 24577, 32760, 32768};
    std::vector<long long> rows = {1, 1024, 1025, 1026, 1100, 32768 / heads + 1};
    for (long long x : e) rows.push_back(std::max(1LL, x / heads)), rows.push_back(x / heads + 1);
    std::vector<long long> off(1, 0);
    for (long long l : rows) {
        off.push_back(off.back() + l);
        off.push_back(off.back());
    }
    return off;
}

/// One segmentSoftmax (kind) of the run at x into y; returns y's elements.
template <typename T> static std::vector<T> softmax_bits(const T* x, T* y, long long items, const long long* doff,
                                                         long long segs, int heads, int kind) {
    auto call = [&](void* w, size_t* b) {
        return warpkit::segmentSoftmax(x, y, items, doff, segs, heads, (warpkit::SoftmaxKind)kind, w, b);
    };
    size_t bytes;
    void* w = workspace(call, &bytes);
    WK_CUDA(call(w, &bytes));
    WK_LAUNCHED();
    std::vector<T> got(items * heads);
    wk_download(got.data(), y, got.size());
    WK_CUDA(cudaFree(w));
    return got;
}

/// A poisoned device buffer of `total` elements holding runs of n elements at offsets inside it.
template <typename T> struct Guarded {
    T* d;
    long long total;
};
/// The run of n elements at `at`: asserts that it lies inside the buffer (a run past the end is a
/// test bug, which cudaMemcpy reports as "invalid argument" and compute-sanitizer as a write out of
/// bounds in whichever kernel writes the run's last elements).
template <typename T> static T* guarded_run(const Guarded<T>& b, long long at, long long n) {
    cr_assert(at >= 0 && at + n <= b.total, "test bug: a run of %lld elements at %lld of a buffer of %lld", n, at,
              b.total);
    return b.d + at;
}
/// The elements of b outside the run [at, at + n) still hold the poison: nothing was written there.
template <typename T>
static void expect_outside_untouched(const Guarded<T>& b, long long at, long long n, const char* what, int kind) {
    std::vector<T> lo(at), hi(b.total - at - n);
    wk_download(lo.data(), b.d, lo.size());
    wk_download(hi.data(), b.d + at + n, hi.size());
    unsigned char poison[sizeof(T)];
    memset(poison, 0xA5, sizeof poison);
    for (size_t i = 0; i < lo.size(); ++i)
        cr_assert(memcmp(&lo[i], poison, sizeof(T)) == 0, "%s kind %d: %zu elements before the run written", what, kind,
                  lo.size() - i);
    for (size_t i = 0; i < hi.size(); ++i)
        cr_assert(memcmp(&hi[i], poison, sizeof(T)) == 0, "%s kind %d: element %zu past the run written", what, kind,
                  i);
}

/// The same bits whatever y's alignment (here one element off x's: the block tier then stores
/// element by element) and in place (y == x), every kind; nothing written outside y's run (kGuard
/// poisoned elements on each side of it).
template <typename T>
static void block_tier_bits(const std::vector<long long>& off, int heads, int shift, wk_rng* r, const char* what) {
    constexpr long long kGuard = 16; // a multiple of 16 bytes: x sits `shift` elements off a 16-byte boundary
    const long long items = off.back(), segs = (long long)off.size() - 1, n = items * heads;
    const long long xAt = kGuard + shift, total = xAt + 1 + n + kGuard; // y at xAt or one element further
    std::vector<T> hx(n);
    for (auto& v : hx) v = pick<T>(r, false);
    const Guarded<T> gx{wk_alloc<T>(total), total}, gy{wk_alloc<T>(total), total};
    T* x = guarded_run(gx, xAt, n);
    long long* doff = wk_alloc<long long>(off.size());
    wk_upload(doff, off.data(), off.size());
    for (int kind = 0; kind < 4; ++kind) {
        wk_poison(gx.d, total);
        wk_upload(x, hx.data(), n);
        wk_poison(gy.d, total);
        const std::vector<T> same = softmax_bits<T>(x, guarded_run(gy, xAt, n), items, doff, segs, heads, kind);
        expect_outside_untouched(gy, xAt, n, what, kind);
        wk_poison(gy.d, total);
        const std::vector<T> other = softmax_bits<T>(x, guarded_run(gy, xAt + 1, n), items, doff, segs, heads, kind);
        expect_outside_untouched(gy, xAt + 1, n, what, kind);
        const std::vector<T> inPlace = softmax_bits<T>(x, x, items, doff, segs, heads, kind);
        expect_outside_untouched(gx, xAt, n, what, kind);
        for (long long i = 0; i < n; ++i) {
            cr_assert(memcmp(&same[i], &other[i], sizeof(T)) == 0, "%s kind %d element %lld: y one element off differs",
                      what, kind, i);
            cr_assert(memcmp(&same[i], &inPlace[i], sizeof(T)) == 0, "%s kind %d element %lld: in place differs", what,
                      kind, i);
        }
    }
    for (void* p : {(void*)gx.d, (void*)gy.d, (void*)doff}) WK_CUDA(cudaFree(p));
}

/// One head count of a softmax tier's sweep (hi: its index in the sweep): softmax_case on fp32 at
/// shifts 0-3 (only hi % 4 under WARPKIT_QUICK; int offsets at even shifts, pick's specials from
/// shift 2, or 3 for long segments), fp16 and bf16 at other shifts, all four kinds (kinds_case,
/// sparse specials for long segments) in fp32 and fp16, and block_tier_bits in fp32 and bf16.
static void tier_sweep(const std::vector<long long>& off, int heads, int hi, const char* tier, bool longSegs,
                       wk_rng* r) {
    char what[96];
    for (int shift = 0; shift < 4; ++shift) {
        if (wk_quick() && shift != hi % 4) continue;
        snprintf(what, sizeof what, "%s tier heads %d float shift %d", tier, heads, shift);
        softmax_case<float>(off, off.back(), heads, shift % 2 == 0, shift, shift >= (longSegs ? 3 : 2), r, what);
    }
    snprintf(what, sizeof what, "%s tier heads %d half", tier, heads);
    softmax_case<__half>(off, off.back(), heads, true, 1 + hi % 7, hi % 2 == 1, r, what);
    snprintf(what, sizeof what, "%s tier heads %d bf16", tier, heads);
    softmax_case<__nv_bfloat16>(off, off.back(), heads, false, hi % 8, false, r, what);
    snprintf(what, sizeof what, "%s tier kinds heads %d float", tier, heads);
    kinds_case<float>(off, heads, r, what, longSegs);
    if (!wk_quick() || hi % 2 == 0) {
        snprintf(what, sizeof what, "%s tier kinds heads %d half", tier, heads);
        kinds_case<__half>(off, heads, r, what, longSegs);
    }
    snprintf(what, sizeof what, "%s tier bits heads %d float", tier, heads);
    block_tier_bits<float>(off, heads, hi % 4, r, what);
    snprintf(what, sizeof what, "%s tier bits heads %d bf16", tier, heads);
    block_tier_bits<__nv_bfloat16>(off, heads, 1 + hi % 7, r, what);
}

/// The softmax's block tier (segments past 1024 rows of at most 32768 elements, 1, 2, 4, 8 or 16
/// heads, a block a segment): every length around its limits, with 1 to 17 heads (3, 5 and 17 stay on
/// the chunk kernels beside it), at every misalignment of fp32 and 16-bit values, int and long long
/// offsets, NaN / +-inf and all -inf heads in all four kinds, two calls with the same bits, y at
/// another alignment and in place with the same bits.
Test(device_segment, softmax_block_tier) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0xb10c);
    const int headsList[] = {1, 2, 3, 4, 5, 8, 16, 17};
    for (int hi = 0; hi < 8; ++hi)
        if (!wk_thin(hi, 3)) // racecheck: heads 1, 4 and 16
            tier_sweep(block_tier_offsets(headsList[hi]), headsList[hi], hi, "block", false, &r);
}

/// CSR offsets for the softmax's slice tier with `heads` heads: element counts on both sides of its
/// limits (kSegBlockMaxElems = 32768: the block tier; one past it: 5 windows of 8192 elements; whole
/// windows and one past; 32 windows, a whole group of the plans' sliceGroup, and one past it: two
/// groups), each followed by an empty segment, the first preceded by one.
static std::vector<long long> slice_tier_offsets(int heads) {
    const long long e[] = {32768, 32769, 40960, 40961, 65535, 262144, 262145};
    std::vector<long long> off = {0, 0};
    for (long long x : e) {
        off.push_back(off.back() + std::max(1LL, x / heads + (x % heads != 0)));
        off.push_back(off.back());
    }
    return off;
}

/// The softmax's slice tier (segments past 32768 elements with 1, 2, 4, 8 or 16 heads: a window a
/// block, two passes, per-head states merged in a fixed two-level tree): lengths around its limits
/// with 1 to 17 heads (3 and 17 stay on the chunk kernels), fp32 at shifts 0-3 and 16-bit values at
/// odd shifts, int and long long offsets, all four kinds with NaN / +inf in one head and all -inf
/// heads, two calls with the same bits, y at another alignment and in place with the same bits and
/// nothing written on either side of y; one giant segment of 2^21 elements (8 groups) among empty
/// ones.
Test(device_segment, softmax_slice_tier) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0x511ce);
    const int headsList[] = {1, 2, 3, 4, 8, 16, 17};
    for (int hi = 0; hi < 7; ++hi)
        if (!wk_thin(hi, 3)) // racecheck: heads 1, 4 and 17
            tier_sweep(slice_tier_offsets(headsList[hi]), headsList[hi], hi, "slice", true, &r);
    for (int heads : {1, 16}) { // one giant of 2^21 elements among empty segments
        std::vector<long long> off(1, 0);
        for (int s = 0; s < 3000; ++s) off.push_back(off.back() + (s == 1234 ? (1LL << 21) / heads : 0));
        char what[96];
        snprintf(what, sizeof what, "slice tier giant heads %d float", heads);
        softmax_case<float>(off, off.back(), heads, heads == 1, 1, false, &r, what);
        snprintf(what, sizeof what, "slice tier giant bits heads %d bf16", heads);
        block_tier_bits<__nv_bfloat16>(off, heads, 5, &r, what);
    }
}

/// Many slice-tier segments in one call: 40 of 33000 .. 300000 elements (5 to 38 windows, one or two
/// groups; 12 under WARPKIT_QUICK, 6 under racecheck), each after a run of short segments (0 .. 2000
/// rows: the lane groups and the block tier) and a few after none, heads 1 and 4: every segment's A
/// items come before any B item, so the B items wait on segments listed long before them; values,
/// two calls and two streams at once with the same bits.
Test(device_segment, softmax_many_sliced_segments) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0x3a11ce);
    const int many = wk_quick_level() >= 2 ? 6 : wk_quick() ? 12 : 40;
    for (int heads : {1, 4}) {
        std::vector<long long> off(1, 0);
        for (int s = 0; s < many; ++s) {
            for (int k = s % 5 == 2 ? 0 : wk_int(&r, 1, 40); k > 0; --k)
                off.push_back(off.back() + wk_int(&r, 0, 2000));
            off.push_back(off.back() + (wk_int(&r, 33000, 300000) + heads - 1) / heads);
        }
        off.push_back(off.back() + 5);
        char what[96];
        snprintf(what, sizeof what, "%d sliced segments, heads %d", many, heads);
        softmax_case<float>(off, off.back(), heads, heads == 1, heads == 1 ? 0 : 3, false, &r, what);
        two_streams_case(off, heads, wk_quick() ? 1 : 3, &r, what);
    }
}

/// Tiny segments (the lane-per-pair tier) at every misalignment, and a call whose segments are all
/// empty (each gets its empty result; nothing is read).
Test(device_segment, mean1_misaligned_and_all_empty) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0x3e);
    const std::vector<long long> off = distribution(0, wk_quick() ? 30000 : 300000, &r);
    for (int shift = 1; shift < 4; ++shift) {
        char what[64];
        snprintf(what, sizeof what, "mean1 shift %d", shift);
        reduce_case<float>(off, off.back(), shift == 2, shift, shift == 3, &r, what);
        softmax_case<float>(off, off.back(), shift, shift == 1, shift, shift == 2, &r, what);
    }
    const std::vector<long long> empty(100001, 500);
    reduce_case<float>(empty, 1000, false, 0, false, &r, "all empty");
    softmax_case<float>(empty, 1000, 3, true, 1, false, &r, "all empty");
    // no items: every segment is empty (one launch: the lane kernel for the reduction, the group kernel
    // for the softmax; not the flat pass)
    reduce_case<float>(empty, 0, false, 1, false, &r, "no items");
    softmax_case<float>(empty, 0, 1, false, 1, false, &r, "no items");
}

/// Appends one segment that takes the mean length past rule G9's limits (8 rows, 32 for 16-bit
/// values), so that the flat pass, not the lane kernel, takes a test's short segments.
static void past_lane_mean(std::vector<long long>* off) {
    const long long segs = (long long)off->size(), want = 32 * segs + 1; // segments once this one is in
    off->push_back(std::max(off->back(), want));
}

/// Appends one segment that takes the mean length past rule G9's softmax limit (5 rows) to 6, so
/// that the flat pass (G7), not the lane kernel, takes a test's softmax (also with a few more
/// segments, as rotated's).
static void past_softmax_lane_mean(std::vector<long long>* off) {
    const long long segs = (long long)off->size(); // segments once this one is in
    off->push_back(std::max(off->back(), 6 * segs));
}

/// The flat pass (plan rule G5: a reduction over CSR offsets with a mean length of at most 64):
/// segments spanning tiles (4096 path items) and blocks among runs of thousands of empty ones, at
/// every misalignment, int and long long offsets, NaN and inf; offsets that go back (the pass
/// detects them and redoes every segment by a warp), also two nonempty segments with one end.
Test(device_segment, flat_spanning_tiles_and_going_back) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0xf1a7);
    std::vector<long long> off(1, 0);
    for (int s = 0; s < (wk_quick() ? 60000 : 120000); ++s) {
        const long long k = wk_int(&r, 0, 999);
        const long long len = k == 0 ? wk_int(&r, 4000, 40000) : k < 3 ? 0 : wk_int(&r, 0, 3);
        if (k >= 1 && k <= 3) // a run of empty segments (three in a thousand: a mean length under 2)
            for (int e = 0; e < 5000; ++e) off.push_back(off.back());
        off.push_back(off.back() + len);
    }
    past_lane_mean(&off);
    const long long items = off.back();
    cr_assert(
        warpkit::detail::segmentPlan(warpkit::detail::SegReduce, 4, 1, (long long)off.size() - 1, items, true).flat,
        "the flat pass is not chosen (mean %.1f)", (double)items / (double)(off.size() - 1));
    for (int shift = 0; shift < 4; ++shift) {
        char what[64];
        snprintf(what, sizeof what, "flat shift %d", shift);
        reduce_case<float>(off, items, shift % 2 == 0, shift, shift >= 2, &r, what);
    }
    reduce_case<__half>(off, items, false, 1, true, &r, "flat half");
    std::vector<long long> back = off; // offsets that go back: segments overlap or are empty
    for (size_t i = 1000; i < back.size(); i += 7919) back[i] = back[i] > 300 ? back[i] - 300 : 0;
    back[back.size() / 2] = items + 5; // past items: clipped
    reduce_case<float>(back, items, false, 1, true, &r, "flat, offsets going back");
    // a nonempty segment repeated just after itself (offsets b, e, b, e): two segments of a tile end
    // at one element, whose slot has one writer (racecheck)
    std::vector<long long> dup = off;
    for (size_t i = 500; i + 3 < dup.size(); i += 5003)
        if (off[i] > off[i - 1]) {
            dup[i + 1] = off[i - 1];
            dup[i + 2] = off[i];
        }
    cr_assert(
        warpkit::detail::segmentPlan(warpkit::detail::SegReduce, 4, 1, (long long)dup.size() - 1, items, true).flat,
        "the flat pass is not chosen");
    reduce_case<float>(dup, items, true, 3, true, &r, "flat, a segment repeated");
}

/// The flat pass alone (segmentFlatLaunch) of an fp32 sum over CSR offsets `off`, whose rows
/// [base, off.back()) hold data (the data pointer moved back by base, never dereferenced outside
/// them), once on each grid cap of `grids`: the same bits on every call, each segment against the
/// host.
static void flat_sum_on_grids(const std::vector<long long>& off, long long base, const std::vector<long long>& grids,
                              wk_rng* r) {
    const long long rows = off.back() - base, segs = (long long)off.size() - 1;
    std::vector<float> hx(rows);
    for (auto& v : hx) v = (float)wk_uniform(r, -2, 2);
    float* din = wk_alloc<float>(rows);
    float* dout = wk_alloc<float>(segs);
    long long* doff = wk_alloc<long long>(off.size());
    wk_upload(din, hx.data(), rows);
    wk_upload(doff, off.data(), off.size());
    using Algo = warpkit::detail::SegReduceAlgo<float, float, float, warpkit::Sum, false>;
    const Algo a{din - base, dout, warpkit::Sum{}, 0.0f, 0.0f}; // never dereferenced outside the rows
    const warpkit::detail::SegOffsets<long long> so{doff, doff + 1};
    void* w = NULL;
    WK_CUDA(cudaMalloc(&w, warpkit::detail::segFlatBytes<float>(segs, base + rows)));
    std::vector<float> first(segs), got(segs);
    for (size_t run = 0; run < grids.size(); ++run) {
        wk_poison(dout, segs);
        WK_CUDA(warpkit::detail::segmentFlatLaunch(a, so, segs, base + rows, w, 0, grids[run]));
        WK_LAUNCHED();
        wk_download(run ? got.data() : first.data(), dout, segs);
        cr_assert(run == 0 || memcmp(first.data(), got.data(), segs * 4) == 0,
                  "call %zu (grid cap %lld) differs from call 0 (grid cap %lld)", run, grids[run], grids[0]);
    }
    for (long long s = 0; s < segs; ++s) {
        double sum = 0, asum = 0;
        for (long long i = off[s]; i < off[s + 1]; ++i) {
            sum += hx[i - base];
            asum += fabs(hx[i - base]);
        }
        cr_assert(fabs(first[s] - sum) <= (double)(off[s + 1] - off[s] + 40) * 0x1p-24 * asum + 1e-6,
                  "segment %lld (%lld rows at offset %lld): %.9g want %.9g", s, off[s + 1] - off[s], off[s], first[s],
                  sum);
    }
    for (void* p : {(void*)din, (void*)dout, (void*)doff, w}) WK_CUDA(cudaFree(p));
}

/// The flat pass gives the same bits on two calls and on several grid shapes (one block, 2, 5 and
/// 97 blocks, each block then taking other tiles, and the resident blocks), and handles
/// 64-bit offsets past 2^31 (the data pointer moved back by 2^31 + 5 rows, as in offsets_past_2_31).
Test(device_segment, flat_same_bits_any_grid_and_past_2_31) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0xf1a8);
    // Under racecheck (WARPKIT_QUICK=2) the offsets start near 0: the flat pass walks every tile
    // from item 0, and 2^31 items of empty tiles under the tool take minutes; the 64-bit case runs
    // in make test and the other tools.
    const long long base = wk_quick_level() >= 2 ? 5 : (1LL << 31) + 5;
    std::vector<long long> off = distribution(1, wk_quick() ? 30000 : 200000, &r);
    for (auto& o : off) o += base;
    flat_sum_on_grids(off, base, {1LL << 30, 1LL << 30, 1, 2, 5, 97}, &r);
}

/// The flat pass alone on offsets that go back (some segments empty by a decreasing pair, others
/// overlapping) among runs of empty segments, on grids of 1, 2 and 3 blocks and the resident ones:
/// a block then takes many tiles in turn, the next one's first ends loading (by its possibly
/// out-of-order splits) while a tile finds the offsets out of order; each segment its own sum.
Test(device_segment, flat_going_back_any_grid) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0xf1ab);
    std::vector<long long> off(1, 0);
    for (int s = 0; s < (wk_quick() ? 30000 : 150000); ++s) {
        if (wk_int(&r, 0, 999) == 0)
            for (int e = 0; e < 3000; ++e) off.push_back(off.back());
        off.push_back(off.back() + wk_int(&r, 0, 6));
    }
    for (size_t i = 500; i + 1 < off.size(); i += 6007) off[i] = off[i] > 200 ? off[i] - 200 : 0;
    flat_sum_on_grids(off, 0, {1LL << 30, 1, 2, 3}, &r);
}

/// The flat pass alone on mean-1 offsets (about 2048 ends a tile: 256 loaded ahead, then batches
/// of 1024) with one pair out of order in a tile's first batch, its second, or at its last end:
/// a tile's threads check their own pairs (no barrier a batch) and go on writing marks and slots
/// while another has found one out of order; the tile is flagged and every segment done again.
/// Then the same offsets in order on the same workspace (the flag cleared). Each segment its own
/// sum, the same bits on grids of 1 and 2 blocks and the resident ones.
Test(device_segment, flat_going_back_in_a_late_batch) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0xf1ad);
    std::vector<long long> off(1, 0);
    for (int s = 0; s < 6 * 2048; ++s) off.push_back(off.back() + wk_int(&r, 0, 2));
    flat_sum_on_grids(off, 0, {1LL << 30, 1, 2}, &r);
    for (long long at : {100LL, 1500LL, 2040LL, 4096LL + 1300LL}) {
        std::vector<long long> back = off;
        back[at] = back[at] > 40 ? back[at] - 40 : 0; // segment at - 1 goes back, segment at overlaps
        flat_sum_on_grids(back, 0, {1LL << 30, 1, 2}, &r);
        std::vector<long long> ahead = off;
        ahead[at] += 3000; // segment at - 1 ends past the tile, segment at goes back
        flat_sum_on_grids(ahead, 0, {1LL << 30, 1}, &r);
    }
}

/// The flat pass around its limits: lengths 0, 1, 31, 32, 33, 63, 64, 65 and both sides of a
/// tile (4096 path items), each among short ones (mean under 64, so the plan is G5), with NaN and
/// inf, int and long long offsets; a mean of exactly 64 (G5) and just over it (G1), with the same
/// rows either way; a segment whose end opens a tile (then empty ones or not).
Test(device_segment, flat_boundary_lengths) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0xf1a9);
    const long long b[] = {0, 1, 2, 31, 32, 33, 63, 64, 65, 127, 128, 129, 4095, 4096, 4097, 8191, 8193};
    std::vector<long long> off(1, 0);
    for (int rep = 0; rep < (wk_quick() ? 4 : 20); ++rep)
        for (long long l : b) {
            off.push_back(off.back() + l);
            for (int k = 0; k < 40; ++k) off.push_back(off.back() + wk_int(&r, 0, 3));
        }
    const long long items = off.back(), segs = (long long)off.size() - 1;
    cr_assert(warpkit::detail::segmentPlan(warpkit::detail::SegReduce, 4, 1, segs, items, true).flat,
              "the flat pass is not chosen (mean %.1f)", (double)items / (double)segs);
    reduce_case<float>(off, items, false, 3, true, &r, "flat boundaries");
    reduce_case<__half>(off, items, true, 1, true, &r, "flat boundaries half");
    std::vector<long long> at(1001, 0); // mean 64: G5; one row more: G12
    for (size_t i = 1; i < at.size(); ++i) at[i] = at[i - 1] + (i % 2 ? 1 : 127);
    for (long long extra : {0, 1}) {
        std::vector<long long> o = at;
        o.back() += extra;
        const bool flat = warpkit::detail::segmentPlan(warpkit::detail::SegReduce, 4, 1, 1000, o.back(), true).flat;
        cr_assert(flat == (extra == 0), "mean %lld/1000: flat %d", o.back(), (int)flat);
        reduce_case<float>(o, o.back(), extra == 1, 0, true, &r, extra ? "mean just over 64" : "mean 64");
    }
    // segment 0's 4096 rows are the first tile's path items, so its end opens the second tile, whose
    // rows begin with the next non-empty segment's (ArgMax / ArgMin count its rows from there)
    for (int empties = 0; empties < 3; empties += 2) {
        std::vector<long long> edge{0, 4096};
        for (int e = 0; e < empties; ++e) edge.push_back(4096);
        for (int k = 0; k < 300; ++k) edge.push_back(edge.back() + wk_int(&r, 1, 9));
        reduce_case<float>(edge, edge.back(), empties > 0, 0, false, &r, "an end opening a tile");
    }
}

/// The flat pass's split search (a grid of probes fixed by the segment count, 32 times finer a
/// round) at segment counts either side of powers of 32, and its tiles' end batches (256 ends a
/// tile loaded ahead, then 1024 or 256 at a time) at every count of ends a tile: lengths whose
/// mean steps through 0 .. 16 along the offsets, int and long long offsets, ArgMax / ArgMin and
/// 16-bit values (reduce_case), and the same bits on grids of 1, 2 and 7 blocks and the resident.
Test(device_segment, flat_split_grid_and_end_batches) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0xf1ac);
    for (long long segs : {31LL, 32LL, 33LL, 1023LL, 1024LL, 1025LL, 32767LL, 32768LL, 32769LL}) {
        std::vector<long long> off(1, 0);
        for (long long s = 0; s < segs; ++s) off.push_back(off.back() + wk_int(&r, 0, 2));
        char what[64];
        snprintf(what, sizeof what, "flat split, %lld segments", segs);
        if (off.back() > 0) reduce_case<float>(off, off.back(), segs % 2 == 0, 1, false, &r, what);
        flat_sum_on_grids(off, 0, {1LL << 30, 1, 2}, &r);
    }
    const int maxLen[] = {0, 1, 2, 3, 4, 5, 6, 8, 12, 16, 32};
    std::vector<long long> off(1, 0);
    for (int rep = 0; rep < (wk_quick() ? 2 : 6); ++rep)
        for (int m : maxLen) // about 3 tiles at each mean m / 2 (m = 0: every segment empty)
            for (int k = 0; k < 3 * 4096 / (m / 2 + 1); ++k) off.push_back(off.back() + wk_int(&r, 0, m));
    past_lane_mean(&off);
    const long long items = off.back(), segs = (long long)off.size() - 1;
    cr_assert(warpkit::detail::segmentPlan(warpkit::detail::SegReduce, 4, 1, segs, items, true).flat,
              "the flat pass is not chosen (mean %.1f)", (double)items / (double)segs);
    reduce_case<float>(off, items, false, 2, true, &r, "flat end batches");
    reduce_case<float>(off, items, true, 0, false, &r, "flat end batches, int offsets");
    reduce_case<__half>(off, items, false, 1, true, &r, "flat end batches half");
    flat_sum_on_grids(off, 0, {1LL << 30, 1, 2, 7}, &r);
}

/// Long segments through the flat pass: runs of more than 256 tiles (a million rows) that take
/// whole groups' folds (stage 2a), among short segments (mean under 64): right against the host,
/// and the same bits on one block, three blocks and the full grid.
Test(device_segment, flat_whole_groups_same_bits) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0xf1aa);
    const long long giant = wk_quick_level() >= 2 ? 1100000 : 2300000;
    std::vector<long long> off(1, 0);
    for (int part = 0; part < 3; ++part) {
        for (int s = 0; s < 20000; ++s) off.push_back(off.back() + wk_int(&r, 0, 3));
        if (part < 2) off.push_back(off.back() + (part == 0 ? giant : 1048576 + 4096 * 3 + 7));
    }
    const long long items = off.back(), segs = (long long)off.size() - 1;
    cr_assert(warpkit::detail::segmentPlan(warpkit::detail::SegReduce, 4, 1, segs, items, true).flat,
              "the flat pass is not chosen (mean %.1f)", (double)items / (double)segs);
    reduce_case<float>(off, items, true, 1, true, &r, "flat whole groups");
    flat_sum_on_grids(off, 0, {1LL << 30, 1, 3}, &r);
}

// ---- the softmax's flat pass (rule G7) ----------------------------------------------------------------------
/// CSR offsets with a mean length under 64 whose segments' ends fall on every side of tile
/// boundaries (4096 path items: a segment's elements and then its end): the end item the last of a
/// tile (d = -1), the first of the next (d = 0: the last element ends the tile), one either side,
/// sometimes followed by empty segments; short segments between them.
static std::vector<long long> tile_edge_offsets(int reps, wk_rng* r) {
    std::vector<long long> off(1, 0);
    long long p = 0; // path items so far: ends and elements
    auto push = [&](long long len) {
        off.push_back(off.back() + len);
        p += len + 1;
    };
    for (int rep = 0; rep < reps; ++rep)
        for (long long d = -2; d <= 1; ++d) {
            const long long t = (p + 4096 + 4095) / 4096; // a boundary at least a tile ahead
            push(t * 4096 + d - p);                       // its end item at t 4096 + d
            for (int e = 0; e < (rep % 2) * 3; ++e) push(0);
            for (int k = 0; k < 3000; ++k) push(wk_int(r, 0, 3));
        }
    return off;
}

/// The flat pass alone (segmentFlatLaunch) of the fp32 plain softmax over CSR offsets `off` whose
/// rows [base, items) hold data (x and y moved back by base, never dereferenced outside them),
/// y one element off x's alignment, on each grid cap of `grids`: the same bits on every call,
/// each segment against the host (every segment's rows distinct, empty ones by offsets that go back
/// too), rows of no segment still poisoned.
static void flat_softmax_on_grids(const std::vector<long long>& off, long long base, long long items,
                                  const std::vector<long long>& grids, wk_rng* r, const char* what) {
    namespace wkd = warpkit::detail;
    const long long rows = items - base, segs = (long long)off.size() - 1;
    std::vector<float> hx(rows);
    for (auto& v : hx) v = (float)wk_uniform(r, -4, 4);
    float* din = wk_alloc<float>(rows + 1);
    float* dy = wk_alloc<float>(rows + 2);
    long long* doff = wk_alloc<long long>(off.size());
    wk_upload(din, hx.data(), rows);
    wk_upload(doff, off.data(), off.size());
    const wkd::SegSoftmaxAlgo<float, warpkit::SoftmaxPlain> a{{din - base}, dy + 1 - base};
    const wkd::SegOffsets<long long> so{doff, doff + 1};
    void* w = NULL;
    WK_CUDA(cudaMalloc(&w, wkd::segFlatBytes<warpkit::SoftmaxState>(segs, items, true)));
    std::vector<float> first(rows + 2), got(rows + 2);
    for (size_t run = 0; run < grids.size(); ++run) {
        wk_poison(dy, rows + 2);
        WK_CUDA(wkd::segmentFlatLaunch(a, so, segs, items, w, 0, grids[run]));
        WK_LAUNCHED();
        wk_download(run ? got.data() : first.data(), dy, rows + 2);
        cr_assert(run == 0 || memcmp(first.data(), got.data(), (rows + 2) * 4) == 0,
                  "%s: call %zu (grid cap %lld) differs from call 0 (grid cap %lld)", what, run, grids[run], grids[0]);
    }
    std::vector<char> covered(rows + 2, 0);
    for (long long s = 0; s < segs; ++s) {
        const Seg g = clip(off[s], off[s + 1], items);
        std::vector<double> x(g.n), want;
        double lse;
        for (long long i = 0; i < g.n; ++i) x[i] = hx[g.b + i - base];
        ref_softmax(x, 0, &want, &lse);
        for (long long i = 0; i < g.n; ++i) {
            const long long at = g.b + i - base + 1;
            covered[at] = 1;
            cr_assert(out_close<float>(first[at], want[i], out_tol<float>()),
                      "%s: segment %lld (%lld rows at %lld) row %lld: %.9g want %.9g", what, s, g.n, g.b, i, first[at],
                      want[i]);
        }
    }
    unsigned poison;
    memset(&poison, 0xA5, 4);
    for (long long i = 0; i < rows + 2; ++i)
        cr_assert(covered[i] || memcmp(&first[i], &poison, 4) == 0, "%s: y[%lld] (in no segment) written", what, i - 1);
    for (void* q : {(void*)din, (void*)dy, (void*)doff, w}) WK_CUDA(cudaFree(q));
}

/// segmentSoftmax in place (y == x) of kind `kind` over CSR offsets whose segments' rows are
/// distinct: each segment against the host, the same bits on a second call (x uploaded again).
template <typename T>
static void in_place_case(const std::vector<long long>& off, long long items, int kind, wk_rng* r, const char* what) {
    const long long segs = (long long)off.size() - 1;
    std::vector<T> hx(items), got(items), again(items);
    for (auto& v : hx) v = pick<T>(r, true);
    T* d = wk_alloc<T>(items + 1);
    long long* doff = wk_alloc<long long>(off.size());
    wk_upload(doff, off.data(), off.size());
    auto call = [&](void* w, size_t* b) {
        return warpkit::segmentSoftmax((const T*)d, d, items, (const long long*)doff, segs, 1,
                                       (warpkit::SoftmaxKind)kind, w, b);
    };
    size_t bytes;
    void* w = workspace(call, &bytes);
    for (int run = 0; run < 2; ++run) {
        wk_upload(d, hx.data(), items);
        WK_CUDA(call(w, &bytes));
        WK_LAUNCHED();
        wk_download(run ? again.data() : got.data(), d, items);
    }
    cr_assert(memcmp(got.data(), again.data(), items * sizeof(T)) == 0, "%s: two calls differ", what);
    for (long long s = 0; s < segs; ++s) {
        const Seg g = clip(off[s], off[s + 1], items);
        std::vector<double> x(g.n), want;
        double lse;
        bool allNegInf = g.n > 0;
        for (long long i = 0; i < g.n; ++i) {
            x[i] = wk_to_double(hx[g.b + i]);
            allNegInf = allNegInf && x[i] == -INFINITY;
        }
        ref_softmax(x, kind & 1, &want, &lse);
        if (allNegInf && (kind & 2)) want.assign(g.n, (kind & 1) ? -INFINITY : 0.0);
        for (long long i = 0; i < g.n; ++i) {
            const double gv = wk_to_double(got[g.b + i]);
            cr_assert(out_close<T>(gv, want[i], out_tol<T>()), "%s seg %lld row %lld (len %lld): %.9g want %.9g", what,
                      s, i, g.n, gv, want[i]);
        }
    }
    for (void* q : {(void*)d, (void*)doff, w}) WK_CUDA(cudaFree(q));
}

/// The offsets' parts [a, end] and [0, a] swapped, the end moved 5 past it (clipped): every row in
/// exactly one segment, one decreasing pair (past the end, then 0), so the flat pass finds the
/// offsets out of order and redoes every segment.
static std::vector<long long> rotated(const std::vector<long long>& off) {
    const size_t a = off.size() / 3;
    std::vector<long long> o(off.begin() + a, off.end());
    o.back() += 5;
    o.insert(o.end(), off.begin(), off.begin() + a + 1);
    return o;
}

/// The softmax's flat pass (G7): segments spanning one tile, two, many, and more than 256 tiles
/// (stage 2a) among short ones and runs of 5000 empty segments (whole tiles of empty ones), fp32
/// at every misalignment with int and long long offsets, __half, bf16, NaN and +-inf; all four kinds
/// with all -inf segments; two streams; the pass alone on grids of 1 and 3 blocks, the same bits.
Test(device_segment, flat_softmax_spanning_tiles) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0xf1b0);
    std::vector<long long> off(1, 0);
    const long long giant = wk_quick_level() >= 2 ? 1100000 : 2300000; // past 512 tiles: a whole group inside
    for (int s = 0; s < (wk_quick() ? 60000 : 200000); ++s) {
        const long long k = wk_int(&r, 0, 999);
        const long long len = k == 0 ? wk_int(&r, 4000, 40000) : k < 3 ? 0 : wk_int(&r, 0, 3);
        if (k >= 1 && k <= 3)
            for (int e = 0; e < 5000; ++e) off.push_back(off.back());
        off.push_back(off.back() + len);
        if (s == 1000) off.push_back(off.back() + giant);
    }
    past_softmax_lane_mean(&off);
    const long long items = off.back(), segs = (long long)off.size() - 1;
    const warpkit::detail::SegmentPlan plan =
        warpkit::detail::segmentPlan(warpkit::detail::SegSoftmax, 4, 1, segs, items, true);
    cr_assert(plan.flat && strcmp(warpkit::detail::kSegmentRules[plan.rule].id, "G7") == 0,
              "the softmax's flat pass is not chosen (mean %.1f)", (double)items / (double)segs);
    for (int shift = 0; shift < 4; ++shift) {
        char what[64];
        snprintf(what, sizeof what, "flat softmax shift %d", shift);
        softmax_case<float>(off, items, 1, shift % 2 == 0, shift, shift >= 2, &r, what);
    }
    softmax_case<__half>(off, items, 1, false, 1, true, &r, "flat softmax half");
    softmax_case<__nv_bfloat16>(off, items, 1, true, 3, true, &r, "flat softmax bf16");
    kinds_case<float>(off, 1, &r, "flat softmax kinds float", true);
    kinds_case<__half>(off, 1, &r, "flat softmax kinds half", true);
    const std::vector<long long> mean4 = distribution(1, wk_quick() ? 20000 : 200000, &r); // the lane kernel (G9)
    kinds_case<float>(mean4, 1, &r, "G9 softmax kinds mean 4 float");
    kinds_case<__nv_bfloat16>(mean4, 1, &r, "G9 softmax kinds mean 4 bf16");
    two_streams_case(off, 1, wk_quick() ? 2 : 6, &r, "flat softmax");
    flat_softmax_on_grids(off, 0, items, {1LL << 30, 1, 3}, &r, "spanning tiles on grids");
}

/// The softmax's flat pass where segments end on both sides of tile boundaries (tile_edge_offsets),
/// by element and by end item, then empty segments or not; every kind.
Test(device_segment, flat_softmax_tile_edges) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0xf1b1);
    std::vector<long long> off = tile_edge_offsets(wk_quick() ? 4 : 12, &r);
    past_softmax_lane_mean(&off);
    const long long items = off.back(), segs = (long long)off.size() - 1;
    cr_assert(warpkit::detail::segmentPlan(warpkit::detail::SegSoftmax, 4, 1, segs, items, true).flat,
              "the softmax's flat pass is not chosen (mean %.1f)", (double)items / (double)segs);
    softmax_case<float>(off, items, 1, false, 1, true, &r, "tile edges");
    softmax_case<__half>(off, items, 1, true, 0, false, &r, "tile edges half");
    kinds_case<float>(off, 1, &r, "tile edges kinds", true);
    kinds_case<__nv_bfloat16>(off, 1, &r, "tile edges kinds bf16", true);
    flat_softmax_on_grids(off, 0, items, {1LL << 30, 1, 2, 5, 97}, &r, "tile edges on grids");
}

/// The softmax's flat pass with tiles of every fold run (flatFoldRun: 8, 16, 24 and 32 elements a
/// thread, by the tile's element count): regions of some 12 tiles each at mean lengths 0.1 to 31
/// (below 1: segments of 0 or 1 rows), so tiles hold 370 to 4000 elements; NaN and +-inf, fp32 at
/// two misalignments, __half, bf16, every kind; the pass alone on grids of 1 and 3 blocks.
Test(device_segment, flat_softmax_fold_runs) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0xf1b3);
    std::vector<long long> off(1, 0);
    const double means[] = {0.1, 0.3, 0.5, 0.6, 1.0, 1.4, 2.2, 3.0, 7.0, 31.0, 0.8, 1.7};
    const long long pathPerRegion = (wk_quick() ? 6 : 12) * 4096LL;
    for (double mu : means) {
        const long long segs = (long long)((double)pathPerRegion / (1.0 + mu));
        for (long long s = 0; s < segs; ++s) {
            const long long len = mu < 1.0 ? (wk_uniform(&r, 0, 1) < mu ? 1 : 0) : wk_int(&r, 0, (long long)(2 * mu));
            off.push_back(off.back() + len);
        }
    }
    past_softmax_lane_mean(&off);
    const long long items = off.back(), segs = (long long)off.size() - 1;
    const warpkit::detail::SegmentPlan plan =
        warpkit::detail::segmentPlan(warpkit::detail::SegSoftmax, 4, 1, segs, items, true);
    cr_assert(plan.flat && strcmp(warpkit::detail::kSegmentRules[plan.rule].id, "G7") == 0,
              "the softmax's flat pass is not chosen (mean %.1f)", (double)items / (double)segs);
    softmax_case<float>(off, items, 1, true, 0, true, &r, "fold runs");
    softmax_case<float>(off, items, 1, false, 3, true, &r, "fold runs shift 3");
    softmax_case<__half>(off, items, 1, false, 1, true, &r, "fold runs half");
    softmax_case<__nv_bfloat16>(off, items, 1, true, 2, true, &r, "fold runs bf16");
    kinds_case<float>(off, 1, &r, "fold runs kinds", true);
    kinds_case<__nv_bfloat16>(off, 1, &r, "fold runs kinds bf16", true);
    flat_softmax_on_grids(off, 0, items, {1LL << 30, 1, 3}, &r, "fold runs on grids");
}

/// The softmax's flat pass on offsets that go back (rotated: one decreasing pair, one offset past
/// the rows): each segment its own softmax on several grids; in place (the group kernels) with
/// offsets in order and going back; 64-bit offsets past 2^31 (the data moved back by 2^31 + 5 rows),
/// rows before the first segment in none (never written).
Test(device_segment, flat_softmax_going_back_in_place_past_2_31) {
    WK_REQUIRE_GPU();
    wk_rng r = wk_rng_make(0xf1b2);
    std::vector<long long> off = distribution(0, wk_quick() ? 30000 : 200000, &r);
    for (int k = 0; k < 3; ++k) off.push_back(off.back() + wk_int(&r, 4000, 12000));
    for (int k = 0; k < 5000; ++k) off.push_back(off.back() + wk_int(&r, 0, 3));
    past_softmax_lane_mean(&off);
    const long long items = off.back();
    const std::vector<long long> back = rotated(off);
    cr_assert(
        warpkit::detail::segmentPlan(warpkit::detail::SegSoftmax, 4, 1, (long long)back.size() - 1, items, true).flat,
        "the softmax's flat pass is not chosen");
    softmax_case<float>(back, items, 1, false, 2, true, &r, "flat softmax going back");
    softmax_case<__half>(back, items, 1, true, 1, false, &r, "flat softmax going back half");
    flat_softmax_on_grids(back, 0, items, {1LL << 30, 1, 3}, &r, "going back on grids");
    for (int kind = 0; kind < 4; ++kind) {
        char what[64];
        snprintf(what, sizeof what, "in place kind %d", kind);
        in_place_case<float>(off, items, kind, &r, what);
        snprintf(what, sizeof what, "in place going back kind %d", kind);
        in_place_case<__half>(back, items, kind, &r, what);
    }
    const long long base = wk_quick_level() >= 2 ? 5 : (1LL << 31) + 5;
    std::vector<long long> far = distribution(1, wk_quick() ? 30000 : 200000, &r);
    for (auto& o : far) o += base + 7; // rows [base, base + 7) in no segment
    flat_softmax_on_grids(far, base, far.back(), {1LL << 30, 1LL << 30, 1, 97}, &r, "past 2^31 on grids");
}

/// Bad arguments: host only, no GPU needed (every check comes before any CUDA call).
// ---- any workspace address --------------------------------------------------------------------
/// The header: any workspace address works (the calls leave 15 bytes of slack and align it). The
/// reductions (sum, max through begin/end arrays, argmax; float and __half) and the softmax (1 head,
/// 4 heads __half, the log kind; 1 head through begin/end arrays) on distributions whose plans take
/// the flat pass (G5, G7), the group kernel with long segments listed for the chunk kernels and the
/// softmax's tiers (G1, G2, G8), the direct kernel (G6) and the team kernel (G10): the same bits at
/// base + 1, 3, 8, 15 as at a 16-byte aligned workspace.
Test(device_segment, workspace_any_address) {
    WK_REQUIRE_GPU();
    const long long total = wk_quick() ? 60000 : 300000;
    bool seen[16] = {};
    int bad = 0;
    for (int d : {0, 2, 4, 6, 8}) { // mean 1, 32, 4096, a giant among empty, boundaries among empty
        wk_rng r = wk_rng_make(0xa11d + d);
        const std::vector<long long> off = distribution(d, total, &r);
        const long long items = off.back(), segs = (long long)off.size() - 1, n4 = 4 * items;
        std::vector<float> hx(n4);
        std::vector<__half> hh(n4);
        for (long long i = 0; i < n4; ++i) hx[i] = pick<float>(&r, false), hh[i] = pick<__half>(&r, false);
        float* dx = wk_alloc<float>(n4 + 1);
        __half* dh = wk_alloc<__half>(n4 + 1);
        wk_upload(dx, hx.data(), n4);
        wk_upload(dh, hh.data(), n4);
        long long* d64 = wk_alloc<long long>(off.size());
        int* d32 = wk_alloc<int>(off.size());
        wk_upload(d64, off.data(), off.size());
        std::vector<int> o32(off.begin(), off.end());
        wk_upload(d32, o32.data(), o32.size());
        float* fo = wk_alloc<float>(n4 + 1);
        __half* ho = wk_alloc<__half>(n4 + 1);
        auto* ao = wk_alloc<warpkit::ValueIndex<__half>>(segs + 1);
        char what[96];
        auto run = [&](const char* call, warpkit::detail::SegmentKind kind, int elemBytes, int heads, bool csr, auto go,
                       const void* out, size_t outBytes) {
            const warpkit::detail::SegmentPlan p =
                warpkit::detail::segmentPlan(kind, elemBytes, heads, segs, items, csr);
            const char* id = warpkit::detail::kSegmentRules[p.rule].id;
            seen[atoi(id + 1) & 15] = true;
            snprintf(what, sizeof what, "%s, %s (%s)", kDistName[d], call, id);
            bad += wk_workspace_any_address(go, out, outBytes, what);
        };
        using warpkit::detail::SegReduce;
        using warpkit::detail::SegSoftmax;
        run(
            "sum float", SegReduce, 4, 1, true,
            [&](void* w, size_t* b) { return warpkit::segmentReduceSum(dx, fo, items, d64, segs, w, b); }, fo,
            segs * sizeof(float));
        run(
            "max float begin/end", SegReduce, 4, 1, false,
            [&](void* w, size_t* b) {
                return warpkit::segmentReduceMax(dx + 1, fo, items, warpkit::segmentBounds(d32, d32 + 1), segs, w, b);
            },
            fo, segs * sizeof(float));
        run(
            "argmax half", SegReduce, 2, 1, true,
            [&](void* w, size_t* b) { return warpkit::segmentReduceArgMax(dh, ao, items, d32, segs, w, b); }, ao,
            segs * sizeof(warpkit::ValueIndex<__half>));
        run(
            "softmax float", SegSoftmax, 4, 1, true,
            [&](void* w, size_t* b) {
                return warpkit::segmentSoftmax(dx, fo, items, d64, segs, 1, warpkit::SoftmaxPlain, w, b);
            },
            fo, items * sizeof(float));
        run(
            "softmax float begin/end", SegSoftmax, 4, 1, false,
            [&](void* w, size_t* b) {
                return warpkit::segmentSoftmax(dx, fo, items, warpkit::segmentBounds(d64, d64 + 1), segs, 1,
                                               warpkit::SoftmaxPlain, w, b);
            },
            fo, items * sizeof(float));
        run(
            "log softmax half 4 heads", SegSoftmax, 2, 4, true,
            [&](void* w, size_t* b) {
                return warpkit::segmentSoftmax(dh, ho, items, d32, segs, 4, warpkit::SoftmaxLog, w, b);
            },
            ho, n4 * sizeof(__half));
        for (void* p : {(void*)dx, (void*)dh, (void*)d64, (void*)d32, (void*)fo, (void*)ho, (void*)ao})
            WK_CUDA(cudaFree(p));
    }
    cr_expect(seen[1] && seen[2] && seen[5] && seen[6] && seen[7] && seen[8] && seen[9] && seen[10],
              "rules G1 %d, G2 %d, G5 %d, G6 %d, G7 %d, G8 %d, G9 %d, G10 %d: not all reached", seen[1], seen[2],
              seen[5], seen[6], seen[7], seen[8], seen[9], seen[10]);
    cr_expect(bad == 0, "%d calls wrote other bits with the workspace at an odd address", bad);
}

Test(device_segment, bad_arguments) {
    const float* in = reinterpret_cast<const float*>(4096);
    float* out = reinterpret_cast<float*>(8192);
    const int* off = reinterpret_cast<const int*>(12288);
    size_t bytes = 0;
    cr_assert(warpkit::segmentReduceSum(in, out, 100, off, 10, nullptr, &bytes) == cudaSuccess && bytes >= 1);
    void* w = reinterpret_cast<void*>(16384);
    size_t small = bytes;
    const cudaError_t inv = cudaErrorInvalidValue;
    cr_assert(warpkit::segmentReduceSum(in, out, 100, off, -1, w, &small) == inv);
    cr_assert(warpkit::segmentReduceSum(in, out, -1, off, 10, w, &small) == inv);
    cr_assert(warpkit::segmentReduceSum(in, out, 100, off, 10, w, nullptr) == inv);
    cr_assert(warpkit::segmentReduceSum(in, (float*)nullptr, 100, off, 10, w, &small) == inv);
    cr_assert(warpkit::segmentReduceSum(in, out, 100, (const int*)nullptr, 10, w, &small) == inv);
    cr_assert(warpkit::segmentReduceSum((const float*)nullptr, out, 100, off, 10, w, &small) == inv);
    cr_assert(warpkit::segmentReduceMax(in, out, 100, warpkit::segmentBounds(off, (const int*)nullptr), 10, w,
                                        &small) == inv);
    cr_assert(warpkit::segmentSoftmax(in, out, 100, off, 10, 0, warpkit::SoftmaxPlain, w, &small) == inv);
    cr_assert(warpkit::segmentSoftmax(in, out, 100, off, 10, 2, (warpkit::SoftmaxKind)7, w, &small) == inv);
    cr_assert(warpkit::segmentSoftmax(in, (float*)nullptr, 100, off, 10, 2, warpkit::SoftmaxLog, w, &small) == inv);
    cr_assert(warpkit::segmentReduceArgMax(in, (warpkit::ValueIndex<float>*)nullptr, 100, off, 10, w, &small) == inv);
    cr_assert(warpkit::segmentReduce(in, out, 100, off, -2, warpkit::Sum{}, 0.0f, w, &small) == inv);
    cr_assert(warpkit::segmentLogSumExp(in, out, 100, off, 10, 0, w, &small) == inv);
    cr_assert(warpkit::segmentLogSumExp(in, out, -1, off, 10, 4, w, &small) == inv);
    cr_assert(warpkit::segmentLogSumExp(in, out, 100, off, 1ll << 61, 4, w, &small) == inv); // segments x heads
    // The backward: dx, y, dy, offsets null; heads 0; an unknown kind.
    cr_assert(warpkit::segmentSoftmaxBackward(in, in, (float*)nullptr, 100, off, 10, 2, warpkit::SoftmaxPlain, w,
                                              &small) == inv);
    cr_assert(warpkit::segmentSoftmaxBackward((const float*)nullptr, in, out, 100, off, 10, 2, warpkit::SoftmaxPlain, w,
                                              &small) == inv);
    cr_assert(warpkit::segmentSoftmaxBackward(in, (const float*)nullptr, out, 100, off, 10, 2, warpkit::SoftmaxLog, w,
                                              &small) == inv);
    cr_assert(warpkit::segmentSoftmaxBackward(in, in, out, 100, (const int*)nullptr, 10, 2, warpkit::SoftmaxPlain, w,
                                              &small) == inv);
    cr_assert(warpkit::segmentSoftmaxBackward(in, in, out, 100, off, 10, 0, warpkit::SoftmaxPlain, w, &small) == inv);
    cr_assert(warpkit::segmentSoftmaxBackward(in, in, out, 100, off, 10, 2, (warpkit::SoftmaxKind)-1, w, &small) ==
              inv);
    // A size query with bad arguments fails and leaves the size alone.
    size_t kept = 777;
    cr_assert(warpkit::segmentReduceSum(in, out, 100, off, -1, nullptr, &kept) == inv && kept == 777);
    cr_assert(warpkit::segmentSoftmax(in, out, 100, off, 10, 0, warpkit::SoftmaxPlain, nullptr, &kept) == inv &&
              kept == 777);
    cr_assert(warpkit::segmentSoftmaxBackward(in, in, out, -1, off, 10, 2, warpkit::SoftmaxPlain, nullptr, &kept) ==
                  inv &&
              kept == 777);
    // A workspace below the size asked for (items past the short-segment limit need one).
    size_t need = 0;
    cr_assert(warpkit::segmentLogSumExp(in, out, 1 << 20, off, 10, 4, nullptr, &need) == cudaSuccess && need > 16);
    size_t less = need - 1;
    cr_assert(warpkit::segmentLogSumExp(in, out, 1 << 20, off, 10, 4, w, &less) == inv);
    // Zero segments: nothing to do, success, even with null data.
    cr_assert(warpkit::segmentReduceSum((const float*)nullptr, (float*)nullptr, 0, (const int*)nullptr, 0, w, &small) ==
              cudaSuccess);
}
