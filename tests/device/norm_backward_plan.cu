// tests/device/norm_backward_plan.cu: the golden plans of rowLayerNormBackward and
// rowRmsNormBackward (device/detail/norm_backward_plan.cuh). Host only: runs and passes without a
// GPU. Prints normBackwardPlan's answer (path rule, split rule, group, block, parts, slots) and the
// workspace bytes over rows x cols and element sizes (4, 2 bytes), for aligned (vector slots) and
// unaligned rows, and compares the text with tests/device/norm_backward_plan.golden, so that a
// change to the planner that changes a plan shows up here, line by line. It also fails when a
// plan is one the kernels cannot run (normBackwardPlanCompiled: a group or block with no compiled
// kernel, element slots in groups of 1024), a register plan whose group does not hold the row or is
// not the narrowest that does, or whose parts pass the element size's cap, a final sum whose threads a
// column leave one more than kNbFinishLoads parts or are not the narrowest that do not (N5), a split plan whose
// slices do not cover the row or whose parts pass the rule's blocks or leave it short, or when
// aligned and unaligned rows get different parts (then dw / db's bits and the workspace size would
// depend on the pointers).
//
// Regenerate (only when a plan is meant to change, and say so in the commit):
//   WARPKIT_GOLDEN_WRITE=1 build/tests/device/norm_backward_plan   (run from the repository root)
#include "golden.cuh"
#include <warpkit/device/norm_backward.cuh>
#include <string>

using namespace warpkit::detail;

namespace {

const char* kGoldenPath = "tests/device/norm_backward_plan.golden";

void checkPlan(const NormBackwardPlan& p, long long rows, int cols, bool vec, int elemBytes) {
    // N3's 16-bit cap holds in blocks of kNbRegsThreads only (the split path's rows past 4096 columns
    // take the parts of aligned rows, in blocks of 512 or more).
    const bool narrow16 = p.path == NbRegs && nbNarrow16(elemBytes, p.threads);
    const int cap = narrow16 ? kNbPartRules[0].maxParts16 : kNbPartRules[0].maxParts;
    const int blocks = elemBytes == 2 ? kNbPartRules[1].blocks16 : kNbPartRules[1].blocks;
    cr_expect(p.pathRule[0] != 0 && p.partRule[0] != 0, "rows=%lld cols=%d vec=%d: no rule", rows, cols, vec);
    cr_expect(normBackwardPlanCompiled(p), "rows=%lld cols=%d vec=%d: no compiled kernel (group %d, %d threads%s)",
              rows, cols, vec, p.group, p.threads, p.vec ? "" : ", element slots");
    cr_expect(p.finish == 1 || (long long)p.finish / 2 * kNbFinishLoads < p.parts,
              "rows=%lld cols=%d: final sum of %d parts at %d threads a column is not the narrowest", rows, cols,
              p.parts, p.finish);
    cr_expect((long long)p.finish * kNbFinishLoads >= p.parts, "rows=%lld cols=%d: %d parts pass %d threads a column",
              rows, cols, p.parts, p.finish);
    if (p.path == NbRegs) {
        cr_expect((long long)p.group * kNbElems >= cols, "rows=%lld cols=%d: group %d does not hold the row", rows,
                  cols, p.group);
        cr_expect(p.group == 32 || (long long)p.group / 2 * kNbElems < cols,
                  "rows=%lld cols=%d: group %d is not the narrowest", rows, cols, p.group);
        cr_expect(p.vec == vec, "rows=%lld cols=%d: slots %d for alignment %d", rows, cols, p.vec, vec);
    }
    if (p.path == NbRegs || cols <= kNbMaxColsVec) {
        const long long per = p.path == NbRegs ? p.threads / p.group : 1;
        cr_expect(p.parts <= cap && (p.parts == cap || (long long)p.parts * per >= rows),
                  "rows=%lld cols=%d bytes=%d: %d parts miss rows or pass %d", rows, cols, elemBytes, p.parts, cap);
    } else {
        cr_expect((long long)p.slices * kNbSliceCols >= cols && (long long)(p.slices - 1) * kNbSliceCols < cols,
                  "rows=%lld cols=%d: %d slices", rows, cols, p.slices);
        cr_expect(p.parts <= (rows > 1 ? rows : 1) && (p.parts == 1 || (long long)p.parts * p.slices <= blocks) &&
                      (p.parts >= rows || (long long)(p.parts + 1) * p.slices > blocks || p.parts == kNbMaxParts),
                  "rows=%lld cols=%d: %d parts for %d slices", rows, cols, p.parts, p.slices);
    }
}

std::string planText(const NormBackwardPlan& p) {
    std::string s = std::string(p.pathRule) + "." + p.partRule;
    if (p.path == NbRegs) s += " g" + std::to_string(p.group) + (p.vec ? " vec" : " elem");
    else s += " split s" + std::to_string(p.slices) + (p.vec ? " vec" : " elem");
    return s + " t" + std::to_string(p.threads) + " parts" + std::to_string(p.parts) + " f" + std::to_string(p.finish);
}

} // namespace

Test(norm_backward_plan, golden) {
    std::string out =
        "# rowLayerNormBackward / rowRmsNormBackward plans (tests/device/norm_backward_plan.cu):\n"
        "# element bytes (b4: fp32, b2: 16-bit); path.split rule, group (g) and slots, threads a block (t),\n"
        "# row blocks (parts), threads a column of the final sum (f); aligned rows | unaligned rows;\n"
        "# ws = workspace bytes with dw and db.\n";
    const long long rowsList[] = {0, 1, 3, 7, 9, 64, 100, 4096, 8192, 16384, 100000, 1LL << 31};
    const int colsList[] = {1,    8,    256,  257,  512,   513,   768,   1024,  2048,  2049,   4096,    4097,
                            6143, 6144, 8192, 8193, 10240, 10241, 16384, 32768, 65537, 262144, 1 << 20, 0x7fffffff};
    for (int b : {4, 2})
        for (int cols : colsList)
            for (long long rows : rowsList) {
                const NormBackwardPlan a = normBackwardPlan(rows, cols, true, b),
                                       u = normBackwardPlan(rows, cols, false, b);
                checkPlan(a, rows, cols, true, b);
                checkPlan(u, rows, cols, false, b);
                cr_expect(a.parts == u.parts, "rows=%lld cols=%d: parts %d aligned, %d unaligned", rows, cols, a.parts,
                          u.parts);
                char head[64];
                snprintf(head, sizeof head, "b%d cols=%d rows=%lld: ", b, cols, rows);
                out += head + planText(a) + " | " + planText(u) +
                       " ws=" + std::to_string(normBackwardBytes(rows, cols, 2, b)) + "\n";
            }
    wk_golden_check(kGoldenPath, out);
}
