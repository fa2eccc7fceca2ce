// norm.cu's float32 launches (norm_launch.cuh).
#include "norm_launch.cuh"

WKT_NORM_LAUNCHES(float)
