package io.zse.convert.gguf;

import io.zse.format.LittleEndian;
import io.zse.format.TernaryBlocks;
import io.zse.format.ZseWriter;

import java.io.IOException;
import java.lang.foreign.MemorySegment;

/**
 * A BitNet b1.58 projection of a GGUF file as a TERNARY tensor, exactly. Whatever the GGUF type (TQ1_0 and TQ2_0, or the
 * F32/F16 ternary floats llama.cpp's converter writes), ggml's decoded values must be -s, 0 or s for one s per tensor:
 * then the codes are sign(x) + 1 and TERNARY's {@code (c - 1) · s} gives back every value bit for bit. TQ's per-block
 * d is that s in every block holding a non-zero code (its quantizer sets d = max |x| of the block, and a BitNet weight
 * is t · s), and a block of zero codes decodes to zeros whatever its d, so one scale per tensor loses nothing; a file
 * whose blocks disagree does not hold a BitNet b1.58 weight and is refused, naming the two values. llama.cpp's optional
 * per-tensor {@code <name>.scale} (multiplied into the projection's output) is folded into s: s = d · scale, rounded
 * once to F32 (exact when the blocks were written from t alone, d = 1).
 */
final class GgufTernaryProjection {
    private GgufTernaryProjection() {
    }

    /**
     * The tensor's s: the |value| of its non-zero elements, checked to be the same for all (1 if all are zero). Reads
     * the tensor once, a row at a time.
     */
    static float scale(GgufFile.GgufTensor source, MemorySegment tensor, int rows, int cols) {
        float[] row = new float[cols];
        float s = 0;
        for (int r = 0; r < rows; r++) {
            GgmlBlockDecoder.decode(source.type(), tensor, (long) r * cols, cols, row, 0);
            for (int k = 0; k < cols; k++) {
                float v = Math.abs(row[k]);
                if (v == 0) {
                    continue;
                }
                if (s == 0 && Float.isFinite(v)) {
                    s = v;
                } else if (v != s) {
                    throw new IllegalArgumentException("tensor '" + source.name() + "' (" + source.type()
                            + ") holds " + row[k] + " at row " + r + ", column " + k + " beside values of magnitude " + s
                            + ": a BitNet b1.58 projection holds -s, 0 and s for one s per tensor (TERNARY)");
                }
            }
        }
        return s == 0 ? 1 : s;
    }

    /** Writes the codes of {@code rows} x {@code cols} values -s, 0, s (checked by {@link #scale}) and the scale. */
    static void write(GgufFile.GgufTensor source, MemorySegment tensor, int rows, int cols, float scale,
                      ZseWriter.TensorSink sink) throws IOException {
        float[] row = new float[cols];
        byte[] codes = new byte[cols];
        MemorySegment data = MemorySegment.ofArray(new byte[cols / 4]);
        for (int r = 0; r < rows; r++) {
            GgmlBlockDecoder.decode(source.type(), tensor, (long) r * cols, cols, row, 0);
            for (int k = 0; k < cols; k++) {
                codes[k] = (byte) (row[k] == 0 ? 1 : row[k] > 0 ? 2 : 0);
            }
            for (int block = 0; block < cols; block += TernaryBlocks.BLOCK) {
                TernaryBlocks.packBlock(codes, block, data, block / 4);
            }
            sink.writeData(data);
        }
        MemorySegment scaleBytes = MemorySegment.ofArray(new byte[4]);
        scaleBytes.set(LittleEndian.FLOAT, 0, scale);
        sink.writeScales(scaleBytes);
        sink.finish();
    }
}
