package io.zse.serve;

import io.zse.generate.SequenceDecoder;

/**
 * Receives one sequence's output. Called on the engine thread: implementations hand the data on (a write to a
 * socket, completing a future) and must not block or compute.
 */
public interface GenerationListener {
    /** The prompt has been run (before the first step); lets a stream stop sending heartbeats. */
    default void onPrefilled() {
    }

    /** One generated token (or the end of the sequence); the last step has {@code finished()} true. */
    void onStep(SequenceDecoder.Step step);

    /** The sequence failed (a bug or the engine shutting down); no further calls follow. */
    void onError(RuntimeException error);
}
