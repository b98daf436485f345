// RMSNorm of one row by one thread block, shared by the norm kernels (elementwise.cu) and the products that norm the
// residual stream once they have added to it (integer_matvec.cu).
#ifndef ZSE_NORM_CUH
#define ZSE_NORM_CUH

#ifdef ZSE_CUDA_EMULATION
#include "emu/cuda_emu.h"
#endif

#include "quantize.cuh"

namespace zse {
namespace {

// The one-block-per-row kernels (the norms) hold a row in registers: each thread a run of kRowValues consecutive values
// in each tile of the row, the block as many threads as that takes (32 to 1024, see row_threads). All of a thread's
// loads are issued before any store, so a row costs one trip to memory; a loop that loads, stores and loads again (the
// stores could alias the next loads) waited for memory once per value: one-row RMSNorms took 19 us each on an H200.
// A run is a quarter of a quantization block, so a thread quantizes its values with 2 + 2 shuffles among four lanes;
// with a warp's 32 values one block, each value took 10 (6.9 us for Llama 3 8B's one-row norms, H200).
constexpr int kRowValues = 8;
constexpr int kMaxRowThreads = 1024;

inline int row_threads(int dim) {
    const int threads = (dim + kRowValues - 1) / kRowValues;
    return threads <= 32 ? 32 : threads >= kMaxRowThreads ? kMaxRowThreads : (threads + 31) / 32 * 32;
}

// The sum of a block's per-thread values (every thread gets it): warps reduce by shuffles, then through shared memory.
__device__ __forceinline__ float block_sum(float sum) {
    __shared__ float partial[kMaxRowThreads / 32];
    for (int offset = 16; offset > 0; offset /= 2) {
        sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    }
    if (threadIdx.x % 32 == 0) {
        partial[threadIdx.x / 32] = sum;
    }
    __syncthreads();
    float total = 0.f;
    for (int w = 0; w < static_cast<int>(blockDim.x / 32); w++) {
        total += partial[w];
    }
    return total;
}

// Element i of this thread's run in the tile from `base`: thread t takes kRowValues consecutive elements from
// base + t kRowValues, so four consecutive lanes hold one quantization block (dim a multiple of 32 where quantized).
__device__ __forceinline__ int row_element(int base, int i) {
    return base + static_cast<int>(threadIdx.x) * kRowValues + i;
}

// A run's values as two 16-byte loads (past L1 with L2_ONLY) or stores: with one 4-byte access per value, a warp's
// access touched 32 sectors 32 bytes apart, and its 8 accesses the same sectors again (16-row residual adds with
// their norms, 16 blocks of 512 threads, took 8.4 us each on an H200).
template <bool L2_ONLY>
__device__ __forceinline__ void load_run(const float *from, float (&v)[kRowValues]) {
    const float4 *quads = reinterpret_cast<const float4 *>(from);
#pragma unroll
    for (int h = 0; h < kRowValues / 4; h++) {
        const float4 f = L2_ONLY ? __ldcg(quads + h) : quads[h];
        v[4 * h] = f.x;
        v[4 * h + 1] = f.y;
        v[4 * h + 2] = f.z;
        v[4 * h + 3] = f.w;
    }
}

__device__ __forceinline__ void store_run(float *to, const float (&v)[kRowValues]) {
    float4 *quads = reinterpret_cast<float4 *>(to);
#pragma unroll
    for (int h = 0; h < kRowValues / 4; h++) quads[h] = float4{v[4 * h], v[4 * h + 1], v[4 * h + 2], v[4 * h + 3]};
}

// Stores this thread's run from element `first` of a row of dim values: in 16-byte accesses with RUNS (whole_runs
// holds), else value by value, those past the end left out.
template <bool RUNS>
__device__ __forceinline__ void store_values(float *row, int dim, int first, const float (&v)[kRowValues]) {
    if constexpr (RUNS) {
        if (first < dim) store_run(row + first, v);
    } else {
#pragma unroll
        for (int i = 0; i < kRowValues; i++) {
            if (first + i < dim) row[first + i] = v[i];
        }
    }
}

// Whether a row moves run by run in 16-byte accesses: a whole number of runs, every row pointer 16-byte aligned.
__device__ __forceinline__ bool whole_runs(int dim, const float *row, const float *row_y, const float *weight,
                                           const float *row_out) {
    const auto aligned = [](const float *at) { return reinterpret_cast<uintptr_t>(at) % 16 == 0; };
    return dim % kRowValues == 0 && aligned(row) && (row_y == nullptr || aligned(row_y)) && aligned(weight) &&
           aligned(row_out);
}

// Loads this thread's values of the tile from `base` and their weights, and with ADD y's (to add once all are loaded:
// a store before a load that may alias it would keep the load waiting for it). RUNS: whole_runs holds.
template <bool ADD, bool RUNS>
__device__ __forceinline__ void load_tile(const float *row, const float *row_y, const float *weight, int dim, int base,
                                          float (&v)[kRowValues], float (&y)[kRowValues], float (&w)[kRowValues]) {
    const int first = row_element(base, 0);
    if (RUNS && first < dim) {
        load_run<true>(row + first, v);  // past L1: a product's last block reads other blocks' writes
        load_run<false>(weight + first, w);
        if constexpr (ADD) {
            load_run<false>(row_y + first, y);
        } else {
#pragma unroll
            for (int i = 0; i < kRowValues; i++) y[i] = 0.f;
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < kRowValues; i++) {
        const int k = row_element(base, i);
        v[i] = k < dim ? __ldcg(row + k) : 0.f;
        w[i] = k < dim ? weight[k] : 0.f;
        y[i] = ADD && k < dim ? row_y[k] : 0.f;
    }
}

// With ADD, x += y for this thread's values of the tile from `base`, stored.
template <bool ADD, bool RUNS>
__device__ __forceinline__ void add_tile(float *row, int dim, int base, float (&v)[kRowValues],
                                         const float (&y)[kRowValues]) {
    if constexpr (ADD) {
#pragma unroll
        for (int i = 0; i < kRowValues; i++) v[i] += y[i];
        store_values<RUNS>(row, dim, row_element(base, 0), v);
    }
}

// Writes weight * v * inverse_rms of this thread's values of the tile from `base` (where row_out is set), and their
// int8 blocks.
template <bool RUNS>
__device__ __forceinline__ void write_tile(const float (&v)[kRowValues], const float (&w)[kRowValues],
                                           float inverse_rms, int dim, int base, float *row_out,
                                           int64_t first_block, const QuantizedOut &quantized) {
    float o[kRowValues];
#pragma unroll
    for (int i = 0; i < kRowValues; i++) o[i] = w[i] * (v[i] * inverse_rms);
    const int first = row_element(base, 0);
    if (row_out != nullptr) store_values<RUNS>(row_out, dim, first, o);
    if (quantized.q != nullptr) {  // the whole warp, as quantize_run's shuffles need
        quantize_run<kRowValues>(o, first_block + first / kQuantBlock, first < dim, quantized);
    }
}

// Tiles of a row that a thread holds at once: a row of up to that many tiles is loaded in one trip to memory. (The
// products' last block, 256 threads, norms Llama 3 8B's 4096 values in two tiles: four trips when each tile was
// loaded, then loaded again.)
constexpr int kHeldTiles = 2;

// 1 / rms of a row of dim values held as kHeldTiles tiles by the block's threads: each thread sums its squares tile by
// tile, value by value (the order every norm here takes, so their bits agree), then the block sums the threads'.
__device__ __forceinline__ float held_inverse_rms(const float (&v)[kHeldTiles][kRowValues], int dim, float eps) {
    float sum = 0.f;
#pragma unroll
    for (int j = 0; j < kHeldTiles; j++) {
#pragma unroll
        for (int i = 0; i < kRowValues; i++) sum = fmaf(v[j][i], v[j][i], sum);
    }
    return rsqrtf(block_sum(sum) / dim + eps);
}

// out = weight * x / rms(x) for one row (block), x += y first with ADD; where quantized.q is set, the normed row's
// int8 blocks for the integer products too. Each thread sums its squares tile by tile, whichever way the row is read,
// so the bits do not depend on it. A row longer than kHeldTiles tiles (blockDim x kRowValues) is read a second time.
template <bool ADD, bool RUNS>
__device__ __forceinline__ void norm_row_tiles(float *row, const float *row_y, const float *weight, int dim, float eps,
                                         float *row_out, int64_t first_block, const QuantizedOut &quantized) {
    const int tile = static_cast<int>(blockDim.x) * kRowValues;
    if (dim <= kHeldTiles * tile) {
        float v[kHeldTiles][kRowValues], y[kHeldTiles][kRowValues], w[kHeldTiles][kRowValues];
#pragma unroll
        for (int j = 0; j < kHeldTiles; j++) load_tile<ADD, RUNS>(row, row_y, weight, dim, j * tile, v[j], y[j], w[j]);
#pragma unroll
        for (int j = 0; j < kHeldTiles; j++) add_tile<ADD, RUNS>(row, dim, j * tile, v[j], y[j]);
        const float inverse_rms = held_inverse_rms(v, dim, eps);
#pragma unroll
        for (int j = 0; j < kHeldTiles; j++) {
            if (j * tile < dim) {
                write_tile<RUNS>(v[j], w[j], inverse_rms, dim, j * tile, row_out, first_block, quantized);
            }
        }
        return;
    }
    float sum = 0.f;
    float v[kRowValues], y[kRowValues], w[kRowValues];
    for (int base = 0; base < dim; base += tile) {
        load_tile<ADD, RUNS>(row, row_y, weight, dim, base, v, y, w);
        add_tile<ADD, RUNS>(row, dim, base, v, y);
#pragma unroll
        for (int i = 0; i < kRowValues; i++) sum = fmaf(v[i], v[i], sum);
    }
    const float inverse_rms = rsqrtf(block_sum(sum) / dim + eps);
    for (int base = 0; base < dim; base += tile) {
        load_tile<false, RUNS>(row, row_y, weight, dim, base, v, y, w);
        write_tile<RUNS>(v, w, inverse_rms, dim, base, row_out, first_block, quantized);
    }
}

// The int8 blocks of weight * x / rms(x) for one row of dim values by the block (and, where row_out is set, the F32
// values), bit for bit norm_row<false>'s: the same values summed in the same order, written the same way. It holds
// only the row's values, loading each tile's weights as it writes the tile (4-byte accesses, as the products' fused
// norm), for the products that norm their own input under a cap of 40 registers. A row longer than kHeldTiles tiles
// takes norm_row_tiles.
__device__ __forceinline__ void norm_row_held(const float *row, const float *weight, int dim, float eps, float *row_out,
                                              const QuantizedOut &quantized) {
    const int tile = static_cast<int>(blockDim.x) * kRowValues;
    if (dim > kHeldTiles * tile) {
        norm_row_tiles<false, false>(const_cast<float *>(row), nullptr, weight, dim, eps, row_out, 0, quantized);
        return;
    }
    float v[kHeldTiles][kRowValues];
#pragma unroll
    for (int j = 0; j < kHeldTiles; j++) {
#pragma unroll
        for (int i = 0; i < kRowValues; i++) {
            const int k = row_element(j * tile, i);
            v[j][i] = k < dim ? __ldcg(row + k) : 0.f;
        }
    }
    const float inverse_rms = held_inverse_rms(v, dim, eps);
#pragma unroll
    for (int j = 0; j < kHeldTiles; j++) {
        if (j * tile < dim) {
            float w[kRowValues];
#pragma unroll
            for (int i = 0; i < kRowValues; i++) {
                const int k = row_element(j * tile, i);
                w[i] = k < dim ? weight[k] : 0.f;
            }
            write_tile<false>(v[j], w, inverse_rms, dim, j * tile, row_out, 0, quantized);
        }
    }
}

// norm_row_tiles in 16-byte accesses where the row allows them: the two ways as separate instantiations, whose
// registers ptxas allocates apart (one function with both took 8-16 bytes of spills in the norms and fused products).
template <bool ADD>
__device__ __forceinline__ void norm_row(float *row, const float *row_y, const float *weight, int dim, float eps,
                                         float *row_out, int64_t first_block, const QuantizedOut &quantized) {
    if (whole_runs(dim, row, row_y, weight, row_out)) {
        norm_row_tiles<ADD, true>(row, row_y, weight, dim, eps, row_out, first_block, quantized);
    } else {
        norm_row_tiles<ADD, false>(row, row_y, weight, dim, eps, row_out, first_block, quantized);
    }
}

}  // namespace
}  // namespace zse

#endif
