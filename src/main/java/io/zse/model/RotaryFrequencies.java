package io.zse.model;

import java.util.List;

/**
 * RoPE inverse frequencies, one per rotated pair (headDim / 2), with the configured scaling applied the way
 * transformers does (computed in F32 like it).
 */
public final class RotaryFrequencies {
    private RotaryFrequencies() {
    }

    /** inv_freq[j] = 1 / theta^(2j / headDim), then scaled: linear divides by factor; llama3 as below. */
    public static float[] of(int headDim, double theta, RopeScaling scaling) {
        float[] inverse = new float[headDim / 2];
        for (int j = 0; j < inverse.length; j++) {
            inverse[j] = 1f / (float) Math.pow((float) theta, (float) (2 * j) / headDim);
        }
        if (scaling == null) {
            return inverse;
        }
        return switch (scaling.type()) {
            case "linear" -> linear(inverse, (float) scaling.factor());
            case "llama3" -> llama3(inverse, scaling);
            case "factors" -> factors(inverse, scaling);
            case "longrope" -> longrope(headDim, theta, scaling.frequencyFactors());
            default -> throw new IllegalArgumentException("unsupported rope_scaling type '" + scaling.type() + "'");
        };
    }

    private static float[] linear(float[] inverse, float factor) {
        for (int j = 0; j < inverse.length; j++) {
            inverse[j] /= factor;
        }
        return inverse;
    }

    private static float[] factors(float[] inverse, RopeScaling s) {
        if (s.frequencyFactors().size() != inverse.length) {
            throw new IllegalArgumentException("rope_scaling has " + s.frequencyFactors().size()
                    + " frequency factors but the head has " + inverse.length + " rotated pairs");
        }
        for (int j = 0; j < inverse.length; j++) {
            inverse[j] /= s.frequencyFactors().get(j).floatValue();
        }
        return inverse;
    }

    /** LongRoPE's table with its long factors ({@link #of} gives the short factors' table). */
    public static float[] ofLongFactors(int headDim, double theta, RopeScaling longrope) {
        return longrope(headDim, theta, longrope.longFactors());
    }

    /** inv_freq[j] = 1 / (factor[j] · theta^(2j / headDim)), in F32 in this order like transformers. */
    private static float[] longrope(int headDim, double theta, List<Double> factors) {
        float[] inverse = new float[headDim / 2];
        if (factors.size() != inverse.length) {
            throw new IllegalArgumentException("rope_scaling has " + factors.size()
                    + " longrope factors but the head has " + inverse.length + " rotated pairs");
        }
        for (int j = 0; j < inverse.length; j++) {
            float base = (float) Math.pow((float) theta, (float) (2 * j) / headDim);
            inverse[j] = 1f / (factors.get(j).floatValue() * base);
        }
        return inverse;
    }

    /**
     * Llama 3.1: wavelengths longer than original/lowFreqFactor are stretched by factor, shorter than
     * original/highFreqFactor are kept, and the band between is interpolated.
     */
    private static float[] llama3(float[] inverse, RopeScaling s) {
        double lowFreqWavelength = s.originalContextLength() / s.lowFreqFactor();
        double highFreqWavelength = s.originalContextLength() / s.highFreqFactor();
        for (int j = 0; j < inverse.length; j++) {
            double wavelength = 2 * Math.PI / inverse[j];
            if (wavelength > lowFreqWavelength) {
                inverse[j] = (float) (inverse[j] / s.factor());
            } else if (wavelength >= highFreqWavelength) {
                double smooth = (s.originalContextLength() / wavelength - s.lowFreqFactor())
                        / (s.highFreqFactor() - s.lowFreqFactor());
                inverse[j] = (float) ((1 - smooth) * inverse[j] / s.factor() + smooth * inverse[j]);
            }
        }
        return inverse;
    }
}
