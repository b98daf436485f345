package io.zse.tokenizer;

import java.util.List;

/** Applies post-processors in order. */
record SequencePostProcessor(List<PostProcessor> steps) implements PostProcessor {
    @Override
    public int[] process(int[] ids, boolean addSpecialTokens) {
        for (PostProcessor step : steps) {
            ids = step.process(ids, addSpecialTokens);
        }
        return ids;
    }
}
