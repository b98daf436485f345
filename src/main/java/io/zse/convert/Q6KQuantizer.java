package io.zse.convert;

import io.zse.format.HalfFloats;
import io.zse.format.LittleEndian;
import io.zse.format.TensorType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * Q6_K, ggml's 6-bit K-quant (layout: {@link io.zse.format.KQuantBlocks}), chosen as llama-quantize chooses it without
 * an importance matrix, so a converted file holds the bits llama.cpp would write: each 16 values get the scale that a
 * weighted search over 19 candidates finds best, the 16 scales of a super-block are stored as int8 steps of one F16 d,
 * and each value is then rounded against its sub-block's stored scale. It is the type llama.cpp gives the output layer
 * of its 4-bit files; here it is offered for the embedding and output layers (--embeddings / --lm-head q6_k).
 */
public final class Q6KQuantizer implements Quantizer {
    private static final int BLOCK = 256;
    private static final int SUB_BLOCK = 16;
    private static final int SUB_BLOCKS = BLOCK / SUB_BLOCK;
    private static final int HALF_RANGE = 32; // codes -32..31, stored + 32
    private static final float ZERO_BLOCK = 1e-15f;

    Q6KQuantizer() {
    }

    @Override
    public TensorType type() {
        return TensorType.Q6_K;
    }

    @Override
    public int groupSize() {
        return BLOCK;
    }

    @Override
    public void quantize(float[] src, int srcOffset, int count, MemorySegment data, long dataOffset,
            MemorySegment scales, long scalesOffset) {
        quantizeInJava(src, srcOffset, count, data, dataOffset, scales, scalesOffset);
    }

    @Override
    public void quantizeInJava(float[] src, int srcOffset, int count, MemorySegment data, long dataOffset,
            MemorySegment scales, long scalesOffset) {
        GroupInput.check(src, srcOffset, count, BLOCK);
        byte[] codes = new byte[BLOCK];
        float[] subScales = new float[SUB_BLOCKS];
        for (int block = 0; block < count / BLOCK; block++) {
            int base = srcOffset + block * BLOCK;
            long scaleAt = scalesOffset + 18L * block;
            float largest = 0;
            float largestAbs = 0;
            for (int j = 0; j < SUB_BLOCKS; j++) {
                subScales[j] = subBlockScale(src, base + j * SUB_BLOCK, codes, j * SUB_BLOCK);
                if (Math.abs(subScales[j]) > largestAbs) {
                    largestAbs = Math.abs(subScales[j]);
                    largest = subScales[j];
                }
            }
            if (largestAbs < ZERO_BLOCK) {
                scales.asSlice(scaleAt, 18).fill((byte) 0);
                data.asSlice(dataOffset + 192L * block, 192).fill((byte) 0);
                continue;
            }
            float inverse = -128f / largest;
            short dBits = HalfFloats.toF16(1 / inverse);
            float d = HalfFloats.fromF16(dBits);
            scales.set(LittleEndian.SHORT, scaleAt, dBits);
            for (int j = 0; j < SUB_BLOCKS; j++) {
                int step = Math.min(127, nearest(inverse * subScales[j]));
                scales.set(ValueLayout.JAVA_BYTE, scaleAt + 2 + j, (byte) step);
                float dj = d * step;
                if (dj == 0) {
                    continue; // every value of the sub-block decodes to 0 whatever its code
                }
                for (int i = j * SUB_BLOCK; i < (j + 1) * SUB_BLOCK; i++) {
                    int code = Math.clamp(nearest(src[base + i] / dj), -HALF_RANGE, HALF_RANGE - 1);
                    codes[i] = (byte) (code + HALF_RANGE);
                }
            }
            pack(codes, data, dataOffset + 192L * block);
        }
    }

    /**
     * The scale of 16 values, leaving their codes (+ 32) in codes[at..]: the plain scale max/-32 (signed, so the
     * largest magnitude takes code -32), then 18 neighbours (-(32 + 0.1·k)/max, k = ±1..±9), each scored by the least-squares
     * fit of its codes with weights x²; the best fit's scale and codes win.
     */
    private static float subBlockScale(float[] x, int from, byte[] codes, int at) {
        float max = 0;
        float maxAbs = 0;
        for (int i = 0; i < SUB_BLOCK; i++) {
            float a = Math.abs(x[from + i]);
            if (a > maxAbs) {
                maxAbs = a;
                max = x[from + i];
            }
        }
        if (maxAbs < ZERO_BLOCK) {
            Arrays.fill(codes, at, at + SUB_BLOCK, (byte) 0);
            return 0;
        }
        float best = 0;
        float scale = 0;
        for (int k = 0; k <= 18; k++) {
            int tweak = k == 0 ? 0 : k <= 9 ? k - 10 : k - 9; // 0 first, then -9..-1, 1..9
            float inverse = -(HALF_RANGE + 0.1f * tweak) / max;
            float sumLx = 0;
            float sumL2 = 0;
            for (int i = 0; i < SUB_BLOCK; i++) {
                float v = x[from + i];
                int l = Math.clamp(nearest(inverse * v), -HALF_RANGE, HALF_RANGE - 1);
                float w = v * v;
                sumLx += w * v * l;
                sumL2 += w * l * l;
            }
            boolean better = k == 0 || sumL2 > 0 && sumLx * sumLx > best * sumL2;
            if (better) {
                for (int i = 0; i < SUB_BLOCK; i++) {
                    codes[at + i] = (byte) (Math.clamp(nearest(inverse * x[from + i]), -HALF_RANGE, HALF_RANGE - 1)
                            + HALF_RANGE);
                }
                scale = sumL2 != 0 ? sumLx / sumL2 : 0;
                best = scale * sumLx;
            }
        }
        return scale;
    }

    /** Round half to even, as ggml's nearest_int does (for |v| < 2^22). */
    private static int nearest(float v) {
        return (int) Math.rint(v);
    }

    /**
     * Codes (0..63) of one super-block into ggml's order: element 128h + 32q + l keeps its low 4 bits in byte
     * 64h + 32(q & 1) + l (the high nibble when q >= 2) and its high 2 bits at bit 2q of byte 128 + 32h + l.
     */
    private static void pack(byte[] codes, MemorySegment data, long at) {
        byte[] packed = new byte[192];
        for (int e = 0; e < BLOCK; e++) {
            int half = e >> 7;
            int quarter = (e >> 5) & 3;
            int l = e & 31;
            int code = codes[e];
            packed[64 * half + 32 * (quarter & 1) + l] |= (byte) ((code & 0xF) << (4 * (quarter >> 1)));
            packed[128 + 32 * half + l] |= (byte) ((code >> 4) << (2 * quarter));
        }
        MemorySegment.copy(packed, 0, data, ValueLayout.JAVA_BYTE, at, packed.length);
    }
}
