package io.zse.format;

import io.zse.TestModels;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.UnaryOperator;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every kind of damage to a .zse file is reported as a ZseFormatException naming the file and the problem. */
class ZseFileCorruptionTest {
    @TempDir
    static Path dir;
    static byte[] good;
    static Path file;

    @BeforeAll
    static void convert() throws IOException {
        file = TestModels.convertTinyStories(TensorType.Q4, dir);
        good = Files.readAllBytes(file);
    }

    /** Opens and fully verifies {@code bytes}; returns the error message. */
    private static String rejection(byte[] bytes) throws IOException {
        Path p = dir.resolve("damaged.zse");
        Files.write(p, bytes);
        ZseFormatException e = assertThrows(ZseFormatException.class, () -> {
            try (ZseFile f = ZseFile.open(p)) {
                f.verify();
            }
        });
        assertTrue(e.getMessage().startsWith(p.toString() + ": "), e.getMessage());
        return e.getMessage();
    }

    @Test
    void intactFileOpensAndVerifies() throws IOException {
        try (ZseFile f = ZseFile.open(file)) {
            f.verify();
            assertEquals(0, f.dataOffset() % 4096);
            for (TensorInfo t : f.tensors()) {
                assertEquals(0, t.dataOffset() % 256, t.name());
            }
        }
    }

    @Test
    void wrongMagic() throws IOException {
        byte[] b = good.clone();
        b[1] = 'X';
        assertTrue(rejection(b).contains("not a .zse file"));
        assertTrue(rejection("{\"not\": \"a model\"}".repeat(10).getBytes()).contains("not a .zse file"));
    }

    @Test
    void newerMajorVersionIsRefusedByName() throws IOException {
        byte[] b = good.clone();
        le(b).putShort(ZseLayout.OFF_MAJOR, (short) 2);
        resealPreamble(b);
        assertTrue(rejection(b).contains("format version 2.0 is newer than this reader (1.0)"));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 7, 63, 64, 100, 4095, 4096, 5000, -1})
    void truncation(int length) throws IOException {
        int n = length < 0 ? good.length - 1 : length;
        String message = rejection(Arrays.copyOf(good, n));
        assertTrue(message.contains("truncated") || message.contains("shorter than"), message);
    }

    @Test
    void trailingBytes() throws IOException {
        assertTrue(rejection(Arrays.copyOf(good, good.length + 10)).contains("trailing bytes"));
    }

    /** A header length so large that header offset + length wraps a long is inconsistent, not an index error. */
    @Test
    void headerLengthThatOverflowsIsInconsistent() throws IOException {
        byte[] b = good.clone();
        le(b).putLong(ZseLayout.OFF_HEADER_LENGTH, Long.MAX_VALUE - 16);
        resealPreamble(b);
        String m = rejection(b);
        assertTrue(m.contains("inconsistent layout"), m);
    }

    @Test
    void preambleFieldsInconsistentEvenWithAValidChecksum() throws IOException {
        byte[] b = good.clone();
        le(b).putLong(ZseLayout.OFF_DATA_OFFSET, 4096 + 8);
        resealPreamble(b);
        assertTrue(rejection(b).contains("inconsistent layout"));
    }

    @Test
    void flippedBytesInEachPart() throws IOException {
        ByteBuffer le = le(good);
        int headerOffset = (int) le.getLong(ZseLayout.OFF_HEADER_OFFSET);
        int indexOffset = (int) sectionOffset(good, SectionKind.TENSOR_INDEX);
        int configOffset = (int) sectionOffset(good, SectionKind.CONFIG);
        int dataOffset = (int) le.getLong(ZseLayout.OFF_DATA_OFFSET);
        assertTrue(rejection(flip(good, 20)).contains("preamble: checksum mismatch"));
        assertTrue(rejection(flip(good, headerOffset + 3)).contains("header: checksum mismatch"));
        assertTrue(rejection(flip(good, configOffset + 5)).contains("section config: checksum mismatch"));
        assertTrue(rejection(flip(good, indexOffset + 40)).contains("section tensor-index: checksum mismatch"));
        assertTrue(rejection(flip(good, dataOffset + 1)).contains("data checksum mismatch"));
        assertTrue(rejection(flip(good, dataOffset - 1)).contains("padding before the data area"));
        assertTrue(rejection(flip(good, good.length - 1)).contains("tensor "), "last byte belongs to a tensor or padding");
    }

    @Test
    void indexEntriesPointingOutsideTheFile() throws IOException {
        String m = rejection(rewriteIndex(ts -> replace(ts, 0, ts.get(0).withPlacement(good.length + 256L, ts.get(0).scalesOffset()))));
        assertTrue(m.contains("outside the data area"), m);
    }

    @Test
    void overlappingTensors() throws IOException {
        String m = rejection(rewriteIndex(ts -> replace(ts, 2, ts.get(2).withPlacement(ts.get(1).dataOffset(), ts.get(2).scalesOffset()))));
        assertTrue(m.contains("overlap"), m);
    }

    @Test
    void misalignedTensor() throws IOException {
        String m = rejection(rewriteIndex(ts -> replace(ts, 1, ts.get(1).withPlacement(ts.get(1).dataOffset() + 64, ts.get(1).scalesOffset()))));
        assertTrue(m.contains("aligned"), m);
    }

    @Test
    void lengthThatDoesNotMatchTheShape() throws IOException {
        String m = rejection(rewriteIndex(ts -> {
            TensorInfo t = ts.get(2);
            return replace(ts, 2, new TensorInfo(t.name(), t.type(), t.layout(), new long[]{t.dim(0) * 2, t.dim(1)},
                    t.groupSize(), t.dataOffset(), t.dataLength(), t.scalesOffset(), t.scalesLength(), t.dataCrc(), t.scalesCrc()));
        }));
        assertTrue(m.contains("needs"), m);
    }

    /**
     * An F32 tensor of 2^62 + 64 elements, whose byte count wraps a long to 256, with 256 data bytes in the index: the
     * index no longer takes the wrapped length for the shape's.
     */
    @Test
    void elementCountWhoseBytesOverflowALong() throws IOException {
        String m = rejection(rewriteIndex(ts -> {
            TensorInfo t = ts.get(2);
            long[] shape = new long[t.rank()];
            java.util.Arrays.fill(shape, 1);
            shape[0] = (1L << 62) + 64;
            return replace(ts, 2, new TensorInfo(t.name(), TensorType.F32, ZseLayout.LAYOUT_ROW_GROUPS, shape, 0, t.dataOffset(), 256,
                    0, 0, t.dataCrc(), 0));
        }));
        assertTrue(m.contains("element count overflows"), m);
    }

    @Test
    void interleavedLayoutOnATensorItCannotHoldOrAnUnknownLayout() throws IOException {
        String m = rejection(rewriteIndex(ts -> {
            int norm = ts.indexOf(ts.stream().filter(t -> t.rank() == 1).findFirst().orElseThrow());
            return replace(ts, norm, ts.get(norm).withLayout(ZseLayout.LAYOUT_INTERLEAVED_16));
        }));
        assertTrue(m.contains("in layout interleaved-16, which holds only 2-D Q8 and Q4 tensors"), m);
        m = rejection(rewriteIndex(ts -> replace(ts, 2, ts.get(2).withLayout(2))));
        assertTrue(m.contains("unknown layout code 2"), m);
    }

    @Test
    void duplicateNames() throws IOException {
        // q_proj and k_proj names have the same length, so the index keeps its size.
        String m = rejection(rewriteIndex(ts -> replace(ts, 3, rename(ts.get(3), ts.get(2).name()))));
        assertTrue(m.contains("appears twice"), m);
    }

    @Test
    void thousandRandomFlipsAndTruncationsAreAllRejected() throws IOException {
        SplittableRandom random = new SplittableRandom(42);
        for (int i = 0; i < 1000; i++) {
            byte[] b;
            if (i % 4 == 3) {
                b = Arrays.copyOf(good, random.nextInt(good.length));
            } else {
                b = good.clone();
                int at = random.nextInt(b.length);
                b[at] ^= (byte) (1 + random.nextInt(255));
            }
            rejection(b);
        }
    }

    private static TensorInfo rename(TensorInfo t, String name) {
        return new TensorInfo(name, t.type(), t.layout(), t.shape(), t.groupSize(), t.dataOffset(), t.dataLength(),
                t.scalesOffset(), t.scalesLength(), t.dataCrc(), t.scalesCrc());
    }

    private static List<TensorInfo> replace(List<TensorInfo> ts, int i, TensorInfo t) {
        List<TensorInfo> copy = new ArrayList<>(ts);
        copy.set(i, t);
        return copy;
    }

    private static byte[] flip(byte[] bytes, int at) {
        byte[] b = bytes.clone();
        b[at] ^= 0x10;
        return b;
    }

    private static ByteBuffer le(byte[] b) {
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static int crc(byte[] b, int from, int length) {
        CRC32C c = new CRC32C();
        c.update(b, from, length);
        return (int) c.getValue();
    }

    private static void resealPreamble(byte[] b) {
        le(b).putInt(ZseLayout.OFF_PREAMBLE_CRC, crc(b, 0, ZseLayout.OFF_PREAMBLE_CRC));
    }

    private static int sectionEntry(byte[] b, SectionKind kind) {
        ByteBuffer le = le(b);
        int header = (int) le.getLong(ZseLayout.OFF_HEADER_OFFSET);
        int count = le.getInt(header);
        for (int i = 0; i < count; i++) {
            int e = header + 8 + i * 32;
            if (le.getInt(e) == kind.code()) {
                return e;
            }
        }
        throw new AssertionError("no section " + kind);
    }

    private static long sectionOffset(byte[] b, SectionKind kind) {
        return le(b).getLong(sectionEntry(b, kind) + 8);
    }

    /** Re-encodes the index with a change, then reseals every checksum so only the deep checks can catch it. */
    private static byte[] rewriteIndex(UnaryOperator<List<TensorInfo>> change) throws IOException {
        List<TensorInfo> tensors;
        try (ZseFile f = ZseFile.open(file)) {
            tensors = f.tensors();
        }
        byte[] index = TensorIndex.encode(change.apply(tensors));
        byte[] b = good.clone();
        int entry = sectionEntry(b, SectionKind.TENSOR_INDEX);
        ByteBuffer le = le(b);
        int offset = (int) le.getLong(entry + 8);
        assertEquals(le.getLong(entry + 16), index.length);
        System.arraycopy(index, 0, b, offset, index.length);
        le.putInt(entry + 24, crc(b, offset, index.length));
        int header = (int) le.getLong(ZseLayout.OFF_HEADER_OFFSET);
        le.putInt(ZseLayout.OFF_HEADER_CRC, crc(b, header, (int) le.getLong(ZseLayout.OFF_HEADER_LENGTH)));
        resealPreamble(b);
        return b;
    }
}
