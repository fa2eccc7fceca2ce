// softmax.cu's bfloat16 launches (softmax_launch.cuh).
#include "softmax_launch.cuh"

WKT_SOFTMAX_LAUNCHES(at::BFloat16)
