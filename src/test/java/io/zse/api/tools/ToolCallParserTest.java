package io.zse.api.tools;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Model output in each family's tool-call format, fed whole and one character at a time (as tokens stream): the
 * same reply text and calls come out either way, and text that only looks like a call stays text.
 */
class ToolCallParserTest {
    private record Result(String content, List<ToolCall> calls) {
    }

    private static Result run(ToolCallFormat format, String output, int piece) {
        ToolCallParser parser = format.newParser();
        StringBuilder content = new StringBuilder();
        List<ToolCall> calls = new ArrayList<>();
        for (int i = 0; i < output.length(); i += piece) {
            ToolCallParser.Update u = parser.append(output.substring(i, Math.min(output.length(), i + piece)));
            content.append(u.content());
            calls.addAll(u.calls());
        }
        ToolCallParser.Update end = parser.finish();
        content.append(end.content());
        calls.addAll(end.calls());
        return new Result(content.toString(), calls);
    }

    private static void check(ToolCallFormat format, String output, String content, String... nameAndArguments) {
        for (int piece : new int[]{output.length() + 1, 1, 3}) {
            Result r = run(format, output, piece);
            assertEquals(content, r.content(), "content, pieces of " + piece);
            assertEquals(nameAndArguments.length / 2, r.calls().size(), "calls, pieces of " + piece + ": " + r.calls());
            for (int i = 0; i < r.calls().size(); i++) {
                assertEquals(nameAndArguments[2 * i], r.calls().get(i).name());
                assertEquals(nameAndArguments[2 * i + 1], r.calls().get(i).arguments());
            }
        }
    }

    @Test
    void hermesBlocks() {
        check(ToolCallFormat.HERMES, "Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
                        + "{\"city\": \"Zürich\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": "
                        + "{\"zone\": \"CET\"}}\n</tool_call>", "Let me look.\n",
                "get_weather", "{\"city\":\"Zürich\"}", "get_time", "{\"zone\":\"CET\"}");
        check(ToolCallFormat.HERMES, "no calls <tool here", "no calls <tool here");
        // the output ended inside the block (EOS before the closing tag): the call is still recovered
        check(ToolCallFormat.HERMES, "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}", "", "f", "{}");
        // a block that is not a call is text
        check(ToolCallFormat.HERMES, "<tool_call>oops</tool_call>", "<tool_call>oops</tool_call>");
    }

    @Test
    void llamaJson() {
        check(ToolCallFormat.LLAMA_JSON, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}", "",
                "get_weather", "{\"city\":\"Oslo\"}");
        check(ToolCallFormat.LLAMA_JSON, "<|python_tag|>{\"name\": \"f\", \"parameters\": {\"a\": 1}}", "",
                "f", "{\"a\":1}");
        check(ToolCallFormat.LLAMA_JSON, "{\"name\": \"f\", \"parameters\": {}}; {\"name\": \"g\", \"parameters\": {}}",
                "", "f", "{}", "g", "{}");
        check(ToolCallFormat.LLAMA_JSON, "The answer is {braces}.", "The answer is {braces}.");
        check(ToolCallFormat.LLAMA_JSON, "{\"just\": \"json\"}", "{\"just\": \"json\"}");
    }

    @Test
    void mistralArray() {
        check(ToolCallFormat.MISTRAL, "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}, "
                + "{\"name\": \"get_time\", \"arguments\": {\"zone\": \"CET\"}}]", "",
                "get_weather", "{\"city\":\"Rome\"}", "get_time", "{\"zone\":\"CET\"}");
        check(ToolCallFormat.MISTRAL, "Sure [TOOL_ not a marker", "Sure [TOOL_ not a marker");
    }

    @Test
    void formatsAreRecognisedFromTheirTemplates() throws Exception {
        for (String[] t : new String[][]{{"qwen3.jinja", "HERMES"}, {"qwen2_5.jinja", "HERMES"},
                {"llama3_1_official.jinja", "LLAMA_JSON"}, {"mistral_v03.jinja", "MISTRAL"}}) {
            String source = new String(getClass().getResourceAsStream("/chat-templates/" + t[0]).readAllBytes());
            assertEquals(t[1], ToolCallFormat.of(source).orElseThrow().name(), t[0]);
        }
        String chatml = new String(getClass().getResourceAsStream("/chat-templates/chatml.jinja").readAllBytes());
        assertTrue(ToolCallFormat.of(chatml).isEmpty(), "a template without a tool-call format is not guessed");
        assertEquals(9, ToolCallFormat.MISTRAL.newCallId().length());
        assertTrue(ToolCallFormat.HERMES.newCallId().startsWith("call_"));
    }
}
