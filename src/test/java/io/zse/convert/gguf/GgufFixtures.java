package io.zse.convert.gguf;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;

/** The GGUF files llama.cpp wrote for the tests (src/test/resources/gguf, made by tools/reference/gguf_fixtures.py). */
public final class GgufFixtures {
    private GgufFixtures() {
    }

    /** Decompresses {@code <name>.gguf.gz} into {@code dir} and returns the .gguf path. */
    public static Path gguf(String name, Path dir) {
        Path out = dir.resolve(name + ".gguf");
        if (Files.exists(out)) {
            return out;
        }
        try (InputStream in = GgufFixtures.class.getResourceAsStream("/gguf/" + name + ".gguf.gz")) {
            if (in == null) {
                throw new IllegalArgumentException("no fixture gguf/" + name + ".gguf.gz");
            }
            Files.write(out, new GZIPInputStream(in).readAllBytes());
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
