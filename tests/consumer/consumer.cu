// tests/consumer: a user's program built against an installed (or vendored) warpkit. make test
// (tests/check.sh) builds it with CMake find_package, CMake add_subdirectory and
// nvcc $(pkg-config --cflags warpkit). Building proves the package files and the headers'
// include paths; running checks one kernel where there is a GPU.
#include <warpkit/reduce.cuh>
#include <warpkit/device/softmax.cuh>
#include <warpkit/version.cuh>

#include <cuda_runtime.h>
#include <stdio.h>

// Row sums of a rows x 8 matrix: one 8-lane segment per row.
__global__ void rowSums(const float* m, float* out, int rows) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int row = t / 8, col = t % 8;
    float v = row < rows ? m[row * 8 + col] : 0.0f;
    float s = warpkit::warpReduceSum<8>(v);
    if (col == 0 && row < rows) out[row] = s;
}

int main(void) {
    printf("consumer: warpkit %d.%d.%d (WARPKIT_VERSION %d)\n", WARPKIT_VERSION_MAJOR,
           WARPKIT_VERSION_MINOR, WARPKIT_VERSION_PATCH, WARPKIT_VERSION);
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("consumer: no CUDA device: built, not run\n");
        return 0;
    }
    const int rows = 100;
    float h[rows * 8], sums[rows];
    for (int i = 0; i < rows * 8; ++i) h[i] = (float)(i % 13);
    float *dm = 0, *ds = 0;
    if (cudaMalloc(&dm, sizeof h) != cudaSuccess || cudaMalloc(&ds, sizeof sums) != cudaSuccess ||
        cudaMemcpy(dm, h, sizeof h, cudaMemcpyHostToDevice) != cudaSuccess) {
        printf("consumer: FAILED: CUDA set-up\n");
        return 1;
    }
    rowSums<<<(rows * 8 + 255) / 256, 256>>>(dm, ds, rows);
    if (cudaMemcpy(sums, ds, sizeof sums, cudaMemcpyDeviceToHost) != cudaSuccess) {
        printf("consumer: FAILED: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    int bad = 0;
    for (int r = 0; r < rows; ++r) {
        float want = 0.0f;
        for (int c = 0; c < 8; ++c) want += h[r * 8 + c];
        bad += sums[r] != want;
    }
    cudaFree(dm);
    cudaFree(ds);
    printf("consumer: %s\n", bad ? "FAILED" : "ok");
    return bad ? 1 : 0;
}
