package io.zse.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.zse.serve.LoadedModel;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import java.util.function.BooleanSupplier;
import java.util.function.Function;

/** Starts chat and text completions for any front door (REST routes, Funqy): validate, tokenize, admit. */
@ApplicationScoped
public class Completions {
    @Inject
    ApiGate gate;

    /**
     * @param clientGone asked between the prompts scored before admission (echo with logprobs): a client that left
     *                   stops them
     * @param sinkFor    picks where output goes once the request is known to stream or not
     * @return the run, already admitted to the engine
     */
    public CompletionRun start(JsonNode body, boolean chat, String caller, BooleanSupplier clientGone,
                               Function<CompletionJob, CompletionSink> sinkFor) {
        LoadedModel model = gate.model();
        CompletionJob job = RequestReader.read(body, chat, model);
        CompletionSink sink = sinkFor.apply(job);
        CompletionRun run = new CompletionRun(job, model, sink, tokens -> gate.charge(caller, tokens));
        try {
            run.start(clientGone);
        } catch (RuntimeException e) {
            // a stream whose heartbeat already wrote its head gets the error as an event and ends; a stream refused
            // with 503 must not keep its heartbeat
            ApiException error = Failures.toApi(e);
            sink.fail(error);
            run.cancel();
            throw error;
        }
        return run;
    }
}
