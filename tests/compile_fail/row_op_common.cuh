// tests/compile_fail/row_op_common.cuh: a minimal row-op params type (the row sums of a float
// matrix) meeting the contract of include/warpkit/device/detail/row_op.cuh, for the row_op_*.cu
// compile-fail tests: each defines one ROW_OP_OMIT_* macro to drop one hook, and must fail with the
// dispatcher's message naming it. With none defined, this compiles (see row_op_*.cu).
#pragma once

#include <warpkit/device/detail/row_launch.cuh>

namespace demo {

struct SumRows {
    using Elem = float;
    using Exchange = float;
    using Merge = warpkit::Sum;
    using Acc = float;
    static constexpr int kInputs = 1, kColumns = 0, kWarpChunks = 1;
    static constexpr bool kOutFast = false, kReduceWarp = false;
    const float* x;
    float* sums;
    long long ld;
};

#ifndef ROW_OP_OMIT_AT
inline SumRows rowAt(SumRows p, long long r0) {
    p.x += r0 * p.ld;
    p.sums += r0;
    return p;
}
#endif
inline bool rowAligned(const SumRows&, int) { return false; }
__device__ inline const float* rowInput(const SumRows& p, int, long long row) { return p.x + row * p.ld; }
__device__ inline float* rowOutput(const SumRows&, long long) { return nullptr; }
__device__ inline float rowFill(const SumRows&, int) { return 0.0f; }
#ifndef ROW_OP_OMIT_REGS
template <int C, int E, int K, typename G>
__device__ float rowRegs(const SumRows&, long long, int, const warpkit::detail::RowPart&, float (&x)[1][K], G g) {
    float s = 0.0f;
    for (int j = 0; j < K; ++j) s += x[0][j]; // empty slots hold rowFill's 0
    return groupCombine(g, groupSum(g, s), warpkit::Sum{});
}
#endif
__device__ inline float rowStatsInit(const SumRows&, long long, int, bool) { return 0.0f; }
#ifndef ROW_OP_OMIT_STATS_ADD
template <int N> __device__ void rowStatsAdd(const SumRows&, float& a, const float (&x)[1][N], int) {
    for (int k = 0; k < N; ++k) a += x[0][k];
}
#endif
template <int Threads> __device__ float rowStatsTotal(const SumRows&, const float& a) {
    return warpkit::blockReduceSum<Threads>(a);
}
#ifndef ROW_OP_OMIT_FACTORS
__device__ inline float rowFactors(const SumRows&, const float&, const float& total, long long,
                                   const warpkit::VectorSplit&, int) {
    return total;
}
#endif
template <int N> __device__ void rowOut(const SumRows&, const float&, float (&)[1][N], int) {}
#ifndef ROW_OP_OMIT_OUTPUTS
__device__ inline void rowOutputs(const SumRows& p, const float& f, long long row) { p.sums[row] = f; }
#endif

inline cudaError_t rowSums(const float* x, float* sums, long long rows, int cols) {
    return warpkit::detail::rowOpDispatch(SumRows{x, sums, cols}, rows, cols, 0, true);
}

} // namespace demo
