package io.zse.backend.cpu;

import io.zse.format.HalfFloats;
import io.zse.format.KQuantBlocks;
import io.zse.format.LittleEndian;
import io.zse.format.ZseTensor;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

import java.nio.ByteOrder;

import java.lang.foreign.MemorySegment;

import static io.zse.backend.cpu.HostActivations.FLOAT;

/**
 * The K-quant types (ggml's super-blocks of 256 elements, held bit for bit: docs/zse-format.md): what their kernels
 * share. A row is {@code cols / 256} super-blocks; each kernel walks one at a time, its codes in 32-byte runs that a
 * vector of {@link #FLOATS} lanes reads in one or two steps.
 */
public abstract sealed class KQuantMatmul extends Matmul permits KQuantMatmul.WithMins, Q6KMatmul {
    static final int SUPER = KQuantBlocks.SUPER_BLOCK;

    protected final int superBlocks;

    KQuantMatmul(ZseTensor tensor) {
        super(tensor);
        requireGroupSize(SUPER);
        superBlocks = cols / SUPER;
    }

    /** Bytes at {@code byteOffset} of the data, zero-extended, one per int lane (x86 has no byte-lane shift). */
    final IntVector bytes(long byteOffset) {
        return (IntVector) ByteVector.fromMemorySegment(BYTES, data, byteOffset, ByteOrder.LITTLE_ENDIAN)
                .convertShape(VectorOperators.ZERO_EXTEND_B2I, INTS, 0);
    }

    final float half(long scaleByte) {
        return HalfFloats.fromF16(scales.get(LittleEndian.SHORT, scaleByte));
    }

    static FloatVector floats(IntVector codes) {
        return (FloatVector) codes.convert(VectorOperators.I2F, 0);
    }

    @Override
    public void decodeRow(int row, MemorySegment out, long offset) {
        long first = (long) row * superBlocks;
        float[] block = new float[SUPER];
        for (int s = 0; s < superBlocks; s++) {
            KQuantBlocks.decode(type, data, scales, first + s, block, 0);
            MemorySegment.copy(block, 0, out, FLOAT, (offset + (long) s * SUPER) * Float.BYTES, SUPER);
        }
    }

    /**
     * Q4_K and Q5_K: per sub-block of 32, w = d·scale·q - dmin·min, so a row's dot is Σ d·scale·Σ(q·x) minus
     * Σ dmin·min·Σx; the sums of x per sub-block are shared by every row of a product.
     */
    abstract static sealed class WithMins extends KQuantMatmul permits Q4KMatmul, Q5KMatmul {
        WithMins(ZseTensor tensor) {
            super(tensor);
        }

        /** Σ q·x over sub-blocks 2c and 2c + 1 of super-block s (elements 64c.. of x at xAt), as two vectors. */
        abstract void chunkProducts(long s, int c, MemorySegment x, long xAt, FloatVector[] sums);

        @Override
        public float dot(int row, MemorySegment x, long xOffset) {
            return dot(row, x, xOffset, subBlockSums(x, xOffset));
        }

        @Override
        protected void multiplyVector(MemorySegment x, MemorySegment out, CpuThreads threads) {
            float[] sums = subBlockSums(x, 0);
            threads.parallelFor(rows, cols, (start, end) -> {
                FloatVector[] pair = new FloatVector[2];
                for (int r = start; r < end; r++) {
                    out.setAtIndex(FLOAT, r, dot(r, x, 0, sums, pair));
                }
            });
        }

        private float[] subBlockSums(MemorySegment x, long xOffset) {
            float[] sums = new float[cols / 32];
            for (int b = 0; b < sums.length; b++) {
                FloatVector s = FloatVector.zero(FLOATS);
                for (int j = 0; j < 32; j += FLOATS.length()) {
                    s = s.add(floatsAt(x, xOffset + 32 * b + j));
                }
                sums[b] = s.reduceLanes(VectorOperators.ADD);
            }
            return sums;
        }

        private float dot(int row, MemorySegment x, long xOffset, float[] subSums) {
            return dot(row, x, xOffset, subSums, new FloatVector[2]);
        }

        private float dot(int row, MemorySegment x, long xOffset, float[] subSums, FloatVector[] pair) {
            long first = (long) row * superBlocks;
            FloatVector acc = FloatVector.zero(FLOATS);
            float mins = 0;
            for (int sb = 0; sb < superBlocks; sb++) {
                long s = first + sb;
                long sc = s * 16;
                float d = half(sc);
                float dmin = half(sc + 2);
                float blockMins = 0;
                for (int c = 0; c < 4; c++) {
                    chunkProducts(s, c, x, xOffset + (long) sb * SUPER + 64 * c, pair);
                    acc = pair[0].fma(FloatVector.broadcast(FLOATS, d * KQuantBlocks.scale(scales, sc + 4, 2 * c)), acc);
                    acc = pair[1].fma(FloatVector.broadcast(FLOATS, d * KQuantBlocks.scale(scales, sc + 4, 2 * c + 1)),
                            acc);
                    blockMins += KQuantBlocks.min(scales, sc + 4, 2 * c) * subSums[8 * sb + 2 * c]
                            + KQuantBlocks.min(scales, sc + 4, 2 * c + 1) * subSums[8 * sb + 2 * c + 1];
                }
                mins += dmin * blockMins;
            }
            return acc.reduceLanes(VectorOperators.ADD) - mins;
        }
    }
}
