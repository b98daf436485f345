package io.zse.convert;

import io.zse.convert.gguf.GgufConverter;
import io.zse.convert.zseengine.ZseEngineConverter;
import io.zse.format.TensorType;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

/**
 * What a user may point {@code convert}, {@code serve}, {@code generate}, {@code bench} and {@code eval} at: a
 * {@code .zse} file (served as it is), a GGUF file, a {@code .zse} written by the Python zse-engine, or a Hugging
 * Face checkpoint directory. The last three are converted once into a cache directory, under a name derived from
 * their content, and reused from there.
 */
public final class ModelImport {
    /** Bumped when a conversion would write different bytes, so stale cache entries are not reused. */
    private static final String CACHE_VERSION = "zse-import-v3-longrope-factor";
    private static final byte[] ZSE_MAGIC = {(byte) 0x89, 'Z', 'S', 'E', '\r', '\n', 0x1A, '\n'};
    private static final byte[] GGUF_MAGIC = {'G', 'G', 'U', 'F'};
    private static final byte[] ZSE_ENGINE_MAGIC = {'Z', 'S', 'E', 1};

    public enum Kind {
        ZSE, GGUF, ZSE_ENGINE, HF_DIRECTORY
    }

    private ModelImport() {
    }

    /** What {@code path} holds, from its first bytes; an error names what it is not. */
    public static Kind kindOf(Path path) throws IOException {
        if (Files.isDirectory(path)) {
            return Kind.HF_DIRECTORY;
        }
        if (!Files.isRegularFile(path)) {
            throw new NoSuchFileException(path.toString(), null, "no such model file or checkpoint directory");
        }
        byte[] head;
        try (InputStream in = Files.newInputStream(path)) {
            head = in.readNBytes(8);
        }
        if (startsWith(head, ZSE_MAGIC)) {
            return Kind.ZSE;
        }
        if (startsWith(head, GGUF_MAGIC)) {
            return Kind.GGUF;
        }
        if (startsWith(head, ZSE_ENGINE_MAGIC)) {
            return Kind.ZSE_ENGINE;
        }
        throw new IllegalArgumentException(path + " is not a .zse, GGUF or zse-engine file, nor a checkpoint directory");
    }

    /** Converts a GGUF or zse-engine file into a .zse file, in layout row-groups throughout. */
    public static ModelConverter.Result convertFile(Path input, Path out, boolean force, ModelConverter.Progress progress)
            throws IOException {
        return convertFile(input, out, force, false, progress);
    }

    /**
     * Converts a GGUF or zse-engine file into a .zse file.
     *
     * @param interleave store a GGUF's 2-D Q8 and Q4 tensors in layout interleaved-16 (refused for zse-engine files)
     */
    public static ModelConverter.Result convertFile(Path input, Path out, boolean force, boolean interleave,
                                                    ModelConverter.Progress progress) throws IOException {
        if (Files.exists(out) && Files.isSameFile(input, out)) {
            throw new IllegalArgumentException(out + " is the input file: write the .zse elsewhere");
        }
        Kind kind = kindOf(input);
        if (interleave && kind == Kind.ZSE_ENGINE) {
            throw new IllegalArgumentException(input + " is a zse-engine file, which is imported in layout row-groups "
                    + "only; --layout interleaved applies to checkpoint directories and GGUF files");
        }
        return switch (kind) {
            case GGUF -> GgufConverter.convert(input, out, force, interleave, progress);
            case ZSE_ENGINE -> ZseEngineConverter.convert(input, out, force, progress);
            case ZSE -> throw new IllegalArgumentException(input + " is already a .zse file of this format");
            case HF_DIRECTORY -> throw new IllegalArgumentException(input + " is a directory, not a file");
        };
    }

    /**
     * The .zse file to map for {@code input}: the input itself when it is one, else its conversion in
     * {@code cacheDir}, made now if it is not there yet (checkpoint directories are converted to Q8), in layout
     * {@link AutoLayout auto} as {@code zse convert} writes by default.
     */
    public static Path servable(Path input, Path cacheDir, ModelConverter.Progress progress) throws IOException {
        // The layout matters only to a conversion: a .zse file or a missing path must not choose the CPU kernels first
        // (that choice logs a line, and a failure is one line).
        Kind kind = kindOf(input);
        return kind == Kind.ZSE ? input : servable(input, kind, cacheDir, AutoLayout.interleaved(), progress);
    }

    /**
     * As {@link #servable(Path, Path, ModelConverter.Progress)}, with the layout given: {@code interleave} stores a
     * checkpoint's or a GGUF's Q8 and Q4 weights in interleaved-16 (zse-engine files are always imported in
     * row-groups). The layout is part of the cache key, so each layout has its own cached conversion.
     */
    public static Path servable(Path input, Path cacheDir, boolean interleave, ModelConverter.Progress progress)
            throws IOException {
        return servable(input, kindOf(input), cacheDir, interleave, progress);
    }

    private static Path servable(Path input, Kind kind, Path cacheDir, boolean interleave,
                                 ModelConverter.Progress progress) throws IOException {
        if (kind == Kind.ZSE) {
            return input;
        }
        boolean interleaved = interleave && kind != Kind.ZSE_ENGINE;
        String stem = input.toAbsolutePath().normalize().getFileName().toString().replaceAll("\\.(gguf|zse)$", "")
                .replaceAll("[^A-Za-z0-9._-]", "_");
        Path target = cacheDir.resolve(stem + "-" + contentKey(input, kind, interleaved) + ".zse");
        if (Files.isRegularFile(target)) {
            progress.note("using " + target + " (converted from " + input + " before)");
            return target;
        }
        Files.createDirectories(cacheDir);
        Path partial = cacheDir.resolve(target.getFileName() + "." + ProcessHandle.current().pid() + ".partial");
        try {
            progress.note("converting " + input + " into " + target + " (once; later starts reuse it)");
            if (kind == Kind.HF_DIRECTORY) {
                ModelConverter.convert(input, partial, new ConvertOptions(TensorType.Q8, TensorType.Q8.defaultGroupSize(),
                        null, null, true, interleaved), progress);
            } else {
                convertFile(input, partial, true, interleaved, progress);
            }
            // atomic, so a second process starting at the same time never maps a half-written file
            Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return target;
        } finally {
            Files.deleteIfExists(partial);
        }
    }

    /** SHA-256 (first 16 hex digits) of the converter version, the layout and every byte the conversion reads. */
    static String contentKey(Path input, Kind kind, boolean interleaved) throws IOException {
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        sha.update(CACHE_VERSION.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        sha.update((interleaved ? "/interleaved-16/" : "/row-groups/").getBytes(java.nio.charset.StandardCharsets.UTF_8));
        List<Path> files;
        if (kind == Kind.HF_DIRECTORY) {
            try (Stream<Path> list = Files.list(input)) {
                files = list.filter(Files::isRegularFile).sorted().toList();
            }
        } else {
            files = List.of(input);
        }
        for (Path file : files) {
            sha.update(file.getFileName().toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
            sha.update((byte) 0);
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ); Arena arena = Arena.ofConfined()) {
                long size = channel.size();
                long chunk = 1L << 30;
                for (long at = 0; at < size; at += chunk) {
                    MemorySegment part = channel.map(FileChannel.MapMode.READ_ONLY, at, Math.min(chunk, size - at), arena);
                    sha.update(part.asByteBuffer());
                }
            }
        }
        return HexFormat.of().formatHex(sha.digest(), 0, 8);
    }

    private static boolean startsWith(byte[] head, byte[] magic) {
        if (head.length < magic.length) {
            return false;
        }
        for (int i = 0; i < magic.length; i++) {
            if (head[i] != magic[i]) {
                return false;
            }
        }
        return true;
    }
}
