package io.zse.api;

import io.zse.api.tools.ToolCallFormat;
import io.zse.generate.EndConditions;
import io.zse.generate.SamplingParameters;
import io.zse.generate.TokenConstraint;

import java.util.List;
import java.util.function.Supplier;

/**
 * A validated /v1/chat/completions or /v1/completions request, tokenized against the served model.
 *
 * @param prompts     one for chat; completions may send several, each getting {@code n} choices
 * @param maxTokens   the most tokens per choice (Integer.MAX_VALUE: whatever the context leaves)
 * @param logprobs    report the chosen tokens' logprobs
 * @param topLogprobs alternatives per token (chat top_logprobs; completions logprobs=N)
 * @param echo        completions only: the response text starts with the prompt (with logprobs: and its logprobs)
 * @param toolFormat  how tool calls are parsed out of the output (null: the output is all reply text)
 * @param constraints a new constraint per choice (structured output, a forced tool call); null when output is free
 * @param keepSpecialTokens special tokens stay in the text (skip_special_tokens false, or a tool-call marker that is
 *                          one)
 * @param ends        ignore_eos, min_tokens, stop_token_ids, include_stop_str_in_output
 */
public record CompletionJob(boolean chat, String model, List<Prompt> prompts, int n, boolean stream,
                            boolean includeUsage, int maxTokens, SamplingParameters parameters, long seed,
                            List<String> stops, boolean logprobs, int topLogprobs, boolean echo,
                            ToolCallFormat toolFormat, Supplier<TokenConstraint> constraints,
                            boolean keepSpecialTokens, EndConditions ends) {
    /** One prompt: its token ids (special tokens included) and its text. */
    public record Prompt(int[] ids, String text) {
    }

    public CompletionJob {
        prompts = List.copyOf(prompts);
    }

    /** Choices in the response: n for each prompt, numbered prompt by prompt as OpenAI does. */
    public int choices() {
        return prompts.size() * n;
    }

    /** The prompt choice {@code index} continues. */
    public Prompt promptOf(int index) {
        return prompts.get(index / n);
    }

    /** Tokens of every prompt (each counted once, however many choices it has). */
    public int promptTokens() {
        return prompts.stream().mapToInt(p -> p.ids().length).sum();
    }

    /** The prompt's own token logprobs are reported (completions with echo and logprobs). */
    public boolean promptLogprobs() {
        return echo && logprobs;
    }
}
