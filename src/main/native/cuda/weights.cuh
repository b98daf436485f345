// Element decoding of the .zse storage types (docs/zse-format.md, "Tensor types"), shared by the matmul and
// embedding kernels. Layout row-groups: row-major data; quantization groups of g elements along a row; scales in a
// separate F16 array, group after group (Q4: d then m). 4-bit types: group byte j holds element j (low nibble) and
// element j + g/2 (high nibble).
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

enum StorageType { F32 = 0, F16 = 1, BF16 = 2, Q8 = 3, Q4 = 4, NF4 = 5 };

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

// w[row, k] for any storage type; the scalar path (embedding rows, odd shapes, prefill tiles).
__device__ __forceinline__ float decode(const Weight &w, int row, int k) {
    int64_t index = static_cast<int64_t>(row) * w.cols + k;
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
