package io.zse.convert;

import io.zse.backend.cpu.NativeCpuLibrary;
import io.zse.format.TensorType;

import java.lang.foreign.MemorySegment;
import java.util.Optional;

/**
 * The quantizers' native path: libzse_cpu's zse_cpu_convert_* (AVX-512 on x86, NEON on aarch64), which produce the
 * same bytes as the Java code of {@link Q8Quantizer}, {@link Q4Quantizer} and {@link Nf4Quantizer} many times faster.
 * Where the library does not load or an x86 CPU lacks AVX-512, {@link #run} says no and the Java code runs. {@code -Dzse.convert.native=false}
 * turns it off.
 */
final class NativeQuantize {
    private static final String PROPERTY = "zse.convert.native";
    private static volatile Optional<NativeCpuLibrary> library;

    private NativeQuantize() {
    }

    /** True if calls to {@link #run} can succeed here (the library loaded and the CPU runs its quantizers). */
    static boolean available() {
        return library().isPresent();
    }

    /**
     * Quantizes whole groups of finite values into {@code data} and {@code scales} (from their offsets), as the Java
     * quantizer of {@code type} would. False if the native path is unavailable, or a scale overflows F16 (the Java
     * quantizer then reports which group).
     */
    static boolean run(TensorType type, int group, float[] src, int srcOffset, int count, MemorySegment data,
                       long dataOffset, MemorySegment scales, long scalesOffset, float[] table, float[] codebook,
                       float maxHalfGap) {
        Optional<NativeCpuLibrary> l = library();
        if (l.isEmpty() || count == 0) {
            return count == 0;
        }
        MemorySegment values = MemorySegment.ofArray(src).asSlice(4L * srcOffset, 4L * count);
        int status = l.get().convert(type, group, values, count,
                data.asSlice(dataOffset, type.dataBytes(count)),
                scales.asSlice(scalesOffset, type.scaleBytes(count, group)), table, codebook, maxHalfGap);
        if (status == -2) {
            library = Optional.empty(); // no AVX-512 or NEON: every later call would say the same
        }
        return status == 0;
    }

    private static Optional<NativeCpuLibrary> library() {
        Optional<NativeCpuLibrary> l = library;
        if (l == null) {
            boolean wanted = Boolean.parseBoolean(System.getProperty(PROPERTY, "true"));
            l = wanted ? NativeCpuLibrary.loaded() : Optional.empty();
            library = l;
        }
        return l;
    }
}
