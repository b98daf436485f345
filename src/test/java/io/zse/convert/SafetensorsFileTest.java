package io.zse.convert;

import io.zse.format.HalfFloats;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SafetensorsFileTest {
    @TempDir
    Path dir;

    @Test
    void readsTinyStoriesHeaderAndValues() throws IOException {
        Path path = SafetensorsFixtures.TINYSTORIES.resolve("model.safetensors");
        try (SafetensorsFile file = SafetensorsFile.open(path)) {
            assertEquals(20, file.tensors().size());
            assertEquals(Map.of("format", "pt", "model.embed_tokens.weight", "lm_head.weight"), file.metadata());
            SafetensorsTensor head = file.tensor("lm_head.weight").orElseThrow();
            assertEquals(SafetensorsDtype.F32, head.dtype());
            assertArrayEquals(new long[]{2048, 128}, head.shape());
            assertArrayEquals(new long[]{64, 128}, file.tensor("model.layers.1.self_attn.k_proj.weight").orElseThrow().shape());

            // Independent check: header is 2160 bytes, so data starts at 2168; offsets from the header (read with Python).
            ByteBuffer raw = ByteBuffer.wrap(Files.readAllBytes(path)).order(ByteOrder.LITTLE_ENDIAN);
            assertEquals(2160, raw.getLong(0));
            assertFloatsAt(file, raw, "lm_head.weight", 2168, 0, 5);
            assertFloatsAt(file, raw, "lm_head.weight", 2168, 262_140, 4);
            assertFloatsAt(file, raw, "model.norm.weight", 2168 + 2_623_488, 100, 28);
            assertFloatsAt(file, raw, "model.layers.0.mlp.down_proj.weight", 2168 + 1_049_088, 1000, 7);
        }
    }

    private static void assertFloatsAt(SafetensorsFile file, ByteBuffer raw, String name, long dataOffset,
                                       int first, int count) throws IOException {
        float[] out = new float[count + 2];
        file.readFloats(name, first, count, out, 1);
        for (int i = 0; i < count; i++) {
            assertEquals(raw.getFloat((int) (dataOffset + 4L * (first + i))), out[1 + i], name + "[" + (first + i) + "]");
        }
        assertEquals(0f, out[0]);
        assertEquals(0f, out[count + 1]);
    }

    @Test
    void roundTripsEveryDtypeInChunks() throws IOException {
        int n = 20_000; // more than one conversion chunk
        List<SafetensorsTensor> tensors = List.of(
                new SafetensorsTensor("a", SafetensorsDtype.F32, new long[]{n}),
                new SafetensorsTensor("b", SafetensorsDtype.F16, new long[]{100, n / 100}),
                new SafetensorsTensor("c", SafetensorsDtype.BF16, new long[]{n}),
                new SafetensorsTensor("empty", SafetensorsDtype.F32, new long[]{0, 4}),
                new SafetensorsTensor("scalar", SafetensorsDtype.F32, new long[]{}));
        float[] values = new float[n];
        for (int i = 0; i < n; i++) {
            values[i] = ((i % 256) - 128) * 0.25f; // 7 significant bits: exact in F16 and BF16
        }
        Path path = dir.resolve("x.safetensors");
        try (SafetensorsWriter w = SafetensorsWriter.create(path, tensors, Map.of("k", "v"))) {
            for (int t = 0; t < 3; t++) {
                for (int off = 0; off < n; off += 3000) {
                    w.writeFloats(values, off, Math.min(3000, n - off));
                }
            }
            assertEquals("scalar", w.currentTensor().name());
            w.writeFloats(new float[]{42f}, 0, 1);
        }
        assertEquals(0, (Files.size(path) - (4L * n + 2L * n + 2L * n + 4) - 8) % 8, "header padded to 8 bytes");
        try (Arena arena = Arena.ofConfined(); SafetensorsFile file = SafetensorsFile.open(path, arena)) {
            assertEquals(Map.of("k", "v"), file.metadata());
            assertEquals(tensors, file.tensors());
            for (String name : List.of("a", "b", "c")) {
                float[] out = new float[n - 7];
                file.readFloats(name, 7, n - 7, out, 0);
                for (int i = 0; i < out.length; i++) {
                    assertEquals(values[7 + i], out[i], name);
                }
            }
            float[] one = new float[1];
            file.readFloats("scalar", 0, 1, one, 0);
            assertEquals(42f, one[0]);
            assertEquals(8L, file.tensorBytes("b").byteSize() / 5000);
            assertThrows(IndexOutOfBoundsException.class, () -> file.readFloats("a", n - 1, 2, new float[2], 0));
            assertThrows(SafetensorsException.class, () -> file.readFloats("nope", 0, 1, one, 0));
        }
    }

    @Test
    void writerChecksElementCounts() throws IOException {
        List<SafetensorsTensor> tensors = List.of(new SafetensorsTensor("w", SafetensorsDtype.BF16, new long[]{2, 3}));
        SafetensorsWriter tooMany = SafetensorsWriter.create(dir.resolve("a.safetensors"), tensors, Map.of());
        IOException e = assertThrows(IOException.class, () -> tooMany.writeFloats(new float[7], 0, 7));
        assertTrue(e.getMessage().contains("'w' has 6 elements left"), e.getMessage());
        tooMany.writeFloats(new float[6], 0, 6);
        assertThrows(IOException.class, () -> tooMany.writeFloats(new float[1], 0, 1));
        tooMany.close();

        SafetensorsWriter incomplete = SafetensorsWriter.create(dir.resolve("b.safetensors"), tensors, Map.of());
        incomplete.writeFloats(new float[4], 0, 4);
        e = assertThrows(IOException.class, incomplete::close);
        assertTrue(e.getMessage().contains("'w' is missing 2 of 6"), e.getMessage());

        List<SafetensorsTensor> repeated = List.of(tensors.get(0), tensors.get(0));
        assertThrows(IOException.class, () -> SafetensorsWriter.create(dir.resolve("c.safetensors"), repeated, Map.of()));
    }

    @Test
    void refusesCorruptFiles() throws IOException {
        String ok = "{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
        try (SafetensorsFile f = SafetensorsFile.open(SafetensorsFixtures.rawFile(dir, "ok", ok, 8))) {
            assertEquals(1, f.tensors().size());
        }
        Path truncated = dir.resolve("truncated");
        Files.write(truncated, new byte[]{1, 2, 3});
        assertRefused(truncated, "too short");
        Path cut = SafetensorsFixtures.rawFile(dir, "cut", ok, 8);
        byte[] bytes = Files.readAllBytes(cut);
        Files.write(cut, java.util.Arrays.copyOf(bytes, 30));
        assertRefused(cut, "does not fit the file size");
        assertRefused(SafetensorsFixtures.rawFile(dir, "shortdata", ok, 4), "lie outside the data area");
        assertRefused(SafetensorsFixtures.rawFile(dir, "badjson", "{\"t\":{\"dtype\":", 8), "not valid JSON");
        assertRefused(SafetensorsFixtures.rawFile(dir, "array", "[1,2]", 8), "not a JSON object");
        Path latin1 = SafetensorsFixtures.rawFile(dir, "latin1", ok.replace("\"t\"", "\"t#\""), 8);
        byte[] named = Files.readAllBytes(latin1);
        named[new String(named, StandardCharsets.ISO_8859_1).indexOf('#')] = (byte) 0xFF; // no UTF-8 byte sequence
        Files.write(latin1, named);
        assertRefused(latin1, "header is not valid UTF-8");
        assertRefused(SafetensorsFixtures.rawFile(dir, "dup", "{\"t\":{},\"t\":{}}", 8), "not valid JSON");
        assertRefused(SafetensorsFixtures.rawFile(dir, "past",
                "{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", 8), "'t': data_offsets [8, 16] lie outside");
        assertRefused(SafetensorsFixtures.rawFile(dir, "size",
                "{\"t\":{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8), "'t': data_offsets cover 8 bytes but F16");
        assertRefused(SafetensorsFixtures.rawFile(dir, "overlap",
                "{\"a\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]},"
                        + "\"b\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[2,6]}}", 8), "'a' and 'b' overlap");
        assertRefused(SafetensorsFixtures.rawFile(dir, "f64",
                "{\"d\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 8), "tensor 'd' has unsupported dtype F64");
        assertRefused(SafetensorsFixtures.rawFile(dir, "i8",
                "{\"q\":{\"dtype\":\"I8\",\"shape\":[8],\"data_offsets\":[0,8]}}", 8), "unsupported dtype I8");
        assertRefused(SafetensorsFixtures.rawFile(dir, "negative",
                "{\"t\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8), "not a non-negative integer");
        assertRefused(SafetensorsFixtures.rawFile(dir, "noshape",
                "{\"t\":{\"dtype\":\"F32\",\"data_offsets\":[0,8]}}", 8), "shape must be an array");
        assertRefused(SafetensorsFixtures.rawFile(dir, "huge",
                "{\"t\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}}", 8), "invalid shape");
        assertRefused(SafetensorsFixtures.rawFile(dir, "badmeta", "{\"__metadata__\":{\"a\":1}}", 0), "is not a string");
        assertRefused(dir.resolve("missing.safetensors"), "no such file");
    }

    private static void assertRefused(Path file, String expected) {
        SafetensorsException e = assertThrows(SafetensorsException.class, () -> SafetensorsFile.open(file).close());
        assertTrue(e.getMessage().startsWith(file.toString()), e.getMessage());
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}
