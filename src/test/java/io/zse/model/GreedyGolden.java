package io.zse.model;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One greedy run recorded by transformers (tools/reference/): prompt ids, the greedy ids, and the top-5 logits at
 * some steps. {@link #assertReproducedBy} decodes the same prompt with our model and compares.
 */
record GreedyGolden(String prompt, int[] promptIds, int[] greedyIds, List<TopLogits> logits) {

    /** The five largest logits of the distribution computed at token {@code position}, largest first. */
    record TopLogits(int position, int[] ids, double[] values) {
    }

    static GreedyGolden of(JsonNode c) {
        List<TopLogits> tops = new ArrayList<>();
        for (JsonNode at : c.get("logits")) {
            JsonNode values = at.get("top5_logits");
            double[] v = new double[values.size()];
            for (int i = 0; i < v.length; i++) {
                v[i] = values.get(i).asDouble();
            }
            tops.add(new TopLogits(at.get("position").asInt(), LlamaModelGoldenTest.ints(at.get("top5_ids")), v));
        }
        return new GreedyGolden(c.get("prompt").asText(), LlamaModelGoldenTest.ints(c.get("prompt_ids")),
                LlamaModelGoldenTest.ints(c.get("greedy_ids")), tops);
    }

    /** An architecture golden's runs: its prompt's, then those of its "further_cases" (tools/reference/tiny_models.py). */
    static List<GreedyGolden> allOf(JsonNode golden) {
        List<GreedyGolden> runs = new ArrayList<>(List.of(of(golden)));
        golden.path("further_cases").forEach(c -> runs.add(of(c)));
        return runs;
    }

    /** The same golden cut to its first {@code count} greedy ids and the logits recorded while computing them. */
    GreedyGolden firstTokens(int count) {
        int lastPosition = promptIds.length - 1 + count - 1;
        return new GreedyGolden(prompt, promptIds, java.util.Arrays.copyOf(greedyIds, Math.min(count, greedyIds.length)),
                logits.stream().filter(t -> t.position() <= lastPosition).toList());
    }

    /**
     * Greedy-decodes the prompt and requires every id to match and each recorded logit to be within
     * {@code tolerance · max(1, |logit|)}, with the same top-5 ids in the same order.
     *
     * @return the largest |logit difference| seen, for the report
     */
    double assertReproducedBy(LlamaModel model, double tolerance) {
        List<float[]> steps = new ArrayList<>();
        int[] actual = LlamaModelGoldenTest.greedy(model, promptIds, greedyIds.length, steps);
        assertArrayEquals(greedyIds, actual, "greedy ids for prompt " + prompt);
        double maxDiff = 0;
        for (TopLogits top : logits) {
            float[] mine = steps.get(top.position() - (promptIds.length - 1));
            for (int r = 0; r < top.ids().length; r++) {
                double want = top.values()[r];
                double got = mine[top.ids()[r]];
                maxDiff = Math.max(maxDiff, Math.abs(got - want));
                assertTrue(Math.abs(got - want) <= tolerance * Math.max(1, Math.abs(want)),
                        "logit of " + top.ids()[r] + " at position " + top.position() + ": " + got + " vs " + want);
            }
            // The same ranking, but for ties closer than the tolerance, whose order the summation order decides:
            // the id ranked r-th here must hold transformers' r-th logit
            int[] ranked = LlamaModelGoldenTest.topIds(mine, top.ids().length);
            for (int r = 0; r < ranked.length; r++) {
                double want = top.values()[r];
                assertTrue(ranked[r] == top.ids()[r]
                                || Math.abs(mine[ranked[r]] - want) <= 2 * tolerance * Math.max(1, Math.abs(want)),
                        "top-5 ids at position " + top.position() + ": " + Arrays.toString(ranked) + " vs "
                                + Arrays.toString(top.ids()) + " (logits " + Arrays.toString(top.values()) + ")");
            }
        }
        return maxDiff;
    }
}
