package io.zse.convert;

import io.zse.format.HalfFloats;
import io.zse.format.QuantErrorBound;
import io.zse.format.TensorType;

/**
 * Scale choice for the symmetric types (Q8, NF4), where a group is stored as codes plus one F16 scale s and element w
 * reads back as {@code value(code) * s}. Starting from the plain scale (absmax over the largest code value) it tries a
 * few nearby scales and a least-squares refit, keeping the one with the lowest squared error whose worst element stays
 * within {@link QuantErrorBound}. Every candidate is rounded to F16 before its codes are chosen, so the error it is
 * judged by is the error of what gets stored. Stateless, so one instance serves any number of threads.
 */
final class SymmetricScaleSearch {

    /** The codes of a symmetric type: the value each stands for, relative to the scale, and the nearest code. */
    interface Codes {
        int nearest(float scaledValue);

        float value(int code);
    }

    private final TensorType type;
    private final Codes codes;
    /** Candidate scales as multiples of the group's absmax; the first is the plain scale. */
    private final float[] scaleFactors;

    SymmetricScaleSearch(TensorType type, Codes codes, float[] scaleFactors) {
        this.type = type;
        this.codes = codes;
        this.scaleFactors = scaleFactors.clone();
    }

    /**
     * Chooses the scale of the group {@code src[offset, offset + groupSize)} and writes its codes to
     * {@code codesOut[0, groupSize)}.
     *
     * @return the scale, exactly representable as an F16
     */
    float chooseScale(float[] src, int offset, int groupSize, byte[] codesOut, int groupIndex) {
        float absmax = 0;
        for (int i = offset; i < offset + groupSize; i++) {
            absmax = Math.max(absmax, Math.abs(src[i]));
        }
        float plain = HalfFloats.roundToF16(absmax * scaleFactors[0]);
        if (Float.isInfinite(plain)) {
            throw GroupInput.scaleOverflow(type + " scale for absmax", absmax, groupIndex);
        }
        float best = plain;
        if (plain != 0) {
            double bound = QuantErrorBound.forGroup(type, src, offset, groupSize);
            // Plain rounding always meets the bound, so it is accepted without a check.
            double bestError = squaredError(src, offset, groupSize, plain, Double.POSITIVE_INFINITY, Double.MAX_VALUE);
            float previous = plain;
            for (int k = 1; k < scaleFactors.length; k++) {
                float candidate = HalfFloats.roundToF16(absmax * scaleFactors[k]);
                if (candidate == previous) {
                    continue; // neighbouring factors often round to the same F16
                }
                previous = candidate;
                double error = squaredError(src, offset, groupSize, candidate, bound, bestError);
                if (error < bestError) {
                    bestError = error;
                    best = candidate;
                }
            }
            float refit = leastSquaresScale(src, offset, groupSize, best);
            if (refit > 0 && refit != best && squaredError(src, offset, groupSize, refit, bound, bestError) < bestError) {
                best = refit;
            }
        }
        encode(src, offset, groupSize, best, codesOut);
        return best;
    }

    private void encode(float[] src, int offset, int groupSize, float scale, byte[] codesOut) {
        float inverse = scale == 0 ? 0 : 1 / scale;
        for (int i = 0; i < groupSize; i++) {
            codesOut[i] = (byte) codes.nearest(src[offset + i] * inverse);
        }
    }

    /**
     * Squared error of the group coded with {@code scale}, or infinity if an element's error exceeds {@code bound}.
     * Stops early once the sum reaches {@code stopAbove}: such a candidate cannot win.
     */
    private double squaredError(float[] src, int offset, int groupSize, float scale, double bound, double stopAbove) {
        float inverse = 1 / scale;
        double sum = 0;
        for (int i = offset; i < offset + groupSize; i++) {
            float w = src[i];
            float decoded = codes.value(codes.nearest(w * inverse)) * scale; // exactly what the decoder computes
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

    /** The F16 scale minimising the squared error for the codes {@code scale} gives: sum(w v) / sum(v v). */
    private float leastSquaresScale(float[] src, int offset, int groupSize, float scale) {
        float inverse = 1 / scale;
        double sumWeightedValues = 0;
        double sumSquaredValues = 0;
        for (int i = offset; i < offset + groupSize; i++) {
            float v = codes.value(codes.nearest(src[i] * inverse));
            sumWeightedValues += (double) src[i] * v;
            sumSquaredValues += (double) v * v;
        }
        return sumSquaredValues == 0 ? 0 : HalfFloats.roundToF16((float) (sumWeightedValues / sumSquaredValues));
    }
}
