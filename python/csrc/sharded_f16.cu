// sharded.cu's float16 launches (sharded_launch.cuh).
#include "sharded_launch.cuh"

WKT_SHARDED_LAUNCHES(at::Half)
