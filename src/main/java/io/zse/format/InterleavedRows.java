package io.zse.format;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Layout {@code interleaved-16} (code 1, docs/zse-format.md): each tile of 16 whole rows stores its rows' row-groups
 * bytes side by side in steps of 4 (step 0 of rows 0..15, step 1 of rows 0..15, ...), and its scales as slot 0 of rows
 * 0..15, slot 1 of rows 0..15, ... (a slot is one F16: Q8's d per group, Q4's d then m per group). Rows after the last
 * whole tile stay in row-groups. A tile sits where its rows sit in row-groups, so data and scale lengths are the same.
 * One SIMD load then holds the same 4 bytes of 16 rows, which the native integer kernels multiply into 16 row sums at
 * once. Only Q8 and Q4 (every group size) are stored this way; the converter writes it, readers that want rows use
 * {@link #readRow} or {@link #toRowGroups}.
 */
public final class InterleavedRows {
    /** Rows per tile. */
    public static final int ROWS = 16;
    /** Bytes of one row per step. */
    public static final int STEP = 4;
    private static final int SLOT = 2;

    private InterleavedRows() {
    }

    /** Whether a tensor of this type, group size and shape may be stored interleaved. */
    public static boolean allows(TensorType type, int groupSize, long[] shape) {
        return shape.length == 2 && (type == TensorType.Q8 || type == TensorType.Q4);
    }

    /** Rows held in whole tiles. */
    public static long tiledRows(long rows) {
        return rows / ROWS * ROWS;
    }

    /** Rearranges rows [0, rows) of row-groups bytes (a chunk starting on a tile) into this layout, in place. */
    public static void interleave(TensorType type, int groupSize, long rows, long cols, MemorySegment data,
                                  MemorySegment scales) {
        rearrange(type, groupSize, rows, cols, data, scales, true);
    }

    /** The inverse of {@link #interleave}. */
    public static void deinterleave(TensorType type, int groupSize, long rows, long cols, MemorySegment data,
                                    MemorySegment scales) {
        rearrange(type, groupSize, rows, cols, data, scales, false);
    }

    private static void rearrange(TensorType type, int groupSize, long rows, long cols, MemorySegment data,
                                  MemorySegment scales, boolean interleave) {
        long rowBytes = type.dataBytes(cols);
        long slots = type.scaleBytes(cols, groupSize) / SLOT;
        Tile dataTile = new Tile(STEP, (int) (rowBytes / STEP));
        Tile scaleTile = new Tile(SLOT, (int) slots);
        for (long first = 0; first + ROWS <= rows; first += ROWS) {
            dataTile.transpose(data, first * rowBytes, interleave);
            scaleTile.transpose(scales, first * slots * SLOT, interleave);
        }
    }

    /** One tile's bytes: unit k of row a sits at a * units + k in row-groups and at k * ROWS + a interleaved. */
    private record Tile(int unitBytes, int units, byte[] from, byte[] to) {
        Tile(int unitBytes, int units) {
            this(unitBytes, units, new byte[ROWS * units * unitBytes], new byte[ROWS * units * unitBytes]);
        }

        void transpose(MemorySegment segment, long offset, boolean interleave) {
            MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offset, from, 0, from.length);
            for (int a = 0; a < ROWS; a++) {
                for (int k = 0; k < units; k++) {
                    int rowMajor = (a * units + k) * unitBytes;
                    int interleaved = (k * ROWS + a) * unitBytes;
                    int source = interleave ? rowMajor : interleaved;
                    int target = interleave ? interleaved : rowMajor;
                    for (int b = 0; b < unitBytes; b++) {
                        to[target + b] = from[source + b];
                    }
                }
            }
            MemorySegment.copy(to, 0, segment, ValueLayout.JAVA_BYTE, offset, to.length);
        }
    }

    /**
     * Copies row {@code row} of an interleaved tensor into row-groups bytes: its data into {@code rowData} (from 0)
     * and its scales into {@code rowScales}, ready for {@link TensorDecoder} as a one-row tensor.
     */
    public static void readRow(ZseTensor tensor, long row, MemorySegment rowData, MemorySegment rowScales) {
        long rows = tensor.info().dim(0);
        long cols = tensor.info().dim(1);
        long rowBytes = tensor.type().dataBytes(cols);
        long slots = tensor.type().scaleBytes(cols, tensor.groupSize()) / SLOT;
        if (row >= tiledRows(rows)) {
            MemorySegment.copy(tensor.data(), row * rowBytes, rowData, 0, rowBytes);
            MemorySegment.copy(tensor.scales(), row * slots * SLOT, rowScales, 0, slots * SLOT);
            return;
        }
        long tileData = (row - row % ROWS) * rowBytes + row % ROWS * STEP;
        for (long k = 0; k < rowBytes / STEP; k++) {
            MemorySegment.copy(tensor.data(), tileData + k * ROWS * STEP, rowData, k * STEP, STEP);
        }
        long tileScales = ((row - row % ROWS) * slots + row % ROWS) * SLOT;
        for (long j = 0; j < slots; j++) {
            MemorySegment.copy(tensor.scales(), tileScales + j * ROWS * SLOT, rowScales, j * SLOT, SLOT);
        }
    }

    /**
     * The tensor in row-groups: itself when it already is, else a copy rearranged in memory that lives as long as it is
     * reachable. For readers written for row-groups (the Java kernels, the CUDA upload).
     */
    public static ZseTensor toRowGroups(ZseTensor tensor) {
        TensorInfo info = tensor.info();
        if (info.layout() == ZseLayout.LAYOUT_ROW_GROUPS) {
            return tensor;
        }
        Arena arena = Arena.ofAuto();
        MemorySegment data = arena.allocate(tensor.data().byteSize(), 64).copyFrom(tensor.data());
        MemorySegment scales = arena.allocate(Math.max(1, tensor.scales().byteSize()), 64)
                .asSlice(0, tensor.scales().byteSize()).copyFrom(tensor.scales());
        deinterleave(info.type(), info.groupSize(), info.dim(0), info.dim(1), data, scales);
        return new ZseTensor(info.withLayout(ZseLayout.LAYOUT_ROW_GROUPS), data, scales);
    }
}
