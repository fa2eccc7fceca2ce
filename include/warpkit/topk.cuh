// warpkit/topk.cuh: top-k selection at every level (the topic header).
//   warp/sort.cuh           warpBitonicSort / Merge (+Pairs): 32 K values a warp, K a lane
//   warp/topk.cuh           topkOrderKey, topkPack, warpTopK: the selection order and the warp's top k
//   block/radix_select.cuh  blockRadixSelect, radixDigitCount, radixFindBucket
//   block/topk.cuh          blockTopK, blockTopKSelect, blockTopKSort
//   cluster/topk.cuh        clusterTopK: a row over a cluster's blocks, merged through shared memory (sm_90)
// The host calls (rowTopK, rowArgMax, rowArgMin) are in warpkit/device/topk.cuh.
#pragma once

#include "warp/sort.cuh"
#include "warp/topk.cuh"
#include "block/radix_select.cuh"
#include "block/topk.cuh"
#include "cluster/topk.cuh"
