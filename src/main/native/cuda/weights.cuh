// Element decoding of the .zse storage types (docs/zse-format.md, "Tensor types"), shared by the matmul and
// embedding kernels. Layout row-groups: row-major data; quantization groups of g elements along a row; scales in a
// separate F16 array, group after group (Q4: d then m). 4-bit types: group byte j holds element j (low nibble) and
// element j + g/2 (high nibble). GGUF's Q5 (groups of 32: 16 nibble bytes and a u32 of fifth bits; d, m) and
// K-quants (super-blocks of 256, ggml's bits; scale records of 16 or 18 bytes) are read byte by byte.
#ifndef ZSE_WEIGHTS_CUH
#define ZSE_WEIGHTS_CUH

#include <stdint.h>

#ifdef ZSE_CUDA_EMULATION
#include "emu/cuda_emu.h"
#else
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace zse {

enum StorageType {
    F32 = 0, F16 = 1, BF16 = 2, Q8 = 3, Q4 = 4, NF4 = 5, Q5 = 6, Q4_K = 10, Q5_K = 11, Q6_K = 12, TERNARY = 13
};

// TERNARY (BitNet b1.58): code c = t + 1 of element k of a row, in blocks of 128 elements in 32 bytes (byte j holds
// elements j, j + 32, j + 64 and j + 96 at bits 0-1, 2-3, 4-5, 6-7).
__device__ __forceinline__ int ternary_code(const uint8_t *row, int k) {
    return (row[k / 128 * 32 + (k & 31)] >> (2 * ((k & 127) >> 5))) & 3;
}

// The bitsandbytes NormalFloat-4 code book (io.zse.format.TensorDecoder.NF4_CODEBOOK).
static __constant__ float kNf4Codebook[16] = {
    -1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
    -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
    0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f, 0.33791524171829224f,
    0.44070982933044434f, 0.5626170039176941f, 0.7229568362236023f, 1.0f};

// A weight matrix [rows, cols] in its stored layout.
struct Weight {
    const uint8_t *data;
    const __half *scales;
    int type;
    int group;
    int rows;
    int cols;
};

__device__ __forceinline__ float bf16_to_float(uint16_t bits) {
    return __uint_as_float(static_cast<uint32_t>(bits) << 16);
}

__device__ __forceinline__ float f16_at(const uint8_t *p) {
    return __half2float(__ushort_as_half(static_cast<uint16_t>(p[0] | p[1] << 8)));
}

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K or Q5_K super-block, from the 12 bytes b after d and dmin.
__device__ __forceinline__ void kquant_scale_min(const uint8_t *b, int j, int &scale, int &min) {
    scale = j < 4 ? b[j] & 63 : (b[j + 4] & 15) | (b[j - 4] >> 6) << 4;
    min = j < 4 ? b[j + 4] & 63 : (b[j + 4] >> 4) | (b[j] >> 6) << 4;
}

// Element e (0..255) of a K-quant super-block: codes at `codes`, scale record at `record`.
__device__ __forceinline__ float decode_kquant(int type, const uint8_t *codes, const uint8_t *record, int e) {
    if (type == Q6_K) {
        // half e / 128, part (e % 128) / 32: low or high nibbles of ql[32 (part & 1) ..], bits 2 part of qh
        const int half = e / 128, part = (e % 128) / 32, l = e % 32;
        const int low = (codes[64 * half + 32 * (part & 1) + l] >> (4 * (part >> 1))) & 0xF;
        const int high = (codes[128 + 32 * half + l] >> (2 * part)) & 3;
        const float d = f16_at(record) * static_cast<float>(static_cast<int8_t>(record[2 + e / 16]));
        return d * static_cast<float>((low | high << 4) - 32);
    }
    // Q4_K, Q5_K: sub-block j = e / 32 with a 6-bit scale and min from the 12 packed bytes after d and dmin
    const int j = e / 32, l = e % 32;
    int scale, min;
    kquant_scale_min(record + 4, j, scale, min);
    int q = (codes[32 * (j / 2) + l] >> (4 * (j % 2))) & 0xF;
    if (type == Q5_K) {
        q |= ((codes[128 + l] >> j) & 1) << 4;
    }
    return f16_at(record) * static_cast<float>(scale) * static_cast<float>(q) -
           f16_at(record + 2) * static_cast<float>(min);
}

// Checks what every weight-reading entry point needs (type, group, shape, scales); returns 0 or the refusal status
// (status.cuh), naming `entry`. Defined in matmul.cu.
int check_weight(const Weight &m, const char *entry);

// w[row, k] for any storage type; the scalar path (embedding rows, odd shapes, prefill tiles).
__device__ __forceinline__ float decode(const Weight &w, int row, int k) {
    int64_t index = static_cast<int64_t>(row) * w.cols + k;
    const uint8_t *scale_bytes = reinterpret_cast<const uint8_t *>(w.scales);
    switch (w.type) {
        case F32:
            return reinterpret_cast<const float *>(w.data)[index];
        case F16:
            return __half2float(reinterpret_cast<const __half *>(w.data)[index]);
        case BF16:
            return bf16_to_float(reinterpret_cast<const uint16_t *>(w.data)[index]);
        case Q8:
            return static_cast<float>(reinterpret_cast<const int8_t *>(w.data)[index]) *
                   __half2float(w.scales[index / w.group]);
        case Q5: {
            const int64_t group = index / 32;
            const int e = static_cast<int>(index % 32);
            const uint8_t *codes = w.data + group * 20;
            const uint32_t fifth =
                codes[16] | codes[17] << 8 | codes[18] << 16 | static_cast<uint32_t>(codes[19]) << 24;
            const int q = (e < 16 ? codes[e] & 0x0F : codes[e - 16] >> 4) | ((fifth >> e) & 1) << 4;
            return f16_at(scale_bytes + 4 * group) * static_cast<float>(q) + f16_at(scale_bytes + 4 * group + 2);
        }
        case TERNARY:  // t times the tensor's one F32 scale
            return static_cast<float>(ternary_code(w.data + static_cast<int64_t>(row) * (w.cols / 4), k) - 1) *
                   *reinterpret_cast<const float *>(w.scales);
        case Q4_K:
        case Q5_K:
        case Q6_K: {
            const int64_t super = index / 256;
            const int code_bytes = w.type == Q4_K ? 128 : w.type == Q5_K ? 160 : 192;
            const int record_bytes = w.type == Q6_K ? 18 : 16;
            return decode_kquant(w.type, w.data + super * code_bytes, scale_bytes + super * record_bytes,
                                 static_cast<int>(index % 256));
        }
        default: {  // Q4, NF4
            int64_t group = index / w.group;
            int within = static_cast<int>(index - group * w.group);
            int half = w.group / 2;
            uint8_t packed = w.data[group * half + (within % half)];
            int code = within < half ? (packed & 0x0F) : (packed >> 4);
            if (w.type == Q4) {
                return code * __half2float(w.scales[2 * group]) + __half2float(w.scales[2 * group + 1]);
            }
            return kNf4Codebook[code] * __half2float(w.scales[group]);
        }
    }
}

}  // namespace zse

#endif
