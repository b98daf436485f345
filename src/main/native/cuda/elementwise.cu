// Row-wise and element-wise ops: RMSNorm, RoPE, SwiGLU, residual add, bias add, and their fusions: the residual add
// with the next RMSNorm, and RoPE with the KV write.
#include "gated.cuh"
#include "mma.cuh"
#include "norm.cuh"
#include "rope.cuh"
#include "quantize.cuh"
#include "overlap.cuh"
#include "status.cuh"

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
    if (q != nullptr) {
        float *row = q + static_cast<int64_t>(blockIdx.x) * heads * head_dim;
        for (int item = first; item < heads * half; item += stride) {
            float *base = row + (item / half) * head_dim;
            const int j = item % half;
            rotate(position, inverse_frequencies[j], base[j], base[j + half], base[j], base[j + half]);
        }
    }
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
                           void *keys, void *values, int kv_type, void *stream) {
    ZSE_REQUIRE(k != nullptr && v != nullptr && positions != nullptr && inverse_frequencies != nullptr &&
                    slots != nullptr && keys != nullptr && values != nullptr,
                "zse_cuda_rope_store_kv: NULL pointer");
    ZSE_REQUIRE(rows > 0 && kv_heads > 0 && head_dim > 0 && head_dim % 2 == 0,
                "zse_cuda_rope_store_kv: rows, kv_heads and an even head_dim must be positive");
    ZSE_REQUIRE(q == nullptr || heads > 0, "zse_cuda_rope_store_kv: heads must be positive");
    ZSE_REQUIRE(kv_type == 0 || kv_type == 1, "zse_cuda_rope_store_kv: kv_type must be 0 (F32) or 1 (F16)");
    cudaStream_t s = static_cast<cudaStream_t>(stream);
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
