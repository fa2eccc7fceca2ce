// norm.cu's bfloat16 launches (norm_launch.cuh).
#include "norm_launch.cuh"

WKT_NORM_LAUNCHES(at::BFloat16)

// A bfloat16 residual beside a float32 x.
WKT_INSTANTIATE(normAddForwardAs, float, at::BFloat16)
WKT_INSTANTIATE(normBackwardNarrowAs, at::BFloat16)
