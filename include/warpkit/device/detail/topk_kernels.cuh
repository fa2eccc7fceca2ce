// warpkit/device/detail/topk_kernels.cuh: the kernels of rules W1 and T3 / T4 and the pieces every
// rowTopK kernel shares (work items, outputs, the mask); W2-W4: topk_warp_select.cuh; T1 / T2:
// topk_filter.cuh. Internal: include warpkit/device/topk.cuh.
//
// Work items. A level has rows x slices items; item (row, slice) takes elements [lo, hi) of its row's
// input (the row of x at level 0, else its candidates), lo = slice x seg, seg = ceil(len / slices).
// Blocks take items grid-stride, so any number of rows fits one launch. An item leaves either its
// k best packed keys in cout (zeros after the first min(k, hi - lo)), or, at the last level, the
// row's ranked outputs: values[row x k + r] (read back from x at the index) and indices[row x k + r].
//
// topkStreamKernel, stage by stage, per tile of kTopKTile elements:
//   1. load: 16 keys a thread (coalesced), packed (topkPack) at level 0; a key below the running
//      threshold becomes empty (it cannot reach the top k: k keys at or above it were seen);
//   2. skip the tile when no key survived (one barrier, __syncthreads_or): most tiles of a long
//      random row once the running set has settled;
//   3. select: the k best of the tile's keys and the running set (RunK keys a thread) by
//      blockTopKSelect; they become the running set, and their threshold the filter of stage 1.
// At the end of the item the running set is written (candidates), or sorted (blockTopKSort) and
// written as outputs; rule T4 then starts the next pass of ranks below the smallest key ranked.
#pragma once

#include "../../block/reduce.cuh"
#include "../../block/topk.cuh"
#include "../../thread/vector.cuh"
#include "../../warp/sort.cuh"
#include "topk_plan.cuh"

namespace warpkit {
namespace detail {

/// The outputs and the input rows of a call.
template <typename T> struct TopKRows {
    const T* x;
    long long ldx;
    bool largest;
    T* values;     // null: not written
    void* indices; // int or long long, as idx64
    bool idx64;
    T* masked;     // rowTopKMask: the row with everything outside its top k set to -inf (then no
    long long ldy; //   values / indices are written)
};

/// One level (one launch).
struct TopKLevel {
    long long rows;
    long long len;                 // elements a row at this level's input
    int slices;                    // items a row
    long long seg;                 // elements an item: ceil(len / slices)
    int cols;                      // the rows' columns (rowTopKMask's sweep)
    int k;                         // ranks a row (the outputs' row length)
    int chunkK;                    // ranks a pass (T4: passes of kTopKMaxK; else k)
    const unsigned long long* cin; // candidates in (rows x len), null at level 0
    unsigned long long* cout;      // candidates out (rows x slices x k), null at the last level
    unsigned long long* done;      // S3: an arrival word a row (device/reduce.cuh's arriveTagged), else null
    unsigned long long tag;        // S3: this call's arrival tag (arrivalTag)
};

/// A work item: (row, slice). Blocks step through items grid-stride with 32-bit divisions only
/// (a 64-bit division is a called routine with a stack frame).
struct TopKItem {
    long long row;
    int slice;
};
WARPKIT_DEVICE TopKItem topkFirstItem(const TopKLevel& lv) {
    return {(long long)(blockIdx.x / (unsigned)lv.slices), (int)(blockIdx.x % (unsigned)lv.slices)};
}
WARPKIT_DEVICE void topkNextItem(const TopKLevel& lv, TopKItem& it) {
    it.row += gridDim.x / (unsigned)lv.slices;
    it.slice += (int)(gridDim.x % (unsigned)lv.slices);
    if (it.slice >= lv.slices) {
        it.slice -= lv.slices;
        ++it.row;
    }
}

/// Key i of the row's input at this level.
template <bool FromX, typename T>
WARPKIT_DEVICE unsigned long long topkInputKey(const TopKRows<T>& io, const TopKLevel& lv, long long row, long long i) {
    if constexpr (FromX) return topkPack(io.x[row * io.ldx + i], (unsigned)i, io.largest);
    else return lv.cin[row * lv.len + i];
}

/// Writes output rank r of `row` from its packed key.
template <typename T>
WARPKIT_DEVICE void topkWriteOutput(const TopKRows<T>& io, int k, long long row, int r, unsigned long long packed) {
    const unsigned i = topkUnpackIndex(packed);
    const long long o = row * k + r;
    if (io.values) io.values[o] = io.x[row * io.ldx + i];
    if (io.idx64) static_cast<long long*>(io.indices)[o] = (long long)i;
    else static_cast<int*>(io.indices)[o] = (int)i;
}

/// rowTopKMask's output for columns first, first + stride, ... of `row`, whose k-th best packed key
/// is kth: masked[row x ldy + c] = x if its packed key is >= kth, else -inf. Any thread, alone.
template <typename T> WARPKIT_DEVICE void topkMaskColumns(const TopKRows<T>& io, int cols, long long row,
                                                          unsigned long long kth, int first, int stride) {
    const T* x = io.x + row * io.ldx;
    T* y = io.masked + row * io.ldy;
    const T minusInf = Arith<T>::from_acc(-__builtin_huge_valf());
    for (int c = first; c < cols; c += stride) {
        const T v = x[c];
        y[c] = topkPack(v, (unsigned)c, true) >= kth ? v : minusInf;
    }
}

/// rowTopKMask's output for the whole `row` (topkMaskColumns). Every thread of the block calls.
template <typename T>
WARPKIT_DEVICE void topkMaskRow(const TopKRows<T>& io, int cols, long long row, unsigned long long kth) {
    topkMaskColumns(io, cols, row, kth, (int)threadIdx.x, kTopKThreads);
}

/// The kernel of rule W1 (cols <= 32 K): a warp a row, K keys a lane, the row sorted whole by
/// warpBitonicSort; ranks 0 .. k-1 are written (or the row masked at the rank k-1 key).
template <typename T, int K> __global__ void __launch_bounds__(kTopKWarpRows * 32, 1)
    topkWarpKernel(TopKRows<T> io, long long rows, int cols, int k) {
    const unsigned lane = laneId();
    for (long long row = ((long long)blockIdx.x * kTopKWarpRows + threadIdx.x / 32); row < rows;
         row += (long long)gridDim.x * kTopKWarpRows) {
        const T* x = io.x + row * io.ldx;
        T v[K];
        unsigned long long keys[K];
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const int c = (int)lane * K + j;
            v[j] = c < cols ? x[c] : T();
            keys[j] = c < cols ? topkPack(v[j], (unsigned)c, io.largest) : kTopKEmpty;
        }
        warpBitonicSort<K, true>(keys);
        if (io.masked) {
            // the rank k-1 key: the smallest of ranks 0 .. k-1 (a reduction; picking slot (k-1) % K
            // by a runtime index would put keys[] in local memory)
            unsigned long long kth = ~0ull;
#pragma unroll
            for (int j = 0; j < K; ++j)
                if ((int)lane * K + j < k && keys[j] < kth) kth = keys[j];
            kth = warpReduceMin(kth);
            T* y = io.masked + row * io.ldy;
            const T minusInf = Arith<T>::from_acc(-__builtin_huge_valf());
#pragma unroll
            for (int j = 0; j < K; ++j) {
                const int c = (int)lane * K + j;
                if (c < cols) y[c] = topkPack(v[j], (unsigned)c, true) >= kth ? v[j] : minusInf;
            }
            continue;
        }
#pragma unroll
        for (int j = 0; j < K; ++j)
            if ((int)lane * K + j < k) topkWriteOutput(io, k, row, (int)lane * K + j, keys[j]);
    }
}

/// Level kernel of rules T3 / T4 (a pass ranks at most RunK x kTopKThreads): see the header
/// comment. At the last level of a row (one block a row), passes of lv.chunkK ranks follow each
/// other (T4), each below the smallest key of the one before.
template <typename T, bool FromX, int RunK> __global__ void __launch_bounds__(kTopKThreads, 1)
    topkStreamKernel(TopKRows<T> io, TopKLevel lv) {
    constexpr int V = kTopKPerThread, BT = kTopKThreads;
    __shared__ BlockTopKScratch<RunK * BT> s;
    const int t = (int)threadIdx.x;
    for (TopKItem it = topkFirstItem(lv); it.row < lv.rows; topkNextItem(lv, it)) {
        const long long row = it.row, item = row * lv.slices + it.slice;
        const long long lo = it.slice * lv.seg, hi = lo + lv.seg < lv.len ? lo + lv.seg : lv.len;
        unsigned long long ceiling = ~0ull; // keys above it were ranked by an earlier pass
        for (int rank0 = 0; rank0 < lv.k; rank0 += lv.chunkK) {
            const int kc = lv.k - rank0 < lv.chunkK ? lv.k - rank0 : lv.chunkK;
            unsigned long long run[RunK], threshold = kTopKEmpty;
            int n = 0;
#pragma unroll
            for (int r = 0; r < RunK; ++r) run[r] = kTopKEmpty;
            for (long long base = lo; base < hi; base += kTopKTile) {
                // 1. load and filter
                unsigned long long keys[V + RunK];
                bool any = false;
#pragma unroll
                for (int j = 0; j < V; ++j) {
                    const long long i = base + j * BT + t;
                    const unsigned long long key = i < hi ? topkInputKey<FromX>(io, lv, row, i) : kTopKEmpty;
                    keys[j] = key >= threshold && key <= ceiling ? key : kTopKEmpty;
                    any |= keys[j] != kTopKEmpty;
                }
                // 2. skip a tile with nothing to add
                if (!__syncthreads_or(any)) continue;
                    // 3. select the kc best of the tile and the running set
#pragma unroll
                for (int r = 0; r < RunK; ++r) keys[V + r] = run[r];
                const RadixSelectResult<unsigned long long> sel = blockTopKSelect<BT>(keys, kc, s);
                n = sel.selected;
                threshold = n == kc ? sel.threshold : kTopKEmpty;
#pragma unroll
                for (int r = 0; r < RunK; ++r) run[r] = r * BT + t < n ? s.keys[r * BT + t] : kTopKEmpty;
            }
            if (lv.cout) { // candidates (one pass: kc = k)
                unsigned long long* out = lv.cout + item * lv.k;
#pragma unroll
                for (int r = 0; r < RunK; ++r)
                    if (r * BT + t < lv.k) out[r * BT + t] = run[r];
                break;
            }
            unsigned long long least = ~0ull; // the pass's smallest key: the rank rank0 + kc - 1 key
#pragma unroll
            for (int r = 0; r < RunK; ++r) least = run[r] != kTopKEmpty && run[r] < least ? run[r] : least;
            least = blockReduceMin<BT>(least);
            if (io.masked) {
                if (rank0 + kc == lv.k) topkMaskRow(io, lv.cols, row, least);
            } else {
                __syncthreads(); // every thread has read s.keys (stage 3) before it is overwritten
#pragma unroll
                for (int r = 0; r < RunK; ++r)
                    if (r * BT + t < n) s.keys[r * BT + t] = run[r];
                blockTopKSort<BT>(s, n);
                for (int r = t; r < n; r += BT) topkWriteOutput(io, lv.k, row, rank0 + r, s.keys[r]);
                __syncthreads(); // s.keys is read before the next select writes it
            }
            ceiling = least - 1;
        }
    }
}

} // namespace detail
} // namespace warpkit
