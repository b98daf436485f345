package io.zse.tokenizer;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.GZIPInputStream;

/** The tokenizers the tests use, loaded once: from test resources, or from ../shared for those not committed. */
public final class TestTokenizers {
    static final Path SHARED = Path.of("..", "shared");
    private static final Map<String, Tokenizer> LOADED = new ConcurrentHashMap<>();

    private TestTokenizers() {
    }

    /** A real tokenizer by folder name, or a synthetic "variant-..." one embedded in its golden file. */
    static Tokenizer get(String name) {
        return LOADED.computeIfAbsent(name, n -> n.startsWith("variant-") ? variant(n) : Tokenizer.fromJson(json(n)));
    }

    private static Tokenizer variant(String name) {
        try (InputStream in = resource("/golden/tokenizers/" + name + ".json")) {
            return Tokenizer.fromJson(new com.fasterxml.jackson.databind.ObjectMapper().readTree(in)
                    .get("tokenizer_json").toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The tokenizer.json bytes; skips the calling test when the file is only in ../shared and that is absent. */
    public static byte[] json(String name) {
        try {
            for (String resource : new String[]{"/tokenizers/" + name + "/tokenizer.json",
                    "/tokenizers/" + name + "/tokenizer.json.gz"}) {
                try (InputStream in = TestTokenizers.class.getResourceAsStream(resource)) {
                    if (in != null) {
                        return resource.endsWith(".gz") ? new GZIPInputStream(in).readAllBytes() : in.readAllBytes();
                    }
                }
            }
            Path shared = SHARED.resolve("tokenizers").resolve(name).resolve("tokenizer.json");
            Assumptions.assumeTrue(Files.isRegularFile(shared), "not available: " + shared);
            return Files.readAllBytes(shared);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static InputStream resource(String path) {
        InputStream in = TestTokenizers.class.getResourceAsStream(path);
        if (in == null) {
            throw new IllegalStateException("missing test resource " + path);
        }
        return in;
    }
}
