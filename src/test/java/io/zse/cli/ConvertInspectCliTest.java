package io.zse.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.TestModels;
import io.zse.format.ZseFile;
import io.zse.format.ZseLayout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code zse convert} and {@code zse inspect} as a user runs them: exit codes, output, one-line errors. */
class ConvertInspectCliTest {
    @TempDir
    Path dir;

    record Run(int exit, String out, String err) {
    }

    static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = ZseCommand.execute(new PrintWriter(out), new PrintWriter(err), args);
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    void convertThenInspect() throws Exception {
        Path zse = dir.resolve("tiny.zse");
        Run convert = run("convert", TestModels.tinyStories().toString(), "-o", zse.toString(), "--quant", "q4",
                "--group-size", "64");
        assertEquals(0, convert.exit, convert.err);
        assertTrue(convert.out.startsWith("wrote " + zse), convert.out);
        assertTrue(convert.err.contains("convert: 100%"), "plain progress lines when not on a terminal: " + convert.err);

        Run text = run("inspect", zse.toString(), "--verify");
        assertEquals(0, text.exit, text.err);
        assertTrue(text.out.matches("(?s).*model\\.layers\\.1\\.mlp\\.down_proj\\.weight +Q4/64 +\\[128,384\\] +.*"), text.out);
        assertTrue(text.out.contains("checksums  metadata ok; tensors ok"), text.out);

        Run json = run("inspect", zse.toString(), "--json");
        JsonNode report = new ObjectMapper().readTree(json.out);
        assertEquals("llama", report.at("/config/architecture").asText());
        assertEquals(20, report.at("/totals/tensors").asInt());
        assertEquals(2048 * 128 + 2 * (128 * 128 * 2 + 64 * 128 * 2 + 3 * 128 * 384 + 2 * 128) + 128,
                report.at("/totals/parameters").asLong());
        assertEquals("not checked (use --verify)", report.at("/checksums/tensors").asText());
    }

    @Test
    void layoutIsChosenByFlagAndRecordedPerTensor() throws Exception {
        for (String layout : new String[]{"interleaved", "row-groups"}) {
            Path zse = dir.resolve(layout + ".zse");
            Run convert = run("convert", TestModels.tinyStories().toString(), "-o", zse.toString(), "--quant", "q4",
                    "--layout", layout);
            assertEquals(0, convert.exit, convert.err);
            try (ZseFile file = ZseFile.open(zse)) {
                int expected = layout.equals("interleaved") ? ZseLayout.LAYOUT_INTERLEAVED_16 : ZseLayout.LAYOUT_ROW_GROUPS;
                assertEquals(expected, file.tensors().stream().filter(t -> t.rank() == 2).findFirst().orElseThrow().layout());
                assertTrue(file.tensors().stream().filter(t -> t.rank() == 1)
                        .allMatch(t -> t.layout() == ZseLayout.LAYOUT_ROW_GROUPS), "norms stay row-groups");
            }
        }
        Run bad = run("convert", TestModels.tinyStories().toString(), "-o", dir.resolve("y.zse").toString(),
                "--layout", "columns");
        assertEquals(1, bad.exit);
        assertTrue(bad.err.contains("--layout columns is not one of auto, interleaved, row-groups"), bad.err);
    }

    @Test
    void ggufImportTakesTheLayoutFlag() throws Exception {
        Path gguf = io.zse.convert.gguf.GgufFixtures.gguf("tinystories-656k-q4_0", dir);
        for (String layout : new String[]{"interleaved", "row-groups"}) {
            Path zse = dir.resolve("gguf-" + layout + ".zse");
            Run convert = run("convert", gguf.toString(), "-o", zse.toString(), "--layout", layout);
            assertEquals(0, convert.exit, convert.err);
            try (ZseFile file = ZseFile.open(zse)) {
                int expected = layout.equals("interleaved") ? ZseLayout.LAYOUT_INTERLEAVED_16 : ZseLayout.LAYOUT_ROW_GROUPS;
                assertEquals(expected, file.tensor("model.layers.0.mlp.down_proj.weight").info().layout());
            }
        }
        Run quant = run("convert", gguf.toString(), "-o", dir.resolve("q.zse").toString(), "--quant", "q8");
        assertEquals(1, quant.exit);
        assertTrue(quant.err.contains("keeps the types it was quantized with"), quant.err);
    }

    /** A directory as the output, or the input as the output, is refused before any work, and nothing is left. */
    @Test
    void anOutputThatIsADirectoryOrTheInputIsRefused() throws Exception {
        Path directory = Files.createDirectory(dir.resolve("out"));
        Run toDirectory = run("convert", TestModels.tinyStories().toString(), "-o", directory.toString(), "--force");
        assertEquals(1, toDirectory.exit);
        assertEquals("zse convert: " + directory + " is a directory: the output must be a file\n", toDirectory.err);

        Path gguf = io.zse.convert.gguf.GgufFixtures.gguf("tinystories-656k-q4_0", dir);
        byte[] before = Files.readAllBytes(gguf);
        Run overInput = run("convert", gguf.toString(), "-o", gguf.toString(), "--force");
        assertEquals(1, overInput.exit);
        assertEquals("zse convert: " + gguf + " is the input file: write the .zse elsewhere\n", overInput.err);
        assertTrue(java.util.Arrays.equals(before, Files.readAllBytes(gguf)), "the input is untouched");
        try (var files = Files.list(dir)) {
            assertEquals(List.of(), files.filter(f -> f.getFileName().toString().endsWith(".partial")).toList());
        }
    }

    @Test
    void failuresExitNonZeroWithOneLine() throws Exception {
        Run missing = run("inspect", dir.resolve("none.zse").toString());
        assertEquals(1, missing.exit);
        assertEquals("zse inspect: " + dir.resolve("none.zse") + ": no such file\n", missing.err);

        Path junk = Files.writeString(dir.resolve("junk.zse"), "hello");
        Run bad = run("inspect", junk.toString());
        assertEquals(1, bad.exit);
        assertEquals(1, bad.err.lines().count(), bad.err);
        assertTrue(bad.err.contains("shorter than the 64-byte preamble"), bad.err);

        Run debug = run("inspect", junk.toString(), "--debug");
        assertTrue(debug.err.contains("\tat io.zse.format.ZseFile"), "--debug prints the stack trace");

        Run badQuant = run("convert", TestModels.tinyStories().toString(), "-o", dir.resolve("x.zse").toString(),
                "--quant", "q3");
        assertEquals(1, badQuant.exit);
        assertTrue(badQuant.err.startsWith("zse convert: unknown tensor type 'q3'"), badQuant.err);
    }

    /** F16 would store a weight past ±65504 as an infinity (and generate would print nonsense): refused, named. */
    @Test
    void f16RefusesAWeightBeyondItsRangeAndNamesIt() throws Exception {
        Path checkpoint = TestModels.copyOf(TestModels.tinyStories(), dir.resolve("large-weight"));
        setWeight(checkpoint.resolve("model.safetensors"), "model.layers.0.mlp.down_proj.weight", 5, 70000f);
        Path zse = dir.resolve("f16.zse");
        Run f16 = run("convert", checkpoint.toString(), "-o", zse.toString(), "--quant", "f16");
        assertEquals(1, f16.exit, f16.err);
        String refusal = "zse convert: tensor model.layers.0.mlp.down_proj.weight holds 70000.0 at element 5, beyond "
                + "the F16 range (±65504): convert it to bf16 or f32 instead\n";
        assertTrue(f16.err.endsWith(refusal), f16.err); // after the progress lines
        assertTrue(Files.notExists(zse), "no output");
        Run bf16 = run("convert", checkpoint.toString(), "-o", zse.toString(), "--quant", "bf16");
        assertEquals(0, bf16.exit, bf16.err);
    }

    /** Overwrites element {@code index} of an F32 tensor of a safetensors file. */
    private static void setWeight(Path safetensors, String tensor, int index, float value) throws Exception {
        try (FileChannel file = FileChannel.open(safetensors, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer length = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
            file.read(length, 0);
            ByteBuffer header = ByteBuffer.allocate((int) length.getLong(0));
            file.read(header, 8);
            JsonNode entry = new ObjectMapper().readTree(header.array()).get(tensor);
            assertEquals("F32", entry.get("dtype").asText());
            long at = 8 + header.capacity() + entry.get("data_offsets").get(0).asLong() + (long) index * Float.BYTES;
            file.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putFloat(0, value), at);
        }
    }
}
