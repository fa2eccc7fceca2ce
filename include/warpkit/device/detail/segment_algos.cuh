// warpkit/device/detail/segment_algos.cuh: what each segment call computes, as the hooks the
// segment kernels (segment_kernels.cuh) call. Internal: include warpkit/device/segment.cuh.
//
// An algorithm A is a plain struct holding its pointers and parameters, with:
//   using State;  using Elem;  static constexpr bool kTwoPass;
//   State identity() const                 the state of no rows (an identity of merge)
//   State merge(State, State) const        associative; the left operand comes from lower rows
//   Elem  load(long long idx) const        the element(s) at element index idx
//   void  prefetch(long long idx) const    starts moving the element(s) at idx into L2 (no result)
//   State take(State, Elem, long long row) const   fold one element in (row: its row in the segment)
//   void  finish(long long pair, State) const      write a pair's result (reduce, log-sum-exp)
//   void  empty(long long pair) const              what an empty pair writes
//   kTwoPass only: using Factors; Factors prepare(State) const;
//                  void store(const Factors&, long long idx, Elem) const   one output element
// The kernels check the hooks at their entry (WARPKIT_CHECK_SEGMENT_ALGO).
#pragma once

#include "../../thread/softmax.cuh"

namespace warpkit {
namespace detail {

/// Starts moving the sector holding *p from memory into L2 (prefetch.global.L2): a later load of it
/// waits for L2, not DRAM. No result; p must point into the data.
template <typename T> WARPKIT_DEVICE void prefetchL2(const T* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

/// Reductions: out[pair] = op over the pair's elements (converted to A) from init; empty pairs get
/// emptyOut. Arg: A is ValueIndex<T>, the index the element's row in its segment.
template <typename T, typename A, typename Out, typename Op, bool Arg> struct SegReduceAlgo {
    using State = A;
    using Elem = T;
    static constexpr bool kTwoPass = false;
    const T* in;
    Out* out;
    Op op;
    A init;
    Out emptyOut;
    WARPKIT_DEVICE State identity() const { return init; }
    WARPKIT_DEVICE State merge(State a, State b) const { return op(a, b); }
    WARPKIT_DEVICE Elem load(long long idx) const { return in[idx]; }
    WARPKIT_DEVICE void prefetch(long long idx) const { prefetchL2(in + idx); }
    WARPKIT_DEVICE State take(State s, Elem x, long long row) const {
        if constexpr (Arg) return op(s, A{x, (int)row});
        else if constexpr (Arith<T>::supported && Arith<A>::supported) return op(s, (A)Arith<T>::to_acc(x));
        else return op(s, (A)x);
    }
    WARPKIT_DEVICE void finish(long long pair, State s) const {
        if constexpr (IsSame<Out, A>::value) out[pair] = s;
        else out[pair] = Arith<Out>::from_acc(s);
    }
    WARPKIT_DEVICE void empty(long long pair) const { out[pair] = emptyOut; }
};

/// The first pass of the softmax family: the online-softmax state of x's elements.
template <typename T> struct SegStateFold {
    using Elem = T;
    const T* x;
    WARPKIT_DEVICE SoftmaxState identity() const { return softmaxStateEmpty(); }
    WARPKIT_DEVICE SoftmaxState merge(SoftmaxState a, SoftmaxState b) const { return softmaxStateMerge(a, b); }
    WARPKIT_DEVICE T load(long long idx) const { return x[idx]; }
    WARPKIT_DEVICE void prefetch(long long idx) const { prefetchL2(x + idx); }
    WARPKIT_DEVICE SoftmaxState take(SoftmaxState s, T v, long long) const {
        return softmaxStateUpdate(s, Arith<T>::to_acc(v));
    }
};

/// out[pair] = log(sum(exp(x))) over the pair: -inf for an empty or all -inf pair, +inf when the
/// pair holds +inf and no NaN, NaN when it holds a NaN (as torch.logsumexp).
template <typename T> struct SegLogSumExpAlgo : SegStateFold<T> {
    using State = SoftmaxState;
    static constexpr bool kTwoPass = false;
    T* out;
    WARPKIT_DEVICE void finish(long long pair, State s) const {
        float r = s.max + logf(s.sum);
        if (s.max == negInf()) r = negInf();
        if (s.max == __builtin_huge_valf()) r = s.max;
        out[pair] = Arith<T>::from_acc(r);
    }
    WARPKIT_DEVICE void empty(long long pair) const { out[pair] = Arith<T>::from_acc(negInf()); }
};

/// y = softmax (Kind) of each pair's elements; empty pairs write nothing. In place (y == x) works:
/// an element is read before its output is written, by the same thread.
template <typename T, int Kind> struct SegSoftmaxAlgo : SegStateFold<T> {
    using State = SoftmaxState;
    using Factors = SoftmaxFactors;
    static constexpr bool kTwoPass = true;
    T* y;
    WARPKIT_DEVICE void finish(long long, State) const {}
    WARPKIT_DEVICE void empty(long long) const {}
    WARPKIT_DEVICE Factors prepare(State s) const { return softmaxFactors<Kind>(s); }
    WARPKIT_DEVICE void store(const Factors& f, long long idx, T v) const {
        y[idx] = Arith<T>::from_acc(softmaxApply<Kind>(f, Arith<T>::to_acc(v)));
    }
};

/// The softmax backward over segments: plain dx = y (dy - sum(y dy)), log dx = dy - exp(y) sum(dy),
/// sums over the pair (as torch's _softmax_backward_data / _log_softmax_backward_data).
template <typename T> struct SegBackwardElem { T y, dy; };
template <typename T, bool Log> struct SegSoftmaxBackwardAlgo {
    using State = float;
    using Elem = SegBackwardElem<T>;
    using Factors = float;
    static constexpr bool kTwoPass = true;
    const T* y;
    const T* dy;
    T* dx;
    WARPKIT_DEVICE State identity() const { return -0.0f; }
    WARPKIT_DEVICE State merge(State a, State b) const { return a + b; }
    WARPKIT_DEVICE Elem load(long long idx) const { return Elem{y[idx], dy[idx]}; }
    WARPKIT_DEVICE void prefetch(long long idx) const {
        prefetchL2(y + idx);
        prefetchL2(dy + idx);
    }
    WARPKIT_DEVICE State take(State s, Elem e, long long) const {
        if constexpr (Log) return s + Arith<T>::to_acc(e.dy);
        else return fmaf(Arith<T>::to_acc(e.y), Arith<T>::to_acc(e.dy), s);
    }
    WARPKIT_DEVICE void finish(long long, State) const {}
    WARPKIT_DEVICE void empty(long long) const {}
    WARPKIT_DEVICE Factors prepare(State s) const { return s; }
    WARPKIT_DEVICE void store(const Factors& sum, long long idx, Elem e) const {
        const float yv = Arith<T>::to_acc(e.y), g = Arith<T>::to_acc(e.dy);
        if constexpr (Log) dx[idx] = Arith<T>::from_acc(g - expf(yv) * sum);
        else dx[idx] = Arith<T>::from_acc(yv * (g - sum));
    }
};

/// Whether the group kernel stages A's elements in shared memory (segmentStagedOnes): the
/// one-pass algorithms that read one array of Elem (segStageSource gives it), the reductions and
/// log-sum-exp, of elements of at most 4 bytes. (The softmax's write pass beside it, or 8-byte
/// elements' vectors, made the group kernel spill at its 80 registers.)
template <typename A> struct SegStaged { static constexpr bool value = false; };
template <typename T, typename A, typename Out, typename Op, bool Arg>
struct SegStaged<SegReduceAlgo<T, A, Out, Op, Arg>> {
    static constexpr bool value = sizeof(T) <= 4;
};
template <typename T> struct SegStaged<SegLogSumExpAlgo<T>> { static constexpr bool value = true; };
template <typename T, typename A, typename Out, typename Op, bool Arg>
WARPKIT_DEVICE const T* segStageSource(const SegReduceAlgo<T, A, Out, Op, Arg>& a) {
    return a.in;
}
template <typename T> WARPKIT_DEVICE const T* segStageSource(const SegStateFold<T>& a) { return a.x; }

template <typename...> struct SegVoid { using type = void; };
template <typename A, typename = void> struct SegHasHooks { static constexpr bool value = false; };
template <typename A>
struct SegHasHooks<A,
                   typename SegVoid<typename A::State, typename A::Elem, decltype(A::kTwoPass), decltype(&A::identity),
                                    decltype(&A::merge), decltype(&A::load), decltype(&A::prefetch), decltype(&A::take),
                                    decltype(&A::finish), decltype(&A::empty)>::type> {
    static constexpr bool value = true;
};

#define WARPKIT_CHECK_SEGMENT_ALGO(A, fn)                                                                        \
    static_assert(::warpkit::detail::SegHasHooks<A>::value,                                                      \
                  fn ": the algorithm type needs State, Elem, kTwoPass, identity, merge, load, prefetch, take, " \
                     "finish and empty (device/detail/segment_algos.cuh)")

} // namespace detail
} // namespace warpkit
