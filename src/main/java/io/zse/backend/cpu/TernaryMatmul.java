package io.zse.backend.cpu;

import io.zse.format.TernaryBlocks;
import io.zse.format.ZseTensor;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

import java.nio.ByteOrder;

import java.lang.foreign.MemorySegment;

/**
 * TERNARY weights (BitNet b1.58): 2-bit codes in blocks of 128, one F32 scale per tensor (docs/zse-format.md).
 * Products take int8 activations ({@link TernaryActivations}, as BitNet defines them); Σ t·q is summed in float lanes,
 * exact since every partial sum is an integer far below 2^24.
 */
public final class TernaryMatmul extends Matmul {
    private final float scale;

    TernaryMatmul(ZseTensor tensor) {
        super(tensor);
        requireGroupSize(TernaryBlocks.BLOCK);
        this.scale = TernaryBlocks.scale(scales);
    }

    /** The weights t = c - 1 of FLOATS.length() consecutive elements: bits 2·part of the packed bytes at byteOffset. */
    private FloatVector weights(long byteOffset, int part) {
        return (FloatVector) ByteVector.fromMemorySegment(BYTES, data, byteOffset, ByteOrder.LITTLE_ENDIAN)
                .lanewise(VectorOperators.LSHR, 2 * part).and((byte) 3).sub((byte) 1)
                .convertShape(VectorOperators.B2F, FLOATS, 0);
    }

    @Override
    protected float ternaryCodeDot(int row, MemorySegment q, long qOffset) {
        long rowBytes = (long) row * cols / 4;
        FloatVector acc = FloatVector.zero(FLOATS);
        for (int block = 0; block < cols; block += TernaryBlocks.BLOCK) {
            long blockBytes = rowBytes + block / 4;
            for (int part = 0; part < 4; part++) {
                for (int j = 0; j < TernaryBlocks.BLOCK_BYTES; j += FLOATS.length()) {
                    FloatVector x = (FloatVector) ByteVector.fromMemorySegment(BYTES, q,
                                    qOffset + block + 32 * part + j, ByteOrder.LITTLE_ENDIAN)
                            .convertShape(VectorOperators.B2F, FLOATS, 0);
                    acc = weights(blockBytes + j, part).fma(x, acc);
                }
            }
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }

    @Override
    public float dot(int row, MemorySegment x, long xOffset) {
        return ternaryDot(row, x, xOffset);
    }

    @Override
    public void decodeRow(int row, MemorySegment out, long offset) {
        long rowBytes = (long) row * cols / 4;
        for (int block = 0; block < cols; block += TernaryBlocks.BLOCK) {
            for (int part = 0; part < 4; part++) {
                for (int j = 0; j < TernaryBlocks.BLOCK_BYTES; j += FLOATS.length()) {
                    weights(rowBytes + block / 4 + j, part).mul(scale)
                            .intoMemorySegment(out, (offset + block + 32 * part + j) * 4L, HostActivations.ORDER);
                }
            }
        }
    }
}
