package io.zse.backend.cpu;

import io.zse.backend.BackendUnavailableException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.IntSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The rule that picks the CPU kernels, with its inputs given; the child-JVM test runs it for real. */
class CpuKernelChoiceTest {
    private static final IntSupplier NOT_ASKED = () -> {
        throw new AssertionError("the vector width must not be asked (it loads the Vector API)");
    };

    @Test
    void parsesTheFourChoicesAndRejectsOthers() {
        assertEquals(CpuKernelChoice.AUTO, CpuKernelChoice.parse("auto"));
        assertEquals(CpuKernelChoice.VECTOR, CpuKernelChoice.parse(" Vector "));
        assertEquals(CpuKernelChoice.SCALAR, CpuKernelChoice.parse("SCALAR"));
        assertEquals(CpuKernelChoice.NATIVE, CpuKernelChoice.parse("native"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CpuKernelChoice.parse("simd"));
        assertEquals("unknown CPU kernels 'simd' (expected auto, native, vector or scalar)", e.getMessage());
    }

    @Test
    void thePropertySetsTheChoice() {
        String before = System.getProperty(CpuKernelChoice.PROPERTY);
        try {
            System.setProperty(CpuKernelChoice.PROPERTY, "scalar");
            assertEquals(CpuKernelChoice.SCALAR, CpuKernelChoice.resolve());
        } finally {
            if (before == null) {
                System.clearProperty(CpuKernelChoice.PROPERTY);
            } else {
                System.setProperty(CpuKernelChoice.PROPERTY, before);
            }
        }
    }

    @Test
    void vectorKernelsNeedAJvmWithTheModuleAnd256Or512BitVectors() {
        CpuKernelChoice auto = CpuKernelChoice.AUTO;
        assertTrue(auto.vectorUnavailable(true, true, NOT_ASKED).orElseThrow().contains("native image"));
        assertTrue(auto.vectorUnavailable(false, false, NOT_ASKED).orElseThrow()
                .contains("--add-modules jdk.incubator.vector"));
        for (int bits : new int[]{64, 128, 1024}) {
            assertEquals(Optional.of("the preferred float vector is " + bits + " bits; the vector kernels need 256 or 512"),
                    auto.vectorUnavailable(false, true, () -> bits));
        }
        assertEquals(Optional.empty(), auto.vectorUnavailable(false, true, () -> 256));
        assertEquals(Optional.empty(), auto.vectorUnavailable(false, true, () -> 512));
    }

    @Test
    void anExplicitVectorChoiceOverridesOnlyTheNativeImageRule() {
        CpuKernelChoice vector = CpuKernelChoice.VECTOR;
        assertEquals(Optional.empty(), vector.vectorUnavailable(true, true, () -> 256));
        assertTrue(vector.vectorUnavailable(true, true, () -> 64).orElseThrow().contains("64 bits"));
        assertTrue(vector.vectorUnavailable(true, false, NOT_ASKED).orElseThrow().contains("not loaded"));
    }

    @Test
    void anExplicitVectorChoiceThatCannotRunFailsAndTheJavaChoicesNeedNoLog() {
        List<String> log = new ArrayList<>();
        Optional<String> reason = Optional.of("the preferred float vector is 128 bits; the vector kernels need 256 or 512");

        BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
                () -> CpuKernelChoice.VECTOR.kernels(reason, log::add));
        assertEquals("zse.cpu.kernels=vector unavailable: " + reason.get() + "; auto or scalar runs the scalar kernels",
                e.getMessage());

        assertSame(ScalarKernels.INSTANCE, CpuKernelChoice.SCALAR.kernels(Optional.empty(), log::add));
        assertSame(VectorKernels.INSTANCE, CpuKernelChoice.VECTOR.kernels(Optional.empty(), log::add));
        assertEquals(List.of(), log, "an explicit choice is not logged");
    }
}
