package io.zse.tokenizer;

import io.zse.format.SectionKind;
import io.zse.format.ZseFile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;

/** Where a tokenizer comes from: a {@code tokenizer.json}, or the tokenizer sections of a {@code .zse} model file. */
public final class TokenizerSource {
    private TokenizerSource() {
    }

    /** Loads {@code path}: a tokenizer.json, a .zse file, or a checkpoint's directory holding a tokenizer.json. */
    public static Tokenizer load(Path path) throws IOException {
        if (Files.isDirectory(path)) {
            Path json = path.resolve("tokenizer.json");
            if (!Files.isRegularFile(json)) {
                throw new IllegalArgumentException(path + " is a directory without a tokenizer.json: give a"
                        + " tokenizer.json or .zse file");
            }
            return Tokenizer.load(json);
        }
        if (!Files.isRegularFile(path)) {
            throw new NoSuchFileException(path.toString(), null, "no such file");
        }
        String name = String.valueOf(path.getFileName());
        if (name.endsWith(".zse")) {
            try (ZseFile zse = ZseFile.open(path)) {
                return fromZse(zse);
            }
        }
        if (!name.endsWith(".json")) {
            throw new IllegalArgumentException("expected a tokenizer.json or .zse file: " + path);
        }
        return Tokenizer.load(path);
    }

    /** The compiled form when the file has one this reader understands, else the original tokenizer.json. */
    public static Tokenizer fromZse(ZseFile zse) throws IOException {
        Optional<byte[]> compiled = zse.sectionBytes(SectionKind.TOKENIZER_COMPILED);
        if (compiled.isPresent()) {
            try {
                return Tokenizer.fromBinary(compiled.get());
            } catch (IllegalArgumentException unreadable) {
                // Written by another zse version: the JSON below is always authoritative.
            }
        }
        byte[] json = zse.sectionBytes(SectionKind.TOKENIZER).orElseThrow(() ->
                new IllegalArgumentException(zse.path() + ": has no tokenizer section"));
        return Tokenizer.fromJson(json);
    }
}
