package io.zse.backend.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * FFM bindings to libzse_cuda (src/main/native/cuda/zse_cuda.h), one method handle per function. The methods are
 * thin: they pass raw device pointers and sizes, and turn a non-zero status into a {@link CudaException} carrying
 * {@code zse_cuda_last_error()}. Range and lifetime checks live in the classes above ({@link DeviceBuffer} and
 * friends), which are the only callers.
 */
public final class CudaLibrary {
    /** The ABI version this binding was written against (ZSE_CUDA_ABI_VERSION). */
    public static final int ABI_VERSION = 20;

    /** Every function of zse_cuda.h with its C signature as an FFM descriptor (GraalVM needs these registered). */
    public static final Map<String, FunctionDescriptor> FUNCTIONS = functions();

    private final Path path;
    private final Map<String, MemorySegment> symbols = new LinkedHashMap<>();
    /**
     * Downcall handles, bound on first call: binding every one up front cost about a third of a second of a cold start
     * (each spins its own stub), while probing a machine without a driver calls only three.
     */
    private final Map<String, MethodHandle> handles = new ConcurrentHashMap<>();
    private volatile Thread binder;

    private CudaLibrary(Path path, SymbolLookup lookup) {
        this.path = path;
        for (String function : FUNCTIONS.keySet()) {
            symbols.put(function, lookup.find(function).orElseThrow(() -> new IllegalStateException(
                    path + " lacks " + function + ": it was built from another version of zse_cuda.h")));
        }
    }

    private MethodHandle handle(String function) {
        return handles.computeIfAbsent(function,
                f -> Linker.nativeLinker().downcallHandle(symbols.get(f), FUNCTIONS.get(f)));
    }

    /**
     * Binds every function not bound yet on a daemon thread, once per library: a backend that will compute calls this
     * as it starts, so the first forward pass (tens of functions, each spinning its stub on first call) finds them
     * bound while the weights upload. A call that comes first binds its function itself, as before.
     */
    public synchronized void bindAllInBackground() {
        if (binder == null) {
            binder = Thread.ofPlatform().daemon().name("zse-cuda-bindings")
                    .start(() -> FUNCTIONS.keySet().forEach(this::handle));
        }
    }

    /** Waits for {@link #bindAllInBackground}'s thread, then says how many functions are bound (tests). */
    int boundAfterBackgroundBinding() throws InterruptedException {
        binder.join();
        return handles.size();
    }

    /**
     * Loads the library at {@code path} (kept loaded for the life of the process) and binds every function.
     *
     * @throws IllegalArgumentException the file cannot be loaded (missing, not a shared library, wrong ELF class)
     * @throws IllegalStateException    it lacks a function or reports another ABI version
     */
    public static CudaLibrary load(Path path) {
        SymbolLookup lookup = SymbolLookup.libraryLookup(path, Arena.global());
        CudaLibrary library = new CudaLibrary(path, lookup);
        int abi = library.abiVersion();
        if (abi != ABI_VERSION) {
            throw new IllegalStateException(path + " has ABI version " + abi + ", this build expects " + ABI_VERSION);
        }
        return library;
    }

    public Path path() {
        return path;
    }

    private static Map<String, FunctionDescriptor> functions() {
        Map<String, FunctionDescriptor> f = new LinkedHashMap<>();
        FunctionDescriptor pointerStatus = status(ADDRESS);
        FunctionDescriptor pointerPointerStatus = status(ADDRESS, ADDRESS);
        FunctionDescriptor copy = status(ADDRESS, ADDRESS, JAVA_LONG, ADDRESS);
        f.put("zse_cuda_abi_version", FunctionDescriptor.of(JAVA_INT));
        f.put("zse_cuda_last_error", FunctionDescriptor.of(ADDRESS));
        f.put("zse_cuda_driver_version", pointerStatus);
        f.put("zse_cuda_set_overlap", status(JAVA_INT));
        f.put("zse_cuda_device_count", pointerStatus);
        f.put("zse_cuda_device_name", status(JAVA_INT, ADDRESS, JAVA_INT));
        f.put("zse_cuda_device_capability", status(JAVA_INT, ADDRESS, ADDRESS));
        f.put("zse_cuda_device_memory", status(JAVA_INT, ADDRESS, ADDRESS));
        f.put("zse_cuda_device_multiprocessors", status(JAVA_INT, ADDRESS));
        f.put("zse_cuda_set_device", status(JAVA_INT));
        f.put("zse_cuda_device_synchronize", status());
        f.put("zse_cuda_malloc", status(ADDRESS, JAVA_LONG));
        f.put("zse_cuda_free", pointerStatus);
        f.put("zse_cuda_malloc_host", status(ADDRESS, JAVA_LONG));
        f.put("zse_cuda_free_host", pointerStatus);
        f.put("zse_cuda_host_register", status(ADDRESS, JAVA_LONG));
        f.put("zse_cuda_host_unregister", pointerStatus);
        f.put("zse_cuda_copy_to_device", copy);
        f.put("zse_cuda_copy_to_host", copy);
        f.put("zse_cuda_copy_on_device", copy);
        f.put("zse_cuda_memset", status(ADDRESS, JAVA_INT, JAVA_LONG, ADDRESS));
        f.put("zse_cuda_deinterleave_rows", status(ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_INT, ADDRESS));
        f.put("zse_cuda_stream_create", pointerStatus);
        f.put("zse_cuda_stream_destroy", pointerStatus);
        f.put("zse_cuda_stream_synchronize", pointerStatus);
        f.put("zse_cuda_stream_wait_event", pointerPointerStatus);
        f.put("zse_cuda_event_create", pointerStatus);
        f.put("zse_cuda_event_destroy", pointerStatus);
        f.put("zse_cuda_event_record", pointerPointerStatus);
        f.put("zse_cuda_event_synchronize", pointerStatus);
        f.put("zse_cuda_event_elapsed_ms", status(ADDRESS, ADDRESS, ADDRESS));
        f.put("zse_cuda_graph_begin_capture", pointerStatus);
        f.put("zse_cuda_graph_end_capture", pointerPointerStatus);
        f.put("zse_cuda_graph_launch", pointerPointerStatus);
        f.put("zse_cuda_graph_destroy", pointerStatus);
        f.put("zse_cuda_matmul", status(ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT,
                JAVA_INT, ADDRESS, ADDRESS));
        f.put("zse_cuda_embed", status(ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT,
                ADDRESS, ADDRESS));
        f.put("zse_cuda_quantize_rows", status(ADDRESS, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
        f.put("zse_cuda_integer_matvec", status(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, ADDRESS,
                ADDRESS, ADDRESS, ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS));
        f.put("zse_cuda_integer_matvec_add_rms_norm", status(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS,
                ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS, JAVA_FLOAT, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS,
                JAVA_INT, ADDRESS));
        f.put("zse_cuda_qkv_rope_store_kv", status(JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, JAVA_INT,
                JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS,
                ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_FLOAT, ADDRESS, JAVA_INT, ADDRESS));
        f.put("zse_cuda_swiglu_matvec", status(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, ADDRESS,
                ADDRESS, ADDRESS, ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS,
                JAVA_FLOAT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS));
        f.put("zse_cuda_add_bias", status(ADDRESS, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));
        f.put("zse_cuda_rms_norm", status(ADDRESS, JAVA_INT, ADDRESS, JAVA_INT, JAVA_FLOAT, ADDRESS, ADDRESS, ADDRESS,
                ADDRESS, ADDRESS));
        f.put("zse_cuda_add_rms_norm", status(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT, JAVA_FLOAT, ADDRESS,
                ADDRESS, ADDRESS, ADDRESS, ADDRESS));
        f.put("zse_cuda_rope_store_kv", status(ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT,
                ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS, JAVA_INT, ADDRESS));
        f.put("zse_cuda_rope", status(ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        f.put("zse_cuda_attention", status(ADDRESS, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, JAVA_INT,
                JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
        f.put("zse_cuda_store_kv", status(ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, ADDRESS,
                ADDRESS, ADDRESS, JAVA_INT, ADDRESS));
        f.put("zse_cuda_paged_attention", status(ADDRESS, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT,
                ADDRESS, ADDRESS, ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_FLOAT,
                JAVA_FLOAT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
        f.put("zse_cuda_paged_prefill_attention", status(ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS, JAVA_INT,
                JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_FLOAT,
                JAVA_FLOAT, JAVA_INT, ADDRESS, ADDRESS));
        f.put("zse_cuda_swiglu", status(ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
        f.put("zse_cuda_geglu", status(ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
        f.put("zse_cuda_relu_squared_glu", status(ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
        f.put("zse_cuda_add", status(ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
        f.put("zse_cuda_scale", status(ADDRESS, JAVA_LONG, JAVA_FLOAT, ADDRESS));
        f.put("zse_cuda_argmax", status(ADDRESS, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
        f.put("zse_cuda_top_k", status(ADDRESS, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        f.put("zse_cuda_sample", status(ADDRESS, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
        return Collections.unmodifiableMap(f);
    }

    private static FunctionDescriptor status(MemoryLayout... arguments) {
        return FunctionDescriptor.of(JAVA_INT, arguments);
    }

    // ---- invocation ----

    /** Calls {@code function}; a non-zero status becomes a CudaException with the library's message. */
    void call(String function, Object... arguments) {
        int status = invokeInt(function, arguments);
        if (status != 0) {
            throw new CudaException(status, lastError());
        }
    }

    private int invokeInt(String function, Object... arguments) {
        try {
            return (int) handle(function).invokeWithArguments(arguments);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(function + " failed", e);
        }
    }

    public int abiVersion() {
        return invokeInt("zse_cuda_abi_version");
    }

    /** The message of the last failed call on this thread. */
    public String lastError() {
        try {
            MemorySegment message = (MemorySegment) handle("zse_cuda_last_error").invokeExact();
            return message.reinterpret(4096).getString(0);
        } catch (Throwable e) {
            throw new IllegalStateException("zse_cuda_last_error failed", e);
        }
    }

    // ---- devices ----

    /** The CUDA driver version (e.g. 12080); 0 when no driver is installed. */
    public int driverVersion() {
        return intOut("zse_cuda_driver_version");
    }

    public int deviceCount() {
        return intOut("zse_cuda_device_count");
    }

    /** Name, memory and compute capability of device {@code index}. */
    public CudaDevice device(int index) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment name = arena.allocate(256);
            call("zse_cuda_device_name", index, name, 256);
            MemorySegment a = arena.allocate(JAVA_LONG);
            MemorySegment b = arena.allocate(JAVA_LONG);
            call("zse_cuda_device_memory", index, a, b);
            long free = a.get(JAVA_LONG, 0);
            long total = b.get(JAVA_LONG, 0);
            call("zse_cuda_device_capability", index, a, b);
            int major = a.get(JAVA_INT, 0);
            int minor = b.get(JAVA_INT, 0);
            call("zse_cuda_device_multiprocessors", index, a);
            return new CudaDevice(index, name.getString(0), total, free, major, minor, a.get(JAVA_INT, 0));
        }
    }

    public void setDevice(int index) {
        call("zse_cuda_set_device", index);
    }

    public void synchronizeDevice() {
        call("zse_cuda_device_synchronize");
    }

    private int intOut(String function) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_INT);
            call(function, out);
            return out.get(JAVA_INT, 0);
        }
    }

    /** Calls a function whose first argument receives a pointer (allocation, handle creation) and returns it. */
    MemorySegment pointerOut(String function, Object... rest) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Object[] arguments = new Object[rest.length + 1];
            arguments[0] = out;
            System.arraycopy(rest, 0, arguments, 1, rest.length);
            call(function, arguments);
            return out.get(ADDRESS, 0);
        }
    }

    /** Ends a capture on {@code stream} and returns the instantiated graph (zse_cuda_graph_end_capture). */
    MemorySegment endGraphCapture(MemorySegment stream) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            call("zse_cuda_graph_end_capture", stream, out);
            return out.get(ADDRESS, 0);
        }
    }

    float floatOut(String function, Object... rest) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.JAVA_FLOAT);
            Object[] arguments = new Object[rest.length + 1];
            arguments[0] = out;
            System.arraycopy(rest, 0, arguments, 1, rest.length);
            call(function, arguments);
            return out.get(ValueLayout.JAVA_FLOAT, 0);
        }
    }
}
