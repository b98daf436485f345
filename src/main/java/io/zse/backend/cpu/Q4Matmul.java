package io.zse.backend.cpu;

import io.zse.format.HalfFloats;
import io.zse.format.LittleEndian;
import io.zse.format.ZseTensor;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

import java.lang.foreign.MemorySegment;

import static io.zse.backend.cpu.HostActivations.FLOAT;

/**
 * Q4 weights: per group of g elements, g/2 bytes (byte j: element j in the low nibble, element j + g/2 in the high
 * nibble) and F16 (d, m); w = q * d + m. A group's dot is d·Σ q·x + m·Σ x.
 */
public final class Q4Matmul extends NibbleMatmul {
    /**
     * The kernels walk a row in blocks of 16 packed bytes (32 weights: 16 low nibbles, and the 16 high nibbles half a
     * group further on) whatever the group size, so the loop body is the same for every group size and the JIT
     * compiles it fully unrolled. A group loop whose trip count depends on the group size (read from a field, and a
     * literal does not survive the JIT's refusal to inline the big loop into a dispatch) runs 1.5 to 2.5x slower.
     */
    private static final int BLOCK_BYTES = 16;
    private static final int BLOCK = 2 * BLOCK_BYTES;

    /** log2 of the blocks per group (group sizes are 32, 64 or 128): a shift, not a division, in the hot loops. */
    private final int blockShift;

    Q4Matmul(ZseTensor tensor) {
        super(tensor);
        blockShift = Integer.numberOfTrailingZeros(groupSize / BLOCK);
    }

    static FloatVector low(IntVector packed) {
        return (FloatVector) lowCodes(packed).convert(VectorOperators.I2F, 0);
    }

    static FloatVector high(IntVector packed) {
        return (FloatVector) highCodes(packed).convert(VectorOperators.I2F, 0);
    }

    /** Group g's F16 pair: d in the low 16 bits, m in the high; one read instead of two bounds-checked ones. */
    private int scalePair(long group) {
        return scales.get(LittleEndian.INT, group * 4);
    }

    private static float d(int scalePair) {
        return HalfFloats.fromF16((short) scalePair);
    }

    private static float m(int scalePair) {
        return HalfFloats.fromF16((short) (scalePair >>> 16));
    }

    /** Index of the first low-nibble element of block b (the block's high nibbles start {@code groupSize / 2} later). */
    private int lowStart(int block) {
        int group = block >>> blockShift;
        return group * groupSize + (block - (group << blockShift)) * BLOCK_BYTES;
    }

    @Override
    public float dot(int row, MemorySegment x, long xOffset) {
        return dot(row, x, xOffset, blockSums(x, xOffset));
    }

    /** The m·Σx half of every row's dot shares Σx per block: summed once per vector, not once per row. */
    @Override
    protected void multiplyVector(MemorySegment x, MemorySegment out, CpuThreads threads) {
        float[] sums = blockSums(x, 0);
        threads.parallelFor(rows, cols, (start, end) -> {
            for (int r = start; r < end; r++) {
                out.setAtIndex(FLOAT, r, dot(r, x, 0, sums));
            }
        });
    }

    /** Σ x over the 32 elements of each block of x[xOffset .. xOffset + cols). */
    private float[] blockSums(MemorySegment x, long xOffset) {
        int half = groupSize / 2;
        float[] sums = new float[cols / BLOCK];
        for (int b = 0; b < sums.length; b++) {
            long low = xOffset + lowStart(b);
            FloatVector s = FloatVector.zero(FLOATS);
            for (int j = 0; j < BLOCK_BYTES; j += FLOATS.length()) {
                s = s.add(floatsAt(x, low + j)).add(floatsAt(x, low + half + j));
            }
            sums[b] = s.reduceLanes(VectorOperators.ADD);
        }
        return sums;
    }

    private float dot(int row, MemorySegment x, long xOffset, float[] blockSums) {
        int half = groupSize / 2;
        long rowBytes = (long) row * cols / 2;
        long firstGroup = (long) row * cols / groupSize;
        float mSum = 0;
        FloatVector acc = FloatVector.zero(FLOATS);
        for (int b = 0; b < blockSums.length; b++) {
            long low = xOffset + lowStart(b);
            long bytes = rowBytes + (long) b * BLOCK_BYTES;
            FloatVector qx = FloatVector.zero(FLOATS);
            for (int j = 0; j < BLOCK_BYTES; j += FLOATS.length()) {
                IntVector p = packed(bytes + j);
                qx = low(p).fma(floatsAt(x, low + j), qx);
                qx = high(p).fma(floatsAt(x, low + half + j), qx);
            }
            int dm = scalePair(firstGroup + (b >>> blockShift));
            acc = qx.fma(FloatVector.broadcast(FLOATS, d(dm)), acc);
            mSum += m(dm) * blockSums[b];
        }
        return acc.reduceLanes(VectorOperators.ADD) + mSum;
    }

    @Override
    public void decodeRow(int row, MemorySegment out, long offset) {
        int half = groupSize / 2;
        long rowBytes = (long) row * cols / 2;
        long firstGroup = (long) row * cols / groupSize;
        for (int b = 0, blocks = cols / BLOCK; b < blocks; b++) {
            long low = offset + lowStart(b);
            long bytes = rowBytes + (long) b * BLOCK_BYTES;
            int dm = scalePair(firstGroup + (b >>> blockShift));
            float d = d(dm);
            float m = m(dm);
            for (int j = 0; j < BLOCK_BYTES; j += FLOATS.length()) {
                IntVector p = packed(bytes + j);
                low(p).fma(d, m).intoMemorySegment(out, (low + j) * 4L, HostActivations.ORDER);
                high(p).fma(d, m).intoMemorySegment(out, (low + half + j) * 4L, HostActivations.ORDER);
            }
        }
    }
}
