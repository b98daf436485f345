package io.zse.api;

import io.zse.generate.SamplingParameters;

import java.util.List;

/**
 * A validated /v1/chat/completions or /v1/completions request, tokenized against the served model.
 *
 * @param maxTokens   the most tokens per choice (Integer.MAX_VALUE: whatever the context leaves)
 * @param logprobs    report the chosen tokens' logprobs
 * @param topLogprobs alternatives per token (chat top_logprobs; completions logprobs=N)
 * @param echo        completions only: the response text starts with the prompt
 */
public record CompletionJob(boolean chat, String model, int[] promptIds, String promptText, int n, boolean stream,
                            boolean includeUsage, int maxTokens, SamplingParameters parameters, long seed,
                            List<String> stops, boolean logprobs, int topLogprobs, boolean echo) {
}
