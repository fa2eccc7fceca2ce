// warpkit/device/detail/row_op.cuh: the contract between the row kernels (row_kernels.cuh, row_staged.cuh) and a
// row-wise algorithm (device/norm.cuh, cross_entropy.cuh, softmax_backward.cuh), its defaults, and
// the check at the dispatcher's entry (rowOpCheck: one static_assert per required hook).
//
// An algorithm is a params struct P (plain data: pointers, strides, scalars) with
//   P::Elem        T (float, __half, __nv_bfloat16)
//   P::kInputs     row arrays read (1 or 2); P::kColumns per-column arrays read (0..2)
//   P::kOutFast    the staged path may take a branch-free whole-vector output form (rowOutFast)
//   P::kReduceWarp calls without per-element outputs may take the warp-streamed path
//   P::kWarpChunks the fewest vectors a lane of the warp path holds (1, 2 or 4)
//   P::Exchange, P::Merge   what the threads and blocks of a row combine, and the operator
//   P::Acc         a thread's running statistics (streamed, staged and warp-streamed paths)
// and free functions overloaded on P (found by argument-dependent lookup), by role:
//   where the rows are (host: rowAt, rowAligned; device: rowInput, rowOutput, rowFill)
//     rowAt(p, r0) -> P                  the params of the rows from r0 on (launch chunks)
//     rowAligned(p, cols) -> bool        every row of every row array starts on 16 bytes and holds
//                                        whole vectors (the instantiation without head/tail slots)
//     rowInput(p, k, row) -> const T*, rowOutput(p, row) -> T* (null: nothing stored)
//     rowFill(p, k) -> T                 the value of input k's empty register slots
//   a row in registers
//     rowRegs<C, E>(p, row, cols, part, x, g) -> F   the row's statistics from the calling thread's
//                                        slots x (float [kInputs][K]) through the group g's
//                                        reductions (row_part.cuh), the outputs written into x[0];
//                                        returns the row's factors F
//   statistics a vector at a time (the streamed, staged and warp-streamed paths)
//     rowStatsInit(p, row, cols, first) -> Acc   (`first`: the thread is its row's first)
//     rowStatsAdd<N>(p, acc, x, col)     N values of each input (float [kInputs][N]) from column col
//     rowStatsTotal<Threads>(p, acc) -> Exchange   the block's total (every thread calls)
//     rowStatsExchange(p, acc) -> Exchange   (P::kReduceWarp only) a thread's statistics
//     rowStatsSweep<Threads>(p, acc, sweep) -> Exchange   the staged block's total from a sweep it
//                                        may repeat (default: rowStatsAdd of one sweep)
//   the outputs
//     rowFactors(p, acc, total, row, split, cols) -> F   the row's factors from its total
//     rowOut<N>(p, f, x, col)            N outputs from column col, in place over x[0]
//     rowOutFastOk(p, f) -> bool, rowOutFast<N>(p, f, x, col)   (P::kOutFast only) whether a row's
//                                        whole-vector outputs may take the branch-free form, checked
//                                        once a row, and that form
//     rowOutputs(p, f, row)              the per-row outputs (mean, rstd, loss), one thread a row
//   per-column arrays (P::kColumns > 0 only)
//     rowColumn(p, k) -> const T*        column array k (null: not in use)
//     rowSetColumns(p, c, origin)        read them from staged copies c of columns origin.. on
//   inputs that stage together (default: one input): rowStageable(p) -> bool (host)
//   statistics given from outside (default: false): P::kStatsGiven, the streamed path skips its
//                                        statistics sweep (rowFactors reads them; device/sharded.cuh)
//   input 1 of another type (default: Elem): P::Elem1, a type narrower than Elem (Elem float)
//                                        read through rowInput1(p, row) -> const Elem1* (default
//                                        rowInput(p, 1, row)) and widened exactly as it loads; such
//                                        a P never stages (device/add_norm.cuh's 16-bit residual)
//   full-row kernels (default: false): P::kFullRows true gives the register paths a second kernel
//                                        for rows that fill every slot of their shape (aligned rows
//                                        of exactly its vectors, the column arrays in use aligned),
//                                        in which RowPart::full is the constant true (row_launch.cuh
//                                        picks it per launch: rowRunsFull)
//   R25's fit shape on unaligned rows (default: true): P::kWarpFitUnaligned false leaves that
//                                        instantiation out, and such rows take R1's warp plan
//                                        (device/add_norm.cuh: two inputs there spilled)
//   block kernel's blocks an SM where it copies column vectors (default: none): P::kBlockMinBlocks512,
//                                        the launch bounds' minimum blocks of those kernels (2: at
//                                        most 64 registers, two blocks of 512 an SM; R30)
//   column pieces the block kernel copies to shared memory (default: 0): P::kBlockColumnPieces,
//                                        in blocks of 512 x 8 on aligned rows: each thread copies its
//                                        first pieces' column vectors with cp.async as its row loads
//                                        go out (rowBlockColumnsIssue(p, part, smem)), so that its
//                                        outputs (told by the group: BlockGroup's Copies) wait on no
//                                        L2 round trip for them (R30); host rowBlockColumnArrays(p):
//                                        the arrays copied (0: none, the kernel without copies runs)
//   load hint of the full-row kernels (default: LoadReadOnly): P::kLoadHint for the row inputs'
//                                        loads (a thread/vector.cuh LoadHint; K7: the norms read x once)
#pragma once

#include "row_part.cuh"

namespace warpkit {
namespace detail {

// The hooks that callers name with explicit template arguments, declared here so that those calls
// parse as template calls (C++17); argument-dependent lookup finds the algorithms' overloads.
struct RowOpNone;
template <int C, int E> void rowRegs(RowOpNone*);
template <int CP> void rowBlockColumnsIssue(RowOpNone*);
template <int N> void rowStatsAdd(RowOpNone*);
template <int Threads> void rowStatsTotal(RowOpNone*);
template <int N> void rowOut(RowOpNone*);
template <int N> void rowOutFast(RowOpNone*);

// ---- defaults -----------------------------------------------------------------------------------

/// The traits of a read-only row call (a row's statistics out, no per-element outputs): one input,
/// no column arrays, the warp-streamed path allowed with lanes of 4 vectors or more.
struct RowReadOnlyTraits {
    static constexpr int kInputs = 1;
    static constexpr int kColumns = 0;
    static constexpr bool kOutFast = false;
    static constexpr bool kReduceWarp = true;
    static constexpr int kWarpChunks = 4;
};

/// rowOutFast for algorithms without one (P::kOutFast false): named in the staged kernel's
/// discarded branch, never run.
template <int N, typename P, typename F, typename X>
WARPKIT_DEVICE void rowOutFast(const P& p, const F& f, X& x, int col) {
    rowOut<N>(p, f, x, col);
}
template <bool B> struct RowBool { static constexpr bool value = B; };

/// The block's statistics from its staged values as the streamed path takes them: sweep(f) calls
/// f(x, col) for each of the calling thread's vectors (float x[NI][V]) and extra elements (float
/// x[NI][1]), col being the column of x's first element; each goes to rowStatsAdd, and the block's
/// total is rowStatsTotal's. Every thread of the block calls it and gets the result.
template <int Threads, typename P, typename Sweep>
WARPKIT_DEVICE typename P::Exchange rowStatsSweepAdds(const P& p, typename P::Acc& a, Sweep sweep) {
    sweep([&](const auto& x, int col) { rowStatsAdd(p, a, x, col); });
    return rowStatsTotal<Threads>(p, a);
}

/// The staged path's block statistics: rowStatsSweepAdds, unless the algorithm overloads it
/// (LayerNorm's exact two-pass).
template <int Threads, typename P, typename Sweep>
WARPKIT_DEVICE typename P::Exchange rowStatsSweep(const P& p, typename P::Acc& a, Sweep sweep) {
    return rowStatsSweepAdds<Threads>(p, a, sweep);
}

/// Whether every row of the algorithm's inputs can be bulk-copied with input 0's split: each input's
/// rows have input 0's alignment modulo 16 bytes. Host. One input: always.
template <typename P> inline bool rowStageable(const P&) { return P::kInputs == 1; }

/// The column arrays (P::kColumns) the algorithm's params use. Host.
template <typename P> inline int rowColumnsInUse(const P& p) {
    int nc = 0;
    if constexpr (P::kColumns > 0)
        for (int k = 0; k < P::kColumns; ++k) nc += rowColumn(p, k) != nullptr;
    return nc;
}

// ---- the check ----------------------------------------------------------------------------------
// One detector per required hook, each asking whether the call (with the argument types the
// kernels pass) is well-formed; rowOpCheck asserts them one by one at the dispatcher's entry.

template <typename X> X&& rowDeclval();
template <typename... X> struct RowVoidOf { using type = void; };
template <typename... X> using RowVoid = typename RowVoidOf<X...>::type;

/// Whether P's row statistics come from outside (P::kStatsGiven; default false): the streamed path
/// then skips its statistics sweep, and rowFactors reads the given statistics.
template <typename P, typename = void> struct RowStatsGiven { static constexpr bool value = false; };
template <typename P> struct RowStatsGiven<P, RowVoid<decltype(P::kStatsGiven)>> {
    static constexpr bool value = P::kStatsGiven;
};

/// Input 1's element type: P::Elem1 where P names one, else P::Elem.
template <typename P, typename = void> struct RowElem1Of { using type = typename P::Elem; };
template <typename P> struct RowElem1Of<P, RowVoid<typename P::Elem1>> { using type = typename P::Elem1; };
template <typename P> using RowElem1 = typename RowElem1Of<P>::type;

/// Input 1's row (P::kInputs == 2): rowInput(p, 1, row), unless the algorithm overloads it (an
/// input of another type, P::Elem1).
template <typename P> WARPKIT_DEVICE const typename P::Elem* rowInput1(const P& p, long long row) {
    return rowInput(p, 1, row);
}

/// Whether P has full-row kernels (P::kFullRows; default false).
template <typename P, typename = void> struct RowFullRows { static constexpr bool value = false; };
template <typename P> struct RowFullRows<P, RowVoid<decltype(P::kFullRows)>> {
    static constexpr bool value = P::kFullRows;
};

/// Whether every column array the params use (P::kColumns) starts on 16 bytes. Host.
template <typename P> inline bool rowColumnsAligned(const P& p) {
    if constexpr (P::kColumns > 0)
        for (int k = 0; k < P::kColumns; ++k)
            if (((size_t)rowColumn(p, k) & 15) != 0) return false;
    return true;
}

/// Whether P's unaligned rows may take R25's fit shape (P::kWarpFitUnaligned; default true).
template <typename P, typename = void> struct RowWarpFitUnaligned { static constexpr bool value = true; };
template <typename P> struct RowWarpFitUnaligned<P, RowVoid<decltype(P::kWarpFitUnaligned)>> {
    static constexpr bool value = P::kWarpFitUnaligned;
};

/// The full-row kernels' hint for the row inputs' loads: P::kLoadHint where P names one (a
/// LoadHint), else LoadReadOnly. Per-column arrays keep their own (cached) loads; the general
/// kernels read the rows through the read-only path (K7: the L2 policy of LoadReadOnlyEvictFirst
/// tipped two of them, at 48 and 128 registers, into spills).
template <typename P, typename = void> struct RowLoadHint { static constexpr int value = LoadReadOnly; };
template <typename P> struct RowLoadHint<P, RowVoid<decltype(P::kLoadHint)>> {
    static constexpr int value = P::kLoadHint;
};

/// The pieces a thread of rowOpBlockKernel<P, Threads, C, Aligned, Full> copies the column vectors
/// of to shared memory (P::kBlockColumnPieces, at most C; R30): only the general (not full-row)
/// kernel of 512 threads x 8 vectors on aligned rows (R15c, R8).
template <typename P, typename = void> struct RowBlockColumnPieces { static constexpr int value = 0; };
template <typename P> struct RowBlockColumnPieces<P, RowVoid<decltype(P::kBlockColumnPieces)>> {
    static constexpr int value = P::kBlockColumnPieces;
};
template <typename P, int Threads, int C, bool Aligned, bool Full> WARPKIT_HD constexpr int rowBlockColumnPieces() {
    return Threads == 512 && C == 8 && Aligned && !Full
               ? (RowBlockColumnPieces<P>::value < C ? RowBlockColumnPieces<P>::value : C)
               : 0;
}

/// rowOpBlockKernel's launch-bounds minimum blocks an SM: P::kBlockMinBlocks512 for the kernels that
/// copy column vectors (Copy, rowBlockColumnPieces) on sm_90, else 0 (no .minnctapersm: ptxas's own
/// register choice; 1 would change it).
template <typename P, typename = void> struct RowBlockMin512 { static constexpr int value = 0; };
template <typename P> struct RowBlockMin512<P, RowVoid<decltype(P::kBlockMinBlocks512)>> {
    static constexpr int value = P::kBlockMinBlocks512;
};
template <typename P, int Threads, int C, bool Aligned, bool Full, bool Copy>
WARPKIT_HD constexpr int rowBlockMinBlocks() {
    return Copy && rowBlockColumnPieces<P, Threads, C, Aligned, Full>() > 0 && WARPKIT_ARCH >= 900
               ? RowBlockMin512<P>::value
               : 0;
}

#define WARPKIT_DETAIL_ROW_HOOK(NAME, EXPR)                                                      \
    template <typename P, typename = void> struct NAME { static constexpr bool value = false; }; \
    template <typename P> struct NAME<P, RowVoid<decltype(EXPR)>> { static constexpr bool value = true; };

WARPKIT_DETAIL_ROW_HOOK(RowHasTypes,
                        (rowDeclval<typename P::Elem*>(), rowDeclval<typename P::Exchange*>(),
                         rowDeclval<typename P::Merge*>(), rowDeclval<typename P::Acc*>(),
                         P::kInputs + P::kColumns + P::kWarpChunks + (P::kOutFast ? 1 : 0) + (P::kReduceWarp ? 1 : 0)))
WARPKIT_DETAIL_ROW_HOOK(RowHasAt, rowDeclval<P&>() = rowAt(rowDeclval<const P&>(), 0LL))
WARPKIT_DETAIL_ROW_HOOK(RowHasAligned, (bool)rowAligned(rowDeclval<const P&>(), 0))
WARPKIT_DETAIL_ROW_HOOK(RowHasInput, rowDeclval<const typename P::Elem*&>() = rowInput(rowDeclval<const P&>(), 0, 0LL))
WARPKIT_DETAIL_ROW_HOOK(RowHasOutput, rowDeclval<typename P::Elem*&>() = rowOutput(rowDeclval<const P&>(), 0LL))
WARPKIT_DETAIL_ROW_HOOK(RowHasFill, rowDeclval<typename P::Elem&>() = rowFill(rowDeclval<const P&>(), 0))
WARPKIT_DETAIL_ROW_HOOK(RowHasStatsInit,
                        rowDeclval<typename P::Acc&>() = rowStatsInit(rowDeclval<const P&>(), 0LL, 0, true))
WARPKIT_DETAIL_ROW_HOOK(RowHasStatsAdd,
                        (rowStatsAdd<vectorElems<typename P::Elem>()>(
                             rowDeclval<const P&>(), rowDeclval<typename P::Acc&>(),
                             rowDeclval<const float (&)[P::kInputs][vectorElems<typename P::Elem>()]>(), 0),
                         rowStatsAdd<1>(rowDeclval<const P&>(), rowDeclval<typename P::Acc&>(),
                                        rowDeclval<const float (&)[P::kInputs][1]>(), 0)))
WARPKIT_DETAIL_ROW_HOOK(RowHasStatsTotal,
                        rowDeclval<typename P::Exchange&>() = rowStatsTotal<128>(rowDeclval<const P&>(),
                                                                                 rowDeclval<const typename P::Acc&>()))
WARPKIT_DETAIL_ROW_HOOK(RowHasFactors,
                        rowFactors(rowDeclval<const P&>(), rowDeclval<const typename P::Acc&>(),
                                   rowDeclval<const typename P::Exchange&>(), 0LL, rowDeclval<const VectorSplit&>(), 0))
template <typename P> using RowFactorsOf =
    decltype(rowFactors(rowDeclval<const P&>(), rowDeclval<const typename P::Acc&>(),
                        rowDeclval<const typename P::Exchange&>(), 0LL, rowDeclval<const VectorSplit&>(), 0));
WARPKIT_DETAIL_ROW_HOOK(RowHasOut, (rowOut<vectorElems<typename P::Elem>()>(
                                        rowDeclval<const P&>(), rowDeclval<const RowFactorsOf<P>&>(),
                                        rowDeclval<float (&)[P::kInputs][vectorElems<typename P::Elem>()]>(), 0),
                                    rowOut<1>(rowDeclval<const P&>(), rowDeclval<const RowFactorsOf<P>&>(),
                                              rowDeclval<float (&)[P::kInputs][1]>(), 0)))
WARPKIT_DETAIL_ROW_HOOK(RowHasOutputs, rowOutputs(rowDeclval<const P&>(), rowDeclval<const RowFactorsOf<P>&>(), 0LL))
WARPKIT_DETAIL_ROW_HOOK(RowHasRegs,
                        (rowDeclval<RowFactorsOf<P>&>() = rowRegs<1, 0>(
                             rowDeclval<const P&>(), 0LL, 0, rowDeclval<const RowPart&>(),
                             rowDeclval<float (&)[P::kInputs][vectorElems<typename P::Elem>()]>(), SegmentGroup<1>{})))
WARPKIT_DETAIL_ROW_HOOK(RowHasColumns, (rowDeclval<const typename P::Elem*&>() = rowColumn(rowDeclval<const P&>(), 0),
                                        rowSetColumns(rowDeclval<P&>(),
                                                      rowDeclval<const typename P::Elem* const (&)[P::kColumns]>(), 0)))
WARPKIT_DETAIL_ROW_HOOK(RowHasOutFast,
                        ((bool)rowOutFastOk(rowDeclval<const P&>(), rowDeclval<const RowFactorsOf<P>&>()),
                         rowOutFast<vectorElems<typename P::Elem>()>(
                             rowDeclval<const P&>(), rowDeclval<const RowFactorsOf<P>&>(),
                             rowDeclval<float (&)[P::kInputs][vectorElems<typename P::Elem>()]>(), 0)))
WARPKIT_DETAIL_ROW_HOOK(RowHasStatsExchange,
                        rowDeclval<typename P::Exchange&>() = rowStatsExchange(rowDeclval<const P&>(),
                                                                               rowDeclval<const typename P::Acc&>()))
#undef WARPKIT_DETAIL_ROW_HOOK

/// Whether P meets the contract (each hook rowOpCheck asserts).
template <typename P, bool Types = RowHasTypes<P>::value> struct RowOpValid { static constexpr bool value = false; };
template <typename P> struct RowOpValid<P, true> {
    static constexpr bool base = RowHasAt<P>::value && RowHasAligned<P>::value && RowHasInput<P>::value &&
                                 RowHasOutput<P>::value && RowHasFill<P>::value && RowHasStatsInit<P>::value &&
                                 RowHasStatsAdd<P>::value && RowHasStatsTotal<P>::value && RowHasFactors<P>::value;
    static constexpr bool value = base && RowHasOut<P>::value && RowHasOutputs<P>::value && RowHasRegs<P>::value &&
                                  (P::kColumns == 0 || RowHasColumns<P>::value) &&
                                  (!P::kOutFast || RowHasOutFast<P>::value) &&
                                  (!P::kReduceWarp || RowHasStatsExchange<P>::value) &&
                                  (P::kWarpChunks == 1 || P::kWarpChunks == 2 || P::kWarpChunks == 4) &&
                                  (P::kInputs == 1 || P::kInputs == 2) && P::kColumns >= 0 && P::kColumns <= 2;
};

/// The contract's check, one static_assert per hook; the dispatcher (row_launch.cuh) calls it first
/// and compiles nothing else for a P that fails it.
template <typename P> constexpr bool rowOpCheck() {
    constexpr bool types = RowHasTypes<P>::value;
    static_assert(types,
                  "rowRun: params type P lacks Elem, Exchange, Merge, Acc, kInputs, kColumns, kWarpChunks, kOutFast "
                  "or kReduceWarp (device/detail/row_op.cuh)");
    if constexpr (types) {
        static_assert(P::kInputs == 1 || P::kInputs == 2, "rowRun: P::kInputs (row arrays read) must be 1 or 2");
        static_assert(P::kColumns >= 0 && P::kColumns <= 2,
                      "rowRun: P::kColumns (per-column arrays) must be 0, 1 or 2");
        static_assert(P::kWarpChunks == 1 || P::kWarpChunks == 2 || P::kWarpChunks == 4,
                      "rowRun: P::kWarpChunks (the fewest vectors a lane of the warp path holds) must be 1, 2 or 4");
        static_assert(RowHasAt<P>::value, "rowRun: params type P lacks rowAt(p, r0) -> P (device/detail/row_op.cuh)");
        static_assert(RowHasAligned<P>::value,
                      "rowRun: params type P lacks rowAligned(p, cols) -> bool (device/detail/row_op.cuh)");
        static_assert(RowHasInput<P>::value,
                      "rowRun: params type P lacks rowInput(p, k, row) -> const P::Elem* (device/detail/row_op.cuh)");
        static_assert(RowHasOutput<P>::value,
                      "rowRun: params type P lacks rowOutput(p, row) -> P::Elem* (device/detail/row_op.cuh)");
        static_assert(RowHasFill<P>::value,
                      "rowRun: params type P lacks rowFill(p, k) -> P::Elem (device/detail/row_op.cuh)");
        static_assert(
            RowHasStatsInit<P>::value,
            "rowRun: params type P lacks rowStatsInit(p, row, cols, first) -> P::Acc (device/detail/row_op.cuh)");
        static_assert(RowHasStatsAdd<P>::value, "rowRun: params type P lacks rowStatsAdd<N>(p, acc, x, col) with float "
                                                "(&x)[P::kInputs][N] (device/detail/row_op.cuh)");
        static_assert(
            RowHasStatsTotal<P>::value,
            "rowRun: params type P lacks rowStatsTotal<Threads>(p, acc) -> P::Exchange (device/detail/row_op.cuh)");
        static_assert(
            RowHasFactors<P>::value,
            "rowRun: params type P lacks rowFactors(p, acc, total, row, split, cols) -> F (device/detail/row_op.cuh)");
        if constexpr (RowHasFactors<P>::value) {
            static_assert(RowHasOut<P>::value, "rowRun: params type P lacks rowOut<N>(p, f, x, col) with float "
                                               "(&x)[P::kInputs][N] (device/detail/row_op.cuh)");
            static_assert(RowHasOutputs<P>::value,
                          "rowRun: params type P lacks rowOutputs(p, f, row) (device/detail/row_op.cuh)");
            static_assert(RowHasRegs<P>::value,
                          "rowRun: params type P lacks rowRegs<C, E>(p, row, cols, part, x, group) -> F "
                          "(device/detail/row_op.cuh)");
            static_assert(!P::kOutFast || RowHasOutFast<P>::value, "rowRun: P::kOutFast is set but params type P lacks "
                                                                   "rowOutFastOk(p, f) or rowOutFast<N>(p, f, x, col) "
                                                                   "(device/detail/row_op.cuh)");
        }
        static_assert(P::kColumns == 0 || RowHasColumns<P>::value, "rowRun: P::kColumns > 0 but params type P lacks "
                                                                   "rowColumn(p, k) or rowSetColumns(p, c, origin) "
                                                                   "(device/detail/row_op.cuh)");
        static_assert(!P::kReduceWarp || RowHasStatsExchange<P>::value,
                      "rowRun: P::kReduceWarp is set but params type P "
                      "lacks rowStatsExchange(p, acc) -> P::Exchange "
                      "(device/detail/row_op.cuh)");
    }
    return RowOpValid<P>::value;
}

} // namespace detail
} // namespace warpkit
