// samples/row_sum.cu: the sum and the maximum of every row of a row-major float matrix, one
// segment of Width lanes per row. There is no device-layer row reduction yet: deviceReduce
// (include/warpkit/device/reduce.cuh) covers whole arrays, and row kernels such as rowSoftmax live
// in include/warpkit/device/; for per-row work, copy this kernel.
// Short rows pack several rows into one warp (Width 4 puts 8 rows in a warp); long rows use the
// whole warp (Width 32), each lane striding along the row. Change the loads and the per-lane step
// in rowSumMax, and the Width choice in launchRowSumMax. main() checks every row against a
// double-precision CPU reference (odd column counts, NaN and +-inf in some rows).
#include <warpkit/reduce.cuh>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <type_traits>
#include <vector>

#define CHECK(call)                                                                                       \
    do {                                                                                                  \
        if (cudaError_t e_ = (call)) { fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_)); exit(1); } \
    } while (0)

constexpr int kBlock = 256; // threads per block: 8 warps

/// sums[r] = x[r][0] + ... + x[r][cols-1] and maxs[r] = max of row r (NaN if the row holds one).
/// Width: lanes per row, a power of two here so that Width divides the warp (1, 2, ..., 32).
template <int Width>
__global__ void __launch_bounds__(kBlock) rowSumMax(const float* __restrict__ x, long long rows, int cols,
                                                    float* __restrict__ sums, float* __restrict__ maxs) {
    const int lane = threadIdx.x & 31, seg = lane / Width, slane = lane % Width; // row of the warp's rows, lane in it
    const long long warp = ((long long)blockIdx.x * kBlock + threadIdx.x) / 32;
    const long long row = warp * (32 / Width) + seg;
    const bool hasRow = row < rows;

    // Per-lane partials over columns slane, slane + Width, ...; no early return: all lanes reduce.
    float s = 0.0f, m = -INFINITY;
    if (hasRow) {
        const float* xr = x + row * cols;
        for (int c = slane; c < cols; c += Width) {
            const float v = xr[c];
            s += v;
            m = warpkit::Max{}(m, v); // keeps NaN, unlike fmaxf
        }
    }

    // Lanes at or past `cols` loaded nothing: the `valid` count leaves them out of the result.
    const int valid = cols < Width ? cols : Width;
    s = warpkit::warpReduceSum<Width>(s, valid);
    m = warpkit::warpReduceMax<Width>(m, valid);

    // Power-of-two Width: every lane of the segment holds the row's result; lane 0 stores it.
    // (Any other Width gives it to the segment's first lane only: keep the store on slane == 0.)
    if (hasRow && slane == 0) {
        sums[row] = s;
        maxs[row] = m;
    }
}

/// Picks the segment width from the row length (change the policy here): the smallest power of two
/// that covers the row, at most 32 lanes.
static void launchRowSumMax(const float* x, long long rows, int cols, float* sums, float* maxs, int* width) {
    auto go = [&](auto w) {
        constexpr int W = decltype(w)::value;
        const long long rowsPerBlock = (kBlock / 32) * (32 / W);
        const long long blocks = (rows + rowsPerBlock - 1) / rowsPerBlock;
        rowSumMax<W><<<(unsigned)blocks, kBlock>>>(x, rows, cols, sums, maxs);
        *width = W;
    };
    using std::integral_constant;
    if (cols <= 1) go(integral_constant<int, 1>{}); else if (cols <= 2) go(integral_constant<int, 2>{});
    else if (cols <= 4) go(integral_constant<int, 4>{}); else if (cols <= 8) go(integral_constant<int, 8>{});
    else if (cols <= 16) go(integral_constant<int, 16>{}); else go(integral_constant<int, 32>{});
}

// ---- host side: inputs, CPU reference, check --------------------------------------------------
static unsigned long long g_rng = 0x5eed5eedull;
static float uniform(float lo, float hi) {
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * (float)(g_rng >> 40) * (1.0f / 16777216.0f);
}

/// Runs one matrix shape; returns the number of wrong rows.
static long long runCase(long long rows, int cols) {
    std::vector<float> h((size_t)(rows * cols));
    for (auto& v : h) v = uniform(-1.0f, 1.0f);
    // Special rows: NaN (sum and max are NaN), +inf (both +inf), +inf and -inf (sum NaN, max +inf),
    // all -inf (both -inf), and a row of large values where cancellation matters.
    if (rows > 5) {
        h[1 * cols + cols / 2] = NAN;
        h[2 * cols + cols - 1] = INFINITY;
        h[3 * cols] = INFINITY;
        h[3 * cols + cols - 1] = -INFINITY; // same element as above when cols == 1: then -inf
        for (int c = 0; c < cols; ++c) h[4 * cols + c] = -INFINITY, h[5 * cols + c] = (c % 2 ? -1.0f : 1.0f) * 1e30f;
    }
    if (rows > 100) h[(rows - 1) * cols] = NAN; // last row too

    float *dx, *ds, *dm;
    CHECK(cudaMalloc(&dx, h.size() * sizeof(float)));
    CHECK(cudaMalloc(&ds, rows * sizeof(float)));
    CHECK(cudaMalloc(&dm, rows * sizeof(float)));
    CHECK(cudaMemcpy(dx, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(ds, 0xA5, rows * sizeof(float))); // poison: a row never written shows up
    CHECK(cudaMemset(dm, 0xA5, rows * sizeof(float)));
    int width = 0;
    launchRowSumMax(dx, rows, cols, ds, dm, &width);
    CHECK(cudaGetLastError());
    std::vector<float> sums(rows), maxs(rows);
    CHECK(cudaMemcpy(sums.data(), ds, rows * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(maxs.data(), dm, rows * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dx), cudaFree(ds), cudaFree(dm);

    long long bad = 0;
    for (long long r = 0; r < rows; ++r) {
        double s = 0, a = 0, m = -INFINITY;
        bool nan = false;
        for (int c = 0; c < cols; ++c) {
            const double v = h[r * cols + c];
            s += v;
            a += fabs(v);
            nan |= isnan(v);
            if (v > m) m = v;
        }
        if (nan) m = NAN;
        // float sums: each of at most cols additions rounds by eps/2 of a partial sum <= a.
        const double tol = cols * 0x1p-24 * a;
        const bool sumOk = isnan(s) ? isnan(sums[r]) : isinf(s) ? sums[r] == s : fabs(sums[r] - s) <= tol;
        const bool maxOk = isnan(m) ? isnan(maxs[r]) : maxs[r] == m;
        if (!(sumOk && maxOk) && bad++ < 5)
            printf("  MISMATCH row %lld of %lld x %d: sum %.9g (want %.9g), max %.9g (want %.9g)\n", r, rows, cols,
                   sums[r], s, maxs[r], m);
    }
    printf("  %7lld rows x %4d cols, Width %2d (%2d rows per warp): %s\n", rows, cols, width, 32 / width,
           bad ? "WRONG" : "sums and maxima match the CPU");
    return bad;
}

int main() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("row_sum: no CUDA device\n");
        return 0;
    }
    // Shapes (change them here): odd column counts, short rows that share a warp, long rows.
    const long long shapes[][2] = {{1001, 1},  {4099, 2},  {4099, 3},   {2001, 7},    {777, 12}, {300, 17},
                                   {1003, 33}, {517, 1000}, {65, 4097}, {100000, 5}, {7, 31}};
    long long bad = 0;
    for (auto& s : shapes) bad += runCase(s[0], (int)s[1]);
    printf("row_sum: %s\n", bad ? "FAILED" : "ok");
    return bad ? 1 : 0;
}
