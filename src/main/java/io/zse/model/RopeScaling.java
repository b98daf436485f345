package io.zse.model;

/**
 * RoPE frequency scaling from Hugging Face {@code rope_scaling} / {@code rope_parameters}.
 *
 * @param type                  "llama3" or "linear"
 * @param factor                position (linear) or wavelength (llama3) scale factor
 * @param lowFreqFactor         llama3 only
 * @param highFreqFactor        llama3 only
 * @param originalContextLength llama3 only: the context the model was pre-trained with
 */
public record RopeScaling(String type, double factor, double lowFreqFactor, double highFreqFactor,
                          int originalContextLength) {
    public static RopeScaling linear(double factor) {
        return new RopeScaling("linear", factor, 0, 0, 0);
    }

    public static RopeScaling llama3(double factor, double lowFreqFactor, double highFreqFactor,
                                     int originalContextLength) {
        return new RopeScaling("llama3", factor, lowFreqFactor, highFreqFactor, originalContextLength);
    }
}
