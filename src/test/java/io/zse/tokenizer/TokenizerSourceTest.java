package io.zse.tokenizer;

import io.zse.TestModels;
import io.zse.format.SectionKind;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The tokenizer a .zse file carries: its compiled form encodes and decodes exactly as the original JSON. */
class TokenizerSourceTest {
    @TempDir
    Path dir;

    @Test
    void compiledSectionMatchesTheJson() throws IOException {
        Path zse = TestModels.convertTinyStories(TensorType.Q8, dir);
        Tokenizer json = Tokenizer.load(TestModels.tinyStories().resolve("tokenizer.json"));
        try (ZseFile file = ZseFile.open(zse)) {
            assertTrue(file.section(SectionKind.TOKENIZER_COMPILED).isPresent());
            Tokenizer fromZse = TokenizerSource.fromZse(file);
            String text = "Once upon a time, there was a dragon named 🐉 Zed who loved 123 apples.";
            int[] ids = json.encode(text, true);
            assertArrayEquals(ids, fromZse.encode(text, true));
            assertEquals(json.decode(ids, false), fromZse.decode(ids, false));
        }
    }
}
