// Tests of include/warpkit/warp/shuffle.cuh: warpShuffleIdx (broadcast and per-lane gather,
// negative and out-of-range sources), Up, Down, Xor and Rotate against a CPU model of the lanes at
// every width 1..32, with a 12-byte struct; 1-byte and 40-byte types at a few widths; a partial
// warp (lanes past the block's end) with the active mask.
#include "../common.cuh"
#include <warpkit/vote.cuh>
#include <vector>

struct S1 {
    unsigned char b;
};
struct S12 {
    int a, b, c;
};
struct S40 {
    int w[10];
};

template <typename T> __host__ __device__ T mk(int id) {
    T v;
    unsigned char* p = (unsigned char*)&v;
    for (unsigned i = 0; i < sizeof(T); ++i) p[i] = (unsigned char)(id * 7 + i * 13 + 1);
    return v;
}
template <typename T> static int idOf(const T& v) { return (int)((const unsigned char*)&v)[0]; }

// Per lane: 5 results (Idx gather, Up, Down, Xor, Rotate), each the T of some lane.
template <int W, typename T>
__global__ void k_shuffle(T* out, int gatherMul, int gatherAdd, unsigned delta, int xmask, int rot, int n) {
    const int t = threadIdx.x; // the block has n threads: lanes n..31 of the warp do not exist
    const unsigned mask = n >= 32 ? 0xffffffffu : (1u << n) - 1u;
    const T v = mk<T>(t);
    T* o = out + t * 5;
    o[0] = warpkit::warpShuffleIdx<W>(v, (int)warpkit::laneId() * gatherMul + gatherAdd, mask);
    o[1] = warpkit::warpShuffleUp<W>(v, delta, mask);
    o[2] = warpkit::warpShuffleDown<W>(v, delta, mask);
    o[3] = warpkit::warpShuffleXor<W>(v, xmask, mask);
    o[4] = warpkit::warpShuffleRotate<W>(v, rot, mask);
}

// CPU model: the source lane of each op, for lane l of a 32-lane warp with segments of W lanes.
static void model(int W, int l, int gm, int ga, unsigned delta, int xm, int rot, int src[5]) {
    const int start = l / W * W, p = l - start, len = 32 - start < W ? 32 - start : W;
    auto mod = [](int a, int m) {
        int r = a % m;
        return r < 0 ? r + m : r;
    };
    const bool pow2 = (W & (W - 1)) == 0;
    src[0] = start + mod(l * gm + ga, len);
    src[1] = p >= (int)delta ? l - (int)delta : l;
    src[2] = p + (int)delta < len ? l + (int)delta : l;
    const int q = p ^ (pow2 ? (xm & (W - 1)) : (xm & 31));
    src[3] = q < len ? start + q : l;
    src[4] = start + mod(p + rot, len);
}

template <int W, typename T> static void runWidth(wk_tally* tally, int n) {
    const int params[][5] = {
        {0, 0, 1, 1, 1}, {1, 3, 2, 3, -1}, {3, -1, 5, 7, 5}, {-1, 40, 0, 31, 33}, {5, 2, 31, 16, -7}};
    T* d = wk_alloc<T>(32 * 5);
    for (auto& pr : params) {
        wk_poison(d, 32 * 5);
        k_shuffle<W, T><<<1, n>>>(d, pr[0], pr[1], (unsigned)pr[2], pr[3], pr[4], n);
        WK_LAUNCHED();
        std::vector<T> h(32 * 5);
        wk_download(h.data(), d, h.size());
        for (int l = 0; l < n; ++l) {
            int src[5];
            model(W, l, pr[0], pr[1], (unsigned)pr[2], pr[3], pr[4], src);
            for (int k = 0; k < 5; ++k) {
                // Sources outside the calling lanes (partial warp) are undefined: skip them.
                if (src[k] >= n) continue;
                const T want = mk<T>(src[k]);
                wk_tally_check(tally, memcmp(&h[l * 5 + k], &want, sizeof(T)) == 0,
                               "W=%d size %zu n=%d op %d lane %d: got lane-id %d, want lane %d", W, sizeof(T), n, k, l,
                               idOf(h[l * 5 + k]), src[k]);
            }
        }
    }
    cudaFree(d);
}

template <int W> static void allWidths(wk_tally* tally) {
    if constexpr (W >= 1) {
        runWidth<W, S12>(tally, 32);
        allWidths<W - 1>(tally);
    }
}

Test(shuffle, every_width_struct12) {
    WK_REQUIRE_GPU();
    wk_tally tally = {};
    allWidths<32>(&tally);
    WK_TALLY_EXPECT(tally);
}

Test(shuffle, sizes_1_and_40_and_partial_warps) {
    WK_REQUIRE_GPU();
    wk_tally tally = {};
    runWidth<1, S1>(&tally, 32);
    runWidth<7, S1>(&tally, 32);
    runWidth<32, S1>(&tally, 32);
    runWidth<5, S40>(&tally, 32);
    runWidth<16, S40>(&tally, 32);
    runWidth<32, S40>(&tally, 32);
    runWidth<32, S12>(&tally, 19); // partial warp: lanes 19..31 absent
    runWidth<8, S12>(&tally, 27);
    runWidth<6, S12>(&tally, 23);
    WK_TALLY_EXPECT(tally);
}

// The CPU model itself: a few hand-checked answers (runs without a GPU).
Test(shuffle, model_host) {
    int s[5];
    model(32, 5, 1, 3, 2, 3, -1, s); // gather 8, up 3, down 7, xor 6, rotate 4
    cr_expect(s[0] == 8 && s[1] == 3 && s[2] == 7 && s[3] == 6 && s[4] == 4);
    model(7, 29, 0, -1, 2, 7, 3, s); // short segment 28..31 (len 4), position 1
    cr_expect(s[0] == 31 && s[1] == 29 && s[2] == 31 && s[3] == 29 && s[4] == 28, "%d %d %d %d %d", s[0], s[1], s[2],
              s[3], s[4]);
    model(16, 20, 0, 0, 5, 16, 0, s); // pow2 xor ignores bits >= Width
    cr_expect(s[3] == 20 && s[1] == 20);
}
