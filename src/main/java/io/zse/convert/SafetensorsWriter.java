package io.zse.convert;

import io.zse.format.HalfFloats;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Streams one {@code .safetensors} file. All tensors are declared up front (the header holds their offsets), then
 * their data is written in declaration order, in chunks of any size that stay within the current tensor. Only a
 * fixed-size buffer is held in memory. {@link #close()} fails if any declared tensor did not get all its bytes.
 */
public final class SafetensorsWriter implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int BUFFER_BYTES = 1 << 20;

    private final Path path;
    private final List<SafetensorsTensor> tensors;
    private final FileChannel channel;
    private final ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private int current;
    /** Elements of {@code tensors.get(current)} still to be written. */
    private long remaining;
    private long dataBytesWritten;
    private boolean closed;

    private SafetensorsWriter(Path path, List<SafetensorsTensor> tensors, FileChannel channel) {
        this.path = path;
        this.tensors = tensors;
        this.channel = channel;
        this.current = -1;
        advance();
    }

    /** Creates (or truncates) {@code file} and writes its header; tensor names must be unique. */
    public static SafetensorsWriter create(Path file, List<SafetensorsTensor> tensors, Map<String, String> metadata)
            throws IOException {
        byte[] header = header(file, tensors, metadata);
        FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING);
        SafetensorsWriter writer = new SafetensorsWriter(file, List.copyOf(tensors), channel);
        try {
            writer.buffer.putLong(header.length).put(header);
        } catch (RuntimeException e) {
            channel.close();
            throw e;
        }
        return writer;
    }

    /** The JSON header, space-padded to a multiple of 8 bytes so the data area starts aligned (as the reference writer does). */
    static byte[] header(Path file, List<SafetensorsTensor> tensors, Map<String, String> metadata) throws IOException {
        Map<String, Object> header = new LinkedHashMap<>();
        if (metadata != null && !metadata.isEmpty()) {
            header.put(SafetensorsFile.METADATA_KEY, metadata);
        }
        long offset = 0;
        for (SafetensorsTensor t : tensors) {
            if (t.name().equals(SafetensorsFile.METADATA_KEY) || header.containsKey(t.name())) {
                throw new SafetensorsException(file, "tensor name '" + t.name() + "' is reserved or repeated");
            }
            long end = offset + t.byteSize();
            header.put(t.name(), Map.of("dtype", t.dtype().name(), "shape", t.shapeList(),
                    "data_offsets", List.of(offset, end)));
            offset = end;
        }
        byte[] json;
        try {
            json = JSON.writeValueAsBytes(header);
        } catch (JsonProcessingException e) {
            throw new SafetensorsException(file, "cannot encode header", e);
        }
        int padded = (json.length + 7) & ~7;
        if (padded + 8 > BUFFER_BYTES) {
            throw new SafetensorsException(file, "header of " + padded + " bytes is too large");
        }
        byte[] out = new byte[padded];
        System.arraycopy(json, 0, out, 0, json.length);
        java.util.Arrays.fill(out, json.length, padded, (byte) ' ');
        return out;
    }

    /** The tensor the next write belongs to, or null once every tensor is complete. */
    public SafetensorsTensor currentTensor() {
        return current < tensors.size() ? tensors.get(current) : null;
    }

    /** Writes {@code len} elements of the current tensor, converting to its dtype (BF16 rounds to nearest even). */
    public void writeFloats(float[] values, int offset, int len) throws IOException {
        java.util.Objects.checkFromIndexSize(offset, len, values.length);
        SafetensorsDtype dtype = checkWrite(len);
        int done = 0;
        while (done < len) {
            if (buffer.remaining() < 4) {
                flush();
            }
            int n = Math.min(len - done, buffer.remaining() / dtype.byteSize());
            int from = offset + done;
            switch (dtype) {
                case F32 -> {
                    for (int i = 0; i < n; i++) {
                        buffer.putFloat(values[from + i]);
                    }
                }
                case F16 -> {
                    for (int i = 0; i < n; i++) {
                        buffer.putShort(Float.floatToFloat16(values[from + i]));
                    }
                }
                case BF16 -> {
                    for (int i = 0; i < n; i++) {
                        buffer.putShort(HalfFloats.toBf16(values[from + i]));
                    }
                }
                case U8 -> throw new IllegalArgumentException("tensor '" + currentTensor().name()
                        + "' is U8: write its bytes with writeBytes");
            }
            done += n;
        }
        finishWrite(len);
    }

    /** Writes already-encoded little-endian element bytes of the current tensor (a whole number of elements). */
    public void writeBytes(ByteBuffer bytes) throws IOException {
        SafetensorsTensor t = currentTensor();
        int size = t == null ? 1 : t.dtype().byteSize();
        if (bytes.remaining() % size != 0) {
            throw new IllegalArgumentException(bytes.remaining() + " bytes is not a whole number of "
                    + t.dtype() + " elements of tensor '" + t.name() + "'");
        }
        int elements = bytes.remaining() / size;
        checkWrite(elements);
        while (bytes.hasRemaining()) {
            if (!buffer.hasRemaining()) {
                flush();
            }
            int n = Math.min(bytes.remaining(), buffer.remaining());
            buffer.put(buffer.position(), bytes, bytes.position(), n);
            buffer.position(buffer.position() + n);
            bytes.position(bytes.position() + n);
        }
        finishWrite(elements);
    }

    private SafetensorsDtype checkWrite(long elements) throws IOException {
        if (closed) {
            throw new IllegalStateException(path + ": writer is closed");
        }
        SafetensorsTensor t = currentTensor();
        if (t == null) {
            if (elements == 0) {
                return SafetensorsDtype.F32;
            }
            throw new SafetensorsException(path, "all declared tensors are complete; " + elements
                    + " more elements written");
        }
        if (elements > remaining) {
            throw new SafetensorsException(path, "tensor '" + t.name() + "' has " + remaining
                    + " elements left to write, got " + elements);
        }
        return t.dtype();
    }

    private void finishWrite(long elements) {
        if (currentTensor() == null) {
            return;
        }
        remaining -= elements;
        dataBytesWritten += elements * currentTensor().dtype().byteSize();
        if (remaining == 0) {
            advance();
        }
    }

    /** Moves to the next tensor that has elements, skipping empty ones. */
    private void advance() {
        do {
            current++;
        } while (current < tensors.size() && tensors.get(current).elementCount() == 0);
        remaining = current < tensors.size() ? tensors.get(current).elementCount() : 0;
    }

    /** Bytes of tensor data written so far (header excluded). */
    public long dataBytesWritten() {
        return dataBytesWritten;
    }

    private void flush() throws IOException {
        buffer.flip();
        while (buffer.hasRemaining()) {
            channel.write(buffer);
        }
        buffer.clear();
    }

    /** Flushes and closes the file; fails, naming the tensor, if the data is incomplete. */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try (channel) {
            flush();
        }
        SafetensorsTensor t = currentTensor();
        if (t != null) {
            throw new SafetensorsException(path, "incomplete: tensor '" + t.name() + "' is missing " + remaining
                    + " of " + t.elementCount() + " elements");
        }
    }
}
