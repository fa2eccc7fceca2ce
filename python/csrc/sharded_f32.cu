// sharded.cu's float32 launches (sharded_launch.cuh).
#include "sharded_launch.cuh"

WKT_SHARDED_LAUNCHES(float)
