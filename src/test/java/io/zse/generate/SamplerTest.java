package io.zse.generate;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SamplerTest {
    // Probabilities at temperature 1, tokens 0..4: about 0.09, 0.23, 0.64, 0.03, 0.01.
    private static final float[] LOGITS = {1f, 2f, 3f, 0f, -1f};
    private static final int[] NONE = {};

    private static Set<Integer> drawn(SamplingParameters p, int draws) {
        Sampler sampler = new Sampler(p, 7);
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < draws; i++) {
            seen.add(sampler.sample(LOGITS, NONE).token());
        }
        return seen;
    }

    @Test
    void greedyTakesTheLargestLogit() {
        assertEquals(2, new Sampler(SamplingParameters.GREEDY, 1).sample(LOGITS, NONE).token());
    }

    @Test
    void theSameSeedGivesTheSameTokens() {
        Sampler a = new Sampler(SamplingParameters.temperature(1.5), 123);
        Sampler b = new Sampler(SamplingParameters.temperature(1.5), 123);
        for (int i = 0; i < 200; i++) {
            assertEquals(a.sample(LOGITS, NONE).token(), b.sample(LOGITS, NONE).token());
        }
    }

    @Test
    void temperatureSamplingFollowsTheSoftmax() {
        Sampler sampler = new Sampler(SamplingParameters.temperature(1), 99);
        int[] counts = new int[LOGITS.length];
        int draws = 100_000;
        for (int i = 0; i < draws; i++) {
            counts[sampler.sample(LOGITS, NONE).token()]++;
        }
        double normalizer = 0;
        for (float l : LOGITS) {
            normalizer += Math.exp(l);
        }
        for (int t = 0; t < LOGITS.length; t++) {
            assertEquals(Math.exp(LOGITS[t]) / normalizer, counts[t] / (double) draws, 0.01, "token " + t);
        }
    }

    @Test
    void truncationsKeepOnlyTheLikelyTokens() {
        SamplingParameters hot = SamplingParameters.temperature(5);
        assertEquals(Set.of(0, 1, 2, 3, 4), drawn(hot, 2000));
        assertEquals(Set.of(2), drawn(hot.withTopK(1), 200));
        assertEquals(Set.of(1, 2), drawn(hot.withTopK(2), 2000));
        // At temperature 1, token 2 alone has 0.64 and with token 1 0.88.
        assertEquals(Set.of(2), drawn(SamplingParameters.temperature(1).withTopP(0.6), 500));
        assertEquals(Set.of(1, 2), drawn(SamplingParameters.temperature(1).withTopP(0.8), 2000));
        // min-p 0.3: tokens below 0.3 · p(2) are dropped; p(1)/p(2) = e^-1 = 0.37 stays, p(0)/p(2) = 0.14 goes.
        assertEquals(Set.of(1, 2), drawn(SamplingParameters.temperature(1).withMinP(0.3), 2000));
    }

    @Test
    void penaltiesPushSeenTokensDown() {
        int[] history = {2, 2};
        Sampler repetition = new Sampler(SamplingParameters.GREEDY.withPenalties(2, 0, 0), 1);
        assertEquals(1, repetition.sample(LOGITS, history).token(), "3/2 = 1.5 < 2");
        Sampler presence = new Sampler(SamplingParameters.GREEDY.withPenalties(1, 1.5, 0), 1);
        assertEquals(1, presence.sample(LOGITS, history).token(), "3 - 1.5 < 2");
        Sampler frequency = new Sampler(SamplingParameters.GREEDY.withPenalties(1, 0, 0.6), 1);
        assertEquals(1, frequency.sample(LOGITS, history).token(), "3 - 2 * 0.6 < 2");
        Sampler once = new Sampler(SamplingParameters.GREEDY.withPenalties(1, 0, 0.6), 1);
        assertEquals(2, once.sample(LOGITS, new int[]{2}).token(), "3 - 0.6 > 2");
        Sampler interleaved = new Sampler(SamplingParameters.GREEDY.withPenalties(1, 0, 0.6), 1);
        assertEquals(2, interleaved.sample(LOGITS, new int[]{2, 1, 2}).token(), "3 - 2 * 0.6 > 2 - 0.6");
        assertEquals(1, interleaved.sample(LOGITS, new int[]{2, 1, 2, 3, 2}).token(), "3 - 3 * 0.6 < 2 - 0.6");
    }

    /** The prompt counts for the repetition penalty only: presence and frequency count what was generated. */
    @Test
    void presenceAndFrequencyPenaltiesCountOnlyGeneratedTokens() {
        int[] promptThenNothing = {2, 2};
        Sampler presence = new Sampler(SamplingParameters.GREEDY.withPenalties(1, 1.5, 0.6), 1);
        assertEquals(2, presence.sample(LOGITS, 0, LOGITS.length, promptThenNothing, 2).token(), "no penalty yet");
        assertEquals(1, presence.sample(LOGITS, 0, LOGITS.length, new int[]{2, 2, 2}, 2).token(), "3 - 1.5 - 0.6 < 2");
        Sampler repetition = new Sampler(SamplingParameters.GREEDY.withPenalties(2, 0, 0), 1);
        assertEquals(1, repetition.sample(LOGITS, 0, LOGITS.length, promptThenNothing, 2).token(), "3/2 = 1.5 < 2");
        assertEquals(2, new Sampler(SamplingParameters.GREEDY.withPenalties(1, 0, 0.6), 1)
                .sample(LOGITS, 0, LOGITS.length, new int[]{2, 2, 2, 2}, 3).token(), "3 - 0.6 > 2: one generated");
    }

    @Test
    void reportsModelLogprobsAndTopAlternatives() {
        Sampler sampler = new Sampler(SamplingParameters.GREEDY.withPenalties(2, 0, 0).withTopLogprobs(3), 1);
        Sampler.Choice choice = sampler.sample(LOGITS, new int[]{2});
        double normalizer = 0;
        for (float l : LOGITS) {
            normalizer += Math.exp(l);
        }
        assertEquals(1, choice.token());
        assertEquals(2 - Math.log(normalizer), choice.logprob(), 1e-6);
        assertEquals(3, choice.top().size());
        assertEquals(2, choice.top().get(0).token());
        assertEquals(1, choice.top().get(1).token());
        assertEquals(0, choice.top().get(2).token());
        assertEquals(3 - Math.log(normalizer), choice.top().get(0).logprob(), 1e-6);
    }

    @Test
    void rejectsOutOfRangeParameters() {
        assertEquals("temperature must be >= 0, not -1.0", assertThrows(IllegalArgumentException.class,
                () -> SamplingParameters.temperature(-1)).getMessage());
        assertEquals("top_logprobs must be in [0, 20], not 50", assertThrows(IllegalArgumentException.class,
                () -> SamplingParameters.GREEDY.withTopLogprobs(50)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> SamplingParameters.temperature(1).withTopP(0));
        assertThrows(IllegalArgumentException.class, () -> SamplingParameters.temperature(1).withTopK(-1));
        assertThrows(IllegalArgumentException.class, () -> SamplingParameters.GREEDY.withPenalties(0, 0, 0));
        assertNotEquals(SamplingParameters.GREEDY, SamplingParameters.temperature(1));
        assertTrue(SamplingParameters.GREEDY.isGreedy());
    }

    @Test
    void aRowOfABatchSamplesAsTheSameRowAlone() {
        SplittableRandom random = new SplittableRandom(5);
        int vocab = 50;
        float[] batch = new float[3 * vocab];
        for (int i = 0; i < batch.length; i++) {
            batch[i] = (float) random.nextDouble(-4, 4);
        }
        float[] row = Arrays.copyOfRange(batch, vocab, 2 * vocab);
        float[] before = batch.clone();
        int[] history = {3, 7, 7, 12};
        for (SamplingParameters p : new SamplingParameters[]{SamplingParameters.GREEDY,
                new SamplingParameters(0, 0, 1, 0, 1.3, 0.5, 0.2, 3), new SamplingParameters(0.9, 20, 0.9, 0.01, 1, 0, 0, 5)}) {
            Sampler.Choice alone = new Sampler(p, 42).sample(row, history);
            Sampler.Choice inBatch = new Sampler(p, 42).sample(batch, vocab, vocab, history, 0);
            assertEquals(alone, inBatch, p.toString());
        }
        assertTrue(Arrays.equals(before, batch), "the batch's logits are not modified");
    }

    /**
     * A device draw takes the uniform the host draw would: the stream of uniforms is the host's whether each step is
     * drawn on the device, handed back to the host (which then uses that same uniform), or drawn on the host.
     */
    @Test
    void deviceDrawsTakeTheHostSamplersUniforms() {
        SamplingParameters p = SamplingParameters.temperature(1.3).withTopK(4).withTopP(0.95);
        Sampler host = new Sampler(p, 99);
        Sampler device = new Sampler(p, 99);
        SplittableRandom uniforms = new SplittableRandom(99);
        double[] parameters = new double[2 * Sampler.DEVICE_PARAMETERS];
        for (int step = 0; step < 60; step++) {
            int expected = host.sample(LOGITS, NONE).token();
            double u = uniforms.nextDouble();
            device.deviceDraw(parameters, Sampler.DEVICE_PARAMETERS);
            assertEquals(u, parameters[Sampler.DEVICE_PARAMETERS + 4], "step " + step + "'s uniform");
            assertEquals(1.3, parameters[Sampler.DEVICE_PARAMETERS]);
            assertEquals(4, parameters[Sampler.DEVICE_PARAMETERS + 1]);
            if (step % 3 == 0) { // handed back: the host draws with the uniform already taken
                device.deviceDraw(parameters, 0); // asked again (a failed pass): the same uniform
                assertEquals(u, parameters[4]);
                assertEquals(expected, device.sample(LOGITS, NONE).token(), "step " + step + " on the host");
            } else {
                assertTrue(Float.isNaN(device.drawn(expected).logprob()));
            }
        }
    }

    @Test
    void penaltiesAndLogprobsKeepTheDrawOnTheHost() {
        assertTrue(new Sampler(SamplingParameters.temperature(1), 1).drawableOnDevice(new int[]{2}, 1));
        assertTrue(!new Sampler(SamplingParameters.temperature(1).withPenalties(1.2, 0, 0), 1)
                .drawableOnDevice(new int[]{2}, 1));
        // a presence penalty has nothing to count until a token is generated
        Sampler presence = new Sampler(SamplingParameters.temperature(1).withPenalties(1, 0.5, 0), 1);
        assertTrue(presence.drawableOnDevice(new int[]{2}, 1));
        assertTrue(!presence.drawableOnDevice(new int[]{2, 3}, 1));
        assertTrue(!new Sampler(SamplingParameters.GREEDY.withTopLogprobs(2), 1).drawableOnDevice(NONE, 0));
    }
}
