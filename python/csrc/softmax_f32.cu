// softmax.cu's float32 launches (softmax_launch.cuh).
#include "softmax_launch.cuh"

WKT_SOFTMAX_LAUNCHES(float)
