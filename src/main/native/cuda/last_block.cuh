// The last block of a group to finish, found by a counter in device memory: the kernels whose blocks each write part
// of a result that one of them then completes (the products' fused norm and column splits, the decode attention's
// merge of its splits over the sequence).
#ifndef ZSE_LAST_BLOCK_CUH
#define ZSE_LAST_BLOCK_CUH

#ifdef ZSE_CUDA_EMULATION
#include "emu/cuda_emu.h"
#endif

namespace zse {
namespace {

// Whether this block is the last of `blocks` to count itself in *counter (true in every thread of the block), once
// each thread's writes are visible to the other blocks; the last leaves the counter at zero. Called by every thread.
__device__ __forceinline__ bool completes(int *counter, int blocks) {
    __threadfence();
    __syncthreads();
    __shared__ bool last;
    if (threadIdx.x == 0) {
        last = atomicAdd(counter, 1) == blocks - 1;
        if (last) *counter = 0;
    }
    __syncthreads();
    return last;
}

}  // namespace
}  // namespace zse

#endif
