// warpkit/reduce.cuh: warp and block reductions (the topic header).
//   warp/reduce.cuh    warpReduce, warpReduceSum/Max/Min, ...ArgMax/ArgMin, ...Active, ...valid forms
//   warp/packed.cuh    __half2 / __nv_bfloat162 lane-wise forms (precise and ...Fast)
//   block/reduce.cuh   blockReduce, blockReduceSum/Max/Min, ...ToThread0, BlockReduceScratch
// See each header for segments, participation and who gets the result.
#pragma once

#include "warp/reduce.cuh"
#include "warp/packed.cuh"
#include "block/reduce.cuh"
