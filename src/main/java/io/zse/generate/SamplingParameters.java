package io.zse.generate;

/**
 * How the next token is chosen (OpenAI / vLLM semantics).
 *
 * @param temperature        0 for greedy; logits are divided by it otherwise
 * @param topK               keep the k most likely tokens; 0 keeps all
 * @param topP               keep the smallest set whose probability reaches topP; 1 keeps all
 * @param minP               drop tokens less likely than minP times the most likely one; 0 keeps all
 * @param repetitionPenalty  Hugging Face style: a seen token's logit is divided (if positive) or multiplied by it; 1 = off
 * @param presencePenalty    subtracted once from a seen token's logit; 0 = off
 * @param frequencyPenalty   subtracted per occurrence of a seen token; 0 = off
 * @param topLogprobs        how many most likely alternatives to report with each choice (0..20)
 */
public record SamplingParameters(double temperature, int topK, double topP, double minP, double repetitionPenalty,
                                 double presencePenalty, double frequencyPenalty, int topLogprobs) {

    public static final SamplingParameters GREEDY = new SamplingParameters(0, 0, 1, 0, 1, 0, 0, 0);

    public SamplingParameters {
        check(temperature >= 0 && Double.isFinite(temperature), "temperature must be >= 0", temperature);
        check(topK >= 0, "top_k must be >= 0 (0 = off)", topK);
        check(topP > 0 && topP <= 1, "top_p must be in (0, 1]", topP);
        check(minP >= 0 && minP <= 1, "min_p must be in [0, 1]", minP);
        check(repetitionPenalty > 0 && Double.isFinite(repetitionPenalty), "repetition_penalty must be > 0", repetitionPenalty);
        check(presencePenalty >= -2 && presencePenalty <= 2, "presence_penalty must be in [-2, 2]", presencePenalty);
        check(frequencyPenalty >= -2 && frequencyPenalty <= 2, "frequency_penalty must be in [-2, 2]", frequencyPenalty);
        check(topLogprobs >= 0 && topLogprobs <= 20, "top_logprobs must be in [0, 20]", topLogprobs);
    }

    /** A Number, so that counts print as 5 and not 5.0. */
    private static void check(boolean ok, String rule, Number value) {
        if (!ok) {
            throw new IllegalArgumentException(rule + ", not " + value);
        }
    }

    public static SamplingParameters temperature(double temperature) {
        return new SamplingParameters(temperature, 0, 1, 0, 1, 0, 0, 0);
    }

    public SamplingParameters withTopK(int k) {
        return new SamplingParameters(temperature, k, topP, minP, repetitionPenalty, presencePenalty, frequencyPenalty, topLogprobs);
    }

    public SamplingParameters withTopP(double p) {
        return new SamplingParameters(temperature, topK, p, minP, repetitionPenalty, presencePenalty, frequencyPenalty, topLogprobs);
    }

    public SamplingParameters withMinP(double p) {
        return new SamplingParameters(temperature, topK, topP, p, repetitionPenalty, presencePenalty, frequencyPenalty, topLogprobs);
    }

    public SamplingParameters withPenalties(double repetition, double presence, double frequency) {
        return new SamplingParameters(temperature, topK, topP, minP, repetition, presence, frequency, topLogprobs);
    }

    public SamplingParameters withTopLogprobs(int n) {
        return new SamplingParameters(temperature, topK, topP, minP, repetitionPenalty, presencePenalty, frequencyPenalty, n);
    }

    public boolean isGreedy() {
        return temperature == 0;
    }
}
