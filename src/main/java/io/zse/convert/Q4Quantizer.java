package io.zse.convert;

import io.zse.format.HalfFloats;
import io.zse.format.LittleEndian;
import io.zse.format.Nibbles;
import io.zse.format.QuantErrorBound;
import io.zse.format.TensorType;
import java.lang.foreign.MemorySegment;

/**
 * Q4: one 4-bit code q in 0..15 per element (nibble-packed) and two F16 scales (d, m) per group of 32, 64 or 128;
 * w = q * d + m.
 *
 * <p>Scale choice follows llama.cpp's make_qkx: for a few level spacings around the plain one ((max - min) / 15) it
 * assigns levels, fits (d, m) to them by least squares, rounds both to F16, re-assigns the nearest codes and keeps the
 * pair with the lowest squared error whose worst element stays within {@link QuantErrorBound}. Stateless apart from
 * the group size, so one instance serves any number of threads.
 */
public final class Q4Quantizer extends NativeFirstQuantizer {
    private static final int MAX_CODE = 15;
    /** Level spacings tried, as (15 + offset) levels across the group's range. */
    private static final float[] LEVEL_OFFSETS = {-1f, -0.8f, -0.6f, -0.4f, -0.2f, 0f, 0.2f, 0.4f, 0.6f, 0.8f, 1f};

    Q4Quantizer(int groupSize) {
        super(TensorType.Q4, groupSize, LEVEL_OFFSETS, null, 0);
    }

    @Override
    public void quantizeInJava(float[] src, int srcOffset, int count, MemorySegment data, long dataOffset,
            MemorySegment scales, long scalesOffset) {
        GroupInput.check(src, srcOffset, count, groupSize());
        byte[] codes = new byte[groupSize()];
        float[] scaleAndMin = new float[2];
        for (int group = 0; group < count / groupSize(); group++) {
            int offset = srcOffset + group * groupSize();
            chooseScales(src, offset, scaleAndMin, group);
            float d = scaleAndMin[0];
            float m = scaleAndMin[1];
            float inverse = d == 0 ? 0 : 1 / d;
            for (int i = 0; i < groupSize(); i++) {
                codes[i] = (byte) nearestCode(src[offset + i], m, inverse);
            }
            Nibbles.packGroup(codes, groupSize(), data, dataOffset + (long) group * groupSize() / 2);
            scales.set(LittleEndian.SHORT, scalesOffset + 4L * group, HalfFloats.toF16(d));
            scales.set(LittleEndian.SHORT, scalesOffset + 4L * group + 2, HalfFloats.toF16(m));
        }
    }

    /** Writes the chosen F16-exact (d, m) of the group at {@code offset} to {@code out[0], out[1]}. */
    private void chooseScales(float[] src, int offset, float[] out, int groupIndex) {
        float min = Float.POSITIVE_INFINITY;
        float max = Float.NEGATIVE_INFINITY;
        for (int i = offset; i < offset + groupSize(); i++) {
            min = Math.min(min, src[i]);
            max = Math.max(max, src[i]);
        }
        float range = max - min;
        float bestD = HalfFloats.roundToF16(range / MAX_CODE);
        float bestM = HalfFloats.roundToF16(min);
        if (Float.isInfinite(bestD)) {
            throw GroupInput.scaleOverflow("Q4 step d = (max - min) / 15 =", range / MAX_CODE, groupIndex);
        }
        if (Float.isInfinite(bestM)) {
            throw GroupInput.scaleOverflow("Q4 offset m = min =", min, groupIndex);
        }
        if (bestD != 0) {
            double bound = QuantErrorBound.forGroup(TensorType.Q4, src, offset, groupSize());
            // Plain rounding always meets the bound, so it is accepted without a check.
            double bestError = squaredError(src, offset, bestD, bestM, Double.POSITIVE_INFINITY, Double.MAX_VALUE);
            for (float levelOffset : LEVEL_OFFSETS) {
                if (!fitToLevels(src, offset, min, (MAX_CODE + levelOffset) / range, out)) {
                    continue;
                }
                float d = HalfFloats.roundToF16(out[0]);
                float m = HalfFloats.roundToF16(out[1]);
                if (d <= 0 || Float.isInfinite(m) || (d == bestD && m == bestM)) {
                    continue;
                }
                double error = squaredError(src, offset, d, m, bound, bestError);
                if (error < bestError) {
                    bestError = error;
                    bestD = d;
                    bestM = m;
                }
            }
        }
        out[0] = bestD;
        out[1] = bestM;
    }

    /**
     * Assigns each element the level round((w - min) * levelsPerUnit), clamped to 0..15, and writes the least-squares
     * (d, m) for those levels to {@code out}. False if the levels are all equal, leaving d undetermined.
     */
    private boolean fitToLevels(float[] src, int offset, float min, float levelsPerUnit, float[] out) {
        double sumL = 0;
        double sumLL = 0;
        double sumW = 0;
        double sumLW = 0;
        for (int i = offset; i < offset + groupSize(); i++) {
            float w = src[i];
            int level = Math.clamp(Math.round((w - min) * levelsPerUnit), 0, MAX_CODE);
            sumL += level;
            sumLL += level * level;
            sumW += w;
            sumLW += level * (double) w;
        }
        double determinant = groupSize() * sumLL - sumL * sumL;
        if (determinant <= 0) {
            return false;
        }
        out[0] = (float) ((groupSize() * sumLW - sumL * sumW) / determinant);
        out[1] = (float) ((sumLL * sumW - sumL * sumLW) / determinant);
        return true;
    }

    /**
     * Squared error of the group coded with (d, m), or infinity if an element's error exceeds {@code bound}. Stops
     * early once the sum reaches {@code stopAbove}: such a candidate cannot win.
     */
    private double squaredError(float[] src, int offset, float d, float m, double bound, double stopAbove) {
        float inverse = 1 / d;
        double sum = 0;
        for (int i = offset; i < offset + groupSize(); i++) {
            float w = src[i];
            float decoded = nearestCode(w, m, inverse) * d + m; // exactly what the decoder computes
            double error = w - (double) decoded;
            if (Math.abs(error) > bound) {
                return Double.POSITIVE_INFINITY;
            }
            sum += error * error;
            if (sum >= stopAbove) {
                return sum;
            }
        }
        return sum;
    }

    private static int nearestCode(float w, float m, float inverseD) {
        return Math.clamp(Math.round((w - m) * inverseD), 0, MAX_CODE);
    }
}
