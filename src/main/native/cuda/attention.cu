// Causal attention over the KV cache (GQA, sliding window) with an online softmax, so no score array is stored.
//
// Decode (n == 1): one block per query head; its 8 warps take every 8th visible key, each warp keeps a running
// (max, sum, output) and the block merges the 8 partial results at the end. Paged: the same per row of a batch, keys
// and values found through each sequence's block table in the block pool (zse_cuda_paged_attention), optionally split
// over the sequence (flash-decoding: heads x rows blocks are too few to fill a GPU at small batch and long context,
// so each row's keys are cut into runs attended by separate blocks, then merged by a second kernel).
// Prefill (n > 1): one block per (16-query tile, head); key/value tiles of 32 positions are staged in shared memory and
// reused by all 16 queries, flash-attention style.
#include <math.h>

#include "status.cuh"

namespace zse {
namespace {

constexpr int kWarp = 32;
constexpr int kMaxHeadDim = 256;
constexpr int kDimsPerLane = kMaxHeadDim / kWarp;  // lane owns dims lane, lane + 32, ...
constexpr int kDecodeWarps = 8;
constexpr int kQueryTile = 16;
constexpr int kKeyTile = 32;
constexpr int kPrefillWarps = 4;
constexpr int kRowsPerWarp = kQueryTile / kPrefillWarps;
constexpr int kMaxSplits = 64;

struct Shape {
    int heads, kv_heads, head_dim, window;
    __device__ int kv_dim() const { return kv_heads * head_dim; }
    __device__ int first_visible(int position) const { return window == 0 ? 0 : max(0, position - window + 1); }
};

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int offset = kWarp / 2; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

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

// One query row of one head (blockIdx.x) against the keys at positions begin..end (inclusive; none when end < begin):
// the block's 8 warps take every 8th key, each keeping a running (max, sum, output), merged at the end. q points at
// the row's first head. With `partial` null the normalised result goes to out (the row's first head; zeros when no
// key was seen); otherwise the block's unnormalised state goes to partial [max, sum, output[head_dim]] for
// reduce_splits_kernel to merge with the other parts of the row.
template <class Locate>
__device__ void attend_range(const float *__restrict__ q, int begin, int end, Locate locate,
                             const float *__restrict__ keys, const float *__restrict__ values, const Shape &s,
                             float *__restrict__ out, float *__restrict__ partial) {
    __shared__ float warp_max_of[kDecodeWarps];
    __shared__ float warp_sum_of[kDecodeWarps];
    __shared__ float warp_out[kDecodeWarps][kMaxHeadDim];
    const int head = blockIdx.x;
    const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
    const int kv_offset = (head / (s.heads / s.kv_heads)) * s.head_dim;
    const float scale = rsqrtf(static_cast<float>(s.head_dim));
    float qr[kDimsPerLane], acc[kDimsPerLane];
#pragma unroll
    for (int e = 0; e < kDimsPerLane; e++) {
        int d = lane + e * kWarp;
        qr[e] = d < s.head_dim ? q[head * s.head_dim + d] : 0.f;
        acc[e] = 0.f;
    }
    float running_max = -INFINITY, running_sum = 0.f;
    for (int t = begin + warp; t <= end; t += kDecodeWarps) {
        const int64_t row = locate(t);
        const float *k = keys + row * s.kv_dim() + kv_offset;
        const float *v = values + row * s.kv_dim() + kv_offset;
        float dot = 0.f;
#pragma unroll
        for (int e = 0; e < kDimsPerLane; e++) {
            int d = lane + e * kWarp;
            if (d < s.head_dim) dot = fmaf(qr[e], k[d], dot);
        }
        const float score = warp_sum(dot) * scale;
        const float new_max = fmaxf(running_max, score);
        const float correction = expf(running_max - new_max);
        const float p = expf(score - new_max);
        running_sum = running_sum * correction + p;
#pragma unroll
        for (int e = 0; e < kDimsPerLane; e++) {
            int d = lane + e * kWarp;
            acc[e] = acc[e] * correction + (d < s.head_dim ? p * v[d] : 0.f);
        }
        running_max = new_max;
    }
    if (lane == 0) {
        warp_max_of[warp] = running_max;
        warp_sum_of[warp] = running_sum;
    }
#pragma unroll
    for (int e = 0; e < kDimsPerLane; e++) warp_out[warp][lane + e * kWarp] = acc[e];
    __syncthreads();
    float block_max = -INFINITY;
    for (int w = 0; w < kDecodeWarps; w++) block_max = fmaxf(block_max, warp_max_of[w]);
    float total = 0.f;
    for (int w = 0; w < kDecodeWarps; w++) {
        if (warp_sum_of[w] > 0.f) total += warp_sum_of[w] * expf(warp_max_of[w] - block_max);
    }
    if (partial != nullptr && threadIdx.x == 0) {
        partial[0] = block_max;
        partial[1] = total;
    }
    for (int d = threadIdx.x; d < s.head_dim; d += blockDim.x) {
        float sum = 0.f;
        for (int w = 0; w < kDecodeWarps; w++) {
            if (warp_sum_of[w] > 0.f) sum += warp_out[w][d] * expf(warp_max_of[w] - block_max);
        }
        if (partial != nullptr) {
            partial[2 + d] = sum;
        } else {
            out[head * s.head_dim + d] = total > 0.f ? sum / total : 0.f;
        }
    }
}

__global__ void __launch_bounds__(kDecodeWarps * kWarp) attention_decode_kernel(
    const float *__restrict__ q, int position, const float *__restrict__ keys, const float *__restrict__ values,
    Shape s, float *__restrict__ out) {
    attend_range(q, s.first_visible(position), position, Contiguous{}, keys, values, s, out, nullptr);
}

// Row blockIdx.y of a batch over the block pool: its position and the offset of its sequence's block table. A
// negative position is a padding row (a batch run at a larger recorded size): no key, zeros out.
// Flash-decoding: with gridDim.z == splits > 1 the row's visible keys are cut into `splits` runs of equal length,
// block z takes run z and writes its partial state to workspace [rows, heads, splits, head_dim + 2].
__global__ void __launch_bounds__(kDecodeWarps * kWarp) paged_attention_kernel(
    const float *__restrict__ q, const int32_t *__restrict__ positions, const int32_t *__restrict__ table_offsets,
    const int32_t *__restrict__ tables, int block_size, const float *__restrict__ keys,
    const float *__restrict__ values, Shape s, float *__restrict__ out, float *__restrict__ workspace) {
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
        partial = workspace + ((static_cast<int64_t>(row) * s.heads + blockIdx.x) * splits + blockIdx.z) *
                                  (s.head_dim + 2);
    }
    const int32_t *table = tables + (position < 0 ? 0 : table_offsets[row]);
    attend_range(q + row_start, begin, end, Paged{table, block_size}, keys, values, s, out + row_start, partial);
}

// Merges the `splits` partial states of row blockIdx.y, head blockIdx.x (flash-decoding's second kernel): each part
// is rescaled from its own max to the common one. One thread per output dimension.
__global__ void reduce_splits_kernel(const float *__restrict__ workspace, int splits, Shape s,
                                     float *__restrict__ out) {
    const int row = blockIdx.y, head = blockIdx.x;
    const float *parts = workspace + (static_cast<int64_t>(row) * s.heads + head) * splits * (s.head_dim + 2);
    float common = -INFINITY;
    for (int z = 0; z < splits; z++) {
        const float *p = parts + z * (s.head_dim + 2);
        if (p[1] > 0.f) common = fmaxf(common, p[0]);
    }
    float total = 0.f;
    for (int z = 0; z < splits; z++) {
        const float *p = parts + z * (s.head_dim + 2);
        if (p[1] > 0.f) total += p[1] * expf(p[0] - common);
    }
    for (int d = threadIdx.x; d < s.head_dim; d += blockDim.x) {
        float sum = 0.f;
        for (int z = 0; z < splits; z++) {
            const float *p = parts + z * (s.head_dim + 2);
            if (p[1] > 0.f) sum += p[2 + d] * expf(p[0] - common);
        }
        out[(static_cast<int64_t>(row) * s.heads + head) * s.head_dim + d] = total > 0.f ? sum / total : 0.f;
    }
}

// Row blockIdx.x of k and v [rows, kv_dim] into slot slots[row] of the pool's keys and values [slots, kv_dim]; a
// negative slot is a padding row, not stored.
__global__ void store_kv_kernel(const float *__restrict__ k, const float *__restrict__ v, int kv_dim,
                                const int32_t *__restrict__ slots, float *__restrict__ keys,
                                float *__restrict__ values) {
    const int slot = slots[blockIdx.x];
    if (slot < 0) return;
    const int64_t from = static_cast<int64_t>(blockIdx.x) * kv_dim;
    const int64_t to = static_cast<int64_t>(slot) * kv_dim;
    for (int d = threadIdx.x; d < kv_dim; d += blockDim.x) {
        keys[to + d] = k[from + d];
        values[to + d] = v[from + d];
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
    const float scale = rsqrtf(static_cast<float>(hd));

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
                score = dot * scale;
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
    Shape shape{heads, kv_heads, head_dim, sliding_window};
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
                                        const float *keys, const float *values, int heads, int kv_heads,
                                        int head_dim, int sliding_window, int splits, float *workspace, float *out,
                                        void *stream) {
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
    ZSE_REQUIRE(splits >= 1 && splits <= kMaxSplits, "zse_cuda_paged_attention: splits must be 1..64");
    ZSE_REQUIRE(splits == 1 || workspace != nullptr, "zse_cuda_paged_attention: splits > 1 needs a workspace");
    Shape shape{heads, kv_heads, head_dim, sliding_window};
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    dim3 grid(heads, rows, splits);
    ZSE_LAUNCH(paged_attention_kernel, grid, kDecodeWarps * kWarp, 0, s)(
        q, positions, table_offsets, tables, block_size, keys, values, shape, out, splits > 1 ? workspace : nullptr);
    if (splits == 1) return launched("paged_attention_kernel");
    if (int status = launched("paged_attention_kernel")) return status;
    ZSE_LAUNCH(reduce_splits_kernel, dim3(heads, rows), 128, 0, s)(workspace, splits, shape, out);
    return launched("reduce_splits_kernel");
}

extern "C" int zse_cuda_store_kv(const float *k, const float *v, int rows, int kv_dim, const int32_t *slots,
                                 float *keys, float *values, void *stream) {
    using namespace zse;
    ZSE_REQUIRE(k != nullptr && v != nullptr && slots != nullptr && keys != nullptr && values != nullptr,
                "zse_cuda_store_kv: NULL pointer");
    ZSE_REQUIRE(rows > 0 && kv_dim > 0, "zse_cuda_store_kv: rows and kv_dim must be positive");
    ZSE_LAUNCH(store_kv_kernel, rows, 256, 0, static_cast<cudaStream_t>(stream))(k, v, kv_dim, slots, keys, values);
    return launched("store_kv_kernel");
}
