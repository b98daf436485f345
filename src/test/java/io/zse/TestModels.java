package io.zse;

import io.zse.convert.ConvertOptions;
import io.zse.convert.ModelConverter;
import io.zse.format.TensorInfo;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.stream.Stream;

/** The real checkpoints bundled as test resources, and .zse files converted from them. */
public final class TestModels {
    private TestModels() {
    }

    /** The real TinyStories-656K checkpoint (Hugging Face layout; see its SOURCE.md). */
    public static Path tinyStories() {
        try {
            return Path.of(TestModels.class.getResource("/models/tinystories-656k/config.json").toURI()).getParent();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Converts TinyStories to {@code type} into {@code dir}. */
    public static Path convertTinyStories(TensorType type, Path dir) {
        return convert(tinyStories(), ConvertOptions.of(type), dir.resolve("tinystories-" + type.name().toLowerCase() + ".zse"));
    }

    public static Path convert(Path hfDir, ConvertOptions options, Path out) {
        try {
            ModelConverter.convert(hfDir, out, options, ModelConverter.Progress.NONE);
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Flips one byte in the middle of {@code tensor}'s data, in place: the file still opens (metadata checksums hold),
     * only a full verification notices.
     */
    public static void flipByteInTensor(Path zse, String tensor) throws IOException {
        long at;
        try (ZseFile file = ZseFile.open(zse)) {
            TensorInfo t = file.tensor(tensor).info();
            at = t.dataOffset() + t.dataLength() / 2;
        }
        try (FileChannel channel = FileChannel.open(zse, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            channel.read(b, at);
            b.put(0, (byte) (b.get(0) ^ 0x10)).rewind();
            channel.write(b, at);
        }
    }

    /** Copies a checkpoint directory so a test can modify it. */
    public static Path copyOf(Path hfDir, Path into) throws IOException {
        Files.createDirectories(into);
        try (Stream<Path> files = Files.list(hfDir)) {
            for (Path f : files.toList()) {
                Files.copy(f, into.resolve(f.getFileName()));
            }
        }
        return into;
    }
}
