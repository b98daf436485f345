import io.zse.backend.ActivationBuffer;
import io.zse.backend.AttentionShape;
import io.zse.backend.BatchLayout;
import io.zse.backend.KvBlockPool;
import io.zse.backend.KvCache;
import io.zse.backend.KvCacheType;
import io.zse.backend.cpu.CpuBackend;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The KV block size against the time of one decode step's attention (Llama-3.2-1B's shape: 32 query heads, 8 KV heads
 * of 64) over S sequences of L positions each, whose blocks interleave in the pool as they do when sequences grow
 * together. Rounds alternate the block sizes; medians are printed.
 * Run: java --add-modules jdk.incubator.vector -cp target/classes bench/KvBlockSize.java [S] [L] [ROUNDS]
 */
public class KvBlockSize {
    public static void main(String[] args) {
        int sequences = args.length > 0 ? Integer.parseInt(args[0]) : 16;
        int length = args.length > 1 ? Integer.parseInt(args[1]) : 512;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 15;
        int[] blockSizes = {1, 4, 16, 64, 256};
        AttentionShape shape = new AttentionShape(32, 8, 64, 0);
        SplittableRandom random = new SplittableRandom(1);
        float[] row = new float[shape.kvDim()];
        for (int i = 0; i < row.length; i++) {
            row[i] = (float) random.nextDouble(-1, 1);
        }
        float[] q = new float[sequences * shape.queryDim()];
        for (int i = 0; i < q.length; i++) {
            q[i] = (float) Math.sin(i);
        }
        try (CpuBackend backend = new CpuBackend()) {
            List<BatchLayout> layouts = new ArrayList<>();
            for (int blockSize : blockSizes) {
                layouts.add(filled(shape, blockSize, sequences, length, row));
            }
            ActivationBuffer queries = backend.allocate(q.length);
            backend.write(q, queries);
            ActivationBuffer out = backend.allocate(q.length);
            double[][] millis = new double[blockSizes.length][rounds];
            for (int r = -3; r < rounds; r++) { // 3 warm-up rounds for the JIT
                for (int b = 0; b < blockSizes.length; b++) {
                    long start = System.nanoTime();
                    for (int layer = 0; layer < 16; layer++) {
                        backend.attention(queries, layouts.get(b), 0, shape, out);
                    }
                    if (r >= 0) {
                        millis[b][r] = (System.nanoTime() - start) / 1e6;
                    }
                }
            }
            System.out.printf("decode attention, 16 layers, %d sequences x %d positions, %d threads, 1B shape%n",
                    sequences, length, backend.threads());
            System.out.println("| block size | ms per step (median of " + rounds + ") | min | max |");
            System.out.println("|---|---|---|---|");
            for (int b = 0; b < blockSizes.length; b++) {
                double[] m = millis[b].clone();
                Arrays.sort(m);
                System.out.printf("| %d | %.2f | %.2f | %.2f |%n", blockSizes[b], m[m.length / 2], m[0], m[m.length - 1]);
            }
        }
    }

    /** S sequences of L positions, grown one position at a time in turn (so their blocks interleave). */
    private static BatchLayout filled(AttentionShape shape, int blockSize, int sequences, int length, float[] row) {
        int blocks = sequences * ((length + 1 + blockSize - 1) / blockSize);
        KvBlockPool pool = new KvBlockPool(KvCacheType.F32, 1, shape.numKvHeads(), shape.headDim(), blockSize, blocks,
                Arena.ofAuto());
        List<KvCache> caches = new ArrayList<>();
        for (int s = 0; s < sequences; s++) {
            caches.add(new KvCache(pool, length + 1));
        }
        for (int p = 0; p <= length; p++) {
            for (KvCache cache : caches) {
                cache.reserve(p + 1);
                cache.store(0, p, 1, row, row);
                cache.setLength(p + 1);
            }
        }
        List<BatchLayout.Segment> segments = new ArrayList<>();
        for (int s = 0; s < sequences; s++) {
            segments.add(new BatchLayout.Segment(caches.get(s), length, s, 1));
        }
        return new BatchLayout(segments);
    }
}
