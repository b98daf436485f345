package io.zse.serve;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.TestModels;
import io.zse.backend.KvCacheType;
import io.zse.convert.ConvertOptions;
import io.zse.backend.cpu.CpuBackend;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import io.zse.generate.Sampler;
import io.zse.model.LlamaModel;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Prompt passes of the real TinyStories-656K (F32) against transformers (golden/tinystories-656k-prompt-pass-f32.json,
 * made by tools/reference/tinystories_prompt_pass.py): pooled, normalized final hidden states and prompt logprobs.
 */
class PromptPassTest {
    private static final double TOLERANCE = 1e-4;

    @TempDir
    static Path dir;
    static JsonNode golden;
    static ZseFile file;
    static CpuBackend backend;
    static LlamaModel model;

    @BeforeAll
    static void load() throws IOException {
        try (InputStream in = PromptPassTest.class.getResourceAsStream("/golden/tinystories-656k-prompt-pass-f32.json")) {
            golden = new ObjectMapper().readTree(in);
        }
        file = ZseFile.open(TestModels.convertTinyStories(TensorType.F32, dir));
        backend = new CpuBackend(2);
        model = LlamaModel.load(file, backend);
    }

    @AfterAll
    static void close() {
        backend.close();
        file.close();
    }

    @Test
    void embeddingsMatchTransformersMeanAndLastTokenPooling() {
        PromptPass pass = new PromptPass(model, KvCacheType.F32, tokens -> { });
        for (JsonNode c : golden.get("cases")) {
            int[] ids = ints(c.get("ids"));
            assertClose(c.get("mean"), pass.embedding(ids, Pooling.MEAN), c.get("text") + " mean");
            assertClose(c.get("last"), pass.embedding(ids, Pooling.LAST), c.get("text") + " last");
        }
    }

    @Test
    void promptLogprobsMatchTransformers() {
        PromptPass pass = new PromptPass(model, KvCacheType.F32, tokens -> { });
        for (JsonNode c : golden.get("cases")) {
            List<Sampler.Choice> scores = pass.tokenLogprobs(ints(c.get("ids")), 2);
            JsonNode expected = c.get("logprobs");
            assertEquals(expected.size(), scores.size());
            for (int i = 0; i < scores.size(); i++) {
                JsonNode e = expected.get(i);
                Sampler.Choice s = scores.get(i);
                assertEquals(e.get("token").asInt(), s.token());
                assertEquals(e.get("logprob").asDouble(), s.logprob(), TOLERANCE, "position " + (i + 1));
                for (int k = 0; k < 2; k++) {
                    assertEquals(e.get("top").get(k).get(0).asInt(), s.top().get(k).token());
                    assertEquals(e.get("top").get(k).get(1).asDouble(), s.top().get(k).logprob(), TOLERANCE);
                }
            }
        }
    }

    @Test
    void poolingIsWhatTheCheckpointsSentenceTransformersConfigSaysElseMean() throws IOException {
        assertEquals(Pooling.MEAN, Pooling.of(file));
        Path checkpoint = TestModels.copyOf(TestModels.tinyStories(), dir.resolve("last-token"));
        Files.createDirectories(checkpoint.resolve("1_Pooling"));
        Files.writeString(checkpoint.resolve("1_Pooling/config.json"), "{\"word_embedding_dimension\": 128, "
                + "\"pooling_mode_cls_token\": false, \"pooling_mode_mean_tokens\": false, "
                + "\"pooling_mode_lasttoken\": true}");
        Path converted = TestModels.convert(checkpoint, ConvertOptions.of(TensorType.F32),
                dir.resolve("last-token.zse"));
        try (ZseFile lastToken = ZseFile.open(converted)) {
            assertEquals(Pooling.LAST, Pooling.of(lastToken));
        }
    }

    private static void assertClose(JsonNode expected, float[] actual, String what) {
        assertEquals(expected.size(), actual.length, what);
        double norm = 0;
        for (int i = 0; i < actual.length; i++) {
            assertEquals(expected.get(i).asDouble(), actual[i], TOLERANCE, what + " [" + i + "]");
            norm += actual[i] * actual[i];
        }
        assertEquals(1.0, norm, 1e-5, what + ": unit length");
    }

    private static int[] ints(JsonNode array) {
        int[] out = new int[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = array.get(i).asInt();
        }
        return out;
    }
}
