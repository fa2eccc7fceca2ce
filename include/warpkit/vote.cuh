// warpkit/vote.cuh: lane and warp ids, lane masks, segment votes, leader election, segment
// broadcast and warp-aggregated atomics (the topic header; everything is in warp/vote.cuh).
#pragma once

#include "warp/vote.cuh"
