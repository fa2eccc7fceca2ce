// warpkit/scan.cuh: warp and block prefix scans (the topic header).
//   warp/scan.cuh    warpInclusiveScan / warpExclusiveScan, named Sum/Max/Min forms, ...Valid forms
//                    ...Active forms over the lanes active now
//   warp/packed.cuh  __half2 / __nv_bfloat162 lane-wise scans
//   block/scan.cuh   blockInclusiveScan / blockExclusiveScan, ...Running forms for tile loops
// See each header for segments, participation and who gets the result.
#pragma once

#include "warp/scan.cuh"
#include "warp/packed.cuh"
#include "block/scan.cuh"
