// select.cu's float16 launches (select_launch.cuh).
#include "select_launch.cuh"

WKT_SELECT_LAUNCHES(at::Half)
