package io.zse.tokenizer.template;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A chat template (the {@code chat_template} of tokenizer_config.json), rendered the way Hugging Face transformers'
 * {@code apply_chat_template} renders it with Jinja2: trim_blocks, lstrip_blocks, loop controls, a sandbox that
 * refuses mutating methods, {@code tojson} as {@code json.dumps(ensure_ascii=False)}, {@code raise_exception} and
 * {@code strftime_now}. Compile once; {@link #render} is thread-safe.
 *
 * <p>Context values are plain Java: String, Number, Boolean, null, List and (insertion-ordered) Map, as Jackson
 * produces them from JSON.
 */
public final class ChatTemplate {
    private final String source;
    private final List<Node> body;

    private ChatTemplate(String source, List<Node> body) {
        this.source = source;
        this.body = body;
    }

    /** Parses the template; a syntax error is a {@link ChatTemplateException}. */
    public static ChatTemplate compile(String source) {
        try {
            return new ChatTemplate(source, TemplateParser.parse(source));
        } catch (ChatTemplateException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new ChatTemplateException("template syntax error: " + e, e);
        }
    }

    public String source() {
        return source;
    }

    /** Renders with the given variables (messages, tools, add_generation_prompt, bos_token, ...). */
    public String render(Map<String, Object> context) {
        try {
            return TemplateRenderer.INSTANCE.render(body, context);
        } catch (ChatTemplateException e) {
            throw e;
        } catch (StackOverflowError e) {
            throw new ChatTemplateException("template recursion too deep", e);
        } catch (RuntimeException e) {
            throw new ChatTemplateException("template error: " + e.getMessage(), e);
        }
    }

    /**
     * Renders the way {@code tokenizer.apply_chat_template(messages, tools=..., add_generation_prompt=..., **extra)}
     * does: {@code tools} is passed even when null (so {@code tools is defined} holds, {@code tools is none} too);
     * a null bos/eos token is left undefined, as transformers leaves out special tokens a tokenizer lacks.
     */
    public String render(List<Map<String, Object>> messages, List<Map<String, Object>> tools, boolean addGenerationPrompt,
            String bosToken, String eosToken, Map<String, Object> extra) {
        Map<String, Object> context = new HashMap<>();
        if (bosToken != null) {
            context.put("bos_token", bosToken);
        }
        if (eosToken != null) {
            context.put("eos_token", eosToken);
        }
        context.put("documents", null);
        context.put("add_generation_prompt", addGenerationPrompt);
        if (extra != null) {
            context.putAll(extra); // as apply_chat_template's **kwargs: they may override all but messages and tools
        }
        context.put("messages", messages);
        context.put("tools", tools);
        return render(context);
    }
}
