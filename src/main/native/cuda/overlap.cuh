// Kernels that start before the kernel ahead of them on their stream has finished (programmatic dependent launch,
// sm_90+): launched with ZSE_LAUNCH_OVERLAPPING, such a kernel may be resident while the one before drains its last
// blocks, and gives up nothing for it: it waits (wait_for_previous_grid) before it touches any memory an earlier
// kernel writes or reads, and lets the next kernel start as soon as all its own blocks are running. What it may do
// before the wait is ask L2 for its weights (prefetch_l2), which no kernel writes. On older GPUs, or with the overlap
// off (zse_cuda_set_overlap), the launch is an ordinary one and the calls do nothing.
#ifndef ZSE_OVERLAP_CUH
#define ZSE_OVERLAP_CUH

#include "status.cuh"

namespace zse {

// Blocks until the grids before this one on the stream have completed and their writes are visible.
__device__ __forceinline__ void wait_for_previous_grid() {
#ifdef ZSE_CUDA_EMULATION
    zse_emu::waited_for_previous_grid();
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Lets the next overlapping kernel on the stream be scheduled once every block of this grid has called this (or
// exited): it then waits for this grid's completion itself.
__device__ __forceinline__ void let_next_grid_start() {
#if !defined(ZSE_CUDA_EMULATION) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::);
#endif
}

// Asks L2 for the 128-byte line holding `at` (global memory), without waiting for it. The emulation checks that `at`
// lies in a device allocation, so a kernel asking for lines outside its weights fails its tests.
__device__ __forceinline__ void prefetch_l2(const void *at) {
#ifndef ZSE_CUDA_EMULATION
    asm volatile("prefetch.global.L2 [%0];" ::"l"(at));
#else
    if (!zse_emu::device_visible(at)) zse_emu::fault(cudaErrorIllegalAddress, "prefetch outside device memory");
#endif
}

}  // namespace zse

#endif
