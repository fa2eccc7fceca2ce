// segment.cu's float32 launches (segment_launch.cuh).
#include "segment_launch.cuh"

WKT_SEGMENT_LAUNCHES(float)
