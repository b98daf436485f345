package io.zse.serve;

import io.zse.backend.KvBlockPool;
import io.zse.backend.KvCache;
import io.zse.backend.KvCacheType;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What one step runs: the token budget, decode before prefill, arrival order, chunks, preemption, prefix hits. */
class StepSchedulerTest {
    private static final int BLOCK = 4;

    /** A sequence of given tokens; "running a step" is setting its cache length, as the model does. */
    private static final class Seq implements StepScheduler.Schedulable {
        final String name;
        final KvCache cache;
        int[] tokens;

        Seq(String name, KvBlockPool pool, int promptLength, int firstToken) {
            this.name = name;
            this.cache = new KvCache(pool, 1000);
            this.tokens = IntStream.range(firstToken, firstToken + promptLength).toArray();
        }

        @Override
        public KvCache cache() {
            return cache;
        }

        @Override
        public int[] tokens() {
            return tokens.clone();
        }

        @Override
        public String toString() {
            return name;
        }
    }

    private static KvBlockPool pool(int blocks) {
        return new KvBlockPool(KvCacheType.F32, 1, 1, 2, BLOCK, blocks, Arena.ofAuto());
    }

    /** Runs the planned work as the engine would: the caches grow, sampled sequences get one more token. */
    private static void run(StepScheduler.Plan<Seq> plan, boolean publish) {
        for (StepScheduler.Work<Seq> w : plan.work()) {
            w.sequence().cache.setLength(w.start() + w.count());
            if (publish) {
                w.sequence().cache.publishComputed(w.sequence().tokens);
            }
            if (w.sampled()) {
                int[] t = w.sequence().tokens;
                w.sequence().tokens = IntStream.concat(IntStream.of(t), IntStream.of(9000 + t.length)).toArray();
            }
        }
    }

    private static String describe(StepScheduler.Plan<Seq> plan) {
        List<String> parts = new ArrayList<>();
        plan.work().forEach(w -> parts.add(w.sequence() + ":" + w.start() + "+" + w.count() + (w.sampled() ? "*" : "")));
        return String.join(" ", parts);
    }

    @Test
    void longPromptsAreChunkedAndRunningStreamsDecodeFirst() {
        KvBlockPool pool = pool(100);
        StepScheduler<Seq> scheduler = new StepScheduler<>(8, 16, false);
        List<Seq> running = new ArrayList<>();
        Deque<Seq> waiting = new ArrayDeque<>();
        Seq a = new Seq("a", pool, 3, 0);
        waiting.add(a);
        StepScheduler.Plan<Seq> plan = scheduler.schedule(running, waiting);
        assertEquals("a:0+3*", describe(plan), "a short prompt runs whole and is sampled");
        run(plan, false);

        Seq b = new Seq("b", pool, 20, 100);
        Seq c = new Seq("c", pool, 2, 200);
        waiting.add(b);
        waiting.add(c);
        plan = scheduler.schedule(running, waiting);
        assertEquals("a:3+1* b:0+7", describe(plan), "a's decode token first; b's prompt takes the rest of the budget");
        assertEquals(List.of(a, b), running);
        assertEquals(List.of(c), List.copyOf(waiting), "c waits: the budget is spent");
        run(plan, false);

        plan = scheduler.schedule(running, waiting);
        assertEquals("a:4+1* b:7+7", describe(plan));
        run(plan, false);
        plan = scheduler.schedule(running, waiting);
        assertEquals("a:5+1* b:14+6* c:0+1", describe(plan), "b's last chunk is sampled; c starts with what is left");
        run(plan, false);
        plan = scheduler.schedule(running, waiting);
        assertEquals("a:6+1* b:20+1* c:1+1*", describe(plan), "decoders in admission order, then c's prompt");
    }

    @Test
    void theBatchHoldsAtMostMaxRunningSequences() {
        KvBlockPool pool = pool(100);
        StepScheduler<Seq> scheduler = new StepScheduler<>(100, 2, false);
        List<Seq> running = new ArrayList<>();
        Deque<Seq> waiting = new ArrayDeque<>(List.of(new Seq("a", pool, 2, 0), new Seq("b", pool, 2, 10),
                new Seq("c", pool, 2, 20)));
        assertEquals("a:0+2* b:0+2*", describe(scheduler.schedule(running, waiting)));
        assertEquals(1, waiting.size());
    }

    @Test
    void aPromptWaitsUntilThePoolHasBlocksForAllOfIt() {
        KvBlockPool pool = pool(4); // 16 positions
        StepScheduler<Seq> scheduler = new StepScheduler<>(100, 8, false);
        List<Seq> running = new ArrayList<>();
        Deque<Seq> waiting = new ArrayDeque<>();
        Seq a = new Seq("a", pool, 9, 0);   // 3 blocks
        Seq b = new Seq("b", pool, 5, 100); // 2 blocks: only 1 left
        Seq c = new Seq("c", pool, 1, 200); // would fit, but arrives after b
        waiting.addAll(List.of(a, b, c));
        StepScheduler.Plan<Seq> plan = scheduler.schedule(running, waiting);
        assertEquals("a:0+9*", describe(plan), "b does not fit and c does not jump the queue");
        assertEquals(1, pool.availableBlocks());
        run(plan, false);
        a.cache.release();
        running.remove(a);
        assertEquals("b:0+5* c:0+1*", describe(scheduler.schedule(running, waiting)));
    }

    @Test
    void whenBlocksRunOutTheNewestSequenceIsPreemptedAndRecomputedLater() {
        KvBlockPool pool = pool(4);
        StepScheduler<Seq> scheduler = new StepScheduler<>(100, 8, false);
        List<Seq> running = new ArrayList<>();
        Deque<Seq> waiting = new ArrayDeque<>();
        Seq a = new Seq("a", pool, 8, 0);   // blocks 1-2, full
        Seq b = new Seq("b", pool, 7, 100); // blocks 3-4, one slot left
        waiting.addAll(List.of(a, b));
        run(scheduler.schedule(running, waiting), false);
        assertEquals(0, pool.availableBlocks());

        // a needs a third block for its next token: b, the newest, gives its blocks back and waits at the head
        StepScheduler.Plan<Seq> plan = scheduler.schedule(running, waiting);
        assertEquals(List.of(b), plan.preempted());
        assertEquals("a:8+1*", describe(plan), "b's decode token, planned before a asked, is taken back");
        assertEquals(List.of(a), running);
        assertSame(b, waiting.peekFirst());
        assertEquals(0, b.cache.length());
        assertEquals(0, b.cache.blocks());
        run(plan, false);

        // b comes back (recomputing its prompt and the token it generated) once a has finished
        assertEquals("a:9+1*", describe(scheduler.schedule(running, waiting)), "not while b does not fit");
        a.cache.release();
        running.clear();
        plan = scheduler.schedule(running, waiting);
        assertEquals("b:0+8*", describe(plan));
    }

    @Test
    void theNewestSequencePreemptsItselfWhenNothingNewerIsLeft() {
        KvBlockPool pool = pool(3);
        StepScheduler<Seq> scheduler = new StepScheduler<>(100, 8, false);
        List<Seq> running = new ArrayList<>();
        Deque<Seq> waiting = new ArrayDeque<>();
        Seq a = new Seq("a", pool, 3, 0);
        Seq b = new Seq("b", pool, 8, 100);
        waiting.addAll(List.of(a, b));
        run(scheduler.schedule(running, waiting), false); // a: 1 block, b: 2
        // a's next token fits its block; b's needs a 4th block, and nothing newer than b is left to give one
        StepScheduler.Plan<Seq> plan = scheduler.schedule(running, waiting);
        assertEquals(List.of(b), plan.preempted());
        assertEquals("a:3+1*", describe(plan));
        assertEquals(List.of(a), running);
        assertSame(b, waiting.peekFirst());
    }

    @Test
    void promptsThatStartTheSameShareCachedBlocks() {
        KvBlockPool pool = pool(10);
        StepScheduler<Seq> scheduler = new StepScheduler<>(100, 8, true);
        List<Seq> running = new ArrayList<>();
        Deque<Seq> waiting = new ArrayDeque<>();
        Seq a = new Seq("a", pool, 10, 0);
        waiting.add(a);
        run(scheduler.schedule(running, waiting), true);
        a.cache.release(); // a ends: its two full blocks stay cached
        running.clear();
        assertEquals(0, pool.usedBlocks());

        Seq b = new Seq("b", pool, 10, 0);
        waiting.add(b);
        StepScheduler.Plan<Seq> plan = scheduler.schedule(running, waiting);
        assertEquals("b:8+2*", describe(plan), "the first 8 positions come from the cache");
        assertEquals(2, pool.prefixHits());
        run(plan, true);

        Seq c = new Seq("c", pool, 8, 0); // all 8 cached, but its last token must run for its logits
        waiting.add(c);
        plan = scheduler.schedule(running, waiting);
        assertEquals("b:10+1* c:4+4*", describe(plan));
        assertFalse(pool.prefixHits() < 3);
        assertTrue(pool.usedBlocks() <= 10);
    }

    @Test
    void aPromptThatStartsLikeOneStillBeingComputedWaitsAndThenSharesIt() {
        KvBlockPool pool = pool(20);
        StepScheduler<Seq> scheduler = new StepScheduler<>(6, 8, true);
        List<Seq> running = new ArrayList<>();
        Deque<Seq> waiting = new ArrayDeque<>();
        Seq a = new Seq("a", pool, 10, 0);
        Seq b = new Seq("b", pool, 10, 0); // the same prompt, as the copies of an n = 2 request
        waiting.addAll(List.of(a, b));
        StepScheduler.Plan<Seq> plan = scheduler.schedule(running, waiting);
        assertEquals("a:0+6", describe(plan), "b waits while a computes their common prefix");
        run(plan, true);
        plan = scheduler.schedule(running, waiting);
        assertEquals("a:6+4*", describe(plan));
        run(plan, true);
        plan = scheduler.schedule(running, waiting);
        assertEquals("a:10+1* b:8+2*", describe(plan), "b takes a's two full blocks from the cache");
    }
}
