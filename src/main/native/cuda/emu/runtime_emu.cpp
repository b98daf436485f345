// The emulated device behind cuda_emu.h: fibers for the threads of a block, memory, streams, events and graphs.
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <numeric>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_emu.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define ZSE_EMU_ASAN 1
#else
#define ZSE_EMU_ASAN 0
#endif

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace zse_emu {

Thread *current = nullptr;
uint3 block_index{0, 0, 0};
dim3 block_dim;
dim3 grid_dim;

namespace {

// One lock for the whole device: blocks run one at a time (what makes statics shared memory) and the tables below
// are shared by every calling thread.
std::recursive_mutex device_lock;
thread_local cudaError_t last_error = cudaSuccess;
thread_local int captures_on_this_thread = 0;

// ---- context switching ----
#if ZSE_EMU_ASAN
constexpr size_t kStackBytes = 512 * 1024;  // instrumented frames are larger
#else
constexpr size_t kStackBytes = 128 * 1024;
#endif
constexpr size_t kGuardBytes = 4096;

#if defined(__x86_64__)
// Saves the callee-saved registers on the current stack, stores its pointer in *from, loads `to` and returns on it.
extern "C" void zse_emu_switch(void **from, void *to);
extern "C" void zse_emu_fiber_start();
asm(R"(
.text
.p2align 4
.type zse_emu_switch,@function
zse_emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
.size zse_emu_switch,.-zse_emu_switch
.p2align 4
.type zse_emu_fiber_start,@function
zse_emu_fiber_start:
    call zse_emu_fiber_main
    ud2
.size zse_emu_fiber_start,.-zse_emu_fiber_start
)");
struct Context {
    void *stack_pointer = nullptr;
};
#else
struct Context {
    ucontext_t context;
};
#endif

struct Fiber {
    Thread thread;
    Context context;
    char *stack = nullptr;  // kStackBytes usable above a guard page; taken when the thread first runs
    enum State { NotStarted, Ready, AtBlockBarrier, AtWarpBarrier, Done } state = NotStarted;
#if ZSE_EMU_ASAN
    void *fake_stack = nullptr;
#endif
};

Context scheduler;
#if ZSE_EMU_ASAN
void *scheduler_fake_stack = nullptr;
const void *scheduler_stack_bottom = nullptr;  // the calling thread's stack, where fibers return to
size_t scheduler_stack_size = 0;
#endif

struct Warp {
    uint64_t slots[32];
    unsigned live = 0;     // lanes not yet exited
    unsigned arrived = 0;  // lanes waiting at the warp barrier
};

struct Block {
    std::vector<Fiber> fibers;
    std::vector<Warp> warps;
    unsigned live = 0;
    unsigned arrived = 0;  // threads waiting at __syncthreads
    void *dynamic_shared = nullptr;
    const Body *body = nullptr;
    cudaError_t error = cudaSuccess;
    std::string error_message;
    size_t first_live = 0;    // fibers below it are done
    size_t next_to_start = 0; // fibers from it on have not started
    bool waited = false;      // a thread called wait_for_previous_grid
};

Block block;
Fiber *running = nullptr;
Fiber *returned = nullptr;  // the fiber that last switched to the scheduler

void raw_switch(Context &from, Context &to) {
#if defined(__x86_64__)
    zse_emu_switch(&from.stack_pointer, to.stack_pointer);
#else
    swapcontext(&from.context, &to.context);
#endif
}

// The scheduler starts the block's first thread; from then on a thread that waits or ends hands over directly to the
// next ready one (round-robin), and control returns to the scheduler only when none is ready.
void switch_to_fiber(Fiber &f) {
    running = &f;
    current = &f.thread;
#if ZSE_EMU_ASAN
    __sanitizer_start_switch_fiber(&scheduler_fake_stack, f.stack, kStackBytes);
#endif
    raw_switch(scheduler, f.context);
#if ZSE_EMU_ASAN
    __sanitizer_finish_switch_fiber(scheduler_fake_stack, nullptr, nullptr);
#endif
    running = nullptr;
    current = nullptr;
}

// The next started, ready fiber after `from`, round-robin over the started, unfinished ones.
Fiber *next_ready(Fiber &from) {
    while (block.first_live < block.next_to_start && block.fibers[block.first_live].state == Fiber::Done) {
        block.first_live++;
    }
    const size_t begin = block.first_live, end = block.next_to_start;
    const size_t at = static_cast<size_t>(&from - block.fibers.data());
    for (size_t i = at + 1; i < end; i++) {
        if (block.fibers[i].state == Fiber::Ready) return &block.fibers[i];
    }
    for (size_t i = begin; i <= at && i < end; i++) {
        if (block.fibers[i].state == Fiber::Ready) return &block.fibers[i];
    }
    return nullptr;
}

// Leaves the running fiber for the next ready one, or for the scheduler when none is ready, the fiber finished (its
// stack can be reused only once nothing runs on it) or the kernel faulted.
void leave(bool finished) {
    Fiber &f = *running;
    Fiber *next = block.error == cudaSuccess && !finished ? next_ready(f) : nullptr;
    Context &to = next != nullptr ? next->context : scheduler;
#if ZSE_EMU_ASAN
    if (next != nullptr) {
        __sanitizer_start_switch_fiber(&f.fake_stack, next->stack, kStackBytes);
    } else {
        __sanitizer_start_switch_fiber(finished ? nullptr : &f.fake_stack, scheduler_stack_bottom,
                                       scheduler_stack_size);
    }
#endif
    if (next != nullptr) {
        running = next;
        current = &next->thread;
    } else {
        returned = &f;
    }
    raw_switch(f.context, to);
#if ZSE_EMU_ASAN
    __sanitizer_finish_switch_fiber(f.fake_stack, nullptr, nullptr);
#endif
    running = &f;
    current = &f.thread;
}

void release_block_barrier() {
    for (Fiber &f : block.fibers) {
        if (f.state == Fiber::AtBlockBarrier) f.state = Fiber::Ready;
    }
    block.arrived = 0;
}

// Releases the lanes waiting on `mask` once all of them have arrived.
bool try_release_warp(Warp &w, unsigned warp, unsigned mask) {
    if ((w.arrived & mask) != mask) return false;
    for (unsigned lane = 0; lane < 32; lane++) {
        if ((mask >> lane) & 1u) {
            Fiber &f = block.fibers[warp * 32 + lane];
            if (f.state == Fiber::AtWarpBarrier) f.state = Fiber::Ready;
        }
    }
    w.arrived &= ~mask;
    return true;
}

void finish_thread() {
    Fiber &f = *running;
    f.state = Fiber::Done;
    block.live--;
    Warp &w = block.warps[f.thread.warp];
    w.live &= ~(1u << f.thread.lane);
    if (block.arrived > 0 && block.arrived == block.live) release_block_barrier();
}

extern "C" __attribute__((used)) void zse_emu_fiber_main() {
#if ZSE_EMU_ASAN
    __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
    (*block.body)();
    finish_thread();
    leave(true);
    abort();  // a finished fiber is never resumed
}

#if !defined(__x86_64__)
void fiber_entry() { zse_emu_fiber_main(); }
#endif

// Stacks for the threads of a block, reused by every launch; a guard page below each catches overflow. A thread
// takes one when it first runs and gives it back when it ends, so a kernel without barriers runs every thread on the
// same (cache-hot) stack.
std::vector<char *> stacks;
std::vector<char *> free_stacks;

char *take_stack() {
    if (free_stacks.empty()) {
        void *memory = mmap(nullptr, kStackBytes + kGuardBytes, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (memory == MAP_FAILED) return nullptr;
        mprotect(memory, kGuardBytes, PROT_NONE);
        stacks.push_back(static_cast<char *>(memory) + kGuardBytes);
        return stacks.back();
    }
    char *stack = free_stacks.back();
    free_stacks.pop_back();
    return stack;
}

void prepare(Fiber &f) {
#if ZSE_EMU_ASAN
    ASAN_UNPOISON_MEMORY_REGION(f.stack, kStackBytes);  // an abandoned fiber may have left frames poisoned
    f.fake_stack = nullptr;
#endif
#if defined(__x86_64__)
    // Six zeroed callee-saved registers, then the return address zse_emu_switch's `ret` takes: the entry trampoline.
    // After that ret the stack pointer is 16-byte aligned, as the trampoline's call expects.
    // Tops staggered by lane, so the hot frames of a warp's stacks do not all fall into the same cache sets.
    uintptr_t top = (reinterpret_cast<uintptr_t>(f.stack) + kStackBytes - f.thread.lane * 192) &
                    ~static_cast<uintptr_t>(15);
    void **sp = reinterpret_cast<void **>(top - 56);
    for (int i = 0; i < 6; i++) sp[i] = nullptr;
    sp[6] = reinterpret_cast<void *>(&zse_emu_fiber_start);
    f.context.stack_pointer = sp;
#else
    getcontext(&f.context.context);
    f.context.context.uc_stack.ss_sp = f.stack;
    f.context.context.uc_stack.ss_size = kStackBytes;
    f.context.context.uc_link = nullptr;
    makecontext(&f.context.context, fiber_entry, 0);
#endif
}

std::string describe_thread() {
    char where[160];
    if (running == nullptr) return "";
    snprintf(where, sizeof where, " (block %u,%u,%u thread %u,%u,%u)", block_index.x, block_index.y, block_index.z,
             running->thread.index.x, running->thread.index.y, running->thread.index.z);
    return where;
}

// Runs one block to completion; false (with block.error set) if a thread faulted or the threads deadlocked.
bool run_block() {
    const unsigned count = block_dim.x * block_dim.y * block_dim.z;
    block.fibers.resize(count);
    block.warps.assign((count + 31) / 32, Warp{});
    block.live = count;
    block.arrived = 0;
    block.first_live = 0;
    block.next_to_start = 0;
    free_stacks.assign(stacks.rbegin(), stacks.rend());
    for (unsigned i = 0; i < count; i++) {
        Fiber &f = block.fibers[i];
        f.thread.index = uint3{i % block_dim.x, (i / block_dim.x) % block_dim.y, i / (block_dim.x * block_dim.y)};
        f.thread.lane = i % 32;
        f.thread.warp = i / 32;
        f.state = Fiber::NotStarted;
        f.stack = nullptr;
        block.warps[i / 32].live |= 1u << (i % 32);
    }
    // Ready threads first; a new one only when none is ready (it may complete a barrier the others wait at).
    for (;;) {
        while (block.first_live < block.next_to_start && block.fibers[block.first_live].state == Fiber::Done) {
            block.first_live++;
        }
        Fiber *f = nullptr;
        for (size_t i = block.first_live; i < block.next_to_start && f == nullptr; i++) {
            if (block.fibers[i].state == Fiber::Ready) f = &block.fibers[i];
        }
        if (f == nullptr) {
            if (block.next_to_start == count) break;
            f = &block.fibers[block.next_to_start++];
            f->stack = take_stack();
            if (f->stack == nullptr) {
                block.error = cudaErrorMemoryAllocation;
                block.error_message = "no memory for the emulated threads' stacks";
                return false;
            }
            prepare(*f);
            f->state = Fiber::Ready;
        }
        switch_to_fiber(*f);
        if (block.error != cudaSuccess) return false;
        if (returned != nullptr && returned->state == Fiber::Done) {
            free_stacks.push_back(returned->stack);
            returned->stack = nullptr;
        }
        returned = nullptr;
    }
    for (const Fiber &f : block.fibers) {
        if (f.state != Fiber::Done) {
            block.error = cudaErrorLaunchFailure;
            block.error_message = "deadlock: threads wait at a barrier the others never reach (__syncthreads or a "
                                  "warp collective in divergent code)";
            return false;
        }
    }
    return true;
}

// ---- memory ----
enum class Memory { Device, Pinned, Registered };
struct Allocation {
    size_t bytes;
    Memory kind;
};
std::map<uintptr_t, Allocation> allocations;  // start -> allocation
size_t device_bytes = 0;

// The allocation holding [pointer, pointer + bytes), or null.
const std::pair<const uintptr_t, Allocation> *find(const void *pointer, size_t bytes) {
    uintptr_t p = reinterpret_cast<uintptr_t>(pointer);
    auto it = allocations.upper_bound(p);
    if (it == allocations.begin()) return nullptr;
    --it;
    if (p + bytes > it->first + it->second.bytes || p < it->first) return nullptr;
    return &*it;
}

bool is_device(const void *pointer, size_t bytes) {
    auto *a = find(pointer, bytes);
    return a != nullptr && a->second.kind == Memory::Device;
}

size_t total_memory() {
    if (const char *configured = getenv("ZSE_CUDA_EMU_MEMORY")) {
        char *end = nullptr;
        unsigned long long bytes = strtoull(configured, &end, 10);
        if (end != configured && *end == '\0' && bytes > 0) return bytes;
    }
    long pages = sysconf(_SC_PHYS_PAGES);
    long page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : (size_t{16} << 30);
}

cudaError_t set_error(cudaError_t error) {
    if (error != cudaSuccess) last_error = error;
    return error;
}

}  // namespace

void *dynamic_shared() { return block.dynamic_shared; }

void sync_block() {
    Fiber &f = *running;
    if (++block.arrived == block.live) {
        release_block_barrier();
        return;
    }
    f.state = Fiber::AtBlockBarrier;
    leave(false);
}

uint64_t *warp_slots() { return block.warps[running->thread.warp].slots; }

void sync_warp(unsigned mask) {
    Fiber &f = *running;
    Warp &w = block.warps[f.thread.warp];
    if ((mask >> f.thread.lane & 1u) == 0) fault(cudaErrorLaunchFailure, "a warp collective whose mask omits the caller");
    if ((mask & ~w.live) != 0) fault(cudaErrorLaunchFailure, "a warp collective names lanes that exited or do not exist");
    w.arrived |= 1u << f.thread.lane;
    if (try_release_warp(w, f.thread.warp, mask)) return;
    f.state = Fiber::AtWarpBarrier;
    leave(false);
}

void fault(cudaError_t error, const char *what) {
    block.error = error;
    block.error_message = std::string(what) + describe_thread();
    if (running == nullptr) {  // only kernel code calls it, on a fiber
        fprintf(stderr, "zse cuda emulation: %s outside a kernel\n", what);
        abort();
    }
    leave(true);
    abort();
}

bool device_visible(const void *pointer) { return find(pointer, 1) != nullptr; }

namespace {

struct FunctionAttributes {
    int max_dynamic_shared = 48 * 1024;
};
std::map<const void *, FunctionAttributes> function_attributes;
std::string last_fault_message;

// The most dynamic shared memory a block may take: sm_80's 163 KB, the capability the emulated device reports, or
// ZSE_CUDA_EMU_SHARED_KB's (read at each call, so a test can emulate sm_86's 99 KB for a while).
size_t max_dynamic_shared() {
    if (const char *configured = getenv("ZSE_CUDA_EMU_SHARED_KB")) {
        char *end = nullptr;
        unsigned long kb = strtoul(configured, &end, 10);
        if (end != configured && *end == '\0' && kb >= 48 && kb <= 227) return kb * 1024;
    }
    return 163 * 1024;
}

constexpr int kUnwrittenShared = 0xA5;             // each block's dynamic shared memory before it runs

// The order a launch's blocks run in: every block once, starting and stepping through the grid's linear indices by
// amounts that change from launch to launch (a stride coprime with the count). A GPU promises no order, so a kernel
// that assumes one (block 0 first, the last index last) fails its tests here; the same launches give the same orders.
struct BlockOrder {
    uint64_t blocks, stride, at;
    dim3 grid;

    explicit BlockOrder(dim3 g) : blocks(1ull * g.x * g.y * g.z), grid(g) {
        static uint64_t launches = 0;
        const uint64_t mixed = ++launches * 0x9E3779B97F4A7C15ull;
        stride = 1 + (mixed >> 20) % blocks;
        while (std::gcd(stride, blocks) != 1) stride++;
        at = (mixed >> 40) % blocks;
    }

    uint3 next() {
        const uint64_t k = at;
        at = (at + stride) % blocks;
        return uint3{static_cast<unsigned>(k % grid.x), static_cast<unsigned>(k / grid.x % grid.y),
                     static_cast<unsigned>(k / (1ull * grid.x * grid.y))};
    }
};

cudaError_t run_kernel(const char *name, const void *function, dim3 grid, dim3 threads, size_t shared_bytes,
                       const Body &body, bool overlapping) {
    std::lock_guard<std::recursive_mutex> hold(device_lock);
    const unsigned long long count = 1ull * threads.x * threads.y * threads.z;
    if (count == 0 || count > 1024 || threads.x > 1024 || threads.y > 1024 || threads.z > 64 || grid.x == 0 ||
        grid.y == 0 || grid.z == 0 || grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535) {
        fprintf(stderr, "zse cuda emulation: %s: bad launch configuration\n", name);
        return cudaErrorInvalidConfiguration;
    }
    int allowed = function_attributes[function].max_dynamic_shared;
    if (shared_bytes > static_cast<size_t>(allowed)) {
        fprintf(stderr, "zse cuda emulation: %s: %zu bytes of dynamic shared memory, %d allowed\n", name,
                shared_bytes, allowed);
        return cudaErrorInvalidValue;
    }
#if ZSE_EMU_ASAN
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) == 0) {
        void *bottom = nullptr;
        pthread_attr_getstack(&attributes, &bottom, &scheduler_stack_size);
        scheduler_stack_bottom = bottom;
        pthread_attr_destroy(&attributes);
    }
#endif
    block.body = &body;
    block.error = cudaSuccess;
    block_dim = threads;
    grid_dim = grid;
    // The exact size, so reading past it is an error under AddressSanitizer.
    void *shared = nullptr;
    if (posix_memalign(&shared, 16, shared_bytes == 0 ? 1 : shared_bytes) != 0) return cudaErrorMemoryAllocation;
    block.dynamic_shared = shared;
    bool ok = true;
    BlockOrder order(grid);
    for (uint64_t i = 0; i < order.blocks && ok; i++) {
        block_index = order.next();
        memset(shared, kUnwrittenShared, shared_bytes);  // a GPU leaves a block's shared memory undefined
        block.waited = false;
        ok = run_block();
        if (ok && overlapping && !block.waited) {
            block.error = cudaErrorLaunchFailure;
            block.error_message = "launched to overlap the kernel before it, but no thread of a block waited for it "
                                  "(wait_for_previous_grid)";
            ok = false;
        }
    }
    free(shared);
    block.dynamic_shared = nullptr;
    block.body = nullptr;
    if (!ok) {
        last_fault_message = std::string(name) + ": " + block.error_message;
        fprintf(stderr, "zse cuda emulation: %s\n", last_fault_message.c_str());
        return block.error;
    }
    return cudaSuccess;
}

}  // namespace

// ---- streams, events, graphs ----
struct Graph {
    std::vector<std::function<cudaError_t()>> work;
};
struct Stream {
    Graph *capture = nullptr;   // non-null while capturing
    bool invalidated = false;   // a capture broken by a call the GPU would refuse
};
struct Event {
    std::chrono::steady_clock::time_point at{};
    bool recorded = false;
};

namespace {

// Runs `work` now, or records it when `stream` is capturing.
cudaError_t submit(cudaStream_t stream, std::function<cudaError_t()> work) {
    std::lock_guard<std::recursive_mutex> hold(device_lock);
    if (stream != nullptr && stream->capture != nullptr) {
        stream->capture->work.push_back(std::move(work));
        return cudaSuccess;
    }
    return work();
}

}  // namespace

void waited_for_previous_grid() { block.waited = true; }

cudaError_t launch(const char *name, const void *function, dim3 grid, dim3 block_threads, size_t shared_bytes,
                   cudaStream_t stream, Body body, bool overlapping) {
    cudaError_t status = submit(stream, [=]() {
        return run_kernel(name, function, grid, block_threads, shared_bytes, body, overlapping);
    });
    return set_error(status);
}

cudaError_t set_function_attribute(const void *function, cudaFuncAttribute attribute, int value) {
    std::lock_guard<std::recursive_mutex> hold(device_lock);
    if (attribute != cudaFuncAttributeMaxDynamicSharedMemorySize || value < 0 ||
        static_cast<size_t>(value) > max_dynamic_shared()) {
        return cudaErrorInvalidValue;
    }
    function_attributes[function].max_dynamic_shared = value;
    return cudaSuccess;
}

}  // namespace zse_emu

using namespace zse_emu;

cudaError_t cudaGetLastError() {
    cudaError_t error = last_error;
    last_error = cudaSuccess;
    return error;
}

const char *cudaGetErrorString(cudaError_t error) {
    switch (error) {
        case cudaSuccess: return "no error";
        case cudaErrorInvalidValue: return "invalid argument";
        case cudaErrorHostMemoryAlreadyRegistered: return "part or all of the requested memory range is already mapped";
        case cudaErrorHostMemoryNotRegistered: return "pointer does not correspond to a registered memory region";
        case cudaErrorMemoryAllocation: return "out of memory";
        case cudaErrorInvalidConfiguration: return "invalid configuration argument";
        case cudaErrorInvalidDevice: return "invalid device ordinal";
        case cudaErrorInvalidResourceHandle: return "invalid resource handle";
        case cudaErrorNotReady: return "device not ready";
        case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
        case cudaErrorMisalignedAddress: return "misaligned address";
        case cudaErrorLaunchFailure: return "unspecified launch failure";
        case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
        case cudaErrorStreamCaptureInvalidated: return "operation failed due to a previous error during capture";
        case cudaErrorStreamCaptureWrongThread: return "operation not permitted on an unjoined stream or thread";
    }
    return "unknown error";
}

cudaError_t cudaDriverGetVersion(int *version) {
    *version = 13000;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int *count) {
    *count = 1;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *properties, int device) {
    if (device != 0) return set_error(cudaErrorInvalidDevice);
    memset(properties, 0, sizeof *properties);
    snprintf(properties->name, sizeof properties->name, "zse CUDA emulation on the CPU");
    properties->totalGlobalMem = total_memory();
    properties->major = 8;
    properties->minor = 0;
    properties->multiProcessorCount = 1;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attribute, int device) {
    if (device != 0) return set_error(cudaErrorInvalidDevice);
    switch (attribute) {
        case cudaDevAttrComputeCapabilityMajor: *value = 8; return cudaSuccess;
        case cudaDevAttrComputeCapabilityMinor: *value = 0; return cudaSuccess;
        case cudaDevAttrMultiProcessorCount: *value = 1; return cudaSuccess;
        case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = static_cast<int>(max_dynamic_shared()); return cudaSuccess;
    }
    return set_error(cudaErrorInvalidValue);
}

cudaError_t cudaGetDevice(int *device) {
    *device = 0;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : set_error(cudaErrorInvalidDevice); }

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes) {
    std::lock_guard<std::recursive_mutex> hold(device_lock);
    size_t total = total_memory();
    *total_bytes = total;
    *free_bytes = device_bytes < total ? total - device_bytes : 0;
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }

namespace {

cudaError_t allocate(void **pointer, size_t bytes, Memory kind) {
    std::lock_guard<std::recursive_mutex> hold(device_lock);
    if (captures_on_this_thread > 0) return set_error(cudaErrorStreamCaptureUnsupported);
    if (kind == Memory::Device && device_bytes + bytes > total_memory()) return set_error(cudaErrorMemoryAllocation);
    // 256-byte aligned like cudaMalloc, and of the exact size: copies past the end are refused, and a kernel reading
    // past it is reported by AddressSanitizer.
    void *memory = nullptr;
    if (posix_memalign(&memory, 256, bytes) != 0) return set_error(cudaErrorMemoryAllocation);
    allocations[reinterpret_cast<uintptr_t>(memory)] = Allocation{bytes, kind};
    if (kind == Memory::Device) device_bytes += bytes;
    *pointer = memory;
    return cudaSuccess;
}

cudaError_t release(void *pointer, Memory kind) {
    std::lock_guard<std::recursive_mutex> hold(device_lock);
    if (pointer == nullptr) return cudaSuccess;
    if (captures_on_this_thread > 0) return set_error(cudaErrorStreamCaptureUnsupported);
    auto it = allocations.find(reinterpret_cast<uintptr_t>(pointer));
    if (it == allocations.end() || it->second.kind != kind) return set_error(cudaErrorInvalidValue);
    if (kind == Memory::Device) device_bytes -= it->second.bytes;
    allocations.erase(it);
    free(pointer);
    return cudaSuccess;
}

}  // namespace

cudaError_t cudaMalloc(void **pointer, size_t bytes) { return allocate(pointer, bytes, Memory::Device); }
cudaError_t cudaFree(void *pointer) { return release(pointer, Memory::Device); }
cudaError_t cudaMallocHost(void **pointer, size_t bytes) { return allocate(pointer, bytes, Memory::Pinned); }
cudaError_t cudaFreeHost(void *pointer) { return release(pointer, Memory::Pinned); }

cudaError_t cudaHostRegister(void *pointer, size_t bytes, unsigned) {
    std::lock_guard<std::recursive_mutex> hold(device_lock);
    if (pointer == nullptr || bytes == 0) return set_error(cudaErrorInvalidValue);
    // Any overlap with memory already registered or allocated is refused, as the driver refuses a page pinned twice:
    // the allocation starting last before the range's end must end before its start.
    uintptr_t p = reinterpret_cast<uintptr_t>(pointer);
    auto after = allocations.lower_bound(p + bytes);
    if (after != allocations.begin() && std::prev(after)->first + std::prev(after)->second.bytes > p) {
        return set_error(cudaErrorHostMemoryAlreadyRegistered);
    }
    allocations[p] = Allocation{bytes, Memory::Registered};
    return cudaSuccess;
}

cudaError_t cudaHostUnregister(void *pointer) {
    std::lock_guard<std::recursive_mutex> hold(device_lock);
    auto it = allocations.find(reinterpret_cast<uintptr_t>(pointer));
    if (it == allocations.end() || it->second.kind != Memory::Registered) {
        return set_error(cudaErrorHostMemoryNotRegistered);
    }
    allocations.erase(it);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t stream) {
    if (bytes == 0) return cudaSuccess;
    std::lock_guard<std::recursive_mutex> hold(device_lock);
    // The device side of a copy must lie inside one device allocation (the GPU would fault or refuse it).
    bool device_dst = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    bool device_src = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (kind == cudaMemcpyDefault) {
        device_dst = device_visible(dst);
        device_src = device_visible(src);
    }
    if ((device_dst && !is_device(dst, bytes) && find(dst, bytes) == nullptr) ||
        (device_src && !is_device(src, bytes) && find(src, bytes) == nullptr)) {
        fprintf(stderr, "zse cuda emulation: cudaMemcpyAsync of %zu bytes outside device memory\n", bytes);
        return set_error(cudaErrorInvalidValue);
    }
    return set_error(submit(stream, [=]() {
        memmove(dst, src, bytes);
        return cudaSuccess;
    }));
}

cudaError_t cudaMemsetAsync(void *dst, int value, size_t bytes, cudaStream_t stream) {
    if (bytes == 0) return cudaSuccess;
    std::lock_guard<std::recursive_mutex> hold(device_lock);
    if (!is_device(dst, bytes)) return set_error(cudaErrorInvalidValue);
    return set_error(submit(stream, [=]() {
        memset(dst, value, bytes);
        return cudaSuccess;
    }));
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned) {
    *stream = new Stream();
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
    if (stream == nullptr) return set_error(cudaErrorInvalidResourceHandle);
    std::lock_guard<std::recursive_mutex> hold(device_lock);
    if (stream->capture != nullptr) {
        delete stream->capture;
        captures_on_this_thread--;
    }
    delete stream;
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
    std::lock_guard<std::recursive_mutex> hold(device_lock);
    if (stream != nullptr && stream->capture != nullptr) {
        stream->invalidated = true;  // synchronizing a capturing stream breaks the capture on a GPU
        return set_error(cudaErrorStreamCaptureUnsupported);
    }
    return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t event, unsigned) {
    return event == nullptr ? set_error(cudaErrorInvalidResourceHandle) : cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event) {
    *event = new Event();
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
    if (event == nullptr) return set_error(cudaErrorInvalidResourceHandle);
    delete event;
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
    if (event == nullptr) return set_error(cudaErrorInvalidResourceHandle);
    return set_error(submit(stream, [event]() {
        event->at = std::chrono::steady_clock::now();
        event->recorded = true;
        return cudaSuccess;
    }));
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
    return event == nullptr ? set_error(cudaErrorInvalidResourceHandle) : cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float *milliseconds, cudaEvent_t start, cudaEvent_t end) {
    if (start == nullptr || end == nullptr) return set_error(cudaErrorInvalidResourceHandle);
    if (!start->recorded || !end->recorded) return set_error(cudaErrorInvalidResourceHandle);
    *milliseconds = std::chrono::duration<float, std::milli>(end->at - start->at).count();
    return cudaSuccess;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode) {
    std::lock_guard<std::recursive_mutex> hold(device_lock);
    if (stream == nullptr) return set_error(cudaErrorStreamCaptureUnsupported);
    if (stream->capture != nullptr) return set_error(cudaErrorInvalidValue);
    stream->capture = new Graph();
    stream->invalidated = false;
    captures_on_this_thread++;
    return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph) {
    std::lock_guard<std::recursive_mutex> hold(device_lock);
    if (stream == nullptr || stream->capture == nullptr) return set_error(cudaErrorInvalidValue);
    Graph *captured = stream->capture;
    stream->capture = nullptr;
    captures_on_this_thread--;
    if (stream->invalidated) {
        delete captured;
        return set_error(cudaErrorStreamCaptureInvalidated);
    }
    *graph = captured;
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *executable, cudaGraph_t graph, unsigned long long) {
    if (graph == nullptr) return set_error(cudaErrorInvalidValue);
    *executable = new Graph(*graph);
    return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
    delete graph;
    return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t executable, cudaStream_t stream) {
    if (executable == nullptr) return set_error(cudaErrorInvalidValue);
    return set_error(submit(stream, [executable]() {
        for (auto &work : executable->work) {
            if (cudaError_t error = work(); error != cudaSuccess) return error;
        }
        return cudaSuccess;
    }));
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t executable) {
    delete executable;
    return cudaSuccess;
}
