package io.zse.convert;

import io.zse.TestModels;
import io.zse.convert.gguf.GgufFixtures;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import io.zse.format.ZseLayout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What serve/generate/bench/eval accept: the file kinds told apart by content, and the cache keyed by content. */
class ModelImportTest {
    @TempDir
    Path dir;

    /** Collects the notes a conversion reports. */
    static final class Notes implements ModelConverter.Progress {
        final List<String> notes = new ArrayList<>();

        @Override
        public void advanced(String tensor, long done, long total) {
        }

        @Override
        public void note(String message) {
            notes.add(message);
        }
    }

    @Test
    void kindsAreToldApartByTheirFirstBytes() throws IOException {
        Path gguf = GgufFixtures.gguf("tinystories-656k-q8_0", dir);
        Path renamed = Files.copy(gguf, dir.resolve("model.bin"));
        assertEquals(ModelImport.Kind.GGUF, ModelImport.kindOf(renamed));
        assertEquals(ModelImport.Kind.HF_DIRECTORY, ModelImport.kindOf(TestModels.tinyStories()));
        assertEquals(ModelImport.Kind.ZSE, ModelImport.kindOf(TestModels.convertTinyStories(TensorType.Q8, dir)));
        Path text = Files.writeString(dir.resolve("notes.zse"), "not a model");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ModelImport.kindOf(text));
        assertTrue(e.getMessage().contains("is not a .zse, GGUF or zse-engine file"), e.getMessage());
        assertThrows(java.nio.file.NoSuchFileException.class, () -> ModelImport.kindOf(dir.resolve("missing.gguf")));
    }

    @Test
    void aGgufIsConvertedOnceIntoTheCacheAndReused() throws IOException {
        Path gguf = GgufFixtures.gguf("tinystories-656k-q8_0", dir);
        Path cache = dir.resolve("cache");
        Notes first = new Notes();
        Path converted = ModelImport.servable(gguf, cache, first);
        assertTrue(converted.getParent().equals(cache) && converted.getFileName().toString()
                .matches("tinystories-656k-q8_0-[0-9a-f]{16}\\.zse"), converted.toString());
        assertTrue(first.notes.getFirst().startsWith("converting " + gguf), first.notes.toString());
        try (ZseFile file = ZseFile.open(converted)) {
            assertEquals(TensorType.Q8, file.tensor("model.layers.0.mlp.up_proj.weight").type());
        }
        FileTime written = Files.getLastModifiedTime(converted);
        Notes second = new Notes();
        assertEquals(converted, ModelImport.servable(gguf, cache, second));
        assertTrue(second.notes.getFirst().startsWith("using " + converted), second.notes.toString());
        assertEquals(written, Files.getLastModifiedTime(converted), "not converted again");

        // Same name, other content: another key, so a replaced file is never served from a stale conversion.
        byte[] bytes = Files.readAllBytes(gguf);
        bytes[bytes.length - 1] ^= 1;
        Files.write(gguf, bytes);
        Path again = ModelImport.servable(gguf, cache, new Notes());
        assertNotEquals(converted, again);
        try (Stream<Path> files = Files.list(cache)) {
            assertEquals(2, files.filter(p -> p.toString().endsWith(".zse")).count(), "no partial file left");
        }
    }

    @Test
    void eachLayoutHasItsOwnCachedConversionAndAutoIsWhatConvertWritesByDefault() throws IOException {
        Path gguf = GgufFixtures.gguf("tinystories-656k-q8_0", dir);
        Path cache = dir.resolve("cache");
        Path rowGroups = ModelImport.servable(gguf, cache, false, new Notes());
        Path interleaved = ModelImport.servable(gguf, cache, true, new Notes());
        assertNotEquals(rowGroups, interleaved, "the layout is part of the cache key");
        String weight = "model.layers.0.mlp.up_proj.weight";
        try (ZseFile r = ZseFile.open(rowGroups); ZseFile i = ZseFile.open(interleaved)) {
            assertEquals(ZseLayout.LAYOUT_ROW_GROUPS, r.tensor(weight).info().layout());
            assertEquals(ZseLayout.LAYOUT_INTERLEAVED_16, i.tensor(weight).info().layout());
            assertEquals(TensorType.Q8, i.tensor(weight).type());
        }
        Notes auto = new Notes();
        assertEquals(AutoLayout.interleaved() ? interleaved : rowGroups, ModelImport.servable(gguf, cache, auto));
        assertTrue(auto.notes.getFirst().startsWith("using "), "auto reuses its layout's conversion: " + auto.notes);

        Path checkpoint = ModelImport.servable(TestModels.tinyStories(), cache, true, new Notes());
        try (ZseFile file = ZseFile.open(checkpoint)) {
            assertEquals(ZseLayout.LAYOUT_INTERLEAVED_16, file.tensor(weight).info().layout());
        }
    }

    @Test
    void aZseIsServedAsItIsAndACheckpointDirectoryIsConvertedToQ8() throws IOException {
        Path zse = TestModels.convertTinyStories(TensorType.F32, dir);
        assertEquals(zse, ModelImport.servable(zse, dir.resolve("cache"), new Notes()));
        Path converted = ModelImport.servable(TestModels.tinyStories(), dir.resolve("cache"), new Notes());
        try (ZseFile file = ZseFile.open(converted)) {
            assertEquals(TensorType.Q8, file.tensor("model.layers.0.mlp.up_proj.weight").type());
        }
    }
}
