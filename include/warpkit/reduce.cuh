// warpkit/reduce.cuh: warp and block reductions (the topic header).
//   warp/reduce.cuh    warpReduce, warpReduceSum/Max/Min, ...ArgMax/ArgMin, ...Active, ...valid forms
//   block/reduce.cuh   blockReduce, blockReduceSum/Max/Min, ...ToThread0, BlockReduceScratch
// See each header for segments, participation and who gets the result.
#pragma once

#include "warp/reduce.cuh"
#include "block/reduce.cuh"
