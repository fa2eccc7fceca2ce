// tests/detail/philox.cu: detail/philox.cuh, the Philox4x32-10 generator behind rowSample.
//  - known answers (no GPU needed): Random123's vector for counter 0, key 0, and the first four
//    floats of cuRAND's Philox host generator (curandGenerateUniform, seed 0x123456789abcdef);
//  - the device gives the host's bits for every (seed, stream, draw) of a sweep.
#include "../common.cuh"
#include <warpkit/detail/philox.cuh>

using warpkit::detail::philox4x32;
using warpkit::detail::philoxUniform;
using warpkit::detail::PhiloxWords;

Test(philox, known_answers) {
    const PhiloxWords z = philox4x32(PhiloxWords{0, 0, 0, 0}, 0, 0);
    cr_expect(z.x == 0x6627e8d5u && z.y == 0xe169c58du && z.z == 0xbc57ac4cu && z.w == 0x9b00dbd8u,
              "philox4x32(0, 0) = %08x %08x %08x %08x", z.x, z.y, z.z, z.w);
    const float curand[4] = {0x1.70a044p-1f, 0x1.8b196p-1f, 0x1.4a7a02p-4f, 0x1.ea14p-2f};
    for (int i = 0; i < 4; ++i) {
        const float u = philoxUniform(0x123456789abcdefULL, 0, i);
        cr_expect(u == curand[i], "draw %d: %a, cuRAND %a", i, u, curand[i]);
    }
}

__global__ void k_draws(float* out, const unsigned long long* seeds, int n) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n)
        out[t] = philoxUniform(seeds[t % 3], (unsigned long long)t * 7919ULL, (unsigned long long)t * 3ULL + t % 5);
}

Test(philox, device_matches_host) {
    WK_REQUIRE_GPU();
    const int n = 4099;
    const unsigned long long seeds[3] = {0, 42, 0xfedcba9876543210ULL};
    unsigned long long* ds = wk_alloc<unsigned long long>(3);
    float* dout = wk_alloc<float>(n);
    wk_upload(ds, seeds, 3);
    wk_poison(dout, n);
    k_draws<<<(n + 127) / 128, 128>>>(dout, ds, n);
    WK_LAUNCHED();
    std::vector<float> got(n);
    wk_download(got.data(), dout, n);
    int bad = 0;
    for (int t = 0; t < n; ++t) {
        const float want =
            philoxUniform(seeds[t % 3], (unsigned long long)t * 7919ULL, (unsigned long long)t * 3ULL + t % 5);
        if (!(got[t] == want) && bad++ == 0) cr_expect(false, "draw %d: device %a, host %a", t, got[t], want);
        if (!(want > 0.f && want <= 1.f) && bad++ == 0) cr_expect(false, "draw %d = %a is outside (0, 1]", t, want);
    }
    cr_expect(bad == 0, "%d of %d draws wrong", bad, n);
    cudaFree(ds);
    cudaFree(dout);
}
