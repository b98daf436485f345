// Row-wise and element-wise ops: RMSNorm, RoPE, SwiGLU, residual add, bias add, and their fusions: the residual add
// with the next RMSNorm, and RoPE with the KV write.
#include "gated.cuh"
#include "kv_rows.cuh"
#include "mma.cuh"
#include "norm.cuh"
#include "rope.cuh"
#include "quantize.cuh"
#include "overlap.cuh"
#include "status.cuh"
#include "warp.cuh"

namespace zse {
namespace {

constexpr int kThreads = 256;

int blocks_for(int64_t length) {
    return static_cast<int>((length + kThreads - 1) / kThreads);
}

// One block per row (x and out may be the same rows: each value is loaded before it is overwritten).
__global__ void __launch_bounds__(kMaxRowThreads) rms_norm_kernel(const float *x, const float *__restrict__ weight,
                                                                  int dim, float eps, float *out,
                                                                  QuantizedOut quantized) {
    let_next_grid_start();
    wait_for_previous_grid();
    const int64_t at = static_cast<int64_t>(blockIdx.x) * dim;
    norm_row<false>(const_cast<float *>(x + at), nullptr, weight, dim, eps, out + at, at / kQuantBlock, quantized);
}

// The residual add and the next RMSNorm in one pass over the row: x += y, out = rms_norm(x). Each thread adds the
// elements it then squares, in the order rms_norm_kernel sums them, so the result is the two kernels' bit for bit.
__global__ void __launch_bounds__(kMaxRowThreads) add_rms_norm_kernel(float *__restrict__ x,
                                                                      const float *__restrict__ y,
                                                                      const float *__restrict__ weight, int dim,
                                                                      float eps, float *__restrict__ out,
                                                                      QuantizedOut quantized) {
    let_next_grid_start();
    wait_for_previous_grid();
    const int64_t at = static_cast<int64_t>(blockIdx.x) * dim;
    norm_row<true>(x + at, y + at, weight, dim, eps, out + at, at / kQuantBlock, quantized);
}

// One thread per (row, head, pair j): elements j and j + head_dim/2 rotate by positions[row] * inverse_frequencies[j].
__global__ void rope_kernel(float *x, int n, int heads, int head_dim, const int32_t *__restrict__ positions,
                            const float *__restrict__ inverse_frequencies) {
    const int half = head_dim / 2;
    const int64_t item = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (item >= static_cast<int64_t>(n) * heads * half) {
        return;
    }
    const int j = static_cast<int>(item % half);
    const int64_t row_head = item / half;  // i * heads + h
    const int i = static_cast<int>(row_head / heads);
    float *base = x + row_head * head_dim;
    rotate(positions[i], inverse_frequencies[j], base[j], base[j + half], base[j], base[j + half]);
}

// Rotates row blockIdx.x of q [rows, heads * head_dim] in place, as rope_kernel would: its pairs first, first + stride,
// ... (the threads of a row's blocks share them).
__device__ __forceinline__ void rotate_queries(float *q, int heads, int head_dim, int position,
                                               const float *__restrict__ inverse_frequencies, int first, int stride) {
    const int half = head_dim / 2;
    float *row = q + static_cast<int64_t>(blockIdx.x) * heads * head_dim;
    for (int item = first; item < heads * half; item += stride) {
        float *base = row + (item / half) * head_dim;
        const int j = item % half;
        rotate(position, inverse_frequencies[j], base[j], base[j + half], base[j], base[j + half]);
    }
}

// RoPE in the KV write: row blockIdx.x of k is rotated on its way into slot slots[row] of the pool's keys, and its row
// of v copied beside it; k itself is left as it was (attention reads the pool). A negative slot: a padding row. Where q
// is set, the row's queries (heads of them) are rotated in place first, as rope_kernel would. The gridDim.y blocks of
// a row share its items, so that a thread has about one of each (rope_store_blocks): with one block a row, a decode
// step's single row looped over 8 query pairs a thread, a trip to memory each (9 us on an H200).
template <class KV>
__global__ void rope_store_kv_kernel(float *q, int heads, const float *__restrict__ k, const float *__restrict__ v,
                                     int kv_heads, int head_dim, const int32_t *__restrict__ positions,
                                     const float *__restrict__ inverse_frequencies, const int32_t *__restrict__ slots,
                                     KV *__restrict__ keys, KV *__restrict__ values) {
    let_next_grid_start();
    wait_for_previous_grid();
    const int half = head_dim / 2;
    const int position = positions[blockIdx.x];
    const int first = static_cast<int>(blockIdx.y * blockDim.x + threadIdx.x);
    const int stride = static_cast<int>(gridDim.y * blockDim.x);
    if (q != nullptr) rotate_queries(q, heads, head_dim, position, inverse_frequencies, first, stride);
    const int slot = slots[blockIdx.x];
    if (slot < 0) return;
    const int kv_dim = kv_heads * head_dim;
    const int64_t from = static_cast<int64_t>(blockIdx.x) * kv_dim;
    const int64_t to = static_cast<int64_t>(slot) * kv_dim;
    for (int item = first; item < kv_heads * half; item += stride) {
        const int h = item / half, j = item % half;
        const int64_t at = h * head_dim + j;
        float a, b;
        rotate(position, inverse_frequencies[j], k[from + at], k[from + at + half], a, b);
        keys[to + at] = mma_from_float<KV>(a);
        keys[to + at + half] = mma_from_float<KV>(b);
    }
    for (int d = first; d < kv_dim; d += stride) {
        values[to + d] = mma_from_float<KV>(v[from + d]);
    }
}

// The INT8 KV write (kv_rows.cuh): row blockIdx.x of k and v into slot slots[row], each head's row quantized as the
// CPU's Int8KvRows.write does (the same bits from the same values): a warp takes one head row of k or v at a time,
// head_dim / 32 values a lane, its max |x| found across the warp. With inverse_frequencies set, each lane rotates the
// key values it holds (the pair's rotation computed whole, as rope_store_kv_kernel does, and its half kept) and the
// blocks rotate q's rows first where q is set. The gridDim.y blocks of a row share its head rows and query pairs.
__global__ void store_int8_kv_kernel(float *q, int heads, const float *__restrict__ k, const float *__restrict__ v,
                                     int kv_heads, int head_dim, const int32_t *__restrict__ positions,
                                     const float *__restrict__ inverse_frequencies,
                                     const int32_t *__restrict__ slots, int8_t *__restrict__ keys,
                                     int8_t *__restrict__ values, float *__restrict__ key_scales,
                                     float *__restrict__ value_scales) {
    constexpr int kMaxDims = 256 / kWarp;
    let_next_grid_start();
    wait_for_previous_grid();
    const bool rotating = inverse_frequencies != nullptr;
    const int position = rotating ? positions[blockIdx.x] : 0;
    if (q != nullptr) {
        rotate_queries(q, heads, head_dim, position, inverse_frequencies,
                       static_cast<int>(blockIdx.y * blockDim.x + threadIdx.x),
                       static_cast<int>(gridDim.y * blockDim.x));
    }
    const int slot = slots[blockIdx.x];
    if (slot < 0) return;
    const int lane = threadIdx.x % kWarp, warps = blockDim.x / kWarp, half = head_dim / 2;
    const int64_t kv_dim = static_cast<int64_t>(kv_heads) * head_dim;
    for (int item = blockIdx.y * warps + threadIdx.x / kWarp; item < 2 * kv_heads; item += gridDim.y * warps) {
        const bool key = item < kv_heads;
        const int head = item % kv_heads;
        const float *from = (key ? k : v) + blockIdx.x * kv_dim + static_cast<int64_t>(head) * head_dim;
        float x[kMaxDims];
        float most = 0.f;
#pragma unroll
        for (int e = 0; e < kMaxDims; e++) {
            const int d = lane + e * kWarp;
            x[e] = 0.f;
            if (d >= head_dim) continue;
            if (key && rotating) {
                const int j = d < half ? d : d - half;
                float a, b;
                rotate(position, inverse_frequencies[j], from[j], from[j + half], a, b);
                x[e] = d < half ? a : b;
            } else {
                x[e] = from[d];
            }
            most = fmaxf(most, fabsf(x[e]));
        }
        const float absmax = warp_max(most);
        const float inverse = absmax == 0.f ? 0.f : 127.f / absmax;
        int8_t *to = (key ? keys : values) + slot * kv_dim + static_cast<int64_t>(head) * head_dim;
#pragma unroll
        for (int e = 0; e < kMaxDims; e++) {
            const int d = lane + e * kWarp;
            if (d < head_dim) to[d] = static_cast<int8_t>(fminf(127.f, fmaxf(-127.f, round_half_up(x[e] * inverse))));
        }
        if (lane == 0) (key ? key_scales : value_scales)[static_cast<int64_t>(slot) * kv_heads + head] = absmax / 127.f;
    }
}

// Blocks per row of rope_store_kv_kernel: enough for one item of the largest part (query pairs, key pairs, values) a
// thread, at most 16.
unsigned rope_store_blocks(int query_pairs, int key_pairs, int values) {
    const int most = query_pairs > key_pairs ? (query_pairs > values ? query_pairs : values)
                                             : (key_pairs > values ? key_pairs : values);
    const int blocks = (most + kThreads - 1) / kThreads;
    return static_cast<unsigned>(blocks > 16 ? 16 : blocks);
}

// x[k] = op(x[k], y[k]) for k < length: the gated activations (x the gate, y the up projection) and the residual add;
// where quantized.q is set, x's int8 blocks for the integer products too (length a multiple of 32).
template <typename Op>
__global__ void binary_kernel(float *x, const float *__restrict__ y, int64_t length, Op op, QuantizedOut quantized) {
    let_next_grid_start();
    wait_for_previous_grid();
    const int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k < length) {
        const float v = op(x[k], y[k]);
        x[k] = v;
        if (quantized.q != nullptr) {
            quantize_block(v, k / kQuantBlock, quantized);
        }
    }
}

struct Swiglu {
    __device__ float operator()(float g, float up) const { return swiglu(g, up); }
};

// PyTorch's gelu(approximate="tanh"): 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))), in F32
struct Geglu {
    __device__ float operator()(float g, float up) const {
        const float inner = 0.7978845608f * (g + 0.044715f * (g * g * g));
        return 0.5f * g * (1.f + tanhf(inner)) * up;
    }
};

struct ReluSquared {
    __device__ float operator()(float g, float up) const {
        const float r = fmaxf(g, 0.f);
        return r * r * up;
    }
};

struct Add {
    __device__ float operator()(float x, float y) const { return x + y; }
};

template <typename Op>
int launch_binary(float *x, const float *y, int64_t length, void *stream, QuantizedOut quantized = {}) {
    ZSE_LAUNCH_OVERLAPPING(binary_kernel<Op>, blocks_for(length), kThreads, 0, static_cast<cudaStream_t>(stream))(
        x, y, length, Op{}, quantized);
    return launched("binary_kernel");
}

__global__ void scale_kernel(float *x, int64_t length, float factor) {
    const int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k < length) {
        x[k] *= factor;
    }
}

__global__ void add_bias_kernel(float *x, int64_t length, const float *__restrict__ bias, int dim) {
    const int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k < length) {
        x[k] += bias[k % dim];
    }
}

}  // namespace

int launch_int8_kv_store(const char *entry, float *q, int heads, const float *k, const float *v, int rows,
                         int kv_heads, int head_dim, const int32_t *positions, const float *inverse_frequencies,
                         const int32_t *slots, int8_t *keys, int8_t *values, float *key_scales, float *value_scales,
                         cudaStream_t stream) {
    if (head_dim > 256) {
        return refuse(entry, "an INT8 cache's head_dim must be at most 256");
    }
    constexpr int kWarps = kThreads / kWarp;
    const int head_blocks = (2 * kv_heads + kWarps - 1) / kWarps;
    const unsigned blocks = rope_store_blocks(q == nullptr ? 0 : heads * (head_dim / 2), 0, 0);
    const dim3 grid(static_cast<unsigned>(rows), static_cast<unsigned>(
        head_blocks > 16 ? 16 : head_blocks > static_cast<int>(blocks) ? head_blocks : blocks));
    ZSE_LAUNCH_OVERLAPPING(store_int8_kv_kernel, grid, kThreads, 0, stream)(
        q, heads, k, v, kv_heads, head_dim, positions, inverse_frequencies, slots, keys, values, key_scales,
        value_scales);
    return launched("store_int8_kv_kernel");
}

}  // namespace zse

extern "C" {

int zse_cuda_rms_norm(const float *x, int n, const float *weight, int dim, float eps, float *out, int8_t *q, float *d,
                      float *s, void *stream) {
    ZSE_REQUIRE(x != nullptr && weight != nullptr && out != nullptr, "zse_cuda_rms_norm: NULL pointer");
    ZSE_REQUIRE(n > 0 && dim > 0, "zse_cuda_rms_norm: n and dim must be positive");
    ZSE_REQUIRE(q == nullptr || (d != nullptr && s != nullptr && dim % zse::kQuantBlock == 0),
                "zse_cuda_rms_norm: NULL scales or sums, or dim not a multiple of 32");
    ZSE_LAUNCH_OVERLAPPING(zse::rms_norm_kernel, n, zse::row_threads(dim), 0, static_cast<cudaStream_t>(stream))(
        x, weight, dim, eps, out, zse::QuantizedOut{q, d, s});
    return zse::launched("rms_norm_kernel");
}

int zse_cuda_add_rms_norm(float *x, const float *y, int n, const float *weight, int dim, float eps, float *out,
                          int8_t *q, float *d, float *s, void *stream) {
    ZSE_REQUIRE(x != nullptr && y != nullptr && weight != nullptr && out != nullptr,
                "zse_cuda_add_rms_norm: NULL pointer");
    ZSE_REQUIRE(n > 0 && dim > 0, "zse_cuda_add_rms_norm: n and dim must be positive");
    ZSE_REQUIRE(q == nullptr || (d != nullptr && s != nullptr && dim % zse::kQuantBlock == 0),
                "zse_cuda_add_rms_norm: NULL scales or sums, or dim not a multiple of 32");
    ZSE_LAUNCH_OVERLAPPING(zse::add_rms_norm_kernel, n, zse::row_threads(dim), 0, static_cast<cudaStream_t>(stream))(
        x, y, weight, dim, eps, out, zse::QuantizedOut{q, d, s});
    return zse::launched("add_rms_norm_kernel");
}

int zse_cuda_rope_store_kv(float *q, int heads, const float *k, const float *v, int rows, int kv_heads, int head_dim,
                           const int32_t *positions, const float *inverse_frequencies, const int32_t *slots,
                           void *keys, void *values, float *key_scales, float *value_scales, int kv_type,
                           void *stream) {
    ZSE_REQUIRE(k != nullptr && v != nullptr && positions != nullptr && inverse_frequencies != nullptr &&
                    slots != nullptr && keys != nullptr && values != nullptr,
                "zse_cuda_rope_store_kv: NULL pointer");
    ZSE_REQUIRE(rows > 0 && kv_heads > 0 && head_dim > 0 && head_dim % 2 == 0,
                "zse_cuda_rope_store_kv: rows, kv_heads and an even head_dim must be positive");
    ZSE_REQUIRE(q == nullptr || heads > 0, "zse_cuda_rope_store_kv: heads must be positive");
    if (const int refused = zse::check_kv_rows("zse_cuda_rope_store_kv", kv_type, key_scales, value_scales)) {
        return refused;
    }
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (kv_type == zse::kKvInt8) {
        return zse::launch_int8_kv_store("zse_cuda_rope_store_kv", q, heads, k, v, rows, kv_heads, head_dim,
                                         positions, inverse_frequencies, slots, static_cast<int8_t *>(keys),
                                         static_cast<int8_t *>(values), key_scales, value_scales, s);
    }
    const unsigned blocks = zse::rope_store_blocks(q == nullptr ? 0 : heads * (head_dim / 2), kv_heads * (head_dim / 2),
                                                   kv_heads * head_dim);
    const dim3 grid(static_cast<unsigned>(rows), blocks);
    if (kv_type == 1) {
        ZSE_LAUNCH_OVERLAPPING(zse::rope_store_kv_kernel<__half>, grid, zse::kThreads, 0, s)(
            q, heads, k, v, kv_heads, head_dim, positions, inverse_frequencies, slots, static_cast<__half *>(keys),
            static_cast<__half *>(values));
    } else {
        ZSE_LAUNCH_OVERLAPPING(zse::rope_store_kv_kernel<float>, grid, zse::kThreads, 0, s)(
            q, heads, k, v, kv_heads, head_dim, positions, inverse_frequencies, slots, static_cast<float *>(keys),
            static_cast<float *>(values));
    }
    return zse::launched("rope_store_kv_kernel");
}

int zse_cuda_rope(float *x, int n, int heads, int head_dim, const int32_t *positions,
                  const float *inverse_frequencies, void *stream) {
    ZSE_REQUIRE(x != nullptr && positions != nullptr && inverse_frequencies != nullptr, "zse_cuda_rope: NULL pointer");
    ZSE_REQUIRE(n > 0 && heads > 0 && head_dim > 0 && head_dim % 2 == 0,
                "zse_cuda_rope: n, heads and an even head_dim must be positive");
    const int64_t items = static_cast<int64_t>(n) * heads * (head_dim / 2);
    ZSE_LAUNCH(zse::rope_kernel, zse::blocks_for(items), zse::kThreads, 0, static_cast<cudaStream_t>(stream))(
        x, n, heads, head_dim, positions, inverse_frequencies);
    return zse::launched("rope_kernel");
}

int zse_cuda_swiglu(float *gate, const float *up, int64_t length, int8_t *q, float *d, float *s, void *stream) {
    ZSE_REQUIRE(gate != nullptr && up != nullptr && length > 0, "zse_cuda_swiglu: NULL pointer or length <= 0");
    ZSE_REQUIRE(q == nullptr || (d != nullptr && s != nullptr && length % zse::kQuantBlock == 0),
                "zse_cuda_swiglu: NULL scales or sums, or length not a multiple of 32");
    return zse::launch_binary<zse::Swiglu>(gate, up, length, stream, zse::QuantizedOut{q, d, s});
}

int zse_cuda_geglu(float *gate, const float *up, int64_t length, void *stream) {
    ZSE_REQUIRE(gate != nullptr && up != nullptr && length > 0, "zse_cuda_geglu: NULL pointer or length <= 0");
    return zse::launch_binary<zse::Geglu>(gate, up, length, stream);
}

int zse_cuda_relu_squared_glu(float *gate, const float *up, int64_t length, void *stream) {
    ZSE_REQUIRE(gate != nullptr && up != nullptr && length > 0,
                "zse_cuda_relu_squared_glu: NULL pointer or length <= 0");
    return zse::launch_binary<zse::ReluSquared>(gate, up, length, stream);
}

int zse_cuda_add(float *x, const float *y, int64_t length, void *stream) {
    ZSE_REQUIRE(x != nullptr && y != nullptr && length > 0, "zse_cuda_add: NULL pointer or length <= 0");
    return zse::launch_binary<zse::Add>(x, y, length, stream);
}

int zse_cuda_scale(float *x, int64_t length, float factor, void *stream) {
    ZSE_REQUIRE(x != nullptr && length > 0, "zse_cuda_scale: NULL pointer or length <= 0");
    ZSE_LAUNCH(zse::scale_kernel, zse::blocks_for(length), zse::kThreads, 0, static_cast<cudaStream_t>(stream))(
        x, length, factor);
    return zse::launched("scale_kernel");
}

int zse_cuda_add_bias(float *x, int n, const float *bias, int dim, void *stream) {
    ZSE_REQUIRE(x != nullptr && bias != nullptr && n > 0 && dim > 0, "zse_cuda_add_bias: NULL pointer or empty shape");
    const int64_t length = static_cast<int64_t>(n) * dim;
    ZSE_LAUNCH(zse::add_bias_kernel, zse::blocks_for(length), zse::kThreads, 0, static_cast<cudaStream_t>(stream))(
        x, length, bias, dim);
    return zse::launched("add_bias_kernel");
}

}  // extern "C"
