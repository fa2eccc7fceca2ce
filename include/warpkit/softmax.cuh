// warpkit/softmax.cuh: softmax and the online-softmax state at every level (the topic header).
//   thread/softmax.cuh    SoftmaxState, softmaxStateUpdate/Merge, softmaxFactors, softmaxApply,
//                         the Kinds and the NaN/inf rules
//   warp/softmax.cuh      warpSoftmax, warpLogSoftmax, warpSoftmaxState, warpReduceSoftmaxState
//   block/softmax.cuh     blockSoftmax, blockLogSoftmax, blockSoftmaxState, blockReduceSoftmaxState
//   cluster/softmax.cuh   clusterSoftmax, clusterReduceSoftmaxState (sm_90 clusters)
// For whole matrices from the host, see device/softmax.cuh (rowSoftmax).
#pragma once

#include "thread/softmax.cuh"
#include "warp/softmax.cuh"
#include "block/softmax.cuh"
#include "cluster/softmax.cuh"
