// cuda_emu.h: just enough of CUDA for our .cu files to compile as host C++ (g++ -DZSE_CUDA_EMULATION) and run on
// the CPU, so every build exercises the kernels without a GPU (libzse_cuda_emu.so, same C ABI as libzse_cuda.so).
//
// Execution model: a launch runs its blocks one after another on the calling thread, under one process-wide lock, in
// an order that changes from launch to launch (a GPU promises none), each block's dynamic shared memory filled with
// 0xA5 first (a GPU's is undefined).
// The threads of a block are fibers (cooperative, one stack each) scheduled round-robin; a fiber runs until it
// reaches __syncthreads, a warp collective (shuffle, vote, __syncwarp) or its end. Because blocks never overlap,
// `__shared__` variables are function statics and atomics are plain read-modify-writes.
// Streams run their work at once, in order (a valid schedule of any CUDA program); a capturing stream records it
// into a graph instead, replayed by cudaGraphLaunch.
// Checks a GPU would make and a CPU would not: launch configuration limits, dynamic shared memory above 48 KiB without
// the attribute, kernel pointer arguments outside device-visible memory, misaligned vector loads through __ldg, warp
// collectives naming exited lanes, barriers that can never complete, copies that run past an allocation.
#ifndef ZSE_CUDA_EMU_H
#define ZSE_CUDA_EMU_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

// ---- qualifiers ----
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
#define __constant__
#define __shared__ static  // blocks run one at a time: a function static is the block's shared memory
#define __align__(n) alignas(n)

// ---- vector and index types ----
struct uint3 {
    unsigned x, y, z;
};
struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
};
struct alignas(8) float2 {
    float x, y;
};
struct alignas(16) float4 {
    float x, y, z, w;
};
struct alignas(16) uint4 {
    unsigned x, y, z, w;
};
struct alignas(16) int4 {
    int x, y, z, w;
};
struct alignas(8) uint2 {
    unsigned x, y;
};
struct alignas(8) int2 {
    int x, y;
};

// ---- half and bfloat16 (storage types; arithmetic goes through float) ----
struct __half {
    uint16_t bits;
};
struct __nv_bfloat16 {
    uint16_t bits;
};

inline float __half2float(__half h) {
    const uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000u) << 16;
    const uint32_t exponent = (h.bits >> 10) & 0x1fu;
    uint32_t mantissa = h.bits & 0x3ffu;
    uint32_t bits;
    if (exponent == 0x1f) {
        bits = sign | 0x7f800000u | (mantissa << 13);
    } else if (exponent != 0) {
        bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
    } else if (mantissa == 0) {
        bits = sign;
    } else {  // subnormal: normalise
        int e = 113;
        while ((mantissa & 0x400u) == 0) {
            mantissa <<= 1;
            e--;
        }
        bits = sign | (static_cast<uint32_t>(e) << 23) | ((mantissa & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}
// Round to nearest even, as the device's __float2half_rn: overflow to infinity, subnormals kept, NaN stays NaN.
inline __half __float2half_rn(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    const uint32_t magnitude = x & 0x7fffffffu;
    if (magnitude > 0x7f800000u) return __half{static_cast<uint16_t>(sign | 0x7e00u)};
    if (magnitude >= 0x477ff000u) return __half{static_cast<uint16_t>(sign | 0x7c00u)};  // rounds past 65504
    if (magnitude < 0x38800000u) {  // below 2^-14: a subnormal half (or zero)
        if (magnitude < 0x33000000u) return __half{sign};  // below half the smallest subnormal
        const int shift = 126 - static_cast<int>(magnitude >> 23);  // 14..24: units of 2^-24
        const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
        uint32_t bits = mantissa >> shift;
        const uint32_t rest = mantissa & ((1u << shift) - 1);
        const uint32_t halfway = 1u << (shift - 1);
        if (rest > halfway || (rest == halfway && (bits & 1u))) bits++;
        return __half{static_cast<uint16_t>(sign | bits)};
    }
    uint32_t bits = ((magnitude >> 13) - (112u << 10));
    const uint32_t rest = magnitude & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (bits & 1u))) bits++;
    return __half{static_cast<uint16_t>(sign | bits)};
}
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u) return __nv_bfloat16{static_cast<uint16_t>((x >> 16) | 0x40u)};
    x += 0x7fffu + ((x >> 16) & 1u);
    return __nv_bfloat16{static_cast<uint16_t>(x >> 16)};
}
inline __half __ushort_as_half(unsigned short bits) { return __half{bits}; }
inline unsigned short __half_as_ushort(__half h) { return h.bits; }
inline float __bfloat162float(__nv_bfloat16 b) {
    uint32_t bits = static_cast<uint32_t>(b.bits) << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

// ---- bit casts and math ----
inline float __uint_as_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
inline float __int_as_float(int32_t i) {
    float f;
    memcpy(&f, &i, sizeof f);
    return f;
}
inline uint32_t __float_as_uint(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
// The four signed bytes of a times those of b, summed into c (DP4A).
inline int __dp4a(int a, int b, int c) {
    for (int i = 0; i < 4; i++) {
        c += static_cast<int8_t>(static_cast<uint32_t>(a) >> (8 * i)) *
             static_cast<int8_t>(static_cast<uint32_t>(b) >> (8 * i));
    }
    return c;
}
inline int32_t __float_as_int(float f) {
    int32_t i;
    memcpy(&i, &f, sizeof i);
    return i;
}
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline float __expf(float x) { return expf(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }

// ---- runtime API (implemented in runtime_emu.cpp; codes are CUDA's) ----
enum cudaError_t {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorNotReady = 600,
    cudaErrorIllegalAddress = 700,
    cudaErrorHostMemoryAlreadyRegistered = 712,
    cudaErrorHostMemoryNotRegistered = 713,
    cudaErrorMisalignedAddress = 716,
    cudaErrorLaunchFailure = 719,
    cudaErrorStreamCaptureUnsupported = 900,
    cudaErrorStreamCaptureInvalidated = 901,
    cudaErrorStreamCaptureWrongThread = 908,
};
enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4,
};
enum cudaDeviceAttr {
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76,
    cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
};
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
enum cudaStreamCaptureMode {
    cudaStreamCaptureModeGlobal = 0,
    cudaStreamCaptureModeThreadLocal = 1,
    cudaStreamCaptureModeRelaxed = 2,
};
constexpr unsigned cudaStreamNonBlocking = 1;
constexpr unsigned cudaHostRegisterReadOnly = 8;

struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem;
    int major, minor, multiProcessorCount;
};

namespace zse_emu {
struct Stream;
struct Event;
struct Graph;
}  // namespace zse_emu
typedef zse_emu::Stream *cudaStream_t;
typedef zse_emu::Event *cudaEvent_t;
typedef zse_emu::Graph *cudaGraph_t;
typedef zse_emu::Graph *cudaGraphExec_t;

cudaError_t cudaGetLastError();
const char *cudaGetErrorString(cudaError_t error);
cudaError_t cudaDriverGetVersion(int *version);
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *properties, int device);
cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attribute, int device);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaMalloc(void **pointer, size_t bytes);
cudaError_t cudaFree(void *pointer);
cudaError_t cudaMallocHost(void **pointer, size_t bytes);
cudaError_t cudaFreeHost(void *pointer);
cudaError_t cudaHostRegister(void *pointer, size_t bytes, unsigned flags);
cudaError_t cudaHostUnregister(void *pointer);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemsetAsync(void *dst, int value, size_t bytes, cudaStream_t stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags);
cudaError_t cudaEventCreate(cudaEvent_t *event);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float *milliseconds, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *executable, cudaGraph_t graph, unsigned long long flags);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);
cudaError_t cudaGraphLaunch(cudaGraphExec_t executable, cudaStream_t stream);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t executable);

// ---- the emulated device ----
namespace zse_emu {

// One fiber: a CUDA thread of the block being run.
struct Thread {
    uint3 index;    // threadIdx
    unsigned lane;  // linear index % 32
    unsigned warp;  // linear index / 32
};

extern Thread *current;  // the fiber running now
extern uint3 block_index;
extern dim3 block_dim;
extern dim3 grid_dim;

void *dynamic_shared();
void sync_block();
// Waits until every lane of `mask` in this warp has arrived (all must be alive); the exchange slots are the warp's.
void sync_warp(unsigned mask);
uint64_t *warp_slots();
// Ends the kernel with `error`: the launch reports it; no further thread of it runs.
[[noreturn]] void fault(cudaError_t error, const char *what);
// Whether [pointer, pointer + 1) is device-visible memory (device allocations, pinned or registered host memory).
bool device_visible(const void *pointer);

// A kernel launched to overlap the one before it (overlap.cuh) waits for it: each of its blocks must, or the
// launch faults (the emulation runs kernels one after another, so it cannot tell where the wait stands).
void waited_for_previous_grid();

using Body = std::function<void()>;
cudaError_t launch(const char *name, const void *function, dim3 grid, dim3 block, size_t shared_bytes,
                   cudaStream_t stream, Body body, bool overlapping = false);
cudaError_t set_function_attribute(const void *function, cudaFuncAttribute attribute, int value);

template <class T>
T shuffle(unsigned mask, T value, unsigned source) {
    static_assert(sizeof(T) <= sizeof(uint64_t) && std::is_trivially_copyable<T>::value, "shuffle of a wide type");
    uint64_t *slots = warp_slots();
    uint64_t mine = 0;
    memcpy(&mine, &value, sizeof value);
    slots[current->lane] = mine;
    sync_warp(mask);
    T result = value;  // a source outside the mask: undefined on the GPU; here the caller's own value
    if (source < 32 && ((mask >> source) & 1u)) {
        uint64_t theirs = slots[source];
        memcpy(&result, &theirs, sizeof result);
    }
    sync_warp(mask);  // every lane has read before the slots are reused
    return result;
}

inline unsigned ballot(unsigned mask, bool predicate) {
    uint64_t *slots = warp_slots();
    slots[current->lane] = predicate ? 1 : 0;
    sync_warp(mask);
    unsigned bits = 0;
    for (unsigned lane = 0; lane < 32; lane++) {
        if (((mask >> lane) & 1u) && slots[lane]) bits |= 1u << lane;
    }
    sync_warp(mask);
    return bits;
}

template <class T>
const void *address_of(T *function) {
    return reinterpret_cast<const void *>(function);
}

// Checks pointer arguments the way the GPU would fault on them.
template <class T>
bool argument_visible(const T &) {
    return true;
}
template <class T>
bool argument_visible(T *pointer) {
    return pointer == nullptr || device_visible(pointer);
}

template <class... P>
struct Launch {
    const char *name;
    void (*kernel)(P...);
    dim3 grid, block;
    size_t shared_bytes;
    cudaStream_t stream;
    bool overlapping = false;

    template <class... A>
    void operator()(A &&...arguments) const {
        static_assert(sizeof...(A) == sizeof...(P), "kernel argument count");
        std::tuple<typename std::decay<P>::type...> values(std::forward<A>(arguments)...);
        bool visible = std::apply([](const auto &...v) { return (argument_visible(v) && ...); }, values);
        void (*k)(P...) = kernel;
        Body body = [k, values]() { std::apply(k, values); };
        if (!visible) {
            body = [] { fault(cudaErrorIllegalAddress, "a pointer argument is not device memory"); };
        }
        launch(name, address_of(kernel), grid, block, shared_bytes, stream, std::move(body), overlapping);
    }
};

template <class... P>
Launch<P...> launcher(const char *name, void (*kernel)(P...), dim3 grid, dim3 block, size_t shared_bytes,
                      cudaStream_t stream) {
    return Launch<P...>{name, kernel, grid, block, shared_bytes, stream};
}

}  // namespace zse_emu

template <class T>
cudaError_t cudaFuncSetAttribute(T *function, cudaFuncAttribute attribute, int value) {
    return zse_emu::set_function_attribute(zse_emu::address_of(function), attribute, value);
}

// ---- built-in variables and device intrinsics ----
#define threadIdx (::zse_emu::current->index)
#define blockIdx (::zse_emu::block_index)
#define blockDim (::zse_emu::block_dim)
#define gridDim (::zse_emu::grid_dim)
#define warpSize 32

inline void __syncthreads() { zse_emu::sync_block(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { zse_emu::sync_warp(mask); }
inline void __threadfence() {}
inline void __threadfence_block() {}

template <class T>
T __shfl_sync(unsigned mask, T value, int source, int width = 32) {
    const unsigned lane = zse_emu::current->lane;
    const unsigned base = lane & ~static_cast<unsigned>(width - 1);
    return zse_emu::shuffle(mask, value, base + (static_cast<unsigned>(source) & (width - 1)));
}
template <class T>
T __shfl_xor_sync(unsigned mask, T value, int lane_mask, int width = 32) {
    const unsigned lane = zse_emu::current->lane;
    unsigned source = lane ^ static_cast<unsigned>(lane_mask);
    if ((source & ~static_cast<unsigned>(width - 1)) != (lane & ~static_cast<unsigned>(width - 1))) source = lane;
    return zse_emu::shuffle(mask, value, source);
}
template <class T>
T __shfl_down_sync(unsigned mask, T value, unsigned delta, int width = 32) {
    const unsigned lane = zse_emu::current->lane;
    const unsigned in_segment = lane & static_cast<unsigned>(width - 1);
    return zse_emu::shuffle(mask, value, in_segment + delta < static_cast<unsigned>(width) ? lane + delta : lane);
}
template <class T>
T __shfl_up_sync(unsigned mask, T value, unsigned delta, int width = 32) {
    const unsigned lane = zse_emu::current->lane;
    const unsigned in_segment = lane & static_cast<unsigned>(width - 1);
    return zse_emu::shuffle(mask, value, in_segment >= delta ? lane - delta : lane);
}
inline unsigned __ballot_sync(unsigned mask, int predicate) { return zse_emu::ballot(mask, predicate != 0); }
inline int __any_sync(unsigned mask, int predicate) { return zse_emu::ballot(mask, predicate != 0) != 0; }
inline int __all_sync(unsigned mask, int predicate) {
    return zse_emu::ballot(mask, predicate != 0) == (mask & zse_emu::ballot(mask, true));
}

// A read-only cached load: on the GPU a vector load from a misaligned address faults, so it does here.
template <class T>
T __ldg(const T *pointer) {
    if (reinterpret_cast<uintptr_t>(pointer) % alignof(T) != 0) {
        zse_emu::fault(cudaErrorMisalignedAddress, "__ldg from a misaligned address");
    }
    return *pointer;
}

// A load that bypasses L1 (coherent at L2): here, where there is no L1, a plain load.
template <class T>
T __ldcg(const T *pointer) {
    return *pointer;
}

// Fibers never interleave inside an expression, so atomics are plain read-modify-writes returning the old value.
template <class T>
T atomicAdd(T *address, T value) {
    T old = *address;
    *address = old + value;
    return old;
}
template <class T>
T atomicMax(T *address, T value) {
    T old = *address;
    *address = old > value ? old : value;
    return old;
}
template <class T>
T atomicMin(T *address, T value) {
    T old = *address;
    *address = old < value ? old : value;
    return old;
}
template <class T>
T atomicExch(T *address, T value) {
    T old = *address;
    *address = value;
    return old;
}
template <class T>
T atomicCAS(T *address, T compare, T value) {
    T old = *address;
    if (old == compare) *address = value;
    return old;
}

// kernel<<<grid, block, shared, stream>>>(arguments) is written ZSE_LAUNCH(kernel, grid, block, shared, stream)(arguments).
#define ZSE_LAUNCH(kernel, grid, block, shared, stream) \
    ::zse_emu::launcher(#kernel, kernel, dim3(grid), dim3(block), (shared), (stream))
// extern __shared__ type name[]: the launch's dynamic shared memory, 16-byte aligned.
#define ZSE_DYNAMIC_SHARED(type, name) type *name = static_cast<type *>(::zse_emu::dynamic_shared())

#endif
