package io.zse.api;

import io.zse.api.tools.ToolCall;
import io.zse.api.tools.ToolCallParser;
import io.zse.generate.Sampler;
import io.zse.generate.SequenceDecoder;
import io.zse.serve.AdmissionException;
import io.zse.serve.BatchingEngine;
import io.zse.serve.GenerationListener;
import io.zse.serve.GenerationRequest;
import io.zse.serve.LoadedModel;
import org.jboss.logging.Logger;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import java.util.function.IntConsumer;

/**
 * One API request in flight: its {@code n} sequences in the engine, their output turned into OpenAI chunks or one
 * response. All listener calls arrive on the engine thread, one at a time, so the state here needs no locks.
 */
public final class CompletionRun {
    private static final Logger LOG = Logger.getLogger(CompletionRun.class);

    private final CompletionJob job;
    private final LoadedModel model;
    private final CompletionSink sink;
    private final IntConsumer onTokensUsed;
    private final String id;
    private final long created = System.currentTimeMillis() / 1000;
    private final List<BatchingEngine.Handle> handles = new ArrayList<>();
    private final StringBuilder[] texts;
    private final List<List<OpenAiShapes.GeneratedToken>> tokens = new ArrayList<>();
    private final String[] finishes;
    private List<List<Sampler.Choice>> promptScores; // per prompt, with echo and logprobs
    private final ToolCallParser[] parsers;  // per choice; null entries when tool calls are not parsed
    private final List<List<ToolCall>> calls = new ArrayList<>();
    /** Each choice's text so far in code points, the echoed prompt's included: text_offset counts characters. */
    private final int[] offsets;
    private int finished;
    private int completionTokens;
    private boolean failed;

    /**
     * @param onTokensUsed told the request's total tokens when it ends (rate limiting)
     */
    public CompletionRun(CompletionJob job, LoadedModel model, CompletionSink sink, IntConsumer onTokensUsed) {
        this.job = job;
        this.model = model;
        this.sink = sink;
        this.onTokensUsed = onTokensUsed;
        this.id = (job.chat() ? "chatcmpl-" : "cmpl-") + UUID.randomUUID().toString().replace("-", "");
        this.texts = new StringBuilder[job.choices()];
        this.finishes = new String[job.choices()];
        this.parsers = new ToolCallParser[job.choices()];
        this.offsets = new int[job.choices()];
        for (int i = 0; i < job.choices(); i++) {
            texts[i] = new StringBuilder();
            offsets[i] = job.echo() ? OpenAiShapes.characters(job.promptOf(i).text()) : 0;
            tokens.add(new ArrayList<>());
            calls.add(new ArrayList<>());
            parsers[i] = job.toolFormat() == null ? null : job.toolFormat().newParser();
        }
    }

    /**
     * Admits the sequences (n per prompt; none for max_tokens 0); the first chunks (the role, for chat; the echoed
     * prompt) are sent at once.
     *
     * @param clientGone asked before each prompt is scored (echo with logprobs), the work that precedes admission
     * @throws ApiException 503 when the engine cannot take them; 499 when the client left while prompts were scored
     */
    public synchronized void start(BooleanSupplier clientGone) {
        if (job.promptLogprobs()) {
            scorePrompts(clientGone);
        }
        if (job.maxTokens() > 0) {
            submit();
        }
        // the engine thread waits on this lock, so these chunks go out before any generated text
        if (job.stream()) {
            for (int i = 0; i < job.choices(); i++) {
                if (job.chat()) {
                    sink.chunk(OpenAiShapes.chunk(job, id, created, i, true, "", List.of(), null, model.tokenizer()));
                } else if (job.echo()) {
                    sink.chunk(OpenAiShapes.echoChunk(job, id, created, i, promptLogprobs(i), model.tokenizer()));
                }
            }
        }
        if (job.maxTokens() == 0) { // echo alone: the prompt is the whole answer, and the engine has nothing to do
            for (int i = 0; i < job.choices(); i++) {
                new Choice(i).onStep(new SequenceDecoder.Step(null, "", "length"));
            }
        }
    }

    /** Each prompt's own token logprobs, computed before its sequences start. */
    private void scorePrompts(BooleanSupplier clientGone) {
        promptScores = new ArrayList<>();
        for (CompletionJob.Prompt prompt : job.prompts()) {
            if (clientGone.getAsBoolean()) {
                throw ApiException.clientGone();
            }
            promptScores.add(model.engine().runAside(pass -> pass.tokenLogprobs(prompt.ids(), job.topLogprobs())));
        }
    }

    /** What the echoed prompt of choice {@code index} reports: its ids and its tokens' logprobs (null without). */
    private OpenAiShapes.PromptLogprobs promptLogprobs(int index) {
        return promptScores == null ? null
                : new OpenAiShapes.PromptLogprobs(job.promptOf(index).ids(), job.promptOf(index).text(),
                promptScores.get(index / job.n()));
    }

    private void submit() {
        try {
            for (int i = 0; i < job.choices(); i++) {
                // choice i of a prompt samples with seed + i so n choices differ but each is reproducible
                GenerationRequest request = new GenerationRequest(job.promptOf(i).ids(), job.maxTokens(),
                        job.parameters(), job.seed() + i % job.n(), job.stops(),
                        job.constraints() == null ? null : job.constraints().get(), job.keepSpecialTokens(),
                        job.logprobs() || job.topLogprobs() > 0, job.ends());
                handles.add(model.engine().submit(request, new Choice(i)));
            }
        } catch (AdmissionException e) {
            cancel();
            throw ApiException.unavailable(e.getMessage(), e.retryAfterSeconds());
        } catch (IllegalArgumentException e) {
            cancel();
            throw ApiException.invalid(e.getMessage(), RequestReader.promptParameter(job.chat()), "context_length_exceeded");
        }
    }

    /**
     * The client went away (or the run could not start): every sequence stops and frees its KV cache at the engine's
     * next step, and the sink lets go of what it holds, since no listener call will end it.
     */
    public void cancel() {
        handles.forEach(BatchingEngine.Handle::cancel);
        sink.release();
    }

    private final class Choice implements GenerationListener {
        private final int index;

        Choice(int index) {
            this.index = index;
        }

        @Override
        public void onStep(SequenceDecoder.Step step) {
            synchronized (CompletionRun.this) {
                step(step);
            }
        }

        private void step(SequenceDecoder.Step step) {
            if (failed) {
                return;
            }
            // the token's text begins where the choice's text so far ends (after the echoed prompt)
            List<OpenAiShapes.GeneratedToken> stepTokens = step.choice() == null ? List.of()
                    : List.of(new OpenAiShapes.GeneratedToken(step.choice(), offsets[index]));
            if (step.choice() != null) {
                completionTokens++;
                tokens.get(index).addAll(stepTokens);
            }
            String text = step.text();
            List<ToolCall> newCalls = List.of();
            if (parsers[index] != null) {
                // reply text leaves as soon as it cannot be part of a call; calls leave whole
                ToolCallParser.Update update = parsers[index].append(text);
                if (step.finished()) {
                    ToolCallParser.Update end = parsers[index].finish();
                    update = new ToolCallParser.Update(update.content() + end.content(),
                            concat(update.calls(), end.calls()));
                }
                text = update.content();
                newCalls = update.calls();
            }
            texts[index].append(text);
            offsets[index] += OpenAiShapes.characters(text);
            if (job.stream() && (!text.isEmpty() || (job.logprobs() && !stepTokens.isEmpty()))) {
                sink.chunk(OpenAiShapes.chunk(job, id, created, index, false, text, stepTokens, null,
                        model.tokenizer()));
            }
            for (ToolCall call : newCalls) {
                if (job.stream()) {
                    OpenAiShapes.toolCallChunks(job, id, created, index, calls.get(index).size(), call)
                            .forEach(sink::chunk);
                }
                calls.get(index).add(call);
            }
            if (step.finished()) {
                // OpenAI: a turn that ends in calls (not cut by the length limit) finishes with "tool_calls"
                finishes[index] = calls.get(index).isEmpty() || !step.finish().equals("stop") ? step.finish()
                        : "tool_calls";
                if (job.stream()) {
                    sink.chunk(OpenAiShapes.chunk(job, id, created, index, false, null, List.of(), finishes[index],
                            model.tokenizer()));
                }
                if (++finished == job.choices()) {
                    complete();
                }
            }
        }

        @Override
        public void onError(RuntimeException error) {
            synchronized (CompletionRun.this) {
                failed(error);
            }
        }

        private void failed(RuntimeException error) {
            if (failed) {
                return;
            }
            failed = true;
            cancel();
            sink.fail(Failures.toApi(error));
        }
    }

    private static List<ToolCall> concat(List<ToolCall> a, List<ToolCall> b) {
        List<ToolCall> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    private void complete() {
        onTokensUsed.accept(job.promptTokens() + completionTokens);
        if (job.stream()) {
            if (job.includeUsage()) {
                sink.chunk(OpenAiShapes.usageChunk(job, id, created, completionTokens));
            }
            sink.complete(null);
            return;
        }
        List<OpenAiShapes.ChoiceResult> results = new ArrayList<>();
        for (int i = 0; i < job.choices(); i++) {
            results.add(new OpenAiShapes.ChoiceResult(texts[i].toString(), finishes[i], tokens.get(i), calls.get(i),
                    promptLogprobs(i)));
        }
        sink.complete(OpenAiShapes.response(job, id, created, results, model.tokenizer(), completionTokens));
    }
}
