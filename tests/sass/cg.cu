// tests/sass/cg.cu: the cooperative-groups overloads (warp/cg.cuh) compile to the same sm_90 SASS as
// the width-template forms they stand for: each pair differs only in the call, and each kernel has
// no more instructions than the other (so the same count).
// Checked by tests/check.sh (make test): // @le A B means A has no more instructions than B.
//
// @le tile_sum_f32_w16 width_sum_f32_w16
// @le width_sum_f32_w16 tile_sum_f32_w16
// @le tile_max_i32_w32 width_max_i32_w32
// @le width_max_i32_w32 tile_max_i32_w32
// @le tile_incl_f32_w8 width_incl_f32_w8
// @le width_incl_f32_w8 tile_incl_f32_w8
// @le tile_excl_i32_w32 width_excl_i32_w32
// @le width_excl_i32_w32 tile_excl_i32_w32
// @le tile_any_w4 width_any_w4
// @le width_any_w4 tile_any_w4
// @le tile_sum_h2_w32 width_sum_h2_w32
// @le width_sum_h2_w32 tile_sum_h2_w32
#include <warpkit/warp/cg.cuh>

namespace cg = cooperative_groups;

#define WK_SASS_CG_PAIR(NAME, T, W, TILE_EXPR, WIDTH_EXPR)                                \
    extern "C" __global__ void __launch_bounds__(128) tile_##NAME(const T* in, T* out) {  \
        const auto tile = cg::tiled_partition<W>(cg::this_thread_block());                \
        const T v = in[blockIdx.x * blockDim.x + threadIdx.x];                            \
        out[blockIdx.x * blockDim.x + threadIdx.x] = TILE_EXPR;                           \
    }                                                                                     \
    extern "C" __global__ void __launch_bounds__(128) width_##NAME(const T* in, T* out) { \
        const T v = in[blockIdx.x * blockDim.x + threadIdx.x];                            \
        out[blockIdx.x * blockDim.x + threadIdx.x] = WIDTH_EXPR;                          \
    }

WK_SASS_CG_PAIR(sum_f32_w16, float, 16, warpkit::warpReduceSum(tile, v), warpkit::warpReduceSum<16>(v))
WK_SASS_CG_PAIR(max_i32_w32, int, 32, warpkit::warpReduceMax(tile, v), warpkit::warpReduceMax<32>(v))
WK_SASS_CG_PAIR(incl_f32_w8, float, 8, warpkit::warpInclusiveSum(tile, v), warpkit::warpInclusiveSum<8>(v))
WK_SASS_CG_PAIR(excl_i32_w32, int, 32, warpkit::warpExclusiveScan(tile, v, warpkit::Sum{}, 7),
                warpkit::warpExclusiveScan<32>(v, warpkit::Sum{}, 7))
WK_SASS_CG_PAIR(any_w4, int, 4, (int)warpkit::segmentAny(tile, v > 0), (int)warpkit::segmentAny<4>(v > 0))
WK_SASS_CG_PAIR(sum_h2_w32, __half2, 32, warpkit::warpReduceSum(tile, v), warpkit::warpReduceSum<32>(v))
