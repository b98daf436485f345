package io.zse.backend;

import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cuda.CudaProbe;
import io.zse.format.TensorInfo;
import io.zse.format.TensorType;
import io.zse.format.ZseLayout;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Backend choice parsing, CPU fallback and refusals where CUDA cannot run (no library here). */
class BackendSelectorTest {
    private final List<String> log = new ArrayList<>();
    private final BackendSelector noLibrary = new BackendSelector(
            () -> CudaProbe.run(Path.of("/nonexistent/libzse_cuda.so")), log::add);

    @Test
    void parsesEveryForm() {
        assertEquals(BackendChoice.AUTO, BackendChoice.parse(" AUTO "));
        assertEquals(BackendChoice.Kind.CPU, BackendChoice.parse("cpu").kind());
        assertEquals(new BackendChoice(BackendChoice.Kind.CUDA, 0), BackendChoice.parse("cuda"));
        assertEquals(new BackendChoice(BackendChoice.Kind.CUDA, 3), BackendChoice.parse("cuda:3"));
        assertEquals("cuda:3", BackendChoice.parse("CUDA:3").toString());
        for (String bad : new String[]{"gpu", "cuda:", "cuda:-1", "cuda:x", "cuda:99999999999", ""}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BackendChoice.parse(bad));
            assertTrue(e.getMessage().contains("expected auto, cpu, cuda or cuda:N"), e.getMessage());
        }
        assertEquals(BackendChoice.Kind.CPU, BackendChoice.resolve(Optional.of("cpu")).kind());
    }

    @Test
    void autoFallsBackToTheCpuWithOneLineSayingWhy() {
        try (Backend backend = noLibrary.select(BackendChoice.AUTO, Optional.empty(), 1)) {
            assertInstanceOf(CpuBackend.class, backend);
        }
        assertEquals(1, log.size(), log.toString());
        assertTrue(log.getFirst().startsWith("zse: running on the CPU: no CUDA library"), log.getFirst());
    }

    @Test
    void explicitCudaWithoutALibraryIsAnErrorNamingTheReason() {
        BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
                () -> noLibrary.select(BackendChoice.parse("cuda:1"), Optional.empty(), 1));
        assertTrue(e.getMessage().startsWith("backend cuda:1 unavailable: no CUDA library"), e.getMessage());
        assertTrue(log.isEmpty());
    }

    @Test
    void cpuNeverProbes() {
        BackendSelector failingProbe = new BackendSelector(() -> {
            throw new AssertionError("probed");
        }, log::add);
        try (Backend backend = failingProbe.select(new BackendChoice(BackendChoice.Kind.CPU, 0), Optional.empty(), 1)) {
            assertInstanceOf(CpuBackend.class, backend);
        }
        assertTrue(log.isEmpty());
    }

    /** A 7B-like shape: 32 layers of 4096 x 4096 and 11008 x 4096 weights, stored as BF16. */
    private static MemoryFootprint sevenB(TensorType stored) {
        List<TensorInfo> tensors = new ArrayList<>();
        tensors.add(TensorInfo.planned("model.embed_tokens.weight", stored, new long[]{32000, 4096}, 0));
        for (int l = 0; l < 32; l++) {
            for (int i = 0; i < 4; i++) {
                tensors.add(TensorInfo.planned("l" + l + ".attn" + i, stored, new long[]{4096, 4096}, 0));
            }
            for (int i = 0; i < 3; i++) {
                tensors.add(TensorInfo.planned("l" + l + ".mlp" + i, stored, new long[]{11008, 4096}, 0));
            }
            tensors.add(TensorInfo.planned("l" + l + ".norm", TensorType.F32, new long[]{4096}, 0));
        }
        tensors.add(TensorInfo.planned("lm_head.weight", stored, new long[]{32000, 4096}, 0));
        return MemoryFootprint.of(tensors, 32, 4096L * Float.BYTES, 4096, 512, 3 * 4096 + 4 * 4096 + 2 * 11008 + 32000);
    }

    @Test
    void vramRefusalSaysWhatIsMissingAndWhichTypeWouldFit() {
        MemoryFootprint bf16 = sevenB(TensorType.BF16);
        long gib = 1L << 30;
        assertEquals(6_738_149_376L * 2, bf16.weightBytes() - 32 * 4096 * 4); // 6.74 B parameters
        assertEquals(4.0, bf16.kvCacheBytes() / (double) gib, 0.01); // 2 x 32 layers x 4096 positions x 4096 x 4 B
        assertNull(bf16.refusal("cuda:0 H100", 80 * gib));
        String refusal = bf16.refusal("cuda:0 L4", 12 * gib);
        // Q8: 6.74 B x 34/32 B = 6.67 GiB + 4.41 GiB; Q4: 0.625 B per element, embeddings and lm_head kept Q8.
        assertEquals("the model needs 16.96 GiB on cuda:0 L4 (weights 12.55 GiB + KV cache 4.00 GiB + workspace "
                + "0.41 GiB) but only 12.00 GiB is free: 4.96 GiB missing; converted with --quant q8 it would need "
                + "11.08 GiB and fit", refusal);
        assertTrue(bf16.refusal("cuda:0", 9 * gib).endsWith("--quant q4 it would need 8.44 GiB and fit"));
        assertTrue(bf16.refusal("cuda:0", 4 * gib).endsWith("no storage type fits: use a device with more memory or a "
                + "shorter context"));
        // Interleaved-16 weights are rewritten on the device through a scratch of the largest one (an 11008 x 4096 Q8
        // weight here): the workspace holds it.
        List<TensorInfo> interleaved = List.of(
                TensorInfo.planned("a", TensorType.Q8, new long[]{11008, 4096}, 32)
                        .withLayout(ZseLayout.LAYOUT_INTERLEAVED_16),
                TensorInfo.planned("b", TensorType.Q8, new long[]{4096, 4096}, 32)
                        .withLayout(ZseLayout.LAYOUT_INTERLEAVED_16),
                TensorInfo.planned("c", TensorType.Q8, new long[]{32000, 4096}, 32));
        List<TensorInfo> rowGroups = interleaved.stream().map(t -> t.withLayout(ZseLayout.LAYOUT_ROW_GROUPS)).toList();
        assertEquals(11008L * 4096 * 34 / 32, MemoryFootprint.of(interleaved, 1, 512L * 4, 16, 1, 1).workspaceBytes()
                - MemoryFootprint.of(rowGroups, 1, 512L * 4, 16, 1, 1).workspaceBytes());
    }
}
