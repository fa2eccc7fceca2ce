// A row-op params type without rowRegs<C, E>: the dispatcher names the missing hook and its signature.
// expect: rowRun: params type P lacks rowRegs<C, E>(p, row, cols, part, x, group)
#define ROW_OP_OMIT_REGS
#include "row_op_common.cuh"
cudaError_t run(const float* x, float* sums) { return demo::rowSums(x, sums, 4, 4); }
