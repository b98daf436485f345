package io.zse.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Builds normalizers, pre-tokenizers, post-processors and decoders from their JSON. Anything not implemented
 * exactly is refused with an {@link UnsupportedTokenizerException} naming it.
 */
final class ComponentReader {
    private ComponentReader() {
    }

    static Normalizer normalizer(JsonNode node) {
        if (isAbsent(node)) {
            return null;
        }
        String type = type(node, "normalizer");
        return switch (type) {
            case "NFC" -> new UnicodeNormalizer(java.text.Normalizer.Form.NFC);
            case "NFD" -> new UnicodeNormalizer(java.text.Normalizer.Form.NFD);
            case "NFKC" -> new UnicodeNormalizer(java.text.Normalizer.Form.NFKC);
            case "NFKD" -> new UnicodeNormalizer(java.text.Normalizer.Form.NFKD);
            case "Lowercase" -> new LowercaseNormalizer();
            case "Prepend" -> new PrependNormalizer(text(node, "prepend", type));
            case "Replace" -> new ReplaceNormalizer(TextPattern.fromJson(node.get("pattern"), "Replace normalizer"),
                    text(node, "content", type));
            case "Strip" -> new StripNormalizer(node.path("strip_left").asBoolean(true),
                    node.path("strip_right").asBoolean(true));
            case "Sequence" -> new SequenceNormalizer(list(node, "normalizers", type, ComponentReader::normalizer));
            default -> throw unsupported("normalizer", type);
        };
    }

    static PreTokenizer preTokenizer(JsonNode node) {
        if (isAbsent(node)) {
            return null;
        }
        String type = type(node, "pre_tokenizer");
        return switch (type) {
            case "ByteLevel" -> new ByteLevelPreTokenizer(node.path("add_prefix_space").asBoolean(true),
                    node.path("use_regex").asBoolean(true));
            case "Split" -> new PatternPreTokenizer(TextPattern.fromJson(node.get("pattern"), "Split pre_tokenizer"),
                    SplitBehavior.fromJson(text(node, "behavior", type)), node.path("invert").asBoolean(false));
            case "Metaspace" -> new MetaspacePreTokenizer(replacement(node, type),
                    PrependScheme.fromJson(node, "Metaspace pre_tokenizer"), node.path("split").asBoolean(true));
            case "Digits" -> PatternPreTokenizer.digits(node.path("individual_digits").asBoolean(false));
            case "Whitespace" -> PatternPreTokenizer.whitespace();
            case "WhitespaceSplit" -> PatternPreTokenizer.whitespaceSplit();
            case "Punctuation" -> PatternPreTokenizer.punctuation(
                    SplitBehavior.fromJson(node.path("behavior").asText("Isolated")));
            case "Sequence" -> new SequencePreTokenizer(
                    list(node, "pretokenizers", type, ComponentReader::preTokenizer));
            default -> throw unsupported("pre_tokenizer", type);
        };
    }

    static PostProcessor postProcessor(JsonNode node) {
        if (isAbsent(node)) {
            return null;
        }
        String type = type(node, "post_processor");
        return switch (type) {
            case "ByteLevel" -> (ids, addSpecial) -> ids; // only adjusts offsets, which we do not produce
            case "TemplateProcessing" -> template(node);
            case "BertProcessing", "RobertaProcessing" -> new TemplatePostProcessor(java.util.Arrays.asList(
                    new int[]{specialId(node, "cls", type)}, null, new int[]{specialId(node, "sep", type)}));
            case "Sequence" -> new SequencePostProcessor(
                    list(node, "processors", type, ComponentReader::postProcessor));
            default -> throw unsupported("post_processor", type);
        };
    }

    static Decoder decoder(JsonNode node) {
        if (isAbsent(node)) {
            return null;
        }
        String type = type(node, "decoder");
        return switch (type) {
            case "ByteLevel" -> new ByteLevelDecoder();
            case "Replace" -> new ReplaceDecoder(TextPattern.fromJson(node.get("pattern"), "Replace decoder"),
                    text(node, "content", type));
            case "ByteFallback" -> new ByteFallbackDecoder();
            case "Fuse" -> new FuseDecoder();
            case "Strip" -> new StripDecoder(singleChar(node, "content", type), node.path("start").asInt(0),
                    node.path("stop").asInt(0));
            case "Metaspace" -> new MetaspaceDecoder(replacement(node, type).codePointAt(0),
                    PrependScheme.fromJson(node, "Metaspace decoder"));
            case "Sequence" -> new SequenceDecoder(list(node, "decoders", type, ComponentReader::decoder));
            default -> throw unsupported("decoder", type);
        };
    }

    private static TemplatePostProcessor template(JsonNode node) {
        Map<String, int[]> specials = new java.util.HashMap<>();
        node.path("special_tokens").properties().forEach(e -> {
            JsonNode ids = e.getValue().path("ids");
            int[] values = new int[ids.size()];
            for (int i = 0; i < values.length; i++) {
                values[i] = ids.get(i).asInt();
            }
            specials.put(e.getKey(), values);
        });
        List<int[]> items = new ArrayList<>();
        for (JsonNode item : node.path("single")) {
            if (item.has("Sequence")) {
                if (!"A".equals(item.get("Sequence").path("id").asText())) {
                    throw new UnsupportedTokenizerException("unsupported TemplateProcessing single item " + item);
                }
                items.add(null);
            } else if (item.has("SpecialToken")) {
                String name = item.get("SpecialToken").path("id").asText();
                int[] ids = specials.get(name);
                if (ids == null) {
                    throw new UnsupportedTokenizerException(
                            "TemplateProcessing uses special token '" + name + "' missing from special_tokens");
                }
                items.add(ids);
            } else {
                throw new UnsupportedTokenizerException("unsupported TemplateProcessing item " + item);
            }
        }
        return new TemplatePostProcessor(items);
    }

    private static int specialId(JsonNode node, String field, String type) {
        JsonNode pair = node.get(field);
        if (pair == null || !pair.isArray() || pair.size() != 2) {
            throw new UnsupportedTokenizerException(type + " post_processor has no valid '" + field + "'");
        }
        return pair.get(1).asInt();
    }

    private static String replacement(JsonNode node, String type) {
        String replacement = text(node, "replacement", type);
        if (replacement.codePointCount(0, replacement.length()) != 1) {
            throw new UnsupportedTokenizerException(type + " replacement must be one character");
        }
        return replacement;
    }

    private static int singleChar(JsonNode node, String field, String type) {
        String value = text(node, field, type);
        if (value.codePointCount(0, value.length()) != 1) {
            throw new UnsupportedTokenizerException(type + " " + field + " must be one character");
        }
        return value.codePointAt(0);
    }

    private static <T> List<T> list(JsonNode node, String field, String type,
                                    java.util.function.Function<JsonNode, T> reader) {
        JsonNode items = node.get(field);
        if (items == null || !items.isArray()) {
            throw new UnsupportedTokenizerException(type + " without a '" + field + "' list");
        }
        List<T> result = new ArrayList<>();
        for (JsonNode item : items) {
            T component = reader.apply(item);
            if (component != null) {
                result.add(component);
            }
        }
        return result;
    }

    private static boolean isAbsent(JsonNode node) {
        return node == null || node.isNull() || node.isMissingNode();
    }

    private static String type(JsonNode node, String kind) {
        JsonNode type = node.get("type");
        if (type == null || !type.isTextual()) {
            throw new UnsupportedTokenizerException(kind + " without a type");
        }
        return type.asText();
    }

    private static String text(JsonNode node, String field, String type) {
        JsonNode value = node.get(field);
        if (value == null || !value.isTextual()) {
            throw new UnsupportedTokenizerException(type + " without a '" + field + "' string");
        }
        return value.asText();
    }

    static UnsupportedTokenizerException unsupported(String kind, String type) {
        return new UnsupportedTokenizerException("unsupported " + kind + " type '" + type + "'");
    }
}
