// bench/segment_shim.cu: C entry points to warpkit's segment calls (segmentSoftmax,
// segmentReduceSum / Max) on fp32 with int64 CSR offsets, for bench/torch_segment.py, which loads
// them with ctypes and passes torch tensors' pointers and torch's current stream, so that warpkit,
// torch_geometric.utils.softmax and torch's scatter_reduce are timed in one process on the same
// tensors. Built by `make bench` as build/bench/libwarpkit_segment.so. Each returns the
// cudaError_t as an int; a null workspace asks for its size (the two-call rule).
#include <warpkit/device/segment.cuh>

extern "C" int wk_segment_softmax(const float* x, float* y, long long rows, const long long* offsets,
                                  long long segments, int heads, int kind, void* ws, size_t* bytes, void* stream) {
    return (int)warpkit::segmentSoftmax(x, y, rows, offsets, segments, heads, (warpkit::SoftmaxKind)kind, ws, bytes,
                                        (cudaStream_t)stream);
}

extern "C" int wk_segment_reduce(int op, const float* x, float* out, long long rows, const long long* offsets,
                                 long long segments, void* ws, size_t* bytes, void* stream) {
    if (op == 0)
        return (int)warpkit::segmentReduceSum(x, out, rows, offsets, segments, ws, bytes, (cudaStream_t)stream);
    return (int)warpkit::segmentReduceMax(x, out, rows, offsets, segments, ws, bytes, (cudaStream_t)stream);
}
