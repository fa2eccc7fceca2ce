// warpkit.cuh: the umbrella header. Includes every public device-code header of warpkit (thread,
// warp, block and cluster levels); the host-callable device layer is in warpkit/device/.
//   #include <warpkit.cuh>          everything
//   #include <warpkit/reduce.cuh>   or just the topic you need
#pragma once

#include "warpkit/version.cuh"
#include "warpkit/ops.cuh"
#include "warpkit/thread/vector.cuh"
#include "warpkit/warp/exchange.cuh"
#include "warpkit/block/load.cuh"
#include "warpkit/reduce.cuh"
#include "warpkit/scan.cuh"
#include "warpkit/vote.cuh"
#include "warpkit/grid.cuh"
#include "warpkit/softmax.cuh"
#include "warpkit/welford.cuh"
#include "warpkit/topk.cuh"
#include "warpkit/warp/segmented.cuh"
