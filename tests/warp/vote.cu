// Tests of include/warpkit/warp/vote.cuh: ids and lane masks in 1-D/2-D/3-D blocks, segment
// ballot/any/all/count at every dividing width with random predicates on full and partial warps,
// leader election, segment broadcast at dividing and non-dividing widths, and the aggregated
// atomics (uniqueness, density, lane order, agreement with plain atomicAdd; global and shared).
#include "../common.cuh"
#include <warpkit/vote.cuh>
#include <algorithm>
#include <utility>
#include <vector>

typedef struct { long checked, bad; char first[512]; } tally;
static void report(tally* t, const char* what) {
    cr_expect(t->bad == 0, "%s: %ld of %ld checks wrong (seed %#llx); first: %s", what, t->bad, t->checked,
              (unsigned long long)wk_seed(), t->first);
    cr_expect(t->checked > 0, "%s: nothing checked", what);
}
#define CHECK(t, cond, ...)                                                               \
    do {                                                                                  \
        (t)->checked++;                                                                   \
        if (!(cond) && (t)->bad++ == 0) snprintf((t)->first, sizeof (t)->first, __VA_ARGS__); \
    } while (0)

// ---- ids ------------------------------------------------------------------------------------------
// Each thread writes at its linear index: lane, warp, warps per block, lt, le, gt, ge.
__global__ void k_ids(unsigned* out, int n) {
    const unsigned t = warpkit::linearThreadId();
    const size_t o = (size_t)blockIdx.x * n + t;
    const size_t stride = (size_t)gridDim.x * n;
    out[o + 0 * stride] = warpkit::laneId();
    out[o + 1 * stride] = warpkit::warpId();
    out[o + 2 * stride] = warpkit::warpsPerBlock();
    out[o + 3 * stride] = warpkit::laneMaskLt();
    out[o + 4 * stride] = warpkit::laneMaskLe();
    out[o + 5 * stride] = warpkit::laneMaskGt();
    out[o + 6 * stride] = warpkit::laneMaskGe();
}

Test(vote, ids_and_lane_masks_1d_2d_3d) {
    WK_REQUIRE_GPU();
    tally t = {0, 0, ""};
    const dim3 shapes[] = {dim3(96), dim3(50), dim3(7, 5, 3), dim3(33, 2, 1), dim3(16, 4, 2), dim3(5, 3, 7)};
    for (dim3 b : shapes) {
        const int n = b.x * b.y * b.z, blocks = 3;
        const size_t stride = (size_t)blocks * n;
        unsigned* d = wk_alloc<unsigned>(7 * stride);
        wk_poison(d, 7 * stride);
        k_ids<<<blocks, b>>>(d, n);
        WK_LAUNCHED();
        std::vector<unsigned> h(7 * stride);
        wk_download(h.data(), d, h.size());
        for (int blk = 0; blk < blocks; ++blk)
            for (int i = 0; i < n; ++i) {
                const size_t o = (size_t)blk * n + i;
                const unsigned lane = i % 32, lt = (1u << lane) - 1u;
                CHECK(&t, h[o] == lane, "block %ux%ux%u thread %d: lane %u", b.x, b.y, b.z, i, h[o]);
                CHECK(&t, h[o + stride] == (unsigned)i / 32, "block %ux%ux%u thread %d: warp %u", b.x, b.y, b.z, i,
                      h[o + stride]);
                CHECK(&t, h[o + 2 * stride] == (unsigned)(n + 31) / 32, "block %ux%ux%u: warps %u", b.x, b.y, b.z,
                      h[o + 2 * stride]);
                CHECK(&t, h[o + 3 * stride] == lt, "lt of lane %u: %#x", lane, h[o + 3 * stride]);
                CHECK(&t, h[o + 4 * stride] == (lt | (1u << lane)), "le of lane %u: %#x", lane, h[o + 4 * stride]);
                CHECK(&t, h[o + 5 * stride] == ~(lt | (1u << lane)), "gt of lane %u: %#x", lane, h[o + 5 * stride]);
                CHECK(&t, h[o + 6 * stride] == ~lt, "ge of lane %u: %#x", lane, h[o + 6 * stride]);
            }
        WK_CUDA(cudaFree(d));
    }
    report(&t, "ids");
}

// ---- segment votes, leader, broadcast ------------------------------------------------------------------
// 2-D blocks (blockDim 16 x 6): the warp of a thread comes from its linear index. `live` holds one
// mask per warp; lanes outside it return at once (a partial warp) when Partial. The rest vote on
// pred[] and write ballot, any, all, count, leader flag, leader lane and a broadcast value.
template <int W, bool Partial>
__global__ void k_votes(const unsigned* pred, const unsigned* live, const int* src, unsigned* out, int n) {
    const unsigned t = warpkit::linearThreadId();
    const unsigned gw = blockIdx.x * warpkit::warpsPerBlock() + warpkit::warpId(); // global warp
    const unsigned g = gw * 32 + warpkit::laneId();
    if (Partial && !((live[gw] >> warpkit::laneId()) & 1u)) return;
    const unsigned mask = Partial ? __activemask() : WARPKIT_FULL_MASK;
    const bool p = pred[g] != 0;
    out[g + 0 * (size_t)n] = warpkit::segmentBallot<W>(p, mask);
    out[g + 1 * (size_t)n] = warpkit::segmentAny<W>(p, mask);
    out[g + 2 * (size_t)n] = warpkit::segmentAll<W>(p, mask);
    out[g + 3 * (size_t)n] = (unsigned)warpkit::segmentCount<W>(p, mask);
    out[g + 4 * (size_t)n] = warpkit::isLeader();
    out[g + 5 * (size_t)n] = (unsigned)warpkit::leaderLane();
    // Broadcast: full warps only (the source lane must take part).
    if (!Partial)
        out[g + 6 * (size_t)n] = warpkit::segmentBroadcast<W>(g * 7u + 1u, src[gw * 32 + warpkit::laneId() / W]);
    (void)t;
}

template <int W, bool Partial> static void run_votes(tally* t, wk_rng* r) {
    const int warps = wk_quick() ? 12 : 48, n = warps * 32; // blocks of 96 threads = 3 warps
    std::vector<unsigned> pred(n), live(warps), out(7 * (size_t)n);
    std::vector<int> src((size_t)warps * 32);
    for (int w = 0; w < warps; ++w) {
        const int style = w % 4; // predicate density: none, all, random, sparse
        for (int l = 0; l < 32; ++l)
            pred[w * 32 + l] = style == 0   ? 0
                               : style == 1 ? 1
                               : style == 2 ? (unsigned)(wk_next(r) & 1)
                                            : (wk_next(r) % 7 == 0);
        live[w] = Partial ? (unsigned)wk_next(r) | 1u : WARPKIT_FULL_MASK;
        if (Partial && w % 5 == 0) live[w] = 0x80000000u >> (w % 32); // single lane
        for (int k = 0; k < 32; ++k) src[w * 32 + k] = (int)wk_int(r, 0, W - 1);
    }
    unsigned *dpred = wk_alloc<unsigned>(n), *dlive = wk_alloc<unsigned>(warps),
             *dout = wk_alloc<unsigned>(7 * (size_t)n);
    int* dsrc = wk_alloc<int>(src.size());
    wk_upload(dpred, pred.data(), n);
    wk_upload(dlive, live.data(), warps);
    wk_upload(dsrc, src.data(), src.size());
    wk_poison(dout, 7 * (size_t)n);
    k_votes<W, Partial><<<warps / 3, dim3(16, 6)>>>(dpred, dlive, dsrc, dout, n);
    WK_LAUNCHED();
    wk_download(out.data(), dout, out.size());
    for (int w = 0; w < warps; ++w)
        for (int l = 0; l < 32; ++l) {
            if (!((live[w] >> l) & 1u)) continue;
            const int g = w * 32 + l, s0 = l & ~(W - 1);
            unsigned want = 0, alive = 0;
            for (int i = 0; i < W; ++i) {
                const bool in = (live[w] >> (s0 + i)) & 1u;
                if (in) alive |= 1u << i;
                if (in && pred[w * 32 + s0 + i]) want |= 1u << i;
            }
            const char* mode = Partial ? "partial" : "full";
            CHECK(t, out[g] == want, "W=%d %s warp %d lane %d: ballot %#x want %#x", W, mode, w, l, out[g], want);
            CHECK(t, out[g + n] == (want != 0), "W=%d %s warp %d lane %d: any %u", W, mode, w, l, out[g + n]);
            CHECK(t, out[g + 2 * n] == (want == alive), "W=%d %s warp %d lane %d: all %u", W, mode, w, l,
                  out[g + 2 * n]);
            CHECK(t, out[g + 3 * n] == (unsigned)__builtin_popcount(want), "W=%d %s warp %d lane %d: count %u", W, mode,
                  w, l, out[g + 3 * n]);
            const int lead = __builtin_ctz(live[w]);
            CHECK(t, out[g + 4 * n] == (unsigned)(l == lead), "W=%d %s warp %d lane %d: isLeader %u", W, mode, w, l,
                  out[g + 4 * n]);
            CHECK(t, out[g + 5 * n] == (unsigned)lead, "W=%d %s warp %d lane %d: leaderLane %u", W, mode, w, l,
                  out[g + 5 * n]);
            if (!Partial) {
                const unsigned b = (unsigned)(w * 32 + s0 + src[w * 32 + l / W]) * 7u + 1u;
                CHECK(t, out[g + 6 * n] == b, "W=%d warp %d lane %d: broadcast %u want %u", W, w, l, out[g + 6 * n], b);
            }
        }
    WK_CUDA(cudaFree(dpred)); WK_CUDA(cudaFree(dlive)); WK_CUDA(cudaFree(dout)); WK_CUDA(cudaFree(dsrc));
}

Test(vote, segment_votes_leader_broadcast) {
    WK_REQUIRE_GPU();
    tally t = {0, 0, ""};
    wk_rng r = wk_rng_make(31);
    run_votes<1, false>(&t, &r); run_votes<2, false>(&t, &r); run_votes<4, false>(&t, &r);
    run_votes<8, false>(&t, &r); run_votes<16, false>(&t, &r); run_votes<32, false>(&t, &r);
    run_votes<1, true>(&t, &r); run_votes<2, true>(&t, &r); run_votes<4, true>(&t, &r);
    run_votes<8, true>(&t, &r); run_votes<16, true>(&t, &r); run_votes<32, true>(&t, &r);
    report(&t, "segment votes");
}

// Broadcast at widths that do not divide 32 (the last segment is short; a source past its end
// reads its last lane). Lane l of warp w holds w*32+l; src[] gives one source per segment.
template <int W> __global__ void k_bcast(const int* src, int* out) {
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    out[g] = warpkit::segmentBroadcast<W>(g, src[(g >> 5) * 32 + (threadIdx.x & 31) / W]);
}
template <int W> static void run_bcast(tally* t, wk_rng* r) {
    const int warps = 16, n = warps * 32;
    std::vector<int> src(n), out(n);
    for (auto& s : src) s = (int)wk_int(r, 0, W - 1);
    int *dsrc = wk_alloc<int>(n), *dout = wk_alloc<int>(n);
    wk_upload(dsrc, src.data(), n);
    wk_poison(dout, n);
    k_bcast<W><<<warps / 2, 64>>>(dsrc, dout);
    WK_LAUNCHED();
    wk_download(out.data(), dout, n);
    for (int g = 0; g < n; ++g) {
        const int l = g % 32, s0 = l - l % W, end = std::min(s0 + W, 32) - 1;
        const int want = (g - l) + std::min(s0 + src[(g / 32) * 32 + l / W], end);
        CHECK(t, out[g] == want, "broadcast W=%d element %d: got %d want %d", W, g, out[g], want);
    }
    WK_CUDA(cudaFree(dsrc)); WK_CUDA(cudaFree(dout));
}
Test(vote, broadcast_any_width) {
    WK_REQUIRE_GPU();
    tally t = {0, 0, ""};
    wk_rng r = wk_rng_make(41);
    run_bcast<3>(&t, &r); run_bcast<5>(&t, &r); run_bcast<7>(&t, &r); run_bcast<12>(&t, &r);
    run_bcast<24>(&t, &r); run_bcast<31>(&t, &r); run_bcast<32>(&t, &r); run_bcast<16>(&t, &r);
    report(&t, "broadcast");
}

// ---- aggregated atomics ---------------------------------------------------------------------------------
// Thread g takes part when part[g]; it increments counter slot[g] (of `slots`) through the
// aggregated helper (Agg = 1: one counter, atomicAggInc; 2: atomicAggIncMatch; 0: plain
// atomicAdd; 3: atomicAggCountMatch(pointer); 4: atomicAggCountMatch(counters, 32-bit key)) and
// stores the old value it got (0 for the forms that return none). Shared: counters live in
// shared memory, one set per block, copied out at the end.
template <typename T, int Agg, bool Shared>
__global__ void k_atomic(const unsigned* part, const int* slot, T* counters, T* got, int slots) {
    __shared__ T sh[256];
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    T* base = counters;
    if (Shared) {
        for (int i = threadIdx.x; i < slots; i += blockDim.x) sh[i] = 0;
        __syncthreads();
        base = sh;
    }
    if (part[g]) {
        T* c = base + slot[g];
        if constexpr (Agg == 1) got[g] = warpkit::atomicAggInc(c);
        else if constexpr (Agg == 2) got[g] = warpkit::atomicAggIncMatch(c);
        else if constexpr (Agg == 3) { warpkit::atomicAggCountMatch(c); got[g] = 0; }
        else if constexpr (Agg == 4) { warpkit::atomicAggCountMatch(base, (unsigned)slot[g]); got[g] = 0; }
        else got[g] = atomicAdd(c, (T)1);
    }
    if (Shared) {
        __syncthreads();
        for (int i = threadIdx.x; i < slots; i += blockDim.x) counters[blockIdx.x * slots + i] = sh[i];
    }
}

template <typename T, int Agg, bool Shared> static void run_atomic(tally* t, wk_rng* r, int slots) {
    const int block = 128, blocks = wk_quick() ? 16 : 160, n = block * blocks;
    std::vector<unsigned> part(n);
    std::vector<int> slot(n);
    for (int g = 0; g < n; ++g) {
        const int style = (g / 32) % 4; // whole warp, random half, sparse, none
        part[g] = style == 0 ? 1 : style == 1 ? (unsigned)(wk_next(r) & 1) : style == 2 ? (wk_next(r) % 9 == 0) : 0;
        // Skewed addresses: half the lanes hit slot 0, the rest spread out.
        slot[g] = Agg == 1 ? 0 : (wk_next(r) & 1) ? 0 : (int)wk_int(r, 0, slots - 1);
    }
    const int nc = Shared ? slots * blocks : slots;
    unsigned* dpart = wk_alloc<unsigned>(n);
    int* dslot = wk_alloc<int>(n);
    T *dc = wk_alloc<T>(nc), *dgot = wk_alloc<T>(n);
    wk_upload(dpart, part.data(), n);
    wk_upload(dslot, slot.data(), n);
    WK_CUDA(cudaMemset(dc, 0, nc * sizeof(T)));
    wk_poison(dgot, n);
    k_atomic<T, Agg, Shared><<<blocks, block>>>(dpart, dslot, dc, dgot, slots);
    WK_LAUNCHED();
    std::vector<T> c(nc), got(n);
    wk_download(c.data(), dc, nc);
    wk_download(got.data(), dgot, n);
    const char* name = Agg == 1 ? "atomicAggInc" : Agg == 2 ? "atomicAggIncMatch" : Agg == 3 ? "atomicAggCountMatch"
                     : Agg == 4 ? "atomicAggCountMatch(key)" : "atomicAdd";
    if (Agg >= 3) { // no old values: only the final counts (as plain atomicAdd leaves them) can be checked
        for (int gi = 0; gi < (Shared ? blocks : 1); ++gi)
            for (int s = 0; s < slots; ++s) {
                unsigned long long want = 0;
                for (int g = 0; g < n; ++g) want += part[g] && slot[g] == s && (!Shared || g / block == gi);
                CHECK(t, (unsigned long long)c[gi * slots + s] == want,
                      "%s %s slots=%d counter %d final %llu want %llu", name, Shared ? "shared" : "global", slots, s,
                      (unsigned long long)c[gi * slots + s], want);
            }
        WK_CUDA(cudaFree(dpart)); WK_CUDA(cudaFree(dslot)); WK_CUDA(cudaFree(dc)); WK_CUDA(cudaFree(dgot));
        return;
    }
    // Every (counter instance) must hand out exactly 0..count-1, each once.
    const int groups = Shared ? blocks : 1;
    for (int gi = 0; gi < groups; ++gi)
        for (int s = 0; s < slots; ++s) {
            std::vector<unsigned long long> vals;
            for (int g = 0; g < n; ++g)
                if (part[g] && slot[g] == s && (!Shared || g / block == gi)) vals.push_back((unsigned long long)got[g]);
            std::sort(vals.begin(), vals.end());
            bool dense = true;
            for (size_t i = 0; i < vals.size(); ++i) dense &= vals[i] == i;
            CHECK(t, dense, "%s %s slots=%d counter %d: %zu values not distinct and dense 0..%zu", name,
                  Shared ? "shared" : "global", slots, s, vals.size(), vals.size() - 1);
            CHECK(t, (unsigned long long)c[gi * slots + s] == vals.size(), "%s counter %d final %llu want %zu", name, s,
                  (unsigned long long)c[gi * slots + s], vals.size());
        }
    // The aggregated forms hand out consecutive values in lane order within a warp (per address).
    if (Agg != 0)
        for (int w = 0; w < n / 32; ++w)
            for (int l = 0; l < 32; ++l) {
                const int g = w * 32 + l;
                if (!part[g]) continue;
                for (int m = l + 1; m < 32; ++m) {
                    const int h = w * 32 + m;
                    if (!part[h] || slot[h] != slot[g]) continue;
                    CHECK(t, got[h] == got[g] + 1, "%s warp %d: lanes %d and %d (same counter) got %llu and %llu", name,
                          w, l, m, (unsigned long long)got[g], (unsigned long long)got[h]);
                    break;
                }
            }
    WK_CUDA(cudaFree(dpart)); WK_CUDA(cudaFree(dslot)); WK_CUDA(cudaFree(dc)); WK_CUDA(cudaFree(dgot));
}

Test(vote, aggregated_atomics) {
    WK_REQUIRE_GPU();
    tally t = {0, 0, ""};
    wk_rng r = wk_rng_make(51);
    run_atomic<unsigned, 0, false>(&t, &r, 1);   // the plain atomicAdd baseline passes the same checks
    run_atomic<unsigned, 1, false>(&t, &r, 1);
    run_atomic<int, 1, true>(&t, &r, 1);
    run_atomic<unsigned long long, 1, false>(&t, &r, 1);
    run_atomic<unsigned, 0, false>(&t, &r, 7);
    run_atomic<unsigned, 2, false>(&t, &r, 7);
    run_atomic<int, 2, false>(&t, &r, 256);
    run_atomic<unsigned long long, 2, false>(&t, &r, 33);
    run_atomic<unsigned, 2, true>(&t, &r, 256);
    run_atomic<unsigned, 0, true>(&t, &r, 256);
    run_atomic<unsigned, 3, true>(&t, &r, 256);
    run_atomic<unsigned long long, 3, false>(&t, &r, 9);
    run_atomic<unsigned, 4, true>(&t, &r, 256);           // 32-bit key form: shared and global, all types
    run_atomic<int, 4, true>(&t, &r, 1);
    run_atomic<int, 4, false>(&t, &r, 7);
    run_atomic<unsigned long long, 4, false>(&t, &r, 33);
    run_atomic<unsigned, 4, false>(&t, &r, 256);
    report(&t, "aggregated atomics");
}
