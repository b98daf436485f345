package io.zse.serve;

import io.zse.format.SectionKind;
import io.zse.format.SmallJsonParser;
import io.zse.format.ZseFile;

/**
 * How a sequence's final hidden states become one embedding: the mean over its positions, or its last position's
 * (what embedding models built on decoders, such as Qwen3-Embedding, use). The converter records the model's choice
 * (sentence-transformers' {@code 1_Pooling/config.json}) in the conversion section; without one it is the mean.
 */
public enum Pooling {
    MEAN("mean"), LAST("last");

    private final String label;

    Pooling(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    public static Pooling of(ZseFile file) {
        String recorded = file.sectionBytes(SectionKind.CONVERSION)
                .map(bytes -> SmallJsonParser.parse(new String(bytes, java.nio.charset.StandardCharsets.UTF_8),
                        "conversion"))
                .map(o -> o.path("pooling").asText("mean")).orElse("mean");
        return recorded.equals("last") ? LAST : MEAN;
    }
}
