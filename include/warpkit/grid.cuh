// warpkit/grid.cuh: grid-stride loops, per-thread accumulation with 16-byte vector loads, and a
// host helper that sizes a grid from occupancy.
//
//   WARPKIT_GRID_STRIDE_LOOP(i, n)       for every index i of [0, n) this thread owns (64-bit i)
//   warpkit::gridAccumulate<Loads>(p, n, init, op)
//                                        fold this thread's grid-stride share of p[0..n) into init
//   warpkit::threadAccumulate<Loads>(p, n, init, op, thread, threads)
//                                        the same for any numbering of the cooperating threads
//   warpkit::gridTransformAccumulate<Loads>(p, [q,] n, init, transform, op)   (and thread...)
//                                        fold op(acc, transform(p[i] [, q[i]])): sums of squares,
//                                        dot products
//   warpkit::occupancyGridSize(&blocks, kernel, blockThreads, smem, maxBlocks)
//                                        host: blocks = resident blocks per SM x SM count
//
// The accumulation helpers are the streaming half of a reduction: each thread returns a partial
// value, and the caller combines the partials with warpReduce / a block reduction (see
// device/reduce.cuh for a whole one-launch device reduction).
//
// Memory access. The pointer may have any alignment of its element type. The first few elements
// up to the next 16-byte boundary ("head") and the last few that do not fill a 16-byte vector
// ("tail") are read as scalars; everything between is read as 16-byte vectors through the read-only
// path with no L1 allocation (ld.global.nc.L1::no_allocate.v4: each element is read once, and L1
// space held by lines nobody reads again limits the loads in flight), `Loads` vectors per thread
// issued back to back before any is used, so Loads x 16 bytes per thread are in flight. No element
// outside [p, p + n) is read, for any n (0 included).
//
// Determinism. A thread's share and the order it folds it in depend only on (p % 16, n, thread,
// threads), so with the same grid the result is bitwise the same on every run.
#pragma once

#include "ops.cuh"
#include "thread/vector.cuh"

namespace warpkit {

/// Grid-stride loop over [0, n) with 64-bit indices: `i` is declared as `unsigned long long`
/// and starts at this thread's global index (1-D grid), stepping by the number of threads in
/// the grid. Every thread of the grid runs it; together they visit each index exactly once.
/// n may exceed 2^32. Example: WARPKIT_GRID_STRIDE_LOOP(i, n) { y[i] = 2 * x[i]; }
#define WARPKIT_GRID_STRIDE_LOOP(i, n)                                                    \
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x, \
                            i##_warpkit_step = (unsigned long long)gridDim.x * blockDim.x, \
                            i##_warpkit_end = (unsigned long long)(n);                    \
         i < i##_warpkit_end; i += i##_warpkit_step)

namespace detail {

/// The value handed to op for one element x: a scalar accumulator type gets x converted to it
/// (int -> long long, __half -> float, float -> double, ...); any other accumulator type (a user
/// struct) gets x in its own arithmetic type (Arith<T>::Acc: float for the 16-bit floats).
template <typename Acc, typename T> WARPKIT_DEVICE auto widen(T x) {
    if constexpr (Arith<Acc>::supported) {
        if constexpr (IsSame<Acc, T>::value) return x;
        else if constexpr (Arith<Acc>::is_float && !IsSame<typename Arith<Acc>::Acc, Acc>::value)
            return Arith<Acc>::from_acc((float)Arith<T>::to_acc(x)); // accumulate in __half/bf16
        else return (Acc)Arith<T>::to_acc(x);
    } else {
        return Arith<T>::to_acc(x);
    }
}

} // namespace detail

namespace detail {

/// The shared body of the accumulation helpers: fold this thread's share of p[0 .. n) (and of
/// q[0 .. n) when Two) into acc with fold(acc, p[i]) or fold(acc, p[i], q[i]). The 16-byte body is
/// read as vectors when p and q share their offset within 16 bytes and their element size (always
/// for one input); otherwise every element is read as a scalar, in the same grid-stride order.
template <int Loads, bool Two, typename T, typename U, typename Acc, typename Fold>
WARPKIT_DEVICE Acc threadFold(const T* p, const U* q, unsigned long long n, Acc acc, Fold fold,
                              unsigned long long thread, unsigned long long threads) {
    constexpr int V = vectorElems<T>();
    // Split [p, p + n) into a scalar head (up to the first 16-byte boundary), a body of whole
    // vectors and a scalar tail.
    const VectorSplit s = vectorSplit(p, (long long)n);
    bool vec = true;
    if constexpr (Two) vec = sizeof(T) == sizeof(U) && ((size_t)p & 15) == ((size_t)q & 15);
    const unsigned long long head = vec ? (unsigned long long)s.head : n;
    const unsigned long long tail = vec ? (unsigned long long)s.tail : 0;
    const unsigned long long nvec = vec ? (unsigned long long)s.vectors : 0;
    const unsigned long long tailStart = head + nvec * V;
    const T* body = p + head;
    const U* body2 = q + head;
    auto one = [&](Acc a, unsigned long long i) {
        if constexpr (Two) return fold(a, p[i], q[i]);
        else return fold(a, p[i]);
    };

    // This thread's first head/tail element: loaded now, folded last, so its latency overlaps the
    // body's loads instead of delaying them.
    const unsigned long long nextra = head + tail;
    const bool hasExtra = thread < nextra;
    T extra{};
    U extra2{};
    if (hasExtra) {
        extra = thread < head ? p[thread] : (p + tailStart)[thread - head];
        if constexpr (Two) extra2 = thread < head ? q[thread] : (q + tailStart)[thread - head];
    }

    // Body: Loads independent vectors (of each input) per step.
    unsigned long long v = thread;
    for (; v + (unsigned long long)(Loads - 1) * threads < nvec; v += (unsigned long long)Loads * threads) {
        Vector16<T> r[Loads];
        Vector16<U> r2[Two ? Loads : 1];
#pragma unroll
        for (int k = 0; k < Loads; ++k) {
            r[k] = loadVector<LoadReadOnlyNoL1>(body + (v + k * threads) * V);
            if constexpr (Two) r2[k] = loadVector<LoadReadOnlyNoL1>(body2 + (v + k * threads) * V);
        }
#pragma unroll
        for (int k = 0; k < Loads; ++k)
#pragma unroll
            for (int j = 0; j < V; ++j) {
                if constexpr (Two) acc = fold(acc, r[k].e[j], r2[k].e[j]);
                else acc = fold(acc, r[k].e[j]);
            }
    }
    // Last partial step: the remaining (< Loads) vectors, still issued together.
    if (v < nvec) {
        Vector16<T> r[Loads];
        Vector16<U> r2[Two ? Loads : 1];
#pragma unroll
        for (int k = 0; k < Loads; ++k)
            if (v + k * threads < nvec) {
                r[k] = loadVector<LoadReadOnlyNoL1>(body + (v + k * threads) * V);
                if constexpr (Two) r2[k] = loadVector<LoadReadOnlyNoL1>(body2 + (v + k * threads) * V);
            }
#pragma unroll
        for (int k = 0; k < Loads; ++k)
            if (v + k * threads < nvec)
#pragma unroll
                for (int j = 0; j < V; ++j) {
                    if constexpr (Two) acc = fold(acc, r[k].e[j], r2[k].e[j]);
                    else acc = fold(acc, r[k].e[j]);
                }
    }
    if (hasExtra) {
        if constexpr (Two) acc = fold(acc, extra, extra2);
        else acc = fold(acc, extra);
    }
    // Fewer threads than head + tail elements (at most 2 x 15, or n without vectors): the rest.
    for (unsigned long long e = thread + threads; e < nextra; e += threads)
        acc = one(acc, e < head ? e : tailStart + (e - head));
    return acc;
}

} // namespace detail

// Compile-time checks of the accumulation helpers: fn names the calls, name the element type parameter
// (T, of p; U, of q).
#define WARPKIT_DETAIL_CHECK_ACCUMULATE_TYPE(Ty, fn, name)                                            \
    static_assert(detail::Arith<Ty>::supported,                                                       \
                  fn ": element type " name " must be int, unsigned, long long, "                     \
                     "unsigned long long, float, double, __half or __nv_bfloat16 (reinterpret other " \
                     "data as one of these)")
#define WARPKIT_DETAIL_CHECK_ACCUMULATE(T, Loads, fn)                                                   \
    static_assert(Loads >= 1 && Loads <= 16,                                                            \
                  fn ": template parameter Loads (16-byte loads in flight per thread) must be between " \
                     "1 and 16");                                                                       \
    WARPKIT_DETAIL_CHECK_ACCUMULATE_TYPE(T, fn, "T")

/// Fold this thread's share of p[0 .. n) into `init` with `op` and return it.
/// Cooperating threads are numbered 0 .. threads-1 (`thread` is this one's number); each must
/// call with the same p, n and threads. Thread t owns vector t, t + threads, t + 2*threads, ...
/// of the 16-byte-aligned body, plus scalar head/tail elements; together the threads cover every
/// element exactly once. Any thread may call (no shuffles, no barriers); each gets its own part.
///   Loads: 16-byte loads in flight per thread per step (compile time, 1..16; 4 is a good start).
///   T:     int, unsigned, long long, unsigned long long, float, double, __half, __nv_bfloat16.
///   init:  op's identity (0 for Sum, lowest for Max); a thread that owns nothing returns it.
///          Its type Acc is the accumulator: pass 0LL to sum int in 64 bits, 0.0 to sum float
///          in double.
///   op:    called as acc = op(acc, x), associative and commutative (shares interleave). For a
///          scalar Acc, x is the element converted to Acc, so Sum / Max / Min work directly;
///          for a struct Acc, x is the element in its arithmetic type (float for 16-bit floats),
///          so write an operator with an (Acc, element) overload. To fold a function of each
///          element (a square, an absolute value), use threadTransformAccumulate, not an op that
///          squares its second operand: the partials are later combined with the same op.
template <int Loads = 4, typename T, typename Acc, typename Op>
WARPKIT_DEVICE Acc threadAccumulate(const T* p, unsigned long long n, Acc init, Op op,
                                    unsigned long long thread, unsigned long long threads) {
    WARPKIT_DETAIL_CHECK_ACCUMULATE(T, Loads, "threadAccumulate/gridAccumulate");
    if constexpr (Loads >= 1 && Loads <= 16 && detail::Arith<T>::supported)
        return detail::threadFold<Loads, false>(
            p, p, n, init, [op](Acc a, T x) { return op(a, detail::widen<Acc>(x)); }, thread, threads);
    else return init;
}

/// Fold transform(p[i]) over this thread's share with `op`: acc = op(acc, Acc(transform(x))),
/// x the element as stored (T). The sum of squares: transform = x * x, op = Sum, init = 0.
/// Threads, Loads, T and init as threadAccumulate: each of the `threads` cooperating threads calls
/// with the same p, n and threads, and gets the partial value of its own share. transform: any
/// callable T -> (convertible to Acc); op: Acc op(Acc, Acc), associative and commutative (it also
/// combines the partials).
template <int Loads = 4, typename T, typename Acc, typename F, typename Op>
WARPKIT_DEVICE Acc threadTransformAccumulate(const T* p, unsigned long long n, Acc init, F transform, Op op,
                                             unsigned long long thread, unsigned long long threads) {
    WARPKIT_DETAIL_CHECK_ACCUMULATE(T, Loads, "threadTransformAccumulate/gridTransformAccumulate");
    if constexpr (Loads >= 1 && Loads <= 16 && detail::Arith<T>::supported)
        return detail::threadFold<Loads, false>(
            p, p, n, init, [=](Acc a, T x) { return op(a, static_cast<Acc>(transform(x))); }, thread, threads);
    else return init;
}

/// Two inputs: acc = op(acc, Acc(transform(p[i], q[i]))) over this thread's share of i in [0, n);
/// a dot product is transform = x * y, op = Sum. Vector loads when p and q share their offset
/// within 16 bytes and element size (two cudaMalloc'd arrays at the same offset); scalar loads
/// otherwise. U: a supported element type, as T. Each cooperating thread calls with the same p, q,
/// n and threads, and gets the partial value of its own share.
template <int Loads = 4, typename T, typename U, typename Acc, typename F, typename Op>
WARPKIT_DEVICE Acc threadTransformAccumulate(const T* p, const U* q, unsigned long long n, Acc init, F transform, Op op,
                                             unsigned long long thread, unsigned long long threads) {
    WARPKIT_DETAIL_CHECK_ACCUMULATE(T, Loads, "threadTransformAccumulate/gridTransformAccumulate");
    WARPKIT_DETAIL_CHECK_ACCUMULATE_TYPE(U, "threadTransformAccumulate/gridTransformAccumulate", "U (of q)");
    if constexpr (Loads >= 1 && Loads <= 16 && detail::Arith<T>::supported && detail::Arith<U>::supported)
        return detail::threadFold<Loads, true>(
            p, q, n, init, [=](Acc a, T x, U y) { return op(a, static_cast<Acc>(transform(x, y))); }, thread, threads);
    else return init;
}
#undef WARPKIT_DETAIL_CHECK_ACCUMULATE
#undef WARPKIT_DETAIL_CHECK_ACCUMULATE_TYPE

/// threadAccumulate over the whole 1-D grid: thread number blockIdx.x * blockDim.x +
/// threadIdx.x of gridDim.x * blockDim.x. Every thread of the grid must call it with the same
/// p and n; each gets the partial value of its own share (combine them with a block reduction).
template <int Loads = 4, typename T, typename Acc, typename Op>
WARPKIT_DEVICE Acc gridAccumulate(const T* p, unsigned long long n, Acc init, Op op) {
    return threadAccumulate<Loads>(p, n, init, op, (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x,
                                   (unsigned long long)gridDim.x * blockDim.x);
}
/// threadTransformAccumulate (one input) over the whole 1-D grid: every thread of the grid calls
/// with the same p and n; each gets the partial value of its own share.
template <int Loads = 4, typename T, typename Acc, typename F, typename Op>
WARPKIT_DEVICE Acc gridTransformAccumulate(const T* p, unsigned long long n, Acc init, F transform, Op op) {
    return threadTransformAccumulate<Loads>(p, n, init, transform, op,
                                            (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x,
                                            (unsigned long long)gridDim.x * blockDim.x);
}
/// threadTransformAccumulate (two inputs) over the whole 1-D grid: every thread of the grid calls
/// with the same p, q and n; each gets the partial value of its own share.
template <int Loads = 4, typename T, typename U, typename Acc, typename F, typename Op>
WARPKIT_DEVICE Acc gridTransformAccumulate(const T* p, const U* q, unsigned long long n, Acc init, F transform, Op op) {
    return threadTransformAccumulate<Loads>(p, q, n, init, transform, op,
                                            (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x,
                                            (unsigned long long)gridDim.x * blockDim.x);
}

/// Host: the number of blocks of `blockThreads` threads (and `dynamicSmemBytes` of dynamic shared
/// memory) that fill the current device once: resident blocks per SM x SM count, capped at
/// `maxBlocks` when it is > 0 (e.g. ceil(n / (blockThreads * vectorElems<T>())), so small inputs
/// do not launch idle blocks), and at least 1. Writes *blocks and returns cudaSuccess, or returns
/// the CUDA error and writes nothing: cudaErrorInvalidValue for a null `blocks` or blockThreads < 1;
/// for a block size the launch would refuse, the launch's own error, cudaErrorInvalidValue (as a
/// CUDA 13 launch on an H100 returns it): above the device's threads per block (1024) or above the
/// kernel's own limit (cudaFuncAttributes::maxThreadsPerBlock: its __launch_bounds__, or what its
/// registers allow); cudaErrorInvalidConfiguration when no block fits an SM (shared memory, say).
template <typename Kernel>
inline cudaError_t occupancyGridSize(int* blocks, Kernel kernel, int blockThreads,
                                     size_t dynamicSmemBytes = 0, long long maxBlocks = 0) {
    if (blocks == nullptr || blockThreads < 1) return cudaErrorInvalidValue;
    int device = 0, sms = 0, deviceThreads = 0, perSm = 0;
    cudaFuncAttributes attr;
    cudaError_t e = cudaGetDevice(&device);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&deviceThreads, cudaDevAttrMaxThreadsPerBlock, device);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&attr, kernel);
    if (e != cudaSuccess) return e;
    // The occupancy query does not hold the block against the kernel's own limit (it reports blocks
    // for 256 threads of a __launch_bounds__(128) kernel); the launch does, and so does this call.
    if (blockThreads > deviceThreads || blockThreads > attr.maxThreadsPerBlock) return cudaErrorInvalidValue;
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, blockThreads, dynamicSmemBytes);
    if (e != cudaSuccess) return e;
    if (perSm < 1) return cudaErrorInvalidConfiguration;
    long long b = (long long)perSm * sms;
    if (maxBlocks > 0 && b > maxBlocks) b = maxBlocks;
    *blocks = b < 1 ? 1 : (int)b;
    return cudaSuccess;
}

} // namespace warpkit
