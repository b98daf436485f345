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
#define ZSE_LAUNCH(kernel, grid, block, shared, stream) kernel<<<grid, block, shared, stream>>>
#define ZSE_DYNAMIC_SHARED(type, name) extern __shared__ type name[]
#endif
// A launch of a kernel that may start before the one ahead of it finishes (overlap.cuh): the kernel calls
// wait_for_previous_grid() before it touches memory other kernels use.
#define ZSE_LAUNCH_OVERLAPPING(kernel, grid, block, shared, stream) \
    ::zse::overlapping(#kernel, kernel, dim3(grid), dim3(block), (shared), (stream))

namespace zse {

// Whether overlapping launches run as programmatic dependent launches: zse_cuda_set_overlap's setting, on a GPU of
// compute capability 9.0 or above.
bool overlap_enabled();

#ifdef ZSE_CUDA_EMULATION
template <class... P>
::zse_emu::Launch<P...> overlapping(const char *name, void (*kernel)(P...), dim3 grid, dim3 block, size_t shared,
                                    cudaStream_t stream) {
    return ::zse_emu::Launch<P...>{name, kernel, grid, block, shared, stream, true};
}
#else
template <class... P>
struct OverlappingLaunch {
    void (*kernel)(P...);
    dim3 grid, block;
    size_t shared;
    cudaStream_t stream;

    template <class... A>
    void operator()(A &&...arguments) const {
        if (!overlap_enabled()) {
            kernel<<<grid, block, shared, stream>>>(std::forward<A>(arguments)...);
            return;
        }
        cudaLaunchAttribute attribute{};
        attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attribute.val.programmaticStreamSerializationAllowed = 1;
        cudaLaunchConfig_t config{};
        config.gridDim = grid;
        config.blockDim = block;
        config.dynamicSmemBytes = shared;
        config.stream = stream;
        config.attrs = &attribute;
        config.numAttrs = 1;
        cudaLaunchKernelEx(&config, kernel, std::forward<A>(arguments)...);  // its error: launched() reads it
    }
};

template <class... P>
OverlappingLaunch<P...> overlapping(const char *, void (*kernel)(P...), dim3 grid, dim3 block, size_t shared,
                                    cudaStream_t stream) {
    return OverlappingLaunch<P...>{kernel, grid, block, shared, stream};
}
#endif

// Records "what: CUDA's message (code N)" for zse_cuda_last_error and returns the CUDA code.
int fail(cudaError_t error, const char *what);
// Records "what" for an argument refused before CUDA saw it; returns ZSE_CUDA_INVALID_ARGUMENT.
int refuse(const char *what);
// The same, recorded as "entry: what" (the entry point that refused).
int refuse(const char *entry, const char *what);
// Clears the message and returns 0.
int ok();
// The launch status of the kernel just queued.
int launched(const char *kernel);
// The most dynamic shared memory the current device lets a block take (opt-in): 227 KB on sm_90, 163 KB on sm_80,
// 99 KB on sm_86 and sm_89; the 48 KB every device gives where it cannot be asked. Not cached: the emulation's
// limit can change while a test runs.
size_t max_block_shared();

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
