// warpkit/welford.cuh: Welford mean and variance at every level (the topic header).
//   thread/welford.cuh    WelfordState, welfordEmpty/Update/Merge, WelfordMerge,
//                         welfordVariance/SampleVariance/Rstd, precision and NaN/inf rules
//   warp/welford.cuh      warpReduceWelford
//   block/welford.cuh     blockReduceWelford
//   cluster/welford.cuh   clusterReduceWelford (sm_90 clusters)
#pragma once

#include "thread/welford.cuh"
#include "warp/welford.cuh"
#include "block/welford.cuh"
#include "cluster/welford.cuh"
