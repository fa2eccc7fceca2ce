// The cooperative-groups overloads take tiles within one warp: a 64-thread tile is refused.
// expect: warpReduceSum(tile): cooperative-groups tile size N must be 1, 2, 4, 8, 16 or 32
#include <warpkit/warp/cg.cuh>
namespace cg = cooperative_groups;
__device__ float f(const cg::thread_block_tile<64, cg::thread_block>& t, float x) {
    return warpkit::warpReduceSum(t, x);
}
__global__ void k(float* p) { p[0] = f(*(const cg::thread_block_tile<64, cg::thread_block>*)p, p[1]); }
