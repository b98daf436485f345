package io.zse.convert;

import io.zse.format.LittleEndian;
import io.zse.format.TensorInfo;
import io.zse.format.TernaryBlocks;
import io.zse.format.ZseWriter;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Writes one BitNet projection of a checkpoint as a TERNARY tensor, reading it in the form its
 * {@link BitNetProjections} says, a chunk of rows at a time. Packed codes carry over exactly; float ("online") weights
 * are ternarised as transformers does it.
 */
final class TernaryEncoder {
    /** Weight elements per chunk. */
    private static final int CHUNK_ELEMENTS = 1 << 22;

    private TernaryEncoder() {
    }

    /** The checkpoint's shape of a projection whose .zse shape is [out, in]. */
    static long[] checkpointShape(BitNetProjections form, long[] shape) {
        return form.packed() ? new long[]{shape[0] / 4, shape[1]} : shape;
    }

    static void write(HfCheckpoint checkpoint, String source, BitNetProjections form, TensorInfo target,
                      ZseWriter.TensorSink sink) throws IOException {
        int rows = (int) target.shape()[0];
        int cols = (int) target.shape()[1];
        if (form.packed() && rows % 4 != 0) {
            throw new IllegalArgumentException(source + ": " + rows + " output rows are not a multiple of 4 (packed)");
        }
        float scale = form.packed() ? packedScale(checkpoint, source, form) : 0;
        float onlineMultiplier = form.packed() ? 0 : onlineMultiplier(checkpoint, source, (long) rows * cols);
        if (!form.packed()) {
            scale = 1f / onlineMultiplier;
        }
        int chunkRows = Math.max(1, Math.min(rows, CHUNK_ELEMENTS / cols));
        byte[] codes = new byte[cols];
        float[] values = new float[cols];
        MemorySegment packed = form.packed() ? checkpoint.fileOf(source).tensorBytes(source) : null;
        MemorySegment data = MemorySegment.ofArray(new byte[chunkRows * cols / 4]);
        for (int first = 0; first < rows; first += chunkRows) {
            int n = Math.min(chunkRows, rows - first);
            for (int r = 0; r < n; r++) {
                int row = first + r;
                if (form.packed()) {
                    unpackRow(packed, source, rows / 4, row, cols, codes);
                } else {
                    checkpoint.readFloats(source, (long) row * cols, cols, values, 0);
                    for (int k = 0; k < cols; k++) {
                        float t = Math.max(-1f, Math.min(1f, (float) Math.rint(values[k] * onlineMultiplier)));
                        if (!Float.isFinite(values[k])) {
                            throw new IllegalArgumentException("tensor " + source + " holds " + values[k]);
                        }
                        codes[k] = (byte) (t + 1);
                    }
                }
                for (int block = 0; block < cols; block += TernaryBlocks.BLOCK) {
                    TernaryBlocks.packBlock(codes, block, data, (long) r * cols / 4 + block / 4);
                }
            }
            sink.writeData(data.asSlice(0, (long) n * cols / 4));
        }
        MemorySegment scaleBytes = MemorySegment.ofArray(new byte[4]);
        scaleBytes.set(LittleEndian.FLOAT, 0, scale);
        sink.writeScales(scaleBytes);
        sink.finish();
    }

    /** Codes (t + 1) of weight row {@code row}: bits 2·(row / packedRows) of byte row row % packedRows. */
    private static void unpackRow(MemorySegment packed, String source, int packedRows, int row, int cols, byte[] codes) {
        int shift = 2 * (row / packedRows);
        long base = (long) (row % packedRows) * cols;
        for (int k = 0; k < cols; k++) {
            int code = (packed.get(ValueLayout.JAVA_BYTE, base + k) >> shift) & 3;
            if (code == 3) {
                throw new IllegalArgumentException(source + " holds the 2-bit code 3 at row " + row + ", column " + k
                        + ": not a ternary value (codes are t + 1 with t in -1, 0, 1)");
            }
            codes[k] = (byte) code;
        }
    }

    private static float packedScale(HfCheckpoint checkpoint, String source, BitNetProjections form) throws IOException {
        String name = BitNetProjections.scaleTensor(source);
        SafetensorsTensor t = checkpoint.tensor(name).orElseThrow(() -> new IllegalArgumentException(
                "checkpoint is missing " + name + " (the scale of the packed " + source + ")"));
        if (t.elementCount() != 1) {
            throw new IllegalArgumentException(name + " holds " + t.elementCount() + " values, not one per tensor");
        }
        float[] v = new float[1];
        checkpoint.readFloats(name, 0, 1, v, 0);
        if (!(v[0] > 0) || !Float.isFinite(v[0])) {
            throw new IllegalArgumentException(name + " is " + v[0] + ", not a positive scale");
        }
        return form == BitNetProjections.PACKED_DIVIDED ? (float) (1.0 / v[0]) : v[0];
    }

    /** m = 1 / max(mean|W|, 1e-5) in float, as transformers' WeightQuant computes it (the mean summed in double). */
    private static float onlineMultiplier(HfCheckpoint checkpoint, String source, long count) throws IOException {
        float[] chunk = new float[(int) Math.min(count, CHUNK_ELEMENTS)];
        double sum = 0;
        for (long start = 0; start < count; start += chunk.length) {
            int n = (int) Math.min(chunk.length, count - start);
            checkpoint.readFloats(source, start, n, chunk, 0);
            for (int i = 0; i < n; i++) {
                sum += Math.abs(chunk[i]);
            }
        }
        return 1f / Math.max((float) (sum / count), 1e-5f);
    }
}
