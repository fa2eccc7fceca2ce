// tests/device/scan_plan.cu: the golden plans of the device scan. Host only: runs and passes without
// a GPU. Prints, for each element type, the tile geometry (ScanShape); for each type and device
// profile, scanPlan's pipeline (stages, lag, whether tiles are prefetched by async copies); and for
// each type and n, the tiles (in aligned, and misaligned by V - 1 elements), the workspace bytes
// and the grid on each profile at one block an SM. Compares the text with
// tests/device/scan_plan.golden, so that a change that changes a plan shows up here, line by line.
// It also fails when a plan is one the kernel cannot run: a lag above kScanLagMax, no stage ahead
// of the lag, stages that do not fit the profile's shared memory.
//
// Regenerate (only when a plan is meant to change, and say so in the commit):
//   WARPKIT_GOLDEN_WRITE=1 build/tests/device/scan_plan   (run from the repository root)
#include "golden.cuh"
#include <warpkit/device/scan.cuh>
#include <string>
#include <vector>

using namespace warpkit::detail;

namespace {

const char* kGoldenPath = "tests/device/scan_plan.golden";

struct Profile {
    const char* name;
    int sms;
    int smemOptin; // shared memory a block may opt in to
};
// H100 (228 KB an SM), A100 (164 KB), an sm_75 GPU (64 KB), a small GPU of 2 SMs (an sm_86 part's
// 100 KB an SM), and a device that gives a block only the default 48 KB.
const Profile kProfiles[] = {{"h100", 132, 227 * 1024},
                             {"a100", 108, 163 * 1024},
                             {"sm75", 40, 64 * 1024},
                             {"small", 2, 99 * 1024},
                             {"48k", 16, 48 * 1024}};

// Element types of every tile geometry: 1, 2, 4, 8 and 16 bytes (16-byte vectors), and 12, 24 and
// 64 bytes (element by element).
struct Bytes12 {
    float v[3];
};
struct Bytes24 {
    double v[3];
};
struct Bytes64 {
    double v[8];
};
struct Bytes232 { // large enough that the kernel's own shared memory passes kScanKernelSmem
    double v[29];
};

/// Checks that the plan is one the kernel runs (deviceScanRun's conditions, and the shared memory).
template <typename T> void checkPlan(const char* tname, const Profile& d, const ScanPlan& pl) {
    const int stages = pl.stages, lag = pl.lag;
    if (stages < 1) return; // the launch returns cudaErrorInvalidConfiguration
    cr_expect(scanPipelineRuns(stages, lag), "%s on %s: %d stages, lag %d: not a pipeline the kernel runs", tname,
              d.name, stages, lag);
    cr_expect((long long)stages * ScanStage<T>::bytes + scanKernelSmem<T>() <= d.smemOptin,
              "%s on %s: %d stages of %d bytes do not fit %d", tname, d.name, stages, ScanStage<T>::bytes, d.smemOptin);
}

template <typename T> void appendType(std::string& out, const char* tname) {
    using S = ScanShape<T>;
    char b[512];
    snprintf(b, sizeof b, "%s shape: vec=%d V=%d C=%d tileElems=%lld statusWords=%d keep=%d stageBytes=%d maxN=%lld\n",
             tname, (int)S::vec, S::V, S::C, S::tileElems, LookbackShape<T>::words, LookbackShape<T>::keep,
             ScanStage<T>::bytes, scanMaxElems<T>());
    out += b;
    for (const Profile& d : kProfiles) {
        const ScanPlan pl = scanPlan<T>(d.smemOptin); // as deviceScanLaunch asks on a device like d
        checkPlan<T>(tname, d, pl);
        snprintf(b, sizeof b, "%s %s: stages=%d lag=%d prefetch=%d\n", tname, d.name, pl.stages, pl.lag,
                 (int)(pl.stages >= 1 && pl.stages >= pl.lag + 2));
        out += b;
    }
    const long long te = S::tileElems, big = scanMaxElems<T>();
    const long long ns[] = {0,          1,       2,         S::V - 1,        S::V,      S::V + 1, te - 1, te, te + 1,
                            2 * te + 1, 1000000, 1LL << 28, (1LL << 31) + 7, 1LL << 40, big};
    for (long long n : ns) {
        const long long tiles = scanTiles<T>(n, 0), tilesOff = scanTiles<T>(n, S::V - 1);
        std::string grid;
        for (const Profile& d : kProfiles) {
            snprintf(b, sizeof b, "%s%s:%lld", grid.empty() ? "" : ",", d.name,
                     tilesOff < d.sms ? tilesOff : (long long)d.sms);
            grid += b;
        }
        snprintf(b, sizeof b, "%s n=%lld: tiles=%lld tilesOff=%lld workspace=%zu grid=%s\n", tname, n, tiles, tilesOff,
                 scanWorkspaceBytes<T>(n), grid.c_str());
        out += b;
    }
}

std::string allPlans() {
    std::string out = "# Device scan plans (tests/device/scan_plan.cu). prefetch: tiles loaded ahead by async copies;\n"
                      "# tilesOff: tiles with in misaligned by V - 1 elements; grid: blocks at one block an SM.\n";
    appendType<unsigned char>(out, "u8");
    appendType<__half>(out, "f16");
    appendType<int>(out, "i32");
    appendType<float>(out, "f32");
    appendType<double>(out, "f64");
    appendType<warpkit::SegmentedPair<float>>(out, "seg_f32");
    appendType<Bytes12>(out, "b12");
    appendType<warpkit::SegmentedPair<double>>(out, "seg_f64");
    appendType<Bytes24>(out, "b24");
    appendType<Bytes64>(out, "b64");
    appendType<Bytes232>(out, "b232");
    return out;
}

} // namespace

Test(device_scan_plan, golden) { wk_golden_check(kGoldenPath, allPlans()); }
