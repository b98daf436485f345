// Causal attention over the KV cache (GQA, sliding window) with an online softmax, so no score array is stored.
//
// Decode (n == 1): one block per query head; its 8 warps take every 8th visible key, each warp keeps a running
// (max, sum, output) and the block merges the 8 partial results at the end. Paged: the same per row of a batch, keys
// and values found through each sequence's block table in the block pool (zse_cuda_paged_attention), a block taking
// up to 4 query heads of one KV head so that each key and value row is read once for them all, optionally split
// over the sequence (flash-decoding: blocks x rows are too few to fill a GPU at small batch and long context, so
// each row's keys are cut into runs attended by separate blocks, then merged by the last of them to finish).
// Prefill (n > 1): one block per (16-query tile, head); key/value tiles of 32 positions are staged in shared memory and
// reused by all 16 queries, flash-attention style.
// Paged prefill (zse_cuda_paged_prefill_attention): the same tiling over the block pool for prompt chunks, a tile being
// up to 16 consecutive rows of one sequence; Q.K^T and P.V are warp-level 16x16x16 products (mma.cuh): tensor cores
// on F16 tiles (an F16 KV cache, or an INT8 one's codes), FMAs on F32 ones.
#include <math.h>

#include "kv_rows.cuh"
#include "last_block.cuh"
#include "mma.cuh"
#include "quantize.cuh"
#include "overlap.cuh"
#include "status.cuh"
#include "warp.cuh"
#include "weights.cuh"  // the storage type codes name the KV rows' types

namespace zse {
namespace {

constexpr int kMaxHeadDim = 256;
constexpr int kDimsPerLane = kMaxHeadDim / kWarp;  // lane owns dims lane, lane + 32, ...
constexpr int kDecodeWarps = 8;
constexpr int kQueryTile = 16;
constexpr int kKeyTile = 32;
constexpr int kPrefillWarps = 4;
constexpr int kRowsPerWarp = kQueryTile / kPrefillWarps;
constexpr int kMaxSplits = 64;
// The counters at the start of a split workspace, one per (row, block of heads): the last of a row's splits to finish
// merges them (paged_attention_kernel).
constexpr int kSplitCounters = ZSE_CUDA_SPLIT_COUNTERS;

struct Shape {
    int heads, kv_heads, head_dim, window;
    float scale, soft_cap;  // logits are q·k times scale, then soft_cap·tanh(logit / soft_cap) where soft_cap > 0
    __device__ int kv_dim() const { return kv_heads * head_dim; }
    __device__ float logit(float dot) const {
        const float l = dot * scale;
        return soft_cap > 0.f ? soft_cap * tanhf(l / soft_cap) : l;
    }
    __device__ int first_visible(int position) const { return window == 0 ? 0 : max(0, position - window + 1); }
};

// Key rows in position order: position t is row t.
struct Contiguous {
    __device__ int64_t operator()(int t) const { return t; }
};

// Key rows in the block pool: position t is in block table[t / block_size] at t % block_size.
struct Paged {
    const int32_t *table;
    int block_size;
    __device__ int64_t operator()(int t) const {
        return static_cast<int64_t>(table[t / block_size]) * block_size + t % block_size;
    }
};

// Query heads first_head..first_head + G - 1 of one row (q, out point at the row's first head) against the keys at
// positions begin..end (inclusive; none when end < begin): the block's 8 warps take every 8th key, each keeping per
// head a running (max, sum, output), merged head by head at the end. With `partial` null the normalised result goes
// to out (zeros when no key was seen); otherwise the block's unnormalised state of head h goes to partial +
// h * partial_stride: [max, sum, output[head_dim]], for merge_splits to merge with the other parts of the row.
// G: consecutive heads of one KV group, so that each key and value row is read once for all of them (with GQA, 4
// heads a KV head in Llama 3 8B, a block per head read every row 4 times). DIMS: head dimensions a lane holds, 4
// (head_dim <= 128) or 8 (<= 256), which sizes the per-head registers. KEYS: the keys a warp loads at once (1, 2 or 4);
// the order each warp adds its keys in, so the bits, do not depend on it. INT8 rows (KV int8_t) come with their
// scales [slots, kv_heads] (kv_rows.cuh); the float types' are NULL.
template <int G, int DIMS, int KEYS, class Locate, class KV>
__device__ void attend_range(const float *__restrict__ q, int first_head, int begin, int end, Locate locate,
                             const KV *__restrict__ keys, const KV *__restrict__ values,
                             const float *__restrict__ key_scales, const float *__restrict__ value_scales,
                             const Shape &s, float *__restrict__ out, float *__restrict__ partial,
                             int64_t partial_stride, const QuantizedOut &quantized) {
    static_assert(G >= 1 && DIMS * kWarp <= kMaxHeadDim, "G heads of DIMS x 32 dimensions at most");
    __shared__ float warp_max_of[kDecodeWarps];
    __shared__ float warp_sum_of[kDecodeWarps];
    __shared__ float warp_out[kDecodeWarps][DIMS * kWarp];
    const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
    const int kv_head = first_head / (s.heads / s.kv_heads), kv_offset = kv_head * s.head_dim;
    float qr[G][DIMS], acc[G][DIMS], running_max[G], running_sum[G];
#pragma unroll
    for (int g = 0; g < G; g++) {
#pragma unroll
        for (int e = 0; e < DIMS; e++) {
            const int d = lane + e * kWarp;
            qr[g][e] = d < s.head_dim ? q[(first_head + g) * s.head_dim + d] : 0.f;
            acc[g][e] = 0.f;
        }
        running_max[g] = -INFINITY;
        running_sum[g] = 0.f;
    }
    // A warp's keys come KEYS at a time (t, t + 8, ...): their table entries, then their key and value rows, are loaded
    // together, and the next KEYS while these are scored and accumulated. One key at a time, a warp waited for memory
    // about once a key (twice before the next was loaded ahead): Llama 3 8B's 1-row decode attention, 16 splits of
    // about 38 positions a row, read 2.4 MB in 10.8 us a layer (224 GB/s; H200, ncu), a block a multiprocessor.
    KV next_k[KEYS][DIMS], next_v[KEYS][DIMS];
    float next_key_scale[KEYS], next_value_scale[KEYS];  // INT8 rows only
    const auto load = [&](int from) {  // keys past `end` load end's rows, never used
        int64_t rows[KEYS];
#pragma unroll
        for (int j = 0; j < KEYS; j++) rows[j] = locate(min(from + j * kDecodeWarps, end));
#pragma unroll
        for (int j = 0; j < KEYS; j++) {
            if constexpr (kScaledRows<KV>) {
                next_key_scale[j] = key_scales[rows[j] * s.kv_heads + kv_head];
                next_value_scale[j] = value_scales[rows[j] * s.kv_heads + kv_head];
            }
            const KV *k = keys + rows[j] * s.kv_dim() + kv_offset;
            const KV *v = values + rows[j] * s.kv_dim() + kv_offset;
#pragma unroll
            for (int e = 0; e < DIMS; e++) {
                const int d = lane + e * kWarp;
                next_k[j][e] = d < s.head_dim ? k[d] : KV{};
                next_v[j][e] = d < s.head_dim ? v[d] : KV{};
            }
        }
    };
    if (begin + warp <= end) load(begin + warp);
    for (int t = begin + warp; t <= end; t += KEYS * kDecodeWarps) {
        float kt[KEYS][DIMS], vt[KEYS][DIMS], key_scale[KEYS], value_scale[KEYS];
#pragma unroll
        for (int j = 0; j < KEYS; j++) {
#pragma unroll
            for (int e = 0; e < DIMS; e++) {
                kt[j][e] = mma_to_float(next_k[j][e]);
                vt[j][e] = mma_to_float(next_v[j][e]);
            }
            if constexpr (kScaledRows<KV>) {
                key_scale[j] = next_key_scale[j];
                value_scale[j] = next_value_scale[j];
            }
        }
        if (t + KEYS * kDecodeWarps <= end) load(t + KEYS * kDecodeWarps);
#pragma unroll
        for (int j = 0; j < KEYS; j++) {
            if (t + j * kDecodeWarps > end) break;
#pragma unroll
            for (int g = 0; g < G; g++) {
                float dot = 0.f;
#pragma unroll
                for (int e = 0; e < DIMS; e++) {
                    if (lane + e * kWarp < s.head_dim) dot = fmaf(qr[g][e], kt[j][e], dot);
                }
                dot = warp_sum(dot);
                if constexpr (kScaledRows<KV>) dot *= key_scale[j];
                const float score = s.logit(dot);
                const float new_max = fmaxf(running_max[g], score);
                const float correction = expf(running_max[g] - new_max);
                const float p = expf(score - new_max);
                running_sum[g] = running_sum[g] * correction + p;
                float weight = p;
                if constexpr (kScaledRows<KV>) weight *= value_scale[j];
#pragma unroll
                for (int e = 0; e < DIMS; e++) {
                    acc[g][e] = acc[g][e] * correction + (lane + e * kWarp < s.head_dim ? weight * vt[j][e] : 0.f);
                }
                running_max[g] = new_max;
            }
        }
    }
#pragma unroll
    for (int g = 0; g < G; g++) {
        const int head = first_head + g;
        if (g > 0) __syncthreads();  // the previous head's merge has read the shared arrays
        if (lane == 0) {
            warp_max_of[warp] = running_max[g];
            warp_sum_of[warp] = running_sum[g];
        }
#pragma unroll
        for (int e = 0; e < DIMS; e++) warp_out[warp][lane + e * kWarp] = acc[g][e];
        __syncthreads();
        float block_max = -INFINITY;
        for (int w = 0; w < kDecodeWarps; w++) block_max = fmaxf(block_max, warp_max_of[w]);
        float total = 0.f;
        for (int w = 0; w < kDecodeWarps; w++) {
            if (warp_sum_of[w] > 0.f) total += warp_sum_of[w] * expf(warp_max_of[w] - block_max);
        }
        float *state = partial == nullptr ? nullptr : partial + head * partial_stride;
        if (state != nullptr && threadIdx.x == 0) {
            state[0] = block_max;
            state[1] = total;
        }
        for (int d = threadIdx.x; d < s.head_dim; d += blockDim.x) {
            float sum = 0.f;
            for (int w = 0; w < kDecodeWarps; w++) {
                if (warp_sum_of[w] > 0.f) sum += warp_out[w][d] * expf(warp_max_of[w] - block_max);
            }
            if (state != nullptr) {
                state[2 + d] = sum;
            } else {
                const float v = total > 0.f ? sum / total : 0.f;
                out[head * s.head_dim + d] = v;
                if (quantized.q != nullptr) quantize_block(v, (head * s.head_dim + d) / kQuantBlock, quantized);
            }
        }
    }
}

// The quantized output of the row that starts at element row_start (a multiple of 32), or none.
__device__ __forceinline__ QuantizedOut quantized_row(const QuantizedOut &quantized, int64_t row_start) {
    if (quantized.q == nullptr) return quantized;
    return {quantized.q + row_start, quantized.d + row_start / kQuantBlock, quantized.s + row_start / kQuantBlock};
}

__global__ void __launch_bounds__(kDecodeWarps * kWarp) attention_decode_kernel(
    const float *__restrict__ q, int position, const float *__restrict__ keys, const float *__restrict__ values,
    Shape s, float *__restrict__ out) {
    attend_range<1, kDimsPerLane, 1>(q, blockIdx.x, s.first_visible(position), position, Contiguous{}, keys, values,
                                     nullptr, nullptr, s, out, nullptr, 0, QuantizedOut{});
}

// Merges the `splits` partial states of heads first_head..first_head + G - 1 of one row (parts: the row's states
// [heads, splits, head_dim + 2], written by the blocks of the other splits: read past L1), each part rescaled from its
// own max to the common one, into out (the row's first head). Warp g reads every part's max and sum of head g at
// once, a lane a part (two where splits > 32), and leaves the parts' rescale factors in shared memory; then the
// block's threads take the heads' output dimensions, each summing the parts in order with eight loads in flight.
// (A kernel of its own after the attention, each thread walking the parts' maxima, sums and outputs one dependent
// load after another, took 12 us a call on an H200 at 16 splits, as long as the attention.)
template <int G>
__device__ void merge_splits(const float *parts, int first_head, int splits, const Shape &s, float *out,
                             const QuantizedOut &quantized) {
    static_assert(G <= kDecodeWarps, "a warp a head");
    __shared__ float factor_of[G][kMaxSplits], sum_of[G][kMaxSplits];
    const int stride = s.head_dim + 2;
    const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
    if (warp < G) {
        const float *head_parts = parts + static_cast<int64_t>(first_head + warp) * splits * stride;
        float max_of[kMaxSplits / kWarp], part_sum[kMaxSplits / kWarp];
        float common = -INFINITY;
#pragma unroll
        for (int j = 0; j < kMaxSplits / kWarp; j++) {
            const int z = lane + j * kWarp;
            max_of[j] = z < splits ? __ldcg(head_parts + z * stride) : -INFINITY;
            part_sum[j] = z < splits ? __ldcg(head_parts + z * stride + 1) : 0.f;
            if (part_sum[j] > 0.f) common = fmaxf(common, max_of[j]);
        }
        common = warp_max(common);
#pragma unroll
        for (int j = 0; j < kMaxSplits / kWarp; j++) {
            const int z = lane + j * kWarp;
            if (z < splits) {
                factor_of[warp][z] = part_sum[j] > 0.f ? expf(max_of[j] - common) : 0.f;
                sum_of[warp][z] = part_sum[j];
            }
        }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < G * s.head_dim; i += blockDim.x) {
        const int g = i / s.head_dim, d = i % s.head_dim;
        const float *head_parts = parts + static_cast<int64_t>(first_head + g) * splits * stride;
        float total = 0.f;
        for (int z = 0; z < splits; z++) {
            if (sum_of[g][z] > 0.f) total += sum_of[g][z] * factor_of[g][z];
        }
        float sum = 0.f;
#pragma unroll 8
        for (int z = 0; z < splits; z++) {
            const float part = __ldcg(head_parts + z * stride + 2 + d);
            if (sum_of[g][z] > 0.f) sum += part * factor_of[g][z];
        }
        const float v = total > 0.f ? sum / total : 0.f;
        const int at = (first_head + g) * s.head_dim + d;
        out[at] = v;
        if (quantized.q != nullptr) quantize_block(v, at / kQuantBlock, quantized);
    }
}

// Row blockIdx.y of a batch over the block pool, query heads G * blockIdx.x on (attend_range): its position and the
// offset of its sequence's block table. A negative position is a padding row (a batch run at a larger recorded size):
// no key, zeros out. Flash-decoding: with gridDim.z == splits > 1 the row's visible keys are cut into `splits` runs of
// equal length, block z takes run z and writes its partial states to workspace [rows, heads, splits, head_dim + 2];
// the last of the row's `splits` blocks of these heads to finish (counters: one a row and block of heads, zero between
// launches) merges them into out. (A merge kernel after this one took 5.6 us a call on an H200, 179 us a 1-row step.)
template <int G, int DIMS, int KEYS, class KV>
__global__ void __launch_bounds__(kDecodeWarps * kWarp, 1) paged_attention_kernel(
    const float *__restrict__ q, const int32_t *__restrict__ positions, const int32_t *__restrict__ table_offsets,
    const int32_t *__restrict__ tables, int block_size, const KV *__restrict__ keys, const KV *__restrict__ values,
    const float *__restrict__ key_scales, const float *__restrict__ value_scales, Shape s, float *__restrict__ out,
    float *__restrict__ workspace, int *__restrict__ counters, QuantizedOut quantized) {
    let_next_grid_start();
    wait_for_previous_grid();
    const int row = blockIdx.y;
    const int64_t row_start = static_cast<int64_t>(row) * s.heads * s.head_dim;
    const int position = positions[row];
    const int first = position < 0 ? 0 : s.first_visible(position);
    const int splits = gridDim.z;
    int begin = first, end = position;
    float *partial = nullptr;
    if (splits > 1) {
        const int run = (position - first + splits) / splits;  // ceil(count / splits); count = position - first + 1
        begin = first + blockIdx.z * run;
        end = min(position, begin + run - 1);
        partial = workspace + (static_cast<int64_t>(row) * s.heads * splits + blockIdx.z) * (s.head_dim + 2);
    }
    const int32_t *table = tables + (position < 0 ? 0 : table_offsets[row]);
    attend_range<G, DIMS, KEYS>(q + row_start, G * blockIdx.x, begin, end, Paged{table, block_size}, keys, values,
                                key_scales, value_scales, s, out + row_start, partial,
                                static_cast<int64_t>(splits) * (s.head_dim + 2), quantized_row(quantized, row_start));
    if (splits > 1 && completes(counters + static_cast<int64_t>(row) * gridDim.x + blockIdx.x, splits)) {
        merge_splits<G>(workspace + static_cast<int64_t>(row) * s.heads * splits * (s.head_dim + 2), G * blockIdx.x,
                        splits, s, out + row_start, quantized_row(quantized, row_start));
    }
}

// The paged decode kernel for heads_per_block (1, 2 or 4) heads a block, head dimensions in registers of 4 or 8 a lane;
// a warp loads 4 keys at a time, 2 where a lane holds 8 dimensions (whose registers four keys' rows would outgrow), or
// one (one_key: the kernel before, whose 80 registers let three blocks share a multiprocessor where the 4-key one's
// 164 let one, to compare them on a GPU).
template <int G, class KV>
auto paged_decode_variant(bool wide, bool one_key) {
    if (one_key) return wide ? paged_attention_kernel<G, 8, 1, KV> : paged_attention_kernel<G, 4, 1, KV>;
    return wide ? paged_attention_kernel<G, 8, 2, KV> : paged_attention_kernel<G, 4, 4, KV>;
}

template <class KV>
auto paged_decode_kernel(int heads_per_block, int head_dim, bool one_key) {
    const bool wide = head_dim > 4 * kWarp;
    switch (heads_per_block) {
        case 4: return paged_decode_variant<4, KV>(wide, one_key);
        case 2: return paged_decode_variant<2, KV>(wide, one_key);
        default: return paged_decode_variant<1, KV>(wide, one_key);
    }
}

// Row blockIdx.x of k and v [rows, kv_dim] into slot slots[row] of the pool's keys and values [slots, kv_dim]; a
// negative slot is a padding row, not stored.
template <class KV>
__global__ void store_kv_kernel(const float *__restrict__ k, const float *__restrict__ v, int kv_dim,
                                const int32_t *__restrict__ slots, KV *__restrict__ keys, KV *__restrict__ values) {
    const int slot = slots[blockIdx.x];
    if (slot < 0) return;
    const int64_t from = static_cast<int64_t>(blockIdx.x) * kv_dim;
    const int64_t to = static_cast<int64_t>(slot) * kv_dim;
    for (int d = threadIdx.x; d < kv_dim; d += blockDim.x) {
        keys[to + d] = mma_from_float<KV>(k[from + d]);
        values[to + d] = mma_from_float<KV>(v[from + d]);
    }
}

__global__ void __launch_bounds__(kPrefillWarps * kWarp) attention_prefill_kernel(
    const float *__restrict__ q, int n, int start_pos, const float *__restrict__ keys,
    const float *__restrict__ values, Shape s, float *__restrict__ out) {
    ZSE_DYNAMIC_SHARED(float, shared);
    const int hd = s.head_dim;
    float *qs = shared;                       // [kQueryTile][hd]
    float *ks = qs + kQueryTile * hd;         // [kKeyTile][hd + 1]: the padding keeps lanes on distinct banks
    float *vs = ks + kKeyTile * (hd + 1);     // [kKeyTile][hd]
    const int head = blockIdx.y;
    const int q0 = blockIdx.x * kQueryTile;
    const int rows = min(kQueryTile, n - q0);
    const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
    const int q_dim = s.heads * hd;
    const int kv_offset = (head / (s.heads / s.kv_heads)) * hd;

    for (int i = threadIdx.x; i < kQueryTile * hd; i += blockDim.x) {
        int r = i / hd, d = i % hd;
        qs[i] = r < rows ? q[static_cast<int64_t>(q0 + r) * q_dim + head * hd + d] : 0.f;
    }
    float running_max[kRowsPerWarp], running_sum[kRowsPerWarp], acc[kRowsPerWarp][kDimsPerLane];
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; r++) {
        running_max[r] = -INFINITY;
        running_sum[r] = 0.f;
#pragma unroll
        for (int e = 0; e < kDimsPerLane; e++) acc[r][e] = 0.f;
    }
    const int first_key = s.first_visible(start_pos + q0);
    const int last_key = start_pos + q0 + rows - 1;
    for (int t0 = first_key; t0 <= last_key; t0 += kKeyTile) {
        __syncthreads();  // the previous tile is no longer read
        for (int i = threadIdx.x; i < kKeyTile * hd; i += blockDim.x) {
            int t = i / hd, d = i % hd;
            bool inside = t0 + t <= last_key;
            int64_t at = static_cast<int64_t>(t0 + t) * s.kv_dim() + kv_offset + d;
            ks[t * (hd + 1) + d] = inside ? keys[at] : 0.f;
            vs[t * hd + d] = inside ? values[at] : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < kRowsPerWarp; r++) {
            const int row = warp * kRowsPerWarp + r;
            if (row >= rows) continue;  // uniform across the warp
            const int position = start_pos + q0 + row;
            const int key = t0 + lane;
            const bool visible = key <= position && key >= s.first_visible(position);
            float score = -INFINITY;
            if (visible) {
                float dot = 0.f;
                for (int d = 0; d < hd; d++) dot = fmaf(qs[row * hd + d], ks[lane * (hd + 1) + d], dot);
                score = s.logit(dot);
            }
            const float new_max = fmaxf(running_max[r], warp_max(score));
            if (new_max == -INFINITY) continue;  // nothing visible yet in this row
            const float correction = expf(running_max[r] - new_max);
            const float p = visible ? expf(score - new_max) : 0.f;
            running_sum[r] = running_sum[r] * correction + warp_sum(p);
#pragma unroll
            for (int e = 0; e < kDimsPerLane; e++) acc[r][e] *= correction;
            for (int t = 0; t < kKeyTile; t++) {
                const float pt = __shfl_sync(0xffffffffu, p, t);
                if (pt == 0.f) continue;  // uniform: every lane got the same pt
#pragma unroll
                for (int e = 0; e < kDimsPerLane; e++) {
                    int d = lane + e * kWarp;
                    if (d < hd) acc[r][e] = fmaf(pt, vs[t * hd + d], acc[r][e]);
                }
            }
            running_max[r] = new_max;
        }
    }
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; r++) {
        const int row = warp * kRowsPerWarp + r;
        if (row >= rows) continue;
#pragma unroll
        for (int e = 0; e < kDimsPerLane; e++) {
            int d = lane + e * kWarp;
            if (d < hd) out[static_cast<int64_t>(q0 + row) * q_dim + head * hd + d] = acc[r][e] / running_sum[r];
        }
    }
}

// ---- Paged prefill: tiles of consecutive rows of one sequence over the block pool, products on tensor cores ----

constexpr int kTiledQueries = 16;  // one MMA tile of query rows
constexpr int kTiledWarps = 4;

// Keys per step: 64 for 16-bit tiles, 32 for F32 ones (their K and V tiles at head dim 256 would not fit otherwise).
template <class T>
constexpr int kTiledKeys = sizeof(T) == 2 ? 64 : 32;

// The shared-memory plan of paged_prefill_kernel<T> at a head dim: wmma wants 32-byte aligned tiles and leading
// dimensions in multiples of 8 elements; the extra 8 elements per row also move rows across banks.
template <class T>
struct PrefillPlan {
    int padded_dim;  // head dim rounded up to the MMA tile
    int ld_t, ld_s, ld_p, ld_o;
    size_t q, k, v, s, p, o, stats, scales, bytes;  // byte offsets of each region, then the total

    __host__ __device__ static size_t round_up(size_t n) { return (n + 127) / 128 * 128; }

    // scaled: room for the staged keys' and values' INT8 scales too
    __host__ __device__ PrefillPlan(int head_dim, bool scaled) {
        constexpr int keys = kTiledKeys<T>;
        padded_dim = (head_dim + kMmaTile - 1) / kMmaTile * kMmaTile;
        ld_t = padded_dim + 8;
        ld_s = keys + 8;
        ld_p = keys + 8;
        ld_o = padded_dim + 8;
        q = 0;
        k = q + round_up(sizeof(T) * kTiledQueries * ld_t);
        v = k + round_up(sizeof(T) * keys * ld_t);
        s = v + round_up(sizeof(T) * keys * ld_t);
        p = s + round_up(sizeof(float) * kTiledQueries * ld_s);
        o = p + round_up(sizeof(T) * kTiledQueries * ld_p);
        stats = o + round_up(sizeof(float) * kTiledQueries * ld_o);
        scales = stats + round_up(sizeof(float) * 3 * kTiledQueries);
        bytes = scales + (scaled ? round_up(sizeof(float) * 2 * keys) : 0);
    }
};

// Stages keys t0 .. t0 + kTiledKeys - 1 of K and V into ks and vs (rows of ld elements of T; zeros past last_key and
// in the padded head dims), from the pool's rows of KV: T itself, or an INT8 pool's codes, which F16 holds exactly.
// Where a row's head dims are whole 16-byte chunks, 16 bytes a load, 4 loads of each in flight a thread before it
// stores them. Why: element by element, each 2-byte load locating its key's block first, the copy was a chain of
// dependent trips for every thread (in the fifth GPU run, attention took 15.4 ms of a 512-token prefill's 91.4
// profiled: 0.48 ms a layer).
template <class T, class KV>
__device__ __forceinline__ void stage_keys(const Paged &locate, int t0, int last_key, const KV *__restrict__ keys,
                                           const KV *__restrict__ values, int64_t kv_dim, int kv_offset, int hd,
                                           int pd, int ld, T *ks, T *vs) {
    constexpr int kKeys = kTiledKeys<T>, kVector = 16 / sizeof(KV), kInFlight = 4;
    const auto widen = [](KV x) {
        if constexpr (sizeof(KV) == sizeof(T)) {
            return x;
        } else {
            return mma_from_float<T>(mma_to_float(x));
        }
    };
    const bool whole = hd % kVector == 0 &&
                       (reinterpret_cast<uintptr_t>(keys) | reinterpret_cast<uintptr_t>(values)) % 16 == 0;
    if (!whole) {
        for (int i = threadIdx.x; i < kKeys * pd; i += blockDim.x) {
            const int t = i / pd, d = i % pd;
            KV k{}, v{};  // zero bits: 0.0 in F16 and F32, code 0
            if (t0 + t <= last_key && d < hd) {
                const int64_t at = locate(t0 + t) * kv_dim + kv_offset + d;
                k = keys[at];
                v = values[at];
            }
            ks[t * ld + d] = widen(k);
            vs[t * ld + d] = widen(v);
        }
        return;
    }
    const int chunks = pd / kVector, total = kKeys * chunks;  // chunks of a staged row (past hd: zeros)
    for (int first = threadIdx.x; first < total; first += kInFlight * blockDim.x) {
        uint4 k[kInFlight], v[kInFlight];
#pragma unroll
        for (int u = 0; u < kInFlight; u++) {
            const int i = first + u * blockDim.x, t = i / chunks, d = i % chunks * kVector;
            k[u] = v[u] = uint4{};  // zero bits
            if (i < total && t0 + t <= last_key && d < hd) {
                const int64_t at = locate(t0 + t) * kv_dim + kv_offset + d;
                k[u] = *reinterpret_cast<const uint4 *>(keys + at);
                v[u] = *reinterpret_cast<const uint4 *>(values + at);
            }
        }
#pragma unroll
        for (int u = 0; u < kInFlight; u++) {
            const int i = first + u * blockDim.x, t = i / chunks, d = i % chunks * kVector;
            if (i >= total) continue;
            if constexpr (sizeof(KV) == sizeof(T)) {
                *reinterpret_cast<uint4 *>(ks + t * ld + d) = k[u];
                *reinterpret_cast<uint4 *>(vs + t * ld + d) = v[u];
            } else {
                const KV *kc = reinterpret_cast<const KV *>(&k[u]), *vc = reinterpret_cast<const KV *>(&v[u]);
#pragma unroll
                for (int c = 0; c < kVector; c++) {
                    ks[t * ld + d + c] = widen(kc[c]);
                    vs[t * ld + d + c] = widen(vc[c]);
                }
            }
        }
    }
}

// The scales of an INT8 pool's staged keys (kv_rows.cuh): each key's scale of its key row and of its value row into
// key_scale_of and value_scale_of (0 past last_key), for the block to scale its products by.
__device__ __forceinline__ void stage_scales(const Paged &locate, int t0, int last_key, int keys,
                                             const float *__restrict__ key_scales,
                                             const float *__restrict__ value_scales, int kv_heads, int kv_head,
                                             float *key_scale_of, float *value_scale_of) {
    for (int t = threadIdx.x; t < keys; t += blockDim.x) {
        const int64_t row = t0 + t <= last_key ? locate(t0 + t) * kv_heads + kv_head : -1;
        key_scale_of[t] = row < 0 ? 0.f : key_scales[row];
        value_scale_of[t] = row < 0 ? 0.f : value_scales[row];
    }
}

// One block per (tile blockIdx.x, head blockIdx.y). Tile i is rows tiles[2i] .. tiles[2i] + tiles[2i + 1] - 1 of the
// batch: consecutive positions of one sequence (the host builds the list). The queries stay in shared memory as T;
// each step stages `keys` positions of K and V (rounded to T), computes S = Q.K^T, updates every row's running max and
// sum and writes P = exp(S - max) as T, rescales the float output tile and adds P.V. A padding tile (negative
// position) writes zeros. KV: the pool's row type, T itself or (INT8 rows, with their scales) int8_t, whose codes the
// F16 tiles hold: S's columns are then scaled by their keys' scales before the softmax, and P's by their values'
// (q.k = scale * sum(q * code), out += (p * scale) * code, as the CPU computes them).
template <class T, class KV>
__global__ void __launch_bounds__(kTiledWarps * kWarp) paged_prefill_kernel(
    const float *__restrict__ q, const int32_t *__restrict__ positions, const int32_t *__restrict__ table_offsets,
    const int32_t *__restrict__ tables, const int32_t *__restrict__ tiles, int block_size,
    const KV *__restrict__ keys, const KV *__restrict__ values, const float *__restrict__ key_scales,
    const float *__restrict__ value_scales, Shape s, float *__restrict__ out) {
    constexpr int kKeys = kTiledKeys<T>;
    ZSE_DYNAMIC_SHARED(float, shared);
    const PrefillPlan<T> plan(s.head_dim, kScaledRows<KV>);
    char *base = reinterpret_cast<char *>(shared);
    T *qs = reinterpret_cast<T *>(base + plan.q);
    T *ks = reinterpret_cast<T *>(base + plan.k);
    T *vs = reinterpret_cast<T *>(base + plan.v);
    float *ss = reinterpret_cast<float *>(base + plan.s);
    T *ps = reinterpret_cast<T *>(base + plan.p);
    float *os = reinterpret_cast<float *>(base + plan.o);
    float *row_max = reinterpret_cast<float *>(base + plan.stats);
    float *row_sum = row_max + kTiledQueries;
    float *row_scale = row_sum + kTiledQueries;
    float *key_scale_of = reinterpret_cast<float *>(base + plan.scales);  // INT8 rows: the staged keys' scales
    float *value_scale_of = key_scale_of + kKeys;

    const int hd = s.head_dim, pd = plan.padded_dim;
    const int head = blockIdx.y;
    // at most a tile's rows, whatever the tables hold: more would run past the tile's shared memory
    const int row0 = tiles[2 * blockIdx.x], rows = min(tiles[2 * blockIdx.x + 1], kTiledQueries);
    const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
    const int64_t q_dim = static_cast<int64_t>(s.heads) * hd;
    const int64_t kv_dim = s.kv_dim();
    const int kv_offset = (head / (s.heads / s.kv_heads)) * hd;
    const int p0 = positions[row0];
    if (p0 < 0) {
        for (int i = threadIdx.x; i < rows * hd; i += blockDim.x) {
            out[(row0 + i / hd) * q_dim + head * hd + i % hd] = 0.f;
        }
        return;
    }
    const Paged locate{tables + table_offsets[row0], block_size};

    for (int i = threadIdx.x; i < kTiledQueries * pd; i += blockDim.x) {
        const int r = i / pd, d = i % pd;
        const float x = r < rows && d < hd ? q[(row0 + r) * q_dim + head * hd + d] : 0.f;
        qs[r * plan.ld_t + d] = mma_from_float<T>(x);
        os[r * plan.ld_o + d] = 0.f;
    }
    if (threadIdx.x < kTiledQueries) {
        row_max[threadIdx.x] = -INFINITY;
        row_sum[threadIdx.x] = 0.f;
    }
    const int last_key = p0 + rows - 1;
    for (int t0 = s.first_visible(p0); t0 <= last_key; t0 += kKeys) {
        __syncthreads();  // the previous step's tiles are no longer read
        stage_keys(locate, t0, last_key, keys, values, kv_dim, kv_offset, hd, pd, plan.ld_t, ks, vs);
        if constexpr (kScaledRows<KV>) {
            stage_scales(locate, t0, last_key, kKeys, key_scales, value_scales, s.kv_heads, kv_offset / hd,
                         key_scale_of, value_scale_of);
        }
        __syncthreads();
        for (int block = warp; block < kKeys / kMmaTile; block += kTiledWarps) {  // S = Q.K^T, a 16-key block a warp
            MmaTile<T> acc;
            acc.zero();
            for (int kk = 0; kk < pd; kk += kMmaTile) {
                multiply_tiles<false>(acc, qs + kk, plan.ld_t, ks + block * kMmaTile * plan.ld_t + kk, plan.ld_t);
            }
            acc.store(ss + block * kMmaTile, plan.ld_s);
        }
        __syncthreads();
        for (int r = warp; r < kTiledQueries; r += kTiledWarps) {  // online softmax, a row a warp
            const int position = p0 + r;
            const int first = s.first_visible(position);
            float score[kKeys / kWarp];
            float tile_max = -INFINITY;
#pragma unroll
            for (int e = 0; e < kKeys / kWarp; e++) {
                const int key = t0 + lane + e * kWarp;
                const bool visible = r < rows && key <= position && key >= first;
                float dot = ss[r * plan.ld_s + lane + e * kWarp];
                if constexpr (kScaledRows<KV>) dot *= key_scale_of[lane + e * kWarp];
                score[e] = visible ? s.logit(dot) : -INFINITY;
                tile_max = fmaxf(tile_max, score[e]);
            }
            const float old_max = row_max[r];
            const float new_max = fmaxf(old_max, warp_max(tile_max));
            float sum = 0.f;
#pragma unroll
            for (int e = 0; e < kKeys / kWarp; e++) {
                const float p = score[e] == -INFINITY ? 0.f : expf(score[e] - new_max);
                sum += p;
                float weight = p;
                if constexpr (kScaledRows<KV>) weight *= value_scale_of[lane + e * kWarp];
                ps[r * plan.ld_p + lane + e * kWarp] = mma_from_float<T>(weight);
            }
            sum = warp_sum(sum);
            __syncwarp();  // every lane has read row_max[r] before lane 0 replaces it
            if (lane == 0) {
                const float correction = new_max == -INFINITY ? 1.f : expf(old_max - new_max);
                row_scale[r] = correction;
                row_sum[r] = row_sum[r] * correction + sum;
                row_max[r] = new_max;
            }
        }
        __syncthreads();
        for (int block = warp; block < pd / kMmaTile; block += kTiledWarps) {  // O = O * correction + P.V
            float *o = os + block * kMmaTile;
            for (int i = lane; i < kMmaTile * kMmaTile; i += kWarp) {
                o[(i / kMmaTile) * plan.ld_o + i % kMmaTile] *= row_scale[i / kMmaTile];
            }
            __syncwarp();
            MmaTile<T> acc;
            acc.load(o, plan.ld_o);
            for (int kk = 0; kk < kKeys; kk += kMmaTile) {
                multiply_tiles<true>(acc, ps + kk, plan.ld_p, vs + kk * plan.ld_t + block * kMmaTile, plan.ld_t);
            }
            acc.store(o, plan.ld_o);
        }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < rows * hd; i += blockDim.x) {
        const int r = i / hd, d = i % hd;
        out[(row0 + r) * q_dim + head * hd + d] = row_sum[r] > 0.f ? os[r * plan.ld_o + d] / row_sum[r] : 0.f;
    }
}

template <class T, class KV>
int launch_paged_prefill(dim3 grid, const float *q, const int32_t *positions, const int32_t *table_offsets,
                         const int32_t *tables, const int32_t *tiles, int block_size, const void *keys,
                         const void *values, const float *key_scales, const float *value_scales, const Shape &shape,
                         float *out, cudaStream_t stream) {
    const size_t bytes = PrefillPlan<T>(shape.head_dim, kScaledRows<KV>).bytes;
    if (bytes > max_block_shared()) {
        // F32 rows of 256 dimensions take 105 KB, more than sm_86 and sm_89 give a block (99 KB)
        return refuse("zse_cuda_paged_prefill_attention: this GPU gives a block less shared memory than a prompt "
                      "tile of this KV cache type and head dim takes (an F16 or INT8 cache takes less)");
    }
    const auto kernel = paged_prefill_kernel<T, KV>;
    if (bytes > 48 * 1024) {
        ZSE_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)),
                  "cudaFuncSetAttribute(paged_prefill_kernel)");
    }
    ZSE_LAUNCH(kernel, grid, kTiledWarps * kWarp, bytes, stream)(
        q, positions, table_offsets, tables, tiles, block_size, static_cast<const KV *>(keys),
        static_cast<const KV *>(values), key_scales, value_scales, shape, out);
    return launched("paged_prefill_kernel");
}

size_t prefill_shared_bytes(int head_dim) {
    return sizeof(float) * (static_cast<size_t>(kQueryTile) * head_dim + static_cast<size_t>(kKeyTile) * (head_dim + 1) +
                            static_cast<size_t>(kKeyTile) * head_dim);
}

}  // namespace
}  // namespace zse

extern "C" int zse_cuda_attention(const float *q, int n, int start_pos, const float *keys, const float *values,
                                  int heads, int kv_heads, int head_dim, int sliding_window, float *out,
                                  void *stream) {
    using namespace zse;
    ZSE_REQUIRE(q != nullptr && keys != nullptr && values != nullptr && out != nullptr,
                "zse_cuda_attention: NULL pointer");
    ZSE_REQUIRE(n > 0 && start_pos >= 0, "zse_cuda_attention: n must be positive and start_pos >= 0");
    ZSE_REQUIRE(heads > 0 && kv_heads > 0 && heads % kv_heads == 0,
                "zse_cuda_attention: heads must be a positive multiple of kv_heads");
    ZSE_REQUIRE(head_dim > 0 && head_dim <= kMaxHeadDim, "zse_cuda_attention: head_dim must be 1..256");
    ZSE_REQUIRE(sliding_window >= 0, "zse_cuda_attention: sliding_window must be >= 0");
    Shape shape{heads, kv_heads, head_dim, sliding_window, 1.f / sqrtf(static_cast<float>(head_dim)), 0.f};
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (n == 1) {
        ZSE_LAUNCH(attention_decode_kernel, heads, kDecodeWarps * kWarp, 0, s)(q, start_pos, keys, values, shape, out);
        return launched("attention_decode_kernel");
    }
    const size_t shared_bytes = prefill_shared_bytes(head_dim);
    if (shared_bytes > 48 * 1024) {
        ZSE_CHECK(cudaFuncSetAttribute(attention_prefill_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(shared_bytes)),
                  "cudaFuncSetAttribute(attention_prefill_kernel)");
    }
    dim3 grid((n + kQueryTile - 1) / kQueryTile, heads);
    ZSE_LAUNCH(attention_prefill_kernel, grid, kPrefillWarps * kWarp, shared_bytes, s)(q, n, start_pos, keys, values, shape,
                                                                             out);
    return launched("attention_prefill_kernel");
}

extern "C" int zse_cuda_paged_attention(const float *q, int rows, const int32_t *positions,
                                        const int32_t *table_offsets, const int32_t *tables, int block_size,
                                        const void *keys, const void *values, const float *key_scales,
                                        const float *value_scales, int kv_type, int heads, int kv_heads,
                                        int head_dim, int sliding_window, float scale, float soft_cap, int splits,
                                        int heads_per_block, int keys_at_once, float *workspace, float *out,
                                        int8_t *out_q, float *out_d, float *out_s, void *stream) {
    using namespace zse;
    ZSE_REQUIRE(q != nullptr && positions != nullptr && table_offsets != nullptr && tables != nullptr &&
                    keys != nullptr && values != nullptr && out != nullptr,
                "zse_cuda_paged_attention: NULL pointer");
    ZSE_REQUIRE(rows > 0 && rows <= 65535, "zse_cuda_paged_attention: rows must be 1..65535");
    ZSE_REQUIRE(block_size > 0, "zse_cuda_paged_attention: block_size must be positive");
    ZSE_REQUIRE(heads > 0 && kv_heads > 0 && heads % kv_heads == 0,
                "zse_cuda_paged_attention: heads must be a positive multiple of kv_heads");
    ZSE_REQUIRE(head_dim > 0 && head_dim <= kMaxHeadDim, "zse_cuda_paged_attention: head_dim must be 1..256");
    ZSE_REQUIRE(sliding_window >= 0, "zse_cuda_paged_attention: sliding_window must be >= 0");
    ZSE_REQUIRE(scale > 0.f && soft_cap >= 0.f, "zse_cuda_paged_attention: scale must be positive, soft_cap >= 0");
    ZSE_REQUIRE(splits >= 1 && splits <= kMaxSplits, "zse_cuda_paged_attention: splits must be 1..64");
    ZSE_REQUIRE(splits == 1 || workspace != nullptr, "zse_cuda_paged_attention: splits > 1 needs a workspace");
    ZSE_REQUIRE((heads_per_block == 1 || heads_per_block == 2 || heads_per_block == 4) &&
                    (heads / kv_heads) % heads_per_block == 0,
                "zse_cuda_paged_attention: heads_per_block must be 1, 2 or 4 and divide heads / kv_heads");
    ZSE_REQUIRE(out_q == nullptr || (out_d != nullptr && out_s != nullptr && head_dim % kQuantBlock == 0),
                "zse_cuda_paged_attention: NULL scales or sums, or head_dim not a multiple of 32");
    ZSE_REQUIRE(keys_at_once == 0 || keys_at_once == 1, "zse_cuda_paged_attention: keys_at_once must be 0 or 1");
    Shape shape{heads, kv_heads, head_dim, sliding_window, scale, soft_cap};
    const QuantizedOut quantized{out_q, out_d, out_s};
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    dim3 grid(heads / heads_per_block, rows, splits);
    if (const int refused = check_kv_rows("zse_cuda_paged_attention", kv_type, key_scales, value_scales)) {
        return refused;
    }
    ZSE_REQUIRE(splits == 1 || static_cast<int64_t>(rows) * (heads / heads_per_block) <= kSplitCounters,
                "zse_cuda_paged_attention: splits > 1 takes at most ZSE_CUDA_SPLIT_COUNTERS rows x blocks of heads");
    // the workspace: the merge's counters, then the partial states
    int *counters = splits > 1 ? reinterpret_cast<int *>(workspace) : nullptr;
    float *partial = splits > 1 ? workspace + kSplitCounters : nullptr;
    const auto launch = [&](auto rows_of) {
        using KV = decltype(rows_of);
        const auto kernel = paged_decode_kernel<KV>(heads_per_block, head_dim, keys_at_once == 1);
        ZSE_LAUNCH_OVERLAPPING(kernel, grid, kDecodeWarps * kWarp, 0, s)(
            q, positions, table_offsets, tables, block_size, static_cast<const KV *>(keys),
            static_cast<const KV *>(values), key_scales, value_scales, shape, out, partial, counters, quantized);
        return launched("paged_attention_kernel");
    };
    return kv_type == F16 ? launch(__half{}) : kv_type == kKvInt8 ? launch(int8_t{}) : launch(float{});
}

extern "C" int zse_cuda_paged_prefill_attention(const float *q, const int32_t *positions, const int32_t *table_offsets,
                                                const int32_t *tables, const int32_t *tiles, int tile_count,
                                                int block_size, const void *keys, const void *values,
                                                const float *key_scales, const float *value_scales, int heads,
                                                int kv_heads, int head_dim, int sliding_window, float scale,
                                                float soft_cap, int kv_type, float *out, void *stream) {
    using namespace zse;
    ZSE_REQUIRE(q != nullptr && positions != nullptr && table_offsets != nullptr && tables != nullptr &&
                    tiles != nullptr && keys != nullptr && values != nullptr && out != nullptr,
                "zse_cuda_paged_prefill_attention: NULL pointer");
    ZSE_REQUIRE(tile_count > 0, "zse_cuda_paged_prefill_attention: tile_count must be positive");
    ZSE_REQUIRE(block_size > 0, "zse_cuda_paged_prefill_attention: block_size must be positive");
    ZSE_REQUIRE(heads > 0 && heads <= 65535 && kv_heads > 0 && heads % kv_heads == 0,
                "zse_cuda_paged_prefill_attention: heads must be a positive multiple of kv_heads, at most 65535");
    ZSE_REQUIRE(head_dim > 0 && head_dim <= kMaxHeadDim, "zse_cuda_paged_prefill_attention: head_dim must be 1..256");
    ZSE_REQUIRE(sliding_window >= 0, "zse_cuda_paged_prefill_attention: sliding_window must be >= 0");
    ZSE_REQUIRE(scale > 0.f && soft_cap >= 0.f,
                "zse_cuda_paged_prefill_attention: scale must be positive, soft_cap >= 0");
    Shape shape{heads, kv_heads, head_dim, sliding_window, scale, soft_cap};
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (const int refused = check_kv_rows("zse_cuda_paged_prefill_attention", kv_type, key_scales, value_scales)) {
        return refused;
    }
    dim3 grid(tile_count, heads);
    switch (kv_type) {
        case F32:
            return launch_paged_prefill<float, float>(grid, q, positions, table_offsets, tables, tiles, block_size,
                                                      keys, values, nullptr, nullptr, shape, out, s);
        case F16:
            return launch_paged_prefill<__half, __half>(grid, q, positions, table_offsets, tables, tiles, block_size,
                                                        keys, values, nullptr, nullptr, shape, out, s);
        default:  // INT8
            return launch_paged_prefill<__half, int8_t>(grid, q, positions, table_offsets, tables, tiles, block_size,
                                                        keys, values, key_scales, value_scales, shape, out, s);
    }
}

extern "C" int zse_cuda_store_kv(const float *k, const float *v, int rows, int kv_heads, int head_dim,
                                 const int32_t *slots, void *keys, void *values, float *key_scales,
                                 float *value_scales, int kv_type, void *stream) {
    using namespace zse;
    ZSE_REQUIRE(k != nullptr && v != nullptr && slots != nullptr && keys != nullptr && values != nullptr,
                "zse_cuda_store_kv: NULL pointer");
    ZSE_REQUIRE(rows > 0 && kv_heads > 0 && head_dim > 0,
                "zse_cuda_store_kv: rows, kv_heads and head_dim must be positive");
    if (const int refused = check_kv_rows("zse_cuda_store_kv", kv_type, key_scales, value_scales)) {
        return refused;
    }
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (kv_type == kKvInt8) {
        return launch_int8_kv_store("zse_cuda_store_kv", nullptr, 0, k, v, rows, kv_heads, head_dim, nullptr,
                                    nullptr, slots, static_cast<int8_t *>(keys), static_cast<int8_t *>(values),
                                    key_scales, value_scales, s);
    }
    const int kv_dim = kv_heads * head_dim;
    if (kv_type == F16) {
        ZSE_LAUNCH(store_kv_kernel<__half>, rows, 256, 0, s)(k, v, kv_dim, slots, static_cast<__half *>(keys),
                                                             static_cast<__half *>(values));
    } else {
        ZSE_LAUNCH(store_kv_kernel<float>, rows, 256, 0, s)(k, v, kv_dim, slots, static_cast<float *>(keys),
                                                            static_cast<float *>(values));
    }
    return launched("store_kv_kernel");
}
