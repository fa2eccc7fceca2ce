// A row-op params type without rowAt: the dispatcher names the missing hook and its signature.
// expect: rowRun: params type P lacks rowAt(p, r0)
#define ROW_OP_OMIT_AT
#include "row_op_common.cuh"
cudaError_t run(const float* x, float* sums) { return demo::rowSums(x, sums, 4, 4); }
