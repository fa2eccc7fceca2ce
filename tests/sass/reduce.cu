// tests/sass/reduce.cu: warpkit's warp reductions are no longer (in sm_90 SASS instructions) than
// cub::WarpReduce doing the same work in the same kernel form: each thread loads one value,
// reduces over its segment of W lanes, and the segment's first lane stores the result.
// The kernels differ only in the reduction call; the store rule (first lane of the segment) is
// CUB's rule, and also warpkit's for widths that are not a power of two.
// Checked by tests/check.sh (make test): // @le A B means A has no more instructions than B.
//
// @le wk_sum_f32_w32 cub_sum_f32_w32
// @le wk_sum_f32_w16 cub_sum_f32_w16
// @le wk_sum_f32_w8 cub_sum_f32_w8
// @le wk_sum_f32_w7 cub_sum_f32_w7
// @le wk_sum_i32_w32 cub_sum_i32_w32
// @le wk_max_f32_w32 cub_max_f32_w32
#include <cub/warp/warp_reduce.cuh>
#include <warpkit/reduce.cuh>

namespace {
constexpr int kBlock = 128;  // threads per block in every kernel below

// Segments per warp: full ones plus the short tail one when W does not divide 32.
template <int W> __host__ __device__ constexpr int segsPerWarp() { return 32 / W + (32 % W ? 1 : 0); }

// Index of this thread's segment in the grid, and whether it is the segment's first lane.
template <int W> __device__ __forceinline__ int segIndex() {
    const int lane = threadIdx.x & 31;
    return (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5) * segsPerWarp<W>() + lane / W;
}
template <int W> __device__ __forceinline__ bool firstLane() { return (threadIdx.x & 31) % W == 0; }

// CUB's own maximum rule (a < b ? b : a, which drops NaN), written here: cuda::maximum ships
// only with CCCL 2.8 (CUDA 12.9) and newer, and cub::Max is gone from CCCL 3 (CUDA 13).
struct CubMax {
    template <typename T> __device__ __forceinline__ T operator()(const T& a, const T& b) const {
        return a < b ? b : a;
    }
};

// cub::WarpReduce needs one TempStorage per logical warp (segment) of the block.
} // namespace

#define WK_SASS_PAIR(NAME, T, W, WK_EXPR, CUB_EXPR)                                        \
    extern "C" __global__ void __launch_bounds__(kBlock) wk_##NAME(const T* in, T* out) {  \
        T v = in[blockIdx.x * blockDim.x + threadIdx.x];                                   \
        T r = WK_EXPR;                                                                     \
        if (firstLane<W>()) out[segIndex<W>()] = r;                                        \
    }                                                                                      \
    extern "C" __global__ void __launch_bounds__(kBlock) cub_##NAME(const T* in, T* out) { \
        using R = cub::WarpReduce<T, W>;                                                   \
        __shared__ typename R::TempStorage tmp[kBlock / 32 * segsPerWarp<W>()];            \
        T v = in[blockIdx.x * blockDim.x + threadIdx.x];                                   \
        R reducer(tmp[(threadIdx.x >> 5) * segsPerWarp<W>() + (threadIdx.x & 31) / W]);    \
        T r = CUB_EXPR;                                                                    \
        if (firstLane<W>()) out[segIndex<W>()] = r;                                        \
    }

WK_SASS_PAIR(sum_f32_w32, float, 32, warpkit::warpReduceSum<32>(v), reducer.Sum(v))
WK_SASS_PAIR(sum_f32_w16, float, 16, warpkit::warpReduceSum<16>(v), reducer.Sum(v))
WK_SASS_PAIR(sum_f32_w8, float, 8, warpkit::warpReduceSum<8>(v), reducer.Sum(v))
WK_SASS_PAIR(sum_f32_w7, float, 7, warpkit::warpReduceSum<7>(v), reducer.Sum(v))
WK_SASS_PAIR(sum_i32_w32, int, 32, warpkit::warpReduceSum<32>(v), reducer.Sum(v))
// CUB's maximum drops NaN (a < b ? b : a); warpkit's Max propagates it and is still no longer.
WK_SASS_PAIR(max_f32_w32, float, 32, warpkit::warpReduceMax<32>(v), reducer.Reduce(v, CubMax{}))
