package io.zse.convert.gguf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.backend.BackendUnavailableException;
import io.zse.backend.cpu.CpuKernels;
import io.zse.backend.cpu.CpuThreads;
import io.zse.backend.cpu.NativeKernels;
import io.zse.backend.cpu.TestKernels;
import io.zse.format.TensorDecoder;
import io.zse.format.TensorInfo;
import io.zse.format.TensorType;
import io.zse.format.ZseTensor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Q4_K, Q5_K and Q6_K blocks written by llama-quantize (golden/ggml-blocks.json, tools/reference/ggml_blocks.py),
 * carried into the .zse types of the same names by {@link GgufRowTranscoder}: decoded, they are the gguf package's
 * values bit for bit, and every CPU kernel (vector, scalar, each native set this CPU runs) multiplies them as those
 * values would.
 */
class KQuantCarryOverTest {
    private static final CpuThreads THREADS = new CpuThreads(2);

    @AfterAll
    static void close() {
        THREADS.close();
    }

    record Golden(ZseTensor tensor, float[] values) {
    }

    /** The golden blocks of {@code type} as a [2, 256] .zse tensor, with ggml's decoded values. */
    static Golden golden(GgmlType type) throws IOException {
        JsonNode root;
        try (InputStream in = KQuantCarryOverTest.class.getResourceAsStream("/golden/ggml-blocks.json")) {
            root = new ObjectMapper().readTree(in);
        }
        JsonNode c = null;
        for (JsonNode each : root.get("cases")) {
            if (each.get("type").asText().equals(type.name())) {
                c = each;
            }
        }
        assertTrue(c != null, "no golden case for " + type);
        assertEquals(512, root.get("elements").asInt());
        MemorySegment source = MemorySegment.ofArray(HexFormat.of().parseHex(c.get("bytes").asText()));
        TensorType target = TensorType.valueOf(type.name());
        TensorInfo info = TensorInfo.planned("blk.0.ffn_up.weight", target, new long[]{2, 256}, 256);
        MemorySegment data = MemorySegment.ofArray(new byte[(int) info.dataLength()]);
        MemorySegment scales = MemorySegment.ofArray(new byte[(int) info.scalesLength()]);
        for (int row = 0; row < 2; row++) {
            GgufRowTranscoder.move(type, source, row, 256, data, row * target.dataBytes(256), scales,
                    row * target.scaleBytes(256, 256));
        }
        float[] values = new float[512];
        for (int i = 0; i < 512; i++) {
            values[i] = (float) c.get("values").get(i).asDouble();
        }
        return new Golden(new ZseTensor(info, data, scales), values);
    }

    @ParameterizedTest
    @CsvSource({"Q4_K", "Q5_K", "Q6_K"})
    void decodesToGgmlsValuesBitForBit(GgmlType type) throws IOException {
        Golden g = golden(type);
        float[] decoded = new float[512];
        TensorDecoder.decode(g.tensor.type(), 256, g.tensor.data(), g.tensor.scales(), 0, 512, decoded, 0);
        for (int i = 0; i < 512; i++) {
            assertEquals(Float.floatToRawIntBits(g.values[i]), Float.floatToRawIntBits(decoded[i]),
                    type + " element " + i + ": " + decoded[i] + " vs ggml " + g.values[i]);
        }
    }

    @ParameterizedTest
    @CsvSource({"Q4_K", "Q5_K", "Q6_K"})
    void everyKernelMultipliesGgmlsValues(GgmlType type) throws IOException {
        Golden g = golden(type);
        int n = 3;
        SplittableRandom random = new SplittableRandom(type.id());
        float[] x = new float[n * 256];
        for (int k = 0; k < x.length; k++) {
            x[k] = (float) random.nextDouble(-2, 2);
        }
        List<String> checked = new ArrayList<>();
        for (String family : List.of("vector", "scalar")) {
            CpuKernels kernels = TestKernels.named(family);
            assertProduct(family, kernels, g, x, x, n, 1e-5);
            checked.add(family);
        }
        NativeKernels kernels;
        try {
            kernels = (NativeKernels) TestKernels.named("native");
        } catch (BackendUnavailableException | IllegalStateException e) {
            System.out.println("no native kernels here: " + e.getMessage());
            return;
        }
        // The native kernels take int8 activations: compare with ggml's values times x as quantized.
        float[] quantized = TestKernels.int8Activations(x);
        try {
            for (String isa : kernels.library().supported()) {
                kernels.library().use(isa);
                assertProduct("native " + isa, kernels, g, x, quantized, n, 2e-6);
                checked.add(isa);
            }
        } finally {
            kernels.library().use(kernels.library().supported().getFirst());
        }
        System.out.println(type + " checked on " + checked);
    }

    private static void assertProduct(String name, CpuKernels kernels, Golden g, float[] x, float[] seen, int n,
                                      double tolerance) {
        float[] out = new float[n * 2];
        kernels.weight(g.tensor).multiply(x, n, out, THREADS);
        float[] single = new float[2];
        kernels.weight(g.tensor).multiply(x, 1, single, THREADS);
        for (int i = 0; i < n; i++) {
            for (int r = 0; r < 2; r++) {
                double expected = 0;
                double magnitude = 0;
                for (int k = 0; k < 256; k++) {
                    expected += (double) g.values[r * 256 + k] * seen[i * 256 + k];
                    magnitude += Math.abs((double) g.values[r * 256 + k] * seen[i * 256 + k]);
                }
                assertEquals(expected, out[i * 2 + r], tolerance * magnitude, name + " out[" + i + ", " + r + "]");
                if (i == 0) {
                    assertEquals(expected, single[r], tolerance * magnitude, name + " decode out[" + r + "]");
                }
            }
        }
    }
}
