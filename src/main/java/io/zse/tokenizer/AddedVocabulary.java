package io.zse.tokenizer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Finds added tokens in text, leftmost-longest as Hugging Face's Aho-Corasick matcher: first the tokens marked
 * not "normalized" in the raw text, then, once each remaining segment is normalized, the others (whose patterns are
 * themselves normalized).
 */
final class AddedVocabulary {
    private static final Pattern WORD_CHAR = Pattern.compile("\\w", TextPattern.FLAGS);

    /** A stretch of text: either an added token (id >= 0) or text still to tokenize. */
    record Segment(String text, int id, boolean atOrigin) {
        boolean isToken() {
            return id >= 0;
        }
    }

    private final List<AddedToken> tokens;
    private final Map<Integer, AddedToken> byId = new HashMap<>();
    private final Map<String, AddedToken> byContent = new HashMap<>();
    private final Map<Integer, String> textById = new HashMap<>();
    private final Trie rawTrie = new Trie();
    private final Trie normalizedTrie = new Trie();

    AddedVocabulary(List<AddedToken> tokens, Normalizer normalizer) {
        this.tokens = List.copyOf(tokens);
        for (AddedToken token : tokens) {
            byId.put(token.id(), token);
            byContent.put(token.content(), token);
            String text = token.normalized() && normalizer != null ? normalizer.normalize(token.content())
                    : token.content();
            textById.put(token.id(), text);
            if (token.content().isEmpty()) {
                continue;
            }
            if (token.normalized()) {
                normalizedTrie.add(text, token);
            } else {
                rawTrie.add(token.content(), token);
            }
        }
    }

    List<AddedToken> tokens() {
        return tokens;
    }

    AddedToken byId(int id) {
        return byId.get(id);
    }

    /**
     * The token string of an added token's id, or null: like Hugging Face, a "normalized" token is known by its
     * normalized content (TinyStories' {@code <unk>} decodes as "▁<unk>").
     */
    String text(int id) {
        return textById.get(id);
    }

    /** Whether decoding with skip_special_tokens drops {@code id}: its token string must be a special content. */
    boolean isSkippedAsSpecial(int id) {
        String text = textById.get(id);
        AddedToken named = text == null ? null : byContent.get(text);
        return named != null && named.special();
    }

    AddedToken byContent(String content) {
        return byContent.get(content);
    }

    /** Splits the raw input, normalizing the text between tokens. */
    List<Segment> split(String text, Normalizer normalizer) {
        List<Segment> raw = new ArrayList<>();
        findMatches(text, true, rawTrie, raw);
        List<Segment> result = new ArrayList<>();
        for (Segment segment : raw) {
            if (segment.isToken()) {
                result.add(segment);
                continue;
            }
            String normalized = normalizer == null ? segment.text() : normalizer.normalize(segment.text());
            boolean atOrigin = segment.atOrigin() && (normalizer == null || normalizer.keepsStart(segment.text()));
            findMatches(normalized, atOrigin, normalizedTrie, result);
        }
        return result;
    }

    private static void findMatches(String text, boolean atOrigin, Trie trie, List<Segment> out) {
        int startOffset = 0;
        int position = 0;
        while (position < text.length()) {
            Trie.Match match = trie.longestAt(text, position);
            if (match == null) {
                position++;
                continue;
            }
            AddedToken token = match.token();
            int start = position;
            int stop = match.end();
            position = stop;
            if (token.singleWord() && (endsWithWord(text, start) || startsWithWord(text, stop))) {
                continue;
            }
            if (token.lstrip()) {
                int newStart = start;
                while (newStart > 0 && UnicodeWhitespace.is(text.codePointBefore(newStart))) {
                    newStart -= Character.charCount(text.codePointBefore(newStart));
                }
                start = Math.max(newStart, startOffset);
            }
            if (token.rstrip()) {
                while (stop < text.length() && UnicodeWhitespace.is(text.codePointAt(stop))) {
                    stop += Character.charCount(text.codePointAt(stop));
                }
            }
            if (startOffset < start) {
                out.add(new Segment(text.substring(startOffset, start), -1, atOrigin && startOffset == 0));
            }
            out.add(new Segment(text.substring(start, stop), token.id(), false));
            startOffset = stop;
        }
        if (startOffset < text.length()) {
            out.add(new Segment(text.substring(startOffset), -1, atOrigin && startOffset == 0));
        }
    }

    private static boolean endsWithWord(String text, int end) {
        return end > 0 && WORD_CHAR.matcher(new String(Character.toChars(text.codePointBefore(end)))).matches();
    }

    private static boolean startsWithWord(String text, int start) {
        return start < text.length()
                && WORD_CHAR.matcher(new String(Character.toChars(text.codePointAt(start)))).matches();
    }

    /** A character trie over token patterns. */
    private static final class Trie {
        record Match(AddedToken token, int end) {
        }

        private final Map<Character, Trie> children = new HashMap<>();
        private AddedToken token;

        void add(String pattern, AddedToken added) {
            Trie node = this;
            for (int i = 0; i < pattern.length(); i++) {
                node = node.children.computeIfAbsent(pattern.charAt(i), c -> new Trie());
            }
            if (node.token == null) {
                node.token = added;
            }
        }

        Match longestAt(String text, int start) {
            Trie node = this;
            Match best = null;
            for (int i = start; i < text.length(); i++) {
                node = node.children.get(text.charAt(i));
                if (node == null) {
                    break;
                }
                if (node.token != null) {
                    best = new Match(node.token, i + 1);
                }
            }
            return best;
        }
    }
}
