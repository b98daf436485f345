package io.zse.tokenizer;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads {@code tokenizer.json}. The large model.vocab and model.merges are streamed straight into arrays (a JSON tree
 * of them would cost most of the load time); everything else becomes a small JSON tree for {@link ComponentReader}.
 */
final class TokenizerJsonReader {
    private TokenizerJsonReader() {
    }

    static Tokenizer read(byte[] json) {
        try (JsonParser parser = JsonTreeReader.FACTORY.createParser(json)) {
            expect(parser.nextToken(), JsonToken.START_OBJECT, "tokenizer.json must be a JSON object");
            ObjectNode skeleton = JsonNodeFactory.instance.objectNode();
            String[] tokens = null;
            List<String[]> merges = new ArrayList<>();
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
                String field = parser.currentName();
                parser.nextToken();
                if (!field.equals("model") || parser.currentToken() != JsonToken.START_OBJECT) {
                    skeleton.set(field, JsonTreeReader.read(parser));
                    continue;
                }
                ObjectNode model = skeleton.putObject("model");
                while (parser.nextToken() == JsonToken.FIELD_NAME) {
                    String modelField = parser.currentName();
                    parser.nextToken();
                    switch (modelField) {
                        case "vocab" -> tokens = readVocab(parser);
                        case "merges" -> readMerges(parser, merges);
                        default -> model.set(modelField, JsonTreeReader.read(parser));
                    }
                }
            }
            if (tokens == null) {
                throw new UnsupportedTokenizerException("tokenizer.json has no model vocab");
            }
            Vocabulary vocab = new Vocabulary(tokens);
            return TokenizerAssembler.assemble(skeleton, vocab, resolve(merges, vocab));
        } catch (IOException e) {
            throw new IllegalArgumentException("invalid tokenizer.json: " + e.getMessage().lines().findFirst()
                    .orElse(""), e);
        }
    }

    private static String[] readVocab(JsonParser parser) throws IOException {
        expect(parser.currentToken(), JsonToken.START_OBJECT, "model.vocab must be an object");
        List<String> names = new ArrayList<>();
        IntList ids = new IntList(1 << 16);
        int max = -1;
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            names.add(parser.currentName());
            parser.nextToken();
            int id = parser.getIntValue();
            if (id < 0 || id > Vocabulary.MAX_ID) {
                throw new IllegalArgumentException("model.vocab gives " + names.getLast() + " the id " + id
                        + ", outside 0.." + Vocabulary.MAX_ID);
            }
            ids.add(id);
            max = Math.max(max, id);
        }
        String[] tokens = new String[max + 1];
        for (int i = 0; i < names.size(); i++) {
            tokens[ids.get(i)] = names.get(i);
        }
        return tokens;
    }

    /** Merges are either "left right" strings or ["left", "right"] pairs. */
    private static void readMerges(JsonParser parser, List<String[]> merges) throws IOException {
        expect(parser.currentToken(), JsonToken.START_ARRAY, "model.merges must be an array");
        while (parser.nextToken() != JsonToken.END_ARRAY) {
            if (parser.currentToken() == JsonToken.VALUE_STRING) {
                String line = parser.getText();
                int space = line.indexOf(' ');
                if (space < 0 || line.indexOf(' ', space + 1) >= 0) {
                    throw new IllegalArgumentException("invalid merge '" + line + "'");
                }
                merges.add(new String[]{line.substring(0, space), line.substring(space + 1)});
            } else {
                expect(parser.currentToken(), JsonToken.START_ARRAY, "invalid merge entry");
                parser.nextToken();
                String left = parser.getText();
                parser.nextToken();
                String right = parser.getText();
                expect(parser.nextToken(), JsonToken.END_ARRAY, "a merge pair must have two strings");
                merges.add(new String[]{left, right});
            }
        }
    }

    private static int[][] resolve(List<String[]> merges, Vocabulary vocab) {
        int[][] table = new int[3][merges.size()];
        for (int rank = 0; rank < merges.size(); rank++) {
            String[] pair = merges.get(rank);
            int left = vocab.id(pair[0]);
            int right = vocab.id(pair[1]);
            int merged = vocab.id(pair[0] + pair[1]);
            if (left < 0 || right < 0 || merged < 0) {
                throw new IllegalArgumentException("merge '" + pair[0] + " " + pair[1]
                        + "' uses a token missing from the vocabulary");
            }
            table[0][rank] = left;
            table[1][rank] = right;
            table[2][rank] = merged;
        }
        return table;
    }

    private static void expect(JsonToken actual, JsonToken expected, String message) {
        if (actual != expected) {
            throw new IllegalArgumentException(message);
        }
    }
}
