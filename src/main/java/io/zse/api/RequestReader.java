package io.zse.api;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import io.zse.api.tools.ToolCallFormat;
import io.zse.api.tools.ToolRequest;
import io.zse.generate.EndConditions;
import io.zse.generate.SamplingParameters;
import io.zse.generate.TokenConstraint;
import io.zse.serve.LoadedModel;
import io.zse.tokenizer.template.ChatTemplate;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Turns a request body into a {@link CompletionJob}, checking every parameter the way OpenAI does: wrong types,
 * out-of-range values, parameters OpenAI defines that we do not implement, and unknown ones are all 400s naming the
 * parameter.
 */
public final class RequestReader {
    private static final Set<String> COMMON = Set.of("model", "max_tokens", "temperature", "top_p", "top_k", "min_p",
            "repetition_penalty", "presence_penalty", "frequency_penalty", "seed", "stop", "n", "logprobs", "user",
            "stream", "stream_options", "skip_special_tokens");
    private static final Set<String> CHAT_ONLY = Set.of("messages", "max_completion_tokens", "top_logprobs", "tools",
            "tool_choice", "parallel_tool_calls", "response_format", "chat_template_kwargs");
    /** Keys the server sets itself: the request's own fields carry them. */
    private static final Set<String> SERVER_TEMPLATE_VARIABLES = Set.of("messages", "tools");
    private static final Set<String> COMPLETION_ONLY = Set.of("prompt", "echo");
    /** Defined by OpenAI, not implemented: rejected unless null (or, for a few, their default value). */
    private static final Set<String> CHAT_NOT_IMPLEMENTED = Set.of("functions",
            "function_call", "logit_bias", "audio", "modalities", "prediction",
            "reasoning_effort", "service_tier", "store", "metadata", "web_search_options", "verbosity",
            "prompt_cache_key", "safety_identifier");
    private static final Set<String> COMPLETION_NOT_IMPLEMENTED = Set.of("best_of", "suffix", "logit_bias");
    static final int MAX_N = 16;
    /** Sequences one request may start: prompts (completions may send a batch) times n. */
    static final int MAX_SEQUENCES = 64;

    private RequestReader() {
    }

    public static CompletionJob read(JsonNode body, boolean chat, LoadedModel model) {
        if (body == null || !body.isObject()) {
            throw ApiException.invalid("the request body must be a JSON object", null);
        }
        checkParameterNames(body, chat);
        String modelId = text(body, "model", true);
        if (!modelId.equals(model.id())) {
            throw ApiException.notFound("The model '" + modelId + "' does not exist", "model", "model_not_found");
        }
        boolean stream = bool(body, "stream", false);
        boolean includeUsage = false;
        JsonNode options = present(body, "stream_options");
        if (options != null) {
            if (!stream) {
                throw ApiException.invalid("stream_options is only allowed when stream is true", "stream_options");
            }
            if (!options.isObject()) {
                throw ApiException.invalid("stream_options must be an object", "stream_options");
            }
            for (Iterator<String> it = options.fieldNames(); it.hasNext(); ) {
                String name = it.next();
                if (!name.equals("include_usage")) {
                    throw ApiException.invalid("Unrecognized stream option: " + name, "stream_options." + name);
                }
            }
            includeUsage = bool(options, "include_usage", false, "stream_options.include_usage");
        }

        double temperature = number(body, "temperature", 1.0, 0, 2);
        double topP = number(body, "top_p", 1.0, 0, 1);
        if (topP == 0) {
            throw ApiException.invalid("top_p must be greater than 0", "top_p");
        }
        long topKValue = integer(body, "top_k", 0, -1, Integer.MAX_VALUE);
        double minP = number(body, "min_p", 0, 0, 1);
        double repetition = number(body, "repetition_penalty", 1.0, 0, Double.MAX_VALUE);
        if (repetition == 0) {
            throw ApiException.invalid("repetition_penalty must be greater than 0", "repetition_penalty");
        }
        double presence = number(body, "presence_penalty", 0, -2, 2);
        double frequency = number(body, "frequency_penalty", 0, -2, 2);
        int n = (int) integer(body, "n", 1, 1, MAX_N);
        long seed = present(body, "seed") != null ? integer(body, "seed", 0, Long.MIN_VALUE, Long.MAX_VALUE)
                : System.nanoTime();
        List<String> stops = stops(body);
        boolean skipSpecial = bool(body, "skip_special_tokens", true);
        text(body, "user", false);

        boolean logprobs;
        int topLogprobs;
        if (chat) {
            logprobs = bool(body, "logprobs", false);
            topLogprobs = (int) integer(body, "top_logprobs", 0, 0, 20);
            if (present(body, "top_logprobs") != null && !logprobs) {
                throw ApiException.invalid("logprobs must be true when top_logprobs is set", "top_logprobs");
            }
        } else {
            JsonNode lp = present(body, "logprobs");
            logprobs = lp != null;
            topLogprobs = (int) integer(body, "logprobs", 0, 0, 5);
        }
        boolean echo = !chat && bool(body, "echo", false);

        long maxTokens = chat ? Integer.MAX_VALUE : 16; // OpenAI's defaults
        if (present(body, "max_tokens") != null) {
            // 0 with echo asks for the prompt alone, scored with logprobs: lm-evaluation-harness's loglikelihood
            maxTokens = integer(body, "max_tokens", 0, chat ? 1 : 0, Integer.MAX_VALUE);
            if (maxTokens == 0 && !echo) {
                throw ApiException.invalid("max_tokens may be 0 only with echo, which returns the prompt alone",
                        "max_tokens");
            }
        }
        if (chat && present(body, "max_completion_tokens") != null) {
            maxTokens = integer(body, "max_completion_tokens", 0, 1, Integer.MAX_VALUE);
        }

        List<CompletionJob.Prompt> prompts;
        ToolCallFormat toolFormat = null;
        Supplier<TokenConstraint> constraints = null;
        if (chat) {
            ToolRequest tools = ToolRequest.read(body);
            if (tools.callsExpected()) {
                toolFormat = ToolCallFormat.of(model.chatTemplate().source()).orElseThrow(() -> ApiException.invalid(
                        "the chat template of '" + model.id() + "' shows no tool-call format this server can parse ("
                                + ToolCallFormat.known() + "); send tool_choice 'none' or no tools", "tools",
                        "unsupported_tool_format"));
            }
            constraints = OutputConstraints.of(body, tools, toolFormat, model);
            String promptText = renderChat(body, tools, model);
            // the template writes the special tokens
            prompts = List.of(new CompletionJob.Prompt(model.tokenizer().encode(promptText, false), promptText));
        } else {
            prompts = prompts(present(body, "prompt"), model);
            if ((long) prompts.size() * n > MAX_SEQUENCES) {
                throw ApiException.invalid(prompts.size() + " prompts with n = " + n + " ask for " + prompts.size() * n
                        + " completions; at most " + MAX_SEQUENCES + " per request", "prompt");
            }
        }
        boolean explicit = present(body, chat && present(body, "max_completion_tokens") != null
                ? "max_completion_tokens" : "max_tokens") != null;
        for (CompletionJob.Prompt prompt : prompts) {
            checkContext(prompt.ids().length, maxTokens, explicit, model.engine().contextLength(), promptParameter(chat));
        }

        EndConditions ends = EndParameters.read(body, maxTokens, model.tokenizer().vocabSize());
        SamplingParameters parameters = new SamplingParameters(temperature, (int) Math.max(0, topKValue), topP, minP,
                repetition, presence, frequency, topLogprobs);
        return new CompletionJob(chat, modelId, prompts, n, stream, includeUsage, (int) maxTokens,
                parameters, seed, stops, logprobs, topLogprobs, echo, toolFormat, constraints,
                !skipSpecial || toolFormat != null && toolFormat.markerIsSpecial(model.tokenizer()), ends);
    }

    /**
     * A completions prompt as OpenAI takes it: a string, an array of token ids, or a batch of either (an array of
     * strings, an array of arrays of ids).
     */
    private static List<CompletionJob.Prompt> prompts(JsonNode prompt, LoadedModel model) {
        if (prompt == null) {
            throw ApiException.invalid("you must provide a prompt", "prompt");
        }
        if (prompt.isTextual() || (prompt.isArray() && !prompt.isEmpty() && allIntegers(prompt))) {
            return List.of(prompt(prompt, model, "prompt"));
        }
        if (!prompt.isArray() || prompt.isEmpty()) {
            throw ApiException.invalid("prompt must be a string, an array of token ids, or a non-empty array of "
                    + "either", "prompt");
        }
        List<CompletionJob.Prompt> prompts = new ArrayList<>();
        for (int i = 0; i < prompt.size(); i++) {
            JsonNode p = prompt.get(i);
            if (!p.isTextual() && !(p.isArray() && !p.isEmpty() && allIntegers(p))) {
                throw ApiException.invalid("prompt[" + i + "] must be a string or a non-empty array of token ids",
                        "prompt");
            }
            prompts.add(prompt(p, model, "prompt[" + i + "]"));
        }
        return prompts;
    }

    private static CompletionJob.Prompt prompt(JsonNode prompt, LoadedModel model, String where) {
        if (prompt.isTextual()) {
            return new CompletionJob.Prompt(model.tokenizer().encode(prompt.asText(), true), prompt.asText());
        }
        int[] ids = tokenIds(prompt, model.tokenizer().vocabSize(), where);
        return new CompletionJob.Prompt(ids, model.tokenizer().decode(ids, false));
    }

    /** The request field that holds the prompt, which an error about its length names. */
    static String promptParameter(boolean chat) {
        return chat ? "messages" : "prompt";
    }

    /** OpenAI's rule: a prompt must leave room, and an explicit max_tokens must fit with it. */
    private static void checkContext(int promptTokens, long maxTokens, boolean explicit, int context, String param) {
        if (promptTokens == 0) {
            throw ApiException.invalid("the prompt is empty", "prompt");
        }
        if (promptTokens >= context || (explicit && promptTokens + maxTokens > context)) {
            throw ApiException.invalid("This model's maximum context length is " + context + " tokens. However, you "
                    + "requested " + (explicit ? promptTokens + maxTokens : promptTokens) + " tokens (" + promptTokens
                    + " in the prompt" + (explicit ? ", " + maxTokens + " in the completion" : "")
                    + "). Please reduce the length of the prompt or completion.", param, "context_length_exceeded");
        }
    }

    private static void checkParameterNames(JsonNode body, boolean chat) {
        for (Iterator<Map.Entry<String, JsonNode>> it = body.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> field = it.next();
            String name = field.getKey();
            boolean known = COMMON.contains(name) || EndParameters.NAMES.contains(name);
            if (known || (chat ? CHAT_ONLY : COMPLETION_ONLY).contains(name)) {
                continue;
            }
            if ((chat ? CHAT_NOT_IMPLEMENTED : COMPLETION_NOT_IMPLEMENTED).contains(name)) {
                if (!isDefault(name, field.getValue())) {
                    throw ApiException.invalid("the parameter '" + name + "' is not supported by this server", name,
                            "unsupported_parameter");
                }
                continue;
            }
            throw ApiException.invalid("Unrecognized request argument supplied: " + name, name);
        }
    }

    /** Values that ask for nothing beyond what we do anyway (what SDKs may send unprompted). */
    private static boolean isDefault(String name, JsonNode value) {
        if (value.isNull()) {
            return true;
        }
        return switch (name) {
            case "store" -> value.isBoolean(); // no storage
            case "best_of" -> value.isIntegralNumber() && value.asInt() == 1;
            case "logit_bias", "metadata" -> value.isObject() && value.isEmpty();
            case "functions" -> value.isArray() && value.isEmpty();
            case "function_call" -> value.isTextual() && value.asText().equals("none");
            default -> false;
        };
    }

    private static String renderChat(JsonNode body, ToolRequest tools, LoadedModel model) {
        ChatTemplate template = model.chatTemplate();
        List<Map<String, Object>> list = ChatMessages.forTemplate(ChatMessages.read(present(body, "messages")),
                template.source());
        Map<String, Object> kwargs = templateKwargs(body);
        try {
            return template.render(list, tools.tools(), true, model.tokenizerConfig().bosToken(),
                    model.tokenizerConfig().eosToken(), kwargs);
        } catch (RuntimeException e) {
            throw ApiException.invalid("the chat template failed on these messages: " + e.getMessage(), "messages",
                    "template_error");
        }
    }

    /**
     * chat_template_kwargs: extra template variables (Qwen3's enable_thinking). As in vLLM they may override
     * add_generation_prompt, bos_token and eos_token; messages and tools are refused, the request has fields for them.
     */
    private static Map<String, Object> templateKwargs(JsonNode body) {
        JsonNode kwargs = present(body, "chat_template_kwargs");
        if (kwargs == null) {
            return Map.of();
        }
        if (!kwargs.isObject()) {
            throw ApiException.invalid("chat_template_kwargs must be an object", "chat_template_kwargs");
        }
        for (Iterator<String> it = kwargs.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            if (SERVER_TEMPLATE_VARIABLES.contains(name)) {
                throw ApiException.invalid("chat_template_kwargs may not set '" + name + "': send it as the request's "
                        + name, "chat_template_kwargs." + name);
            }
        }
        return OpenAiShapes.JSON.convertValue(kwargs, new TypeReference<Map<String, Object>>() { });
    }

    private static List<String> stops(JsonNode body) {
        JsonNode stop = present(body, "stop");
        if (stop == null) {
            return List.of();
        }
        List<String> stops = new ArrayList<>();
        if (stop.isTextual()) {
            stops.add(stop.asText());
        } else if (stop.isArray() && stop.size() <= 4) {
            for (JsonNode s : stop) {
                if (!s.isTextual()) {
                    throw ApiException.invalid("stop must be a string or an array of up to 4 strings", "stop");
                }
                stops.add(s.asText());
            }
        } else {
            throw ApiException.invalid("stop must be a string or an array of up to 4 strings", "stop");
        }
        if (stops.stream().anyMatch(String::isEmpty)) {
            throw ApiException.invalid("stop strings may not be empty", "stop");
        }
        return stops;
    }

    static boolean allIntegers(JsonNode array) {
        for (JsonNode e : array) {
            if (!e.isIntegralNumber()) {
                return false;
            }
        }
        return true;
    }

    static int[] tokenIds(JsonNode array, int vocab, String where) {
        int[] ids = new int[array.size()];
        for (int i = 0; i < ids.length; i++) {
            JsonNode given = array.get(i);
            long id = given.canConvertToLong() ? given.asLong() : -1; // not wrapped: 2^64 + 5 is not token 5
            if (id < 0 || id >= vocab) {
                throw ApiException.invalid(where + ": token id " + given + " is outside the vocabulary (0.." + (vocab - 1)
                        + ")", where.contains("[") ? where.substring(0, where.indexOf('[')) : where);
            }
            ids[i] = (int) id;
        }
        return ids;
    }

    /** The field, or null when absent or JSON null (null means "the default" throughout). */
    private static JsonNode present(JsonNode o, String name) {
        JsonNode v = o.get(name);
        return v == null || v.isNull() ? null : v;
    }

    private static String text(JsonNode o, String name, boolean required) {
        return text(o, name, required, name);
    }

    private static String text(JsonNode o, String name, boolean required, String param) {
        JsonNode v = present(o, name);
        if (v == null) {
            if (required) {
                throw ApiException.invalid("you must provide " + param, param);
            }
            return null;
        }
        if (!v.isTextual()) {
            throw ApiException.invalid(param + " must be a string", param);
        }
        return v.asText();
    }

    static boolean bool(JsonNode o, String name, boolean fallback) {
        return bool(o, name, fallback, name);
    }

    private static boolean bool(JsonNode o, String name, boolean fallback, String param) {
        JsonNode v = present(o, name);
        if (v == null) {
            return fallback;
        }
        if (!v.isBoolean()) {
            throw ApiException.invalid(param + " must be a boolean", param);
        }
        return v.asBoolean();
    }

    private static double number(JsonNode o, String name, double fallback, double min, double max) {
        JsonNode v = present(o, name);
        if (v == null) {
            return fallback;
        }
        if (!v.isNumber()) {
            throw ApiException.invalid(name + " must be a number", name);
        }
        double d = v.asDouble();
        if (!(d >= min && d <= max)) {
            throw ApiException.invalid(d + " is " + (d < min ? "less than the minimum of " + fmt(min)
                    : "greater than the maximum of " + fmt(max)) + " - '" + name + "'", name);
        }
        return d;
    }

    /** An integer in [min, max], compared exactly (never wrapped into range); {@code fallback} when absent. */
    static long integer(JsonNode o, String name, long fallback, long min, long max) {
        JsonNode v = present(o, name);
        if (v == null) {
            return fallback;
        }
        if (!v.isIntegralNumber()) {
            throw ApiException.invalid(name + " must be an integer", name);
        }
        // compared as a BigInteger: a value beyond 64 bits (seed: 2^70) is out of range, not "not an integer"
        BigInteger value = v.bigIntegerValue();
        boolean tooSmall = value.compareTo(BigInteger.valueOf(min)) < 0;
        if (tooSmall || value.compareTo(BigInteger.valueOf(max)) > 0) {
            throw ApiException.invalid(value + " is " + (tooSmall ? "less than the minimum of " + min
                    : "greater than the maximum of " + max) + " - '" + name + "'", name);
        }
        return value.longValue();
    }

    private static String fmt(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
    }
}
