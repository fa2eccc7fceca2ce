// softmax.cu's float16 launches (softmax_launch.cuh).
#include "softmax_launch.cuh"

WKT_SOFTMAX_LAUNCHES(at::Half)
