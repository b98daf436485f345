package io.zse.serve;

import io.zse.backend.KvCache;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;

/**
 * Decides what one engine step runs, within a token budget: first one decode token for every running sequence that
 * is decoding (so streams keep flowing whatever else waits), then the next chunk of each running sequence still
 * computing its prompt, then new sequences from the waiting queue in arrival order, each admitted only when the pool
 * has blocks for its whole prompt (after the prefix cache has lent what it holds). A sequence that needs a block when
 * none is left preempts the newest running sequence, which gives its blocks back and waits at the head of the queue
 * to be recomputed; nobody fails because somebody else was admitted. With the prefix cache on, a prompt that starts
 * like one still being computed waits for it, and then takes its blocks from the cache.
 *
 * <p>A sequence's computed positions are its cache's length; a step that runs its last token yields the logits its
 * next token is sampled from.
 */
final class StepScheduler<S extends StepScheduler.Schedulable> {
    /** What the scheduler needs of a sequence. */
    interface Schedulable {
        KvCache cache();

        /**
         * Prompt and generated tokens from position 0; all but the last are what a fully computed sequence has in its
         * cache. Read only: a new array replaces it when a token is added.
         */
        int[] tokens();
    }

    /** Run tokens start..start+count-1 of a sequence; {@code sampled}: the chunk ends its tokens. */
    record Work<S>(S sequence, int start, int count, boolean sampled) {
    }

    /** One step: the work in batch order, and the sequences preempted to make room for it. */
    record Plan<S>(List<Work<S>> work, List<S> preempted) {
        int tokens() {
            return work.stream().mapToInt(Work::count).sum();
        }
    }

    private final int maxBatchTokens;
    private final int maxRunning;
    private final boolean prefixCache;

    StepScheduler(int maxBatchTokens, int maxRunning, boolean prefixCache) {
        if (maxBatchTokens < 1 || maxRunning < 1) {
            throw new IllegalArgumentException("a step needs room for a token and a sequence");
        }
        this.maxBatchTokens = maxBatchTokens;
        this.maxRunning = maxRunning;
        this.prefixCache = prefixCache;
    }

    /**
     * Plans a step. {@code running} is in admission order; admitted sequences are appended to it and removed from
     * {@code waiting}; preempted ones leave it for the head of {@code waiting} with their caches emptied. The caches of
     * planned work hold the blocks it needs.
     */
    Plan<S> schedule(List<S> running, Deque<S> waiting) {
        Step step = new Step(running, waiting);
        // decoding sequences first, oldest first; then the ones still prefilling
        for (boolean decoding : new boolean[]{true, false}) {
            for (int i = 0; i < running.size() && step.budget > 0; i++) {
                S s = running.get(i);
                int pending = s.tokens().length - s.cache().length();
                // a sequence planned in the decoding pass still has one pending token: the second pass skips it
                if ((pending == 1) != decoding) {
                    continue;
                }
                int count = Math.min(pending, step.budget);
                if (!step.reserveOrPreempt(s, count)) {
                    break; // s was the newest and itself had to go: nobody after it is left
                }
                step.add(s, count, pending);
            }
        }
        while (step.budget > 0 && running.size() < maxRunning && !waiting.isEmpty()) {
            S s = waiting.peekFirst();
            KvCache cache = s.cache();
            if (prefixCache && cache.length() == 0) {
                if (prefixBeingComputed(s, running)) {
                    break; // it waits a step or two and then finds that prefix cached, instead of computing it again
                }
                // the last token is always computed: its logits give the next token
                cache.adoptPrefix(s.tokens(), s.tokens().length - 1);
            }
            if (cache.blocksMissing(s.tokens().length) > cache.pool().availableBlocks()) {
                cache.release(); // not now: the adopted prefix blocks go back (they stay cached)
                break;
            }
            waiting.pollFirst();
            running.add(s);
            int pending = s.tokens().length - cache.length();
            int count = Math.min(pending, step.budget);
            if (!cache.reserve(cache.length() + count)) {
                throw new IllegalStateException("blocks counted free were not"); // checked just above
            }
            step.add(s, count, pending);
        }
        return new Plan<>(List.copyOf(step.work), List.copyOf(step.preempted));
    }

    /**
     * Whether a running sequence is still computing the prompt {@code s} starts with (its first block at least): the
     * copies of an {@code n > 1} request, or requests sharing a system prompt, arriving together.
     */
    private boolean prefixBeingComputed(S s, List<S> running) {
        int block = s.cache().pool().blockSize();
        if (s.tokens().length <= block) {
            return false;
        }
        int[] first = s.tokens();
        for (S r : running) {
            if (r.tokens().length - r.cache().length() > 1 && r.tokens().length > block
                    && r.cache().longRopeFrom() == s.cache().longRopeFrom()
                    && Arrays.equals(r.tokens(), 0, block, first, 0, block)) {
                return true;
            }
        }
        return false;
    }

    /** The step being planned: its work, what it preempted, the tokens still free. */
    private final class Step {
        final List<S> running;
        final Deque<S> waiting;
        final List<Work<S>> work = new ArrayList<>();
        final List<S> preempted = new ArrayList<>();
        int budget = maxBatchTokens;

        Step(List<S> running, Deque<S> waiting) {
            this.running = running;
            this.waiting = waiting;
        }

        void add(S s, int count, int pending) {
            work.add(new Work<>(s, s.cache().length(), count, count == pending));
            budget -= count;
        }

        /**
         * Takes the blocks {@code s} needs for {@code count} more tokens, preempting the newest running sequences
         * (their work in this step is taken back) while none are left. False when {@code s} itself had to go.
         */
        boolean reserveOrPreempt(S s, int count) {
            while (!s.cache().reserve(s.cache().length() + count)) {
                S victim = running.removeLast();
                for (int i = work.size() - 1; i >= 0; i--) {
                    if (work.get(i).sequence() == victim) {
                        budget += work.remove(i).count();
                    }
                }
                victim.cache().release();
                waiting.addFirst(victim);
                preempted.add(victim);
                if (victim == s) {
                    return false;
                }
            }
            return true;
        }
    }
}
