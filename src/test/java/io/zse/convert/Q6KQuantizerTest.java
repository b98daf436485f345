package io.zse.convert;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.format.HalfFloats;
import io.zse.format.KQuantBlocks;
import io.zse.format.LittleEndian;
import io.zse.format.TensorType;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link Q6KQuantizer} writes the bytes llama-quantize writes, which decode back within a step of each value. */
class Q6KQuantizerTest {
    private static final Quantizer Q6_K = Quantizer.of(TensorType.Q6_K, 256);

    /**
     * golden/ggml-blocks.json (tools/reference/ggml_blocks.py): 512 F32 values of a random Llama's ffn_up and the two
     * Q6_K blocks llama-quantize made of them (ql, qh, 16 int8 scales, F16 d: 210 bytes each). A .zse holds ql and qh
     * as data, d and the scales as the block's 18 scale bytes.
     */
    @Test
    void twoBlocksAreLlamaQuantizesBytes() throws IOException {
        JsonNode golden;
        try (InputStream in = getClass().getResourceAsStream("/golden/ggml-blocks.json")) {
            golden = new ObjectMapper().readTree(in);
        }
        float[] source = new float[golden.get("source").size()];
        for (int i = 0; i < source.length; i++) {
            source[i] = (float) golden.get("source").get(i).asDouble();
        }
        byte[] ggml = null;
        for (JsonNode c : golden.get("cases")) {
            if (c.get("type").asText().equals("Q6_K")) {
                ggml = HexFormat.of().parseHex(c.get("bytes").asText());
            }
        }
        assertEquals(2 * 210, ggml.length);
        byte[] data = new byte[2 * 192];
        byte[] scales = new byte[2 * 18];
        Q6_K.quantize(source, 0, 512, MemorySegment.ofArray(data), 0, MemorySegment.ofArray(scales), 0);
        for (int block = 0; block < 2; block++) {
            int at = 210 * block;
            assertArrayEquals(Arrays.copyOfRange(ggml, at, at + 192), Arrays.copyOfRange(data, 192 * block,
                    192 * block + 192), "ql and qh of block " + block);
            assertArrayEquals(Arrays.copyOfRange(ggml, at + 208, at + 210), Arrays.copyOfRange(scales, 18 * block,
                    18 * block + 2), "d of block " + block);
            assertArrayEquals(Arrays.copyOfRange(ggml, at + 192, at + 208), Arrays.copyOfRange(scales, 18 * block + 2,
                    18 * block + 18), "scales of block " + block);
        }
    }

    /**
     * Gaussian rows with outliers and an all-zero block: each value decodes to the nearest multiple of its sub-block's
     * stored step (d times its int8 scale) within the codes -32..31; the whole stays within 3 % RMS (a 6-bit step of
     * about max / 32 rounds to some 2.3 % of a gaussian's RMS).
     */
    @Test
    void valuesDecodeToTheNearestStepOfTheirSubBlock() {
        SplittableRandom random = new SplittableRandom(7);
        float[] x = new float[256 * 64];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) (random.nextGaussian() * (i % 97 == 0 ? 8 : 1) * (1 + i / 4096));
        }
        Arrays.fill(x, 256 * 5, 256 * 6, 0f);
        MemorySegment data = MemorySegment.ofArray(new byte[64 * 192]);
        MemorySegment scales = MemorySegment.ofArray(new byte[64 * 18]);
        Q6_K.quantize(x, 0, x.length, data, 0, scales, 0);
        float[] y = new float[x.length];
        for (int block = 0; block < 64; block++) {
            KQuantBlocks.decode(TensorType.Q6_K, data, scales, block, y, 256 * block);
        }
        double error = 0;
        double energy = 0;
        for (int i = 0; i < x.length; i++) {
            float d = HalfFloats.fromF16(scales.get(LittleEndian.SHORT, 18L * (i / 256)));
            float step = Math.abs(d * scales.get(ValueLayout.JAVA_BYTE, 18L * (i / 256) + 2 + (i % 256) / 16));
            float clamped = Math.max(0, Math.abs(x[i]) - 31.5f * step); // beyond the codes' reach
            assertTrue(Math.abs(y[i] - x[i]) <= step * 0.5001f + clamped + 1e-6f,
                    "element " + i + ": " + y[i] + " vs " + x[i] + ", step " + step);
            error += (y[i] - x[i]) * (y[i] - x[i]);
            energy += x[i] * x[i];
        }
        for (int i = 256 * 5; i < 256 * 6; i++) {
            assertEquals(0f, Math.abs(y[i]), "the zero block");
        }
        assertTrue(Math.sqrt(error / energy) < 0.03, "relative RMS error " + Math.sqrt(error / energy));
    }

    @Test
    void badInputIsRefused() {
        float[] x = new float[256];
        x[3] = Float.NaN;
        MemorySegment data = MemorySegment.ofArray(new byte[192]);
        MemorySegment scales = MemorySegment.ofArray(new byte[18]);
        assertThrows(IllegalArgumentException.class, () -> Q6_K.quantize(x, 0, 256, data, 0, scales, 0));
        assertThrows(IllegalArgumentException.class, () -> Q6_K.quantize(new float[128], 0, 128, data, 0, scales, 0));
    }
}
