package io.zse.convert.gguf;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Rebuilds a Hugging Face {@code tokenizer.json} (and the prompting part of {@code tokenizer_config.json}) from a
 * GGUF file's {@code tokenizer.ggml.*} metadata, so the .zse holds a tokenizer the usual loader reads:
 * <ul>
 *   <li>{@code gpt2}: byte-level BPE with the file's merges; the split regex follows {@code tokenizer.ggml.pre}
 *       (Llama 3 and Qwen2 families, or GPT-2's own); Llama 3's vocabularies skip merges for whole-vocabulary words
 *       ({@code ignore_merges}) as its tokenizer.json says.</li>
 *   <li>{@code llama}: SentencePiece BPE with byte fallback, written the way Llama/Mistral tokenizer.json files are
 *       (normalizer prepends ▁ and replaces spaces). GGUF keeps scores, not merges; the merges are rebuilt as
 *       transformers does from a vocabulary: every split of a token into two tokens, ranked by the token's score,
 *       or, when every score is the same (llama.cpp writes -1000 for vocabularies converted from tokenizer.json), by
 *       the token's id, which is the order BPE training added them, with whitespace-only pieces last.</li>
 * </ul>
 * Tokens typed unknown or control become special added tokens, user-defined ones plain added tokens.
 */
public final class GgufTokenizer {
    /** The longest token merges are derived for: real vocabularies' longest are runs of a few hundred characters. */
    static final int MAX_MERGED_TOKEN = 4096;
    private static final int TYPE_UNKNOWN = 2;
    private static final int TYPE_CONTROL = 3;
    private static final int TYPE_USER_DEFINED = 4;
    private static final String LLAMA3_SPLIT = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
            + "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    private static final String QWEN2_SPLIT = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
            + "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    private static final Map<String, String> SPLITS = Map.ofEntries(
            Map.entry("llama-bpe", LLAMA3_SPLIT), Map.entry("llama3", LLAMA3_SPLIT), Map.entry("llama-v3", LLAMA3_SPLIT),
            Map.entry("smaug-bpe", LLAMA3_SPLIT), Map.entry("dbrx", LLAMA3_SPLIT), Map.entry("falcon3", LLAMA3_SPLIT),
            Map.entry("qwen2", QWEN2_SPLIT), Map.entry("deepseek-r1-qwen", QWEN2_SPLIT),
            Map.entry("gpt-2", ""), Map.entry("default", ""));

    /** tokenizer.json and tokenizer_config.json as bytes. */
    public record Files(byte[] tokenizerJson, byte[] tokenizerConfigJson) {
    }

    private GgufTokenizer() {
    }

    /** From GGUF-style metadata values (as {@link GgufFile#metadata()} holds them). */
    public static Files fromMetadata(java.util.Map<String, Object> metadata) {
        return build(new GgufMetadata(metadata));
    }

    static Files build(GgufMetadata m) {
        String model = m.string("tokenizer.ggml.model");
        List<String> tokens = m.list("tokenizer.ggml.tokens", String.class);
        if (tokens == null || tokens.isEmpty()) {
            throw new IllegalArgumentException("GGUF has no tokenizer.ggml.tokens");
        }
        List<Long> types = m.list("tokenizer.ggml.token_type", Long.class);
        if (types != null && types.size() != tokens.size()) {
            throw new IllegalArgumentException("GGUF tokenizer.ggml.token_type has " + types.size()
                    + " entries for " + tokens.size() + " tokens");
        }
        boolean addBos = m.bool("tokenizer.ggml.add_bos_token", model.equals("llama"));
        boolean addEos = m.bool("tokenizer.ggml.add_eos_token", false);
        Integer bos = tokenId(m, "tokenizer.ggml.bos_token_id", tokens.size());
        Integer eos = tokenId(m, "tokenizer.ggml.eos_token_id", tokens.size());
        Integer unk = tokenId(m, "tokenizer.ggml.unknown_token_id", tokens.size());
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        root.put("version", "1.0");
        root.putNull("truncation");
        root.putNull("padding");
        root.set("added_tokens", addedTokens(tokens, types));
        switch (model) {
            case "gpt2" -> byteLevel(root, m, tokens);
            case "llama" -> sentencePiece(root, m, tokens, unk);
            default -> throw new IllegalArgumentException("GGUF tokenizer.ggml.model '" + model
                    + "' is not supported (supported: gpt2, llama)");
        }
        root.set("post_processor", postProcessor(tokens, addBos ? bos : null, addEos ? eos : null));
        ObjectNode config = JsonNodeFactory.instance.objectNode();
        if (m.has("tokenizer.chat_template")) {
            config.put("chat_template", m.string("tokenizer.chat_template"));
        }
        putToken(config, "bos_token", tokens, bos);
        putToken(config, "eos_token", tokens, eos);
        putToken(config, "unk_token", tokens, unk);
        putToken(config, "pad_token", tokens, tokenId(m, "tokenizer.ggml.padding_token_id", tokens.size()));
        config.put("add_bos_token", addBos);
        config.put("add_eos_token", addEos);
        ObjectMapper json = new ObjectMapper();
        try {
            return new Files(json.writeValueAsBytes(root), json.writerWithDefaultPrettyPrinter().writeValueAsBytes(config));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void byteLevel(ObjectNode root, GgufMetadata m, List<String> tokens) {
        String pre = m.string("tokenizer.ggml.pre", "default");
        String split = SPLITS.get(pre);
        if (split == null) {
            throw new IllegalArgumentException("GGUF tokenizer.ggml.pre '" + pre + "' is not supported (supported: "
                    + String.join(", ", SPLITS.keySet().stream().sorted().toList()) + ")");
        }
        List<String> merges = m.list("tokenizer.ggml.merges", String.class);
        if (merges == null) {
            throw new IllegalArgumentException("GGUF byte-level tokenizer has no tokenizer.ggml.merges");
        }
        root.set("normalizer", split.equals(QWEN2_SPLIT) ? JsonNodeFactory.instance.objectNode().put("type", "NFC")
                : null);
        ObjectNode byteLevel = JsonNodeFactory.instance.objectNode().put("type", "ByteLevel")
                .put("add_prefix_space", false).put("trim_offsets", true).put("use_regex", split.isEmpty());
        if (split.isEmpty()) {
            root.set("pre_tokenizer", byteLevel);
        } else {
            ObjectNode sequence = root.putObject("pre_tokenizer").put("type", "Sequence");
            ObjectNode splitNode = sequence.putArray("pretokenizers").addObject().put("type", "Split");
            splitNode.putObject("pattern").put("Regex", split);
            splitNode.put("behavior", "Isolated").put("invert", false);
            ((ArrayNode) sequence.get("pretokenizers")).add(byteLevel.deepCopy().put("use_regex", false));
        }
        root.putObject("decoder").put("type", "ByteLevel").put("add_prefix_space", true).put("trim_offsets", true)
                .put("use_regex", true);
        ObjectNode bpe = bpeModel(root, tokens, null, false);
        bpe.put("ignore_merges", split.equals(LLAMA3_SPLIT));
        ArrayNode list = bpe.putArray("merges");
        for (String merge : merges) {
            int space = merge.indexOf(' ');
            if (space <= 0 || space == merge.length() - 1 || merge.indexOf(' ', space + 1) >= 0) {
                throw new IllegalArgumentException("GGUF merge '" + merge + "' is not two tokens separated by a space");
            }
            list.addArray().add(merge.substring(0, space)).add(merge.substring(space + 1));
        }
    }

    private static void sentencePiece(ObjectNode root, GgufMetadata m, List<String> tokens, Integer unk) {
        boolean prefix = m.bool("tokenizer.ggml.add_space_prefix", true);
        ObjectNode normalizer = root.putObject("normalizer").put("type", "Sequence");
        ArrayNode steps = normalizer.putArray("normalizers");
        if (prefix) {
            steps.addObject().put("type", "Prepend").put("prepend", "\u2581");
        }
        ObjectNode replace = steps.addObject().put("type", "Replace");
        replace.putObject("pattern").put("String", " ");
        replace.put("content", "\u2581");
        root.putNull("pre_tokenizer");
        ObjectNode decoder = root.putObject("decoder").put("type", "Sequence");
        ArrayNode decoders = decoder.putArray("decoders");
        ObjectNode space = decoders.addObject().put("type", "Replace");
        space.putObject("pattern").put("String", "\u2581");
        space.put("content", " ");
        decoders.addObject().put("type", "ByteFallback");
        decoders.addObject().put("type", "Fuse");
        if (prefix) {
            decoders.addObject().put("type", "Strip").put("content", " ").put("start", 1).put("stop", 0);
        }
        List<Double> scores = m.list("tokenizer.ggml.scores", Double.class);
        if (scores != null && scores.size() != tokens.size()) {
            throw new IllegalArgumentException("GGUF tokenizer.ggml.scores has " + scores.size() + " entries for "
                    + tokens.size() + " tokens");
        }
        ObjectNode bpe = bpeModel(root, tokens, unk == null ? null : tokens.get(unk), true);
        bpe.put("ignore_merges", false);
        ArrayNode list = bpe.putArray("merges");
        List<String> given = m.list("tokenizer.ggml.merges", String.class);
        if (given != null) {
            given.forEach(merge -> list.addArray().add(merge.substring(0, Math.max(0, merge.indexOf(' '))))
                    .add(merge.substring(merge.indexOf(' ') + 1)));
        } else {
            for (String[] pair : mergesFromVocabulary(tokens, scores)) {
                list.addArray().add(pair[0]).add(pair[1]);
            }
        }
    }

    private static ObjectNode bpeModel(ObjectNode root, List<String> tokens, String unk, boolean sentencePiece) {
        ObjectNode bpe = root.putObject("model").put("type", "BPE");
        bpe.putNull("dropout");
        if (unk == null) {
            bpe.putNull("unk_token");
        } else {
            bpe.put("unk_token", unk);
        }
        bpe.putNull("continuing_subword_prefix");
        bpe.putNull("end_of_word_suffix");
        bpe.put("fuse_unk", sentencePiece);
        bpe.put("byte_fallback", sentencePiece);
        ObjectNode vocab = bpe.putObject("vocab");
        for (int id = 0; id < tokens.size(); id++) {
            if (!vocab.has(tokens.get(id))) {
                vocab.put(tokens.get(id), id);
            }
        }
        return bpe;
    }

    /**
     * The merges a SentencePiece vocabulary implies: for each token (in vocabulary order) every split into two tokens,
     * each token's splits ordered by the pieces' ids, then all of them stably sorted by the token's rank.
     * <ul>
     *   <li>With informative scores, the rank is the score (highest first, then longer left piece, then longer right
     *       piece), as transformers' {@code generate_merges} ranks a GGUF's vocabulary.</li>
     *   <li>Without (llama.cpp writes -1000 for every token of a vocabulary it converted from tokenizer.json), the rank
     *       is the token's id, the order BPE training added tokens, except that whitespace-only pieces (▁▁, ▁▁▁▁, ...)
     *       rank after every other token, in id order: tokenizer.model scores them below every other piece whatever their
     *       id, so the Llama/Mistral tokenizer.json files transformers converted from it list their merges last. For Mistral 7B this rebuilds its tokenizer.json's 58,980 merges in order.</li>
     * </ul>
     * Splits are at code point boundaries, as Python slices strings.
     */
    static List<String[]> mergesFromVocabulary(List<String> tokens, List<Double> scores) {
        Map<String, Integer> ids = new HashMap<>();
        for (int id = 0; id < tokens.size(); id++) {
            ids.putIfAbsent(tokens.get(id), id);
        }
        boolean byScore = scores != null && scores.stream().distinct().limit(2).count() > 1;
        record Merge(String left, String right, double rank, int leftLength, int rightLength) {
        }
        List<Merge> merges = new ArrayList<>();
        for (Map.Entry<String, Integer> entry : orderedVocabulary(tokens, ids)) {
            String token = entry.getKey();
            if (token.length() > MAX_MERGED_TOKEN) { // each cut is a lookup: a long token costs its length squared
                throw new IllegalArgumentException("token " + entry.getValue() + " is " + token.length()
                        + " characters long; merges are derived for tokens of at most " + MAX_MERGED_TOKEN);
            }
            double rank = byScore ? scores.get(entry.getValue())
                    : entry.getValue() + (isWhitespaceRun(token) ? tokens.size() : 0);
            List<Merge> local = new ArrayList<>();
            for (int cut = token.offsetByCodePoints(0, Math.min(1, token.codePointCount(0, token.length())));
                 cut < token.length(); cut = token.offsetByCodePoints(cut, 1)) {
                String left = token.substring(0, cut);
                String right = token.substring(cut);
                if (ids.containsKey(left) && ids.containsKey(right)) {
                    local.add(new Merge(left, right, rank, left.codePointCount(0, left.length()),
                            right.codePointCount(0, right.length())));
                }
            }
            local.sort(Comparator.comparingInt((Merge x) -> ids.get(x.left)).thenComparingInt(x -> ids.get(x.right)));
            merges.addAll(local);
        }
        merges.sort(byScore ? Comparator.comparingDouble(Merge::rank).thenComparingInt(Merge::leftLength)
                .thenComparingInt(Merge::rightLength).reversed() : Comparator.comparingDouble(Merge::rank));
        return merges.stream().map(x -> new String[] {x.left, x.right}).toList();
    }

    /** Two or more ▁ and nothing else. */
    private static boolean isWhitespaceRun(String token) {
        return token.length() > 1 && token.chars().allMatch(c -> c == '\u2581');
    }

    /** Each distinct token once, at its first id, in id order (a Python dict built from the token list). */
    private static List<Map.Entry<String, Integer>> orderedVocabulary(List<String> tokens, Map<String, Integer> ids) {
        List<Map.Entry<String, Integer>> entries = new ArrayList<>();
        for (int id = 0; id < tokens.size(); id++) {
            if (ids.get(tokens.get(id)) == id) {
                entries.add(Map.entry(tokens.get(id), id));
            }
        }
        return entries;
    }

    private static ArrayNode addedTokens(List<String> tokens, List<Long> types) {
        ArrayNode added = JsonNodeFactory.instance.arrayNode();
        if (types == null) {
            return added;
        }
        for (int id = 0; id < tokens.size(); id++) {
            long type = types.get(id);
            if (type == TYPE_UNKNOWN || type == TYPE_CONTROL || type == TYPE_USER_DEFINED) {
                added.addObject().put("id", id).put("content", tokens.get(id)).put("single_word", false)
                        .put("lstrip", false).put("rstrip", false).put("normalized", false)
                        .put("special", type != TYPE_USER_DEFINED);
            }
        }
        return added;
    }

    private static ObjectNode postProcessor(List<String> tokens, Integer bos, Integer eos) {
        ObjectNode p = JsonNodeFactory.instance.objectNode().put("type", "TemplateProcessing");
        ArrayNode single = p.putArray("single");
        ArrayNode pair = p.putArray("pair");
        ObjectNode specials = p.putObject("special_tokens");
        for (int sequence = 0; sequence < 2; sequence++) {
            ArrayNode target = sequence == 0 ? single : pair;
            for (int part = 0; part <= sequence; part++) {
                if (bos != null) {
                    target.addObject().putObject("SpecialToken").put("id", tokens.get(bos)).put("type_id", part);
                }
                target.addObject().putObject("Sequence").put("id", part == 0 ? "A" : "B").put("type_id", part);
                if (eos != null) {
                    target.addObject().putObject("SpecialToken").put("id", tokens.get(eos)).put("type_id", part);
                }
            }
        }
        for (Integer id : new Integer[] {bos, eos}) {
            if (id != null) {
                ObjectNode s = specials.putObject(tokens.get(id)).put("id", tokens.get(id));
                s.putArray("ids").add(id);
                s.putArray("tokens").add(tokens.get(id));
            }
        }
        return p;
    }

    private static Integer tokenId(GgufMetadata m, String key, int vocabulary) {
        Integer id = m.integerOrNull(key);
        if (id != null && id >= vocabulary) {
            throw new IllegalArgumentException("GGUF " + key + " " + id + " is outside the vocabulary of " + vocabulary);
        }
        return id;
    }

    private static void putToken(ObjectNode config, String field, List<String> tokens, Integer id) {
        if (id != null) {
            config.put(field, tokens.get(id));
        }
    }
}
