// warpkit/thread/vector.cuh: thread-level vector I/O. 16-byte loads and stores of any element
// type, the split of a run of elements at any address into a scalar head, a body of whole 16-byte
// vectors and a scalar tail, and register-array forms that spread a run over cooperating threads.
//
// Why. A 16-byte access moves 4 floats or 8 halves in one instruction; a kernel that falls back to
// element-by-element access whenever a row is not 16-byte aligned (a row length that is not a
// multiple of 8 halves, say) loses up to half its bandwidth. Here any run gets 16-byte accesses for
// its aligned body, and only the at most 2 x (16 / sizeof(T) - 1) elements around it are scalar.
//
//   vectorElems<T>()                 elements of T in 16 bytes (4 float, 8 __half, 2 double)
//   Vector16<T>                      16 bytes of T, 16-byte aligned
//   loadVector<Hint>(p)              one 16-byte load (p must be 16-byte aligned)
//   storeVector<Hint>(p, v)          one 16-byte store (p must be 16-byte aligned)
//   loadScalar<Hint>(p), storeScalar<Hint>(p, x)   one element, with the same cache hints
//   vectorSplit(p, n)                {head, tail, vectors} of the run p[0 .. n)
//   loadVectorAt / storeVectorAt     16 bytes' worth at p: one access when aligned, else element-wise
//   loadShare<C, E>(v, p, split, t, G, fill)   thread t of G: its share of the run, in registers
//   storeShare<C, E>(q, split, v, t, G)         the same share written back (any alignment of q)
//
// Element types: any T whose size divides 16 (1, 2, 4, 8 or 16 bytes), such as float, __half,
// __nv_bfloat16, int, double. Nothing outside [p, p + n) is ever read or written.
//
// Cache hints (template parameter Hint):
//   LoadDefault     ld.global: cached in L1 and L2
//   LoadReadOnly    ld.global.nc: the read-only path; only for data no thread writes during the kernel
//   LoadStreaming   ld.global.cs: evict-first, for data read once
//   LoadL2Only      ld.global.cg: cached in L2, not L1: data read once, or written by other blocks of
//                   the running kernel (after their __threadfence), which a stale L1 line could hide
//   LoadReadOnlyEvictFirst  ld.global.nc with an L2 evict-first cache policy (sm_80+; sm_75: plain
//                   ld.global.nc): read-only data read once, whose L2 lines go before others'
//   LoadReadOnlyNoL1  ld.global.nc.L1::no_allocate: read-only data this SM reads once (a streamed
//                   fold): its lines take no L1 space, which the loads still in flight keep
//   StoreDefault    st.global
//   StoreStreaming  st.global.cs: evict-first, for data not read again soon
#pragma once

#include "../detail/types.cuh"

namespace warpkit {

/// Elements of T in one 16-byte vector (4 float/int, 2 double, 8 __half/__nv_bfloat16). Host or device.
template <typename T> WARPKIT_HD constexpr int vectorElems() { return (int)(16 / sizeof(T)); }

/// Cache hints for loads (see the header comment).
enum LoadHint {
    LoadDefault = 0,
    LoadReadOnly = 1,
    LoadStreaming = 2,
    LoadL2Only = 3,
    LoadReadOnlyEvictFirst = 4,
    LoadReadOnlyNoL1 = 5
};
/// Cache hints for stores (see the header comment).
enum StoreHint { StoreDefault = 0, StoreStreaming = 1 };

/// 16 bytes of T (vectorElems<T>() elements), aligned as one vector access needs.
template <typename T> struct alignas(16) Vector16 {
    T e[16 / sizeof(T)];
};

#define WARPKIT_CHECK_VECTOR_TYPE(T, fn)                                                  \
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8 || \
                      sizeof(T) == 16,                                                    \
                  fn ": element type T must be 1, 2, 4, 8 or 16 bytes (its size must divide 16)")

namespace detail {

template <int Bytes> struct RawWord;
template <> struct RawWord<1> { using type = unsigned char; };
template <> struct RawWord<2> { using type = unsigned short; };
template <> struct RawWord<4> { using type = unsigned; };
template <> struct RawWord<8> { using type = unsigned long long; };
template <> struct RawWord<16> { using type = uint4; };

#if WARPKIT_ARCH >= 800
/// An L2 cache policy that makes the lines a load brings in the first to be evicted (sm_80+).
WARPKIT_DEVICE unsigned long long l2EvictFirstPolicy() {
    unsigned long long q;
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(q));
    return q;
}
/// One read-only load of W with L2 policy q (ld.global.nc.L2::cache_hint).
WARPKIT_DEVICE uint4 loadNcPolicy(const uint4* p, unsigned long long q) {
    uint4 w;
    asm("ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
        : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w)
        : "l"(p), "l"(q));
    return w;
}
WARPKIT_DEVICE unsigned long long loadNcPolicy(const unsigned long long* p, unsigned long long q) {
    unsigned long long w;
    asm("ld.global.nc.L2::cache_hint.u64 %0, [%1], %2;" : "=l"(w) : "l"(p), "l"(q));
    return w;
}
WARPKIT_DEVICE unsigned loadNcPolicy(const unsigned* p, unsigned long long q) {
    unsigned w;
    asm("ld.global.nc.L2::cache_hint.u32 %0, [%1], %2;" : "=r"(w) : "l"(p), "l"(q));
    return w;
}
WARPKIT_DEVICE unsigned short loadNcPolicy(const unsigned short* p, unsigned long long q) {
    unsigned short w;
    asm("ld.global.nc.L2::cache_hint.u16 %0, [%1], %2;" : "=h"(w) : "l"(p), "l"(q));
    return w;
}
WARPKIT_DEVICE unsigned char loadNcPolicy(const unsigned char* p, unsigned long long q) {
    unsigned short w;
    asm("ld.global.nc.L2::cache_hint.u8 %0, [%1], %2;" : "=h"(w) : "l"(p), "l"(q));
    return (unsigned char)w;
}
#endif

/// One read-only load that allocates no L1 line (ld.global.nc.L1::no_allocate).
WARPKIT_DEVICE uint4 loadNcNoL1(const uint4* p) {
    uint4 w;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w)
        : "l"(p));
    return w;
}
WARPKIT_DEVICE unsigned long long loadNcNoL1(const unsigned long long* p) {
    unsigned long long w;
    asm("ld.global.nc.L1::no_allocate.u64 %0, [%1];" : "=l"(w) : "l"(p));
    return w;
}
WARPKIT_DEVICE unsigned loadNcNoL1(const unsigned* p) {
    unsigned w;
    asm("ld.global.nc.L1::no_allocate.u32 %0, [%1];" : "=r"(w) : "l"(p));
    return w;
}
WARPKIT_DEVICE unsigned short loadNcNoL1(const unsigned short* p) {
    unsigned short w;
    asm("ld.global.nc.L1::no_allocate.u16 %0, [%1];" : "=h"(w) : "l"(p));
    return w;
}
WARPKIT_DEVICE unsigned char loadNcNoL1(const unsigned char* p) {
    unsigned short w;
    asm("ld.global.nc.L1::no_allocate.u8 %0, [%1];" : "=h"(w) : "l"(p));
    return (unsigned char)w;
}

template <int Hint, typename W> WARPKIT_DEVICE W loadWord(const W* p) {
    if constexpr (Hint == LoadReadOnly) return __ldg(p);
    else if constexpr (Hint == LoadReadOnlyEvictFirst) {
#if WARPKIT_ARCH >= 800
        return loadNcPolicy(p, l2EvictFirstPolicy()); // ptxas folds the policies into one uniform register
#else
        return __ldg(p);
#endif
    } else if constexpr (Hint == LoadReadOnlyNoL1) return loadNcNoL1(p);
    else if constexpr (Hint == LoadStreaming) return __ldcs(p);
    else if constexpr (Hint == LoadL2Only) return __ldcg(p);
    else return *p;
}
template <int Hint, typename W> WARPKIT_DEVICE void storeWord(W* p, W w) {
    if constexpr (Hint == StoreStreaming) __stcs(p, w);
    else *p = w;
}

} // namespace detail

/// One 16-byte load from p, which must be 16-byte aligned. Any thread, alone.
template <int Hint = LoadDefault, typename T> WARPKIT_DEVICE Vector16<T> loadVector(const T* p) {
    WARPKIT_CHECK_VECTOR_TYPE(T, "loadVector");
    WARPKIT_DEBUG_CHECK(((size_t)p & 15) == 0, "loadVector: p must be 16-byte aligned");
    const uint4 w = detail::loadWord<Hint>(reinterpret_cast<const uint4*>(p));
    Vector16<T> v;
    __builtin_memcpy(&v, &w, 16);
    return v;
}

/// One 16-byte store to p, which must be 16-byte aligned. Any thread, alone.
template <int Hint = StoreDefault, typename T> WARPKIT_DEVICE void storeVector(T* p, const Vector16<T>& v) {
    WARPKIT_CHECK_VECTOR_TYPE(T, "storeVector");
    WARPKIT_DEBUG_CHECK(((size_t)p & 15) == 0, "storeVector: p must be 16-byte aligned");
    uint4 w;
    __builtin_memcpy(&w, &v, 16);
    detail::storeWord<Hint>(reinterpret_cast<uint4*>(p), w);
}

/// One element from p (aligned as T), with a load hint. Any thread, alone.
template <int Hint = LoadDefault, typename T> WARPKIT_DEVICE T loadScalar(const T* p) {
    WARPKIT_CHECK_VECTOR_TYPE(T, "loadScalar");
    using W = typename detail::RawWord<(int)sizeof(T)>::type;
    const W w = detail::loadWord<Hint>(reinterpret_cast<const W*>(p));
    T x;
    __builtin_memcpy(&x, &w, sizeof(T));
    return x;
}

/// One element to p (aligned as T), with a store hint. Any thread, alone.
template <int Hint = StoreDefault, typename T> WARPKIT_DEVICE void storeScalar(T* p, T x) {
    WARPKIT_CHECK_VECTOR_TYPE(T, "storeScalar");
    using W = typename detail::RawWord<(int)sizeof(T)>::type;
    W w;
    __builtin_memcpy(&w, &x, sizeof(T));
    detail::storeWord<Hint>(reinterpret_cast<W*>(p), w);
}

/// 16 bytes' worth of elements at p: one 16-byte load when `vec` (p 16-byte aligned), else one
/// element at a time (p aligned as T). Any thread, alone.
template <int Hint = LoadDefault, typename T> WARPKIT_DEVICE Vector16<T> loadVectorAt(const T* p, bool vec) {
    if (vec) return loadVector<Hint>(p);
    Vector16<T> v;
#pragma unroll
    for (int k = 0; k < vectorElems<T>(); ++k) v.e[k] = loadScalar<Hint>(p + k);
    return v;
}

/// Stores 16 bytes' worth of elements at p: one 16-byte store when `vec` (p 16-byte aligned),
/// else one element at a time. Any thread, alone.
template <int Hint = StoreDefault, typename T> WARPKIT_DEVICE void storeVectorAt(T* p, const Vector16<T>& v, bool vec) {
    if (vec) {
        storeVector<Hint>(p, v);
    } else {
#pragma unroll
        for (int k = 0; k < vectorElems<T>(); ++k) storeScalar<Hint>(p + k, v.e[k]);
    }
}

/// How the run p[0 .. n) splits into 16-byte accesses: `head` elements before the first 16-byte
/// boundary (0 when p is aligned; all n when the run ends before it), then `vectors` whole
/// 16-byte vectors, then `tail` elements. head + vectors * vectorElems<T>() + tail == n, and
/// head, tail < vectorElems<T>().
struct VectorSplit {
    int head;
    int tail;
    long long vectors;
};

/// The split of p[0 .. n) (n >= 0). Host or device; any thread, alone.
template <typename T> WARPKIT_HD VectorSplit vectorSplit(const T* p, long long n) {
    constexpr int V = vectorElems<T>();
    const int mis = (int)((unsigned long long)(size_t)p & 15u);
    long long head = mis ? (long long)((16 - mis) / (int)sizeof(T)) : 0;
    head = head < n ? head : (n > 0 ? n : 0);
    const long long rest = (n > head ? n : head) - head;
    return VectorSplit{(int)head, (int)(rest % V), rest / V};
}

namespace detail {

/// Element index (in the run) of extra slot e: head elements first, then the tail. I: the index
/// type (int for runs shorter than 2^31 elements: cheaper arithmetic).
template <typename I = long long> WARPKIT_DEVICE I extraIndex(const VectorSplit& s, int e, int V) {
    return e < s.head ? (I)e : (I)s.head + (I)s.vectors * V + (I)(e - s.head);
}

} // namespace detail

/// Thread t of G cooperating threads loads its share of the run p[0 .. n), split by
/// s = vectorSplit(p, n), into registers:
///   v[c*V .. c*V + V)   body vector t + c*G (+ firstVector), for c = 0 .. C-1 (V = vectorElems<T>());
///   v[C*V + j]          extra element t + j*G, for j = 0 .. E-1: the head elements come first,
///                       then the tail (at most 2V - 2 of them, so E = 1 once G >= 2V - 2).
/// Slots with no element (past the body, or no extra left) get `fill` (-inf for a max or a softmax,
/// 0 for a sum). K must be C*V + E. `firstVector` and `vectorEnd` restrict this group to body
/// vectors [firstVector, min(vectorEnd, s.vectors)) (several groups sharing one run, e.g. the blocks
/// of a cluster); `extras` = false leaves the head and tail to another group.
/// Any threads may call, each alone; together the G threads cover their vectors once when
/// C*G >= their vector count, and the extras once when E*G >= head + tail.
template <int C, int E, int Hint = LoadDefault, typename T, int K, typename I = long long>
WARPKIT_DEVICE void loadShare(T (&v)[K], const T* p, const VectorSplit& s, int t, int G, T fill,
                              I firstVector = 0, I vectorEnd = -1, bool extras = true) {
    WARPKIT_CHECK_VECTOR_TYPE(T, "loadShare");
    static_assert(C >= 0 && E >= 0 && K == C * (int)(16 / sizeof(T)) + E,
                  "loadShare: the register array must hold K = C * vectorElems<T>() + E elements "
                  "(template parameters C: vectors per thread, E: head/tail slots per thread)");
    constexpr int V = vectorElems<T>();
    const I end = vectorEnd < 0 || vectorEnd > (I)s.vectors ? (I)s.vectors : vectorEnd;
    const T* body = p + s.head;
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const I i = firstVector + t + (I)c * G;
        if (i < end) {
            const Vector16<T> x = loadVector<Hint>(body + i * V);
#pragma unroll
            for (int k = 0; k < V; ++k) v[c * V + k] = x.e[k];
        } else {
#pragma unroll
            for (int k = 0; k < V; ++k) v[c * V + k] = fill;
        }
    }
#pragma unroll
    for (int j = 0; j < E; ++j) {
        const int e = t + j * G;
        v[C * V + j] = (extras && e < s.head + s.tail) ? loadScalar<Hint>(p + detail::extraIndex<I>(s, e, V)) : fill;
    }
}

/// Writes back the share loadShare<C, E>(v, p, s, t, G, ...) loaded, to the run q[0 .. n) (the
/// same n; q may be p, for in-place work, or any other address). When q has p's alignment modulo
/// 16 bytes the body goes out as 16-byte stores, else element by element (the same elements, so
/// correct for any q). Slots that held no element are not written. Same participation and
/// arguments as loadShare.
template <int C, int E, int Hint = StoreDefault, typename T, int K, typename I = long long>
WARPKIT_DEVICE void storeShare(T* q, const VectorSplit& s, const T (&v)[K], int t, int G, I firstVector = 0,
                               I vectorEnd = -1, bool extras = true) {
    WARPKIT_CHECK_VECTOR_TYPE(T, "storeShare");
    static_assert(C >= 0 && E >= 0 && K == C * (int)(16 / sizeof(T)) + E,
                  "storeShare: the register array must hold K = C * vectorElems<T>() + E elements "
                  "(template parameters C: vectors per thread, E: head/tail slots per thread)");
    constexpr int V = vectorElems<T>();
    const I end = vectorEnd < 0 || vectorEnd > (I)s.vectors ? (I)s.vectors : vectorEnd;
    T* body = q + s.head;
    const bool aligned = ((size_t)body & 15) == 0;
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const I i = firstVector + t + (I)c * G;
        if (i < end) {
            Vector16<T> x;
#pragma unroll
            for (int k = 0; k < V; ++k) x.e[k] = v[c * V + k];
            storeVectorAt<Hint>(body + i * V, x, aligned);
        }
    }
#pragma unroll
    for (int j = 0; j < E; ++j) {
        const int e = t + j * G;
        if (extras && e < s.head + s.tail) storeScalar<Hint>(q + detail::extraIndex<I>(s, e, V), v[C * V + j]);
    }
}

} // namespace warpkit
