// tests/device/row_plan.cu: the golden plans of the row dispatchers. Host only: runs and passes
// without a GPU. Prints every row planner's answer (rowSoftmax's, the row family's for each params
// configuration, the reduce-only plan of the loss alone) over dtype x cols x rows x device profile
// and compares the text with tests/device/row_plan.golden, so that a change to a planner that
// changes a plan shows up here, line by line. The pure planner answer is pinned: the run-time
// fall-back where a cluster does not fit the device is not part of it. It also fails when a plan
// of the grid has no compiled kernel (rowPlanCompiled: the shape tables the launcher instantiates).
//
// Regenerate (only when a plan is meant to change, and say so in the commit):
//   WARPKIT_GOLDEN_WRITE=1 build/tests/device/row_plan   (run from the repository root)
#include "row_common.cuh"
#include "golden.cuh"
#include <warpkit/device/softmax.cuh>
#include <warpkit/device/norm.cuh>
#include <warpkit/device/cross_entropy.cuh>
#include <warpkit/device/softmax_backward.cuh>
#include <algorithm>
#include <string>
#include <vector>

using namespace warpkit::detail;

namespace {

const char* kGoldenPath = "tests/device/row_plan.golden";

struct Profile {
    const char* name;
    int sms;
    bool clusters;
};
// H100 (sm_90, clusters), A100 (sm_80), a GPU without clusters (sm_75, 40 SMs), and a small GPU
// with clusters (2 SMs: every few-rows rule at its smallest).
const Profile kProfiles[] = {{"h100", 132, true}, {"a100", 108, false}, {"sm75", 40, false}, {"small", 2, true}};

const long long kRows[] = {1, 2, 8, 64, 133, 1024, 65536, 1LL << 20};

/// Column counts: 1..16, then both sides of every threshold of the planners (thresholds are on a
/// row's whole 16-byte vectors, cols / V, so on multiples of 4 (fp32) and 8 (16-bit) columns, and
/// on slice bytes), up to 2^20.
std::vector<int> planCols() {
    std::vector<int> c;
    for (int i = 1; i <= 16; ++i) c.push_back(i);
    for (int v : {17, 24, 31, 32, 33, 48, 63, 64, 65, 96}) c.push_back(v);
    // The short rule's (R24) ends and tile shapes: fp32 to 143 columns, 16-bit to 255.
    for (int v : {37, 69, 77, 107, 141, 143, 145, 147, 197, 249, 254}) c.push_back(v);
    // R24's 16-bit shape ends: 5, 6, 8 elements a lane, and the widened segment of 62 and 63.
    for (int v : {21, 23, 25, 40, 41, 49, 61, 62, 81, 97, 129, 160, 161, 192, 193}) c.push_back(v);
    for (long long p = 128; p <= (1 << 20); p *= 2)
        for (int d = -1; d <= 1; ++d) c.push_back((int)p + d);
    // R25's ends (fp32 rows of 129..192 vectors: 516..771 columns) and the model width 768.
    for (int v : {515, 516, 640, 768, 769, 771, 772}) c.push_back(v);
    // 768 vectors (the warp-streamed rule's end), staged slice counts (nearest whole slices of 16 and
    // 32 KB: boundaries at odd multiples of 8 and 16 KB), and sizes met in practice.
    for (int v : {3071, 3072, 3073, 6143, 6144, 6145, 10240, 12287, 12288, 12289, 20480, 24576, 40960, 50257, 98304,
                  100000, 196608, 393216, 152064})
        c.push_back(v);
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
    return c;
}

std::string planText(const RowPlan& p) {
    static const char kPath[] = "WBSTRH"; // warp, block, staged, streamed, warp-streamed, short
    char b[96];
    snprintf(b, sizeof b, "%c%d.%d.%d.%d.%d.%d", p.path >= 0 && p.path < 6 ? kPath[p.path] : '?', p.width, p.chunks,
             p.threads, p.blocks, p.slice, p.piece);
    return b;
}

// ---- the planners, as the dispatchers call them ---------------------------------------------------

int gUncompiled = 0;          // plans of the grid without a compiled kernel
std::string gFirstUncompiled; // the first of them

/// Notes a plan that rowRun would refuse (cudaErrorNotSupported: no compiled kernel).
void checkCompiled(RowClass cls, int elemBytes, int M, bool warpStream, const RowPlan& p, const std::string& where) {
    if (rowPlanCompiled(cls, elemBytes, M, warpStream, p)) return;
    if (gUncompiled++ == 0) gFirstUncompiled = where;
}

/// The row family's plan for params p (what rowOpDispatch runs, before any cluster-fit fall-back).
template <typename P> RowPlan familyPlan(const P& p, long long rows, int cols, const Profile& d, bool reduceOnly) {
    const RowPlan pl = rowPlanFor(rowOpQuery(p, rows, cols, d.sms, d.clusters, reduceOnly));
    checkCompiled(reduceOnly ? RowClassReduce : RowClassOutputs, (int)sizeof(typename P::Elem), P::kWarpChunks,
                  P::kReduceWarp, pl,
                  std::string(d.name) + " cols=" + std::to_string(cols) + " rows=" + std::to_string(rows) + " " +
                      planText(pl));
    return pl;
}

template <typename T> RowPlan softmaxPlan(long long rows, int cols, const Profile& d) {
    const RowPlan pl = rowPlanFor(rowSoftmaxQuery((int)sizeof(T), rows, cols, d.sms, d.clusters));
    checkCompiled(RowClassSoftmax, (int)sizeof(T), 1, false, pl,
                  std::string("softmax ") + d.name + " cols=" + std::to_string(cols) + " rows=" + std::to_string(rows) +
                      " " + planText(pl));
    return pl;
}

// Params configurations: the planners read the element type, P's constants and (for the family's
// staged rule) which column arrays are given and whether the inputs stage together. Pointers are
// never dereferenced.
template <typename T> T* fake(size_t a) { return reinterpret_cast<T*>(a); }

/// One line of plans for rows x cols of T on profile d: rowSoftmax; LayerNorm with w, b, mean and
/// rstd; LayerNorm with none; RMSNorm with w and rstd; RMSNorm with none; cross-entropy with the
/// gradient; the loss alone (the reduce-only planner); softmax backward (y and dy aligned alike);
/// log softmax backward with dy 2 elements off y's alignment (not stageable together).
template <typename T> std::string planLine(long long rows, int cols, const Profile& d) {
    const NormParams<T> ln{fake<T>(4096),      fake<T>(8192), fake<T>(12288), fake<T>(16384), fake<float>(20480),
                           fake<float>(24576), cols,          cols,           1e-5f,          false};
    const NormParams<T> lnBare{fake<T>(4096), fake<T>(8192), nullptr, nullptr, nullptr,
                               nullptr,       cols,          cols,    1e-5f,   false};
    const NormParams<T> rms{fake<T>(4096),      fake<T>(8192), fake<T>(12288), nullptr, nullptr,
                            fake<float>(24576), cols,          cols,           1e-5f,   true};
    const NormParams<T> rmsBare{fake<T>(4096), fake<T>(8192), nullptr, nullptr, nullptr,
                                nullptr,       cols,          cols,    1e-5f,   true};
    const CrossEntropyParams<T> xg{
        fake<T>(4096), fake<long long>(8192), fake<float>(12288), fake<T>(16384), cols, cols, -100, 0.0f, 1.0f};
    const CrossEntropyParams<T> xl{
        fake<T>(4096), fake<long long>(8192), fake<float>(12288), nullptr, cols, cols, -100, 0.0f, 1.0f};
    const SoftmaxBackwardParams<T> bw{fake<T>(4096), fake<T>(8192), fake<T>(12288), cols, cols, cols, false};
    const SoftmaxBackwardParams<T> bwOff{fake<T>(4096), fake<T>(8192 + 2 * sizeof(T)), fake<T>(12288), cols, cols, cols,
                                         true};
    std::string s = "softmax=" + planText(softmaxPlan<T>(rows, cols, d));
    s += " ln=" + planText(familyPlan(ln, rows, cols, d, false));
    s += " ln0=" + planText(familyPlan(lnBare, rows, cols, d, false));
    s += " rms=" + planText(familyPlan(rms, rows, cols, d, false));
    s += " rms0=" + planText(familyPlan(rmsBare, rows, cols, d, false));
    s += " xent=" + planText(familyPlan(xg, rows, cols, d, false));
    s += " loss=" + planText(familyPlan(xl, rows, cols, d, true));
    s += " bw=" + planText(familyPlan(bw, rows, cols, d, false));
    s += " bwlog_off=" + planText(familyPlan(bwOff, rows, cols, d, false));
    return s;
}

template <typename T>
void appendType(std::string& out, const char* tname, const Profile& d, const std::vector<int>& cols) {
    for (int c : cols) {
        // Consecutive row counts with the same plans share a line.
        std::string prev, rowsText;
        auto flush = [&]() {
            if (!prev.empty())
                out += std::string(d.name) + " " + tname + " cols=" + std::to_string(c) + " rows=" + rowsText + ": " +
                       prev + "\n";
        };
        for (long long r : kRows) {
            const std::string line = planLine<T>(r, c, d);
            if (line == prev) {
                rowsText += "," + std::to_string(r);
            } else {
                flush();
                prev = line;
                rowsText = std::to_string(r);
            }
        }
        flush();
    }
}

std::string allPlans() {
    const std::vector<int> cols = planCols();
    std::string out =
        "# Row planners' answers (tests/device/row_plan.cu). Plan: path (W warp, B block, S staged, T streamed,\n"
        "# R warp-streamed, H short) then width.chunks.threads.blocks.slice.piece.\n";
    for (const Profile& d : kProfiles) {
        appendType<float>(out, "f32", d, cols);
        appendType<__half>(out, "f16", d, cols);
        appendType<__nv_bfloat16>(out, "bf16", d, cols);
    }
    return out;
}

} // namespace

/// Distinct 4-byte words the busiest bank serves when the 32 / W segments of a warp read the first W
/// 2-byte elements of rows 0, 1, ... of `cols` (counted element by element).
static int shortWays16(int cols, int W) {
    std::vector<std::vector<int>> bank(32);
    for (int t = 0; t < 32; ++t) {
        const int w = ((t / W) * cols + t % W) * 2 / 4;
        if (std::find(bank[w % 32].begin(), bank[w % 32].end(), w) == bank[w % 32].end()) bank[w % 32].push_back(w);
    }
    size_t most = 0;
    for (const std::vector<int>& b : bank) most = b.size() > most ? b.size() : most;
    return (int)most;
}

/// The short path's plans (R24) for every length 1..255 of both element sizes: the tile holds whole
/// rows within kRowShortTileBytes, a whole number of 16-byte vectors (so every tile starts on 16
/// bytes) and of the block's segments; the segment holds the row; a compiled shape. 16-bit rows that
/// are not whole vectors: at most 1.6 slots an element, a warp's first read at most 3 wavefronts,
/// and every compiled 16-bit shape taken by some length.
Test(device_row_plan, short_tiles) {
    int bad = 0;
    bool used16[kRowShortShapeCount16] = {};
    for (int eb : {4, 2}) {
        const int V = 16 / eb;
        for (int cols = 1; cols <= 255; ++cols) {
            const RowPlan p = rowShortPlan(V, cols);
            const int segs = kRowShortThreads / p.width;
            bool ok = p.path == RowShort && p.width * p.chunks >= cols && p.slice >= segs && p.slice % segs == 0 &&
                      (long long)p.slice * cols % V == 0 && (long long)p.slice * cols * eb <= kRowShortTileBytes &&
                      rowPlanCompiled(RowClassSoftmax, eb, 1, false, p) &&
                      !rowPlanCompiled(RowClassOutputs, eb, 1, false, p);
            if (eb == 2 && cols % V != 0)
                ok = ok && p.width * p.chunks * 5 <= cols * 8 && shortWays16(cols, p.width) <= 3;
            for (int i = 0; eb == 2 && i < kRowShortShapeCount16; ++i)
                used16[i] |= kRowShortShapes16[i].width == p.width && kRowShortShapes16[i].chunks == p.chunks;
            if (!ok && bad++ < 5) cr_log_error("short plan for %d-byte rows of %d: %s", eb, cols, planText(p).c_str());
        }
    }
    for (int i = 0; i < kRowShortShapeCount16; ++i)
        if (!used16[i] && bad++ < 10)
            cr_log_error("16-bit short shape %d x %d: no length takes it", kRowShortShapes16[i].width,
                         kRowShortShapes16[i].chunks);
    cr_expect(bad == 0, "%d short plans break the tile's invariants", bad);
}

Test(device_row_plan, golden) {
    wk_golden_check(kGoldenPath, allPlans());
    cr_expect(gUncompiled == 0, "%d plans have no compiled kernel (row_shapes.cuh's shape tables), the first: %s",
              gUncompiled, gFirstUncompiled.c_str());
}
