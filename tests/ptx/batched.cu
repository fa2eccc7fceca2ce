// PTX shape of the batched warp reductions, the N-value block reductions and the Welford merges
// (sm_90). The batched reduction's lane-dependent choice of what each lane sends is a lop3 mux: with
// a plain select the compiler splits it into branches, each with its own copy of the shuffles
// (61 shuffles and 12 branches for 32 values instead of 31 and none).
// @arch sm_90
// @nolocal
// 32 values over 32 lanes: 16 + 8 + 4 + 2 + 1 shuffles, no branch.
// @expect wk_batched32_w32 == 31 shfl\.sync
// @expect wk_batched32_w32 == 0 bra
// 8 values: 4 + 2 + 1, then two butterfly steps; 2 values: 1 + 4; 64 values: 32 + 16 + 8 + 4 + 2.
// @expect wk_batched8_w32 == 9 shfl\.sync
// @expect wk_batched2_w32 == 5 shfl\.sync
// @expect wk_batched64_w32 == 62 shfl\.sync
// 16 values over 24 lanes: 16 to fold 8 lane pairs, 8 + 4 + 2 + 1 over the 16 partials, 1 to move.
// @expect wk_batched16_w24 == 32 shfl\.sync
// @expect wk_batched16_w24 == 0 bra
// A generic non-commutative operator costs the same shuffles per 32-bit word (a 2-word value here),
// and its ordered combine (operands chosen by an opaque mux) adds no branch either.
// @expect wk_batched_compose8_w8 == 14 shfl\.sync
// @expect wk_batched_compose8_w8 == 0 bra
// Two values over a 256-thread block: one barrier pair (entry + one), 5 + 3 + 2 shuffles, where two
// single-value reductions take 4 barriers and 16 shuffles.
// @expect wk_block_sum2_256 == 2 bar\.sync
// @expect wk_block_sum2_256 == 10 shfl\.sync
// @expect wk_block_sum2x1_256 == 4 bar\.sync
// @expect wk_block_sum2x1_256 == 16 shfl\.sync
// Welford (an ordered merge of three 32-bit words): the states slide down to lane 0 with shfl.down,
// no operand selects, then one broadcast: 5 x 3 + 3 shuffles. The merge's reciprocal is one
// rcp.approx (no division).
// @expect wk_warp_welford == 15 shfl\.sync\.down
// @expect wk_warp_welford == 3 shfl\.sync\.idx
// @expect wk_warp_welford == 0 shfl\.sync\.bfly
// @expect wk_warp_welford == 5 rcp\.approx\.ftz\.f32
// @expect wk_warp_welford == 0 div\.
// Block of 8 warps: the warp stage needs lane 0 only (no broadcast), the slot stage 3 steps and a
// broadcast: 15 + 9 + 3 shuffles, 5 + 3 merges, one barrier pair.
// @expect wk_block_welford_256 == 2 bar\.sync
// @expect wk_block_welford_256 == 27 shfl\.sync
// @expect wk_block_welford_256 == 8 rcp\.approx\.ftz\.f32
// A struct with a commutative-declared operator: butterflies, 5 + 3 steps of two words.
// @expect wk_block_pair_comm_256 == 16 shfl\.sync\.bfly
// @expect wk_block_pair_comm_256 == 2 bar\.sync
// A K-value update has no division and one reciprocal.
// @expect wk_welford_update8 == 1 rcp\.approx\.ftz\.f32
// @expect wk_welford_update8 == 0 div\.
#include <warpkit/reduce.cuh>
#include <warpkit/welford.cuh>

struct Affine { unsigned a, b; };
struct Compose {
    __device__ Affine operator()(Affine f, Affine g) const { return Affine{f.a * g.a, f.b * g.a + g.b}; }
};

template <int W, int K, typename T, typename F> __device__ void batched(const T* in, T* out, F f) {
    T v[K];
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] = in[k * 32 + threadIdx.x];
    f(v);
#pragma unroll
    for (int j = 0; j < (K + warpkit::warpBatchedLanes<W>() - 1) / warpkit::warpBatchedLanes<W>(); ++j)
        out[j * 32 + threadIdx.x] = v[j];
}
#define WK_BATCHED(NAME, W, K)                                                            \
    extern "C" __global__ void NAME(const float* in, float* out) {                       \
        batched<W, K>(in, out, [](float(&v)[K]) { warpkit::warpReduceBatchedSum<W>(v); }); \
    }
WK_BATCHED(wk_batched32_w32, 32, 32)
WK_BATCHED(wk_batched8_w32, 32, 8)
WK_BATCHED(wk_batched2_w32, 32, 2)
WK_BATCHED(wk_batched64_w32, 32, 64)
WK_BATCHED(wk_batched16_w24, 24, 16)
extern "C" __global__ void wk_batched_compose8_w8(const Affine* in, Affine* out) {
    batched<8, 8>(in, out, [](Affine(&v)[8]) { warpkit::warpReduceBatched<8>(v, Compose{}); });
}

extern "C" __global__ void wk_block_sum2_256(const float* in, float* out) {
    float v[2] = {in[threadIdx.x], in[threadIdx.x + 256]};
    warpkit::blockReduceSum<256>(v);
    out[threadIdx.x] = v[0];
    out[threadIdx.x + 256] = v[1];
}
extern "C" __global__ void wk_block_sum2x1_256(const float* in, float* out) {
    out[threadIdx.x] = warpkit::blockReduceSum<256>(in[threadIdx.x]);
    out[threadIdx.x + 256] = warpkit::blockReduceSum<256>(in[threadIdx.x + 256]);
}

extern "C" __global__ void wk_warp_welford(const warpkit::WelfordState* in, warpkit::WelfordState* out) {
    out[threadIdx.x] = warpkit::warpReduceWelford(in[threadIdx.x]);
}
extern "C" __global__ void wk_block_welford_256(const warpkit::WelfordState* in, warpkit::WelfordState* out) {
    out[threadIdx.x] = warpkit::blockReduceWelford<256>(in[threadIdx.x]);
}
struct Sum2 { float s, q; };
struct Sum2Comm {
    static constexpr bool commutative = true;
    __device__ Sum2 operator()(Sum2 a, Sum2 b) const { return Sum2{a.s + b.s, a.q + b.q}; }
};
extern "C" __global__ void wk_block_pair_comm_256(const Sum2* in, Sum2* out) {
    out[threadIdx.x] = warpkit::blockReduce<256>(in[threadIdx.x], Sum2Comm{});
}
extern "C" __global__ void wk_welford_update8(const float* in, warpkit::WelfordState* out) {
    float v[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = in[k * 256 + threadIdx.x];
    out[threadIdx.x] = warpkit::welfordUpdate(out[threadIdx.x], v);
}
