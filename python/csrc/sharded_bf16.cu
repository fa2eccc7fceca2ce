// sharded.cu's bfloat16 launches (sharded_launch.cuh).
#include "sharded_launch.cuh"

WKT_SHARDED_LAUNCHES(at::BFloat16)
