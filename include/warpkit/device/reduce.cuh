// warpkit/device/reduce.cuh: the reduction of a whole array, called from the host, in ONE kernel
// launch, with a result that is bitwise the same on every run.
//
//   warpkit::deviceReduce(in, out, n, op, init, workspace, &bytes, stream)   *out = op over in[0 .. n)
//   warpkit::deviceReduceSum(in, out, n, workspace, &bytes, stream)          and Max, Min
//   warpkit::deviceTransformReduce(in, out, n, transform, op, init, workspace, &bytes, stream)
//                                             *out = op over transform(in[i])  (sum of squares)
//   warpkit::deviceTransformReduce(a, b, out, n, transform, op, init, ...)
//                                             *out = op over transform(a[i], b[i])  (dot product)
//
// This is the way to reduce a whole array. Write your own kernel (gridAccumulate + a block
// reduction, grid.cuh and block/reduce.cuh) only to fuse the reduction into other work.
//
// Types. T: int, unsigned, long long, unsigned long long, float, double, __half, __nv_bfloat16.
// The named forms reduce in T (so an int sum wraps past 2^31 as CUB's does); __half and
// __nv_bfloat16 are reduced in float and the result rounded once to T. The generic form takes any
// accumulator Acc (out's type): deviceReduce(in, (long long*)out, n, Sum{}, 0LL, ...) sums int in
// 64 bits, a double Acc sums float in double, a struct Acc reduces several things in one pass.
// NaN: Max and Min propagate it (ops.cuh); a Sum holding NaN, or +inf and -inf, is NaN.
//
// Semantics. *out = init op in[0] op ... op in[n-1], and *out = init for n = 0. init must be an
// identity of op (init op x == x: 0 for a sum, the lowest value for a max), since every thread of
// the grid starts its share from it; the named forms pass the identity (-0.0 for a float sum, so
// an empty float sum is -0.0). op: associative and commutative, called as op(Acc, element) while
// reading (the element converted to a scalar Acc, or in its arithmetic type for a struct Acc, as
// in threadAccumulate) and as op(Acc, Acc) to combine.
//
// The fold/combine rule. deviceReduce uses ONE operator for both jobs: folding each element into a
// thread's accumulator and combining the partials of threads, warps and blocks. An operator that
// transforms its second operand (op(a, x) = a + x * x) is therefore applied to partials too, and
// squares them: with a plain float accumulator it compiles and returns a wrong value. To reduce a
// function of each element, use deviceTransformReduce (transform applied once per element, op
// only combines); a struct Acc with separate (Acc, element) and (Acc, Acc) overloads also works.
//
// Conventions (docs/design.md). Host; returns cudaError_t; asynchronous on `stream`; allocates
// nothing; out is device memory, written by the kernel (also for n = 0). Any n >= 0 (64-bit, above
// 2^31 included), any alignment of `in`. Bad arguments (n < 0, a null workspaceBytes, a null out,
// a null in with n > 0, *workspaceBytes smaller than the size asked for) return
// cudaErrorInvalidValue, and nothing is launched or written. Host caches (SM count, occupancy)
// are per device and thread-safe.
//
// Workspace (CUB's two-call rule). With workspace == nullptr the call writes the bytes it needs
// to *workspaceBytes and returns; otherwise *workspaceBytes must be at least that. The size
// depends on n, T, Acc and op (one partial per block, and the grid follows each kernel's
// occupancy) and never decreases with n: the size for the largest n serves every smaller n, and
// the largest of several calls' sizes serves them all. The workspace holds the partials and a
// 64-bit arrival word; it may hold anything on entry and needs no alignment. Calls on different
// streams with different workspaces are independent; two calls in flight at once must not share
// one.
//
// How it works. Each thread folds its grid-stride share with 16-byte loads, 4 in flight, that take
// no L1 space (gridAccumulate); each block combines its threads and writes its partial; thread 0
// then counts the block's arrival with an acquire-release atomic, which publishes the partial. The
// block that arrives last reads the partials in block order, combines them the same way and writes
// *out. The grid is the number of blocks resident at once (occupancy x SMs), capped by one block
// per 256 vectors of input: it depends only on n, T, Acc, op and the device. A thread's share and
// order depend only on the grid and in % 16 bytes; the partials are combined in a fixed order and
// no float atomic is used: the same input at the same 16-byte alignment on the same GPU and build
// gives the same bits on every run.
//
// The arrival word, and why there is no memset. A counter that must start at 0 would need a
// cudaMemsetAsync before the kernel: a second operation on the stream, whose start-up is a
// sizeable part of a 2^24-float reduction (about 27 us on an H100). Instead each call gets a
// 48-bit tag (distinct for every call of the process). A finished call leaves the word at a fixed
// "clean" value, and on a clean word each block just adds 1 and reads its arrival number off the
// word: one 64-bit atomic per block, as a plain counter. On any other content (a workspace never
// used), a block's add is void and it starts this call's count with a compare-and-swap to
// tag << 16 | 1, counting itself as arrival 0, or, when another block started the count first,
// adds again; this costs a burst of retried swaps, once per new workspace. (Starting every call
// that way, with the word left at 0, measured 0.91x CUB at 2^24 floats on H100: the blocks of a
// persistent grid arrive together, and their swaps serialise.) The last block leaves the word clean.
// Correctness: exact for a workspace last used by a completed call, and for replays of a captured
// CUDA graph (the word is clean between replays); for a workspace holding arbitrary data, wrong
// only if its arrival word lies within 2^16 above the clean value or its upper 48 bits
// equal this call's tag (probability 2^-48). No scheme without an operation ahead of the kernel
// can be exact for every content: memory that looks exactly like another call's finished count,
// partials included, cannot be told from one.
#pragma once

#include "../grid.cuh"
#include "../block/reduce.cuh"
#include "../detail/host.cuh"

namespace warpkit {
namespace detail {

constexpr int kReduceThreads = 256;            // threads per block
constexpr int kReduceLoads = 4;                // 16-byte loads in flight per thread
constexpr int kArrivalCountBits = 16;          // low bits of the arrival word: the count
constexpr unsigned long long kArrivalCountMask = (1ull << kArrivalCountBits) - 1;
constexpr int kReduceMaxBlocks = (int)kArrivalCountMask; // the count never carries into the tag
constexpr unsigned long long kArrivalTagMask = (1ull << (64 - kArrivalCountBits)) - 1;
/// The arrival word between calls: no call's tag (arrivalTag skips it), count 0.
constexpr unsigned long long kArrivalClean = 0x5ea1c1ea0bb50000ull;

/// 64-bit atomic add / compare-and-swap with acquire-release semantics at GPU scope: the writes
/// this thread made before it are visible to whoever observes its result, and it observes the
/// writes released by the operations it follows.
WARPKIT_DEVICE unsigned long long atomicAddAcqRel(unsigned long long* p, unsigned long long v) {
    unsigned long long old;
    asm volatile("atom.acq_rel.gpu.global.add.u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(v) : "memory");
    return old;
}
WARPKIT_DEVICE unsigned long long atomicCasAcqRel(unsigned long long* p, unsigned long long expected,
                                                  unsigned long long desired) {
    unsigned long long old;
    asm volatile("atom.acq_rel.gpu.global.cas.b64 %0, [%1], %2, %3;"
                 : "=l"(old)
                 : "l"(p), "l"(expected), "l"(desired)
                 : "memory");
    return old;
}

/// Counts one arrival on `word` for the call tagged `tag` (see the header comment) and returns its
/// number, 0 .. (arrivals - 1), each number to exactly one caller. One thread per block calls.
/// The counted operation is acquire-release, so the arrival numbered k sees every write the
/// arrivals numbered below k made before arriving.
WARPKIT_DEVICE unsigned arriveTagged(unsigned long long* word, unsigned long long tag) {
    const unsigned long long tagged = tag << kArrivalCountBits;
    unsigned long long seen = atomicAddAcqRel(word, 1);
    if (seen - kArrivalClean < kArrivalCountMask) return (unsigned)(seen - kArrivalClean); // a clean word
    if ((seen >> kArrivalCountBits) == tag) return (unsigned)(seen & kArrivalCountMask);
    // The word belonged to no arrival of this call, so this add is void: start the count (as
    // arrival 0) unless another block has, retrying while other void adds move the word.
    unsigned long long expected = seen + 1;
    for (;;) {
        seen = atomicCasAcqRel(word, expected, tagged | 1);
        if (seen == expected) return 0;
        if ((seen >> kArrivalCountBits) == tag) return (unsigned)(atomicAddAcqRel(word, 1) & kArrivalCountMask);
        expected = seen;
    }
}

/// A value another block wrote, read from L2 (ld.global.cg), never from this SM's L1.
template <typename A> WARPKIT_DEVICE A loadFromL2(const A* p) {
    using W = typename RawWord<alignof(A) >= 8 ? 8 : (int)alignof(A)>::type;
    constexpr int kWords = (int)(sizeof(A) / sizeof(W));
    W w[kWords];
#pragma unroll
    for (int i = 0; i < kWords; ++i) w[i] = __ldcg(reinterpret_cast<const W*>(p) + i);
    A a;
    __builtin_memcpy(&a, w, sizeof(A));
    return a;
}

/// The accumulator as the output type (the same type, or float rounded to a 16-bit float).
template <typename Out, typename A> WARPKIT_DEVICE Out reduceOutput(A a) {
    if constexpr (IsSame<Out, A>::value) return a;
    else return Arith<Out>::from_acc(a);
}

/// What each thread of the reduction folds besides its share of `in` (the kernel's first
/// parameter): ReadPlain, op on each element; ReadTransform, op on transform(element);
/// ReadTransform2, op on transform(in[i], b[i]) with a second array b. Applied by foldShare.
struct ReadPlain {};
template <typename F> struct ReadTransform { F transform; };
template <typename U, typename F> struct ReadTransform2 {
    const U* b;
    F transform;
};
/// Blocks an SM the kernel's launch bounds ask for: 6 for one input and an accumulator of at most
/// 4 bytes (a budget of 40 registers, in which ptxas issues a step's kReduceLoads loads before it
/// folds any: docs/tuning.md, D1; tests/sass/device_reduce.cu), else 4 (8-byte accumulators and
/// two inputs spilled at 40), or all the SM holds where that is fewer (sm_75: 4).
template <typename Read> struct ReduceTwoInputs { static constexpr bool value = false; };
template <typename U, typename F> struct ReduceTwoInputs<ReadTransform2<U, F>> { static constexpr bool value = true; };
template <typename Read, typename Acc> struct ReduceMinBlocks {
    static constexpr int want = sizeof(Acc) <= 4 && !ReduceTwoInputs<Read>::value ? 6 : 4;
    static constexpr int value =
        WARPKIT_SM_THREADS / kReduceThreads < want ? WARPKIT_SM_THREADS / kReduceThreads : want;
};

template <typename T, typename Acc, typename Op>
WARPKIT_DEVICE Acc foldShare(const T* in, ReadPlain, unsigned long long n, Acc init, Op op) {
    return gridAccumulate<kReduceLoads>(in, n, init, op);
}
template <typename T, typename F, typename Acc, typename Op>
WARPKIT_DEVICE Acc foldShare(const T* in, ReadTransform<F> r, unsigned long long n, Acc init, Op op) {
    return gridTransformAccumulate<kReduceLoads>(in, n, init, r.transform, op);
}
template <typename T, typename U, typename F, typename Acc, typename Op>
WARPKIT_DEVICE Acc foldShare(const T* in, ReadTransform2<U, F> r, unsigned long long n, Acc init, Op op) {
    return gridTransformAccumulate<kReduceLoads>(in, r.b, n, init, r.transform, op);
}

/// The one-launch reduction: *out = op over what `read` folds of `in` from init (see the header
/// comment). partials: gridDim.x values; arrivals: the arrival word; tag: this call's tag.
template <typename T, typename Read, typename Acc, typename Out, typename Op>
__global__ void __launch_bounds__(kReduceThreads, ReduceMinBlocks<Read, Acc>::value)
    deviceReduceKernel(const T* in, Read read, unsigned long long n, Acc init, Op op, Acc* partials,
                       unsigned long long* arrivals, unsigned long long tag, Out* out) {
    // 1. this thread's share, then this block's partial
    Acc acc = foldShare(in, read, n, init, op);
    acc = blockReduceToThread0<kReduceThreads>(acc, op);
    __shared__ bool last;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = acc;
        // One block is last by itself; otherwise count the arrival, which releases the partial.
        last = gridDim.x == 1 || arriveTagged(arrivals, tag) == gridDim.x - 1;
    }
    __syncthreads(); // thread 0's acquire and this barrier order the partial loads below after it
    if (!last) return;
    // 2. the last block: every partial in block order. A batch's loads are all issued before any
    //    is used (their L2 round trips overlap): this step is pure latency.
    constexpr int kBatch = sizeof(Acc) <= 8 ? 8 : 4;
    acc = init;
    for (unsigned b0 = threadIdx.x; b0 < gridDim.x; b0 += kBatch * kReduceThreads) {
        Acc r[kBatch];
#pragma unroll
        for (int k = 0; k < kBatch; ++k)
            if (b0 + k * kReduceThreads < gridDim.x) r[k] = loadFromL2(partials + b0 + k * kReduceThreads);
#pragma unroll
        for (int k = 0; k < kBatch; ++k)
            if (b0 + k * kReduceThreads < gridDim.x) acc = op(acc, r[k]);
    }
    acc = blockReduceToThread0<kReduceThreads>(acc, op);
    if (threadIdx.x == 0) {
        *out = reduceOutput<Out>(acc);
        *arrivals = kArrivalClean; // every block has arrived: no block of this call touches the word again
    }
}

/// A tag for one call: distinct for 2^48 calls of the process, never 0 nor the clean word's. Thread-safe.
inline unsigned long long arrivalTag() {
    static unsigned long long calls = 0;
    for (;;) {
        // A bijection of the 48-bit call number (odd multipliers, xor-shifts): distinct calls get
        // distinct tags, spread over the whole range rather than counting up from 1.
        unsigned long long t = __atomic_add_fetch(&calls, 1ull, __ATOMIC_RELAXED);
        t = (t * 0x9e3779b97f4bull) & kArrivalTagMask;
        t ^= t >> 24;
        t = (t * 0xbf58476d1ce5ull) & kArrivalTagMask;
        t ^= t >> 21;
        if (t != 0 && t != (kArrivalClean >> kArrivalCountBits)) return t;
    }
}

/// Where the arrival word and the partials lie in a workspace of any alignment: the word at the
/// first address aligned for both, the partials after it.
template <typename Acc> struct ReduceWorkspace {
    unsigned long long* arrivals;
    Acc* partials;
};
template <typename Acc> constexpr size_t reduceAlign() { return alignof(Acc) > 16 ? alignof(Acc) : 16; }
template <typename Acc> constexpr size_t reduceWordBytes() {
    return (8 + reduceAlign<Acc>() - 1) / reduceAlign<Acc>() * reduceAlign<Acc>();
}
template <typename Acc> inline size_t reduceWorkspaceBytes(int blocks) {
    return reduceAlign<Acc>() - 1 + reduceWordBytes<Acc>() + (size_t)blocks * sizeof(Acc);
}
template <typename Acc> inline ReduceWorkspace<Acc> reduceWorkspace(void* workspace) {
    constexpr size_t a = reduceAlign<Acc>();
    char* p = reinterpret_cast<char*>(((size_t)workspace + a - 1) / a * a);
    return ReduceWorkspace<Acc>{reinterpret_cast<unsigned long long*>(p),
                                reinterpret_cast<Acc*>(p + reduceWordBytes<Acc>())};
}

/// The grid of the reduction that folds n elements of T (and what `Read` adds) with accumulator Acc
/// on the current device.
template <typename T, typename Read, typename Acc, typename Out, typename Op>
inline cudaError_t reduceReadBlocks(long long n, int* blocks) {
    return gridBlocks(deviceReduceKernel<T, Read, Acc, Out, Op>, kReduceThreads, n,
                      (long long)kReduceThreads * vectorElems<T>(), kReduceMaxBlocks, blocks);
}
/// The grid deviceReduce uses for n elements of T with accumulator Acc on the current device.
template <typename T, typename Acc, typename Out, typename Op>
inline cudaError_t reduceBlocks(long long n, int* blocks) {
    return reduceReadBlocks<T, ReadPlain, Acc, Out, Op>(n, blocks);
}

/// Checks the arguments, answers the workspace query or launches. `inputsOk`: the input pointers
/// are non-null (checked only when n > 0).
template <typename T, typename Read, typename Acc, typename Out, typename Op>
inline cudaError_t deviceReduceLaunch(const T* in, Read read, bool inputsOk, Out* out, long long n, Op op, Acc init,
                                      void* workspace, size_t* workspaceBytes, cudaStream_t stream) {
    if (workspaceBytes == nullptr || n < 0) return cudaErrorInvalidValue;
    int blocks = 0;
    WARPKIT_TRY((reduceReadBlocks<T, Read, Acc, Out, Op>(n, &blocks)));
    const size_t need = reduceWorkspaceBytes<Acc>(blocks);
    if (workspace == nullptr) {
        *workspaceBytes = need;
        return cudaSuccess;
    }
    if (out == nullptr || (n > 0 && !inputsOk) || *workspaceBytes < need) return cudaErrorInvalidValue;
    const ReduceWorkspace<Acc> w = reduceWorkspace<Acc>(workspace);
    return launchKernel(deviceReduceKernel<T, Read, Acc, Out, Op>, blocks, kReduceThreads, stream, in, read,
                        (unsigned long long)n, init, op, w.partials, w.arrivals, arrivalTag(), out);
}

} // namespace detail

#define WARPKIT_CHECK_REDUCE_TYPE(T, fn)                                                  \
    static_assert(::warpkit::detail::Arith<T>::supported,                                 \
                  fn ": element type T must be int, unsigned, long long, unsigned long long, " \
                  "float, double, __half or __nv_bfloat16 (reinterpret other data as one of these)")

/// *out = init op in[0] op ... op in[n-1] (init for n = 0), in one launch on `stream`.
/// Host. init must be an identity of op; Acc is out's type (init converts to it). See the header
/// comment for types, workspace, determinism and errors.
template <typename T, typename Acc, typename Op>
inline cudaError_t deviceReduce(const T* in, Acc* out, long long n, Op op, typename detail::NonDeduced<Acc>::type init,
                                void* workspace, size_t* workspaceBytes, cudaStream_t stream = 0) {
    WARPKIT_CHECK_REDUCE_TYPE(T, "deviceReduce");
    WARPKIT_CHECK_SHUFFLABLE(Acc, "deviceReduce (accumulator, out's type)");
    return detail::deviceReduceLaunch(in, detail::ReadPlain{}, in != nullptr, out, n, op, init, workspace,
                                      workspaceBytes, stream);
}

/// *out = init op t(in[0]) op ... op t(in[n-1]) with t = transform (init for n = 0), in one launch
/// on `stream`: a sum of squares is transform = [] __device__ (float x) { return x * x; }, op = Sum,
/// init = 0. Host. transform: a device callable T -> (convertible to Acc), applied once to each
/// element as stored; op: Acc op(Acc, Acc), associative and commutative, combines the transformed
/// values and the partials alike; init: an identity of op. n >= 0; workspace (CUB's two-call rule),
/// cudaErrorInvalidValue for bad arguments (nothing written) and determinism as deviceReduce; the
/// size follows this kernel's grid, so ask with the same T, Acc, transform and op. Asynchronous on
/// `stream`. A struct with a __device__ operator() works anywhere; a __device__ lambda written in
/// host code needs nvcc --extended-lambda.
template <typename T, typename Acc, typename F, typename Op>
inline cudaError_t deviceTransformReduce(const T* in, Acc* out, long long n, F transform, Op op,
                                         typename detail::NonDeduced<Acc>::type init, void* workspace,
                                         size_t* workspaceBytes, cudaStream_t stream = 0) {
    WARPKIT_CHECK_REDUCE_TYPE(T, "deviceTransformReduce");
    WARPKIT_CHECK_SHUFFLABLE(Acc, "deviceTransformReduce (accumulator, out's type)");
    return detail::deviceReduceLaunch(in, detail::ReadTransform<F>{transform}, in != nullptr, out, n, op, init,
                                      workspace, workspaceBytes, stream);
}

/// Two inputs: *out = init op t(a[0], b[0]) op ... op t(a[n-1], b[n-1]) (init for n = 0), in one
/// launch: a dot product is transform = [] __device__ (float x, float y) { return x * y; },
/// op = Sum, init = 0. Reads both arrays with 16-byte loads when they share their offset within
/// 16 bytes and their element size (else scalar loads). Host; a and b must not be null when n > 0;
/// otherwise (arguments, workspace, errors, asynchrony) as the one-input form.
template <typename T, typename U, typename Acc, typename F, typename Op>
inline cudaError_t deviceTransformReduce(const T* a, const U* b, Acc* out, long long n, F transform, Op op,
                                         typename detail::NonDeduced<Acc>::type init, void* workspace,
                                         size_t* workspaceBytes, cudaStream_t stream = 0) {
    WARPKIT_CHECK_REDUCE_TYPE(T, "deviceTransformReduce");
    static_assert(detail::Arith<U>::supported,
                  "deviceTransformReduce: element type U (of b) must be int, unsigned, long long, unsigned long long, "
                  "float, double, __half or __nv_bfloat16 (reinterpret other data as one of these)");
    WARPKIT_CHECK_SHUFFLABLE(Acc, "deviceTransformReduce (accumulator, out's type)");
    return detail::deviceReduceLaunch(a, detail::ReadTransform2<U, F>{b, transform}, a != nullptr && b != nullptr, out,
                                      n, op, init, workspace, workspaceBytes, stream);
}

// Named forms: *out = the sum / maximum / minimum of in[0 .. n) (the identity for n = 0: -0.0 or
// 0, the lowest value, the highest value). Host; arguments, the workspace (two-call rule), errors
// (cudaErrorInvalidValue, nothing written) and asynchrony on `stream` as deviceReduce.
#define WARPKIT_DETAIL_DEVICE_REDUCE_NAMED(NAME, OP)                                                               \
    template <typename T> inline cudaError_t deviceReduce##NAME(const T* in, T* out, long long n, void* workspace, \
                                                                size_t* workspaceBytes, cudaStream_t stream = 0) { \
        WARPKIT_CHECK_REDUCE_TYPE(T, "deviceReduce" #NAME);                                                        \
        using A = typename detail::Arith<T>::Acc;                                                                  \
        return detail::deviceReduceLaunch(in, detail::ReadPlain{}, in != nullptr, out, n, OP{},                    \
                                          detail::Identity<OP, A>::value(), workspace, workspaceBytes, stream);    \
    }
/// Sum of in[0 .. n), in T (int wraps past 2^31; pick a 64-bit Acc with deviceReduce instead).
WARPKIT_DETAIL_DEVICE_REDUCE_NAMED(Sum, Sum)
/// Maximum of in[0 .. n); NaN if any element is NaN.
WARPKIT_DETAIL_DEVICE_REDUCE_NAMED(Max, Max)
/// Minimum of in[0 .. n); NaN if any element is NaN.
WARPKIT_DETAIL_DEVICE_REDUCE_NAMED(Min, Min)
#undef WARPKIT_DETAIL_DEVICE_REDUCE_NAMED

} // namespace warpkit
