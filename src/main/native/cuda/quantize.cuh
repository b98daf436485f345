// Activations quantized for the integer products (integer_matvec.cu): per block of 32 consecutive values, the int8
// codes q = round(x * 127 / max|x|), the scale d = max|x| / 127 and s = d * sum(q), bit for bit as libzse_cpu's
// zse_cpu_quantize_rows. Kernels that produce such an input (RMSNorm, SwiGLU) write it while they have the values.
#ifndef ZSE_QUANTIZE_CUH
#define ZSE_QUANTIZE_CUH

#include <stdint.h>

#include "warp.cuh"

namespace zse {

constexpr int kQuantBlock = 32;

// Where quantized activations go; q == nullptr: nowhere (the kernel writes F32 only).
struct QuantizedOut {
    int8_t *q;
    float *d;
    float *s;
};

// Called by all 32 lanes of a warp with the values of block `block` (lane l holds element 32 block + l).
__device__ __forceinline__ void quantize_block(float v, int64_t block, const QuantizedOut &out) {
    const int lane = threadIdx.x % kWarp;
    const float amax = warp_max(fabsf(v));
    const float inverse = amax == 0.f ? 0.f : 127.f / amax;
    const int code = static_cast<int>(rintf(v * inverse));
    out.q[block * kQuantBlock + lane] = static_cast<int8_t>(code);
    const int sum = warp_sum(code);
    if (lane == 0) {
        const float scale = amax / 127.f;
        out.d[block] = scale;
        out.s[block] = scale * static_cast<float>(sum);
    }
}

}  // namespace zse

#endif
