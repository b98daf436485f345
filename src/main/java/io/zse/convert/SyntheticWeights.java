package io.zse.convert;

import java.util.SplittableRandom;

/**
 * Deterministic random values for one tensor of a synthetic checkpoint, roughly like a freshly initialised model:
 * matrices N(0, 0.02), norm weights N(1, 0.02), biases N(0, 0.01). Speed matters more than the exact distribution,
 * so a normal sample is the sum of four 16-bit uniforms (Irwin-Hall, within 3.5 standard deviations).
 */
final class SyntheticWeights {
    static final float MATRIX_STD = 0.02f;
    static final float NORM_STD = 0.02f;
    static final float BIAS_STD = 0.01f;

    /** Irwin-Hall(4) of 16-bit uniforms: sum has mean 4 * 32767.5 and variance 4 * (65536^2 - 1) / 12. */
    private static final float SUM_MEAN = 4 * 32767.5f;
    private static final float SUM_INV_STD = (float) (1 / Math.sqrt(4 * (65536.0 * 65536.0 - 1) / 12));

    private final SplittableRandom random;
    private final float mean;
    private final float std;

    private SyntheticWeights(long seed, float mean, float std) {
        this.random = new SplittableRandom(seed);
        this.mean = mean;
        this.std = std;
    }

    /** The generator for a tensor; its values depend only on the seed and the tensor's name, not on file layout. */
    static SyntheticWeights forTensor(SafetensorsTensor tensor, long seed) {
        long tensorSeed = seed * 0x9E3779B97F4A7C15L + tensor.name().hashCode();
        String name = tensor.name();
        if (name.endsWith(".bias")) {
            return new SyntheticWeights(tensorSeed, 0f, BIAS_STD);
        }
        if (tensor.shape().length == 1 && name.endsWith("norm.weight")) {
            return new SyntheticWeights(tensorSeed, 1f, NORM_STD);
        }
        return new SyntheticWeights(tensorSeed, 0f, MATRIX_STD);
    }

    /** Fills {@code out[0..count)} with the next values. */
    void fill(float[] out, int count) {
        float scale = std * SUM_INV_STD;
        for (int i = 0; i < count; i++) {
            long r = random.nextLong();
            long sum = (r & 0xffff) + ((r >>> 16) & 0xffff) + ((r >>> 32) & 0xffff) + (r >>> 48);
            out[i] = mean + (sum - SUM_MEAN) * scale;
        }
    }
}
