// The gated activations' F32 formulas, shared by the element-wise kernel and the products that apply them on the way
// out (integer_matvec.cu), so that both give the same bits.
#ifndef ZSE_GATED_CUH
#define ZSE_GATED_CUH

#ifdef ZSE_CUDA_EMULATION
#include "emu/cuda_emu.h"
#endif

namespace zse {

// SwiGLU: silu(g) * up = g / (1 + e^-g) * up.
__device__ __forceinline__ float swiglu(float g, float up) {
    return g / (1.f + expf(-g)) * up;
}

}  // namespace zse

#endif
