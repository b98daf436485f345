package io.zse.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.TestModels;
import io.zse.format.TensorType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code zse generate} on the real TinyStories-656K model: the real tokenizer, the F32 engine, the golden output. */
class GenerateCommandTest {
    @TempDir
    Path dir;

    @Test
    void greedyGenerationMatchesTransformers() throws IOException {
        JsonNode golden;
        try (InputStream in = getClass().getResourceAsStream("/golden/tinystories-656k-greedy-f32.json")) {
            golden = new ObjectMapper().readTree(in).get("cases").get(0);
        }
        Path zse = TestModels.convertTinyStories(TensorType.F32, dir);
        ConvertInspectCliTest.Run run = ConvertInspectCliTest.run("generate", "--model", zse.toString(), "--prompt",
                golden.get("prompt").asText(), "--max-tokens", "64", "--temperature", "0", "--json");
        assertEquals(0, run.exit(), run.err());
        JsonNode result = new ObjectMapper().readTree(run.out());
        assertEquals(golden.get("prompt_ids"), result.get("prompt_ids"));
        assertEquals(golden.get("greedy_ids"), result.get("ids"));
        assertEquals(golden.get("greedy_text").asText(), result.get("text").asText());
        assertEquals("length", result.get("finish_reason").asText());
    }

    /** --timings: the start's milestones in order, then the decode rate; without it, nothing of the kind. */
    @Test
    void timingsNameEachStartupMilestoneInOrderAndTheDecodeRate() throws IOException {
        Path zse = TestModels.convertTinyStories(TensorType.Q8, dir);
        ConvertInspectCliTest.Run run = ConvertInspectCliTest.run("generate", "--model", zse.toString(), "--prompt",
                "Once upon a time", "--max-tokens", "12", "--temperature", "0", "--timings", "--json");
        assertEquals(0, run.exit(), run.err());
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("timings since process start: file open (\\d+) ms, "
                + "backend ready (\\d+) ms, model loaded (\\d+) ms, tokenizer ready (\\d+) ms, first token (\\d+) ms; "
                + "then (\\d+) tokens at [0-9.]+ tok/s").matcher(run.err());
        assertTrue(m.find(), run.err());
        int generated = new ObjectMapper().readTree(run.out()).get("ids").size();
        assertEquals(generated - 1, Integer.parseInt(m.group(6)), run.err());
        for (int g = 2; g <= 5; g++) {
            assertTrue(Long.parseLong(m.group(g)) >= Long.parseLong(m.group(g - 1)), run.err());
        }
        ConvertInspectCliTest.Run quiet = ConvertInspectCliTest.run("generate", "--model", zse.toString(), "--prompt",
                "Once upon a time", "--max-tokens", "4", "--temperature", "0");
        assertTrue(!quiet.err().contains("timings"), quiet.err());
    }

    @Test
    void aGemmaCheckpointGivesTransformersGreedyOutput() throws IOException {
        JsonNode golden;
        try (InputStream in = getClass().getResourceAsStream("/golden/architectures/gemma3-local-global.json")) {
            golden = new ObjectMapper().readTree(in);
        }
        Path hf = io.zse.model.FormulaCheckpoint.write(golden.get("config"), golden.get("weights").get("seed").asLong(),
                io.zse.tokenizer.TestTokenizers.json(golden.get("tokenizer").asText()), dir.resolve("gemma3"));
        Path zse = dir.resolve("gemma3.zse");
        ConvertInspectCliTest.Run convert = ConvertInspectCliTest.run("convert", hf.toString(), "-o", zse.toString(),
                "--quant", "f32");
        assertEquals(0, convert.exit(), convert.err());
        ConvertInspectCliTest.Run run = ConvertInspectCliTest.run("generate", "--model", zse.toString(), "--prompt",
                golden.get("prompt").asText(), "--max-tokens", "64", "--temperature", "0", "--json");
        assertEquals(0, run.exit(), run.err());
        JsonNode result = new ObjectMapper().readTree(run.out());
        assertEquals(golden.get("prompt_ids"), result.get("prompt_ids"));
        assertEquals(golden.get("greedy_ids"), result.get("ids"));
        assertEquals(golden.get("greedy_text").asText(), result.get("text").asText());
    }

    @Test
    void aGgufModelIsConvertedIntoTheCacheAndGivesTheSameGreedyOutput() throws IOException {
        JsonNode golden;
        try (InputStream in = getClass().getResourceAsStream("/golden/tinystories-656k-greedy-f32.json")) {
            golden = new ObjectMapper().readTree(in).get("cases").get(0);
        }
        Path gguf = io.zse.convert.gguf.GgufFixtures.gguf("tinystories-656k-f32", dir);
        String previous = System.setProperty("zse.cache-dir", dir.resolve("cache").toString());
        try {
            ConvertInspectCliTest.Run run = ConvertInspectCliTest.run("generate", "--model", gguf.toString(), "--prompt",
                    golden.get("prompt").asText(), "--max-tokens", "64", "--temperature", "0", "--json");
            assertEquals(0, run.exit(), run.err());
            assertTrue(run.err().contains("converting " + gguf), run.err());
            JsonNode result = new ObjectMapper().readTree(run.out());
            assertEquals(golden.get("prompt_ids"), result.get("prompt_ids"));
            assertEquals(golden.get("greedy_ids"), result.get("ids"));
        } finally {
            if (previous == null) {
                System.clearProperty("zse.cache-dir");
            } else {
                System.setProperty("zse.cache-dir", previous);
            }
        }
    }

    @Test
    void logprobsOfEachTokenAndItsAlternativesMatchTransformers() throws IOException {
        JsonNode golden;
        try (InputStream in = getClass().getResourceAsStream("/golden/tinystories-656k-greedy-f32.json")) {
            golden = new ObjectMapper().readTree(in).get("cases").get(0);
        }
        Path zse = TestModels.convertTinyStories(TensorType.F32, dir);
        ConvertInspectCliTest.Run run = ConvertInspectCliTest.run("generate", "--model", zse.toString(), "--prompt",
                golden.get("prompt").asText(), "--max-tokens", "16", "--temperature", "0", "--json", "--logprobs", "5");
        assertEquals(0, run.exit(), run.err());
        JsonNode logprobs = new ObjectMapper().readTree(run.out()).get("logprobs");
        assertEquals(16, logprobs.size());
        int promptLength = golden.get("prompt_ids").size();
        for (JsonNode expected : golden.get("logits")) {
            // Logits at position p choose generated token p - (promptLength - 1).
            JsonNode token = logprobs.get(expected.get("position").asInt() - promptLength + 1);
            assertEquals(expected.get("top5_ids").get(0).asInt(), token.get("id").asInt());
            assertEquals(expected.get("top5_logprobs").get(0).asDouble(), token.get("logprob").asDouble(), 1e-4);
            JsonNode top = token.get("top_logprobs");
            assertEquals(5, top.size());
            for (int i = 0; i < 5; i++) {
                assertEquals(expected.get("top5_ids").get(i).asInt(), top.get(i).get("id").asInt(), "alternative " + i);
                assertEquals(expected.get("top5_logprobs").get(i).asDouble(), top.get(i).get("logprob").asDouble(), 1e-4);
                assertTrue(top.get(i).get("token").isTextual());
            }
        }
    }

    /** Without --json the logprobs come as a table after the text: each token, its logprob, its alternatives. */
    @Test
    void logprobsWithoutJsonFollowTheTextAsATable() throws IOException {
        Path zse = TestModels.convertTinyStories(TensorType.F32, dir);
        String[] args = {"generate", "--model", zse.toString(), "--prompt", "Once upon a time", "--max-tokens", "6",
                "--temperature", "0", "--logprobs", "2"};
        ConvertInspectCliTest.Run text = ConvertInspectCliTest.run(args);
        assertEquals(0, text.exit(), text.err());
        String[] withJson = java.util.Arrays.copyOf(args, args.length + 1);
        withJson[args.length] = "--json";
        JsonNode json = new ObjectMapper().readTree(ConvertInspectCliTest.run(withJson).out());
        String header = "logprobs: position, token, its logprob; then the 2 most likely tokens and theirs\n";
        String prefix = json.get("text").asText() + "\n\n" + header;
        assertTrue(text.out().startsWith(prefix), text.out());
        List<String> table = text.out().substring(prefix.length()).lines().toList();
        assertEquals(6, table.size(), text.out());
        for (int i = 0; i < table.size(); i++) {
            JsonNode token = json.get("logprobs").get(i);
            StringBuilder alternatives = new StringBuilder();
            for (JsonNode top : token.get("top_logprobs")) {
                alternatives.append("  ").append(quoted(top)).append(' ').append(logprob(top));
            }
            String expected = String.format("%4d  ", i + 1) + Pattern.quote(quoted(token)) + " +"
                    + Pattern.quote(logprob(token)) + "  \\|" + Pattern.quote(alternatives.toString());
            assertTrue(table.get(i).matches(expected), table.get(i) + " is not " + expected);
        }
    }

    private static String quoted(JsonNode token) throws IOException {
        return new ObjectMapper().writeValueAsString(token.get("token").asText());
    }

    private static String logprob(JsonNode token) {
        return String.format(Locale.ROOT, "%.4f", token.get("logprob").floatValue());
    }

    @Test
    void quantizedKvCachesKeepTheGreedyStory() throws IOException {
        JsonNode golden;
        try (InputStream in = getClass().getResourceAsStream("/golden/tinystories-656k-greedy-f32.json")) {
            golden = new ObjectMapper().readTree(in).get("cases").get(0);
        }
        Path zse = TestModels.convertTinyStories(TensorType.F32, dir);
        for (String kv : new String[]{"f16", "int8"}) {
            ConvertInspectCliTest.Run run = ConvertInspectCliTest.run("generate", "--model", zse.toString(), "--prompt",
                    golden.get("prompt").asText(), "--max-tokens", "32", "--temperature", "0", "--kv-cache", kv, "--json");
            assertEquals(0, run.exit(), run.err());
            JsonNode ids = new ObjectMapper().readTree(run.out()).get("ids");
            for (int i = 0; i < 32; i++) {
                assertEquals(golden.get("greedy_ids").get(i), ids.get(i), kv + " KV cache, token " + i);
            }
        }
        ConvertInspectCliTest.Run bad = ConvertInspectCliTest.run("generate", "--model", zse.toString(), "--prompt",
                "Once", "--kv-cache", "bf16");
        assertEquals(1, bad.exit());
        assertEquals("zse generate: unknown KV cache type 'bf16' (use f32, f16 or int8)\n", bad.err());
    }

    @Test
    void stopStringEndsTheTextBeforeIt() throws IOException {
        Path zse = TestModels.convertTinyStories(TensorType.Q8, dir);
        ConvertInspectCliTest.Run run = ConvertInspectCliTest.run("generate", "--model", zse.toString(), "--prompt",
                "Once upon a time", "--max-tokens", "64", "--temperature", "0", "--stop", "Lily", "--json");
        assertEquals(0, run.exit(), run.err());
        JsonNode result = new ObjectMapper().readTree(run.out());
        assertEquals("stop", result.get("finish_reason").asText());
        assertTrue(!result.get("text").asText().contains("Lily") && result.get("text").asText().endsWith("named "),
                result.get("text").asText());
    }

    @Test
    void seededSamplingIsReproducibleAndChatNeedsATemplate() throws IOException {
        Path zse = TestModels.convertTinyStories(TensorType.Q8, dir);
        String[] args = {"generate", "--model", zse.toString(), "--prompt", "Once upon a time", "--max-tokens", "20",
                "--temperature", "1.0", "--top-p", "0.9", "--seed", "7", "--json"};
        assertEquals(ConvertInspectCliTest.run(args).out(), ConvertInspectCliTest.run(args).out());
        ConvertInspectCliTest.Run chat = ConvertInspectCliTest.run("generate", "--model", zse.toString(), "--prompt",
                "hi", "--chat");
        assertEquals(1, chat.exit());
        assertTrue(chat.err().contains("has no chat template"), chat.err());
    }

    @Test
    void verifyWeightsRefusesAFlippedTensorByName() throws IOException {
        Path zse = TestModels.convertTinyStories(TensorType.Q8, dir);
        String tensor = "model.layers.1.mlp.up_proj.weight";
        TestModels.flipByteInTensor(zse, tensor);
        assertEquals(0, ConvertInspectCliTest.run("generate", "--model", zse.toString(), "--prompt", "Once",
                "--max-tokens", "2").exit(), "without the flag the damage goes unnoticed");
        ConvertInspectCliTest.Run checked = ConvertInspectCliTest.run("generate", "--model", zse.toString(), "--prompt",
                "Once", "--max-tokens", "2", "--verify-weights");
        assertEquals(1, checked.exit());
        assertTrue(checked.err().contains("tensor " + tensor + ": data checksum mismatch"), checked.err());
        assertEquals("", checked.out(), "nothing generated");
    }
}
