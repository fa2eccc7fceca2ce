// Tests of include/warpkit/device/topk.cuh: rowTopK, rowArgMax, rowArgMin, rowTopKMask, rowSample.
//
// The reference is a stable sort of each row's columns on the host by the order of
// tests/topk_reference.cuh (not warpkit's keys): NaN above every number, -0.0 just below +0.0, equal
// values by lowest column. The answer is unique, so indices are compared exactly and values bit for bit (against
// x at the reference's column). Outputs are poisoned first. Every case runs both forms (with a
// workspace, which splits few rows over blocks, and without one, one block a row) and checks that
// they give the same bits, then the workspace form again on the same workspace (its counters must be
// ready for a second call). The size query with null data pointers answers the same size; the
// workspace at an odd address gives the same bits.
#include "../common.cuh"
#include "../topk_reference.cuh"
#include <warpkit/device/topk.cuh>

#include <algorithm>
#include <vector>

namespace {

/// Data patterns of a row.
/// HeadHeavy: the first 8192 columns (the filter's sample, a block's first round) hold +-inf and the
/// largest numbers, which the rest repeats (ties with the sample's bound at higher and lower indices
/// of other warps), with NaN and +inf only later; AllNegInf: every value -inf (a bound of -inf);
/// NearZero: +-0, fp32 subnormals and numbers about the filter's exact-cut limit (2 FLT_MIN: cuts
/// below it compare packed keys, cuts above skip them), a few NaN.
enum Pattern {
    Random,
    Ties,
    Ascending,
    Descending,
    AllEqual,
    Specials,
    AllNaN,
    RoundEqual,
    HeadHeavy,
    AllNegInf,
    NearZero,
    kPatterns,
    // ordered rows for k = 1 (kOrdered; not in the sweeps): rising / falling steps of 37 equal values
    // (more ties once rounded to 16 bits), rising steps with a NaN 3 from the end, a sawtooth of period 997,
    // -0.0 with a +0.0 every 3001 (and the converse: the first of the rarer zero wins, in another lane,
    // round or slice), a NaN first then rising steps, rising steps with a NaN (either sign) every 7
    StepUp,
    StepDown,
    UpThenNaN,
    Sawtooth,
    MinusZeros,
    PlusZeros,
    NaNFirst,
    NaNLaden,
    // short rows of zeros (kArgZeros): -0.0 with one +0.0 at 5/7 of the row, and the converse (the
    // first of the rarer zero wins only in one order; the other order's winner is column 0)
    LateMinusZero,
    LatePlusZero,
    // short rows for the warp select's bounded select (warp_select_bound): g_peaks columns spread over
    // the row hold 7, the rest random in [-100, -1); g_peaks is the row's slots (topkBoundCap), or one more
    PeakFull,
    PeakOver
};
const char* kPatternName[] = {"random",    "ties",        "ascending",   "descending", "all-equal",   "NaN/inf/-0",
                              "all-NaN",   "round-equal", "head-heavy",  "all--inf",   "near-zero",   "",
                              "step-up",   "step-down",   "up-then-NaN", "sawtooth",   "minus-zeros", "plus-zeros",
                              "NaN-first", "NaN-laden",   "late-+0",     "late--0",    "peak-full",   "peak-over"};
/// The patterns in which every lane of the k = 1 filter meets a new best in most rounds (or none).
const Pattern kOrdered[] = {Ascending, Descending, AllEqual,  StepUp,   StepDown, UpThenNaN,
                            Sawtooth,  MinusZeros, PlusZeros, NaNFirst, NaNLaden};
constexpr int kOrderedCount = (int)(sizeof(kOrdered) / sizeof(kOrdered[0]));
/// Rows for rowArgMax / rowArgMin's two-pass fold (row_arg.cuh): signed zeros, NaN first and late,
/// all NaN (rowArgMin's first NaN), all -inf (rowArgMax's fill value), ties, steps.
const Pattern kArgZeros[] = {LateMinusZero, LatePlusZero, NaNFirst, UpThenNaN, AllNaN,
                             AllNegInf,     Ties,         StepUp,   StepDown,  NaNLaden};
constexpr int kArgZerosCount = (int)(sizeof(kArgZeros) / sizeof(kArgZeros[0]));

int g_peaks = 32; // PeakFull's columns of 7 (warp_select_bound sets it)

template <typename T> double genValue(wk_rng* r, Pattern p, long long c, int cols) {
    switch (p) {
    case Random:
        return wk_uniform(r, -100.0, 100.0);
    case Ties:
        return (double)wk_int(r, -3, 3);
    case Ascending:
        return (double)(c % 2048) - 1024.0 + (double)c / 4096.0;
    case Descending:
        return (double)(cols - c);
    case AllEqual:
        return 1.5;
    case Specials: {
        const long long u = wk_int(r, 0, 15);
        if (u == 0) return NAN;
        if (u == 1) return -NAN;
        if (u == 2) return INFINITY;
        if (u == 3) return -INFINITY;
        if (u == 4) return -0.0;
        if (u == 5) return 0.0;
        return (double)wk_int(r, -5, 5);
    }
    case AllNaN:
        return c % 3 == 0 ? -NAN : NAN;
    case HeadHeavy: {
        const long long u = wk_int(r, 0, 31);
        if (c < 8192) return u == 0 ? INFINITY : u == 1 ? -INFINITY : (double)wk_int(r, 1, 2);
        return u == 0 ? NAN : u == 1 ? INFINITY : u == 2 ? -INFINITY : (double)wk_int(r, -2, 2);
    }
    case AllNegInf:
        return -INFINITY;
    case StepUp:
        return (double)(c / 37);
    case StepDown:
        return (double)((cols - c) / 37);
    case UpThenNaN:
        return c == cols - 3 ? NAN : (double)(c / 37);
    case Sawtooth:
        return (double)(c % 997);
    case MinusZeros:
        return c % 3001 == 3000 ? 0.0 : -0.0;
    case PlusZeros:
        return c % 3001 == 3000 ? -0.0 : 0.0;
    case NaNFirst:
        return c == 0 ? NAN : (double)(c / 37);
    case NaNLaden:
        return c % 7 == 3 ? (c % 2 ? NAN : -NAN) : (double)(c / 37);
    case LateMinusZero:
        return c == (long long)cols * 5 / 7 ? 0.0 : -0.0;
    case LatePlusZero:
        return c == (long long)cols * 5 / 7 ? -0.0 : 0.0;
    case PeakFull:
    case PeakOver: {
        const int m = g_peaks + (p == PeakOver ? 1 : 0), step = cols / m > 0 ? cols / m : 1;
        return c % step == 0 && c / step < m ? 7.0 : wk_uniform(r, -100.0, -1.0);
    }
    case NearZero: {
        const double near[] = {0.0,
                               -0.0,
                               1e-40,
                               -1e-40,
                               1.1754943508222875e-38,
                               -1.1754943508222875e-38,
                               2.3509887016445750e-38,
                               -2.3509887016445750e-38,
                               2.4e-38,
                               -2.4e-38,
                               3e-38,
                               -3e-38};
        const long long u = wk_int(r, 0, 99);
        return u == 0 ? NAN : near[u % 12];
    }
    default:
        return 1.0 + wk_uniform(r, 0.0, 1.0) * 1e-4; // distinct doubles, equal once rounded to 16 bits
    }
}

template <typename T> bool sameBits(T a, T b) { return memcmp(&a, &b, sizeof(T)) == 0; }

struct Shape {
    long long rows;
    int cols, k;
};

/// One case: rows x cols (leading dimension ld, x at element offset off) for k, pattern p.
/// rowPatterns (nRowPatterns of them), when given, name row r's pattern, rowPatterns[r % nRowPatterns],
/// in place of p.
template <typename T, typename Idx> void runCase(wk_rng* rng, Shape s, int off, long long ld, Pattern p, bool largest,
                                                 const Pattern* rowPatterns = nullptr, int nRowPatterns = 0) {
    const long long n = s.rows > 0 ? (s.rows - 1) * ld + s.cols : 0;
    std::vector<T> h((size_t)(n + off + 1));
    for (long long r = 0; r < s.rows; ++r)
        for (int c = 0; c < s.cols; ++c)
            h[(size_t)(off + r * ld + c)] =
                wk_from_double<T>(genValue<T>(rng, rowPatterns ? rowPatterns[r % nRowPatterns] : p, c, s.cols));
    T* dx = wk_alloc<T>(h.size());
    wk_upload(dx, h.data(), h.size());
    const size_t outN = (size_t)(s.rows * s.k) + 1;
    T *v1 = wk_alloc<T>(outN), *v2 = wk_alloc<T>(outN);
    Idx *i1 = wk_alloc<Idx>(outN), *i2 = wk_alloc<Idx>(outN);
    wk_poison(v1, outN);
    wk_poison(v2, outN);
    wk_poison(i1, outN);
    wk_poison(i2, outN);
    size_t bytes = 0;
    WK_CUDA(warpkit::rowTopK(dx + off, v1, i1, s.rows, s.cols, s.k, largest, ld, nullptr, &bytes));
    void* ws = wk_workspace(bytes);
    WK_CUDA(warpkit::rowTopK(dx + off, v1, i1, s.rows, s.cols, s.k, largest, ld, ws, &bytes));
    WK_CUDA(warpkit::rowTopK(dx + off, v2, i2, s.rows, s.cols, s.k, largest, ld));
    WK_LAUNCHED();
    std::vector<T> g1(outN), g2(outN), g3(outN);
    std::vector<Idx> j1(outN), j2(outN), j3(outN);
    wk_download(g1.data(), v1, outN);
    wk_download(g2.data(), v2, outN);
    wk_download(j1.data(), i1, outN);
    wk_download(j2.data(), i2, outN);
    wk_poison(v1, outN);
    wk_poison(i1, outN);
    WK_CUDA(warpkit::rowTopK(dx + off, v1, i1, s.rows, s.cols, s.k, largest, ld, ws, &bytes)); // the same workspace
    WK_LAUNCHED();
    wk_download(g3.data(), v1, outN);
    wk_download(j3.data(), i1, outN);
    cr_assert(memcmp(g3.data(), g1.data(), outN * sizeof(T)) == 0 && j3 == j1,
              "%s rows=%lld cols=%d k=%d: a second call on the same workspace gave other bits", wk_type_name<T>(),
              s.rows, s.cols, s.k);
    std::vector<int> order(s.cols);
    for (long long r = 0; r < s.rows; ++r) {
        const T* row = h.data() + off + r * ld;
        for (int c = 0; c < s.cols; ++c) order[c] = c;
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
            return wk_ranks_before(wk_to_double(row[a]), wk_to_double(row[b]), largest);
        });
        for (int j = 0; j < s.k; ++j) {
            const size_t o = (size_t)(r * s.k + j);
            const int want = order[j];
            cr_assert(j1[o] == (Idx)want && sameBits(g1[o], row[want]),
                      "%s %s rows=%lld cols=%d k=%d ld=%lld off=%d %s: row %lld rank %d: index %lld value %g, want %d "
                      "(%g), seed 0x%llx",
                      wk_type_name<T>(), largest ? "largest" : "smallest", s.rows, s.cols, s.k, ld, off,
                      kPatternName[rowPatterns ? rowPatterns[r % nRowPatterns] : p], r, j, (long long)j1[o],
                      wk_to_double(g1[o]), want, wk_to_double(row[want]), (unsigned long long)wk_seed());
            cr_assert(j2[o] == j1[o] && sameBits(g2[o], g1[o]),
                      "%s rows=%lld cols=%d k=%d: the forms with and without a workspace differ at row %lld rank %d",
                      wk_type_name<T>(), s.rows, s.cols, s.k, r, j);
        }
    }
    // nothing past the outputs was written
    cr_assert(sameBits(g1[outN - 1], g2[outN - 1]) && j1[outN - 1] == j2[outN - 1], "a write past the outputs");
    for (void* b : {(void*)dx, (void*)v1, (void*)v2, (void*)i1, (void*)i2, ws}) WK_CUDA(cudaFree(b));
}

template <typename T, typename Idx> void sweep(unsigned seed) {
    wk_rng rng = wk_rng_make(seed);
    const bool q = wk_quick();
    std::vector<Shape> shapes = {{0, 5, 1},
                                 {1, 1, 1},
                                 {1, 7, 7},
                                 {3, 33, 1},
                                 {3, 33, 5},
                                 {2, 1000, 50},
                                 {5, 4097, 256},
                                 {1, 4097, 257},
                                 {1, 50257, 8},
                                 {2, 50257, 50},
                                 {1, 50257, 1},
                                 {1, 131073, 256},
                                 {1, 32000, 1024},
                                 {1, 9000, 2048},
                                 {67, 999, 8},
                                 {300, 257, 1},
                                 {300, 300, 300},
                                 {7, 2048, 2048},
                                 {1, 9000, 5000},
                                 {3, 5000, 5000},
                                 {2, 4097, 2049}, // the three before: passes of 2048 (T4)
                                 // the filter (k <= 256): a slice's head and tail, many slices a row in one
                                 // launch, k at the largest the filter takes, rows of one and several slices
                                 {3, 1025, 256},
                                 {1, 65539, 255},
                                 {1, 262147, 256},
                                 {2, 200003, 1},
                                 {9, 70001, 200},
                                 {700, 4500, 3},
                                 {600, 5003, 1},
                                 // S3's merge: the most slices (256, the last one empty), slices x k at
                                 // the shared stage's 4096 keys, several rows of many slices
                                 {1, 262147, 8},
                                 {1, 131072, 64},
                                 {8, 131075, 16},
                                 // S4 (rows <= 8, k <= 64): the last block's bound from the slices' ranked
                                 // keys: one and 8 rows at k = 8 (j = 1), 50 (j = 2), 64 (j = 3), 40 (j = 5;
                                 // the slices' keys ranked by their sort past 16); a last slice empty, so
                                 // fewer than m slices hold a j-th key (no bound: the select of every key);
                                 // one and 8 rows at k = 256 (S3)
                                 {8, 32000, 8},
                                 {1, 32000, 50},
                                 {1, 32000, 64},
                                 {8, 9000, 40},
                                 {1, 18433, 18},
                                 {8, 50257, 256},
                                 {1, 32001, 256},
                                 // S4's gather past its first batch (256 x 8 keys, loaded with the slices'
                                 // j-th keys): 97 slices x 40 = 3880 keys, a partial second batch
                                 {2, 100003, 40},
                                 // stage 3: kept keys ranked by counting (<= 128: k = 16 x 8 warps) and
                                 // past it (k = 17, 32: the radix select when the warps keep more); k = 2
                                 {5, 5000, 16},
                                 {5, 5001, 17},
                                 {3, 4099, 32},
                                 {4, 6001, 2},
                                 // stage 0's wider sample from k = 32 (one block a row: 5 of 10 fp32 rounds;
                                 // 3 of 6, odd for its loop unrolled by 2)
                                 {2, 40000, 31},
                                 {2, 40001, 32},
                                 {2, 24001, 40}};
    if (!q) {
        shapes.push_back({1, 262144, 256});
        shapes.push_back({8, 262147, 50}); // S4: 66 slices a row, j = 1
        shapes.push_back({290, 5000, 100});
        shapes.push_back({4, 100000, 2000});
        shapes.push_back({2, 70001, 9000});
    }
    int i = 0;
    for (const Shape& s : shapes)
        for (int pi = 0; pi < kPatterns; ++pi, ++i) {
            if (wk_thin(i, 5)) continue;
            const Pattern p = (Pattern)pi;
            if (p == RoundEqual && sizeof(T) == 4) continue;
            const int off = i % 3;                              // misaligned rows
            const long long ld = s.cols + (i % 4 == 1 ? 3 : 0); // and leading dimensions
            runCase<T, Idx>(&rng, s, off, ld, p, i % 2 == 0);
        }
}

} // namespace

/// The warp kernels' short rows (rules W1-W4): every column count class (a partial vector, a
/// partial warp of vectors, several 16-byte rounds, an unaligned head and tail) x k on both sides of
/// each limit (1, 2, 7, 8, 9, 31, 32, 33), rows that leave a warp's row groups partly empty (37), the
/// data patterns in turn, both orders, misaligned rows and leading dimensions.
template <typename T, typename Idx> void shortSweep(unsigned seed) {
    wk_rng rng = wk_rng_make(seed);
    const int colsList[] = {1,   2,   3,   8,   31,   33,   100,  127,  128,  129,
                            255, 256, 257, 511, 1000, 1023, 1024, 2047, 4095, 4096};
    const int kList[] = {1, 2, 7, 8, 9, 31, 32, 33};
    int i = 0;
    for (int cols : colsList)
        for (int k : kList) {
            if (k > cols) continue;
            ++i;
            if (wk_thin(i, 4)) continue;
            Pattern p = (Pattern)(i % kPatterns);
            if (p == RoundEqual && sizeof(T) == 4) p = Ties;
            const long long rows = cols <= 256 ? 37 : 11;
            runCase<T, Idx>(&rng, {rows, cols, k}, i % 5, cols + (i % 3 == 1 ? 1 : 0), p, i % 2 == 0);
        }
    if (!wk_quick()) { // more rows than one wave of blocks holds: the grid-stride loop over row groups
        runCase<T, Idx>(&rng, {20011, 33, 8}, 1, 33, Random, true);
        runCase<T, Idx>(&rng, {9001, 300, 32}, 0, 301, Ties, false);
        runCase<T, Idx>(&rng, {4001, 1024, 1}, 2, 1024, Specials, true);
    }
}

/// Split S4 only (1-8 rows, 2 <= k <= 64, several slices a row: the last block's bound and the
/// hand-off without per-thread fences), every pattern, both orders, fp32 and bf16: a short test for
/// the sanitizers. The first batch of the gather only (256 x 8 = 2048 keys), a partial second (97 x
/// 40), two full (64 x 64), j = 2, j = 3 and 8 rows.
Test(device_topk, slice_bound) {
    WK_REQUIRE_GPU();
    wk_rng rng = wk_rng_make(0x70e);
    const Shape shapes[] = {{1, 262147, 8}, {2, 100003, 40}, {1, 131072, 64}, {1, 32000, 50}, {8, 32000, 64}};
    int i = 0;
    for (const Shape& s : shapes)
        for (int pi = 0; pi < kPatterns; ++pi, ++i) {
            const Pattern p = (Pattern)pi;
            const long long ld = s.cols + (i % 4 == 1 ? 3 : 0);
            if (p != RoundEqual) runCase<float, int>(&rng, s, i % 3, ld, p, i % 2 == 0);
            runCase<__nv_bfloat16, long long>(&rng, s, (i + 1) % 3, ld, p, i % 2 == 1);
        }
}

/// Rule T0: k = 1 by rowArgMax's kernel (the row family's read-only plans) where the plan takes it
/// (H100: 1 and 8 rows of 32000 / 128256, 8 of 262147, 64 of 32000, 64 16-bit rows of 128256; 1 fp32
/// row of 262144 and 64 of 262144 stay on T1), both forms, every pattern (the sweeps', the ordered
/// rows', the zeros'), both orders, fp32 / fp16 / bf16 with int and long long indices, misaligned rows
/// and leading dimensions; runCase checks the reference, the two forms' bits and a second call's.
Test(device_topk, k1_arg_path) {
    WK_REQUIRE_GPU();
    wk_rng rng = wk_rng_make(0x70f);
    int dev = 0, sms = 0, major = 0;
    WK_CUDA(cudaGetDevice(&dev));
    WK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    WK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    const Shape shapes[] = {{1, 32000, 1}, {8, 32000, 1},  {1, 40001, 1},  {3, 100003, 1}, {8, 128256, 1},
                            {2, 50257, 1}, {8, 262147, 1}, {64, 32000, 1}, {1, 262144, 1}, {64, 128256, 1}};
    std::vector<Pattern> patterns;
    for (int p = 0; p < kPatterns; ++p) patterns.push_back((Pattern)p);
    for (Pattern p : kOrdered) patterns.push_back(p);
    for (Pattern p : kArgZeros) patterns.push_back(p);
    int i = 0, t0 = 0;
    for (const Shape& s : shapes) {
        const bool big = (long long)s.rows * s.cols > 1000000;
        for (Pattern p : patterns) {
            ++i;
            if (big && wk_thin(i, 3)) continue;
            const int type = i % 3, off = i % 3;
            const long long ld = s.cols + (i % 4 == 1 ? 3 : 0);
            const bool largest = (i / 3) % 2 == 0;
            if (type == 0 && p == RoundEqual) continue;
            const int bytes = type == 0 ? 4 : 2;
            t0 += warpkit::detail::topkPlan(s.rows, s.cols, 1, sms, true, bytes, major >= 9).kernel ==
                  warpkit::detail::TopKArg;
            if (type == 0) runCase<float, int>(&rng, s, off, ld, p, largest);
            else if (type == 1) runCase<__half, long long>(&rng, s, off, ld, p, largest);
            else runCase<__nv_bfloat16, int>(&rng, s, off, ld, p, largest);
            if (i % 2 == 1 && type == 0) runCase<float, long long>(&rng, s, (off + 1) % 3, ld, p, !largest);
        }
    }
    cr_assert(t0 > 0, "no case took rule T0 on this device (%d SMs)", sms);
}

/// Rules W2-W4's bounded select and its way out (device/detail/topk_warp_select.cuh): rows that keep
/// exactly as many keys as a row's slots hold (PeakFull) and one more (PeakOver: the warp takes the list
/// select; both only with at least as many columns as slots), beside random, tied, constant and NaN / inf
/// rows in the same warps (4 rows a warp at 8 lanes, so a warp with an overflowing row answers for rows
/// that fit too); k on both sides of the bound's limits (k <= 8 or 32 lanes: both bounds; up to 2 x
/// lanes: the second keys' bound alone) and of W2's (k <= 16 at 8 lanes; 17 takes 32 lanes), both
/// orders, fp32 and bf16, misaligned rows, leading dimensions.
Test(device_topk, warp_select_bound) {
    WK_REQUIRE_GPU();
    wk_rng rng = wk_rng_make(0x711);
    const Pattern mix[] = {Random, PeakFull, Ties, Random, PeakOver, AllEqual, Random, Specials, Random, Random};
    const Shape shapes[] = {{37, 128, 8},  {37, 100, 2},   {37, 256, 16}, {37, 255, 9},  {37, 200, 17}, {37, 64, 5},
                            {11, 1000, 8}, {11, 1024, 32}, {11, 999, 17}, {11, 4095, 8}, {11, 4096, 2}, {11, 2001, 7}};
    int dev = 0, sms = 0, major = 0;
    WK_CUDA(cudaGetDevice(&dev));
    WK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    WK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    int i = 0;
    for (const Shape& s : shapes)
        for (int order = 0; order < 2; ++order, ++i) {
            const warpkit::detail::TopKPlan plan =
                warpkit::detail::topkPlan(s.rows, s.cols, s.k, sms, true, 4, major >= 9);
            cr_assert(plan.kernel == warpkit::detail::TopKWarpSelect, "cols=%d k=%d: not a warp select (%s)", s.cols,
                      s.k, plan.kernelRule);
            g_peaks = warpkit::detail::topkBoundCap(plan.warpLanes, plan.warpK);
            const long long ld = s.cols + (i % 3 == 1 ? 5 : 0);
            runCase<float, int>(&rng, s, i % 4, ld, Random, order == 0, mix, 10);
            runCase<__nv_bfloat16, long long>(&rng, s, (i + 1) % 4, ld, Random, order == 1, mix + 1, 9);
        }
}

Test(device_topk, short_rows) {
    WK_REQUIRE_GPU();
    shortSweep<float, long long>(0x709);
    shortSweep<__half, int>(0x70a);
    shortSweep<__nv_bfloat16, long long>(0x70b);
}

Test(device_topk, float_int64) {
    WK_REQUIRE_GPU();
    sweep<float, long long>(0x701);
}
Test(device_topk, half_int32) {
    WK_REQUIRE_GPU();
    sweep<__half, int>(0x702);
}
Test(device_topk, bf16_int64) {
    WK_REQUIRE_GPU();
    sweep<__nv_bfloat16, long long>(0x703);
}

// ---- rowArgMax / rowArgMin against the reference's first rank --------------------------------------
Test(device_topk, argmax_argmin) {
    WK_REQUIRE_GPU();
    wk_rng rng = wk_rng_make(0x704);
    for (long long rows : {1LL, 5LL, 1000LL})
        for (int cols : {1, 31, 129, 1000, 4096, 70001}) {
            if (rows * cols > 20000000) continue;
            const Pattern p = (Pattern)(cols % kPatterns);
            std::vector<float> h((size_t)(rows * cols));
            for (long long r = 0; r < rows; ++r)
                for (int c = 0; c < cols; ++c) h[(size_t)(r * cols + c)] = (float)genValue<float>(&rng, p, c, cols);
            float* dx = wk_alloc<float>(h.size());
            wk_upload(dx, h.data(), h.size());
            int *imax = wk_alloc<int>(rows), *imin = wk_alloc<int>(rows);
            float* vmax = wk_alloc<float>(rows);
            wk_poison(imax, rows);
            wk_poison(imin, rows);
            wk_poison(vmax, rows);
            size_t bytes = 0;
            WK_CUDA(warpkit::rowArgMax(dx, vmax, imax, rows, cols, cols, nullptr, &bytes));
            void* ws = wk_workspace(bytes);
            WK_CUDA(warpkit::rowArgMax(dx, vmax, imax, rows, cols, cols, ws, &bytes));
            WK_CUDA(warpkit::rowArgMin(dx, (float*)nullptr, imin, rows, cols, cols));
            WK_LAUNCHED();
            std::vector<int> gmax(rows), gmin(rows);
            std::vector<float> gv(rows);
            wk_download(gmax.data(), imax, rows);
            wk_download(gmin.data(), imin, rows);
            wk_download(gv.data(), vmax, rows);
            for (long long r = 0; r < rows; ++r) {
                const float* row = h.data() + r * cols;
                int bmax = 0, bmin = 0;
                for (int c = 1; c < cols; ++c) {
                    if (wk_ranks_before(row[c], row[bmax], true)) bmax = c;
                    if (wk_ranks_before(row[c], row[bmin], false)) bmin = c;
                }
                cr_assert(gmax[r] == bmax && sameBits(gv[r], row[bmax]),
                          "rowArgMax rows=%lld cols=%d row %lld: %d, want %d", rows, cols, r, gmax[r], bmax);
                cr_assert(gmin[r] == bmin, "rowArgMin rows=%lld cols=%d row %lld: %d, want %d", rows, cols, r, gmin[r],
                          bmin);
            }
            for (void* b : {(void*)dx, (void*)imax, (void*)imin, (void*)vmax, ws}) WK_CUDA(cudaFree(b));
        }
}

// ---- rowArgMax / rowArgMin (the row family's runner) against rowTopK with k = 1 --------------------
// Every plan the row runner picks for a read-only call (a warp, a block, a cluster or the streamed
// path a row), 16-bit types, leading dimensions, a misaligned first row, rows of each pattern.
// rowTopK's workspace form: where it takes rule T0 (rowArgMax's kernel) the pair compares the kernel
// with itself, and argmax_argmin_reference and k1_arg_path check it against the host.
struct ArgShape {
    long long rows;
    int cols, ld, off;
};

/// The pattern of row r of shape s: (r + mul x cols) % kPatterns, so each row of a shape differs;
/// `ordered`: 1 kOrdered's in turn, 2 kArgZeros's.
Pattern argPattern(const ArgShape& s, long long r, int mul, int ordered = 0) {
    const long long i = r + (long long)mul * s.cols;
    return ordered == 2 ? kArgZeros[i % kArgZerosCount]
           : ordered    ? kOrdered[i % kOrderedCount]
                        : (Pattern)(i % kPatterns);
}

/// Shape s's rows (from element s.off, ld apart; at least one row's room), row r of argPattern's.
template <typename T> std::vector<T> argRows(wk_rng* rng, const ArgShape& s, int mul, int ordered = 0) {
    std::vector<T> h((size_t)(s.off + (s.rows > 0 ? s.rows : 1) * s.ld));
    for (long long r = 0; r < s.rows; ++r)
        for (int c = 0; c < s.cols; ++c)
            h[(size_t)(s.off + r * s.ld + c)] =
                wk_from_double<T>(genValue<T>(rng, argPattern(s, r, mul, ordered), c, s.cols));
    return h;
}

template <typename T, typename Idx> int argAgainstTopK(wk_rng* rng) {
    const ArgShape shapes[] = {{4096, 77, 77, 0},    {333, 1000, 1003, 1},   {64, 32000, 32000, 0},
                               {8, 50257, 50260, 3}, {1, 262147, 262147, 1}, {2, 131072, 131072, 0},
                               {3, 1, 5, 2},         {17, 4096, 4104, 8}};
    int bad = 0;
    for (const ArgShape& s : shapes) {
        const std::vector<T> h = argRows<T>(rng, s, 1);
        T* dx = wk_alloc<T>(h.size());
        wk_upload(dx, h.data(), h.size());
        for (bool largest : {true, false}) {
            T *v = wk_alloc<T>(s.rows), *tv = wk_alloc<T>(s.rows);
            Idx *i = wk_alloc<Idx>(s.rows), *ti = wk_alloc<Idx>(s.rows);
            wk_poison(v, s.rows);
            wk_poison(i, s.rows);
            if (largest) WK_CUDA(warpkit::rowArgMax(dx + s.off, v, i, s.rows, s.cols, s.ld));
            else WK_CUDA(warpkit::rowArgMin(dx + s.off, v, i, s.rows, s.cols, s.ld));
            size_t bytes = 0; // the workspace form: without one, rowTopK's k = 1 takes T0 (this kernel) where A2 holds
            WK_CUDA(warpkit::rowTopK(dx + s.off, tv, ti, s.rows, s.cols, 1, largest, s.ld, nullptr, &bytes));
            void* ws = wk_workspace(bytes);
            WK_CUDA(warpkit::rowTopK(dx + s.off, tv, ti, s.rows, s.cols, 1, largest, s.ld, ws, &bytes));
            WK_LAUNCHED();
            WK_CUDA(cudaFree(ws));
            std::vector<T> gv(s.rows), wv(s.rows);
            std::vector<Idx> gi(s.rows), wi(s.rows);
            wk_download(gv.data(), v, s.rows);
            wk_download(wv.data(), tv, s.rows);
            wk_download(gi.data(), i, s.rows);
            wk_download(wi.data(), ti, s.rows);
            for (long long r = 0; r < s.rows; ++r)
                if (gi[r] != wi[r] || !sameBits(gv[r], wv[r])) {
                    if (bad < 8)
                        cr_log_error("%s %s rows=%lld cols=%d ld=%d off=%d row %lld: column %lld, rowTopK %lld",
                                     wk_type_name<T>(), largest ? "argmax" : "argmin", s.rows, s.cols, s.ld, s.off, r,
                                     (long long)gi[r], (long long)wi[r]);
                    ++bad;
                }
            for (void* b : {(void*)v, (void*)tv, (void*)i, (void*)ti}) WK_CUDA(cudaFree(b));
        }
        WK_CUDA(cudaFree(dx));
    }
    return bad;
}

Test(device_topk, argmax_argmin_every_path) {
    WK_REQUIRE_GPU();
    wk_rng rng = wk_rng_make(0x70a);
    const int bad = argAgainstTopK<float, int>(&rng) + argAgainstTopK<__half, long long>(&rng) +
                    argAgainstTopK<__nv_bfloat16, int>(&rng) + argAgainstTopK<float, long long>(&rng);
    cr_assert(bad == 0, "rowArgMax / rowArgMin: %d rows differ from rowTopK's k = 1", bad);
}

// ---- rowArgMax / rowArgMin against the host reference: every rule, pattern and type --------------
// Rule A1 (the filter kernel, one block a row: 1000 or 4096 rows of more than 4096 columns on the
// H100) and A2's paths (warp, block, staged, streamed), 16-bit types, leading dimensions, misaligned
// rows, each row a pattern (NaN, +-inf, ties, -0.0 / +0.0, ascending, all NaN, ...); rows = 0 writes
// nothing. `ordered`: kOrdered's (1) or kArgZeros's (2) rows at the given shapes instead.
template <typename T, typename Idx>
int argAgainstReference(wk_rng* rng, const ArgShape* given = nullptr, int count = 0, int ordered = 0) {
    const ArgShape all[] = {{1000, 5001, 5004, 1}, {4096, 4099, 4104, 2},  {600, 4097, 4097, 0},   {64, 1025, 1030, 5},
                            {3000, 33, 40, 1},     {100, 70001, 70003, 3}, {2, 262147, 262150, 7}, {0, 5, 5, 0}};
    const ArgShape* shapes = given ? given : all;
    int bad = 0;
    for (int si = 0, n = given ? count : (int)(sizeof(all) / sizeof(all[0])); si < n; ++si) {
        const ArgShape& s = shapes[si];
        const size_t outN = (size_t)s.rows + 1; // one past the rows: never written
        const std::vector<T> h = argRows<T>(rng, s, 3, ordered);
        T* dx = wk_alloc<T>(h.size());
        wk_upload(dx, h.data(), h.size());
        for (bool largest : {true, false}) {
            T* v = wk_alloc<T>(outN);
            Idx* i = wk_alloc<Idx>(outN);
            wk_poison(v, outN);
            wk_poison(i, outN);
            if (largest) WK_CUDA(warpkit::rowArgMax(dx + s.off, v, i, s.rows, s.cols, s.ld));
            else WK_CUDA(warpkit::rowArgMin(dx + s.off, v, i, s.rows, s.cols, s.ld));
            WK_LAUNCHED();
            std::vector<T> gv(outN), pv(outN);
            std::vector<Idx> gi(outN), pi(outN);
            wk_download(gv.data(), v, outN);
            wk_download(gi.data(), i, outN);
            memset(pv.data(), 0xA5, outN * sizeof(T)); // wk_poison's bytes
            memset(pi.data(), 0xA5, outN * sizeof(Idx));
            for (long long r = 0; r < s.rows; ++r) {
                const T* row = h.data() + s.off + r * s.ld;
                int b = 0;
                for (int c = 1; c < s.cols; ++c)
                    if (wk_ranks_before(wk_to_double(row[c]), wk_to_double(row[b]), largest)) b = c;
                if (gi[r] != (Idx)b || !sameBits(gv[r], row[b])) {
                    if (bad < 8)
                        cr_log_error("%s %s rows=%lld cols=%d ld=%d off=%d row %lld (%s): column %lld, want %d",
                                     wk_type_name<T>(), largest ? "argmax" : "argmin", s.rows, s.cols, s.ld, s.off, r,
                                     kPatternName[argPattern(s, r, 3, ordered)], (long long)gi[r], b);
                    ++bad;
                }
            }
            if (!sameBits(gv[s.rows], pv[s.rows]) || gi[s.rows] != pi[s.rows]) { // past the last row
                if (bad < 8)
                    cr_log_error("%s rows=%lld: an output past the last row written", wk_type_name<T>(), s.rows);
                ++bad;
            }
            for (void* b : {(void*)v, (void*)i}) WK_CUDA(cudaFree(b));
        }
        WK_CUDA(cudaFree(dx));
    }
    return bad;
}

Test(device_topk, argmax_argmin_reference) {
    WK_REQUIRE_GPU();
    wk_rng rng = wk_rng_make(0x70c);
    const int bad = argAgainstReference<__nv_bfloat16, long long>(&rng) + argAgainstReference<__half, int>(&rng) +
                    argAgainstReference<float, int>(&rng);
    cr_assert(bad == 0, "rowArgMax / rowArgMin: %d rows differ from the host reference", bad);
}

// ---- rowArgMax / rowArgMin on short rows: the two-pass fold, rules A2 / A3, the full-row kernels ----
// Rows of 512 .. 4096 columns (and 640, 768: R25's shape) on the register paths: aligned rows that
// fill their shape (the full-row kernels: fp32 32 x 4 and 32 x 8 lanes a row, 16-bit 16 x 4 and
// 32 x 4, the blocks of A3's R2 / R3 and A2's R9), one column past them (head and tail elements),
// misaligned rows and leading dimensions, a warp's or block's rows past the end (rows 1, 5, 13 ...),
// each row of the sweep's patterns, kOrdered's and kArgZeros's (signed zeros whose preferred sign
// is rare, NaN first or last, all NaN, all -inf), every type, both orders, against the host.
Test(device_topk, argmax_argmin_short_rows) {
    WK_REQUIRE_GPU();
    wk_rng rng = wk_rng_make(0x710);
    const ArgShape shapes[] = {{13, 512, 512, 0},   {23, 1024, 1024, 0},  {5, 1024, 1024, 0},  {1, 1024, 1024, 0},
                               {22, 1024, 1031, 1}, {11, 1025, 1025, 0},  {17, 2048, 2048, 0}, {12, 2049, 2056, 3},
                               {11, 4096, 4096, 0}, {13, 4096, 4100, 2},  {12, 3000, 3000, 0}, {11, 768, 768, 0},
                               {14, 640, 648, 4},   {300, 1024, 1024, 0}, {33, 2048, 2048, 0}};
    const int n = (int)(sizeof(shapes) / sizeof(shapes[0]));
    int bad = 0;
    for (int ordered = 0; ordered < 3; ++ordered)
        bad += argAgainstReference<float, int>(&rng, shapes, n, ordered) +
               argAgainstReference<__nv_bfloat16, long long>(&rng, shapes, n, ordered) +
               argAgainstReference<__half, int>(&rng, shapes, n, ordered);
    cr_assert(bad == 0, "rowArgMax / rowArgMin on short rows: %d rows differ from the host reference", bad);
}

// ---- k = 1 on ordered rows: every lane of the filter meets a new best in most rounds ----------------
// rowTopK k = 1 (rule T1: with a workspace, few rows split over blocks (S3's slices and the last
// block's merge); without one, one block a row) and rowArgMax / rowArgMin (rule A1 at 4096 x 5001 on
// the H100, A2 elsewhere) on rising, falling, equal, stepped (ties across lanes and rounds), NaN-ended,
// sawtooth, signed-zero (the first of the rarer zero wins), NaN-first and NaN-laden rows, every type,
// both orders, misaligned rows and leading dimensions, and aligned rows of whole rounds, against the host.
Test(device_topk, k1_ordered_rows) {
    WK_REQUIRE_GPU();
    wk_rng rng = wk_rng_make(0x70e);
    // 4 x 16384, 2 x 65536 (whole rounds only when aligned: the last element in the last lane of the
    // last round of warp 7), 300 x 5003 (one block a row), the rest split (S3) with a workspace. On the
    // H100 rule T0 (rowArgMax's kernel) takes all but fp32 2 x 200003 and 1 x 262147 (T1 split); T1 one
    // block a row on ordered rows: the rowArgMax part's 4096 rows (A1)
    const Shape shapes[] = {{300, 5003, 1}, {8, 32001, 1}, {2, 200003, 1}, {1, 262147, 1},
                            {3, 4097, 1},   {4, 16384, 1}, {2, 65536, 1}};
    int i = 0;
    for (const Shape& s : shapes)
        for (int pi = 0; pi < kOrderedCount; ++pi, ++i) {
            const int off = i % 4;
            const long long ld = s.cols + (i % 3);
            runCase<float, int>(&rng, s, off, ld, kOrdered[pi], i % 2 == 0);
            runCase<__half, long long>(&rng, s, off, ld, kOrdered[pi], i % 2 == 1);
            runCase<__nv_bfloat16, int>(&rng, s, (off + 1) % 4, ld, kOrdered[pi], i % 2 == 0);
            runCase<__nv_bfloat16, int>(&rng, s, off, ld, kOrdered[pi], i % 2 == 1);
        }
    // aligned rows of whole rounds (fp32: 16 of 4096 elements, 16-bit: 8 of 8192), both orders
    const Shape whole = {2, 65536, 1};
    for (int pi = 0; pi < kOrderedCount; ++pi)
        for (int o = 0; o < 2; ++o) {
            runCase<float, int>(&rng, whole, 0, whole.cols, kOrdered[pi], o == 0);
            runCase<__half, int>(&rng, whole, 0, whole.cols, kOrdered[pi], o == 1);
            runCase<__nv_bfloat16, long long>(&rng, whole, 0, whole.cols, kOrdered[pi], o == 0);
        }
    const ArgShape arg[] = {{4096, 5001, 5003, 1}, {1000, 5001, 5004, 2}, {3, 131075, 131077, 3}};
    const int bad = argAgainstReference<__nv_bfloat16, long long>(&rng, arg, 3, true) +
                    argAgainstReference<__half, int>(&rng, arg, 3, true) +
                    argAgainstReference<float, int>(&rng, arg, 3, true);
    cr_assert(bad == 0, "rowArgMax / rowArgMin on ordered rows: %d rows differ from the host reference", bad);
}

// The filter's flagged rounds for k = 2 .. 256 (T2): rising, falling, stepped and sawtooth rows (every
// element of a rising run passes, so a round's passes overflow the buffer and go vector by vector,
// flushing), ties (a round's passes fill the buffer past its cap: a flush inside the round, then the
// packed compare drops the rest), 16-bit rows that round to one value (every element tied at the
// k-th: stage 0's select stops after the top 16 bits), signed zeros and NaN, every type in turn, both
// orders, misaligned rows and leading dimensions; rows of several whole rounds (one block a row, or
// split with the workspace), and k near cols (1025 columns, k = 256).
Test(device_topk, filter_rounds) {
    WK_REQUIRE_GPU();
    wk_rng rng = wk_rng_make(0x711);
    const int ks[] = {2, 8, 50, 255, 256};
    const Pattern extra[] = {Ties, RoundEqual, Random, Specials};
    const long long rows = wk_quick() ? 4 : 24; // the sanitizers run it quick
    int i = 0;
    for (int k : ks)
        for (int pi = 0; pi < kOrderedCount + 4; ++pi, ++i) {
            if (wk_thin(i, 4)) continue;
            const Pattern p = pi < kOrderedCount ? kOrdered[pi] : extra[pi - kOrderedCount];
            const Shape s = {i % 3 == 0 ? 3 : rows, i % 3 == 0 ? 70001 : 20011, k};
            const int off = i % 4;
            const long long ld = s.cols + (i % 3);
            if (i % 3 == 0 && p != RoundEqual) runCase<float, int>(&rng, s, off, ld, p, i % 2 == 0);
            else if (i % 3 == 1) runCase<__half, long long>(&rng, s, off, ld, p, i % 2 == 0);
            else runCase<__nv_bfloat16, int>(&rng, s, off, ld, p, i % 2 == 0);
        }
    for (int pi = 0; pi < kOrderedCount; ++pi) {
        runCase<float, long long>(&rng, {3, 1025, 256}, pi % 4, 1025 + pi % 2, kOrdered[pi], pi % 2 == 0);
        runCase<__nv_bfloat16, int>(&rng, {2, 1100, 250}, pi % 3, 1100, kOrdered[pi], pi % 2 == 1);
    }
}

// Stage 4's sort (topkSortKept) alone: one block sorts keys[0 .. n) in shared memory; the slots past n
// hold a marker the sort must neither read nor overwrite.
constexpr unsigned long long kSortMarker = 0x5a5a5a5a5a5a5a5aull;
__global__ void sortKeptKernel(const unsigned long long* in, int n, unsigned long long* out) {
    __shared__ warpkit::detail::TopKFilterShared s;
    const int t = (int)threadIdx.x;
    s.merge.sel.keys[t] = t < n ? in[t] : kSortMarker;
    __syncthreads();
    warpkit::detail::topkSortKept(s, n);
    __syncthreads();
    out[t] = s.merge.sel.keys[t];
}

// n = 0 .. 256 distinct nonzero packed keys (random values; four values, so ranked by index; rising, so
// every run's keys rank among the others' at the ends) into rank order, largest first.
Test(device_topk, sort_kept) {
    WK_REQUIRE_GPU();
    constexpr int B = warpkit::detail::kTopKThreads;
    wk_rng rng = wk_rng_make(0x712);
    unsigned long long* din = wk_alloc<unsigned long long>(B);
    unsigned long long* dout = wk_alloc<unsigned long long>(B);
    const int ns[] = {0, 1, 2, 17, 31, 32, 33, 50, 63, 64, 65, 100, 128, 129, 200, 224, 255, 256};
    for (int n : ns)
        for (int form = 0; form < 3; ++form) {
            std::vector<unsigned long long> keys(n), got(B);
            for (int i = 0; i < n; ++i) {
                const unsigned long long hi = form == 0 ? wk_next(&rng) >> 32 : form == 1 ? wk_int(&rng, 1, 4) : i;
                const unsigned index = (unsigned)(i * 7919 % 65536); // distinct for n <= 256
                keys[i] = hi << 32 | (0xffffffffu - index);
            }
            if (n > 0) wk_upload(din, keys.data(), n);
            wk_poison(dout, B);
            sortKeptKernel<<<1, B>>>(din, n, dout);
            WK_LAUNCHED();
            wk_download(got.data(), dout, B);
            std::sort(keys.begin(), keys.end(), [](unsigned long long a, unsigned long long b) { return a > b; });
            for (int i = 0; i < B; ++i) {
                const unsigned long long want = i < n ? keys[i] : kSortMarker;
                cr_assert(got[i] == want, "topkSortKept n=%d form %d: slot %d holds %llx, want %llx", n, form, i,
                          got[i], want);
            }
        }
    WK_CUDA(cudaFree(din));
    WK_CUDA(cudaFree(dout));
}

// ---- determinism: two streams at once, the same bits ------------------------------------------------
Test(device_topk, two_streams_same_bits) {
    WK_REQUIRE_GPU();
    const long long rows = 8;
    const int cols = 100003, k = 64;
    wk_rng rng = wk_rng_make(0x705);
    std::vector<__nv_bfloat16> h((size_t)(rows * cols));
    for (auto& v : h) v = wk_from_double<__nv_bfloat16>((double)wk_int(&rng, -20, 20)); // many ties
    __nv_bfloat16* dx = wk_alloc<__nv_bfloat16>(h.size());
    wk_upload(dx, h.data(), h.size());
    const int bad = wk_two_threads(4, false, [&](int, int, cudaStream_t st) {
        std::vector<long long> got[2];
        for (int run = 0; run < 2; ++run) {
            long long* idx = wk_alloc<long long>(rows * k);
            size_t bytes = 0;
            WK_CUDA(warpkit::rowTopK(dx, (__nv_bfloat16*)nullptr, idx, rows, cols, k, true, cols, nullptr, &bytes, st));
            void* ws = wk_workspace(bytes);
            if (run) WK_CUDA(warpkit::rowTopK(dx, (__nv_bfloat16*)nullptr, idx, rows, cols, k, true, cols, st));
            else WK_CUDA(warpkit::rowTopK(dx, (__nv_bfloat16*)nullptr, idx, rows, cols, k, true, cols, ws, &bytes, st));
            WK_CUDA(cudaStreamSynchronize(st));
            got[run].resize(rows * k);
            wk_download(got[run].data(), idx, rows * k);
            WK_CUDA(cudaFree(idx));
            WK_CUDA(cudaFree(ws));
        }
        return got[0] == got[1] ? 0 : 1;
    });
    cr_assert(bad == 0, "%d runs gave other indices", bad);
    WK_CUDA(cudaFree(dx));
}

// ---- S3's arrival words: any workspace content, reuse back to back, other shapes, graph replays -------
/// One rowTopK of shape s into idx on st with workspace ws (bytes of it) or, ws null, without one.
static void topkInto(const float* dx, Shape s, int* idx, void* ws, size_t bytes, cudaStream_t st) {
    if (ws) WK_CUDA(warpkit::rowTopK(dx, (float*)nullptr, idx, s.rows, s.cols, s.k, true, s.cols, ws, &bytes, st));
    else WK_CUDA(warpkit::rowTopK(dx, (float*)nullptr, idx, s.rows, s.cols, s.k, true, s.cols, st));
}

/// Split rows (S3: one launch, the last block of a row merges its slices, counted on an arrival word a
/// row that needs no zeroing): with a workspace that holds zeros, a poison, or 0xff, each pair of
/// shapes (a, b) runs a, b, a on the same workspace back to back on one stream (b's arrival words lie
/// where a's candidates were), then a as a captured graph replayed three times; every answer must
/// equal the form without a workspace (one block a row).
Test(device_topk, split_workspace_states) {
    WK_REQUIRE_GPU();
    wk_rng rng = wk_rng_make(0x70c);
    // one row of the most slices (the last one empty), k = 1, rows not a multiple of the slices, k = 256;
    // k = 1 on shapes that stay on T1 (S3) with a workspace on the H100 (T0 elsewhere: no workspace)
    const Shape shapes[][2] = {{{1, 262147, 8}, {2, 200003, 1}},
                               {{5, 70001, 200}, {1, 262144, 256}},
                               {{40, 131075, 1}, {13, 50257, 50}},
                               {{2, 151936, 1}, {7, 9001, 16}},
                               {{8, 131075, 16}, {2, 100003, 40}}}; // S4 after S4
    const int fills[] = {0x00, 0x5c, 0xff};
    long long maxN = 0; // the largest rows x cols of any shape above
    for (const auto& pair : shapes)
        for (const Shape& s : pair) maxN = s.rows * s.cols > maxN ? s.rows * s.cols : maxN;
    std::vector<float> h((size_t)maxN);
    for (auto& v : h) v = (float)wk_uniform(&rng, -100, 100);
    for (size_t i = 0; i < h.size(); i += 4099) h[i] = (float)wk_int(&rng, -2, 2); // some ties
    float* dx = wk_alloc<float>(h.size());
    wk_upload(dx, h.data(), h.size());
    cudaStream_t st;
    WK_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    const int outN = 64 * 256;
    int* out[4];
    for (auto& o : out) o = wk_alloc<int>(outN);
    std::vector<int> got(outN), want(outN);
    for (int f = 0; f < 3; ++f)
        for (const auto& pair : shapes) {
            const Shape a = pair[0], b = pair[1];
            size_t ba = 0, bb = 0;
            WK_CUDA(warpkit::rowTopK(dx, (float*)nullptr, out[0], a.rows, a.cols, a.k, true, a.cols, nullptr, &ba));
            WK_CUDA(warpkit::rowTopK(dx, (float*)nullptr, out[0], b.rows, b.cols, b.k, true, b.cols, nullptr, &bb));
            cr_assert(ba > 16 && bb > 16, "rows=%lld cols=%d k=%d: no split (%zu bytes)", a.rows, a.cols, a.k, ba);
            const size_t bytes = ba > bb ? ba : bb;
            void* ws = wk_alloc<char>(bytes);
            WK_CUDA(cudaMemset(ws, fills[f], bytes));
            for (auto& o : out) wk_poison(o, outN);
            WK_CUDA(cudaDeviceSynchronize()); // st does not wait for the legacy stream
            topkInto(dx, a, out[0], ws, bytes, st);
            topkInto(dx, b, out[1], ws, bytes, st);
            topkInto(dx, a, out[2], ws, bytes, st);
            topkInto(dx, a, out[3], nullptr, 0, st);
            WK_CUDA(cudaStreamSynchronize(st));
            WK_LAUNCHED();
            const size_t na = (size_t)(a.rows * a.k), nb = (size_t)(b.rows * b.k);
            wk_download(want.data(), out[3], na);
            for (int c : {0, 2}) {
                wk_download(got.data(), out[c], na);
                cr_assert(memcmp(got.data(), want.data(), na * sizeof(int)) == 0,
                          "fill 0x%02x rows=%lld cols=%d k=%d: call %d on the workspace differs from the form without",
                          fills[f], a.rows, a.cols, a.k, c);
            }
            topkInto(dx, b, out[3], nullptr, 0, st);
            WK_CUDA(cudaStreamSynchronize(st));
            wk_download(want.data(), out[3], nb);
            wk_download(got.data(), out[1], nb);
            cr_assert(memcmp(got.data(), want.data(), nb * sizeof(int)) == 0,
                      "fill 0x%02x rows=%lld cols=%d k=%d after rows=%lld cols=%d k=%d: differs from the form without",
                      fills[f], b.rows, b.cols, b.k, a.rows, a.cols, a.k);
            // a captured call replays with the same tag: the words must be clean between replays
            WK_CUDA(cudaMemset(ws, fills[f], bytes));
            WK_CUDA(cudaDeviceSynchronize());
            cudaGraph_t graph;
            cudaGraphExec_t exec;
            WK_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
            topkInto(dx, a, out[0], ws, bytes, st);
            WK_CUDA(cudaStreamEndCapture(st, &graph));
            WK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
            topkInto(dx, a, out[3], nullptr, 0, st);
            WK_CUDA(cudaStreamSynchronize(st));
            wk_download(want.data(), out[3], na);
            for (int r = 0; r < 3; ++r) {
                wk_poison(out[0], outN);
                WK_CUDA(cudaDeviceSynchronize());
                WK_CUDA(cudaGraphLaunch(exec, st));
                WK_CUDA(cudaStreamSynchronize(st));
                wk_download(got.data(), out[0], na);
                cr_assert(memcmp(got.data(), want.data(), na * sizeof(int)) == 0,
                          "fill 0x%02x rows=%lld cols=%d k=%d: graph replay %d differs from the form without", fills[f],
                          a.rows, a.cols, a.k, r);
            }
            WK_CUDA(cudaGraphExecDestroy(exec));
            WK_CUDA(cudaGraphDestroy(graph));
            WK_CUDA(cudaFree(ws));
        }
    for (auto& o : out) WK_CUDA(cudaFree(o));
    WK_CUDA(cudaStreamDestroy(st));
    WK_CUDA(cudaFree(dx));
}

// ---- the size query without data pointers; any workspace address --------------------------------
/// CUB's habit: a size query with every data pointer null answers what the query with them answers
/// (the size depends on neither the pointers nor their alignment), for rowTopK, rowTopKMask,
/// rowSample and rowArgMax; the scalars are still checked (the size then left alone).
Test(device_topk, size_query_without_pointers) {
    WK_REQUIRE_GPU();
    float* dx = wk_alloc<float>(16);
    float* dv = wk_alloc<float>(16);
    int* di = wk_alloc<int>(16);
    const float* nx = nullptr;
    float* nv = nullptr;
    int* ni = nullptr;
    const cudaError_t inv = cudaErrorInvalidValue;
    struct Shape {
        long long rows;
        int cols, k;
    };
    const Shape shapes[] = {{1, 50, 5}, {2, 5000, 64}, {3, 100000, 300}, {4096, 128, 1}, {5, 3000, 2048}, {0, 10, 3}};
    int bad = 0;
    for (const Shape& s : shapes) {
        size_t got[2][5] = {};
        for (int q = 0; q < 2; ++q) { // q 1: every data pointer null
            const float* x = q ? nx : dx + 1;
            float* v = q ? nv : dv;
            int* i = q ? ni : di;
            size_t* b = got[q];
            const cudaError_t e[5] = {
                warpkit::rowTopK(x, v, i, s.rows, s.cols, s.k, true, s.cols, nullptr, &b[0]),
                warpkit::rowTopKMask(x, v, s.rows, s.cols, s.k, s.cols, s.cols, nullptr, &b[1]),
                warpkit::rowSample(x, i, s.rows, s.cols, 1.f, s.k, 0.9f, 0.f, 1ull, 0ull, s.cols, nullptr, &b[2]),
                warpkit::rowArgMax(x, v, i, s.rows, s.cols, s.cols, nullptr, &b[3]),
                warpkit::rowTopK(x, (float*)nullptr, i, s.rows, s.cols, s.k, false, s.cols + 3, nullptr, &b[4])};
            for (int c = 0; c < 5; ++c)
                if (e[c] != cudaSuccess)
                    cr_log_error("rows %lld cols %d k %d, call %d, %s pointers: %s", s.rows, s.cols, s.k, c,
                                 q ? "null" : "real", cudaGetErrorString(e[c])),
                        ++bad;
        }
        for (int c = 0; c < 5; ++c)
            if (got[0][c] != got[1][c] || got[1][c] < 1)
                cr_log_error("rows %lld cols %d k %d, call %d: %zu bytes with pointers, %zu without", s.rows, s.cols,
                             s.k, c, got[0][c], got[1][c]),
                    ++bad;
        if (s.rows == 0) continue;
        size_t keep = 77;
        const cudaError_t e[5] = {
            warpkit::rowTopK(nx, nv, ni, s.rows, s.cols, s.cols + 1, true, s.cols, nullptr, &keep),
            warpkit::rowTopK(nx, nv, ni, s.rows, s.cols, s.k, true, s.cols - 1, nullptr, &keep),
            warpkit::rowTopKMask(nx, nv, s.rows, s.cols, s.k, s.cols, s.cols - 1, nullptr, &keep),
            warpkit::rowSample(nx, ni, s.rows, s.cols, 1.f, s.cols + 1, 0.9f, 0.f, 1ull, 0ull, s.cols, nullptr, &keep),
            warpkit::rowArgMax(nx, nv, ni, s.rows, s.cols, s.cols - 1, nullptr, &keep)};
        for (int c = 0; c < 5; ++c)
            if (e[c] != inv || keep != 77)
                cr_log_error("rows %lld cols %d: bad scalar %d with null pointers: %s, size %zu", s.rows, s.cols, c,
                             cudaGetErrorString(e[c]), keep),
                    ++bad;
    }
    cr_expect(bad == 0, "%d size queries without data pointers answered wrong", bad);
    for (void* p : {(void*)dx, (void*)dv, (void*)di}) WK_CUDA(cudaFree(p));
}

/// The header: the workspace needs no alignment. rowTopK (rows split over blocks: the levels'
/// buffers in the workspace), rowTopKMask and rowSample (its candidates in the workspace) with the
/// workspace at base + 1, 3, 8, 15: the same bits as at base (wk_workspace_any_address).
Test(device_topk, workspace_any_address) {
    WK_REQUIRE_GPU();
    struct Shape {
        long long rows;
        int cols, k;
    };
    const Shape shapes[] = {{1, 100000, 64}, {2, 300000, 1000}, {3, 5000, 8}, {1, 1 << 21, 300}, {40, 20000, 2048}};
    wk_rng r = wk_rng_make(0x0dd5);
    int bad = 0, split = 0;
    for (const Shape& s : shapes) {
        const long long n = s.rows * s.cols, nk = s.rows * s.k;
        std::vector<float> h(n + 1);
        for (auto& v : h) v = (float)wk_uniform(&r, -100.0, 100.0);
        float* dx = wk_alloc<float>(n + 1);
        wk_upload(dx, h.data(), n + 1);
        unsigned char* out = wk_alloc<unsigned char>(n * 4 + 16); // values then indices, or y, or tokens
        float* v = reinterpret_cast<float*>(out);
        int* i = reinterpret_cast<int*>(out + nk * 4);
        char what[96];
        size_t bytes = 0;
        WK_CUDA(warpkit::rowTopK(dx + 1, v, i, s.rows, s.cols, s.k, true, s.cols, nullptr, &bytes));
        split += bytes > 16; // more than the alignment slack: the levels use the workspace
        snprintf(what, sizeof what, "rowTopK rows %lld cols %d k %d", s.rows, s.cols, s.k);
        bad += wk_workspace_any_address(
            [&](void* w, size_t* b) {
                return warpkit::rowTopK((const float*)dx + 1, v, i, s.rows, s.cols, s.k, true, s.cols, w, b);
            },
            out, nk * 8, what);
        snprintf(what, sizeof what, "rowTopKMask rows %lld cols %d k %d", s.rows, s.cols, s.k);
        bad += wk_workspace_any_address(
            [&](void* w, size_t* b) {
                return warpkit::rowTopKMask((const float*)dx, v, s.rows, s.cols, s.k, s.cols, s.cols, w, b);
            },
            out, n * 4, what);
        snprintf(what, sizeof what, "rowSample rows %lld cols %d k %d", s.rows, s.cols, s.k);
        bad += wk_workspace_any_address(
            [&](void* w, size_t* b) {
                return warpkit::rowSample((const float*)dx, i, s.rows, s.cols, 1.f, s.k, 0.9f, 0.f, 7ull, 3ull, s.cols,
                                          w, b);
            },
            i, s.rows * 4, what);
        for (void* p : {(void*)dx, (void*)out}) WK_CUDA(cudaFree(p));
    }
    cr_expect(split > 0, "no shape split its rows over blocks (the workspace unused)");
    cr_expect(bad == 0, "%d calls wrote other bits with the workspace at an odd address", bad);
}

// ---- bad arguments: cudaErrorInvalidValue, nothing written -------------------------------------------
Test(device_topk, bad_arguments) {
    WK_REQUIRE_GPU();
    float* dx = wk_alloc<float>(100);
    float* v = wk_alloc<float>(100);
    int* idx = wk_alloc<int>(100);
    wk_poison(v, 100);
    wk_poison(idx, 100);
    size_t bytes = 0;
    WK_CUDA(warpkit::rowTopK(dx, v, idx, 2, 50, 5, true, 50, nullptr, &bytes));
    void* ws = wk_workspace(bytes);
    const cudaError_t inv = cudaErrorInvalidValue;
    cr_assert(warpkit::rowTopK(dx, v, idx, 2, 50, 51, true, 50) == inv, "k > cols");
    cr_assert(warpkit::rowTopK(dx, v, idx, 2, 50, 0, true, 50) == inv, "k = 0");
    cr_assert(warpkit::rowTopK(dx, v, idx, 2, 50, -1, true, 50, ws, &bytes) == inv, "k < 0");
    cr_assert(warpkit::rowTopK(dx, v, idx, -1, 50, 5, true, 50) == inv, "rows < 0");
    cr_assert(warpkit::rowTopK(dx, v, idx, 2, -1, 5, true, 50) == inv, "cols < 0");
    cr_assert(warpkit::rowTopK(dx, v, idx, 2, 50, 5, true, 49) == inv, "ldx < cols");
    cr_assert(warpkit::rowTopK((const float*)nullptr, v, idx, 2, 50, 5, true, 50) == inv, "null x");
    cr_assert(warpkit::rowTopK(dx, v, (int*)nullptr, 2, 50, 5, true, 50) == inv, "null indices");
    cr_assert(warpkit::rowTopK(dx, v, idx, 2, 50, 5, true, 50, ws, (size_t*)nullptr) == inv, "null workspaceBytes");
    size_t small = bytes - 1;
    cr_assert(warpkit::rowTopK(dx, v, idx, 2, 50, 5, true, 50, ws, &small) == inv, "workspace too small");
    cr_assert(warpkit::rowArgMax(dx, v, idx, 2, 0, 0) == inv, "argmax of empty rows");
    WK_CUDA(warpkit::rowTopK(dx, v, idx, 0, 50, 51, true, 50)); // rows = 0: nothing to do, any k
    WK_CUDA(warpkit::rowTopK(dx, v, idx, 0, 0, 0, true, 0, ws, &bytes));
    WK_LAUNCHED();
    std::vector<unsigned char> gv(400), gi(400);
    wk_download(gv.data(), (unsigned char*)v, 400);
    wk_download(gi.data(), (unsigned char*)idx, 400);
    for (int i = 0; i < 400; ++i) cr_assert(gv[i] == 0xA5 && gi[i] == 0xA5, "byte %d written by a refused call", i);
    for (void* b : {(void*)dx, (void*)v, (void*)idx, ws}) WK_CUDA(cudaFree(b));
}

// ---- rowTopKMask: the top-k set kept, the rest -inf; in place and out of place ----------------------
template <typename T> void maskCase(wk_rng* rng, long long rows, int cols, int k, bool inPlace) {
    const long long ld = cols + 2, ldy = inPlace ? ld : cols + 5;
    std::vector<T> h((size_t)(rows * ld));
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            h[(size_t)(r * ld + c)] = wk_from_double<T>(genValue<T>(rng, (Pattern)((r + c / 64) % kPatterns), c, cols));
    T* dx = wk_alloc<T>(h.size());
    T* dy = inPlace ? dx : wk_alloc<T>((size_t)(rows * ldy));
    wk_upload(dx, h.data(), h.size());
    if (!inPlace) wk_poison(dy, (size_t)(rows * ldy));
    size_t bytes = 0;
    WK_CUDA(warpkit::rowTopKMask(dx, dy, rows, cols, k, ld, ldy, nullptr, &bytes));
    void* ws = wk_workspace(bytes);
    WK_CUDA(warpkit::rowTopKMask(dx, dy, rows, cols, k, ld, ldy, ws, &bytes));
    WK_LAUNCHED();
    std::vector<T> got((size_t)(rows * ldy));
    wk_download(got.data(), dy, got.size());
    std::vector<int> order(cols);
    std::vector<char> keep(cols);
    const T minusInf = wk_from_double<T>(-INFINITY);
    for (long long r = 0; r < rows; ++r) {
        const T* row = h.data() + r * ld;
        for (int c = 0; c < cols; ++c) order[c] = c;
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
            return wk_ranks_before(wk_to_double(row[a]), wk_to_double(row[b]), true);
        });
        std::fill(keep.begin(), keep.end(), 0);
        for (int j = 0; j < k; ++j) keep[order[j]] = 1;
        for (int c = 0; c < cols; ++c) {
            const T want = keep[c] ? row[c] : minusInf;
            cr_assert(sameBits(got[(size_t)(r * ldy + c)], want),
                      "rowTopKMask<%s> rows=%lld cols=%d k=%d %s: row %lld col %d", wk_type_name<T>(), rows, cols, k,
                      inPlace ? "in place" : "", r, c);
        }
    }
    WK_CUDA(cudaFree(dx));
    if (!inPlace) WK_CUDA(cudaFree(dy));
    WK_CUDA(cudaFree(ws));
}

Test(device_topk, mask) {
    WK_REQUIRE_GPU();
    wk_rng rng = wk_rng_make(0x706);
    for (long long rows : {1LL, 5LL, 300LL})
        for (int cols : {7, 100, 1000, 3001, 5000, 70001}) // the warp kernels up to 4096 columns
            for (int k : {1, 5, 8, 32, 33, 256, 2000, 4500}) {
                if (k > cols || rows * cols > 3000000) continue;
                maskCase<float>(&rng, rows, cols, k, k % 2 == 1);
                maskCase<__nv_bfloat16>(&rng, rows, cols, k, k % 2 == 0);
            }
}

// ---- rowSample --------------------------------------------------------------------------------------
namespace {

/// The probabilities rowSample draws from (double precision): softmax(l / T) over the topK largest
/// (0: all), min-p, then top-p, as in the header comment.
std::vector<double> sampleProbs(const std::vector<float>& l, double T, int topK, double topP, double minP) {
    const int n = (int)l.size(), k = topK ? topK : n;
    std::vector<int> order(n);
    for (int i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return l[a] > l[b]; });
    std::vector<double> w(n, 0.0);
    double total = 0;
    for (int r = 0; r < k; ++r) {
        const double x = l[order[r]] == -INFINITY ? 0.0 : exp(((double)l[order[r]] - l[order[0]]) / T);
        w[order[r]] = x < minP ? 0.0 : x;
        total += w[order[r]];
    }
    double before = 0, kept = 0;
    for (int r = 0; r < k; ++r) {
        const double x = w[order[r]];
        if (!(before < topP * total)) w[order[r]] = 0;
        before += x;
        kept += w[order[r]];
    }
    for (double& x : w) x /= kept;
    return w;
}

/// Draws rows tokens from `rows` copies of logits; returns their counts per column.
std::vector<long long> drawCounts(const std::vector<float>& l, long long rows, float T, int topK, float topP,
                                  float minP, unsigned long long seed, unsigned long long offset,
                                  std::vector<int>* tokens) {
    const int cols = (int)l.size();
    std::vector<float> h((size_t)(rows * cols));
    for (long long r = 0; r < rows; ++r) std::copy(l.begin(), l.end(), h.begin() + r * cols);
    float* dx = wk_alloc<float>(h.size());
    int* out = wk_alloc<int>(rows);
    wk_upload(dx, h.data(), h.size());
    wk_poison(out, rows);
    size_t bytes = 0;
    WK_CUDA(warpkit::rowSample(dx, out, rows, cols, T, topK, topP, minP, seed, offset, cols, nullptr, &bytes));
    void* ws = wk_workspace(bytes);
    WK_CUDA(warpkit::rowSample(dx, out, rows, cols, T, topK, topP, minP, seed, offset, cols, ws, &bytes));
    WK_LAUNCHED();
    tokens->resize(rows);
    wk_download(tokens->data(), out, rows);
    std::vector<long long> counts(cols, 0);
    for (int t : *tokens) {
        cr_assert(t >= 0 && t < cols, "token %d outside the row", t);
        ++counts[t];
    }
    for (void* b : {(void*)dx, (void*)out, ws}) WK_CUDA(cudaFree(b));
    return counts;
}

/// Chi-square statistic of counts against probabilities p (cells of p > 0); a token of p = 0 fails.
double chiSquare(const std::vector<long long>& counts, const std::vector<double>& p, long long draws, int* cells) {
    double chi = 0;
    *cells = 0;
    for (size_t i = 0; i < p.size(); ++i) {
        if (p[i] == 0) {
            cr_assert(counts[i] == 0, "column %zu has probability 0 but was drawn %lld times", i, counts[i]);
            continue;
        }
        const double e = p[i] * (double)draws;
        chi += (counts[i] - e) * (counts[i] - e) / e;
        ++*cells;
    }
    return chi;
}

} // namespace

Test(device_topk, sample_distribution) {
    WK_REQUIRE_GPU();
    const std::vector<float> l = {0.f, 1.f, 2.f, -1.f, 0.5f, 3.f, -INFINITY, 1.f, 2.5f, -2.f};
    const long long draws = wk_quick() ? 100000 : 1000000;
    struct Case {
        float T;
        int topK;
        float topP, minP;
    };
    // top-p and min-p cut well away from a boundary (float and double agree on the kept set)
    const Case cases[] = {
        {0.7f, 0, 1.f, 0.f}, {1.f, 4, 1.f, 0.f}, {1.f, 0, 0.75f, 0.f}, {1.3f, 0, 1.f, 0.2f}, {0.9f, 6, 0.9f, 0.05f}};
    for (const Case& c : cases) {
        std::vector<int> tokens;
        const std::vector<long long> counts = drawCounts(l, draws, c.T, c.topK, c.topP, c.minP, 42, 7, &tokens);
        const std::vector<double> p = sampleProbs(l, c.T, c.topK, c.topP, c.minP);
        int cells = 0;
        const double chi = chiSquare(counts, p, draws, &cells);
        // chi-square with cells - 1 <= 8 degrees of freedom: 40 is exceeded with probability < 1e-5
        cr_assert(chi < 40.0, "T=%g topK=%d topP=%g minP=%g: chi-square %g over %d cells", c.T, c.topK, c.topP, c.minP,
                  chi, cells);
    }
}

Test(device_topk, sample_argmax_and_replay) {
    WK_REQUIRE_GPU();
    wk_rng rng = wk_rng_make(0x707);
    const int cols = 50000;
    const long long rows = 300;
    std::vector<float> h((size_t)(rows * cols));
    for (auto& v : h) v = (float)wk_uniform(&rng, -5, 5);
    for (long long r = 0; r < rows; ++r) h[(size_t)(r * cols + wk_int(&rng, 0, cols - 1))] = 7.f; // a clear maximum
    float* dx = wk_alloc<float>(h.size());
    wk_upload(dx, h.data(), h.size());
    long long *out = wk_alloc<long long>(rows), *out2 = wk_alloc<long long>(rows), *am = wk_alloc<long long>(rows);
    unsigned long long* dseed = wk_alloc<unsigned long long>(2);
    const unsigned long long so[2] = {1234, 99};
    wk_upload(dseed, so, 2);
    size_t bytes = 0;
    WK_CUDA(warpkit::rowSample(dx, out, rows, cols, 1.f, 1000, 0.95f, 0.f, 1234ull, 99ull, cols, nullptr, &bytes));
    void* ws = wk_workspace(bytes);
    WK_CUDA(warpkit::rowArgMax(dx, (float*)nullptr, am, rows, cols, cols));
    std::vector<long long> a(rows), g(rows), g2(rows);
    // temperature 0 and a tiny temperature give the argmax
    for (float T : {0.f, 1e-4f}) {
        wk_poison(out, rows);
        WK_CUDA(warpkit::rowSample(dx, out, rows, cols, T, 1000, 0.95f, 0.f, 1234ull, 99ull, cols, ws, &bytes));
        WK_LAUNCHED();
        wk_download(a.data(), am, rows);
        wk_download(g.data(), out, rows);
        for (long long r = 0; r < rows; ++r)
            cr_assert(g[r] == a[r], "T=%g row %lld: %lld, argmax %lld", T, r, g[r], a[r]);
    }
    // the same (seed, offset): the same tokens, from values or device pointers, and for the first rows
    // alone (another plan and grid); another offset: other tokens
    WK_CUDA(warpkit::rowSample(dx, out, rows, cols, 1.f, 1000, 0.95f, 0.f, 1234ull, 99ull, cols, ws, &bytes));
    WK_CUDA(warpkit::rowSample(dx, out2, rows, cols, 1.f, 1000, 0.95f, 0.f, dseed, dseed + 1, cols, ws, &bytes));
    WK_LAUNCHED();
    wk_download(g.data(), out, rows);
    wk_download(g2.data(), out2, rows);
    cr_assert(g == g2, "device-pointer seed and offset gave other tokens");
    WK_CUDA(warpkit::rowSample(dx, out2, 3, cols, 1.f, 1000, 0.95f, 0.f, 1234ull, 99ull, cols, ws, &bytes));
    WK_LAUNCHED();
    wk_download(g2.data(), out2, 3);
    for (int r = 0; r < 3; ++r)
        cr_assert(g2[r] == g[r], "row %d: %lld alone, %lld among %lld rows", r, g2[r], g[r], rows);
    WK_CUDA(warpkit::rowSample(dx, out2, rows, cols, 1.f, 1000, 0.95f, 0.f, 1234ull, 100ull, cols, ws, &bytes));
    WK_LAUNCHED();
    wk_download(g2.data(), out2, rows);
    int same = 0;
    for (long long r = 0; r < rows; ++r) same += g2[r] == g[r];
    cr_assert(same < rows / 2, "offset 100 repeated %d of %lld tokens of offset 99", same, rows);
    for (void* b : {(void*)dx, (void*)out, (void*)out2, (void*)am, (void*)dseed, ws}) WK_CUDA(cudaFree(b));
}

Test(device_topk, sample_bad_arguments) {
    WK_REQUIRE_GPU();
    float* dx = wk_alloc<float>(100);
    int* out = wk_alloc<int>(4);
    wk_poison(out, 4);
    size_t bytes = 0;
    WK_CUDA(warpkit::rowSample(dx, out, 2, 50, 1.f, 10, 0.9f, 0.f, 1ull, 0ull, 50, nullptr, &bytes));
    void* ws = wk_workspace(bytes);
    const cudaError_t inv = cudaErrorInvalidValue;
    cr_assert(warpkit::rowSample(dx, out, 2, 50, -1.f, 10, 0.9f, 0.f, 1ull, 0ull, 50, ws, &bytes) == inv, "T < 0");
    cr_assert(warpkit::rowSample(dx, out, 2, 50, NAN, 10, 0.9f, 0.f, 1ull, 0ull, 50, ws, &bytes) == inv, "T NaN");
    cr_assert(warpkit::rowSample(dx, out, 2, 50, 1.f, 10, 0.f, 0.f, 1ull, 0ull, 50, ws, &bytes) == inv, "topP 0");
    cr_assert(warpkit::rowSample(dx, out, 2, 50, 1.f, 10, 1.5f, 0.f, 1ull, 0ull, 50, ws, &bytes) == inv, "topP > 1");
    cr_assert(warpkit::rowSample(dx, out, 2, 50, 1.f, 10, 0.9f, -0.1f, 1ull, 0ull, 50, ws, &bytes) == inv, "minP < 0");
    cr_assert(warpkit::rowSample(dx, out, 2, 50, 1.f, 10, NAN, 0.f, 1ull, 0ull, 50, ws, &bytes) == inv, "topP NaN");
    cr_assert(warpkit::rowSample(dx, out, 2, 50, 1.f, 10, 0.9f, NAN, 1ull, 0ull, 50, ws, &bytes) == inv, "minP NaN");
    cr_assert(warpkit::rowSample(dx, out, 2, 50, 1.f, 10, 0.9f, 1.5f, 1ull, 0ull, 50, ws, &bytes) == inv, "minP > 1");
    cr_assert(warpkit::rowSample(dx, out, 2, 50, 1.f, 51, 0.9f, 0.f, 1ull, 0ull, 50, ws, &bytes) == inv, "topK > cols");
    cr_assert(warpkit::rowSample(dx, out, 2, 50, 1.f, -1, 0.9f, 0.f, 1ull, 0ull, 50, ws, &bytes) == inv, "topK < 0");
    cr_assert(warpkit::rowSample(dx, out, -1, 50, 1.f, 10, 0.9f, 0.f, 1ull, 0ull, 50, ws, &bytes) == inv, "rows < 0");
    cr_assert(warpkit::rowSample(dx, out, 2, 50, 1.f, 10, 0.9f, 0.f, 1ull, 0ull, 49, ws, &bytes) == inv, "ldx < cols");
    cr_assert(warpkit::rowSample(dx, out, 2, 0, 1.f, 0, 0.9f, 0.f, 1ull, 0ull, 0, ws, &bytes) == inv, "cols = 0");
    cr_assert(warpkit::rowSample((const float*)nullptr, out, 2, 50, 1.f, 10, 0.9f, 0.f, 1ull, 0ull, 50, ws, &bytes) ==
                  inv,
              "null logits");
    cr_assert(warpkit::rowSample(dx, out, 2, 50, 1.f, 10, 0.9f, 0.f, 1ull, 0ull, 50, ws, (size_t*)nullptr) == inv,
              "null workspaceBytes");
    size_t small = bytes - 1;
    cr_assert(warpkit::rowSample(dx, out, 2, 50, 1.f, 10, 0.9f, 0.f, 1ull, 0ull, 50, ws, &small) == inv,
              "workspace too small");
    // the scalars are checked with rows = 0 too (as rowSampleMerge's)
    cr_assert(warpkit::rowSample(dx, out, 0, 50, -1.f, 10, 0.9f, 0.f, 1ull, 0ull, 50, ws, &bytes) == inv,
              "rows = 0, T < 0");
    cr_assert(warpkit::rowSample(dx, out, 0, 50, 1.f, 10, 0.9f, 0.f, 1ull, 0ull, 50, ws, &bytes) == cudaSuccess,
              "rows = 0");
    float* dwide = wk_alloc<float>(2 * 3000);
    size_t wideBytes = 0;
    cr_assert(warpkit::rowSample(dwide, out, 2, 3000, 1.f, 2049, 0.9f, 0.f, 1ull, 0ull, 3000, nullptr, &wideBytes) ==
                  cudaErrorNotSupported,
              "topK > 2048");
    cr_assert(warpkit::rowSample(dwide, out, 2, 3000, 1.f, 0, 0.9f, 0.f, 1ull, 0ull, 3000, nullptr, &wideBytes) ==
                  cudaErrorNotSupported,
              "topK = 0 on rows past 2048 columns");
    WK_CUDA(cudaFree(dwide));
    cr_assert(warpkit::rowSample(dx, (int*)nullptr, 2, 50, 1.f, 10, 0.9f, 0.f, 1ull, 0ull, 50, ws, &bytes) == inv,
              "null out");
    cr_assert(warpkit::rowSample(dx, out, 2, 50, 1.f, 10, 0.9f, 0.f, (const unsigned long long*)nullptr,
                                 (const unsigned long long*)nullptr, 50, ws, &bytes) == inv,
              "null seed pointer");
    WK_LAUNCHED();
    std::vector<unsigned char> g(16);
    wk_download(g.data(), (unsigned char*)out, 16);
    for (int i = 0; i < 16; ++i) cr_assert(g[i] == 0xA5, "byte %d written by a refused call", i);
    for (void* b : {(void*)dx, (void*)out, ws}) WK_CUDA(cudaFree(b));
}

// ---- rowSample in a captured CUDA graph: seed and offset read at each replay ----------------------------
Test(device_topk, sample_graph_replay) {
    WK_REQUIRE_GPU();
    wk_rng rng = wk_rng_make(0x708);
    const long long rows = 64;
    const int cols = 5000, reps = 3;
    std::vector<float> h((size_t)(rows * cols));
    for (auto& v : h) v = (float)wk_uniform(&rng, -3, 3);
    float* dx = wk_alloc<float>(h.size());
    wk_upload(dx, h.data(), h.size());
    int *out = wk_alloc<int>(rows), *ref = wk_alloc<int>(rows);
    unsigned long long* so = wk_alloc<unsigned long long>(2);
    size_t bytes = 0;
    WK_CUDA(warpkit::rowSample(dx, out, rows, cols, 1.f, 50, 0.95f, 0.f, so, so + 1, cols, nullptr, &bytes));
    void* ws = wk_workspace(bytes);
    void* ws2 = wk_workspace(bytes);
    cudaStream_t st;
    WK_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    WK_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    WK_CUDA(warpkit::rowSample(dx, out, rows, cols, 1.f, 50, 0.95f, 0.f, so, so + 1, cols, ws, &bytes, st));
    WK_CUDA(cudaStreamEndCapture(st, &graph));
    WK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    std::vector<int> got(rows), want(rows), first(rows);
    int changed = 0;
    for (int r = 0; r < reps; ++r) {
        const unsigned long long seedOffset[2] = {77, (unsigned long long)r};
        wk_upload(so, seedOffset, 2);
        wk_poison(out, rows);
        WK_CUDA(cudaGraphLaunch(exec, st));
        WK_CUDA(cudaStreamSynchronize(st));
        WK_CUDA(warpkit::rowSample(dx, ref, rows, cols, 1.f, 50, 0.95f, 0.f, 77ull, (unsigned long long)r, cols, ws2,
                                   &bytes));
        WK_LAUNCHED();
        wk_download(got.data(), out, rows);
        wk_download(want.data(), ref, rows);
        cr_assert(got == want, "replay %d: the graph's tokens differ from a direct call with offset %d", r, r);
        if (r == 0) first = got;
        else
            for (long long i = 0; i < rows; ++i) changed += got[i] != first[i];
    }
    cr_assert(changed > 0, "every replay drew the same tokens: the offset was not read at replay");
    WK_CUDA(cudaGraphExecDestroy(exec));
    WK_CUDA(cudaGraphDestroy(graph));
    WK_CUDA(cudaStreamDestroy(st));
    for (void* b : {(void*)dx, (void*)out, (void*)ref, (void*)so, ws, ws2}) WK_CUDA(cudaFree(b));
}

// ---- rowSample's edge settings and special rows: T = 0 or +inf, topK = 1, a tiny topP, minP = 1; rows
// with NaN, of -inf only, of one finite logit, with +inf; rows of one column ---------------------------
/// The columns rowSample returns for a row under a setting, each of them within 64 draws (host): rank
/// 0 alone for a NaN or -inf top, T = 0, topK = 1 or a tiny topP; else the kept columns among the
/// top k: the +inf logits for a +inf top; with T = +inf every logit above -inf (all weigh 1);
/// with minP = 1 those equal to the top; else those above -inf. Empty (`others`: a weighted draw
/// over many columns): not checked.
static std::vector<int> sampleSupport(const std::vector<double>& row, float T, int topK, float topP, float minP,
                                      bool others) {
    const int cols = (int)row.size();
    std::vector<int> order(cols);
    for (int c = 0; c < cols; ++c) order[c] = c;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return wk_ranks_before(row[a], row[b], true); });
    const double top = row[order[0]];
    if (isnan(top) || top == -INFINITY || T == 0.f || topK == 1 || topP < 1e-3f) return {order[0]};
    const int k = topK ? topK : cols;
    std::vector<int> set;
    for (int j = 0; j < k; ++j) {
        const double v = row[order[j]];
        const bool keep = top == INFINITY ? v == INFINITY
                          : T == INFINITY ? v > -INFINITY
                          : minP == 1.f   ? v == top
                                          : v > -INFINITY;
        if (keep) set.push_back(order[j]);
    }
    if (others) return {};
    std::sort(set.begin(), set.end());
    return set;
}

template <typename T, typename Idx> void sampleEdgeCase() {
    const int cols = 40, rows = 6;
    const long long ld = cols + 3;
    std::vector<double> v((size_t)rows * cols);
    for (int c = 0; c < cols; ++c) {
        v[0 * cols + c] = (double)((c * 17) % 40 - 20);                                // distinct
        v[1 * cols + c] = c == 3 || c == 9 ? 7.0 : c % 6 - 1;                          // two equal maxima, ties below
        v[2 * cols + c] = c == 12 || c == 30 ? NAN : c == 35 ? -NAN : (double)(c % 5); // the first NaN wins
        v[3 * cols + c] = -INFINITY;                                                   // column 0
        v[4 * cols + c] = c == 17 ? -3.0 : -INFINITY;                                  // the one finite logit
        v[5 * cols + c] = c == 5 || c == 22 ? INFINITY : (double)c;                    // one of the +inf logits
    }
    std::vector<T> h((size_t)(rows * ld), wk_from_double<T>(0.0));
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) h[(size_t)(r * ld + c)] = wk_from_double<T>(v[(size_t)r * cols + c]);
    T* dx = wk_alloc<T>(h.size());
    wk_upload(dx, h.data(), h.size());
    Idx* out = wk_alloc<Idx>(rows);
    size_t bytes = 0;
    WK_CUDA(warpkit::rowSample(dx, out, rows, cols, 1.f, 0, 1.f, 0.f, 9ull, 0ull, ld, nullptr, &bytes));
    void* ws = wk_workspace(bytes);
    struct Setting {
        float temp;
        int topK;
        float topP, minP;
        bool others; // rows 0 and 1 drawn over many columns (not checked)
    };
    const Setting set[] = {{0.f, 0, 1.f, 0.f, false},      {1.f, 1, 1.f, 0.f, false},      {1.f, 0, 1e-6f, 0.f, false},
                           {INFINITY, 4, 1.f, 0.f, false}, {INFINITY, 0, 1.f, 0.f, true},  {1.f, 0, 1.f, 1.f, false},
                           {1.f, 0, 1.f, 0.f, true},       {INFINITY, 1, 0.5f, 1.f, false}};
    for (const Setting& st : set) {
        std::vector<std::vector<int>> seen(rows);
        for (unsigned long long offset = 0; offset < 64; ++offset) {
            wk_poison(out, rows);
            WK_CUDA(warpkit::rowSample(dx, out, rows, cols, st.temp, st.topK, st.topP, st.minP, 9ull, offset, ld, ws,
                                       &bytes));
            WK_LAUNCHED();
            Idx got[rows];
            wk_download(got, out, rows);
            for (int r = 0; r < rows; ++r) {
                cr_assert(got[r] >= 0 && got[r] < cols, "%s T=%g topK=%d: row %d token %lld", wk_type_name<T>(),
                          st.temp, st.topK, r, (long long)got[r]);
                if (std::find(seen[r].begin(), seen[r].end(), (int)got[r]) == seen[r].end())
                    seen[r].push_back((int)got[r]);
            }
        }
        for (int r = 0; r < rows; ++r) {
            const std::vector<double> row(v.begin() + (size_t)r * cols, v.begin() + (size_t)(r + 1) * cols);
            const std::vector<int> want = sampleSupport(row, st.temp, st.topK, st.topP, st.minP, st.others && r < 2);
            if (want.empty()) continue;
            std::sort(seen[r].begin(), seen[r].end());
            // 64 draws: each column of a support of at most 4 equal weights is seen (missed with odds < 1e-7)
            cr_assert(seen[r] == want,
                      "%s T=%g topK=%d topP=%g minP=%g row %d: %zu columns seen, %zu expected (first %d, %d)",
                      wk_type_name<T>(), st.temp, st.topK, st.topP, st.minP, r, seen[r].size(), want.size(), seen[r][0],
                      want[0]);
        }
    }
    // rows of one column: column 0 on any setting
    const T one[3] = {wk_from_double<T>(2.0), wk_from_double<T>(NAN), wk_from_double<T>(-INFINITY)};
    wk_upload(dx, one, 3);
    for (float Tm : {0.f, 1.f, INFINITY}) {
        wk_poison(out, 3);
        WK_CUDA(warpkit::rowSample(dx, out, 3, 1, Tm, 0, 1.f, 0.f, 9ull, 5ull, 1, ws, &bytes));
        WK_LAUNCHED();
        Idx got[3];
        wk_download(got, out, 3);
        for (int r = 0; r < 3; ++r)
            cr_assert(got[r] == 0, "%s T=%g one column, row %d: token %lld", wk_type_name<T>(), Tm, r,
                      (long long)got[r]);
    }
    for (void* b : {(void*)dx, (void*)out, ws}) WK_CUDA(cudaFree(b));
}

Test(device_topk, sample_edge_settings) {
    WK_REQUIRE_GPU();
    sampleEdgeCase<float, int>();
    sampleEdgeCase<__half, long long>();
    sampleEdgeCase<__nv_bfloat16, int>();
}

// Host-only (runs without a GPU): every refused argument below is refused before the device is
// asked for anything, and nothing is written (the pointers are never dereferenced).
Test(device_topk, host_argument_checks) {
    const float* fx = (const float*)(size_t)0x1000;
    float* fv = (float*)(size_t)0x2000;
    int* fi = (int*)(size_t)0x3000;
    void* fw = (void*)(size_t)0x4000;
    const cudaError_t inv = cudaErrorInvalidValue;
    size_t bytes = 1 << 20;
    cr_expect(warpkit::rowTopK(fx, fv, fi, 2, 50, 0, true, 50, fw, &bytes) == inv, "k = 0");
    cr_expect(warpkit::rowTopK(fx, fv, fi, 2, 50, 51, false, 50, fw, &bytes) == inv, "k > cols");
    cr_expect(warpkit::rowTopK(fx, fv, fi, 2, 0, 1, true, 0) == inv, "cols = 0");
    cr_expect(warpkit::rowTopK(fx, fv, fi, 2, 50, 5, true, 49, fw, &bytes) == inv, "ldx < cols");
    cr_expect(warpkit::rowTopK(fx, fv, fi, -1, 50, 5, true, 50) == inv, "rows < 0");
    cr_expect(warpkit::rowTopK(fx, fv, fi, 2, 50, 5, true, 50, fw, (size_t*)nullptr) == inv, "null workspaceBytes");
    cr_expect(warpkit::rowTopK(fx, fv, fi, 0, 0, 0, true, 0, fw, &bytes) == cudaSuccess, "rows = 0");
    cr_expect(warpkit::rowArgMax(fx, fv, fi, 2, 0, 0) == inv && warpkit::rowArgMin(fx, fv, fi, 2, 50, 49) == inv,
              "rowArgMax cols = 0, rowArgMin ldx < cols");
    cr_expect(warpkit::rowArgMax(fx, fv, (int*)nullptr, 2, 50, 50) == inv, "rowArgMax null indices");
    cr_expect(warpkit::rowTopKMask(fx, fv, 2, 50, 5, 50, 49, fw, &bytes) == inv, "rowTopKMask ldy < cols");
    // rowSample: bad scalars for any rows (rows = 0 included), the rest with rows > 0
    for (long long rows : {0LL, 3LL}) {
        for (float T : {-1.f, NAN, -INFINITY})
            cr_expect(warpkit::rowSample(fx, fi, rows, 50, T, 5, 0.9f, 0.f, 1ull, 0ull, 50, fw, &bytes) == inv,
                      "rows %lld temperature %g", rows, T);
        for (float P : {0.f, -0.5f, 1.0001f, NAN})
            cr_expect(warpkit::rowSample(fx, fi, rows, 50, 1.f, 5, P, 0.f, 1ull, 0ull, 50, fw, &bytes) == inv,
                      "rows %lld topP %g", rows, P);
        for (float M : {-0.1f, 1.5f, NAN})
            cr_expect(warpkit::rowSample(fx, fi, rows, 50, 1.f, 5, 0.9f, M, 1ull, 0ull, 50, fw, &bytes) == inv,
                      "rows %lld minP %g", rows, M);
        cr_expect(warpkit::rowSample(fx, fi, rows, 50, 1.f, -1, 0.9f, 0.f, 1ull, 0ull, 50, fw, &bytes) == inv,
                  "rows %lld topK < 0", rows);
    }
    cr_expect(warpkit::rowSample(fx, fi, 3, 50, 1.f, 51, 0.9f, 0.f, 1ull, 0ull, 50, fw, &bytes) == inv, "topK > cols");
    cr_expect(warpkit::rowSample(fx, (int*)nullptr, 3, 50, 1.f, 5, 0.9f, 0.f, 1ull, 0ull, 50, fw, &bytes) == inv,
              "null out");
    cr_expect(warpkit::rowSample(fx, fi, 3, 50, 1.f, 5, 0.9f, 0.f, 1ull, 0ull, 49, fw, &bytes) == inv, "ldx < cols");
    // accepted without a launch: rows = 0 with temperature +inf (a valid setting), and its size query
    size_t q = 0;
    cr_expect(warpkit::rowSample(fx, fi, 0, 50, INFINITY, 5, 1.f, 1.f, 1ull, 0ull, 50, nullptr, &q) == cudaSuccess &&
                  q >= 1,
              "rows = 0, temperature +inf: size query");
    cr_expect(warpkit::rowSample(fx, fi, 0, 50, INFINITY, 5, 1.f, 1.f, 1ull, 0ull, 50, fw, &q) == cudaSuccess,
              "rows = 0, temperature +inf");
}
