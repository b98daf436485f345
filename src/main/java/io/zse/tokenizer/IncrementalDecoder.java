package io.zse.tokenizer;

import java.util.Arrays;

/**
 * Decodes generated ids one at a time. Text is emitted only once no later id can change it: never half a UTF-8
 * character, never a byte run that may still grow. Everything emitted, followed by {@link #flush()}, always equals
 * {@link Tokenizer#decode} of the whole sequence; with a context (the prompt the ids continue), what the sequence
 * adds to the text of the context's last ids.
 *
 * <p>It decodes a window of recent ids and emits what is new. When the window ends cleanly it is cut down to its
 * last id (an "anchor" whose own text is subtracted), which keeps the work per id constant. The anchor's text must be
 * non-empty so that start-of-sequence rules (Strip, Metaspace) spend themselves on the anchor, not on later text.
 */
public final class IncrementalDecoder {
    private static final int COMPACT_AT = 16;

    private final Tokenizer tokenizer;
    private final boolean skipSpecialTokens;
    private int[] window = new int[COMPACT_AT * 2];
    private int size;
    private int emitted; // chars of decode(window) already returned

    IncrementalDecoder(Tokenizer tokenizer, boolean skipSpecialTokens, int[] context) {
        this.tokenizer = tokenizer;
        this.skipSpecialTokens = skipSpecialTokens;
        anchorOn(context);
    }

    /**
     * Starts the window with the context's last ids, their text counted as emitted, so that start-of-sequence rules
     * spend themselves there as they would decoding the context with the ids (a lone SentencePiece space token takes
     * the strip, though its text is empty). A context that ends inside a character gives no anchor.
     */
    private void anchorOn(int[] context) {
        int from = Math.max(0, context.length - COMPACT_AT);
        if (from == context.length) {
            return;
        }
        String text = tokenizer.decode(context, from, context.length, skipSpecialTokens);
        if (isFinal(text, context[context.length - 1])) {
            size = context.length - from;
            System.arraycopy(context, from, window, 0, size);
            emitted = text.length();
        }
    }

    /** Takes the next id and returns the text that became final (often "", never null). */
    public String next(int id) {
        if (size == window.length) {
            window = Arrays.copyOf(window, size * 2);
        }
        window[size++] = id;
        String text = tokenizer.decode(window, 0, size, skipSpecialTokens);
        if (!isFinal(text, id)) {
            return "";
        }
        String fresh = text.substring(emitted);
        emitted = text.length();
        if (size >= COMPACT_AT) {
            compact(id);
        }
        return fresh;
    }

    /** Returns whatever is still held back (the end of the sequence is final by definition) and starts over. */
    public String flush() {
        String text = tokenizer.decode(window, 0, size, skipSpecialTokens);
        String rest = text.substring(Math.min(emitted, text.length()));
        size = 0;
        emitted = 0;
        return rest;
    }

    private boolean isFinal(String text, int lastId) {
        // a trailing U+FFFD may be an incomplete character; a byte token may join the bytes after it
        return text.length() >= emitted && !text.endsWith("\uFFFD") && !tokenizer.continuesByteRun(lastId);
    }

    private void compact(int lastId) {
        int[] anchor = {lastId};
        String anchorText = tokenizer.decode(anchor, 0, 1, skipSpecialTokens);
        if (anchorText.isEmpty() || anchorText.endsWith("\uFFFD")) {
            return;
        }
        window[0] = lastId;
        size = 1;
        emitted = anchorText.length();
    }
}
