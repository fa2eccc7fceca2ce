// A row-op params type without rowStatsAdd<N>: the dispatcher names the missing hook and its signature.
// expect: rowRun: params type P lacks rowStatsAdd<N>(p, acc, x, col)
#define ROW_OP_OMIT_STATS_ADD
#include "row_op_common.cuh"
cudaError_t run(const float* x, float* sums) { return demo::rowSums(x, sums, 4, 4); }
