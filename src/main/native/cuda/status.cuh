// Status reporting shared by every translation unit: the per-thread last-error message and argument checks.
#ifndef ZSE_STATUS_CUH
#define ZSE_STATUS_CUH

#include "zse_cuda.h"

// The same sources build libzse_cuda.so with nvcc and libzse_cuda_emu.so with g++ (emu/cuda_emu.h: the kernels run on
// the CPU). Two spellings differ: a launch is ZSE_LAUNCH(kernel, grid, block, shared, stream)(arguments) and dynamic
// shared memory is ZSE_DYNAMIC_SHARED(type, name).
#ifdef ZSE_CUDA_EMULATION
#include "emu/cuda_emu.h"
#else
#include <cuda_runtime.h>
#define ZSE_LAUNCH(kernel, grid, block, shared, stream) kernel<<<grid, block, shared, stream>>>
#define ZSE_DYNAMIC_SHARED(type, name) extern __shared__ type name[]
#endif

namespace zse {

// Records "what: CUDA's message (code N)" for zse_cuda_last_error and returns the CUDA code.
int fail(cudaError_t error, const char *what);
// Records "what" for an argument refused before CUDA saw it; returns ZSE_CUDA_INVALID_ARGUMENT.
int refuse(const char *what);
// Clears the message and returns 0.
int ok();
// The launch status of the kernel just queued.
int launched(const char *kernel);

}  // namespace zse

#define ZSE_CHECK(call, what)                     \
    do {                                          \
        cudaError_t zse_error_ = (call);          \
        if (zse_error_ != cudaSuccess) {          \
            return zse::fail(zse_error_, (what)); \
        }                                         \
    } while (0)

#define ZSE_REQUIRE(condition, what)   \
    do {                               \
        if (!(condition)) {            \
            return zse::refuse((what)); \
        }                              \
    } while (0)

#endif
