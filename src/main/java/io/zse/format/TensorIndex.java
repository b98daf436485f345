package io.zse.format;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.zse.format.LittleEndian.INT;
import static io.zse.format.LittleEndian.LONG;
import static io.zse.format.LittleEndian.SHORT;

/** Binary encoding of the tensor-index section (docs/zse-format.md, "The tensor-index section"). */
public final class TensorIndex {
    /** The most elements a tensor may have: its bytes (at most 4 an element) then still fit a long. */
    static final long MAX_ELEMENTS = 1L << 60;

    private TensorIndex() {
    }

    static int entrySize(TensorInfo t) {
        int nameBytes = t.name().getBytes(StandardCharsets.UTF_8).length;
        return (int) ZseLayout.alignUp(2 + nameBytes, 4) + 8 + 8 * t.rank() + 40;
    }

    public static long encodedSize(List<TensorInfo> tensors) {
        long size = 8;
        for (TensorInfo t : tensors) {
            size += entrySize(t);
        }
        return size;
    }

    public static byte[] encode(List<TensorInfo> tensors) {
        MemorySegment out = MemorySegment.ofArray(new byte[(int) encodedSize(tensors)]);
        out.set(INT, 0, tensors.size());
        long pos = 8;
        for (TensorInfo t : tensors) {
            byte[] name = t.name().getBytes(StandardCharsets.UTF_8);
            out.set(SHORT, pos, (short) name.length);
            MemorySegment.copy(name, 0, out, ValueLayout.JAVA_BYTE, pos + 2, name.length);
            pos = ZseLayout.alignUp(pos + 2 + name.length, 4);
            out.set(ValueLayout.JAVA_BYTE, pos, (byte) t.type().code());
            out.set(ValueLayout.JAVA_BYTE, pos + 1, (byte) t.layout());
            out.set(SHORT, pos + 2, (short) t.rank());
            out.set(INT, pos + 4, t.groupSize());
            pos += 8;
            for (int i = 0; i < t.rank(); i++) {
                out.set(LONG, pos, t.dim(i));
                pos += 8;
            }
            out.set(LONG, pos, t.dataOffset());
            out.set(LONG, pos + 8, t.dataLength());
            out.set(LONG, pos + 16, t.scalesOffset());
            out.set(LONG, pos + 24, t.scalesLength());
            out.set(INT, pos + 32, t.dataCrc());
            out.set(INT, pos + 36, t.scalesCrc());
            pos += 40;
        }
        return (byte[]) out.heapBase().orElseThrow();
    }

    /** Decodes and checks each entry on its own (placement against the file is checked by {@link ZseFile}). */
    static List<TensorInfo> decode(Path file, MemorySegment index) throws ZseFormatException {
        Cursor in = new Cursor(file, index);
        long count = Integer.toUnsignedLong(in.u32("tensor count"));
        if (count * 56 > index.byteSize()) {
            throw in.fail("tensor count " + count + " does not fit in a " + index.byteSize() + "-byte index");
        }
        if (in.u32("reserved") != 0) {
            throw in.fail("reserved field is not zero");
        }
        List<TensorInfo> tensors = new ArrayList<>((int) count);
        for (int i = 0; i < count; i++) {
            tensors.add(decodeEntry(in, i));
        }
        if (in.pos != index.byteSize()) {
            throw in.fail((index.byteSize() - in.pos) + " unexpected bytes after the last entry");
        }
        return tensors;
    }

    private static TensorInfo decodeEntry(Cursor in, int i) throws ZseFormatException {
        int nameLength = Short.toUnsignedInt(in.u16("name length of entry " + i));
        if (nameLength == 0 || nameLength > ZseLayout.MAX_NAME_BYTES) {
            throw in.fail("entry " + i + " has name length " + nameLength);
        }
        byte[] nameBytes = in.bytes(nameLength, "name of entry " + i);
        String name;
        try {
            name = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(nameBytes)).toString();
        } catch (CharacterCodingException e) {
            throw in.fail("entry " + i + " has a name that is not UTF-8");
        }
        in.zeroPaddingTo(ZseLayout.alignUp(in.pos, 4), "name padding of " + name);
        String what = "tensor " + name;
        int typeCode = Byte.toUnsignedInt(in.u8(what));
        int layout = Byte.toUnsignedInt(in.u8(what));
        int rank = Short.toUnsignedInt(in.u16(what));
        int groupSize = in.u32(what);
        TensorType type;
        try {
            type = TensorType.fromCode(typeCode);
        } catch (IllegalArgumentException e) {
            throw in.fail(what + " has unknown type code " + typeCode + " (written by a newer zse?)");
        }
        if (layout != ZseLayout.LAYOUT_ROW_GROUPS && layout != ZseLayout.LAYOUT_INTERLEAVED_16) {
            throw in.fail(what + " has unknown layout code " + layout + " (written by a newer zse?)");
        }
        if (rank < 1 || rank > ZseLayout.MAX_RANK) {
            throw in.fail(what + " has rank " + rank);
        }
        if (!type.allowsGroupSize(groupSize)) {
            throw in.fail(what + " of type " + type + " has group size " + groupSize);
        }
        long[] shape = new long[rank];
        for (int d = 0; d < rank; d++) {
            shape[d] = in.u64(what);
            if (shape[d] <= 0) {
                throw in.fail(what + " has dimension " + d + " = " + shape[d]);
            }
        }
        TensorInfo t = new TensorInfo(name, type, layout, shape, groupSize, in.u64(what), in.u64(what),
                in.u64(what), in.u64(what), in.u32(what), in.u32(what));
        long n = t.elementCount();
        if (n < 0 || n > MAX_ELEMENTS) {
            throw in.fail(what + " has a shape whose element count overflows: " + t.shapeString());
        }
        if (type.isQuantized() && t.rowLength() % groupSize != 0) {
            throw in.fail(what + " has rows of " + t.rowLength() + " elements, not a multiple of group size " + groupSize);
        }
        if (layout == ZseLayout.LAYOUT_INTERLEAVED_16 && !InterleavedRows.allows(type, groupSize, shape)) {
            throw in.fail(what + " is " + type + "/" + groupSize + " " + t.shapeString()
                    + " in layout interleaved-16, which holds only 2-D Q8 and Q4 tensors");
        }
        if (t.dataLength() != type.dataBytes(n)) {
            throw in.fail(what + " " + type + " " + t.shapeString() + " needs " + type.dataBytes(n)
                    + " data bytes but the index says " + t.dataLength());
        }
        if (t.scalesLength() != type.scaleBytes(n, groupSize)) {
            throw in.fail(what + " needs " + type.scaleBytes(n, groupSize) + " scale bytes but the index says "
                    + t.scalesLength());
        }
        return t;
    }

    /** Bounds-checked little-endian reader over the index bytes. */
    private static final class Cursor {
        private final Path file;
        private final MemorySegment seg;
        private long pos;

        Cursor(Path file, MemorySegment seg) {
            this.file = file;
            this.seg = seg;
        }

        ZseFormatException fail(String problem) {
            return new ZseFormatException(file, "section tensor-index", problem);
        }

        private void need(long n, String what) throws ZseFormatException {
            if (pos + n > seg.byteSize()) {
                throw fail("index ends in the middle of " + what);
            }
        }

        byte u8(String what) throws ZseFormatException {
            need(1, what);
            return seg.get(ValueLayout.JAVA_BYTE, pos++);
        }

        short u16(String what) throws ZseFormatException {
            need(2, what);
            short v = seg.get(SHORT, pos);
            pos += 2;
            return v;
        }

        int u32(String what) throws ZseFormatException {
            need(4, what);
            int v = seg.get(INT, pos);
            pos += 4;
            return v;
        }

        long u64(String what) throws ZseFormatException {
            need(8, what);
            long v = seg.get(LONG, pos);
            pos += 8;
            return v;
        }

        byte[] bytes(int n, String what) throws ZseFormatException {
            need(n, what);
            byte[] b = seg.asSlice(pos, n).toArray(ValueLayout.JAVA_BYTE);
            pos += n;
            return b;
        }

        void zeroPaddingTo(long end, String what) throws ZseFormatException {
            need(end - pos, what);
            for (; pos < end; pos++) {
                if (seg.get(ValueLayout.JAVA_BYTE, pos) != 0) {
                    throw fail(what + " is not zero");
                }
            }
        }
    }
}
