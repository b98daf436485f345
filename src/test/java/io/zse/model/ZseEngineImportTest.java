package io.zse.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.backend.KvCache;
import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cpu.TestKernels;
import io.zse.convert.ImportFormatException;
import io.zse.convert.ModelConverter;
import io.zse.convert.zseengine.ZseEngineConverter;
import io.zse.format.TensorDecoder;
import io.zse.format.TensorInfo;
import io.zse.format.ZseFile;
import io.zse.format.ZseTensor;
import io.zse.tokenizer.TokenizerSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Map;
import java.util.zip.GZIPInputStream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Python zse-engine's own .zse files (src/test/resources/zse-engine, see its SOURCE.md) converted by
 * {@link ZseEngineConverter}: every tensor decodes to exactly the values reference.json records (sha256 of the whole
 * tensor as float32), and TinyStories gives the reference's prompt ids, top-5 logits and 20 greedy ids.
 */
class ZseEngineImportTest {
    @TempDir
    static Path dir;
    static JsonNode reference;
    static final CpuBackend BACKEND = TestKernels.backend("vector", 2);

    @BeforeAll
    static void read() throws IOException {
        try (InputStream in = ZseEngineImportTest.class.getResourceAsStream("/zse-engine/reference.json")) {
            reference = new ObjectMapper().readTree(in);
        }
    }

    @AfterAll
    static void close() {
        BACKEND.close();
    }

    static Path fixture(String name) throws IOException {
        Path out = dir.resolve(name);
        if (!Files.exists(out)) {
            try (InputStream in = ZseEngineImportTest.class.getResourceAsStream("/zse-engine/" + name + ".gz")) {
                Files.write(out, new GZIPInputStream(in).readAllBytes());
            }
        }
        return out;
    }

    static Path convert(String name) throws IOException {
        Path out = dir.resolve(name + ".ours.zse");
        ZseEngineConverter.convert(fixture(name), out, true, ModelConverter.Progress.NONE);
        return out;
    }

    @ParameterizedTest
    @ValueSource(strings = {"tinystories-656k.zse-engine-int4.zse", "tinystories-656k.zse-engine-int8.zse",
            "tinystories-656k.zse-engine-fp16.zse", "synthetic-oddshapes.zse-engine-int4.zse",
            "synthetic-oddshapes.zse-engine-int8.zse", "synthetic-oddshapes.zse-engine-int4-purepython.zse"})
    void everyTensorDecodesToTheReferenceValues(String name) throws IOException {
        JsonNode fixture = reference.get("fixtures").get(name);
        boolean tied = fixture.get("config").get("tie_word_embeddings").asBoolean();
        try (ZseFile file = ZseFile.open(convert(name))) {
            file.verify();
            for (JsonNode t : fixture.get("tensors")) {
                String theirs = t.get("name").asText();
                String ours = theirs.equals("lm_head.weight") ? (tied ? "model.embed_tokens.weight" : theirs)
                        : "model." + theirs;
                float[] values = decode(file.tensor(ours));
                assertEquals(t.get("sha256_f32le").asText(), sha256(values), theirs + " (as " + ours + ")");
                assertArrayEquals(floats(t.get("first8")), Arrays.copyOf(values, 8), theirs);
                assertArrayEquals(floats(t.get("last8")), Arrays.copyOfRange(values, values.length - 8, values.length), theirs);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tinystories-656k.zse-engine-int4.zse", "tinystories-656k.zse-engine-int8.zse",
            "tinystories-656k.zse-engine-fp16.zse"})
    void tinyStoriesGivesTheReferenceIdsLogitsAndGreedyTokens(String name) throws IOException {
        JsonNode fixture = reference.get("fixtures").get(name);
        try (ZseFile file = ZseFile.open(convert(name))) {
            int[] prompt = TokenizerSource.fromZse(file).encode(reference.get("prompt").asText(), true);
            assertArrayEquals(LlamaModelGoldenTest.ints(reference.get("prompt_ids")), prompt);
            LlamaModel model = LlamaModel.load(file, BACKEND);
            KvCache cache = model.newCache(prompt.length + 20);
            float[] logits = model.forward(prompt, 0, cache);
            for (JsonNode top : fixture.get("top5_next_token")) {
                double want = top.get("logit").asDouble();
                assertEquals(want, logits[top.get("id").asInt()], 1e-4 * Math.max(1, Math.abs(want)), top.toString());
            }
            int[] greedy = new int[20];
            for (int i = 0; i < greedy.length; i++) {
                greedy[i] = LlamaModelGoldenTest.argmax(logits);
                if (i + 1 < greedy.length) {
                    logits = model.forward(new int[]{greedy[i]}, prompt.length + i, cache);
                }
            }
            assertArrayEquals(LlamaModelGoldenTest.ints(fixture.get("greedy_20")), greedy, name);
        }
    }

    @Test
    void theFp16FileHoldsInt4WeightsSoItDecodesLikeTheInt4File() throws IOException {
        // zse-engine's --quant fp16 writes int4 (its format description, 11.4): the import keeps what the file holds.
        try (ZseFile fp16 = ZseFile.open(convert("tinystories-656k.zse-engine-fp16.zse"));
             ZseFile int4 = ZseFile.open(convert("tinystories-656k.zse-engine-int4.zse"))) {
            for (TensorInfo t : int4.tensors()) {
                assertEquals(t.type(), fp16.tensor(t.name()).info().type(), t.name());
                assertEquals(t.dataCrc(), fp16.tensor(t.name()).info().dataCrc(), t.name());
            }
        }
    }

    @Test
    void damagedFilesAreOneClearError() throws IOException {
        byte[] bytes = Files.readAllBytes(fixture("tinystories-656k.zse-engine-int8.zse"));
        for (int cut : new int[] {0, 10, 63, 200, 5000, bytes.length - 1}) {
            Path p = dir.resolve("cut" + cut + ".zse");
            Files.write(p, Arrays.copyOf(bytes, cut));
            ImportFormatException e = assertThrows(ImportFormatException.class,
                    () -> ZseEngineConverter.convert(p, dir.resolve("out.zse"), true, ModelConverter.Progress.NONE));
            assertTrue(e.getMessage().startsWith(p.toString()), e.getMessage());
        }
        byte[] flipped = bytes.clone();
        flipped[300] ^= 1; // inside the CONFIG section (offset 192, 462 bytes)
        Path p = dir.resolve("flipped.zse");
        Files.write(p, flipped);
        ImportFormatException e = assertThrows(ImportFormatException.class,
                () -> ZseEngineConverter.convert(p, dir.resolve("out.zse"), true, ModelConverter.Progress.NONE));
        assertTrue(e.getMessage().contains("CONFIG section checksum mismatch"), e.getMessage());
    }

    /**
     * Files written as the engine does with one thing wrong: a tokenizer without a BOS id (Qwen2 has none) converts,
     * with no BOS in the config; every tensor at data offset 0 is refused, naming the overlap; an int4 tensor with
     * fewer data bytes than its elements need is refused before a byte past them is read.
     */
    @Test
    void writtenFilesWithOneThingWrong() throws IOException {
        Path noBos = dir.resolve("no-bos.zse");
        ZseEngineFixture.write(noBos, ZseEngineFixture.config(), ZseEngineFixture.index(),
                ZseEngineFixture.tokenizer(false));
        Path converted = dir.resolve("no-bos-out.zse");
        ZseEngineConverter.convert(noBos, converted, true, ModelConverter.Progress.NONE);
        try (ZseFile f = ZseFile.open(converted)) {
            ModelConfig config = ModelConfig.fromJson(f.configJson());
            assertEquals(null, config.bosTokenId());
            assertEquals(java.util.List.of(1), config.eosTokenIds());
        }

        java.util.List<java.util.Map<String, Object>> overlapping = ZseEngineFixture.index();
        overlapping.forEach(m -> m.put("data_offset", 0L));
        Path overlap = dir.resolve("overlap.zse");
        ZseEngineFixture.write(overlap, ZseEngineFixture.config(), overlapping, ZseEngineFixture.tokenizer(true));
        ImportFormatException e = assertThrows(ImportFormatException.class,
                () -> ZseEngineConverter.convert(overlap, dir.resolve("out.zse"), true, ModelConverter.Progress.NONE));
        assertTrue(e.getMessage().contains("overlaps"), e.getMessage());

        // the embeddings [4, 8] as int4 in groups of 3 (11 groups, 33 codes): 16 data bytes hold 32 of them
        java.util.List<java.util.Map<String, Object>> odd = ZseEngineFixture.index();
        java.util.Map<String, Object> embeddings = odd.getFirst();
        long end = odd.stream().mapToLong(m -> (Long) m.get("data_offset") + (Long) m.get("data_nbytes")).max()
                .orElseThrow();
        embeddings.put("dtype", "int4");
        embeddings.put("group_size", 3L);
        embeddings.put("data_nbytes", 16L);
        embeddings.put("scale_offset", end);
        embeddings.put("scale_nbytes", 22L);
        embeddings.put("zeros_offset", end + 22);
        embeddings.put("zeros_nbytes", 22L);
        Path oddInt4 = dir.resolve("odd-int4.zse");
        ZseEngineFixture.write(oddInt4, ZseEngineFixture.config(), odd, ZseEngineFixture.tokenizer(true));
        e = assertThrows(ImportFormatException.class,
                () -> ZseEngineConverter.convert(oddInt4, dir.resolve("out.zse"), true, ModelConverter.Progress.NONE));
        assertTrue(e.getMessage().contains("int4 data_nbytes 16"), e.getMessage());
    }

    /** A RoPE base must be finite and above 1, a norm epsilon above 0 and below 1: else refused by its key. */
    @Test
    void ropeThetaAndNormEpsOutOfRangeAreRefusedByKey() throws IOException {
        String base = ", expected a finite RoPE base above 1";
        assertEquals("zse-engine config 'rope_theta' is 0.0" + base, configRefusal("rope_theta", 0L));
        assertEquals("zse-engine config 'rope_theta' is 1.0" + base, configRefusal("rope_theta", 1.0));
        assertEquals("zse-engine config 'rope_theta' is -500000.0" + base, configRefusal("rope_theta", -500000.0));
        String eps = ", expected a norm epsilon above 0 and below 1";
        assertEquals("zse-engine config 'rms_norm_eps' is 0.0" + eps, configRefusal("rms_norm_eps", 0.0));
        assertEquals("zse-engine config 'rms_norm_eps' is 1.0" + eps, configRefusal("rms_norm_eps", 1L));
        assertEquals("zse-engine config 'rms_norm_eps' is -1.0E-6" + eps, configRefusal("rms_norm_eps", -1e-6));
    }

    /** The refusal of the fixture with config {@code key} set to {@code value}, without the file name before it. */
    static String configRefusal(String key, Object value) throws IOException {
        Map<String, Object> config = ZseEngineFixture.config();
        config.put(key, value);
        Path file = dir.resolve("bad-" + key + "-" + value + ".zse");
        ZseEngineFixture.write(file, config, ZseEngineFixture.index(), ZseEngineFixture.tokenizer(true));
        ImportFormatException e = assertThrows(ImportFormatException.class,
                () -> ZseEngineConverter.convert(file, dir.resolve("out.zse"), true, ModelConverter.Progress.NONE));
        assertTrue(e.getMessage().startsWith(file + ": "), e.getMessage());
        return e.getMessage().substring(file.toString().length() + 2);
    }

    static float[] decode(ZseTensor t) {
        int n = (int) t.info().elementCount();
        float[] out = new float[n];
        TensorDecoder.decode(t.type(), t.groupSize(), t.data(), t.scales(), 0, n, out, 0);
        return out;
    }

    static float[] floats(JsonNode array) {
        float[] out = new float[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = (float) array.get(i).asDouble();
        }
        return out;
    }

    static String sha256(float[] values) {
        ByteBuffer b = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(values);
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b.array()));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
