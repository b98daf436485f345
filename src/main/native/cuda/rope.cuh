// RoPE's rotation of one pair, shared by the RoPE kernels (elementwise.cu) and the q/k/v products that rotate their
// outputs as they finish (integer_matvec.cu), so that both give the same bits.
#ifndef ZSE_ROPE_CUH
#define ZSE_ROPE_CUH

#ifdef ZSE_CUDA_EMULATION
#include "emu/cuda_emu.h"
#endif

namespace zse {

// Rotates the pair (a, b) = (base[j], base[j + half]) by position * inverse_frequency, F32 like the reference.
__device__ __forceinline__ void rotate(int position, float inverse_frequency, float a, float b, float &ra, float &rb) {
    const float angle = static_cast<float>(position) * inverse_frequency;
    float sin, cos;
    sincosf(angle, &sin, &cos);
    ra = a * cos - b * sin;
    rb = b * cos + a * sin;
}

}  // namespace zse

#endif
