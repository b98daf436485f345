package io.zse.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.zse.api.tools.ToolCall;
import io.zse.generate.Sampler;
import io.zse.tokenizer.IncrementalDecoder;
import io.zse.tokenizer.Tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.List;

/** OpenAI's JSON shapes, field for field: responses, stream chunks, logprobs, usage, errors, models. */
public final class OpenAiShapes {
    public static final ObjectMapper JSON = new ObjectMapper();
    public static final String FINGERPRINT = "zse-0.1.0";

    private OpenAiShapes() {
    }

    /**
     * One finished choice of a non-streamed response.
     *
     * @param toolCalls the calls it made (empty: none)
     * @param prompt    the echoed prompt's logprobs (completions with echo and logprobs), else null
     */
    public record ChoiceResult(String text, String finishReason, List<GeneratedToken> tokens, List<ToolCall> toolCalls,
                               PromptLogprobs prompt) {
    }

    /**
     * A generated token and where its text begins in the choice's text (the echoed prompt's included): the characters
     * written before it, as vLLM counts them, carried across a stream's chunks.
     */
    public record GeneratedToken(Sampler.Choice choice, int textOffset) {
    }

    /**
     * A prompt's tokens, the text echoed for it, and the logprob of each token after the first (which has nothing
     * before it to be scored on).
     */
    public record PromptLogprobs(int[] ids, String text, List<Sampler.Choice> scores) {
    }

    static ObjectNode envelope(CompletionJob job, String id, long created, boolean chunk) {
        ObjectNode o = JSON.createObjectNode();
        o.put("id", id);
        o.put("object", job.chat() ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion");
        o.put("created", created);
        o.put("model", job.model());
        o.put("system_fingerprint", FINGERPRINT);
        return o;
    }

    public static ObjectNode response(CompletionJob job, String id, long created, List<ChoiceResult> results,
                                      Tokenizer tokenizer, int completionTokens) {
        ObjectNode o = envelope(job, id, created, false);
        ArrayNode choices = o.putArray("choices");
        for (int i = 0; i < results.size(); i++) {
            ChoiceResult r = results.get(i);
            ObjectNode c = choices.addObject();
            c.put("index", i);
            if (job.chat()) {
                ObjectNode message = c.putObject("message");
                message.put("role", "assistant");
                // OpenAI: a reply that is only tool calls has null content
                message.put("content", r.toolCalls().isEmpty() || !r.text().isEmpty() ? r.text() : null);
                message.putNull("refusal");
                if (!r.toolCalls().isEmpty()) {
                    ArrayNode calls = message.putArray("tool_calls");
                    for (ToolCall call : r.toolCalls()) {
                        ObjectNode entry = calls.addObject();
                        entry.put("id", call.id());
                        entry.put("type", "function");
                        entry.putObject("function").put("name", call.name()).put("arguments", call.arguments());
                    }
                }
            } else {
                c.put("text", job.echo() ? job.promptOf(i).text() + r.text() : r.text());
            }
            c.set("logprobs", job.logprobs() ? logprobs(job, r.prompt(), r.tokens(), tokenizer) : null);
            c.put("finish_reason", r.finishReason());
        }
        o.set("usage", usage(job.promptTokens(), completionTokens));
        return o;
    }

    /** The first chunk of a completions choice with echo: its prompt's text, and with logprobs the prompt's logprobs. */
    public static ObjectNode echoChunk(CompletionJob job, String id, long created, int index, PromptLogprobs prompt,
                                       Tokenizer tokenizer) {
        ObjectNode o = chunk(job, id, created, index, false, job.promptOf(index).text(), List.of(), null, tokenizer);
        if (prompt != null) {
            ((ObjectNode) o.get("choices").get(0)).set("logprobs", logprobs(job, prompt, List.of(), tokenizer));
        }
        return o;
    }

    /** A stream chunk for one choice: role (chat, first chunk), text, logprobs and/or finish_reason. */
    public static ObjectNode chunk(CompletionJob job, String id, long created, int index, boolean role, String text,
                                   List<GeneratedToken> tokens, String finishReason, Tokenizer tokenizer) {
        ObjectNode o = envelope(job, id, created, true);
        ObjectNode c = o.putArray("choices").addObject();
        c.put("index", index);
        if (job.chat()) {
            ObjectNode delta = c.putObject("delta");
            if (role) {
                delta.put("role", "assistant");
            }
            if (text != null) {
                delta.put("content", text);
            }
        } else {
            c.put("text", text == null ? "" : text);
        }
        c.set("logprobs", job.logprobs() && !tokens.isEmpty() ? logprobs(job, null, tokens, tokenizer) : null);
        c.put("finish_reason", finishReason);
        if (job.includeUsage()) {
            o.putNull("usage");
        }
        return o;
    }

    /**
     * The chunks of one streamed tool call, as OpenAI sends them: the first names the call (id, type, function name,
     * empty arguments), the second carries the arguments; {@code callIndex} numbers the calls of the choice.
     */
    public static List<ObjectNode> toolCallChunks(CompletionJob job, String id, long created, int index, int callIndex,
                                                  ToolCall call) {
        ObjectNode head = envelope(job, id, created, true);
        ObjectNode c = head.putArray("choices").addObject();
        c.put("index", index);
        ObjectNode entry = c.putObject("delta").putArray("tool_calls").addObject();
        entry.put("index", callIndex);
        entry.put("id", call.id());
        entry.put("type", "function");
        entry.putObject("function").put("name", call.name()).put("arguments", "");
        c.putNull("logprobs");
        c.putNull("finish_reason");
        ObjectNode arguments = head.deepCopy();
        ObjectNode argumentsEntry = (ObjectNode) arguments.get("choices").get(0).get("delta").get("tool_calls").get(0);
        argumentsEntry.remove(List.of("id", "type"));
        argumentsEntry.putObject("function").put("arguments", call.arguments());
        if (job.includeUsage()) {
            head.putNull("usage");
            arguments.putNull("usage");
        }
        return List.of(head, arguments);
    }

    /** The last chunk when stream_options.include_usage is set: no choices, the usage of the whole request. */
    public static ObjectNode usageChunk(CompletionJob job, String id, long created, int completionTokens) {
        ObjectNode o = envelope(job, id, created, true);
        o.putArray("choices");
        o.set("usage", usage(job.promptTokens(), completionTokens));
        return o;
    }

    static ObjectNode usage(int promptTokens, int completionTokens) {
        ObjectNode u = JSON.createObjectNode();
        u.put("prompt_tokens", promptTokens);
        u.put("completion_tokens", completionTokens);
        u.put("total_tokens", promptTokens + completionTokens);
        return u;
    }

    private static ObjectNode logprobs(CompletionJob job, PromptLogprobs prompt, List<GeneratedToken> tokens,
                                       Tokenizer tokenizer) {
        ObjectNode o = JSON.createObjectNode();
        if (job.chat()) {
            ArrayNode content = o.putArray("content");
            for (GeneratedToken g : tokens) {
                Sampler.Choice t = g.choice();
                ObjectNode entry = tokenEntry(tokenizer, t.token(), t.logprob());
                ArrayNode top = entry.putArray("top_logprobs");
                for (Sampler.TokenLogprob alt : t.top()) {
                    top.add(tokenEntry(tokenizer, alt.token(), alt.logprob()));
                }
                content.add(entry);
            }
            o.putNull("refusal");
        } else {
            ArrayNode tokenTexts = o.putArray("tokens");
            ArrayNode logprobs = o.putArray("token_logprobs");
            ArrayNode top = o.putArray("top_logprobs");
            ArrayNode offsets = o.putArray("text_offset");
            if (prompt != null) {
                // each prompt token's offset in the echoed text: the prompt decoded up to it, less what the tokenizer
                // added before the text (a start-of-text token that decodes to text of its own)
                IncrementalDecoder decoder = tokenizer.newIncrementalDecoder(true);
                int[] before = new int[prompt.ids().length]; // the decoded text's characters before each token
                StringBuilder decoded = new StringBuilder();
                int characters = 0;
                for (int i = 0; i < before.length; i++) {
                    before[i] = characters;
                    String piece = decoder.next(prompt.ids()[i]);
                    decoded.append(piece);
                    characters += characters(piece);
                }
                decoded.append(decoder.flush());
                int added = decoded.toString().endsWith(prompt.text())
                        ? characters(decoded.toString()) - characters(prompt.text()) : 0;
                for (int i = 0; i < before.length; i++) {
                    // the first prompt token has no logprob (nothing before it), as at OpenAI
                    Sampler.Choice scored = i == 0 ? null : prompt.scores().get(i - 1);
                    addToken(tokenizer, prompt.ids()[i], scored, tokenTexts, logprobs, top);
                    offsets.add(Math.max(0, before[i] - added));
                }
            }
            for (GeneratedToken g : tokens) {
                addToken(tokenizer, g.choice().token(), g.choice(), tokenTexts, logprobs, top);
                offsets.add(g.textOffset());
            }
        }
        return o;
    }

    /**
     * Characters as OpenAI's and vLLM's Python servers count them in text_offset: code points, so that an emoji (two
     * UTF-16 units) moves the offsets after it by one.
     */
    static int characters(String text) {
        return text.codePointCount(0, text.length());
    }

    /** One token of a completion's logprobs: its text decoded alone, its logprob and alternatives (null: none). */
    private static void addToken(Tokenizer tokenizer, int id, Sampler.Choice scored, ArrayNode tokenTexts,
                                 ArrayNode logprobs, ArrayNode top) {
        tokenTexts.add(tokenizer.decode(new int[]{id}, false));
        if (scored == null) {
            logprobs.addNull();
            top.addNull();
            return;
        }
        logprobs.add(scored.logprob());
        ObjectNode alternatives = top.addObject();
        for (Sampler.TokenLogprob alt : scored.top()) {
            alternatives.put(tokenizer.decode(new int[]{alt.token()}, false), alt.logprob());
        }
    }

    private static ObjectNode tokenEntry(Tokenizer tokenizer, int token, float logprob) {
        String text = tokenizer.decode(new int[]{token}, false);
        ObjectNode e = JSON.createObjectNode();
        e.put("token", text);
        e.put("logprob", logprob);
        ArrayNode bytes = e.putArray("bytes");
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            bytes.add(b & 0xFF);
        }
        return e;
    }

    public static ObjectNode error(ApiException e) {
        ObjectNode o = JSON.createObjectNode();
        ObjectNode error = o.putObject("error");
        error.put("message", e.getMessage());
        error.put("type", e.type());
        error.put("param", e.param());
        error.put("code", e.code());
        return o;
    }

    public static ObjectNode model(String id, long created) {
        ObjectNode o = JSON.createObjectNode();
        o.put("id", id);
        o.put("object", "model");
        o.put("created", created);
        o.put("owned_by", "zse");
        return o;
    }

    public static ObjectNode modelList(ObjectNode... models) {
        ObjectNode o = JSON.createObjectNode();
        o.put("object", "list");
        ArrayNode data = o.putArray("data");
        for (ObjectNode m : models) {
            data.add(m);
        }
        return o;
    }
}
