// tests/device/segment_plan.cu: the golden plans of the segment family (device/segment.cuh). Host
// only: runs and passes without a GPU. Prints segmentPlan's answer, with its rule id, for every
// call kind x element size x heads, and the workspace's room (long pairs, chunks) for a spread of
// segment and item counts, and compares the text with tests/device/segment_plan.golden; fails when
// a plan has no compiled kernel (segmentPlanCompiled) or a rule can never be chosen.
//
// Regenerate (only when a plan is meant to change, and say so in the commit):
//   WARPKIT_GOLDEN_WRITE=1 build/tests/device/segment_plan   (run from the repository root)
#include "golden.cuh"
#include <warpkit/device/segment.cuh>
#include <string>

using namespace warpkit::detail;

namespace {

const char* kGoldenPath = "tests/device/segment_plan.golden";
const char* kKindName[] = {"reduce", "lse", "softmax", "backward"};
const int kSizes[] = {2, 4, 8};
const int kHeads[] = {1, 2, 3, 4, 8, 16, 17, 32, 64, 1000};

std::string planText(const SegmentPlan& p) {
    char b[240], slice[32] = "", direct[32] = "", step[32] = "", lanes[32] = "", team[32] = "";
    if (p.sliceGroup > 0) snprintf(slice, sizeof slice, " sliceGroup=%d", p.sliceGroup);
    if (p.directRows > 0) snprintf(direct, sizeof direct, " directRows=%lld", p.directRows);
    if (p.minStep < 32) snprintf(step, sizeof step, " minStep=%d", p.minStep);
    if (p.laneRows > 0) snprintf(lanes, sizeof lanes, " laneRows=%d", p.laneRows);
    if (p.team > 0) snprintf(team, sizeof team, " team=%d", p.team);
    if (p.page > 0) snprintf(team + strlen(team), sizeof team - strlen(team), " page=%d", p.page);
    snprintf(b, sizeof b, "%s threads=%d perLane=%d longRows=%lld chunkRows=%lld longThreads=%d%s%s%s%s%s%s",
             kSegmentRules[p.rule].id, p.threads, p.perLane, p.longRows, p.chunkRows, p.longThreads,
             p.flat ? " flat" : "", slice, direct, step, lanes, team);
    return b;
}

/// Whether the flat pass has kernels for a call of `kind` over elements of `size` bytes (SegFlatAlgo
/// of the algorithm segmentRun builds: fp32 / fp16 stand for the sizes).
bool flatCompiled(int kind, int size) {
    if (kind == SegReduce) {
        return size == 4   ? SegFlatAlgo<SegReduceAlgo<float, float, float, warpkit::Sum, false>>::value
               : size == 2 ? SegFlatAlgo<SegReduceAlgo<__half, float, __half, warpkit::Sum, false>>::value
                           : false;
    }
    if (kind == SegSoftmax) {
        return size == 4   ? SegFlatAlgo<SegSoftmaxAlgo<float, warpkit::SoftmaxLog>>::value
               : size == 2 ? SegFlatAlgo<SegSoftmaxAlgo<__half, warpkit::SoftmaxPlain>>::value
                           : false;
    }
    return false;
}

/// Appends plan p of a call with `heads` heads to out after `label`, marks its rule used, and marks
/// it NOT COMPILED (and *allCompiled false) when it has no kernel (for `flatOk` false: no flat pass).
void addPlan(std::string* out, bool* allCompiled, bool used[], const SegmentPlan& p, int heads, int size,
             const char* label, bool flatOk = true) {
    used[p.rule] = true;
    if (!segmentPlanCompiled(p) || !segTeamCompiled(p, heads, size) || !flatOk) {
        *allCompiled = false;
        *out += "NOT COMPILED: ";
    }
    *out += label + planText(p) + "\n";
}

std::string allPlans(bool* allCompiled, bool used[]) {
    std::string out = "# segmentPlan answers (tests/device/segment_plan.cu): kind size heads: rule and plan; then the\n"
                      "# workspace room (long pairs, chunks) for segments x items.\n";
    *allCompiled = true;
    for (int k = 0; k < 4; ++k)
        for (int sz : kSizes)
            for (int h : kHeads) {
                char b[64];
                snprintf(b, sizeof b, "%s %d %d: ", kKindName[k], sz, h);
                addPlan(&out, allCompiled, used, segmentPlan((SegmentKind)k, sz, h), h, sz, b);
            }
    // G9 (the softmax: means 2 to 5; 16-bit reductions and the log-sum-exp to 32), the flat pass (CSR
    // only, fp32 reductions to 64), G12 (reductions and log-sum-exp from mean 32), G11 (from means
    // 96, 224 / 384 and 448 / 768), G6 (from means 2048, fp32 4608) and G10 (the softmax from means 144,
    // 1536 and 3072 (fp32) with one head, 192 with 4) by mean length
    for (int k = 0; k < 4; ++k)
        for (int sz : kSizes)
            for (long long items :
                 {0LL,       2000LL,    5000LL,    5001LL,    8000LL,    8001LL,    32000LL,   32001LL,
                  40000LL,   40001LL,   64000LL,   64001LL,   95999LL,   96000LL,   143999LL,  144000LL,
                  191999LL,  192000LL,  223999LL,  224000LL,  383999LL,  384000LL,  447999LL,  448000LL,
                  511999LL,  512000LL,  767999LL,  768000LL,  1535999LL, 1536000LL, 2047999LL, 2048000LL,
                  3071999LL, 3072000LL, 4607999LL, 4608000LL, 1LL << 26})
                for (bool csr : {true, false}) {
                    const SegmentPlan p = segmentPlan((SegmentKind)k, sz, 1, 1000, items, csr);
                    char b[96];
                    snprintf(b, sizeof b, "%s %d 1 segments=1000 items=%lld %s: ", kKindName[k], sz, items,
                             csr ? "csr" : "bounds");
                    addPlan(&out, allCompiled, used, p, 1, sz, b, !p.flat || flatCompiled(k, sz));
                }
    for (int sz : kSizes) // the softmax of 4 heads: G8 (2- and 4-byte values), then G10 from mean 192 (fp32:
                          // a block of 256 from 1536)
        for (long long items : {0LL, 32000LL, 191999LL, 192000LL, 1535999LL, 1536000LL, 1LL << 26}) {
            char b[96];
            snprintf(b, sizeof b, "softmax %d 4 segments=1000 items=%lld csr: ", sz, items);
            addPlan(&out, allCompiled, used, segmentPlan(SegSoftmax, sz, 4, 1000, items, true), 4, sz, b);
        }
    for (int h : {1, 4, 16})
        for (long long segs : {1LL, 1000LL, 1000000LL})
            for (long long items : {0LL, 4096LL, 4097LL, 1LL << 24, 1LL << 26, (1LL << 31) + 5}) {
                const SegSizes z = segSizes(segmentPlan(SegSoftmax, 4, h), segs, items, h);
                char b[192];
                snprintf(b, sizeof b,
                         "room softmax f32 heads=%d segments=%lld items=%lld: entries=%lld chunks=%lld slots=%lld "
                         "bytes=%zu\n",
                         h, segs, items, z.entries, z.chunks, z.slots, segWorkspaceBytes<warpkit::SoftmaxState>(z));
                out += b;
            }
    // the room of a reduction over begin/end arrays (no flat pass): G9's, G6's or G1's, never less as
    // segments or items grow (items 64 -> 65: G9's records; 2047999 -> 2048000 at 1000 segments: G1 -> G6)
    for (long long segs : {10LL, 1000LL, 32768LL, 32769LL, 1000000LL}) {
        size_t last = 0;
        for (long long items : {64LL, 65LL, 80LL, 81LL, 256LL, 257LL, 1025LL, 2047999LL, 2048000LL, 1LL << 26}) {
            const SegSizes z = segRoom(SegReduce, 4, 1, segs, items, false);
            const size_t bytes = segWorkspaceBytes<float>(z);
            char b[192];
            snprintf(b, sizeof b,
                     "room reduce f32 segments=%lld items=%lld: %s entries=%lld chunks=%lld records=%lld bytes=%zu%s\n",
                     segs, items, kSegmentRules[segmentPlan(SegReduce, 4, 1, segs, items, false).rule].id, z.entries,
                     z.chunks, z.words, bytes, bytes < last ? " DECREASED" : "");
            out += b;
            last = bytes;
        }
    }
    // the group kernel's step under G1 (segmentStepPairs): pairs over resident warps (H100: 132 SMs x
    // 3 blocks x 8 warps = 3168), e.g. 2^24 / 256 = 65605 pairs (mean 256), 2^26 / 256 = 262420;
    // every step count within the no-room records' room (segSizes' words)
    const SegmentPlan g1 = segmentPlan(SegReduce, 4, 1); // no mean: G1
    for (long long warps : {3168LL, 1024LL})
        for (long long pairs : {1LL, 1000LL, 25344LL, 25345LL, 65605LL, 101376LL, 101377LL, 262420LL, 1LL << 26}) {
            const int step = segmentStepPairs(g1, pairs, warps);
            const long long steps = (pairs + step - 1) / step, room = segSizes(g1, pairs, pairs * 2000, 1).words;
            const long long perWarp = (steps + warps - 1) / warps;
            char b[160];
            snprintf(b, sizeof b, "step %s pairs=%lld warps=%lld: %d (steps a warp %lld)%s\n",
                     kSegmentRules[g1.rule].id, pairs, warps, step, perWarp, steps > room ? " NO ROOM" : "");
            out += b;
        }
    // the softmax's workspace (one head, CSR: the flat pass's room up to a mean of 64, G2's past it,
    // the larger of the two asked for either way), never less as segments or items grow
    const long long segsList[] = {1, 1000, 1000000}, itemsList[] = {0, 4096, 64000, 64001, 1LL << 24, 1LL << 26};
    size_t room[3][6];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 6; ++j) {
            const long long segs = segsList[i], items = itemsList[j];
            size_t& bytes = room[i][j];
            warpkit::segmentSoftmax((const float*)nullptr, (float*)nullptr, items, (const long long*)nullptr, segs, 1,
                                    warpkit::SoftmaxPlain, nullptr, &bytes);
            const bool less = (j > 0 && bytes < room[i][j - 1]) || (i > 0 && bytes < room[i - 1][j]);
            char b[160];
            snprintf(b, sizeof b, "room softmax f32 csr heads=1 segments=%lld items=%lld: %s bytes=%zu%s\n", segs,
                     items, kSegmentRules[segmentPlan(SegSoftmax, 4, 1, segs, items, true).rule].id, bytes,
                     less ? " DECREASED" : "");
            out += b;
        }
    // the reductions' workspace over CSR offsets (G9 up to a mean of 8, or 32 for 16-bit values; the
    // flat pass to 64 for fp32; G12; G11; G6), never less as the items grow
    for (int sz : {2, 4})
        for (long long segs : {1000LL, 1000000LL}) {
            size_t last = 0;
            for (long long mean1000 :
                 {0LL, 8000LL, 8001LL, 32000LL, 32001LL, 40000LL, 40001LL, 64000LL, 64001LL, 96000LL, 2048000LL}) {
                const long long items = mean1000 * (segs / 1000);
                size_t bytes = 0;
                if (sz == 4)
                    warpkit::segmentReduceSum((const float*)nullptr, (float*)nullptr, items, (const long long*)nullptr,
                                              segs, nullptr, &bytes);
                else
                    warpkit::segmentReduceSum((const __nv_bfloat16*)nullptr, (__nv_bfloat16*)nullptr, items,
                                              (const long long*)nullptr, segs, nullptr, &bytes);
                char b[160];
                snprintf(b, sizeof b, "room reduce %s csr segments=%lld items=%lld: %s bytes=%zu%s\n",
                         sz == 4 ? "f32" : "bf16", segs, items,
                         kSegmentRules[segmentPlan(SegReduce, sz, 1, segs, items, true).rule].id, bytes,
                         bytes < last ? " DECREASED" : "");
                out += b;
                last = bytes;
            }
        }
    return out;
}

} // namespace

Test(device_segment_plan, golden) {
    bool compiled = false, used[kSegmentRuleCount] = {};
    const std::string got = allPlans(&compiled, used);
    cr_expect(compiled, "a segment plan has no compiled kernel (see the NOT COMPILED lines):\n%s", got.c_str());
    for (int i = 0; i < kSegmentRuleCount; ++i) cr_expect(used[i], "rule %s is never chosen", kSegmentRules[i].id);
    cr_expect(got.find("NO ROOM") == std::string::npos, "more group-kernel steps than no-room records:\n%s",
              got.c_str());
    cr_expect(got.find("DECREASED") == std::string::npos, "a workspace size decreased as the counts grew:\n%s",
              got.c_str());
    wk_golden_check(kGoldenPath, got);
}
