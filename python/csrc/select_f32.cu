// select.cu's float32 launches (select_launch.cuh).
#include "select_launch.cuh"

WKT_SELECT_LAUNCHES(float)
