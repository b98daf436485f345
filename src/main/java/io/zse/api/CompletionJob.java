package io.zse.api;

import io.zse.api.tools.ToolCallFormat;
import io.zse.generate.SamplingParameters;
import io.zse.generate.TokenConstraint;

import java.util.List;
import java.util.function.Supplier;

/**
 * A validated /v1/chat/completions or /v1/completions request, tokenized against the served model.
 *
 * @param maxTokens   the most tokens per choice (Integer.MAX_VALUE: whatever the context leaves)
 * @param logprobs    report the chosen tokens' logprobs
 * @param topLogprobs alternatives per token (chat top_logprobs; completions logprobs=N)
 * @param echo        completions only: the response text starts with the prompt
 * @param toolFormat  how tool calls are parsed out of the output (null: the output is all reply text)
 * @param constraints a new constraint per choice (structured output, a forced tool call); null when output is free
 * @param keepSpecialTokens special tokens stay in the text (a tool-call marker that is one)
 */
public record CompletionJob(boolean chat, String model, int[] promptIds, String promptText, int n, boolean stream,
                            boolean includeUsage, int maxTokens, SamplingParameters parameters, long seed,
                            List<String> stops, boolean logprobs, int topLogprobs, boolean echo,
                            ToolCallFormat toolFormat, Supplier<TokenConstraint> constraints,
                            boolean keepSpecialTokens) {
}
