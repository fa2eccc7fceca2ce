// tests/device/topk_plan.cu: the golden plans of rowTopK (device/detail/topk_plan.cuh). Host only:
// runs and passes without a GPU. Prints topkPlan's answer (kernel rule, split rule, running keys,
// slices and input length of every level, workspace bytes) over device profile x rows x cols x k,
// with and without a workspace, and compares the text with tests/device/topk_plan.golden, so that
// a change to the planner that changes a plan shows up here, line by line. It also fails when a
// plan is one the kernels cannot run: a kernel rule whose kernel is not compiled (runK other than
// 8 for the streamed select; the warp select's KL other than nextpow2(k) <= 32 or lanes other than
// 8 or 32), k above runK x threads or above the filter's kTopKFilterMaxK, a level
// that does not shrink, a last level with several slices (but the filter's one launch, S3, whose
// workspace must then hold the slices' candidates and the rows' counters).
//
// Test argmax_golden pins rowArgMax / rowArgMin's rule (A1: rowTopK's k = 1 without a workspace; A2:
// the row family's read-only plan; A3: its plan for per-element outputs; each must have a compiled
// kernel) in topk_arg_plan.golden.
//
// Regenerate (only when a plan is meant to change, and say so in the commit):
//   WARPKIT_GOLDEN_WRITE=1 build/tests/device/topk_plan   (run from the repository root)
#include "golden.cuh"
#include <warpkit/device/topk.cuh>
#include <string>

using namespace warpkit::detail;

namespace {

const char* kGoldenPath = "tests/device/topk_plan.golden";
const char* kArgGoldenPath = "tests/device/topk_arg_plan.golden";

struct Profile {
    const char* name;
    int sms;
};
const Profile kProfiles[] = {{"h100", 132}, {"a100", 108}, {"small", 2}};
const bool kClusters[] = {true, false, true}; // each profile's thread-block clusters (sm_90)

/// The kernels rowTopK compiles for a level: true when plan p's level i has one.
bool compiled(const TopKPlan& p, int i) {
    if (p.kernel == TopKWarp) return i == 0 && p.warpK >= 1 && p.warpK <= 32 && (p.warpK & (p.warpK - 1)) == 0;
    if (p.kernel == TopKWarpSelect) // topkLaunchWarpSelect: KL = 1 .. 32, 8 or 32 lanes a row
        return i == 0 && p.levels == 1 && p.warpK >= 1 && p.warpK <= 32 && (p.warpK & (p.warpK - 1)) == 0 &&
               (p.warpLanes == 8 || p.warpLanes == 32);
    if (p.kernel == TopKFilter) return i == 0 && p.levels == 1;
    if (p.kernel == TopKArg) return i == 0 && p.levels == 1 && p.slices[0] == 1; // rowArgMax's kernel (T0)
    return p.runK == 8;
}

void checkPlan(const TopKPlan& p, long long rows, int cols, int k, const char* where) {
    cr_expect(p.kernelRule[0] != 0, "%s rows=%lld cols=%d k=%d: no kernel rule", where, rows, cols, k);
    cr_expect(p.levels >= 1 && p.levels <= kTopKMaxLevels, "%s: %d levels", where, p.levels);
    for (int i = 0; i < p.levels; ++i) {
        cr_expect(compiled(p, i), "%s rows=%lld cols=%d k=%d level %d: no compiled kernel (runK %d)", where, rows, cols,
                  k, i, p.runK);
        cr_expect(p.kernel == TopKArg          ? k == 1 && p.workspaceBytes == 0
                  : p.kernel == TopKFilter     ? k <= kTopKFilterMaxK
                  : p.kernel == TopKWarp       ? cols <= 32 * p.warpK
                  : p.kernel == TopKWarpSelect ? k <= p.warpK && 2 * k > p.warpK
                                               : p.chunkK <= p.runK * kTopKThreads,
                  "%s cols=%d k=%d: above runK %d / warpK %d", where, cols, k, p.runK, p.warpK);
        if (i + 1 < p.levels) {
            cr_expect(p.slices[i] > 1 && p.len[i + 1] == (long long)p.slices[i] * p.chunkK && p.len[i + 1] < p.len[i],
                      "%s rows=%lld cols=%d k=%d level %d: %d slices of %lld do not shrink", where, rows, cols, k, i,
                      p.slices[i], p.len[i]);
            cr_expect(p.len[i] / p.slices[i] >= p.chunkK, "%s level %d: a slice shorter than k", where, i);
        }
    }
    if (p.kernel == TopKFilter) {
        // the slices' candidates, then an arrival word a row
        const size_t want = p.slices[0] > 1 ? (size_t)rows * p.slices[0] * k * 8 + (size_t)rows * 8 : 0;
        cr_expect(p.workspaceBytes == want, "%s rows=%lld cols=%d k=%d: filter workspace %zu, want %zu", where, rows,
                  cols, k, p.workspaceBytes, want);
        cr_expect(p.slices[0] == 1 || cols / p.slices[0] >= 1024, "%s cols=%d: %d slices", where, cols, p.slices[0]);
    } else {
        cr_expect(p.slices[p.levels - 1] == 1, "%s: the last level has %d slices", where, p.slices[p.levels - 1]);
    }
    cr_expect(p.levels == 1 || p.workspaceBytes > 0, "%s: levels without a workspace", where);
    cr_expect(p.kernel == TopKWarp || p.kernel == TopKWarpSelect ||
                  ((long long)p.chunks * p.chunkK >= k && (long long)(p.chunks - 1) * p.chunkK < k),
              "%s k=%d: %d passes of %d", where, k, p.chunks, p.chunkK);
    cr_expect(p.chunks <= 1 || p.levels == 1, "%s k=%d: passes (T4) on a split plan", where, k);
}

std::string planText(const TopKPlan& p) {
    std::string s = std::string(p.kernelRule) + "." + p.splitRule + " r" + std::to_string(p.runK);
    if (p.kernel == TopKWarp) s += " K" + std::to_string(p.warpK);
    if (p.kernel == TopKWarpSelect) s += " KL" + std::to_string(p.warpK) + " lanes" + std::to_string(p.warpLanes);
    if (p.chunks > 1) s += " passes" + std::to_string(p.chunks) + "x" + std::to_string(p.chunkK);
    for (int i = 0; i < p.levels; ++i) s += " " + std::to_string(p.slices[i]) + "x" + std::to_string(p.len[i]);
    return s + " ws=" + std::to_string(p.workspaceBytes);
}

} // namespace

/// T0 (k = 1 by rowArgMax's kernel) only where rowArgMax takes A2, and its plan has a compiled kernel.
template <typename T> void checkArgPath(const TopKPlan& p, int prof, long long rows, int cols) {
    if (p.kernel != TopKArg) return;
    const Profile& d = kProfiles[prof];
    const TopKArgRule& rule = topkArgRule(rows, cols, (int)sizeof(T), d.sms);
    cr_expect(!rule.filter && !rule.outputPlans, "%s rows=%lld cols=%d: T0 where rowArgMax takes %s", d.name, rows,
              cols, rule.id);
    const RowArgParams<T> a = {{}, nullptr, nullptr, nullptr, false, 0u, cols};
    const RowPlan rp = rowPlanFor(rowOpQuery(a, rows, cols, d.sms, kClusters[prof], true));
    cr_expect(rowPlanCompiled(RowClassOutputs, (int)sizeof(T), RowArgParams<T>::kWarpChunks,
                              RowArgParams<T>::kReduceWarp, rp),
              "%s rows=%lld cols=%d: T0's row plan has no compiled kernel", d.name, rows, cols);
}

/// Both forms' plans (checked) for elements of T on profile prof: "<workspace> | nows <without>".
template <typename T> std::string formsText(int prof, long long rows, int cols, int k) {
    const Profile& d = kProfiles[prof];
    const TopKPlan p = topkPlan(rows, cols, k, d.sms, true, (int)sizeof(T), kClusters[prof]),
                   q = topkPlan(rows, cols, k, d.sms, false, (int)sizeof(T), kClusters[prof]);
    checkPlan(p, rows, cols, k, d.name);
    checkPlan(q, rows, cols, k, d.name);
    checkArgPath<T>(p, prof, rows, cols);
    checkArgPath<T>(q, prof, rows, cols);
    return planText(p) + " | nows " + planText(q);
}

Test(topk_plan, golden) {
    std::string out =
        "# rowTopK plans (tests/device/topk_plan.cu): kernel.split rule, running keys a thread, then each\n"
        "# level's slices x input length, workspace bytes; 'nows' = the form without a workspace; fp32,\n"
        "# and for k = 1 past 4096 columns (T0 or T1) bf16 too.\n";
    const long long rowsList[] = {1, 2, 8, 64, 263, 264, 4096, 1LL << 20};
    const int colsList[] = {1,    7,    32,   33,   64,    65,    128,    256,    257,    1000,   1024,
                            1025, 4095, 4096, 4097, 32000, 50257, 128256, 151936, 262144, 1 << 20};
    const int kList[] = {1, 2, 8, 9, 32, 33, 50, 256, 257, 1024, 2048, 2049, 4096, 262144};
    for (int pi = 0; pi < 3; ++pi)
        for (int cols : colsList)
            for (int k : kList) {
                if (k > cols) continue;
                const Profile& d = kProfiles[pi];
                const bool cl = kClusters[pi];
                for (long long rows : rowsList) {
                    // the mask (no values or indices out) never takes T0
                    const TopKPlan m = topkPlan(rows, cols, k, d.sms, true, 0, cl);
                    cr_expect(m.kernel != TopKArg, "%s rows=%lld cols=%d: the mask on T0", d.name, rows, cols);
                    char head[96];
                    snprintf(head, sizeof head, "%s cols=%d k=%d rows=%lld: ", d.name, cols, k, rows);
                    out += head + formsText<float>(pi, rows, cols, k);
                    if (k == 1 && cols > 4096) out += " | bf16 " + formsText<__nv_bfloat16>(pi, rows, cols, k);
                    out += "\n";
                }
            }
    wk_golden_check(kGoldenPath, out);
}

/// rowArgMax / rowArgMin's plan for T over rows x cols on profile i: the rule, then rowTopK's plan
/// (A1) or the row family's (A2, A3: rule id, path and shape).
template <typename T> std::string argPlanText(int i, long long rows, int cols) {
    const Profile& d = kProfiles[i];
    const TopKArgRule& rule = topkArgRule(rows, cols, (int)sizeof(T), d.sms);
    const char* id = rule.id;
    if (rule.filter) {
        const TopKPlan p = topkPlan(rows, cols, 1, d.sms, false, 0, kClusters[i]); // the filter (A1 never T0)
        checkPlan(p, rows, cols, 1, d.name);
        cr_expect(p.kernel == TopKFilter && p.levels == 1 && p.slices[0] == 1 && p.workspaceBytes == 0,
                  "%s rows=%lld cols=%d: A1 is not one filter block a row", d.name, rows, cols);
        return std::string(id) + " " + planText(p);
    }
    const RowArgParams<T> a = {{}, nullptr, nullptr, nullptr, false, 0u, cols};
    const char* rid = nullptr;
    const RowPlan p = rowPlanFor(rowOpQuery(a, rows, cols, d.sms, kClusters[i], !rule.outputPlans), &rid);
    cr_expect(
        rowPlanCompiled(RowClassOutputs, (int)sizeof(T), RowArgParams<T>::kWarpChunks, RowArgParams<T>::kReduceWarp, p),
        "%s rows=%lld cols=%d: the row plan %s has no compiled kernel", d.name, rows, cols, rid);
    char s[160];
    snprintf(s, sizeof s, "%s %s path%d w%d c%d t%d b%d s%d p%d", id, rid, (int)p.path, p.width, p.chunks, p.threads,
             p.blocks, p.slice, p.piece);
    return s;
}

Test(topk_plan, argmax_golden) {
    std::string out =
        "# rowArgMax / rowArgMin plans (tests/device/topk_plan.cu): A1 then rowTopK's plan (k = 1, no\n"
        "# workspace); A2 / A3 then the row family's rule, path, width, chunks, threads, blocks, slice, piece.\n";
    const long long rowsList[] = {1, 8, 64, 263, 475, 476, 512, 528, 529, 951, 1000, 4096, 16384, 1LL << 20};
    const int colsList[] = {1,    7,     1000,  1024,   1025,   2048,   4096,   4097,
                            8192, 32000, 50257, 128256, 151936, 262144, 1 << 20};
    for (int i = 0; i < 3; ++i)
        for (int cols : colsList)
            for (long long rows : rowsList) {
                char head[96];
                snprintf(head, sizeof head, "%s cols=%d rows=%lld: ", kProfiles[i].name, cols, rows);
                out += head + std::string("f32 ") + argPlanText<float>(i, rows, cols) + " | bf16 " +
                       argPlanText<__nv_bfloat16>(i, rows, cols) + "\n";
            }
    wk_golden_check(kArgGoldenPath, out);
}
