// The extension module warpkit._C: the bindings of csrc/*.cu (common.h), each raising RuntimeError
// when it returns a failed Status. The operators are in the warpkit package (warpkit/_ops_*.py).
#include "common.h"

namespace {

void raise(const wkt::Status& s, const char* op) {
    if (s.msg == nullptr) return;
    if (s.err != cudaSuccess) TORCH_CHECK(false, "warpkit.", op, ": ", s.msg, " failed: ", cudaGetErrorString(s.err));
    TORCH_CHECK(false, "warpkit.", op, ": ", s.msg);
}

/// f as a Python function that raises on a failed Status.
template <typename... A> auto raising(wkt::Status (*f)(A...), const char* op) {
    return [f, op](A... a) { raise(f(a...), op); };
}

} // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.doc() = "warpkit's device calls on torch tensors; use the operators of the warpkit package";
    m.def("softmax_forward", raising(&softmaxForward, "softmax"));
    m.def("softmax_backward", raising(&softmaxBackward, "softmax_backward"));
    m.def("norm_forward", raising(&normForward, "norm"));
    m.def("norm_backward", raising(&normBackward, "norm_backward"));
    m.def("norm_add_forward", raising(&normAddForward, "add_norm"));
    m.def("norm_add_backward", raising(&normAddBackward, "add_norm_backward"));
    m.def("cross_entropy_forward", raising(&crossEntropyForward, "cross_entropy"));
    m.def("cross_entropy_scale", raising(&crossEntropyScale, "cross_entropy"));
    m.def("cross_entropy_reduce", raising(&crossEntropyReduce, "cross_entropy"));
    m.def("topk", raising(&topk, "topk"));
    m.def("sample", raising(&sample, "sample"));
    m.def("segment_softmax", raising(&segmentSoftmax, "segment_softmax"));
    m.def("segment_reduce", raising(&segmentReduce, "segment_reduce"));
    m.def("shard_stats", raising(&shardStats, "shard_stats"));
    m.def("stats_merge", raising(&statsMerge, "stats_merge"));
    m.def("shard_softmax_apply", raising(&shardSoftmaxApply, "shard_softmax_apply"));
    m.def("shard_cross_entropy_finish", raising(&shardCrossEntropyFinish, "shard_cross_entropy_finish"));
    m.def("shard_topk", raising(&shardTopK, "shard_topk"));
    m.def("topk_merge", raising(&topkMerge, "topk_merge"));
    m.def("sample_merge", raising(&sampleMerge, "sample_merge"));
}
