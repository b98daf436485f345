// Reductions across the 32 lanes of a warp (every lane gets the result), shared by the kernels.
#ifndef ZSE_WARP_CUH
#define ZSE_WARP_CUH

#ifdef ZSE_CUDA_EMULATION
#include "emu/cuda_emu.h"
#endif

namespace zse {

constexpr int kWarp = 32;

template <class T>
__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
    for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int offset = kWarp / 2; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

}  // namespace zse

#endif
