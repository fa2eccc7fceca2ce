// select.cu's bfloat16 launches (select_launch.cuh).
#include "select_launch.cuh"

WKT_SELECT_LAUNCHES(at::BFloat16)
