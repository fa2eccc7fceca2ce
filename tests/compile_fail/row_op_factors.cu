// A row-op params type without rowFactors: the dispatcher names the missing hook and its signature.
// expect: rowRun: params type P lacks rowFactors(p, acc, total, row, split, cols)
#define ROW_OP_OMIT_FACTORS
#include "row_op_common.cuh"
cudaError_t run(const float* x, float* sums) { return demo::rowSums(x, sums, 4, 4); }
