package io.zse.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.List;

/**
 * Puts a {@link Tokenizer} together from the JSON settings (everything but vocab and merges) and the model's tables,
 * refusing settings that would change the ids in ways not implemented.
 */
final class TokenizerAssembler {
    private TokenizerAssembler() {
    }

    /** {@code merges} holds left ids, right ids and merged ids, indexed by rank. */
    static Tokenizer assemble(ObjectNode settings, Vocabulary vocab, int[][] merges) {
        for (int[] column : merges) {
            for (int id : column) {
                if (vocab.token(id) == null) {
                    throw new IllegalArgumentException("a merge names token id " + id + ", which the vocabulary of "
                            + vocab.size() + " does not hold");
                }
            }
        }
        refuseIfSet(settings, "truncation");
        refuseIfSet(settings, "padding");
        JsonNode model = settings.path("model");
        String type = model.path("type").asText("BPE");
        if (!type.equals("BPE")) {
            throw ComponentReader.unsupported("model", type);
        }
        if (model.path("dropout").isNumber() && model.path("dropout").asDouble() != 0) {
            throw new UnsupportedTokenizerException("unsupported BPE option dropout");
        }
        for (String affix : List.of("continuing_subword_prefix", "end_of_word_suffix")) {
            if (!model.path(affix).asText("").isEmpty()) {
                throw new UnsupportedTokenizerException("unsupported BPE option " + affix);
            }
        }
        int unkId = -1;
        if (model.hasNonNull("unk_token")) {
            unkId = vocab.id(model.get("unk_token").asText());
            if (unkId < 0) {
                throw new IllegalArgumentException("unk_token '" + model.get("unk_token").asText()
                        + "' is not in the vocabulary");
            }
        }
        BpeModel bpe = new BpeModel(vocab, new MergeTable(merges[0], merges[1], merges[2]), unkId,
                model.path("fuse_unk").asBoolean(false), model.path("byte_fallback").asBoolean(false),
                model.path("ignore_merges").asBoolean(false));
        Normalizer normalizer = ComponentReader.normalizer(settings.get("normalizer"));
        Pipeline pipeline = new Pipeline(normalizer, ComponentReader.preTokenizer(settings.get("pre_tokenizer")),
                ComponentReader.postProcessor(settings.get("post_processor")),
                ComponentReader.decoder(settings.get("decoder")), settings);
        return new Tokenizer(pipeline, bpe, addedTokens(settings.path("added_tokens"), vocab));
    }

    private static List<AddedToken> addedTokens(JsonNode list, Vocabulary vocab) {
        List<AddedToken> tokens = new ArrayList<>();
        for (JsonNode node : list) {
            String content = node.path("content").asText();
            int modelId = vocab.id(content);
            // as Hugging Face: a token the model already knows keeps the model's id
            JsonNode given = node.path("id");
            if (modelId < 0 && (!given.canConvertToInt() || !given.isIntegralNumber() || given.asInt() < 0
                    || given.asInt() > Vocabulary.MAX_ID)) {
                throw new IllegalArgumentException("added token " + content + " has the id " + given
                        + ", not one of 0.." + Vocabulary.MAX_ID);
            }
            int id = modelId >= 0 ? modelId : given.asInt();
            tokens.add(new AddedToken(id, content, node.path("special").asBoolean(false),
                    node.path("single_word").asBoolean(false), node.path("lstrip").asBoolean(false),
                    node.path("rstrip").asBoolean(false), node.path("normalized").asBoolean(false)));
        }
        return tokens;
    }

    private static void refuseIfSet(JsonNode settings, String field) {
        if (settings.hasNonNull(field)) {
            throw new UnsupportedTokenizerException("unsupported " + field + " settings (must be null)");
        }
    }
}
