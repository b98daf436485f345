// Devices, memory, streams, events, graphs and the per-thread error message.
#include <cstdio>
#include <cstring>
#include <string>

#include "status.cuh"

#include <atomic>

namespace {
thread_local std::string last_error;
std::atomic<bool> overlap_asked{true};   // zse_cuda_set_overlap
std::atomic<int> capability_major[64];   // per device, 0 until read
}

namespace zse {

int fail(cudaError_t error, const char *what) {
    cudaGetLastError();  // clears a sticky launch error so the next call starts clean
    char message[512];
    std::snprintf(message, sizeof message, "%s: %s (CUDA error %d)", what, cudaGetErrorString(error),
                  static_cast<int>(error));
    last_error = message;
    return static_cast<int>(error);
}

int refuse(const char *what) {
    last_error = what;
    return ZSE_CUDA_INVALID_ARGUMENT;
}

int refuse(const char *entry, const char *what) {
    last_error = std::string(entry) + ": " + what;
    return ZSE_CUDA_INVALID_ARGUMENT;
}

int ok() {
    last_error.clear();
    return 0;
}

int launched(const char *kernel) {
    cudaError_t error = cudaGetLastError();
    return error == cudaSuccess ? ok() : fail(error, kernel);
}

bool overlap_enabled() {
    if (!overlap_asked.load(std::memory_order_relaxed)) return false;
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= 64) return false;
    int major = capability_major[device].load(std::memory_order_relaxed);
    if (major == 0) {
        if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) return false;
        capability_major[device].store(major, std::memory_order_relaxed);
    }
    return major >= 9;
}

size_t max_block_shared() {
    int device = 0, bytes = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess) {
        cudaGetLastError();  // not a launch's error
        return 48 * 1024;
    }
    return static_cast<size_t>(bytes);
}

}  // namespace zse

extern "C" {

int zse_cuda_abi_version(void) { return ZSE_CUDA_ABI_VERSION; }

int zse_cuda_set_overlap(int on) {
    ZSE_REQUIRE(on == 0 || on == 1, "zse_cuda_set_overlap: on must be 0 or 1");
    overlap_asked.store(on == 1, std::memory_order_relaxed);
    return zse::ok();
}

const char *zse_cuda_last_error(void) { return last_error.c_str(); }

int zse_cuda_driver_version(int *version) {
    ZSE_REQUIRE(version != nullptr, "zse_cuda_driver_version: version is NULL");
    ZSE_CHECK(cudaDriverGetVersion(version), "cudaDriverGetVersion");
    return zse::ok();
}

int zse_cuda_device_count(int *count) {
    ZSE_REQUIRE(count != nullptr, "zse_cuda_device_count: count is NULL");
    *count = 0;
    ZSE_CHECK(cudaGetDeviceCount(count), "cudaGetDeviceCount");
    return zse::ok();
}

int zse_cuda_device_name(int device, char *name, int capacity) {
    ZSE_REQUIRE(name != nullptr && capacity > 0, "zse_cuda_device_name: no room for the name");
    cudaDeviceProp properties;
    ZSE_CHECK(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties");
    std::snprintf(name, static_cast<size_t>(capacity), "%s", properties.name);
    return zse::ok();
}

int zse_cuda_device_capability(int device, int *major, int *minor) {
    ZSE_REQUIRE(major != nullptr && minor != nullptr, "zse_cuda_device_capability: NULL output");
    ZSE_CHECK(cudaDeviceGetAttribute(major, cudaDevAttrComputeCapabilityMajor, device), "cudaDeviceGetAttribute");
    ZSE_CHECK(cudaDeviceGetAttribute(minor, cudaDevAttrComputeCapabilityMinor, device), "cudaDeviceGetAttribute");
    return zse::ok();
}

int zse_cuda_device_memory(int device, uint64_t *free_bytes, uint64_t *total_bytes) {
    ZSE_REQUIRE(free_bytes != nullptr && total_bytes != nullptr, "zse_cuda_device_memory: NULL output");
    int current = 0;
    ZSE_CHECK(cudaGetDevice(&current), "cudaGetDevice");
    ZSE_CHECK(cudaSetDevice(device), "cudaSetDevice");
    size_t free_now = 0, total = 0;
    cudaError_t error = cudaMemGetInfo(&free_now, &total);
    cudaSetDevice(current);
    ZSE_CHECK(error, "cudaMemGetInfo");
    *free_bytes = free_now;
    *total_bytes = total;
    return zse::ok();
}

int zse_cuda_device_multiprocessors(int device, int *count) {
    ZSE_REQUIRE(count != nullptr, "zse_cuda_device_multiprocessors: count is NULL");
    ZSE_CHECK(cudaDeviceGetAttribute(count, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    return zse::ok();
}

int zse_cuda_set_device(int device) {
    ZSE_CHECK(cudaSetDevice(device), "cudaSetDevice");
    return zse::ok();
}

int zse_cuda_device_synchronize(void) {
    ZSE_CHECK(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    return zse::ok();
}

int zse_cuda_malloc(void **pointer, uint64_t bytes) {
    ZSE_REQUIRE(pointer != nullptr && bytes > 0, "zse_cuda_malloc: NULL output or 0 bytes");
    *pointer = nullptr;
    ZSE_CHECK(cudaMalloc(pointer, bytes), "cudaMalloc");
    return zse::ok();
}

int zse_cuda_free(void *pointer) {
    ZSE_CHECK(cudaFree(pointer), "cudaFree");
    return zse::ok();
}

int zse_cuda_malloc_host(void **pointer, uint64_t bytes) {
    ZSE_REQUIRE(pointer != nullptr && bytes > 0, "zse_cuda_malloc_host: NULL output or 0 bytes");
    *pointer = nullptr;
    ZSE_CHECK(cudaMallocHost(pointer, bytes), "cudaMallocHost");
    return zse::ok();
}

int zse_cuda_free_host(void *pointer) {
    ZSE_CHECK(cudaFreeHost(pointer), "cudaFreeHost");
    return zse::ok();
}

int zse_cuda_host_register(void *pointer, uint64_t bytes) {
    ZSE_REQUIRE(pointer != nullptr && bytes > 0, "zse_cuda_host_register: NULL range");
    // Read-only: the .zse mapping is PROT_READ, and the GPU only reads weights.
    ZSE_CHECK(cudaHostRegister(pointer, bytes, cudaHostRegisterReadOnly), "cudaHostRegister");
    return zse::ok();
}

int zse_cuda_host_unregister(void *pointer) {
    ZSE_CHECK(cudaHostUnregister(pointer), "cudaHostUnregister");
    return zse::ok();
}

int zse_cuda_copy_to_device(void *device_dst, const void *host_src, uint64_t bytes, void *stream) {
    ZSE_CHECK(cudaMemcpyAsync(device_dst, host_src, bytes, cudaMemcpyHostToDevice, static_cast<cudaStream_t>(stream)),
              "cudaMemcpyAsync to device");
    return zse::ok();
}

int zse_cuda_copy_to_host(void *host_dst, const void *device_src, uint64_t bytes, void *stream) {
    ZSE_CHECK(cudaMemcpyAsync(host_dst, device_src, bytes, cudaMemcpyDeviceToHost, static_cast<cudaStream_t>(stream)),
              "cudaMemcpyAsync to host");
    return zse::ok();
}

int zse_cuda_copy_on_device(void *device_dst, const void *device_src, uint64_t bytes, void *stream) {
    ZSE_CHECK(cudaMemcpyAsync(device_dst, device_src, bytes, cudaMemcpyDeviceToDevice,
                              static_cast<cudaStream_t>(stream)),
              "cudaMemcpyAsync on device");
    return zse::ok();
}

int zse_cuda_memset(void *device_dst, int value, uint64_t bytes, void *stream) {
    ZSE_CHECK(cudaMemsetAsync(device_dst, value, bytes, static_cast<cudaStream_t>(stream)), "cudaMemsetAsync");
    return zse::ok();
}

int zse_cuda_stream_create(void **stream) {
    ZSE_REQUIRE(stream != nullptr, "zse_cuda_stream_create: stream is NULL");
    cudaStream_t created = nullptr;
    ZSE_CHECK(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking), "cudaStreamCreate");
    *stream = created;
    return zse::ok();
}

int zse_cuda_stream_destroy(void *stream) {
    ZSE_CHECK(cudaStreamDestroy(static_cast<cudaStream_t>(stream)), "cudaStreamDestroy");
    return zse::ok();
}

int zse_cuda_stream_synchronize(void *stream) {
    ZSE_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
    return zse::ok();
}

int zse_cuda_stream_wait_event(void *stream, void *event) {
    ZSE_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event), 0),
              "cudaStreamWaitEvent");
    return zse::ok();
}

int zse_cuda_event_create(void **event) {
    ZSE_REQUIRE(event != nullptr, "zse_cuda_event_create: event is NULL");
    cudaEvent_t created = nullptr;
    ZSE_CHECK(cudaEventCreate(&created), "cudaEventCreate");
    *event = created;
    return zse::ok();
}

int zse_cuda_event_destroy(void *event) {
    ZSE_CHECK(cudaEventDestroy(static_cast<cudaEvent_t>(event)), "cudaEventDestroy");
    return zse::ok();
}

int zse_cuda_event_record(void *event, void *stream) {
    ZSE_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)), "cudaEventRecord");
    return zse::ok();
}

int zse_cuda_event_synchronize(void *event) {
    ZSE_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event)), "cudaEventSynchronize");
    return zse::ok();
}

int zse_cuda_event_elapsed_ms(float *milliseconds, void *start, void *end) {
    ZSE_REQUIRE(milliseconds != nullptr, "zse_cuda_event_elapsed_ms: milliseconds is NULL");
    ZSE_CHECK(cudaEventElapsedTime(milliseconds, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)),
              "cudaEventElapsedTime");
    return zse::ok();
}

int zse_cuda_graph_begin_capture(void *stream) {
    ZSE_REQUIRE(stream != nullptr, "zse_cuda_graph_begin_capture: the legacy stream cannot be captured");
    ZSE_CHECK(cudaStreamBeginCapture(static_cast<cudaStream_t>(stream), cudaStreamCaptureModeThreadLocal),
              "cudaStreamBeginCapture");
    return zse::ok();
}

int zse_cuda_graph_end_capture(void *stream, void **graph) {
    ZSE_REQUIRE(graph != nullptr, "zse_cuda_graph_end_capture: graph is NULL");
    cudaGraph_t captured = nullptr;
    ZSE_CHECK(cudaStreamEndCapture(static_cast<cudaStream_t>(stream), &captured), "cudaStreamEndCapture");
    cudaGraphExec_t executable = nullptr;
    cudaError_t error = cudaGraphInstantiate(&executable, captured, 0);
    cudaGraphDestroy(captured);
    ZSE_CHECK(error, "cudaGraphInstantiate");
    *graph = executable;
    return zse::ok();
}

int zse_cuda_graph_launch(void *graph, void *stream) {
    ZSE_REQUIRE(graph != nullptr, "zse_cuda_graph_launch: graph is NULL");
    ZSE_CHECK(cudaGraphLaunch(static_cast<cudaGraphExec_t>(graph), static_cast<cudaStream_t>(stream)),
              "cudaGraphLaunch");
    return zse::ok();
}

int zse_cuda_graph_destroy(void *graph) {
    ZSE_CHECK(cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(graph)), "cudaGraphExecDestroy");
    return zse::ok();
}

}  // extern "C"
