package io.zse.convert;

import io.zse.backend.cpu.CpuKernelChoice;
import io.zse.backend.cpu.NativeKernels;

/**
 * Layout {@code auto}, the default of {@code zse convert --layout} and of the conversions {@link ModelImport} caches for
 * serve, generate, bench and eval: interleaved-16 where this machine runs the native SIMD kernels (what they multiply
 * fastest), row-groups where the Java or the portable C kernels run.
 */
public final class AutoLayout {
    private AutoLayout() {
    }

    /** Whether {@code auto} means interleaved-16 on this machine, for the kernels chosen as the CPU backend would. */
    public static boolean interleaved() {
        return CpuKernelChoice.selected() instanceof NativeKernels k && !k.library().isa().equals("generic");
    }
}
