// The integer products of decode: Q8, Q4, Q4_K and Q6_K weights times activations quantized to int8, as libzse_cpu's
// integer kernels compute them (src/main/native/cpu/zse_cpu.h), with DP4A.
//
// Why: with F32 activations each weight byte costs a lane several float decodes and 4-8 bytes of activation loads,
// which keeps a one-row product far from the memory bandwidth; with int8 codes one DP4A multiplies 4 elements and the
// activations a lane loads are as many bytes as the elements it multiplies.
//
// zse_cuda_quantize_rows (or the kernel that produced the activations) writes per block of 32 activations the codes,
// scale and sum of quantize.cuh, as zse_cpu_quantize_rows does. One warp per weight row then streams the row,
// one chunk of 32 elements per lane and step (a Q8 block, 16 bytes of a Q4 group; the K-quants: struct Chunk):
//   Q8: sum += d_w * d_x * dot(w, q)
//   Q4: sum += d * (d_x,lo * dot(codes_lo, q_lo) + d_x,hi * dot(codes_hi, q_hi)) + m * s_x
// where a Q4 group's byte j holds element j (low nibble) and j + g/2 (high nibble), so a chunk's low and high
// nibbles are the 16 elements from 16c' and from 16c' + g/2 of the group (c' the chunk in the group); the chunks of a
// group and the activation blocks it spans are equally many, so chunk c adds m times block c's s.
#include "quantize.cuh"
#include "status.cuh"
#include "warp.cuh"
#include "weights.cuh"

namespace zse {
namespace {

constexpr int kBlock = kQuantBlock; // activations per quantization block, elements per chunk
constexpr int kWarps = 8;          // weight rows per thread block
constexpr int kMaxWeights = 3;     // weights sharing one activation input in one launch (q, k, v)

// Up to kMaxWeights weights of one type, group and column count, whose rows one launch covers one after the other.
struct Products {
    const uint8_t *data[kMaxWeights];
    const __half *scales[kMaxWeights];
    float *out[kMaxWeights];
    int rows[kMaxWeights];
    int count;
    int group;
    int cols;
};

// Activations [n, cols] quantized per block of 32.
struct QuantizedRows {
    const int8_t *q;
    const float *d;
    const float *s;
};

// One warp per block of 32 activations.
__global__ void quantize_rows_kernel(const float *__restrict__ x, int64_t blocks, QuantizedOut out) {
    const int64_t block = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / kWarp;
    if (block < blocks) {
        quantize_block(x[block * kBlock + threadIdx.x % kWarp], block, out);
    }
}

__device__ __forceinline__ int dot16(const uint32_t (&w)[4], const int4 &x) {
    return __dp4a(static_cast<int>(w[3]), x.w,
                  __dp4a(static_cast<int>(w[2]), x.z,
                         __dp4a(static_cast<int>(w[1]), x.y, __dp4a(static_cast<int>(w[0]), x.x, 0))));
}

__device__ __forceinline__ float half_bits_to_float(uint32_t bits) {
    return __half2float(__ushort_as_half(static_cast<unsigned short>(bits)));
}

// One weight row in its stored form: the element bytes and the scale bytes (Q8: F16 d per block; Q4: F16 (d, m) per
// group; Q4_K, Q6_K: the super-blocks' records).
struct Row {
    const uint8_t *data;
    const uint8_t *scales;
};

template <int TYPE>
__device__ __forceinline__ Row row_of(const uint8_t *data, const uint8_t *scales, int64_t row, int cols, int shift) {
    const int64_t blocks = cols / kBlock, supers = cols / 256;
    switch (TYPE) {
        case Q8: return {data + row * cols, scales + row * blocks * 2};
        case Q4: return {data + row * cols / 2, scales + row * (blocks >> shift) * 4};
        case Q4_K: return {data + row * supers * 128, scales + row * supers * 16};
        default: return {data + row * supers * 192, scales + row * supers * 18};  // Q6_K
    }
}

// The low and high nibbles of 16 bytes, as 4-bit codes in bytes.
__device__ __forceinline__ void split_nibbles(const uint4 &v, uint32_t (&low)[4], uint32_t (&high)[4]) {
    const uint32_t packed[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int e = 0; e < 4; e++) {
        low[e] = packed[e] & 0x0F0F0F0Fu;
        high[e] = (packed[e] >> 4) & 0x0F0F0F0Fu;
    }
}

__device__ __forceinline__ int4 codes16(const QuantizedRows &x, int64_t element) {
    return __ldg(reinterpret_cast<const int4 *>(x.q + element));
}

// Chunk c of a row (32 elements), loaded by load() and multiplied with activation rows 0..ROWS-1 by add(): acc[t] +=
// the chunk times the same elements of activation row t. Rows from n on repeat row n - 1 (computed, never stored),
// so that no lane branches on n.
template <int TYPE>
struct Chunk;

// Q8: a block of 32 codes and its d.
template <>
struct Chunk<Q8> {
    uint4 low, high;
    __half d;
    __device__ __forceinline__ void load(const Row &r, int c, int) {
        low = __ldg(reinterpret_cast<const uint4 *>(r.data) + 2 * c);
        high = __ldg(reinterpret_cast<const uint4 *>(r.data) + 2 * c + 1);
        d = __ldg(reinterpret_cast<const __half *>(r.scales) + c);
    }
    template <int ROWS>
    __device__ __forceinline__ void add(int c, const QuantizedRows &x, int n, int cols, int, int,
                                        float (&acc)[ROWS]) const {
        const uint32_t l[4] = {low.x, low.y, low.z, low.w}, h[4] = {high.x, high.y, high.z, high.w};
        const float dw = __half2float(d);
#pragma unroll
        for (int t = 0; t < ROWS; t++) {
            const int64_t row = ROWS <= 2 ? t : min(t, n - 1);
            const int64_t at = row * cols + kBlock * c;
            const int dot = dot16(l, codes16(x, at)) + dot16(h, codes16(x, at + 16));
            acc[t] = fmaf(dw * __ldg(x.d + at / kBlock), static_cast<float>(dot), acc[t]);
        }
    }
};

// Q4: 16 bytes of one group's nibbles and the group's (d, m) as one 32-bit word.
template <>
struct Chunk<Q4> {
    uint4 packed;
    uint32_t dm;
    __device__ __forceinline__ void load(const Row &r, int c, int shift) {
        packed = __ldg(reinterpret_cast<const uint4 *>(r.data) + c);
        dm = __ldg(reinterpret_cast<const uint32_t *>(r.scales) + (c >> shift));
    }
    template <int ROWS>
    __device__ __forceinline__ void add(int c, const QuantizedRows &x, int n, int cols, int group, int shift,
                                        float (&acc)[ROWS]) const {
        uint32_t low[4], high[4];
        split_nibbles(packed, low, high);
        const float d = half_bits_to_float(dm & 0xffffu), m = half_bits_to_float(dm >> 16);
        const int first = (c >> shift) * group + 16 * (c & ((1 << shift) - 1));  // the low nibbles' first element
        const int second = first + group / 2;                                    // the high nibbles'
#pragma unroll
        for (int t = 0; t < ROWS; t++) {
            const int64_t row = (ROWS <= 2 ? t : min(t, n - 1)) * static_cast<int64_t>(cols);
            const int dot_low = dot16(low, codes16(x, row + first));
            const int dot_high = dot16(high, codes16(x, row + second));
            const float scaled = __ldg(x.d + (row + first) / kBlock) * static_cast<float>(dot_low) +
                                 __ldg(x.d + (row + second) / kBlock) * static_cast<float>(dot_high);
            acc[t] += fmaf(d, scaled, m * __ldg(x.s + row / kBlock + c));
        }
    }
};

// Q4_K: 16 bytes of a super-block's codes, whose low nibbles are half of sub-block j = 2p and high nibbles the same
// half of sub-block j + 1 (c = 8 super-block + 2 p + half). The first half's lane adds both sub-blocks' min terms.
template <>
struct Chunk<Q4_K> {
    uint4 packed;
    const uint8_t *record;
    __device__ __forceinline__ void load(const Row &r, int c, int) {
        packed = __ldg(reinterpret_cast<const uint4 *>(r.data) + c);
        record = r.scales + 16 * (c >> 3);
    }
    template <int ROWS>
    __device__ __forceinline__ void add(int c, const QuantizedRows &x, int n, int cols, int, int,
                                        float (&acc)[ROWS]) const {
        uint32_t low[4], high[4];
        split_nibbles(packed, low, high);
        const int j = 2 * ((c >> 1) & 3);
        int scale_low, min_low, scale_high, min_high;
        kquant_scale_min(record + 4, j, scale_low, min_low);
        kquant_scale_min(record + 4, j + 1, scale_high, min_high);
        const float d = f16_at(record), dmin = (c & 1) == 0 ? f16_at(record + 2) : 0.f;
        const int first = (c >> 3) * 256 + 32 * j + 16 * (c & 1);
#pragma unroll
        for (int t = 0; t < ROWS; t++) {
            const int64_t row = (ROWS <= 2 ? t : min(t, n - 1)) * static_cast<int64_t>(cols);
            const int64_t block = (row + first) / kBlock;  // sub-block j's activations; j + 1's follow
            const int dot_low = dot16(low, codes16(x, row + first));
            const int dot_high = dot16(high, codes16(x, row + first + kBlock));
            const float scaled = static_cast<float>(scale_low) * __ldg(x.d + block) * static_cast<float>(dot_low) +
                                 static_cast<float>(scale_high) * __ldg(x.d + block + 1) *
                                     static_cast<float>(dot_high);
            const float offset = static_cast<float>(min_low) * __ldg(x.s + block) +
                                 static_cast<float>(min_high) * __ldg(x.s + block + 1);
            acc[t] += fmaf(d, scaled, -dmin * offset);
        }
    }
};

// Q6_K: a quarter q of half h of a super-block (c = 8 super-block + 4 h + q): elements 128 h + 32 p + 8 q .. + 7 of
// each part p = 0..3, from 8 bytes of low nibbles at 64 h + 8 q (parts 0, 2) and 64 h + 32 + 8 q (parts 1, 3) and 8
// bytes of high bits at 128 + 32 h + 8 q (bits 2 p of each). Weights q - 32 with q in 0..63.
template <>
struct Chunk<Q6_K> {
    uint2 nibbles_02, nibbles_13, high_bits;
    const uint8_t *record;
    __device__ __forceinline__ void load(const Row &r, int c, int) {
        const uint8_t *codes = r.data + 192 * (c >> 3) + 8 * (c & 3);
        const int h = (c >> 2) & 1;
        nibbles_02 = __ldg(reinterpret_cast<const uint2 *>(codes + 64 * h));
        nibbles_13 = __ldg(reinterpret_cast<const uint2 *>(codes + 64 * h + 32));
        high_bits = __ldg(reinterpret_cast<const uint2 *>(codes + 128 + 32 * h));
        record = r.scales + 18 * (c >> 3);
    }
    // The 6-bit codes of part p, 4 elements a word.
    __device__ __forceinline__ static uint32_t codes(uint32_t nibbles_02, uint32_t nibbles_13, uint32_t high, int p) {
        const uint32_t low = (p & 1 ? nibbles_13 : nibbles_02) >> (4 * (p >> 1));
        const uint32_t top = p == 0 ? high << 4 : p == 1 ? high << 2 : p == 2 ? high : high >> 2;
        return (low & 0x0F0F0F0Fu) | (top & 0x30303030u);
    }
    template <int ROWS>
    __device__ __forceinline__ void add(int c, const QuantizedRows &x, int n, int cols, int, int,
                                        float (&acc)[ROWS]) const {
        const int h = (c >> 2) & 1, quarter = c & 3;
        const float d = f16_at(record);
        uint32_t q[4][2];
        float scale[4];
#pragma unroll
        for (int p = 0; p < 4; p++) {
            q[p][0] = codes(nibbles_02.x, nibbles_13.x, high_bits.x, p);
            q[p][1] = codes(nibbles_02.y, nibbles_13.y, high_bits.y, p);
            scale[p] = d * static_cast<float>(static_cast<int8_t>(record[2 + 8 * h + 2 * p + (quarter >> 1)]));
        }
        const int first = (c >> 3) * 256 + 128 * h + 8 * quarter;
#pragma unroll
        for (int t = 0; t < ROWS; t++) {
            const int64_t row = (ROWS <= 2 ? t : min(t, n - 1)) * static_cast<int64_t>(cols);
            float sum = 0.f;
#pragma unroll
            for (int p = 0; p < 4; p++) {
                const int64_t at = row + first + kBlock * p;
                const int2 v = __ldg(reinterpret_cast<const int2 *>(x.q + at));
                const int codes_sum = __dp4a(0x01010101, v.x, __dp4a(0x01010101, v.y, 0));
                const int dot = __dp4a(static_cast<int>(q[p][0]), v.x, __dp4a(static_cast<int>(q[p][1]), v.y, 0));
                sum = fmaf(scale[p] * __ldg(x.d + at / kBlock), static_cast<float>(dot - 32 * codes_sum), sum);
            }
            acc[t] += sum;
        }
    }
};

// Chunks each lane loads before it multiplies any: the bytes in flight that keep the memory busy. With more activation
// rows a chunk's work is longer and its activation loads take the registers.
template <int ROWS>
struct Steps {
    static constexpr int value = ROWS <= 2 ? 4 : ROWS <= 4 ? 2 : 1;
};

// out_j[t, row] for t < n <= ROWS (n > ROWS / 2 unless ROWS <= 2); TYPE Q8 or Q4 (group 32, 64 or 128; shift =
// log2(group / 32)). At 16 rows two blocks per multiprocessor at least (0: no bound), or the compiler holds every
// activation row's loads in registers and leaves room for one.
template <int TYPE, int ROWS>
__global__ void __launch_bounds__(kWarps * kWarp, ROWS >= 16 ? 2 : 0) integer_matvec_kernel(Products p, QuantizedRows x, int n,
                                                                       int shift) {
    int row = blockIdx.x * kWarps + threadIdx.x / kWarp;
    const int lane = threadIdx.x % kWarp;
    // This warp's weight, picked with constant indices so that the parameter arrays stay in registers.
    const uint8_t *data = p.data[0];
    const __half *scales = p.scales[0];
    float *out = p.out[0];
    int rows = p.rows[0];
#pragma unroll
    for (int j = 1; j < kMaxWeights; j++) {
        if (j < p.count && row >= rows) {
            row -= rows;
            data = p.data[j];
            scales = p.scales[j];
            out = p.out[j];
            rows = p.rows[j];
        }
    }
    if (row >= rows) {
        return;
    }
    const int blocks = p.cols / kBlock;  // chunks of the row, and activation blocks of an activation row
    const Row r = row_of<TYPE>(data, reinterpret_cast<const uint8_t *>(scales), row, p.cols, shift);
    float acc[ROWS] = {};
    constexpr int kSteps = Steps<ROWS>::value;
    int c = lane;
    for (; c + (kSteps - 1) * kWarp < blocks; c += kSteps * kWarp) {
        Chunk<TYPE> chunk[kSteps];
#pragma unroll
        for (int s = 0; s < kSteps; s++) chunk[s].load(r, c + s * kWarp, shift);
#pragma unroll
        for (int s = 0; s < kSteps; s++) chunk[s].template add<ROWS>(c + s * kWarp, x, n, p.cols, p.group, shift, acc);
    }
    for (; c < blocks; c += kWarp) {
        Chunk<TYPE> chunk;
        chunk.load(r, c, shift);
        chunk.template add<ROWS>(c, x, n, p.cols, p.group, shift, acc);
    }
#pragma unroll
    for (int t = 0; t < ROWS; t++) {
        const float sum = warp_sum(acc[t]);
        if (lane == 0 && t < n) {
            out[static_cast<int64_t>(t) * rows + row] = sum;
        }
    }
}

template <int TYPE, int ROWS>
void launch_rows(const Products &p, const QuantizedRows &x, int n, int shift, unsigned grid, cudaStream_t stream) {
    const auto kernel = integer_matvec_kernel<TYPE, ROWS>;
    ZSE_LAUNCH(kernel, grid, kWarps * kWarp, 0, stream)(p, x, n, shift);
}

// Instantiated for 1, 2, 4, 8 and 16 activation rows: registers and unrolled loops for the batch-size buckets.
template <int TYPE>
void launch_integer_matvec(const Products &p, const QuantizedRows &x, int n, int shift, int64_t total_rows,
                           cudaStream_t stream) {
    const unsigned grid = static_cast<unsigned>((total_rows + kWarps - 1) / kWarps);
    if (n == 1) {
        launch_rows<TYPE, 1>(p, x, n, shift, grid, stream);
    } else if (n == 2) {
        launch_rows<TYPE, 2>(p, x, n, shift, grid, stream);
    } else if (n <= 4) {
        launch_rows<TYPE, 4>(p, x, n, shift, grid, stream);
    } else if (n <= 8) {
        launch_rows<TYPE, 8>(p, x, n, shift, grid, stream);
    } else {
        launch_rows<TYPE, ZSE_CUDA_INTEGER_ROWS>(p, x, n, shift, grid, stream);
    }
}

}  // namespace
}  // namespace zse

extern "C" {

int zse_cuda_quantize_rows(const float *x, int n, int cols, int8_t *q, float *d, float *s, void *stream) {
    using namespace zse;
    ZSE_REQUIRE(x != nullptr && q != nullptr && d != nullptr && s != nullptr,
                "zse_cuda_quantize_rows: NULL activations or output");
    ZSE_REQUIRE(n > 0 && cols > 0 && cols % kBlock == 0, "zse_cuda_quantize_rows: n > 0 and cols a multiple of 32");
    const int64_t blocks = static_cast<int64_t>(n) * cols / kBlock;
    ZSE_REQUIRE((blocks + kWarps - 1) / kWarps <= 0x7fffffff, "zse_cuda_quantize_rows: too many rows");
    const unsigned grid = static_cast<unsigned>((blocks + kWarps - 1) / kWarps);
    ZSE_LAUNCH(quantize_rows_kernel, grid, kWarps * kWarp, 0, static_cast<cudaStream_t>(stream))(
        x, blocks, QuantizedOut{q, d, s});
    return launched("quantize_rows_kernel");
}

int zse_cuda_integer_matvec(int type, int group_size, int cols, int count, const void *const *data,
                            const void *const *scales, const int *rows, float *const *out, const int8_t *xq,
                            const float *xd, const float *xs, int n, void *stream) {
    using namespace zse;
    ZSE_REQUIRE(type == Q8 || type == Q4 || type == Q4_K || type == Q6_K,
                "zse_cuda_integer_matvec: the integer products take Q8, Q4, Q4_K and Q6_K weights");
    ZSE_REQUIRE(count >= 1 && count <= kMaxWeights, "zse_cuda_integer_matvec: 1 to 3 weights");
    ZSE_REQUIRE(data != nullptr && scales != nullptr && rows != nullptr && out != nullptr,
                "zse_cuda_integer_matvec: NULL weight list");
    ZSE_REQUIRE(xq != nullptr && xd != nullptr && xs != nullptr, "zse_cuda_integer_matvec: NULL activations");
    ZSE_REQUIRE(n > 0 && n <= ZSE_CUDA_INTEGER_ROWS, "zse_cuda_integer_matvec: n must be 1 to 16");
    Products p{};
    p.count = count;
    p.group = group_size;
    p.cols = cols;
    int64_t total_rows = 0;
    for (int j = 0; j < count; j++) {
        Weight m{static_cast<const uint8_t *>(data[j]), static_cast<const __half *>(scales[j]), type, group_size,
                 rows[j], cols};
        if (int status = check_weight(m, "zse_cuda_integer_matvec")) return status;
        ZSE_REQUIRE(out[j] != nullptr, "zse_cuda_integer_matvec: NULL output");
        p.data[j] = m.data;
        p.scales[j] = m.scales;
        p.rows[j] = m.rows;
        p.out[j] = out[j];
        total_rows += m.rows;
    }
    ZSE_REQUIRE(total_rows <= 0x7fffffff, "zse_cuda_integer_matvec: more than 2^31 - 1 rows in all");
    const int shift = group_size == 128 ? 2 : group_size == 64 ? 1 : 0;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    QuantizedRows x{xq, xd, xs};
    switch (type) {
        case Q8: launch_integer_matvec<Q8>(p, x, n, 0, total_rows, s); break;
        case Q4: launch_integer_matvec<Q4>(p, x, n, shift, total_rows, s); break;
        case Q4_K: launch_integer_matvec<Q4_K>(p, x, n, 0, total_rows, s); break;
        default: launch_integer_matvec<Q6_K>(p, x, n, 0, total_rows, s); break;
    }
    return launched("integer_matvec_kernel");
}

}  // extern "C"
