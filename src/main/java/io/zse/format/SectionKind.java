package io.zse.format;

/** Kinds of metadata section (docs/zse-format.md, "Header"). */
public enum SectionKind {
    CONFIG(1, "config"),
    TENSOR_INDEX(2, "tensor-index"),
    HF_CONFIG(3, "hf-config"),
    TOKENIZER(4, "tokenizer"),
    TOKENIZER_CONFIG(5, "tokenizer-config"),
    GENERATION_CONFIG(6, "generation-config"),
    SPECIAL_TOKENS_MAP(7, "special-tokens-map"),
    CONVERSION(8, "conversion"),
    TOKENIZER_COMPILED(9, "tokenizer-compiled");

    private final int code;
    private final String label;

    SectionKind(int code, String label) {
        this.code = code;
        this.label = label;
    }

    public int code() {
        return code;
    }

    public String label() {
        return label;
    }

    /** Null for kinds this reader does not know (newer minor versions may add some; they are skipped). */
    public static SectionKind fromCode(int code) {
        for (SectionKind k : values()) {
            if (k.code == code) {
                return k;
            }
        }
        return null;
    }
}
