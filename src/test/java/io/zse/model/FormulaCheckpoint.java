package io.zse.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.convert.BitNetProjections;
import io.zse.convert.HfConfigNormalizer;
import io.zse.convert.SafetensorsDtype;
import io.zse.convert.SafetensorsTensor;
import io.zse.convert.SafetensorsWriter;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Writes a Hugging Face checkpoint whose F32 weights follow a formula, identical to the one in
 * {@code tools/reference/tiny_models.py}, so the goldens made there from transformers apply without committing the
 * (vocabulary-sized) weights:
 * <pre>
 *   base = FNV-1a-64(UTF-8 name) XOR seed
 *   z_i  = splitmix64 finaliser of (base + (i + 1) * 0x9E3779B97F4A7C15), i = flat element index
 *   u_i  = (z_i >>> 40) * 2^-24                               uniform in [0, 1), exact in float and double
 *   norm weights: (float) (1 + (2u - 1) * 0.2);  biases: (float) ((2u - 1) * 0.5)
 *   matrices [rows, cols]: (float) ((2u - 1) * sqrt(3 / cols))   (variance 1 / fan-in)
 * </pre>
 * BitNet's packed projections ({@link #writeBitNetPacked}, as {@code tools/reference/tiny_bitnet.py} makes them):
 * <pre>
 *   c_i = floor(3 u_i) in {0, 1, 2} (t = c - 1), i = flat index of the unpacked [out, in] weight, packed as
 *         transformers' pack_weights does: byte [r, k] holds rows r, r + out/4, r + out/2, r + 3 out/4 of column k
 *         at bits 0-1, 2-3, 4-5, 6-7
 *   weight_scale = (float) sqrt(2 in / 3)
 * </pre>
 */
public final class FormulaCheckpoint {
    private static final long GAMMA = 0x9E3779B97F4A7C15L;
    private static final double NORM_SPREAD = 0.2;
    private static final double BIAS_SPREAD = 0.5;
    private static final int CHUNK = 1 << 16;

    private FormulaCheckpoint() {
    }

    /** Writes config.json, tokenizer.json and model.safetensors into {@code dir}; returns dir. */
    public static Path write(JsonNode config, long seed, byte[] tokenizerJson, Path dir) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("config.json"), new ObjectMapper().writeValueAsString(config),
                StandardCharsets.UTF_8);
        Files.write(dir.resolve("tokenizer.json"), tokenizerJson);
        Map<String, long[]> shapes = ModelTensors.checkpoint(HfConfigNormalizer.normalize(config, null));
        List<SafetensorsTensor> tensors = shapes.entrySet().stream()
                .map(e -> new SafetensorsTensor(e.getKey(), SafetensorsDtype.F32, e.getValue())).toList();
        try (SafetensorsWriter writer = SafetensorsWriter.create(dir.resolve("model.safetensors"), tensors,
                Map.of("format", "pt"))) {
            float[] chunk = new float[CHUNK];
            for (SafetensorsTensor t : tensors) {
                for (long start = 0; start < t.elementCount(); start += CHUNK) {
                    int count = (int) Math.min(CHUNK, t.elementCount() - start);
                    fill(t.name(), t.shape(), seed, start, chunk, count);
                    writer.writeFloats(chunk, 0, count);
                }
            }
        }
        return dir;
    }

    /**
     * A BitNet checkpoint with packed U8 projections and their weight_scale ({@code bitlinear}, offline); the other
     * tensors follow the float formula.
     */
    static Path writeBitNetPacked(JsonNode config, long seed, byte[] tokenizerJson, Path dir) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("config.json"), new ObjectMapper().writeValueAsString(config),
                StandardCharsets.UTF_8);
        Files.write(dir.resolve("tokenizer.json"), tokenizerJson);
        Map<String, long[]> shapes = ModelTensors.checkpoint(HfConfigNormalizer.normalize(config, null));
        List<SafetensorsTensor> tensors = new java.util.ArrayList<>();
        shapes.forEach((name, shape) -> {
            if (BitNetProjections.isProjection(name)) {
                tensors.add(new SafetensorsTensor(name, SafetensorsDtype.U8, new long[]{shape[0] / 4, shape[1]}));
                tensors.add(new SafetensorsTensor(BitNetProjections.scaleTensor(name), SafetensorsDtype.F32,
                        new long[]{1}));
            } else {
                tensors.add(new SafetensorsTensor(name, SafetensorsDtype.F32, shape));
            }
        });
        try (SafetensorsWriter writer = SafetensorsWriter.create(dir.resolve("model.safetensors"), tensors,
                Map.of("format", "pt"))) {
            float[] chunk = new float[CHUNK];
            for (SafetensorsTensor t : tensors) {
                long[] shape = shapes.get(t.name());
                if (t.dtype() == SafetensorsDtype.U8) {
                    writer.writeBytes(java.nio.ByteBuffer.wrap(packedCodes(t.name(), shape, seed)));
                } else if (t.name().endsWith(".weight_scale")) {
                    long in = shapes.get(t.name().replace(".weight_scale", ".weight"))[1];
                    writer.writeFloats(new float[]{(float) Math.sqrt(2.0 * in / 3.0)}, 0, 1);
                } else {
                    for (long start = 0; start < t.elementCount(); start += CHUNK) {
                        int count = (int) Math.min(CHUNK, t.elementCount() - start);
                        fill(t.name(), t.shape(), seed, start, chunk, count);
                        writer.writeFloats(chunk, 0, count);
                    }
                }
            }
        }
        return dir;
    }

    /** The ternary values t of a packed projection [out, in], flat. */
    static int[] ternaryValues(String name, long[] shape, long seed) {
        long base = fnv1a64(name) ^ seed;
        int[] t = new int[Math.toIntExact(shape[0] * shape[1])];
        for (int i = 0; i < t.length; i++) {
            double u = (splitmix64(base + (i + 1) * GAMMA) >>> 40) * 0x1p-24;
            t[i] = (int) Math.floor(3 * u) - 1;
        }
        return t;
    }

    private static byte[] packedCodes(String name, long[] shape, long seed) {
        int out = (int) shape[0];
        int in = (int) shape[1];
        int[] t = ternaryValues(name, shape, seed);
        byte[] packed = new byte[out / 4 * in];
        for (int row = 0; row < out; row++) {
            for (int k = 0; k < in; k++) {
                int at = (row % (out / 4)) * in + k;
                packed[at] |= (byte) ((t[row * in + k] + 1) << (2 * (row / (out / 4))));
            }
        }
        return packed;
    }

    /** Elements start..start+count-1 (flat, row-major) of tensor {@code name} into out[0..count). */
    static void fill(String name, long[] shape, long seed, long start, float[] out, int count) {
        long base = fnv1a64(name) ^ seed;
        boolean norm = shape.length == 1 && name.endsWith("norm.weight");
        boolean bias = name.endsWith(".bias");
        if (!norm && !bias && shape.length != 2) {
            throw new IllegalArgumentException("no formula for " + name + " of rank " + shape.length);
        }
        double amplitude = norm ? NORM_SPREAD : bias ? BIAS_SPREAD : Math.sqrt(3.0 / shape[1]);
        double offset = norm ? 1 : 0;
        for (int i = 0; i < count; i++) {
            double u = (splitmix64(base + (start + i + 1) * GAMMA) >>> 40) * 0x1p-24;
            out[i] = (float) (offset + (2 * u - 1) * amplitude);
        }
    }

    private static long splitmix64(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    private static long fnv1a64(String text) {
        long h = 0xCBF29CE484222325L;
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            h = (h ^ (b & 0xff)) * 0x100000001B3L;
        }
        return h;
    }
}
