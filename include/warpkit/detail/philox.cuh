// warpkit/detail/philox.cuh: the Philox4x32-10 counter-based generator (Salmon, Moraes, Dror and
// Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC 2011), the one cuRAND's
// curandStatePhilox4_32_10_t runs, as a pure function of (counter, key): no state, so a draw depends
// only on its inputs, on any launch shape. Host and device (the host form serves tests).
//
//   philox4x32(c, k)             the four 32-bit words of counter c under key k (10 rounds)
//   philoxUniform(seed, sub, i)  the i-th draw of stream (seed, sub) in (0, 1], as curand_uniform
//                                maps cuRAND's Philox word i of curand_init(seed, sub, 0)
#pragma once

#include "config.cuh"

namespace warpkit {
namespace detail {

struct PhiloxWords {
    unsigned x, y, z, w;
};

WARPKIT_HD unsigned philoxMulHi(unsigned a, unsigned b) {
#ifdef __CUDA_ARCH__
    return __umulhi(a, b);
#else
    return (unsigned)(((unsigned long long)a * b) >> 32);
#endif
}

/// The 10-round Philox4x32 bijection of counter c under key (k0, k1).
WARPKIT_HD PhiloxWords philox4x32(PhiloxWords c, unsigned k0, unsigned k1) {
    const unsigned M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
    for (int round = 0; round < 10; ++round) {
        const unsigned hi0 = philoxMulHi(M0, c.x), lo0 = M0 * c.x;
        const unsigned hi1 = philoxMulHi(M1, c.z), lo1 = M1 * c.z;
        c = PhiloxWords{hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0};
        k0 += W0;
        k1 += W1;
    }
    return c;
}

/// Draw i of stream (seed, sub) in (0, 1]: word i % 4 of counter (i / 4, sub) under key seed, as
/// x * 2^-32 + 2^-33 in float (cuRAND's curand_uniform of the same word).
WARPKIT_HD float philoxUniform(unsigned long long seed, unsigned long long sub, unsigned long long i) {
    const unsigned long long q = i / 4;
    const PhiloxWords r =
        philox4x32(PhiloxWords{(unsigned)q, (unsigned)(q >> 32), (unsigned)sub, (unsigned)(sub >> 32)}, (unsigned)seed,
                   (unsigned)(seed >> 32));
    // Selects rather than an indexed array, which would live in local memory.
    const unsigned j = (unsigned)(i % 4);
    const unsigned word = j < 2 ? (j == 0 ? r.x : r.y) : (j == 2 ? r.z : r.w);
    return word * 2.3283064365386963e-10f + 1.1641532182693481e-10f;
}

} // namespace detail
} // namespace warpkit
