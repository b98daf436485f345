package io.zse.model;

import java.util.List;

/**
 * RoPE frequency scaling from Hugging Face {@code rope_scaling} / {@code rope_parameters}, or from a GGUF file's
 * per-frequency divisors.
 *
 * @param type                  "llama3", "linear", "factors" or "longrope"
 * @param factor                position (linear) or wavelength (llama3) scale factor; longrope: the attention factor
 *                              (transformers multiplies cos and sin by it, so q·k by its square)
 * @param lowFreqFactor         llama3 only
 * @param highFreqFactor        llama3 only
 * @param originalContextLength llama3 and longrope: the context the model was pre-trained with
 * @param frequencyFactors      factors: one divisor per rotated pair (headDim / 2), as llama.cpp's
 *                              {@code rope_freqs.weight} stores them; longrope: the short factors; empty otherwise
 * @param longFactors           longrope only: the long factors, one per rotated pair; empty otherwise
 * @param factorInWeights       longrope only: q and k rows were multiplied by the attention factor when converted
 *                              (files of the first Phi-3 imports), so the engine does not apply it again
 */
public record RopeScaling(String type, double factor, double lowFreqFactor, double highFreqFactor,
                          int originalContextLength, List<Double> frequencyFactors, List<Double> longFactors,
                          boolean factorInWeights) {
    public RopeScaling {
        frequencyFactors = List.copyOf(frequencyFactors);
        longFactors = List.copyOf(longFactors);
    }

    public RopeScaling(String type, double factor, double lowFreqFactor, double highFreqFactor,
                       int originalContextLength) {
        this(type, factor, lowFreqFactor, highFreqFactor, originalContextLength, List.of(), List.of(), false);
    }

    public static RopeScaling linear(double factor) {
        return new RopeScaling("linear", factor, 0, 0, 0);
    }

    public static RopeScaling llama3(double factor, double lowFreqFactor, double highFreqFactor,
                                     int originalContextLength) {
        return new RopeScaling("llama3", factor, lowFreqFactor, highFreqFactor, originalContextLength);
    }

    /**
     * Phi-3's LongRoPE (Hugging Face {@code longrope}, formerly {@code su}): each pair's base frequency times its own
     * factor, then inverted, as transformers computes it; the short factors within the original context, the long
     * ones beyond it (which positions get which: {@link LongRope}). The attention factor is applied by the engine
     * (weights keep their bits).
     */
    public static RopeScaling longrope(double attentionFactor, List<Double> shortFactors, List<Double> longFactors,
                                       int originalContextLength) {
        return new RopeScaling("longrope", attentionFactor, 0, 0, originalContextLength, shortFactors, longFactors,
                false);
    }

    /** Each pair's inverse frequency divided by its own factor (factor holds the largest, for reports). */
    public static RopeScaling factors(List<Double> frequencyFactors) {
        double max = frequencyFactors.stream().mapToDouble(Double::doubleValue).max().orElse(1);
        return new RopeScaling("factors", max, 0, 0, 0, frequencyFactors, List.of(), false);
    }
}
