// segment.cu's float16 launches (segment_launch.cuh).
#include "segment_launch.cuh"

WKT_SEGMENT_LAUNCHES(at::Half)
