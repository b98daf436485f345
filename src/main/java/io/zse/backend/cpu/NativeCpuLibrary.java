package io.zse.backend.cpu;

import io.zse.backend.NativeLibraryLocation;
import io.zse.format.MappedFiles;
import io.zse.format.TensorType;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * FFM bindings to libzse_cpu (src/main/native/cpu/zse_cpu.h), one method handle per function. The kernels are bound
 * as critical downcalls: they never call back into Java and run for at most milliseconds. The products get only
 * off-heap addresses (the weights' mapping, the backend's activations, the quantized activations), so nothing is
 * copied or pinned; the converter's quantizers may also be handed Java arrays, which a critical downcall reads in
 * place. The C side checks nothing: {@link NativeWeight} validates every size before a call.
 */
public final class NativeCpuLibrary {
    /** The ABI version this binding was written against (ZSE_CPU_ABI_VERSION). */
    public static final int ABI_VERSION = 5;
    /** A product's status when one of its reads faulted (ZSE_CPU_FAULT). */
    private static final int FAULT = -3;

    public static final NativeLibraryLocation LOCATION =
            new NativeLibraryLocation("libzse_cpu.so", "zse.cpu.library", "ZSE_CPU_LIBRARY");

    /** The kernels, critical downcalls (heap access for the converter's tables); GraalVM needs these registered. */
    public static final Map<String, FunctionDescriptor> KERNELS = kernels();
    /** The library's queries and settings (ordinary downcalls). */
    public static final Map<String, FunctionDescriptor> QUERIES = queries();

    private final Path path;
    private final Map<String, MemorySegment> symbols = new HashMap<>();
    /**
     * Bound on first call: each distinct signature costs the JVM a generated stub class (a few ms of a cold start,
     * which no AOT cache holds), and a one-token generate calls about a third of the functions.
     */
    private final Map<String, MethodHandle> handles = new ConcurrentHashMap<>();

    private NativeCpuLibrary(Path path, SymbolLookup lookup) {
        this.path = path;
        QUERIES.keySet().forEach(name -> symbols.put(name, symbol(lookup, name)));
        KERNELS.keySet().forEach(name -> symbols.put(name, symbol(lookup, name)));
    }

    private MethodHandle handle(String name) {
        MethodHandle handle = handles.get(name);
        return handle != null ? handle : handles.computeIfAbsent(name, this::bind);
    }

    private MethodHandle bind(String name) {
        Linker linker = Linker.nativeLinker();
        FunctionDescriptor kernel = KERNELS.get(name);
        return kernel != null ? linker.downcallHandle(symbols.get(name), kernel, Linker.Option.critical(true))
                : linker.downcallHandle(symbols.get(name), QUERIES.get(name));
    }

    private MemorySegment symbol(SymbolLookup lookup, String name) {
        return lookup.find(name).orElseThrow(() -> new IllegalStateException(
                path + " lacks " + name + ": it was built from another version of zse_cpu.h"));
    }

    /**
     * Loads the library at {@code path} (kept loaded for the life of the process) and binds every function.
     *
     * @throws IllegalArgumentException the file cannot be loaded (missing, not a shared library, wrong ELF class)
     * @throws IllegalStateException    it lacks a function or reports another ABI version
     */
    public static NativeCpuLibrary load(Path path) {
        NativeCpuLibrary library = new NativeCpuLibrary(path, SymbolLookup.libraryLookup(path, Arena.global()));
        int abi = library.abiVersion();
        if (abi != ABI_VERSION) {
            throw new IllegalStateException(path + " has ABI version " + abi + ", this build expects " + ABI_VERSION);
        }
        return library;
    }

    public Path path() {
        return path;
    }

    private static Map<String, FunctionDescriptor> queries() {
        Map<String, FunctionDescriptor> f = new LinkedHashMap<>();
        f.put("zse_cpu_abi_version", FunctionDescriptor.of(JAVA_INT));
        f.put("zse_cpu_isa", FunctionDescriptor.of(ADDRESS));
        f.put("zse_cpu_supported", FunctionDescriptor.of(ADDRESS));
        f.put("zse_cpu_use", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        return Collections.unmodifiableMap(f);
    }

    private static Map<String, FunctionDescriptor> kernels() {
        Map<String, FunctionDescriptor> f = new LinkedHashMap<>();
        f.put("zse_cpu_fault_address", FunctionDescriptor.of(JAVA_LONG));
        f.put("zse_cpu_quantize_rows", FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        f.put("zse_cpu_matmul_q8", product(ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT,
                ADDRESS, JAVA_INT));
        f.put("zse_cpu_matmul_q4", product(ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS,
                ADDRESS, JAVA_INT, ADDRESS, JAVA_INT));
        FunctionDescriptor kQuantKernel = product(ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS,
                ADDRESS, JAVA_INT, ADDRESS, JAVA_INT);
        f.put("zse_cpu_matmul_q4_k", kQuantKernel);
        f.put("zse_cpu_matmul_q5_k", kQuantKernel);
        f.put("zse_cpu_matmul_q6_k", kQuantKernel);
        f.put("zse_cpu_matmul_q5", kQuantKernel); // Q5 groups of 32 take the K-quant kernels' arguments
        f.put("zse_cpu_matmul_q8_x16", product(ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS,
                ADDRESS, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT));
        f.put("zse_cpu_matmul_q4_x16", product(ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT,
                ADDRESS, ADDRESS, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT));
        f.put("zse_cpu_matmul_nf4", product(ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS,
                JAVA_INT));
        f.put("zse_cpu_matmul_ternary", product(ADDRESS, JAVA_FLOAT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS,
                ADDRESS, JAVA_INT, ADDRESS, JAVA_INT));
        FunctionDescriptor floatKernel = product(ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS,
                JAVA_INT);
        f.put("zse_cpu_matmul_f32", floatKernel);
        f.put("zse_cpu_matmul_f16", floatKernel);
        f.put("zse_cpu_matmul_bf16", floatKernel);
        f.put("zse_cpu_rms_norm", FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT, JAVA_INT, ADDRESS, JAVA_FLOAT, ADDRESS));
        f.put("zse_cpu_add", FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, JAVA_LONG));
        f.put("zse_cpu_scale", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, JAVA_FLOAT));
        FunctionDescriptor gating = FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, JAVA_LONG);
        f.put("zse_cpu_swiglu", gating);
        f.put("zse_cpu_geglu", gating);
        f.put("zse_cpu_relu2_glu", gating);
        f.put("zse_cpu_rope", FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT,
                ADDRESS));
        f.put("zse_cpu_read_all", FunctionDescriptor.of(JAVA_DOUBLE, ADDRESS, JAVA_LONG));
        f.put("zse_cpu_attention_head", FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS,
                ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, JAVA_FLOAT, JAVA_FLOAT,
                ADDRESS, ADDRESS));
        f.put("zse_cpu_convert_q8", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS,
                JAVA_INT));
        f.put("zse_cpu_convert_nf4", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS,
                JAVA_INT, ADDRESS, ADDRESS, JAVA_FLOAT));
        f.put("zse_cpu_convert_q4", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS,
                ADDRESS, JAVA_INT));
        return Collections.unmodifiableMap(f);
    }

    /** A product's signature: it returns 0, or ZSE_CPU_FAULT when one of its reads faulted ({@link #checkRead}). */
    private static FunctionDescriptor product(MemoryLayout... arguments) {
        return FunctionDescriptor.of(JAVA_INT, arguments);
    }

    /** Throws what a product's fault status means: a mapped file it read has shrunk, or its storage failed. */
    private void checkRead(int status) {
        if (status == FAULT) {
            long address;
            try {
                address = (long) handle("zse_cpu_fault_address").invokeExact();
            } catch (Throwable t) {
                throw rethrow(t);
            }
            throw MappedFiles.readFault(address);
        }
        if (status != 0) {
            throw new IllegalStateException(path + " returned status " + status + " from a product");
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    public int abiVersion() {
        try {
            return (int) handle("zse_cpu_abi_version").invokeExact();
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** The kernel set in use: avx512-vnni, avx2, neon-dotprod or generic. */
    public String isa() {
        return string("zse_cpu_isa");
    }

    /** Every kernel set this CPU runs, best first. */
    public List<String> supported() {
        return List.of(string("zse_cpu_supported").split(","));
    }

    private String string(String function) {
        try {
            MemorySegment text = (MemorySegment) handle(function).invokeExact();
            return text.reinterpret(256).getString(0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Switches every later call to the named kernel set; refused when this CPU cannot run it. */
    public void use(String isa) {
        int status;
        try (Arena arena = Arena.ofConfined()) {
            status = (int) handle("zse_cpu_use").invokeExact(arena.allocateFrom(isa));
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (status != 0) {
            throw new IllegalArgumentException("kernel set '" + isa + "' does not run here (supported: " + supported() + ")");
        }
    }

    /** Quantizes x[n, cols] (F32 activations) into {@code q} per block of 32. */
    void quantizeRows(MemorySegment x, int n, int cols, QuantizedRows q) {
        try {
            handle("zse_cpu_quantize_rows").invokeExact(x, n, cols, q.codes(), q.scales(), q.sums());
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    void matmulQ8(MemorySegment w, MemorySegment scales, int cols, int rowBegin, int rowEnd, QuantizedRows x, int n,
                  MemorySegment out, int outStride) {
        int status;
        try {
            status = (int) handle("zse_cpu_matmul_q8").invokeExact(w, scales, cols, rowBegin, rowEnd, x.codes(),
                    x.scales(), n, out, outStride);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        checkRead(status);
    }

    void matmulQ4(MemorySegment w, MemorySegment scales, int group, int cols, int rowBegin, int rowEnd,
                  QuantizedRows x, int n, MemorySegment out, int outStride) {
        int status;
        try {
            status = (int) handle("zse_cpu_matmul_q4").invokeExact(w, scales, group, cols, rowBegin, rowEnd, x.codes(),
                    x.scales(), x.sums(), n, out, outStride);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        checkRead(status);
    }

    /**
     * Q4_K, Q5_K or Q6_K weights (super-blocks of 256), or Q5 (groups of 32, the same arguments), with activations
     * quantized per block of 32.
     */
    void matmulKQuant(TensorType type, MemorySegment w, MemorySegment scales, int cols, int rowBegin, int rowEnd,
                      QuantizedRows x, int n, MemorySegment out, int outStride) {
        String function = switch (type) {
            case Q4_K -> "zse_cpu_matmul_q4_k";
            case Q5_K -> "zse_cpu_matmul_q5_k";
            case Q6_K -> "zse_cpu_matmul_q6_k";
            case Q5 -> "zse_cpu_matmul_q5";
            default -> throw new IllegalArgumentException(type + " is not a K-quant type");
        };
        int status;
        try {
            status = (int) handle(function).invokeExact(w, scales, cols, rowBegin, rowEnd, x.codes(), x.scales(),
                    x.sums(), n, out, outStride);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        checkRead(status);
    }

    /**
     * Q8 or Q4 weights (group 32, 64 or 128; Q8's is 32) in layout interleaved-16; rowBegin and rowEnd multiples of 16
     * or equal to rows.
     */
    void matmulInterleaved(TensorType type, MemorySegment w, MemorySegment scales, int group, int rows, int cols,
                           int rowBegin, int rowEnd, QuantizedRows x, int n, MemorySegment out, int outStride) {
        int status;
        try {
            switch (type) {
                case Q8 -> status = (int) handle("zse_cpu_matmul_q8_x16").invokeExact(w, scales, rows, cols,
                        rowBegin, rowEnd, x.codes(), x.scales(), x.sums(), n, out, outStride);
                case Q4 -> status = (int) handle("zse_cpu_matmul_q4_x16").invokeExact(w, scales, group, rows, cols,
                        rowBegin, rowEnd, x.codes(), x.scales(), x.sums(), n, out, outStride);
                default -> throw new IllegalArgumentException(type + " weights are not stored interleaved");
            }
        } catch (Throwable t) {
            throw rethrow(t);
        }
        checkRead(status);
    }

    void matmulNf4(MemorySegment w, MemorySegment scales, int cols, int rowBegin, int rowEnd, MemorySegment x, int n,
                   MemorySegment out, int outStride) {
        int status;
        try {
            status = (int) handle("zse_cpu_matmul_nf4").invokeExact(w, scales, cols, rowBegin, rowEnd, x, n, out,
                    outStride);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        checkRead(status);
    }

    /** The library if it loads in this process (once, on first ask), for callers outside the CPU backend. */
    public static java.util.Optional<NativeCpuLibrary> loaded() {
        return NativeLibraryProbe.result().library();
    }

    /**
     * The converter's quantizer for {@code type} (zse_cpu_convert_q8, _nf4, _q4) over whole groups of finite values;
     * {@code data} and {@code scales} are exactly the bytes the values code to. Returns the C status: 0 done, -1 a
     * scale overflowed F16, -2 the CPU lacks the instructions.
     *
     * @param table   Q8/NF4: candidate scale factors; Q4: level offsets
     * @param codebook NF4: the 16 code values then the 15 midpoints; otherwise unused
     */
    public int convert(TensorType type, int group, MemorySegment src, long count, MemorySegment data,
                       MemorySegment scales, float[] table, float[] codebook, float maxHalfGap) {
        // the C code divides by the group and walks count values: nothing it reads or writes may be short
        if (!type.isQuantized() || !type.allowsGroupSize(group) || count < 0 || count % group != 0
                || src.byteSize() < count * Float.BYTES || data.byteSize() < type.dataBytes(count)
                || scales.byteSize() < type.scaleBytes(count, group) || table.length < 1
                || type == TensorType.NF4 && (codebook == null || codebook.length < 31)) {
            throw new IllegalArgumentException("cannot quantize " + count + " values to " + type + "/" + group
                    + " from " + src.byteSize() + " bytes into " + data.byteSize() + " and " + scales.byteSize()
                    + " bytes with " + table.length + " table entries");
        }
        try {
            MemorySegment t = MemorySegment.ofArray(table);
            return switch (type) {
                case Q8 -> (int) handle("zse_cpu_convert_q8").invokeExact(src, count, data, scales, t,
                        table.length);
                case NF4 -> (int) handle("zse_cpu_convert_nf4").invokeExact(src, count, data, scales, t,
                        table.length, MemorySegment.ofArray(codebook).asSlice(0, 16L * Float.BYTES),
                        MemorySegment.ofArray(codebook).asSlice(16L * Float.BYTES), maxHalfGap);
                case Q4 -> (int) handle("zse_cpu_convert_q4").invokeExact(src, count, group, data, scales, t,
                        table.length);
                default -> throw new IllegalArgumentException(type + " is not quantized");
            };
        } catch (Throwable e) {
            throw rethrow(e);
        }
    }

    /** TERNARY weights (scale s) with activations quantized per row as BitNet does. */
    void matmulTernary(MemorySegment w, float scale, int cols, int rowBegin, int rowEnd, TernaryActivations x, int n,
                       MemorySegment out, int outStride) {
        int status;
        try {
            status = (int) handle("zse_cpu_matmul_ternary").invokeExact(w, scale, cols, rowBegin, rowEnd, x.codes(),
                    x.divisors(), x.sums(), n, out, outStride);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        checkRead(status);
    }

    /** F32, F16 or BF16 weights. */
    void matmulFloat(TensorType type, MemorySegment w, int cols, int rowBegin, int rowEnd, MemorySegment x, int n,
                     MemorySegment out, int outStride) {
        String function = switch (type) {
            case F32 -> "zse_cpu_matmul_f32";
            case F16 -> "zse_cpu_matmul_f16";
            case BF16 -> "zse_cpu_matmul_bf16";
            default -> throw new IllegalArgumentException(type + " weights take the integer kernels");
        };
        int status;
        try {
            status = (int) handle(function).invokeExact(w, cols, rowBegin, rowEnd, x, n, out, outStride);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        checkRead(status);
    }

    /*
     * The element-wise ops and attention (zse_cpu.h, ABI 4). NativeKernels checks every length against the segments
     * before calling; heap arrays (norm weights, positions, block tables, score scratch) are read in place.
     */

    void rmsNorm(MemorySegment x, int n, int dim, MemorySegment weight, float eps, MemorySegment out) {
        try {
            handle("zse_cpu_rms_norm").invokeExact(x, n, dim, weight, eps, out);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    void add(MemorySegment x, MemorySegment y, long length) {
        try {
            handle("zse_cpu_add").invokeExact(x, y, length);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    void scale(MemorySegment x, long length, float factor) {
        try {
            handle("zse_cpu_scale").invokeExact(x, length, factor);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code function}: zse_cpu_swiglu, zse_cpu_geglu or zse_cpu_relu2_glu. */
    void gating(String function, MemorySegment gate, MemorySegment up, long length) {
        try {
            handle(function).invokeExact(gate, up, length);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    double readAll(MemorySegment floats, long count) {
        try {
            return (double) handle("zse_cpu_read_all").invokeExact(floats, count);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    void rope(MemorySegment x, int fromRow, int toRow, MemorySegment positions, int heads, int headDim,
              MemorySegment inverseFrequencies) {
        try {
            handle("zse_cpu_rope").invokeExact(x, fromRow, toRow, positions, heads, headDim, inverseFrequencies);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    void attentionHead(MemorySegment q, int headDim, int kvType, MemorySegment keys, MemorySegment values,
                       MemorySegment keyScales, MemorySegment valueScales, int kvDim, int kvHead, int numKvHeads,
                       MemorySegment slots, int first, int last, float logitScale, float softCap, MemorySegment scores,
                       MemorySegment out) {
        try {
            handle("zse_cpu_attention_head").invokeExact(q, headDim, kvType, keys, values, keyScales,
                    valueScales, kvDim, kvHead, numKvHeads, slots, first, last, logitScale, softCap, scores, out);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }
}
