package io.zse.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.TestModels;
import io.zse.format.TensorType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code zse eval} on the real TinyStories-656K and the sampled story text fixture. */
class EvalCommandTest {
    @TempDir
    Path dir;

    private static Path storyText() throws URISyntaxException {
        return Path.of(EvalCommandTest.class.getResource("/eval/tinystories-sampled.txt").toURI());
    }

    @Test
    void printsTheTableForQuantizedWeights() throws Exception {
        Path f32 = TestModels.convertTinyStories(TensorType.F32, dir);
        Path q4 = TestModels.convertTinyStories(TensorType.Q4, dir);
        ConvertInspectCliTest.Run run = ConvertInspectCliTest.run("eval", "--reference", f32.toString(), "--model",
                q4.toString(), "--text", storyText().toString(), "--max-tokens", "600", "--threads", "2");
        assertEquals(0, run.exit(), run.err());
        assertTrue(run.out().contains("model            tinystories-q4.zse (KV cache f32, "), run.out());
        assertTrue(run.out().contains("tokens           600 (2 windows of at most 512)"), run.out());
        for (String row : new String[]{"KL mean", "KL p99", "KL max", "top-1 agreement", "perplexity"}) {
            assertTrue(run.out().contains(row), run.out());
        }
    }

    @Test
    void jsonWithAQuantizedKvCache() throws Exception {
        Path f32 = TestModels.convertTinyStories(TensorType.F32, dir);
        ConvertInspectCliTest.Run run = ConvertInspectCliTest.run("eval", "--reference", f32.toString(), "--model",
                f32.toString(), "--kv-cache", "int8", "--text", storyText().toString(), "--max-tokens", "300", "--json");
        assertEquals(0, run.exit(), run.err());
        JsonNode report = new ObjectMapper().readTree(run.out());
        assertEquals("int8", report.get("kv_cache").asText());
        assertEquals(300, report.get("tokens").asInt());
        assertTrue(report.get("kl_mean").asDouble() > 0 && report.get("kl_mean").asDouble() < 1e-3, run.out());
        assertTrue(report.get("kl_max").asDouble() >= report.get("kl_p99").asDouble(), run.out());
        assertTrue(report.get("top1_agreement").asDouble() > 0.95, run.out());
        assertTrue(report.get("model_perplexity").asDouble() > 1, run.out());
    }

    /** The native kernels' int8 activations against the vector kernels' float ones, on the same Q8 file. */
    @Test
    void referenceKernelsMeasureWhatInt8ActivationsCost() throws Exception {
        Path q8 = TestModels.convertTinyStories(TensorType.Q8, dir);
        ConvertInspectCliTest.Run run = ConvertInspectCliTest.run("eval", "--reference", q8.toString(), "--model",
                q8.toString(), "--reference-kernels", "vector", "--text", storyText().toString(), "--max-tokens", "300",
                "--json");
        assertEquals(0, run.exit(), run.err());
        JsonNode report = new ObjectMapper().readTree(run.out());
        assertEquals("vector", report.get("reference_kernels").asText());
        if (report.get("kernels").asText().equals("native")) {
            assertTrue(report.get("kl_mean").asDouble() > 0 && report.get("kl_mean").asDouble() < 1e-3, run.out());
            assertTrue(report.get("top1_agreement").asDouble() > 0.95, run.out());
        } else {
            assertEquals(0.0, report.get("kl_max").asDouble(), run.out());
        }
    }

    @Test
    void aShortTextIsOneWindow() throws Exception {
        Path f32 = TestModels.convertTinyStories(TensorType.F32, dir);
        ConvertInspectCliTest.Run run = ConvertInspectCliTest.run("eval", "--reference", f32.toString(), "--model",
                f32.toString(), "--text", storyText().toString(), "--max-tokens", "40");
        assertEquals(0, run.exit(), run.err());
        assertTrue(run.out().contains("tokens           40 (1 window of at most 512)"), run.out());
        assertTrue(run.out().contains("top-1 agreement  100.00 %"), run.out());
    }

    @Test
    void badInputIsOneLine() throws Exception {
        Path f32 = TestModels.convertTinyStories(TensorType.F32, dir);
        ConvertInspectCliTest.Run kv = ConvertInspectCliTest.run("eval", "--reference", f32.toString(), "--model",
                f32.toString(), "--kv-cache", "q4", "--text", storyText().toString());
        assertEquals(1, kv.exit());
        assertEquals("zse eval: unknown KV cache type 'q4' (use f32, f16 or int8)\n", kv.err());

        ConvertInspectCliTest.Run text = ConvertInspectCliTest.run("eval", "--reference", f32.toString(), "--model",
                f32.toString(), "--text", dir.resolve("none.txt").toString());
        assertEquals(1, text.exit());
        assertEquals("zse eval: no such file: " + dir.resolve("none.txt") + "\n", text.err());

        ConvertInspectCliTest.Run tokens = ConvertInspectCliTest.run("eval", "--reference", f32.toString(), "--model",
                f32.toString(), "--text", storyText().toString(), "--max-tokens", "0");
        assertEquals(1, tokens.exit());
        assertEquals("zse eval: max tokens must be at least 1, not 0\n", tokens.err());
    }

    /** A text that is not UTF-8, or a directory, fails naming the file (the JDK's own messages name neither). */
    @Test
    void aTextThatCannotBeReadIsNamed() throws Exception {
        Path f32 = TestModels.convertTinyStories(TensorType.F32, dir);
        Path latin1 = Files.write(dir.resolve("latin1.txt"), "Once upon a time, a caf\u00e9.".getBytes(
                StandardCharsets.ISO_8859_1));
        ConvertInspectCliTest.Run notUtf8 = ConvertInspectCliTest.run("eval", "--reference", f32.toString(), "--model",
                f32.toString(), "--text", latin1.toString());
        assertEquals(1, notUtf8.exit());
        assertEquals("zse eval: " + latin1 + " is not UTF-8 text (invalid byte at offset 23)\n", notUtf8.err());

        Path folder = Files.createDirectory(dir.resolve("texts"));
        ConvertInspectCliTest.Run directory = ConvertInspectCliTest.run("eval", "--reference", f32.toString(),
                "--model", f32.toString(), "--text", folder.toString());
        assertEquals(1, directory.exit());
        assertEquals("zse eval: " + folder + ": Is a directory\n", directory.err());
    }
}
