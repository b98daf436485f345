package io.zse.api.tools;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import io.zse.api.OpenAiShapes;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Splits one choice's output, as it streams, into reply text and tool calls. Text goes out as soon as it cannot be the
 * start of a call; from the format's marker on, output is held and each call leaves once it is complete (a Hermes
 * block at its closing tag, the other formats at the end). Output that looked like calls but does not parse is
 * returned as text at the end, so nothing the model wrote is lost.
 */
public final class ToolCallParser {
    /** What became final: reply text (may be "") and calls, in order. */
    public record Update(String content, List<ToolCall> calls) {
        static final Update NOTHING = new Update("", List.of());
    }

    private static final String HERMES_END = "</tool_call>";

    private final ToolCallFormat format;
    private final StringBuilder pending = new StringBuilder(); // text not yet released
    private boolean inCalls;
    private boolean plainText; // Llama: the reply did not start as a call, so it is all text
    private int parsedUpTo;    // Hermes: calls before this index of pending were emitted
    private int callsSent;

    ToolCallParser(ToolCallFormat format) {
        this.format = format;
    }

    public Update append(String text) {
        pending.append(text);
        if (!inCalls && !plainText) {
            int at = markerAt();
            if (at >= 0) {
                String content = pending.substring(0, at);
                pending.delete(0, at);
                inCalls = true;
                return new Update(content, format == ToolCallFormat.HERMES ? sent(completeHermesCalls()) : List.of());
            }
            return releaseText();
        }
        if (plainText) {
            return releaseAll();
        }
        return format == ToolCallFormat.HERMES ? new Update("", sent(completeHermesCalls())) : Update.NOTHING;
    }

    /** The end of the output: the calls still held, or the held text when it held no call. */
    public Update finish() {
        if (!inCalls) {
            return releaseAll();
        }
        List<ToolCall> calls = switch (format) {
            case HERMES -> {
                List<ToolCall> rest = completeHermesCalls();
                String tail = pending.substring(parsedUpTo).strip();
                if (tail.startsWith(format.marker)) { // a block the output ended inside of
                    ToolCall last = format.call(parse(tail.substring(format.marker.length())));
                    if (last != null) {
                        rest = new ArrayList<>(rest);
                        rest.add(last);
                        parsedUpTo = pending.length();
                    }
                }
                yield rest;
            }
            case LLAMA_JSON -> llamaCalls(pending.toString());
            case MISTRAL -> mistralCalls(pending.substring(format.marker.length()));
        };
        sent(calls);
        if (callsSent == 0) {
            return releaseAll(); // it looked like a call but was not one
        }
        String leftover = format == ToolCallFormat.HERMES ? pending.substring(parsedUpTo).strip() : "";
        pending.setLength(0);
        return new Update(leftover, calls);
    }

    /** Where the first call starts in the pending text, or -1. */
    private int markerAt() {
        if (format == ToolCallFormat.LLAMA_JSON) {
            String head = pending.toString().stripLeading();
            if (head.isEmpty()) {
                return -1;
            }
            if (head.startsWith("{") || head.startsWith(format.marker)) {
                return 0;
            }
            if (!format.marker.startsWith(head)) {
                plainText = true;
            }
            return -1;
        }
        return pending.indexOf(format.marker);
    }

    /** Releases the pending text but the longest end of it that could still grow into the marker. */
    private Update releaseText() {
        if (plainText) {
            return releaseAll();
        }
        if (format == ToolCallFormat.LLAMA_JSON) {
            return Update.NOTHING; // undecided: only whitespace or part of the marker so far
        }
        int keep = 0;
        for (int k = Math.min(format.marker.length() - 1, pending.length()); k > 0; k--) {
            if (format.marker.startsWith(pending.substring(pending.length() - k))) {
                keep = k;
                break;
            }
        }
        String content = pending.substring(0, pending.length() - keep);
        pending.delete(0, pending.length() - keep);
        return new Update(content, List.of());
    }

    private Update releaseAll() {
        String content = pending.toString();
        pending.setLength(0);
        parsedUpTo = 0;
        return new Update(content, List.of());
    }

    /** Every closed {@code <tool_call>...</tool_call>} block not yet emitted. */
    private List<ToolCall> completeHermesCalls() {
        List<ToolCall> calls = new ArrayList<>();
        while (true) {
            int start = pending.indexOf(format.marker, parsedUpTo);
            int end = start < 0 ? -1 : pending.indexOf(HERMES_END, start);
            if (end < 0) {
                break;
            }
            ToolCall call = format.call(parse(pending.substring(start + format.marker.length(), end)));
            if (call == null) {
                break; // not a call after all: left for finish(), which returns it as text
            }
            calls.add(call);
            parsedUpTo = end + HERMES_END.length();
        }
        return calls;
    }

    private List<ToolCall> sent(List<ToolCall> calls) {
        callsSent += calls.size();
        return calls;
    }

    /** One or more call objects, separated by ';' as Llama 3.2 writes several. */
    private List<ToolCall> llamaCalls(String text) {
        String body = text.strip();
        if (body.startsWith(format.marker)) {
            body = body.substring(format.marker.length()).strip();
        }
        List<ToolCall> calls = new ArrayList<>();
        for (String part : body.split(";\\s*(?=\\{)")) {
            ToolCall call = format.call(parse(part));
            if (call == null) {
                return List.of();
            }
            calls.add(call);
        }
        return calls;
    }

    private List<ToolCall> mistralCalls(String text) {
        JsonNode json = parse(text);
        List<ToolCall> calls = new ArrayList<>();
        if (json != null && json.isObject()) {
            ToolCall call = format.call(json);
            return call == null ? List.of() : List.of(call);
        }
        if (json == null || !json.isArray()) {
            return List.of();
        }
        for (JsonNode element : json) {
            ToolCall call = format.call(element);
            if (call == null) {
                return List.of();
            }
            calls.add(call);
        }
        return calls;
    }

    /** The one JSON value the text holds, or null when there is none or anything but whitespace follows it. */
    private static JsonNode parse(String text) {
        try (JsonParser parser = OpenAiShapes.JSON.createParser(text)) {
            JsonNode value = OpenAiShapes.JSON.readTree(parser);
            return value != null && parser.nextToken() == null ? value : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
