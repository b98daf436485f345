package io.zse.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.zse.TestModels;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code zse convert} of the real TinyStories checkpoint with one file made wrong, as a user's download or edit might
 * leave it: refused at convert time in one line that names the file and what is wrong, and no .zse is written.
 */
class ConvertRefusesBadInputCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    /** A copy of TinyStories whose config.json {@code edit} changed. */
    private Path checkpointWithConfig(Consumer<ObjectNode> edit) throws IOException {
        Path copy = copyOfTinyStories();
        ObjectNode config = (ObjectNode) JSON.readTree(copy.resolve("config.json").toFile());
        edit.accept(config);
        Files.writeString(copy.resolve("config.json"), config.toPrettyString());
        return copy;
    }

    private Path copyOfTinyStories() throws IOException {
        return copyOfTinyStories(dir);
    }

    /** A copy of the TinyStories checkpoint in a new folder under {@code dir}, to change a file of. */
    static Path copyOfTinyStories(Path dir) throws IOException {
        Path copy = Files.createTempDirectory(dir, "tinystories");
        try (Stream<Path> files = Files.list(TestModels.tinyStories())) {
            for (Path f : files.toList()) {
                Files.copy(f, copy.resolve(f.getFileName()));
            }
        }
        return copy;
    }

    /** Converts {@code checkpoint} and returns the one-line error, checking that nothing was written. */
    private String refusal(Path checkpoint) {
        Path out = dir.resolve("out.zse");
        ConvertInspectCliTest.Run run = ConvertInspectCliTest.run("convert", checkpoint.toString(), "-o",
                out.toString());
        assertEquals(1, run.exit(), run.out());
        assertEquals(1, run.err().lines().count(), run.err());
        assertFalse(Files.exists(out), "no .zse is written");
        return run.err().strip();
    }

    private void converts(Path checkpoint) {
        ConvertInspectCliTest.Run run = ConvertInspectCliTest.run("convert", checkpoint.toString(), "-o",
                dir.resolve("ok.zse").toString(), "--force");
        assertEquals(0, run.exit(), run.err());
    }

    /**
     * A field of the wrong JSON type is refused by name, value and expected type (before, "x" and "abc" became the
     * defaults and "yes" became false); what transformers accepts still converts: an integer where a float is
     * expected, null for an optional id.
     */
    @Test
    void aConfigFieldOfTheWrongTypeIsRefusedByNameValueAndType() throws IOException {
        assertEquals("zse convert: config.json: rms_norm_eps is \"x\", expected a number",
                refusal(checkpointWithConfig(c -> c.put("rms_norm_eps", "x"))));
        assertEquals("zse convert: config.json: rope_theta is \"abc\", expected a number",
                refusal(checkpointWithConfig(c -> c.put("rope_theta", "abc"))));
        assertEquals("zse convert: config.json: tie_word_embeddings is \"yes\", expected true or false",
                refusal(checkpointWithConfig(c -> c.put("tie_word_embeddings", "yes"))));
        assertEquals("zse convert: config.json: hidden_size is 128.0, expected an integer",
                refusal(checkpointWithConfig(c -> c.put("hidden_size", 128.0))));
        converts(checkpointWithConfig(c -> c.put("rope_theta", 10000).putNull("pad_token_id")
                .putNull("rope_scaling").putNull("head_dim")));
    }

    /**
     * A BOS or EOS id outside the vocabulary (at or past vocab_size, or negative; EOS may be a list, and may come from
     * generation_config.json) is refused by field, id and vocabulary size; before, it was kept in the .zse.
     */
    @Test
    void bosAndEosIdsOutsideTheVocabularyAreRefused() throws IOException {
        assertEquals("zse convert: config.json: eos_token_id holds 2048, outside the vocabulary of 2048 tokens "
                + "(vocab_size)", refusal(checkpointWithConfig(c -> c.put("eos_token_id", 2048))));
        assertEquals("zse convert: config.json: bos_token_id holds -1, outside the vocabulary of 2048 tokens "
                + "(vocab_size)", refusal(checkpointWithConfig(c -> c.put("bos_token_id", -1))));
        assertEquals("zse convert: config.json: eos_token_id holds 5000, outside the vocabulary of 2048 tokens "
                + "(vocab_size)", refusal(checkpointWithConfig(c -> c.putArray("eos_token_id").add(2).add(5000))));
        Path generation = copyOfTinyStories();
        Files.writeString(generation.resolve("generation_config.json"), "{\"eos_token_id\": [2, 99999]}");
        assertEquals("zse convert: generation_config.json: eos_token_id holds 99999, outside the vocabulary of 2048 "
                + "tokens (vocab_size)", refusal(generation));
        converts(checkpointWithConfig(c -> c.put("bos_token_id", 0).putArray("eos_token_id").add(2).add(2047)));
    }

    /**
     * A side file convert copies into the .zse (or reads) that is not valid JSON is refused at convert time, naming
     * the file and the line and column where parsing stopped; before, a broken tokenizer_config.json was copied and
     * failed only at serve.
     */
    @Test
    void aSideFileThatIsNotValidJsonIsRefusedWithItsPosition() throws IOException {
        for (String file : new String[]{"tokenizer_config.json", "special_tokens_map.json", "generation_config.json",
                "tokenizer.json"}) {
            Path copy = copyOfTinyStories();
            Path broken = copy.resolve(file);
            String text = Files.readString(broken);
            // a comma doubled after the first line: "{\n  \"x\": ...,," as a hand edit might leave it
            int comma = text.indexOf(',');
            Files.writeString(broken, text.substring(0, comma) + ",," + text.substring(comma + 1));
            int line = (int) text.substring(0, comma).lines().count();
            String error = refusal(copy);
            assertTrue(error.startsWith("zse convert: " + broken + " is not valid JSON: Unexpected character (','"),
                    error);
            assertTrue(error.matches(".* at line " + line + ", column \\d+"), error);
        }
        Path trailing = copyOfTinyStories();
        Path config = trailing.resolve("tokenizer_config.json");
        long lines = Files.readString(config).strip().lines().count();
        Files.writeString(config, Files.readString(config).strip() + "\n{}"); // two files run together
        assertEquals("zse convert: " + config + " is not valid JSON: more follows the object at line " + (lines + 1)
                + ", column 1", refusal(trailing));
        Path bom = copyOfTinyStories();
        Path withBom = bom.resolve("tokenizer_config.json");
        Files.writeString(withBom, "\uFEFF" + Files.readString(withBom)); // which serve's reader refuses
        assertEquals("zse convert: " + withBom + " is not valid JSON: a UTF-8 byte order mark at line 1, column 1",
                refusal(bom));
        Path list = copyOfTinyStories();
        Files.writeString(list.resolve("special_tokens_map.json"), "[]");
        assertEquals("zse convert: " + list.resolve("special_tokens_map.json") + " is not a JSON object",
                refusal(list));
    }

    /** A copy of a real zse-engine file (TinyStories, int8) from the test resources. */
    private Path zseEngineFile() throws IOException {
        String name = "tinystories-656k.zse-engine-int8.zse";
        try (InputStream in = getClass().getResourceAsStream("/zse-engine/" + name + ".gz")) {
            return Files.write(dir.resolve(name), new GZIPInputStream(in).readAllBytes());
        }
    }

    /**
     * One byte of the TOKENIZER entry's type flipped: an unknown type is refused by its place and value, and a type
     * the engine defines but never writes (KERNELS) leaves the file without the tokenizer its header declares, which
     * is refused too; before, both converted into a .zse without a tokenizer.
     */
    @Test
    void aZseEngineFileWithADamagedSectionTypeIsRefused() throws IOException {
        Path file = zseEngineFile();
        byte[] bytes = Files.readAllBytes(file);
        int tokenizerType = 64 + 32; // the table's second entry: CONFIG, TOKENIZER, WEIGHT_DATA, WEIGHT_INDEX
        assertEquals(1, bytes[tokenizerType]);
        bytes[tokenizerType] ^= 4;
        Files.write(file, bytes);
        assertEquals("zse convert: " + file + ": section table entry 1 at byte 96 has unknown type 5 (known: "
                + "0 CONFIG, 1 TOKENIZER, 2 WEIGHT_INDEX, 3 WEIGHT_DATA, 4 KERNELS)", refusal(file));
        bytes[tokenizerType] ^= 1;
        Files.write(file, bytes);
        assertEquals("zse convert: " + file + ": has no section of type 1 (TOKENIZER), which its header flags 0x5 "
                + "declare (HAS_TOKENIZER)", refusal(file));
    }
}
