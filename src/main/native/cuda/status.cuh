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

#include <utility>

namespace zse {

// Whether a launch may begin while the kernel before it on the stream is ending (programmatic dependent launch):
// on compute capability 9 and up, unless ZSE_CUDA_PDL=0. The kernels' blocks are then resident and waiting when it
// ends, rather than launched after: a decode step is some 300 short kernels.
bool overlapped_launches();

template <class... P>
struct Launch {
    void (*kernel)(P...);
    cudaLaunchConfig_t config;
    cudaLaunchAttribute attribute;

    template <class... A>
    void operator()(A &&...arguments) {
        config.attrs = &attribute;
        config.numAttrs = overlapped_launches() ? 1 : 0;
        cudaLaunchKernelEx(&config, kernel, std::forward<A>(arguments)...);  // an error is the last error
    }
};

template <class... P>
Launch<P...> launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t shared, cudaStream_t stream) {
    Launch<P...> l{kernel, {}, {}};
    l.config.gridDim = grid;
    l.config.blockDim = block;
    l.config.dynamicSmemBytes = shared;
    l.config.stream = stream;
    l.attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    l.attribute.val.programmaticStreamSerializationAllowed = 1;
    return l;
}

}  // namespace zse

#define ZSE_LAUNCH(kernel, grid, block, shared, stream) ::zse::launch(kernel, grid, block, shared, stream)
#define ZSE_DYNAMIC_SHARED(type, name) extern __shared__ type name[]
#endif

namespace zse {

// The first statement of every kernel: a kernel whose launch overlapped the previous one's end waits here until that
// kernel has finished and its writes are visible (griddepcontrol.wait; nothing without an overlapped launch).
__device__ __forceinline__ void await_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

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
