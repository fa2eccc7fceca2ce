// bench/segment.cu: ragged data (device/segment.cuh): segmentReduceSum / Max and segmentSoftmax
// over CSR offsets, against a copy of the same bytes (values read and written, offsets read) and,
// for sum and max, cub::DeviceSegmentedReduce, timed alternately in the same run.
//
// Distributions (segment lengths from a hash of the segment index, so bench/torch_segment.py builds
// the same offsets): uniform with mean 1, 4, 32, 256, 4096 (lengths uniform in [0, 2 mean]);
// power-law (Zipf-like lengths floor(u^-1.2) - 1 below 10^5, plus 3 segments of max(rows / 16,
// 1.1 x 10^6) rows); one giant segment among 10^6 empty ones; long65536: segments of 65536 rows
// each (not in the default run: name it). Total elements (rows x heads) 2^24 and 2^26, fp32, int64
// offsets; `bf16` among the names: the sums and maxima (and CUB's) read bf16 values instead (no
// softmax, no alt column). Softmax takes heads 1 and 4 on every
// distribution and 8, 16 on mean 32 and power-law (the whole run stays near a minute). The rule
// column is the plan's (G5: the flat pass; G9: the lane kernel). For sum and max, `alt` times the
// other pass on the same call: the flat pass where the plan takes the lane groups or the lane
// kernel, the lane groups (G1 / G6, as for begin/end arrays) where it takes the flat pass, so one
// run places G5's and G9's mean limits; where it takes G11's or G12's teams, the lane groups (G1).
// For softmax, `alt` on the cells of the flat pass (G7: one head, mean up to 64) times the group
// kernels (G2, as for begin/end arrays or in place); on the lane kernel's (G9: one head, mean 2 to
// 5) the flat pass; on G8's (2, 4, 8, 16 heads: stage 1 by segments) G3's plan
// (the group kernel by pairs, as for x off a row's alignment); on G10's (a team a segment, long on
// average) the group kernels with its fields (G2's plan for one head, G8's for 4); elsewhere (G2c / G3c) the same plan
// without the slice tier (sliceGroup 0: the segments past 32768 elements on the chunk kernels);
// timed alternately with the call in the same run.
// Op and distribution names after the CSV path keep only those ops and distributions (either list
// empty: all of them but long65536), e.g. `./build/bench/segment out.csv softmax powerlaw giant`,
// `./build/bench/segment out.csv sum long65536 bf16`.
//   ./build/bench/segment [out.csv [op | distribution]...]
#include <warpkit/device/segment.cuh>
#include "bench.cuh"

#include <cub/device/device_segmented_reduce.cuh>

static const char* kDist[] = {"mean1", "mean4", "mean32", "mean256", "mean4096", "powerlaw", "giant", "long65536"};
static const char* kOps[] = {"sum", "max", "softmax"};

namespace wkd = warpkit::detail;

/// Grows the device buffer *p of *cap bytes to at least `need` bytes (its contents are not kept).
static void grow(void** p, size_t* cap, size_t need) {
    if (need <= *cap) return;
    if (*p) BENCH_CUDA(cudaFree(*p));
    BENCH_CUDA(cudaMalloc(p, need));
    *cap = need;
}

/// The pass the plan did not pick for an fp32 sum / max over CSR offsets (see the header): its
/// rule id, and a launch of it into y with workspace *ws (grown as needed).
template <typename Op> static const char* altPass(const float* x, float* y, long long rows, const long long* off,
                                                  long long segs, void** ws, size_t* cap, bool run) {
    const wkd::SegReduceAlgo<float, float, float, Op, false> a{x, y, Op{}, wkd::Identity<Op, float>::value(),
                                                               wkd::Identity<Op, float>::value()};
    const wkd::SegOffsets<long long> so{off, off + 1};
    const wkd::SegmentPlan plan = wkd::segmentPlan(wkd::SegReduce, 4, 1, segs, rows, true);
    const bool flat = plan.flat, team = plan.team > 0; // G11's, G12's teams: alt the lane groups (G1, no mean)
    const wkd::SegmentPlan g =
        team ? wkd::segmentPlan(wkd::SegReduce, 4, 1) : wkd::segmentPlan(wkd::SegReduce, 4, 1, segs, rows, false);
    const wkd::SegSizes z = wkd::segRoom(wkd::SegReduce, 4, 1, segs, rows, false);
    const size_t need = flat || team ? wkd::segWorkspaceBytes<float>(z) : wkd::segFlatBytes<float>(segs, rows);
    if (!run) {
        grow(ws, cap, need);
        return flat || team ? wkd::kSegmentRules[g.rule].id : "G5";
    }
    if (flat || team) BENCH_CUDA((wkd::segmentLaunch<256, 256>(a, so, segs, 1, rows, g, z, *ws, 0)));
    else BENCH_CUDA(wkd::segmentFlatLaunch(a, so, segs, rows, *ws, 0));
    return nullptr;
}

/// The fp32 plain softmax's plan without the slice tier, for rule G8 G3's plan, for G10 the group
/// kernels' (header): its id (the rule's and "c", G3, G2 or G8), and a launch of it into y with
/// workspace *ws (grown as needed).
static const char* softmaxNoSlice(const float* x, float* y, long long rows, const long long* off, long long segs,
                                  int heads, void** ws, size_t* cap, bool run) {
    const wkd::SegSoftmaxAlgo<float, warpkit::SoftmaxPlain> a{{x}, y};
    const wkd::SegOffsets<long long> so{off, off + 1};
    wkd::SegmentPlan p = wkd::segmentPlan(wkd::SegSoftmax, 4, heads, segs, rows, true);
    const bool byRows = p.byRows, team = p.team > 0;
    if (team) { // G10: the same fields without the team kernel, so G2's plan (one head) or G8's (4 heads)
        p.team = 0;
        p.byRows = heads > 1;
    } else if (byRows) { // G8: G3's plan (the same fields but perLane), the group kernel by pairs
        int g3 = 0;
        while (g3 + 1 < wkd::kSegmentRuleCount && strcmp(wkd::kSegmentRules[g3].id, "G3") != 0) ++g3;
        p.rule = g3;
        p.perLane = wkd::kSegmentRules[g3].perLane;
        p.byRows = false;
    } else {
        p.sliceGroup = 0;
    }
    const wkd::SegSizes z = wkd::segRoom(wkd::SegSoftmax, 4, heads, segs, rows, true);
    if (!run) {
        const size_t need = wkd::segWorkspaceBytes<warpkit::SoftmaxState>(z);
        grow(ws, cap, need);
        static char id[8];
        if (team) snprintf(id, sizeof id, "%s", heads > 1 ? "G8" : "G2");
        else snprintf(id, sizeof id, "%s%s", wkd::kSegmentRules[p.rule].id, byRows ? "" : "c");
        return id;
    }
    BENCH_CUDA((wkd::segmentLaunch<256, 256>(a, so, segs, heads, rows, p, z, *ws, 0)));
    return nullptr;
}

/// The fp32 plain softmax on the flat pass (G7) where the plan takes the lane kernel (G9): its id,
/// and a launch of it into y with workspace *ws (grown as needed).
static const char* softmaxFlat(const float* x, float* y, long long rows, const long long* off, long long segs,
                               void** ws, size_t* cap, bool run) {
    const wkd::SegSoftmaxAlgo<float, warpkit::SoftmaxPlain> a{{x}, y};
    const wkd::SegOffsets<long long> so{off, off + 1};
    if (!run) {
        const size_t need = wkd::segFlatBytes<warpkit::SoftmaxState>(segs, rows, true);
        grow(ws, cap, need);
        return "G7";
    }
    BENCH_CUDA(wkd::segmentFlatLaunch(a, so, segs, rows, *ws, 0));
    return nullptr;
}

/// The fp32 plain softmax on the group kernels (G2: the plan for begin/end arrays, one head) where
/// the plan takes the flat pass (G7): its id, and a launch of it into y with workspace *ws (grown as
/// needed).
static const char* softmaxGroup(const float* x, float* y, long long rows, const long long* off, long long segs,
                                void** ws, size_t* cap, bool run) {
    const wkd::SegSoftmaxAlgo<float, warpkit::SoftmaxPlain> a{{x}, y};
    const wkd::SegOffsets<long long> so{off, off + 1};
    const wkd::SegmentPlan p = wkd::segmentPlan(wkd::SegSoftmax, 4, 1, segs, rows, false);
    const wkd::SegSizes z = wkd::segRoom(wkd::SegSoftmax, 4, 1, segs, rows, false);
    if (!run) {
        const size_t need = wkd::segWorkspaceBytes<warpkit::SoftmaxState>(z);
        grow(ws, cap, need);
        return wkd::kSegmentRules[p.rule].id;
    }
    BENCH_CUDA((wkd::segmentLaunch<256, 256>(a, so, segs, 1, rows, p, z, *ws, 0)));
    return nullptr;
}

/// Whether argv's names after the CSV path keep `name` of list `names` (n names: kOps or kDist):
/// yes when it is named, or when none of that list is. Exits on a name of neither list.
static bool keeps(int argc, char** argv, const char* name, const char* const* names, int n) {
    bool any = false;
    for (int i = 2; i < argc; ++i) {
        bool known = false;
        for (const char* k : kOps) known = known || strcmp(argv[i], k) == 0;
        for (const char* k : kDist) known = known || strcmp(argv[i], k) == 0;
        if (strcmp(argv[i], "bf16") == 0) continue; // the dtype switch (main)
        if (!known) {
            fprintf(stderr, "unknown op or distribution %s\n", argv[i]);
            exit(1);
        }
        for (int j = 0; j < n; ++j) any = any || strcmp(argv[i], names[j]) == 0;
        if (strcmp(argv[i], name) == 0) return true;
    }
    return !any && strcmp(name, "long65536") != 0; // long65536 only when named
}

/// splitmix64 of the segment index: the bench's and torch_segment.py's one source of lengths.
static uint64_t mix(uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/// CSR offsets of distribution d covering exactly `rows` rows (the last segment is cut to fit).
static std::vector<long long> offsetsFor(int d, long long rows) {
    std::vector<long long> off(1, 0);
    auto push = [&](long long len) {
        len = std::min(len, rows - off.back());
        off.push_back(off.back() + len);
    };
    if (d == 7) { // segments of 65536 rows
        while (off.back() < rows) push(65536);
        return off;
    }
    if (d == 6) { // one giant among 10^6 empty segments
        for (int i = 0; i <= 1000000; ++i) push(i == 500000 ? rows : 0);
        return off;
    }
    const long long mean[] = {1, 4, 32, 256, 4096};
    for (uint64_t i = 0; off.back() < rows; ++i) {
        const uint64_t h = mix(i);
        if (d < 5) {
            push((long long)(h % (uint64_t)(2 * mean[d] + 1)));
        } else {
            const bool giant = i % 10007 == 7 && i / 10007 < 3;
            const double u = ((h >> 11) + 1) * (1.0 / 9007199254740992.0);
            push(giant ? std::max(rows / 16, 1100000LL) : std::min(99999LL, (long long)pow(u, -1.2) - 1));
        }
    }
    return off;
}

int main(int argc, char** argv) {
    bench_require_gpu();
    bool bf16 = false; // the dtype switch: sums and maxima of bf16 values
    for (int i = 2; i < argc; ++i) bf16 = bf16 || strcmp(argv[i], "bf16") == 0;
    FILE* csv =
        bench_csv(argc, argv, "build/bench/segment.csv",
                  "op,dist,elements,heads,segments,rule,bytes,copy_ms,warpkit_ms,cub_ms,x_copy,x_cub,alt_rule,alt_ms,"
                  "alt_x_copy");
    printf("%s, int64 CSR offsets;", bf16 ? "bf16 (sum, max)" : "fp32");
    printf(" bytes = values read + written + offsets read; x copy: a copy of the same "
           "bytes' time over warpkit's; x cub: cub::DeviceSegmentedReduce's time over warpkit's; alt: the "
           "other pass (header)\n");
    printf("| op      | dist     | elements | heads | segments | rule | copy TB/s | warpkit TB/s | x copy | x cub "
           "| alt | alt x copy |\n");
    printf("|---------|----------|----------|-------|----------|------|-----------|--------------|--------|-------"
           "|-----|------------|\n");
    const long long maxN = 1LL << 26;
    float *x, *y, *src, *dst;
    BENCH_CUDA(cudaMalloc(&x, maxN * 4));
    BENCH_CUDA(cudaMalloc(&y, (maxN + maxN / 16) * 4)); // a result a segment: mean 1 has a few more segments than rows
    BENCH_CUDA(cudaMalloc(&src, maxN * 4 * 3));
    BENCH_CUDA(cudaMalloc(&dst, maxN * 4 * 3));
    bench_fill_random(x, maxN, 1234, -4.f, 4.f);
    __nv_bfloat16 *xb = nullptr, *yb = nullptr;
    if (bf16) {
        BENCH_CUDA(cudaMalloc(&xb, maxN * 2));
        BENCH_CUDA(cudaMalloc(&yb, (maxN + maxN / 16) * 2));
        bench_fill_random(xb, maxN, 1234, -4.f, 4.f);
    }
    void *ws = nullptr, *cubWs = nullptr, *altWs = nullptr;
    size_t wsCap = 0, cubCap = 0, altCap = 0;
    for (long long n : {1LL << 24, 1LL << 26})
        for (int d = 0; d < 8; ++d) {
            if (!keeps(argc, argv, kDist[d], kDist, 8)) continue;
            for (int heads : {0, 1, 4, 8, 16}) { // 0: the reductions (one head)
                if (heads >= 8 && d != 2 && d != 5) continue;
                if (heads == 0 && !keeps(argc, argv, "sum", kOps, 3) && !keeps(argc, argv, "max", kOps, 3)) continue;
                if (heads > 0 && (bf16 || !keeps(argc, argv, "softmax", kOps, 3))) continue;
                const long long rows = n / (heads ? heads : 1);
                const std::vector<long long> off = offsetsFor(d, rows);
                const long long segs = (long long)off.size() - 1;
                bench_progress("%s n=%lld heads=%d segments=%lld", kDist[d], n, heads, segs);
                long long* doff;
                BENCH_CUDA(cudaMalloc(&doff, off.size() * 8));
                BENCH_CUDA(cudaMemcpy(doff, off.data(), off.size() * 8, cudaMemcpyHostToDevice));
                for (int op = heads ? 2 : 0; op < (heads ? 3 : 2); ++op) {
                    if (!keeps(argc, argv, kOps[op], kOps, 3)) continue;
                    size_t need = 0;
                    auto call = [&](void* w, size_t* b) {
                        if (bf16 && op == 0)
                            return warpkit::segmentReduceSum((const __nv_bfloat16*)xb, yb, rows, doff, segs, w, b);
                        if (bf16)
                            return warpkit::segmentReduceMax((const __nv_bfloat16*)xb, yb, rows, doff, segs, w, b);
                        if (op == 0) return warpkit::segmentReduceSum((const float*)x, y, rows, doff, segs, w, b);
                        if (op == 1) return warpkit::segmentReduceMax((const float*)x, y, rows, doff, segs, w, b);
                        return warpkit::segmentSoftmax((const float*)x, y, rows, doff, segs, heads,
                                                       warpkit::SoftmaxPlain, w, b);
                    };
                    BENCH_CUDA(call(nullptr, &need));
                    grow(&ws, &wsCap, need);
                    auto wk = [&] { BENCH_CUDA(call(ws, &need)); };
                    // bytes: values read (+ written for softmax, + one result a segment), offsets read
                    const double es = bf16 ? 2.0 : 4.0; // bytes an element
                    const double bytes = op == 2 ? 8.0 * n + 8.0 * (segs + 1) : es * (n + segs) + 8.0 * (segs + 1);
                    const size_t half = (size_t)(bytes / 2);
                    const float msCopy =
                        bench_median_ms([&] { cudaMemcpyAsync(dst, src, half, cudaMemcpyDeviceToDevice); });
                    float msWk = 0, msCub = 0, msAlt = 0;
                    const char* alt = "-";
                    if (op < 2) {
                        auto other = [&](bool run) {
                            if (op == 0) return altPass<warpkit::Sum>(x, y, rows, doff, segs, &altWs, &altCap, run);
                            return altPass<warpkit::Max>(x, y, rows, doff, segs, &altWs, &altCap, run);
                        };
                        if (!bf16) {
                            alt = other(false);
                            msAlt = bench_median_ms([&] { other(true); });
                        }
                        size_t cb = 0;
                        auto cub = [&](void* w, size_t* b) {
                            if (bf16 && op == 0)
                                return cub::DeviceSegmentedReduce::Sum(w, *b, (const __nv_bfloat16*)xb, yb, (int)segs,
                                                                       doff, doff + 1);
                            if (bf16)
                                return cub::DeviceSegmentedReduce::Max(w, *b, (const __nv_bfloat16*)xb, yb, (int)segs,
                                                                       doff, doff + 1);
                            if (op == 0)
                                return cub::DeviceSegmentedReduce::Sum(w, *b, (const float*)x, y, (int)segs, doff,
                                                                       doff + 1);
                            return cub::DeviceSegmentedReduce::Max(w, *b, (const float*)x, y, (int)segs, doff,
                                                                   doff + 1);
                        };
                        BENCH_CUDA(cub(nullptr, &cb));
                        grow(&cubWs, &cubCap, cb);
                        bench_pair_median_ms(
                            wk, [&] { BENCH_CUDA(cub(cubWs, &cb)); }, &msWk, &msCub);
                    } else {
                        const wkd::SegmentPlan sp = wkd::segmentPlan(wkd::SegSoftmax, 4, heads, segs, rows, true);
                        auto other = [&](bool run) {
                            if (sp.flat) return softmaxGroup(x, y, rows, doff, segs, &altWs, &altCap, run);
                            if (sp.laneRows > 0) return softmaxFlat(x, y, rows, doff, segs, &altWs, &altCap, run);
                            return softmaxNoSlice(x, y, rows, doff, segs, heads, &altWs, &altCap, run);
                        };
                        alt = other(false);
                        bench_pair_median_ms(
                            wk, [&] { other(true); }, &msWk, &msAlt);
                    }
                    const warpkit::detail::SegmentPlan plan =
                        warpkit::detail::segmentPlan(op == 2 ? warpkit::detail::SegSoftmax : warpkit::detail::SegReduce,
                                                     bf16 ? 2 : 4, heads ? heads : 1, segs, rows, true);
                    const char* rule = warpkit::detail::kSegmentRules[plan.rule].id;
                    const double xc = msCopy / msWk, xk = op < 2 ? msCub / msWk : 0.0;
                    const double xa = msAlt > 0 ? msCopy / msAlt : 0.0; // bf16: no alt pass timed
                    char xcub[16] = "    -", xalt[16] = "    -";
                    if (op < 2) snprintf(xcub, sizeof xcub, "%5.2fx", xk);
                    if (msAlt > 0) snprintf(xalt, sizeof xalt, "%5.2fx", xa);
                    printf(
                        "| %-7s | %-8s | 2^%-6d | %5d | %8lld | %-4s | %9.2f | %12.2f | %5.2fx | %s | %-3s | %10s |\n",
                        kOps[op], kDist[d], n == (1LL << 24) ? 24 : 26, heads ? heads : 1, segs, rule,
                        bench_tbps(bytes, msCopy), bench_tbps(bytes, msWk), xc, xcub, alt, xalt);
                    fprintf(csv, "%s,%s,%lld,%d,%lld,%s,%.0f,%.5f,%.5f,%.5f,%.4f,%.4f,%s,%.5f,%.4f\n", kOps[op],
                            kDist[d], n, heads ? heads : 1, segs, rule, bytes, msCopy, msWk, msCub, xc, xk, alt, msAlt,
                            xa);
                }
                BENCH_CUDA(cudaFree(doff));
            }
        }
    fclose(csv);
    for (void* p : {(void*)x, (void*)y, (void*)src, (void*)dst, ws, cubWs, altWs, (void*)xb, (void*)yb})
        if (p) BENCH_CUDA(cudaFree(p));
    return 0;
}
