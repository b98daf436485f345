package io.zse.tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Byte-pair encoding of one pre-tokenized word: characters become vocabulary ids (or byte-fallback / unknown ids),
 * then adjacent pairs merge lowest rank first, leftmost first among equal ranks, as Hugging Face's Word::merge_all.
 */
final class BpeModel {
    private static final int CACHE_LIMIT = 50_000;
    private static final int CACHED_WORD_LENGTH = 256;

    private final Vocabulary vocab;
    private final MergeTable merges;
    private final int unkId;
    private final boolean fuseUnk;
    private final boolean byteFallback;
    private final boolean ignoreMerges;
    private final int[] byteIds;
    private final Map<String, int[]> cache = new ConcurrentHashMap<>();

    BpeModel(Vocabulary vocab, MergeTable merges, int unkId, boolean fuseUnk, boolean byteFallback,
             boolean ignoreMerges) {
        this.vocab = vocab;
        this.merges = merges;
        this.unkId = unkId;
        this.fuseUnk = fuseUnk;
        this.byteFallback = byteFallback;
        this.ignoreMerges = ignoreMerges;
        this.byteIds = new int[256];
        for (int b = 0; b < 256; b++) {
            byteIds[b] = vocab.id(String.format("<0x%02X>", b));
        }
    }

    Vocabulary vocab() {
        return vocab;
    }

    MergeTable merges() {
        return merges;
    }

    int unkId() {
        return unkId;
    }

    boolean fuseUnk() {
        return fuseUnk;
    }

    boolean byteFallback() {
        return byteFallback;
    }

    boolean ignoreMerges() {
        return ignoreMerges;
    }

    /** Appends the ids of {@code word} to {@code out}. */
    void tokenize(String word, IntList out) {
        if (ignoreMerges) {
            int whole = vocab.id(word);
            if (whole >= 0) {
                out.add(whole);
                return;
            }
        }
        if (word.length() >= CACHED_WORD_LENGTH) {
            out.addAll(merge(word));
            return;
        }
        int[] ids = cache.get(word);
        if (ids == null) {
            ids = merge(word);
            if (cache.size() >= CACHE_LIMIT) {
                cache.clear();
            }
            cache.put(word, ids);
        }
        out.addAll(ids);
    }

    private int[] merge(String word) {
        IntList symbols = initialSymbols(word);
        int n = symbols.size();
        int[] id = symbols.toArray();
        int[] prev = new int[n];
        int[] next = new int[n];
        boolean[] gone = new boolean[n];
        for (int i = 0; i < n; i++) {
            prev[i] = i - 1;
            next[i] = i + 1 < n ? i + 1 : -1;
        }
        LongHeap queue = new LongHeap(n);
        for (int i = 0; i + 1 < n; i++) {
            push(queue, id[i], id[i + 1], i);
        }
        while (!queue.isEmpty()) {
            long top = queue.poll();
            int pos = (int) top;
            int rank = (int) (top >>> 32);
            if (gone[pos] || next[pos] < 0) {
                continue;
            }
            int right = next[pos];
            long merge = merges.get(id[pos], id[right]);
            if (merge == MergeTable.ABSENT || (int) (merge >>> 32) != rank) {
                continue; // stale entry: one side already merged into something else
            }
            id[pos] = (int) merge;
            gone[right] = true;
            next[pos] = next[right];
            if (next[right] >= 0) {
                prev[next[right]] = pos;
            }
            if (prev[pos] >= 0) {
                push(queue, id[prev[pos]], id[pos], prev[pos]);
            }
            if (next[pos] >= 0) {
                push(queue, id[pos], id[next[pos]], pos);
            }
        }
        IntList result = new IntList(n);
        for (int i = 0; i >= 0 && n > 0; i = next[i]) {
            result.add(id[i]);
        }
        return result.toArray();
    }

    private void push(LongHeap queue, int left, int right, int pos) {
        long merge = merges.get(left, right);
        if (merge != MergeTable.ABSENT) {
            queue.add((merge & 0xFFFFFFFF00000000L) | pos);
        }
    }

    /** One id per character; unknown characters become byte-fallback ids, the unknown id, or nothing. */
    private IntList initialSymbols(String word) {
        IntList symbols = new IntList(word.length());
        boolean pendingUnk = false;
        for (int i = 0; i < word.length(); ) {
            int cp = word.codePointAt(i);
            int end = i + Character.charCount(cp);
            int id = vocab.id(word.substring(i, end));
            i = end;
            if (id >= 0) {
                if (pendingUnk) {
                    symbols.add(unkId);
                    pendingUnk = false;
                }
                symbols.add(id);
                continue;
            }
            if (byteFallback && addBytes(cp, symbols)) {
                continue; // Hugging Face leaves a pending unknown pending across byte-fallback tokens
            }
            if (unkId >= 0) {
                if (pendingUnk && !fuseUnk) {
                    symbols.add(unkId);
                }
                pendingUnk = true;
            }
        }
        if (pendingUnk) {
            symbols.add(unkId);
        }
        return symbols;
    }

    private boolean addBytes(int cp, IntList symbols) {
        byte[] bytes = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8);
        for (byte b : bytes) {
            if (byteIds[b & 0xFF] < 0) {
                return false;
            }
        }
        for (byte b : bytes) {
            symbols.add(byteIds[b & 0xFF]);
        }
        return true;
    }
}
