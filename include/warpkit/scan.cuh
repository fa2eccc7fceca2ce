// warpkit/scan.cuh: warp and block prefix scans (the topic header).
//   warp/scan.cuh    warpInclusiveScan / warpExclusiveScan, named Sum/Max/Min forms, ...Valid forms
//   block/scan.cuh   blockInclusiveScan / blockExclusiveScan, ...Running forms for tile loops
// See each header for segments, participation and who gets the result.
#pragma once

#include "warp/scan.cuh"
#include "block/scan.cuh"
