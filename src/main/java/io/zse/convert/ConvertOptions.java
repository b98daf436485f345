package io.zse.convert;

import io.zse.format.TensorType;

/**
 * What {@code zse convert} was asked for.
 *
 * @param quant      storage type of the 2-D weights
 * @param groupSize  Q4 group size (32, 64 or 128); the other quantized types have fixed groups
 * @param embeddings type of {@code model.embed_tokens.weight}, or null for the default (docs/zse-format.md)
 * @param lmHead     type of {@code lm_head.weight} (and of tied embeddings), or null for the default
 * @param force      replace an existing output file
 * @param interleave store Q8 and Q4 weights in layout interleaved-16 (InterleavedRows), which the native CPU
 *                   kernels multiply fastest; otherwise row-groups
 */
public record ConvertOptions(TensorType quant, int groupSize, TensorType embeddings, TensorType lmHead,
                             boolean force, boolean interleave) {

    /** Row-groups throughout. */
    public ConvertOptions(TensorType quant, int groupSize, TensorType embeddings, TensorType lmHead, boolean force) {
        this(quant, groupSize, embeddings, lmHead, force, false);
    }

    public ConvertOptions {
        for (TensorType t : new TensorType[]{quant, embeddings, lmHead}) {
            if (t == TensorType.Q4_K || t == TensorType.Q5_K || t == TensorType.Q5) {
                throw new IllegalArgumentException(t.name().toLowerCase() + " holds ggml's "
                        + (t == TensorType.Q5 ? "Q5_0/Q5_1" : "K-quant") + " bits and is written only when importing a "
                        + "GGUF; for a checkpoint use q8, q6_k, q4 or nf4");
            }
            if (t == TensorType.TERNARY) {
                throw new IllegalArgumentException("ternary is BitNet b1.58's own weight type: a BitNet checkpoint's "
                        + "projections become TERNARY whatever --quant says, and nothing else can be stored as it");
            }
        }
        if (quant == TensorType.Q4 && !quant.allowsGroupSize(groupSize)) {
            throw new IllegalArgumentException("--group-size " + groupSize + " is not allowed for q4 (use 32, 64 or 128)");
        }
        if (quant != TensorType.Q4 && groupSize != 0 && groupSize != quant.defaultGroupSize()) {
            throw new IllegalArgumentException("--group-size applies to q4 only; " + quant.name().toLowerCase()
                    + (quant.isQuantized() ? " always uses groups of " + quant.defaultGroupSize() : " has no groups"));
        }
    }

    public static ConvertOptions of(TensorType quant) {
        return new ConvertOptions(quant, quant.defaultGroupSize(), null, null, false);
    }

    private boolean fourBit() {
        return quant == TensorType.Q4 || quant == TensorType.NF4;
    }

    /**
     * The type of the token embeddings, whose rows (and the output layer's) are {@code rowLength} long: with tied
     * embeddings the output layer's; otherwise Q8 under the 4-bit types (the layer most sensitive to quantization).
     */
    TensorType embeddingsType(boolean tied, long rowLength) {
        if (tied) {
            return lmHeadType(rowLength);
        }
        return embeddings != null ? embeddings : fourBit() ? TensorType.Q8 : quant;
    }

    /**
     * The type of the output layer, rows of {@code rowLength}: under the 4-bit types by default Q6_K, the type
     * llama-quantize gives the output of its 4-bit files (6.56 bits a weight: a fifth fewer bytes than Q8 on the
     * largest matrix every token reads), or Q8 where rows hold no whole super-block of 256.
     */
    TensorType lmHeadType(long rowLength) {
        if (lmHead != null || embeddings != null) {
            return lmHead != null ? lmHead : embeddings;
        }
        if (!fourBit()) {
            return quant;
        }
        return rowLength % TensorType.Q6_K.defaultGroupSize() == 0 ? TensorType.Q6_K : TensorType.Q8;
    }

    public ConvertOptions withInterleave(boolean interleave) {
        return new ConvertOptions(quant, groupSize, embeddings, lmHead, force, interleave);
    }

    /** Group size a tensor of {@code type} is written with. */
    int groupSizeFor(TensorType type) {
        return type == TensorType.Q4 && quant == TensorType.Q4 ? groupSize : type.defaultGroupSize();
    }
}
