// warpkit/device/detail/segment_plan.cuh: the segment family's planner (device/segment.cuh).
// Internal: include warpkit/device/segment.cuh instead.
//
// A call over segments runs, on `stream`:
//   1. the group kernel: each warp takes a step of (segment, head) pairs at a time (grid-stride): 32
//      pairs, or under a plan with minStep < 32 (G1) fewer when the call has fewer than 32 pairs a
//      resident warp, spread evenly over the resident warps' steps (segmentStepPairs); a pair
//      of at most `longRows` rows is done by a lane group of G lanes (G the smallest power of two
//      giving at most `perLane` rows a lane, 32 at most: set by the pair's own length), a pair of
//      G = 1 by its own lane in place, the pairs of a wider G taken 32 / G at a time (only the
//      widths in use), each group folding its rows lane-strided and combining its lanes in lane
//      order (warpSegmentedReduce; the softmax of up to 16 heads instead holds a group's rows in
//      registers, a max and a sum by xor butterflies, one read: segment_softmax.cuh); longer pairs
//      are appended to a work list in the workspace (one atomicAdd a warp), with their chunks
//      counted (`chunkRows` rows a chunk); a warp step with long pairs that find no room (only
//      segments that overlap) is appended to a no-room list; the offsets load two steps ahead,
//      and a step starts its next step's rows toward L2;
//   then only when some segment can be long (items > longRows), 1b always where the plan has it:
//   1b. for a plan with `directRows` (rule G6: one head, reduce and log-sum-exp), in place of 1
//      and 1c: the direct kernel, a grid of one block of `longThreads` threads a segment, takes
//      every segment straight from the offsets: an empty one writes its empty value, one of up to
//      directRows <= chunkRows rows is folded in registers with a one-chunk pair's order (the same
//      bits as listed; the order depends on the length alone), a longer one is listed by its block
//      (one atomicAdd on each counter), or, finding no room (only segments that overlap), folded
//      by that block with the chunk kernels' order; when some segment can be past directRows
//      (items > directRows) a one-warp kernel clears the counters first (no memset: the direct
//      kernel is launched programmatically behind it), and stage 2 follows, else nothing more;
//      under rule G11 (a plan with directRows and `team`) the same with a team of `team` lanes a
//      segment in blocks of 64 threads (segmentDirectTeamKernel: the team's own order); under
//      rule G12 (a plan with a `page` too) a page of `page` segments a block, whose teams take the
//      page's non-empty segments in turn (segmentDirectPageKernel: G11's order for the team);
//   1c. the no-room kernel: each listed pair by a whole warp, with the chunk kernels' math (an
//      empty list, the usual case, costs one count read a warp on one block an SM);
//   2. the chunk kernel: blocks of `longThreads` threads over the listed chunks (grid-stride, the
//      next chunk's entry loaded ahead), each chunk's partial into the workspace; the last chunk of
//      a pair to finish folds the partials in chunk order; for one head and a one-pass algorithm of
//      4-byte elements other than a sum (sm_80+) the rows go through shared memory in pieces by
//      cp.async, three pieces ahead across the block's chunks, with the same folds
//      (segmentChunkStagedKernel; the sums keep the plain kernel, which measured faster for them);
//      on sm_90 the direct (after the clearing kernel), no-room and chunk kernels are launched
//      programmatically (placed while the kernel before runs, waiting for it in pdlWait only where
//      they need the list or the counters);
//   3. for the per-element outputs (softmax, its backward): the write kernel over the same chunks;
//   4. the softmax: a long segment of at most kSegBlockMaxElems elements (rows x heads) with 1, 2,
//      4, 8 or 16 heads is listed once instead of by chunks, and done by one block of the block
//      kernel, its run held in registers (segment_block.cuh); a longer one with those heads (the
//      plan's sliceGroup > 0) is cut into slices of one window each, which the same kernel's blocks
//      take in turn: a pass of per-head partials, merged in a fixed two-level tree (sliceGroup
//      slices a group), then a pass that writes (the slice tier, segment_slice.cuh).
//   1b'. for a plan with `laneRows` (rule G9: one head, reduce and log-sum-exp, the shortest
//      segments on average, and the softmax at means up to 5; any offsets), in place of 1, 1b and
//      1c: the lane kernel (segment_lane.cuh), a lane a segment of up to laneRows rows (the
//      softmax's short ones in registers, by a lane or, past mean 2, a group of lanes, with a warp
//      step's outputs staged in shared memory), the warp steps with longer ones recorded; then its rest kernel:
//      a warp a record, folding each segment of up to longRows rows and listing longer ones
//      (without room: folded by the warp with the chunk kernels' math); the clearing kernel first
//      and the rest kernel only when items > laneRows, stages 2 and 3 only when items > longRows;
//   1b''. for a plan with `team` (rule G10: the softmax of 1 or 4 heads, long on average), in place
//      of 1 to 3: the team kernel (segment_team.cuh), a team (a warp, a block of 64 or of 256
//      threads) a segment straight from the offsets, in registers up to four windows, longer ones
//      listed for stage 4 (the clearing kernel first, when a segment can be that long);
// Rule G5 replaces all of that for short segments on average (a reduction, one head, CSR
// offsets, items <= maxMean * segments): the flat pass of segment_flat.cuh, kernels over fixed
// tiles of the merge path of segment ends and elements, whatever the lengths' spread. Rule G7 does
// the same for the softmax (segment_flat_softmax.cuh: a tile writes its whole segments, a last
// kernel the elements of those that span tiles); in place (y == x) it runs its group-kernel
// fields, which are G2's. Rule G8 (the softmax with 2, 4 or 8 heads of 2- or 4-byte values)
// runs stage 1 by segments instead of pairs, a row of heads a vector access (segment_heads.cuh;
// perLane: the rows a lane holds), where x and y are aligned for it; the later stages as G3's.
// No host pass over the offsets and no host synchronisation: the host knows only the segment,
// head and item counts. The plan depends on the call kind, the element size and the heads; the
// workspace's room for listed pairs and chunks on the counts (device/segment.cuh, segSizes).
// The last chunk folds the partials in a fixed tree (segment_long.cuh, segmentChunkJoin), so the bits never
// depend on which block finished first.
//
// The plan is one host-only function over a constexpr rule table (kSegmentRules); each rule has
// an id (G1, G2, ...), and the measurements behind each live in docs/tuning.md under that id.
// tests/device/segment_plan.cu pins every answer in tests/device/segment_plan.golden and checks
// that each plan has a compiled kernel (segmentPlanCompiled).
#pragma once

namespace warpkit {
namespace detail {

/// What a segment call computes: a reduction (one value a pair, read-only), the log-sum-exp
/// (the same), the softmax or its backward (a value per element, so a second pass over long pairs).
enum SegmentKind { SegReduce = 0, SegLogSumExp = 1, SegSoftmax = 2, SegSoftmaxBackward = 3 };

/// The (group kernel, chunk kernels) block sizes the dispatcher has kernels for (segmentRun's
/// switch; segmentPlanCompiled).
struct SegmentLaunchShape {
    int threads, longThreads;
};
constexpr SegmentLaunchShape kSegmentShapes[] = {{256, 256}, {128, 128}};

struct SegmentPlan {
    int rule;             // index into kSegmentRules (its id: kSegmentRules[rule].id)
    int threads;          // group kernel block size
    int perLane;          // rows a lane of a group aims for (G follows); G9's softmax: rows a lane holds
    long long longRows;   // pairs longer than this go to the chunk kernels (G6: past directRows; this sizes the list)
    long long chunkRows;  // rows a chunk
    int longThreads;      // chunk kernels' block size
    bool flat;            // the flat pass (segment_flat.cuh) instead of all of the above
    int sliceGroup;       // the softmax's slice tier: slices merged a group (a power of two; 0: no slice tier)
    long long directRows; // one head, reduce / lse: pairs of longRows + 1 to this many rows direct (0: none)
    int minStep;          // the fewest pairs a group-kernel warp step takes (32: always 32; segmentStepPairs)
    bool byRows;          // the softmax's stage 1 by segments, a row a vector (segment_heads.cuh), x and y aligned
    int laneRows; // one head, reduce / lse / softmax: stage 1 by the lane kernel, a lane a pair of up to this many rows
    int team;     // the softmax: stage 1 by the team kernel (segment_team.cuh), a team of this many threads a segment
    int page;     // G12: the direct path's teams take pages of this many segments a block (0: a team a segment)
};

/// One rule: the first whose conditions hold gives the plan. Conditions: the call kind (a mask of
/// 1 << SegmentKind), the element size in bytes (a mask of 1 << size), heads in [minHeads, maxHeads],
/// for maxMean > 0: items <= maxMean * segments, and for the flat pass (laneRows 0) also CSR
/// offsets and items > 0 (with no items every segment is empty, which the group or lane kernel
/// writes in one launch where the flat pass takes three or four), and for
/// minMean > 0: items >= minMean * segments (long on average). sliceGroup applies to the softmax
/// only (the plan gives 0 for the other kinds); directRows to the one-pass kinds, reduce and
/// log-sum-exp, laneRows to those and the softmax (0 for the others). minStep: the fewest pairs a group-kernel warp
/// step may take (segmentStepPairs; 32 keeps every step at 32 pairs).
struct SegmentRule {
    const char* id;
    unsigned kinds;
    unsigned elemSizes;
    int minHeads, maxHeads;
    int threads, perLane;
    long long longRows, chunkRows;
    int longThreads;
    long long maxMean, minMean;
    int sliceGroup;
    long long directRows;
    int minStep;
    bool byRows;      // stage 1 by the heads kernel (segment_heads.cuh) where x and y allow its vector rows
    int laneRows = 0; // stage 1 by the lane kernel (segment_lane.cuh): a lane a pair of up to this many rows
    int team = 0;     // stage 1 by the team kernel (segment_team.cuh): a team of this many threads a segment
    int page = 0;     // the direct path's teams by pages of this many segments a block (segmentDirectPageKernel)
};

constexpr unsigned kSegAnyKind = 0xfu, kSegReadOnly = 1u << SegReduce | 1u << SegLogSumExp;
constexpr unsigned kSegWrites = 1u << SegSoftmax | 1u << SegSoftmaxBackward;
constexpr unsigned kSegAnySize = 1u << 2 | 1u << 4 | 1u << 8 | 1u << 16, kSegSmallSize = 1u << 2 | 1u << 4;

// perLane matches the fold's batch of 8 loads in flight (segment_fold.cuh, forRows). Long
// pairs are those a whole block serves better than one warp; a chunk holds several thousand
// elements, so the chunk partials stay a small part of the traffic. G6 runs no group kernel (its
// direct kernel takes every segment); its longRows only sizes the list's room (segSizes). G6's
// reductions of 16-bit values take chunks (and direct pairs) of 32768 rows: 64 KB, as fp32's 16384.
// G9 (the lane kernel) runs no group kernel either; its segments past laneRows go to its rest
// kernel, past longRows to the chunk kernels, so its list is G1's. It comes before G5 and ends
// lower for 4- and 8-byte reductions (the flat pass is faster from mean 16) than for 16-bit ones
// and the log-sum-exp (mean 32: past it most warp steps hold a segment for the rest kernel); the
// softmax's come before G7 and take means up to 5 (G7 is faster from mean 6): up to 2 the lean
// form (perLane 4: the rows a lane holds in registers, segment_lane.cuh), then the staged one.
// G10 (a team a segment, segment_team.cuh) takes the softmax of one head from mean 144 and of 4 heads
// from mean 192 (G2 or G8 below): one head a warp, from mean 1536 a block of 64, fp32 from 3072 a
// block of 256; 4 heads a block of 64, fp32 from mean 1536 a block of 256.
// G11 (reduce and log-sum-exp of 2- and 4-byte values, one head, medium on average: from mean 96
// to G6, which takes 4-byte values from mean 4608 and 16-bit ones from 2048) runs G6's direct path
// with teams of 8, 16 or 32 lanes a segment (its `team`), the team growing with the mean (about 28
// fp32 or 48 16-bit rows a lane at the switch); a team folds up to 128 rows a lane (directRows; a
// warp of 4-byte values 256), longer segments are listed. Below mean 96 a team a segment costs
// more than the bytes where most segments are empty (the giant among 10^6 empty ones: mean 67), so
// G12 (from mean 32; 4-byte reductions over CSR offsets from G5's 64) runs the same teams of 8
// over pages of 64 segments a block: a page of empty segments costs one block, not eight. G5 keeps
// 4-byte reductions to mean 64 for skewed lengths (power-law: the flat pass 0.64, pages 0.57), not
// 16-bit ones (the pages are faster on every distribution measured).
constexpr SegmentRule kSegmentRules[] = {
    // id   kinds            sizes          heads   thr  perLane longRows chunkRows longThr maxMean minMean slc direct
    // step byRows laneRows
    {"G9", 1u << SegReduce, 1u << 2, 1, 1, 256, 8, 1024, 16384, 256, 32, 0, 0, 0, 32, false,
     64}, // short on average, 16-bit: a lane a segment
    {"G9", kSegReadOnly, kSegAnySize, 1, 1, 256, 8, 1024, 16384, 256, 8, 0, 0, 0, 32, false,
     64}, // short on average: a lane a segment
    {"G9", 1u << SegLogSumExp, kSegSmallSize, 1, 1, 256, 8, 1024, 16384, 256, 32, 0, 0, 0, 32, false,
     64}, // log-sum-exp, short on average: a lane a segment
    {"G5", 1u << SegReduce, 1u << 4, 1, 1, 256, 8, 1024, 16384, 256, 64, 0, 0, 0, 32,
     false}, // short on average, 4-byte values: flat
    {"G9", 1u << SegSoftmax, kSegSmallSize, 1, 1, 256, 4, 1024, 8192, 256, 2, 0, 0, 0, 32, false,
     64}, // short on average (up to 2), softmax: a lane a segment, 4 rows in registers (lean)
    {"G9", 1u << SegSoftmax, kSegSmallSize, 1, 1, 256, 8, 1024, 8192, 256, 5, 2, 0, 0, 32, false,
     64}, // short on average (2 to 5), softmax: a lane a segment, lane groups, staged
    {"G7", 1u << SegSoftmax, kSegSmallSize, 1, 1, 256, 8, 1024, 8192, 256, 64, 0, 32, 0, 32,
     false}, // short on average: flat
    {"G10", 1u << SegSoftmax, 1u << 4, 1, 1, 256, 8, 1024, 8192, 256, 0, 3072, 32, 0, 32, false, 0,
     256}, // long on average, softmax, fp32: a block of 256 a segment
    {"G10", 1u << SegSoftmax, kSegSmallSize, 1, 1, 256, 8, 1024, 8192, 256, 0, 1536, 32, 0, 32, false, 0,
     64}, // a block of 64 a segment
    {"G10", 1u << SegSoftmax, kSegSmallSize, 1, 1, 256, 8, 1024, 8192, 256, 0, 144, 32, 0, 32, false, 0,
     32}, // a warp a segment
    {"G10", 1u << SegSoftmax, 1u << 4, 4, 4, 256, 8, 1024, 2048, 256, 0, 1536, 32, 0, 32, false, 0,
     256}, // 4 heads, fp32: a block of 256 a segment
    {"G10", 1u << SegSoftmax, kSegSmallSize, 4, 4, 256, 8, 1024, 2048, 256, 0, 192, 32, 0, 32, false, 0,
     64}, // 4 heads: a block of 64 a segment
    {"G6", 1u << SegReduce, 1u << 2, 1, 1, 256, 8, 256, 32768, 256, 0, 2048, 0, 32768, 32,
     false}, // long on average, 16-bit reduce: chunks of 64 KB
    {"G6", kSegReadOnly, 1u << 4, 1, 1, 256, 8, 256, 16384, 256, 0, 4608, 0, 16384, 32,
     false}, // long on average, 4-byte values: reduce, lse
    {"G6", kSegReadOnly, kSegAnySize & ~(1u << 4), 1, 1, 256, 8, 256, 16384, 256, 0, 2048, 0, 16384, 32,
     false}, // long on average: reduce, lse
    {"G11", kSegReadOnly, 1u << 4, 1, 1, 256, 8, 256, 16384, 256, 0, 448, 0, 8192, 32, false, 0,
     32}, // medium on average, 4-byte values: a warp a segment
    {"G11", kSegReadOnly, 1u << 4, 1, 1, 256, 8, 256, 16384, 256, 0, 224, 0, 2048, 32, false, 0,
     16}, // 16 lanes a segment
    {"G11", kSegReadOnly, 1u << 2, 1, 1, 256, 8, 256, 32768, 256, 0, 768, 0, 4096, 32, false, 0,
     32}, // 16-bit values: a warp a segment
    {"G11", kSegReadOnly, 1u << 2, 1, 1, 256, 8, 256, 32768, 256, 0, 384, 0, 2048, 32, false, 0,
     16}, // 16 lanes a segment
    {"G11", kSegReadOnly, kSegSmallSize, 1, 1, 256, 8, 256, 16384, 256, 0, 96, 0, 1024, 32, false, 0,
     8}, // 8 lanes a segment
    {"G12", kSegReadOnly, kSegSmallSize, 1, 1, 256, 8, 256, 16384, 256, 0, 32, 0, 1024, 32, false, 0, 8,
     64}, // short to medium on average: pages of 64 segments, 8 lanes a segment
    {"G1", kSegReadOnly, kSegAnySize, 1, 1, 256, 8, 1024, 16384, 256, 0, 0, 0, 0, 8, false}, // one head: reduce, lse
    {"G2", kSegWrites, kSegAnySize, 1, 1, 256, 8, 1024, 8192, 256, 0, 0, 32, 0, 32,
     false}, // one head: softmax, backward
    {"G8", 1u << SegSoftmax, kSegSmallSize, 2, 2, 256, 8, 1024, 2048, 256, 0, 0, 32, 0, 32,
     true}, // softmax, 2 heads: rows
    {"G8", 1u << SegSoftmax, kSegSmallSize, 4, 4, 256, 8, 1024, 2048, 256, 0, 0, 32, 0, 32, true}, // 4 heads
    {"G8", 1u << SegSoftmax, kSegSmallSize, 8, 8, 256, 4, 1024, 2048, 256, 0, 0, 32, 0, 32, true}, // 8 heads
    {"G3", kSegAnyKind, kSegAnySize, 2, 16, 256, 8, 1024, 2048, 256, 0, 0, 32, 0, 32,
     false}, // a few heads: rows are wider
    {"G4", kSegAnyKind, kSegAnySize, 17, 1 << 30, 128, 256, 256, 256, 128, 0, 0, 0, 0, 32,
     false}, // many heads: a lane a pair
};
constexpr int kSegmentRuleCount = (int)(sizeof(kSegmentRules) / sizeof(kSegmentRules[0]));

/// A rule of the flat pass: a mean limit and no lane or team kernel.
constexpr bool segRuleFlat(const SegmentRule& r) { return r.maxMean > 0 && r.laneRows == 0 && r.team == 0; }

/// The plan for a call of `kind` over elements of `elemBytes` bytes with `heads` heads, `segments`
/// segments over `items` rows (csr: CSR offsets, not begin/end arrays). Host only.
inline SegmentPlan segmentPlan(SegmentKind kind, int elemBytes, int heads, long long segments = 0, long long items = 0,
                               bool csr = false) {
    auto plan = [&](int i) { // sliceGroup: the softmax's only; directRows: the one-pass kinds'; laneRows: theirs
                             // and the softmax's
        const SegmentRule& r = kSegmentRules[i];
        const bool oneWay = kind == SegReduce || kind == SegLogSumExp;
        const int slice = kind == SegSoftmax ? r.sliceGroup : 0;
        SegmentPlan q{
            i,        r.threads, r.perLane, r.longRows, r.chunkRows, r.longThreads, segRuleFlat(r), slice, 0, r.minStep,
            r.byRows, 0,         0,         0};
        if (oneWay) q.directRows = r.directRows;
        if (oneWay || kind == SegSoftmax) q.laneRows = r.laneRows;
        if (kind == SegSoftmax || (oneWay && r.directRows > 0)) q.team = r.team;
        if (oneWay && r.directRows > 0) q.page = r.page;
        return q;
    };
    for (int i = 0; i < kSegmentRuleCount; ++i) {
        const SegmentRule& r = kSegmentRules[i];
        const bool kindOk = (r.kinds >> (int)kind) & 1u;
        const bool sizeOk = elemBytes > 0 && elemBytes < 32 && ((r.elemSizes >> elemBytes) & 1u);
        const bool flat = segRuleFlat(r); // the flat pass needs CSR offsets and some items
        const bool meanOk =
            r.maxMean == 0 || ((csr || !flat) && segments > 0 && (items > 0 || !flat) && segments < (1ll << 61) &&
                               items < (1ll << 61) && (items + r.maxMean - 1) / r.maxMean <= segments);
        const bool longOk = r.minMean == 0 || (segments > 0 && items / r.minMean >= segments);
        if (kindOk && sizeOk && meanOk && longOk && heads >= r.minHeads && heads <= r.maxHeads) return plan(i);
    }
    return plan(kSegmentRuleCount - 1); // no rule: the most general one
}

/// Whether some rule runs the flat pass for a call of `kind` over elements of `elemBytes` bytes with
/// `heads` heads (at some mean length): such a call's workspace holds the flat pass's too. Host only.
inline bool segmentFlatCapable(SegmentKind kind, int elemBytes, int heads) {
    for (const SegmentRule& r : kSegmentRules)
        if (segRuleFlat(r) && ((r.kinds >> (int)kind) & 1u) && elemBytes > 0 && elemBytes < 32 &&
            ((r.elemSizes >> elemBytes) & 1u) && heads >= r.minHeads && heads <= r.maxHeads)
            return true;
    return false;
}

/// The pairs a warp step of the group kernel takes, for `pairs` pairs over `warps` resident warps
/// (blocks an SM x SMs x warps a block): 32 for a plan with minStep >= 32; else the pairs spread
/// evenly over the resident warps' steps, k = ceil(pairs / (32 warps)) steps a warp of
/// ceil(pairs / (k warps)) <= 32 pairs (at least minStep): a call of fewer than 32 pairs a resident
/// warp then fills every resident warp (a step's pairs of a 32-lane group are folded one after
/// another, one round trip each), and no warp takes a step more than another. One head only: a
/// step of several heads must start at a head 0 (the plans of several heads have minStep 32).
/// Host only.
inline int segmentStepPairs(const SegmentPlan& p, long long pairs, long long warps) {
    if (p.minStep >= 32 || pairs <= 0 || warps <= 0 || pairs >= (1ll << 56) || warps >= (1ll << 24)) return 32;
    const long long k = (pairs + 32 * warps - 1) / (32 * warps), s = (pairs + k * warps - 1) / (k * warps);
    return s < p.minStep ? (p.minStep < 1 ? 1 : p.minStep) : (int)s;
}

/// The (team, heads, element sizes) rule G10's dispatcher has kernels for (segment.cuh,
/// segmentLaunch; sizes a mask of 1 << bytes). A block of 256 with 4 heads is fp32 only: with 16-bit
/// values its eight factors a vector spill at 80 registers.
struct SegTeamShape {
    int team, heads;
    unsigned sizes;
};
constexpr SegTeamShape kSegTeamShapes[] = {
    {32, 1, kSegSmallSize}, {64, 1, kSegSmallSize}, {256, 1, kSegSmallSize}, {64, 4, kSegSmallSize}, {256, 4, 1u << 4}};
/// The teams (lanes a segment) of G6's direct path has kernels for (segmentDirectTeamKernel), and
/// the page kernel's page (segments a block) and team (segmentDirectPageKernel).
constexpr int kSegDirectTeams[] = {8, 16, 32};
constexpr int kSegDirectPage = 64, kSegDirectPageTeam = 8;
/// Whether a plan with `team` has a kernel for `heads` heads of `size`-byte values (a plan with no
/// team: always; with directRows: one head, values of up to 4 bytes, a direct team; with a page:
/// the page kernel's page and team). Host.
inline bool segTeamCompiled(const SegmentPlan& p, int heads, int size) {
    const int team = p.team;
    bool ok = team == 0;
    if (p.directRows > 0) {
        for (int t : kSegDirectTeams) ok = ok || (heads == 1 && size > 0 && size <= 4 && t == team);
        if (p.page != 0) return ok && p.page == kSegDirectPage && team == kSegDirectPageTeam;
        return ok;
    }
    for (const SegTeamShape& s : kSegTeamShapes)
        ok = ok || (s.team == team && s.heads == heads && size > 0 && size < 32 && ((s.sizes >> size) & 1u));
    return ok;
}

/// Whether the dispatcher has kernels for the plan's block sizes, and its direct pairs are pairs of
/// one chunk (so they give the chunk kernels' bits) with 32-bit row counts (the direct kernel's).
/// Host only.
inline bool segmentPlanCompiled(const SegmentPlan& p) {
    bool shape = false;
    for (const SegmentLaunchShape& s : kSegmentShapes)
        shape = shape || (s.threads == p.threads && s.longThreads == p.longThreads);
    const bool direct =
        p.directRows == 0 || (p.directRows > p.longRows && p.directRows <= p.chunkRows && p.directRows < (1ll << 31));
    const bool lanes = p.laneRows == 0 || (p.directRows == 0 && !p.flat && p.laneRows <= p.longRows);
    bool team = false; // a team some kernel has (kSegTeamShapes, kSegDirectTeams), on no other stage 1
    for (const SegTeamShape& s : kSegTeamShapes) team = team || (p.directRows == 0 && s.team == p.team);
    for (int t : kSegDirectTeams) team = team || (p.directRows > 0 && t == p.team);
    const bool teams = p.team == 0 || (team && !p.flat && p.laneRows == 0 && (p.sliceGroup > 0 || p.directRows > 0));
    return shape && direct && lanes && teams && p.perLane >= 1 && p.longRows >= 1 && p.chunkRows >= 1 &&
           p.sliceGroup >= 0 && (p.sliceGroup & (p.sliceGroup - 1)) == 0 && p.minStep >= 1 && p.minStep <= 32;
}

} // namespace detail
} // namespace warpkit
