package io.zse.tokenizer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.OptionalInt;

/**
 * A Hugging Face tokenizer (BPE model, byte-level or SentencePiece-style) read from {@code tokenizer.json}, giving the
 * same ids and text as the Python {@code tokenizers} library. Immutable and safe to share between threads.
 */
public final class Tokenizer {
    private final Pipeline pipeline;
    private final AddedVocabulary added;
    private final BpeModel model;
    private final BitSet special = new BitSet();
    private final BitSet byteRunTokens = new BitSet();
    private final int vocabSize;

    Tokenizer(Pipeline pipeline, BpeModel model, List<AddedToken> addedTokens) {
        this.pipeline = pipeline;
        this.model = model;
        this.added = new AddedVocabulary(addedTokens, pipeline.normalizer());
        int size = model.vocab().size();
        for (AddedToken token : addedTokens) {
            if (added.isSkippedAsSpecial(token.id())) {
                special.set(token.id());
            }
            size = Math.max(size, token.id() + 1);
        }
        this.vocabSize = size;
        if (pipeline.decodesByteRuns()) {
            for (int id = 0; id < model.vocab().size(); id++) {
                String token = model.vocab().token(id);
                if (token != null && added.byId(id) == null && ByteFallbackDecoder.byteOf(token) >= 0) {
                    byteRunTokens.set(id);
                }
            }
        }
    }

    /** Reads a {@code tokenizer.json} file. */
    public static Tokenizer load(Path path) {
        try {
            return fromJson(Files.readAllBytes(path));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read tokenizer " + path + ": " + e.getMessage(), e);
        }
    }

    /** Reads the UTF-8 bytes of a {@code tokenizer.json} document. */
    public static Tokenizer fromJson(byte[] json) {
        return TokenizerJsonReader.read(json);
    }

    /** Reads a {@code tokenizer.json} document. */
    public static Tokenizer fromJson(String json) {
        return fromJson(json.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /** Reads the compact form written by {@link #toBinary()}. */
    public static Tokenizer fromBinary(byte[] binary) {
        return TokenizerBinaryFormat.read(binary);
    }

    /** A compact precompiled form that loads several times faster than the JSON. */
    public byte[] toBinary() {
        return TokenizerBinaryFormat.write(this);
    }

    public int[] encode(String text, boolean addSpecialTokens) {
        IntList ids = new IntList(text.length() / 3 + 4);
        List<Piece> words = new ArrayList<>();
        for (AddedVocabulary.Segment segment : added.split(text, pipeline.normalizer())) {
            if (segment.isToken()) {
                ids.add(segment.id());
                continue;
            }
            Piece piece = new Piece(segment.text(), segment.atOrigin());
            if (pipeline.preTokenizer() == null) {
                model.tokenize(piece.text(), ids);
                continue;
            }
            words.clear();
            pipeline.preTokenizer().split(piece, words);
            for (Piece word : words) {
                model.tokenize(word.text(), ids);
            }
        }
        int[] result = ids.toArray();
        return pipeline.postProcessor() == null ? result : pipeline.postProcessor().process(result, addSpecialTokens);
    }

    public String decode(int[] ids, boolean skipSpecialTokens) {
        return decode(ids, 0, ids.length, skipSpecialTokens);
    }

    String decode(int[] ids, int from, int to, boolean skipSpecialTokens) {
        List<String> tokens = new ArrayList<>(to - from);
        for (int i = from; i < to; i++) {
            int id = ids[i];
            if (skipSpecialTokens && special.get(id)) {
                continue;
            }
            String token = tokenOrNull(id);
            if (token != null) {
                tokens.add(token); // Hugging Face silently drops ids it does not know
            }
        }
        if (pipeline.decoder() == null) {
            return String.join(" ", tokens);
        }
        return String.join("", pipeline.decoder().decodeChain(tokens));
    }

    /** A decoder for generated ids that emits text as soon as it is final. */
    public IncrementalDecoder newIncrementalDecoder(boolean skipSpecialTokens) {
        return new IncrementalDecoder(this, skipSpecialTokens, new int[0]);
    }

    /**
     * A decoder for ids that continue {@code context} (a prompt): it emits what they add to the context's text, so a
     * SentencePiece token's leading space is kept where decoding the ids alone would drop it at the start (what an
     * OpenAI client appends to its prompt, and what vLLM returns).
     */
    public IncrementalDecoder newIncrementalDecoder(boolean skipSpecialTokens, int[] context) {
        return new IncrementalDecoder(this, skipSpecialTokens, context);
    }

    /** The token string of {@code id} (an added token's content, or the model's token). */
    public String token(int id) {
        String token = tokenOrNull(id);
        if (token == null) {
            throw new IllegalArgumentException("no token with id " + id);
        }
        return token;
    }

    public OptionalInt tokenId(String token) {
        AddedToken addedToken = added.byContent(token);
        if (addedToken != null) {
            return OptionalInt.of(addedToken.id());
        }
        int id = model.vocab().id(token);
        return id >= 0 ? OptionalInt.of(id) : OptionalInt.empty();
    }

    /** One past the largest id, added tokens included: the size of a model's embedding table. */
    public int vocabSize() {
        return vocabSize;
    }

    /** Whether {@code id} is dropped by {@code decode(ids, true)}. */
    public boolean isSpecial(int id) {
        return special.get(id);
    }

    public List<AddedToken> addedTokens() {
        return added.tokens();
    }

    /** Whether {@code id} is a {@code <0xNN>} token whose byte may combine with the next token's when decoded. */
    boolean continuesByteRun(int id) {
        return byteRunTokens.get(id);
    }

    Pipeline pipeline() {
        return pipeline;
    }

    BpeModel model() {
        return model;
    }

    private String tokenOrNull(int id) {
        String addedText = added.text(id);
        return addedText != null ? addedText : model.vocab().token(id);
    }
}
