package io.zse.tokenizer;

import java.nio.file.Path;

/** Where the command line finds a tokenizer: a {@code tokenizer.json}, or (later) a {@code .zse} model file. */
public final class TokenizerSource {
    private TokenizerSource() {
    }

    public static Tokenizer load(Path path) {
        String name = path.getFileName() == null ? "" : path.getFileName().toString();
        if (name.endsWith(".zse")) {
            throw new UnsupportedOperationException(
                    "reading tokenizers from .zse files is wired in by the format package");
        }
        if (!name.endsWith(".json")) {
            throw new IllegalArgumentException("expected a tokenizer.json or .zse file: " + path);
        }
        if (!java.nio.file.Files.isRegularFile(path)) {
            throw new IllegalArgumentException("no such file: " + path);
        }
        return Tokenizer.load(path);
    }
}
