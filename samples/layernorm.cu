// samples/layernorm.cu: for LayerNorm of a whole matrix call warpkit::rowLayerNorm (device/norm.cuh) instead; copy this to fuse your own work into it.
// A one-block-per-row LayerNorm kernel written with warpkit's public primitives: thread/vector.cuh
// moves each row with 16-byte loads and stores whatever its alignment, thread/welford.cuh and
// block/welford.cuh give the row's mean and variance in one pass and one block reduction.
#include <warpkit/thread/vector.cuh>
#include <warpkit/welford.cuh>
#include <math.h>
#include <stdio.h>
#include <vector>

constexpr int kThreads = 256;                       // threads per block (one row each)
constexpr int kVecs = 4;                            // 16-byte vectors per thread
constexpr int kV = warpkit::vectorElems<float>();   // floats per vector
constexpr int kMaxCols = kThreads * kVecs * kV;     // 4096 columns
constexpr int kSlots = kVecs * kV + 1;              // + 1 slot for a head or tail element

// y = (x - mean) * rstd * w + b for each row of a rows x cols matrix with row stride ld; mean[row]
// and rstd[row] get the row's statistics.
__global__ void __launch_bounds__(kThreads) layerNormRows(const float* x, float* y, const float* w, const float* b, float* mean,
                                                          float* rstd, int cols, long long ld, float eps) {
    const int t = threadIdx.x;
    const float* xr = x + blockIdx.x * ld;
    const warpkit::VectorSplit s = warpkit::vectorSplit(xr, cols); // head scalars, 16-byte body, tail
    float v[kSlots];
    // Thread t takes body vectors t, t + 256, ... and one head/tail element; empty slots get 0.
    warpkit::loadShare<kVecs, 1>(v, xr, s, t, kThreads, 0.0f);
    // Welford over the thread's own elements, four at a time (one reciprocal per vector) ...
    warpkit::WelfordState st = warpkit::welfordEmpty();
    for (int c = 0; c < kVecs; ++c) {
        if (t + c * kThreads < s.vectors) {
            const float piece[kV] = {v[c * kV], v[c * kV + 1], v[c * kV + 2], v[c * kV + 3]};
            st = warpkit::welfordUpdate(st, piece);
        }
    }
    const bool hasExtra = t < s.head + s.tail;
    if (hasExtra) st = warpkit::welfordUpdate(st, v[kSlots - 1]);
    // ... then Chan's merge over the block: every thread gets the row's {count, mean, m2}.
    st = warpkit::blockReduceWelford<kThreads>(st);
    const float m = st.mean, r = warpkit::welfordRstd(st, eps);
    for (int c = 0; c < kVecs; ++c) {
        if (t + c * kThreads >= s.vectors) continue;
        const int col = s.head + (t + c * kThreads) * kV; // column of the vector's first element
        for (int k = 0; k < kV; ++k) v[c * kV + k] = (v[c * kV + k] - m) * r * w[col + k] + b[col + k];
    }
    const int ecol = t < s.head ? t : s.head + (int)s.vectors * kV + (t - s.head); // the head/tail element's column
    if (hasExtra) v[kSlots - 1] = (v[kSlots - 1] - m) * r * w[ecol] + b[ecol];
    warpkit::storeShare<kVecs, 1>(y + blockIdx.x * ld, s, v, t, kThreads);
    if (t == 0) {
        mean[blockIdx.x] = m;
        rstd[blockIdx.x] = r;
    }
}

int main() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("layernorm: no CUDA device\n");
        return 0;
    }
    // Shapes: odd lengths, odd row strides (rows at every alignment), a row far from zero.
    const int shapes[][2] = {{1, 1}, {37, 7}, {100, 768}, {64, 4093}, {9, kMaxCols}};
    bool ok = true;
    for (const auto& sh : shapes) {
        const int rows = sh[0], cols = sh[1];
        const long long ld = cols + 3;
        const float eps = 1e-5f;
        std::vector<float> hx(rows * ld), hy(rows * ld), hw(cols), hb(cols), hm(rows), hr(rows);
        for (size_t i = 0; i < hx.size(); ++i) hx[i] = (float)((i * 2654435761u % 20001) / 1000.0 - 10.0 + ((long long)i / ld == 1 ? 1e3 : 0));
        for (int c = 0; c < cols; ++c) {
            hw[c] = 1.0f + 0.001f * (c % 17);
            hb[c] = 0.01f * (c % 5);
        }
        float *dx, *dy, *dw, *db, *dm, *dr;
        cudaMalloc(&dx, hx.size() * sizeof(float));
        cudaMalloc(&dy, hx.size() * sizeof(float));
        cudaMalloc(&dw, cols * sizeof(float));
        cudaMalloc(&db, cols * sizeof(float));
        cudaMalloc(&dm, rows * sizeof(float));
        cudaMalloc(&dr, rows * sizeof(float));
        cudaMemcpy(dx, hx.data(), hx.size() * sizeof(float), cudaMemcpyHostToDevice);
        cudaMemcpy(dw, hw.data(), cols * sizeof(float), cudaMemcpyHostToDevice);
        cudaMemcpy(db, hb.data(), cols * sizeof(float), cudaMemcpyHostToDevice);
        layerNormRows<<<rows, kThreads>>>(dx, dy, dw, db, dm, dr, cols, ld, eps);
        const cudaError_t e = cudaDeviceSynchronize();
        cudaMemcpy(hy.data(), dy, hy.size() * sizeof(float), cudaMemcpyDeviceToHost);
        cudaMemcpy(hm.data(), dm, rows * sizeof(float), cudaMemcpyDeviceToHost);
        cudaMemcpy(hr.data(), dr, rows * sizeof(float), cudaMemcpyDeviceToHost);
        for (float* p : {dx, dy, dw, db, dm, dr}) cudaFree(p);
        double worst = e == cudaSuccess ? 0.0 : INFINITY;
        for (int r = 0; r < rows; ++r) {
            double mean = 0, var = 0;
            for (int c = 0; c < cols; ++c) mean += hx[r * ld + c];
            mean /= cols;
            for (int c = 0; c < cols; ++c) var += (hx[r * ld + c] - mean) * (hx[r * ld + c] - mean);
            const double rs = 1.0 / sqrt(var / cols + eps);
            worst = fmax(worst, fabs(hr[r] - rs) / rs);
            for (int c = 0; c < cols; ++c) {
                const double want = (hx[r * ld + c] - mean) * rs * hw[c] + hb[c];
                worst = fmax(worst, fabs(hy[r * ld + c] - want) / (1.0 + fabs(want)));
            }
        }
        const bool good = worst <= 1e-4;
        ok = ok && good;
        printf("  %4d x %-5d max err %.2e %s%s\n", rows, cols, worst, good ? "ok" : "FAILED", e == cudaSuccess ? "" : cudaGetErrorString(e));
    }
    printf("layernorm sample: %s\n", ok ? "all ok" : "FAILED");
    return ok ? 0 : 1;
}
