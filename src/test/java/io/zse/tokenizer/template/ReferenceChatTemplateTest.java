package io.zse.tokenizer.template;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every template × case pair of ../shared/reference/chat-templates, against Jinja2's output. */
class ReferenceChatTemplateTest {
    private static final Path COPIED = Path.of("src/test/resources/chat-templates");
    private static final Path SHARED = Path.of("../shared/reference/chat-templates");
    private static final List<String> TEMPLATES = List.of("chatml", "qwen2_5", "qwen3", "llama3", "llama3_1",
            "llama3_1_official", "mistral_v01", "mistral_v03", "llama2");
    private static final List<String> CASES = List.of("basic", "nosys", "think", "toolcall", "tools");
    private static final ObjectMapper JSON = new ObjectMapper();

    static Stream<Arguments> pairs() {
        List<Arguments> pairs = new ArrayList<>();
        for (String template : TEMPLATES) {
            for (String c : CASES) {
                pairs.add(Arguments.of(template, c));
            }
        }
        return pairs.stream();
    }

    /** Meta-licensed templates live only in ../shared; the rest are copied into the test resources. */
    private static Path fixture(String relative) {
        Path copied = COPIED.resolve(relative);
        return Files.exists(copied) ? copied : SHARED.resolve(relative);
    }

    /** The special tokens of the tokenizer each template belongs to (see ../shared/tokenizers). */
    private static String[] specialTokens(String template) {
        if (template.startsWith("llama3")) {
            return new String[] {"<|begin_of_text|>", template.equals("llama3") ? "<|end_of_text|>" : "<|eot_id|>"};
        }
        if (template.startsWith("mistral") || template.equals("llama2")) {
            return new String[] {"<s>", "</s>"};
        }
        return new String[] {null, "<|im_end|>"};
    }

    @ParameterizedTest(name = "{0} × {1}")
    @MethodSource("pairs")
    @SuppressWarnings("unchecked")
    void rendersLikeJinja2(String template, String caseName) throws IOException {
        Path templateFile = fixture(template + ".jinja");
        Path expectedFile = fixture("expected/" + template + "__" + caseName + ".txt");
        assumeTrue(Files.exists(templateFile) && Files.exists(expectedFile), "fixture absent: " + templateFile);

        Map<String, Object> input = JSON.readValue(fixture("cases/" + caseName + ".json").toFile(), LinkedHashMap.class);
        Map<String, Object> extra = new LinkedHashMap<>(input);
        List<Map<String, Object>> messages = (List<Map<String, Object>>) extra.remove("messages");
        List<Map<String, Object>> tools = (List<Map<String, Object>>) extra.remove("tools");
        boolean addGenerationPrompt = Boolean.TRUE.equals(extra.remove("add_generation_prompt"));
        String[] tokens = specialTokens(template);

        ChatTemplate chatTemplate = ChatTemplate.compile(Files.readString(templateFile, StandardCharsets.UTF_8));
        String expected = Files.readString(expectedFile, StandardCharsets.UTF_8);
        if (expected.startsWith("EXCEPTION")) {
            ChatTemplateException e = assertThrows(ChatTemplateException.class,
                    () -> chatTemplate.render(messages, tools, addGenerationPrompt, tokens[0], tokens[1], extra));
            String message = expected.substring(expected.indexOf(": ") + 2).strip();
            assertTrue(e.getMessage().contains(message), () -> "message was: " + e.getMessage());
        } else {
            assertEquals(expected, chatTemplate.render(messages, tools, addGenerationPrompt, tokens[0], tokens[1], extra));
        }
    }
}
