// warpkit/warp/softmax.cuh: softmax of rows held by warp segments, and the segment merge of
// online-softmax states. Kinds, NaN/inf rules and accuracy: thread/softmax.cuh.
//
// Layout. A row is spread over the registers of a segment's lanes: each lane passes an array
// `T v[K]` (float, __half or __nv_bfloat16: read and written in that type, all arithmetic in
// float). Any assignment of row elements to (lane, slot) works. Slots that hold no element of the
// row must hold -INFINITY: such padding changes neither the result nor the NaN/inf rules. Their
// outputs are unspecified: do not store them. thread/vector.cuh's loadShare fills such arrays.
#pragma once

#include "../thread/softmax.cuh"
#include "reduce.cuh"

namespace warpkit {

/// Merge the states of each segment of Width lanes (1..32). All 32 lanes must call. Result: every
/// lane of the segment when Width is a power of two, else the segment's first lane.
template <int Width = 32> WARPKIT_DEVICE SoftmaxState warpReduceSoftmaxState(SoftmaxState s) {
    WARPKIT_CHECK_WIDTH(Width, "warpReduceSoftmaxState");
    // The merge is commutative: the unordered butterfly saves a select (and a second exp) per step.
    if constexpr (Width >= 1 && Width <= 32) return detail::warpReduceFull<Width, false>(s, SoftmaxStateMerge{});
    else return s;
}

/// Softmax of rows held by segments of Width lanes (Width = 1, 2, 4, 8, 16 or 32): each segment
/// is one row, each lane holds K of its values in `v` (unused slots = -inf), and every lane gets
/// its own K results back in place. Returns the row's state {max, sum of exp(x - max)} to every
/// lane of the segment (for a loss, or to apply to more values later). All 32 lanes of the warp
/// must call, converged.
template <int Width = 32, int K = 1, int Kind = SoftmaxPlain, typename T>
WARPKIT_DEVICE SoftmaxState warpSoftmax(T (&v)[K]) {
    WARPKIT_CHECK_POW2_WIDTH(Width, "warpSoftmax");
    WARPKIT_CHECK_SOFTMAX_ARGS(T, K, Kind, "warpSoftmax");
    if constexpr (detail::isPow2(Width) && Width <= 32 && detail::IsSoftmaxType<T>::value && K >= 1)
        return detail::softmaxCore<Kind>(v, [](float m) { return warpReduce<Width>(m, Max{}); },
                                         [](float s) { return warpReduce<Width>(s, Sum{}); });
    else
        return softmaxStateEmpty();
}

/// Log-softmax of segment rows: warpSoftmax with Kind = SoftmaxLog (returns the row's state).
template <int Width = 32, int K = 1, typename T> WARPKIT_DEVICE SoftmaxState warpLogSoftmax(T (&v)[K]) {
    return warpSoftmax<Width, K, SoftmaxLog>(v);
}

/// The state of rows held by segments of Width lanes (layout as warpSoftmax), without computing
/// any output: every lane of the segment gets its row's {max, sum}. All 32 lanes must call.
template <int Width = 32, int K = 1, typename T> WARPKIT_DEVICE SoftmaxState warpSoftmaxState(const T (&v)[K]) {
    WARPKIT_CHECK_POW2_WIDTH(Width, "warpSoftmaxState");
    WARPKIT_CHECK_SOFTMAX_ARGS(T, K, SoftmaxPlain, "warpSoftmaxState");
    if constexpr (detail::isPow2(Width) && Width <= 32)
        return detail::rowStateCore(v, [](float m) { return warpReduce<Width>(m, Max{}); },
                                    [](float s) { return warpReduce<Width>(s, Sum{}); });
    else
        return softmaxStateEmpty();
}

} // namespace warpkit
