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

// Called by all 32 lanes of a warp; each group of 32 / RUN consecutive lanes holds one block in runs of RUN values
// (lane l: elements RUN (l mod 32 / RUN) .. + RUN - 1 of block `block`). `store` false: the group's values are not
// wanted (it still takes part in the shuffles, which need every lane).
template <int RUN>
__device__ __forceinline__ void quantize_run(const float (&v)[RUN], int64_t block, bool store,
                                             const QuantizedOut &out) {
    constexpr int kLanes = kQuantBlock / RUN;
    const int part = threadIdx.x % kLanes;
    float amax = 0.f;
#pragma unroll
    for (int i = 0; i < RUN; i++) amax = fmaxf(amax, fabsf(v[i]));
#pragma unroll
    for (int offset = kLanes / 2; offset > 0; offset /= 2) {
        amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
    }
    const float inverse = amax == 0.f ? 0.f : 127.f / amax;
    int sum = 0;
#pragma unroll
    for (int i = 0; i < RUN; i++) {
        const int code = static_cast<int>(rintf(v[i] * inverse));
        if (store) out.q[block * kQuantBlock + part * RUN + i] = static_cast<int8_t>(code);
        sum += code;
    }
#pragma unroll
    for (int offset = kLanes / 2; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (store && part == 0) {
        const float scale = amax / 127.f;
        out.d[block] = scale;
        out.s[block] = scale * static_cast<float>(sum);
    }
}

}  // namespace zse

#endif
