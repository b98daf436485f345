package io.zse.format;

/** Fixed numbers of the format: magic, version, preamble offsets, alignments (docs/zse-format.md). */
public final class ZseLayout {
    private ZseLayout() {
    }

    public static final byte[] MAGIC = {(byte) 0x89, 'Z', 'S', 'E', '\r', '\n', 0x1A, '\n'};
    public static final int MAJOR_VERSION = 1;
    public static final int MINOR_VERSION = 0;

    public static final int PREAMBLE_SIZE = 64;
    public static final int OFF_MAJOR = 8;
    public static final int OFF_MINOR = 10;
    public static final int OFF_FLAGS = 12;
    public static final int OFF_HEADER_OFFSET = 16;
    public static final int OFF_HEADER_LENGTH = 24;
    public static final int OFF_DATA_OFFSET = 32;
    public static final int OFF_DATA_LENGTH = 40;
    public static final int OFF_FILE_LENGTH = 48;
    public static final int OFF_HEADER_CRC = 56;
    public static final int OFF_PREAMBLE_CRC = 60;

    public static final int SECTION_ENTRY_SIZE = 32;
    public static final int HEADER_FIXED_SIZE = 8;

    public static final int DATA_ALIGNMENT = 4096;
    public static final int TENSOR_ALIGNMENT = 256;
    public static final int SECTION_ALIGNMENT = 8;

    public static final int MAX_RANK = 8;
    public static final int MAX_NAME_BYTES = 1024;
    public static final int LAYOUT_ROW_GROUPS = 0;
    /** 16 rows side by side in 4-byte steps (Q8, Q4): {@link InterleavedRows}. */
    public static final int LAYOUT_INTERLEAVED_16 = 1;


    public static long alignUp(long value, long alignment) {
        return (value + alignment - 1) / alignment * alignment;
    }
}
