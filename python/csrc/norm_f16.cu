// norm.cu's float16 launches (norm_launch.cuh).
#include "norm_launch.cuh"

WKT_NORM_LAUNCHES(at::Half)

// A float16 residual beside a float32 x.
WKT_INSTANTIATE(normAddForwardAs, float, at::Half)
WKT_INSTANTIATE(normBackwardNarrowAs, at::Half)
