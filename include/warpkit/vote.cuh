// warpkit/vote.cuh: lane and warp ids, lane masks, segment votes, leader election, segment
// broadcast and warp-aggregated atomics (warp/vote.cuh); shuffles of any type within segments:
// warpShuffleIdx/Up/Down/Xor/Rotate (warp/shuffle.cuh). The topic header.
#pragma once

#include "warp/vote.cuh"
#include "warp/shuffle.cuh"
