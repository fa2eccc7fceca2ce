// A row-op params type without rowOutputs: the dispatcher names the missing hook and its signature.
// expect: rowRun: params type P lacks rowOutputs(p, f, row)
#define ROW_OP_OMIT_OUTPUTS
#include "row_op_common.cuh"
cudaError_t run(const float* x, float* sums) { return demo::rowSums(x, sums, 4, 4); }
