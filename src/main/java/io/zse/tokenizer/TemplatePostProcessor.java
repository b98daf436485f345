package io.zse.tokenizer;

import java.util.List;

/**
 * TemplateProcessing, and also Bert/Roberta processing, which are the fixed template "cls $A sep": each template
 * item is either the sequence (null) or the ids of a special token.
 */
record TemplatePostProcessor(List<int[]> template) implements PostProcessor {
    @Override
    public int[] process(int[] ids, boolean addSpecialTokens) {
        if (!addSpecialTokens) {
            return ids;
        }
        IntList out = new IntList(ids.length + 4);
        for (int[] item : template) {
            out.addAll(item == null ? ids : item);
        }
        return out.toArray();
    }
}
