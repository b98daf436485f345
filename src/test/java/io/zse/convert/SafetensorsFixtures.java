package io.zse.convert;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** Shared test data: the real TinyStories checkpoint and hand-made safetensors files. */
final class SafetensorsFixtures {
    static final Path TINYSTORIES = Path.of("src/test/resources/models/tinystories-656k");

    private SafetensorsFixtures() {
    }

    /** A file with exactly this header text followed by {@code dataBytes} zero bytes. */
    static Path rawFile(Path dir, String name, String headerJson, int dataBytes) throws IOException {
        byte[] header = headerJson.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(8 + header.length + dataBytes).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(header.length).put(header);
        Path file = dir.resolve(name);
        Files.write(file, b.array());
        return file;
    }

    /** Writes a file of tensors whose element i holds {@code base + i}. */
    static Path countingFile(Path file, List<SafetensorsTensor> tensors, float base) throws IOException {
        try (SafetensorsWriter w = SafetensorsWriter.create(file, tensors, Map.of("format", "pt"))) {
            for (SafetensorsTensor t : tensors) {
                float[] values = new float[(int) t.elementCount()];
                for (int i = 0; i < values.length; i++) {
                    values[i] = base + i;
                }
                w.writeFloats(values, 0, values.length);
            }
        }
        return file;
    }
}
