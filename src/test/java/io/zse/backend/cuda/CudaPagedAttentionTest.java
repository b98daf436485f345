package io.zse.backend.cuda;

import io.zse.backend.AttentionShape;
import io.zse.backend.Backend;
import io.zse.backend.BackendArrays;
import io.zse.backend.BatchLayout;
import io.zse.backend.Int8KvRows;
import io.zse.backend.KvBlockPool;
import io.zse.backend.KvCache;
import io.zse.backend.KvCacheType;
import io.zse.backend.cpu.CpuBackend;
import io.zse.model.RotaryFrequencies;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static io.zse.backend.cuda.TestCudaLibrary.random;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The device block pool and paged attention against the CPU backend: several sequences in one batch whose block tables
 * interleave and run out of order, rows that start, end and fill blocks exactly at their boundaries, prompt chunks
 * mixed with decode rows, rewinds, windows crossing blocks, prefix blocks shared by two sequences, two layers, prompt
 * chunks through the tiled prefill kernel with F32, F16 and INT8 caches, INT8 rows stored as the CPU stores them. Each
 * side has its own pool and gets the same allocations, so the block numbers agree.
 */
class CudaPagedAttentionTest {
    @RegisterExtension
    static final CudaTestBackends backends = CudaTestBackends.cudaAndCpu();

    private static final int BLOCK = 4;
    private static final AttentionShape GQA = new AttentionShape(8, 2, 64, 0);


    /** One backend's pool and sequences, driven in lockstep with the other's. */
    private record Side(Backend backend, KvBlockPool pool, List<KvCache> caches) {
        static Side of(Backend backend, int sequences, AttentionShape shape) {
            return of(backend, sequences, shape, 64, 200);
        }

        static Side of(Backend backend, int sequences, AttentionShape shape, int blocks, int capacity) {
            return of(backend, sequences, shape, blocks, capacity, KvCacheType.F32);
        }

        static Side of(Backend backend, int sequences, AttentionShape shape, int blocks, int capacity,
                       KvCacheType type) {
            KvBlockPool pool = new KvBlockPool(type, 2, shape.numKvHeads(), shape.headDim(), BLOCK, blocks,
                    Arena.ofAuto());
            List<KvCache> caches = new ArrayList<>();
            for (int i = 0; i < sequences; i++) {
                caches.add(new KvCache(pool, capacity));
            }
            return new Side(backend, pool, caches);
        }
    }

    /**
     * Runs one forward pass's KV work on both sides: segments {cache index, startPos, length}; per layer, stores random
     * rows and attends; checks the outputs agree.
     */
    private static void step(Side a, Side b, AttentionShape shape, long seed, int[]... segments) {
        step(true, a, b, shape, seed, segments);
    }

    /** Like {@link #step} but only stores the rows when {@code attend} is false (a long prompt, checked later). */
    private static void step(boolean attend, Side a, Side b, AttentionShape shape, long seed, int[]... segments) {
        List<BatchLayout.Segment> sa = new ArrayList<>();
        List<BatchLayout.Segment> sb = new ArrayList<>();
        int rows = 0;
        for (int[] s : segments) {
            for (Side side : List.of(a, b)) {
                assertFalse(!side.caches().get(s[0]).reserve(s[1] + s[2]), "pool exhausted");
            }
            sa.add(new BatchLayout.Segment(a.caches().get(s[0]), s[1], rows, s[2]));
            sb.add(new BatchLayout.Segment(b.caches().get(s[0]), s[1], rows, s[2]));
            rows += s[2];
        }
        BatchLayout la = new BatchLayout(sa);
        BatchLayout lb = new BatchLayout(sb);
        for (int layer = 0; layer < 2; layer++) {
            float[] k = random(rows * shape.kvDim(), seed * 31 + layer);
            float[] v = random(rows * shape.kvDim(), seed * 37 + layer);
            float[] q = random(rows * shape.queryDim(), seed * 41 + layer);
            BackendArrays.storeKv(a.backend(), k, v, la, layer);
            BackendArrays.storeKv(b.backend(), k, v, lb, layer);
            if (!attend) {
                continue;
            }
            float[] expected = BackendArrays.attention(a.backend(), q, la, layer, shape);
            float[] actual = BackendArrays.attention(b.backend(), q, lb, layer, shape);
            // An F16 cache runs prompt chunks on tensor cores: the keys and values are the CPU's F16 rows, but the
            // queries and softmax weights are rounded to F16 as well (2^-11 each), the outputs being averages of |v| <= 2.
            // So does an INT8 cache: its codes (the CPU's, int8RowsAreTheCpusBitForBit) are exact in F16, the queries
            // and the softmax weights times the values' scales are rounded.
            // Two CUDA backends add in the same order, whatever their kernels' variants: the same bits.
            double tolerance = a.backend() instanceof CudaBackend ? 0 : b.pool().type() != KvCacheType.F32 ? 4e-3 : 1e-5;
            for (int i = 0; i < expected.length; i++) {
                assertEquals(expected[i], actual[i], tolerance * Math.max(1, Math.abs(expected[i])),
                        "step " + seed + " layer " + layer + " element " + i);
            }
        }
        for (int[] s : segments) {
            a.caches().get(s[0]).setLength(s[1] + s[2]);
            b.caches().get(s[0]).setLength(s[1] + s[2]);
        }
    }

    @Test
    void interleavedTablesBlockBoundariesMixedBatchesAndRewinds() {
        CudaBackend cuda = backends.cuda();
        CpuBackend cpu = backends.cpu();
        for (AttentionShape shape : List.of(GQA, new AttentionShape(4, 4, 32, 0), new AttentionShape(4, 1, 256, 0))) {
            Side a = Side.of(cpu, 3, shape);
            Side b = Side.of(cuda, 3, shape);
            // prompts of 7 (last block partial), 4 (exactly one block) and 1, in one batch: their blocks interleave
            step(a, b, shape, 1, new int[]{0, 0, 7}, new int[]{1, 0, 4}, new int[]{2, 0, 1});
            // decode: 7 ends a block, 4 starts a new one, 1 is inside the first
            step(a, b, shape, 2, new int[]{0, 7, 1}, new int[]{1, 4, 1}, new int[]{2, 1, 1});
            // a prompt chunk beside decode rows, the chunk crossing two block boundaries
            step(a, b, shape, 3, new int[]{1, 5, 1}, new int[]{2, 2, 9}, new int[]{0, 8, 1});
            // rewind: sequence 0 recomputes positions 5..8 over its old rows
            step(a, b, shape, 4, new int[]{0, 5, 4}, new int[]{2, 11, 1});
            // sequence 1 ends and gives its blocks back; a new prompt on sequence 1 takes them in the free list's order
            a.caches().get(1).release();
            b.caches().get(1).release();
            step(a, b, shape, 5, new int[]{1, 0, 6}, new int[]{0, 9, 1});
        }
    }

    /**
     * Prompt chunks through the tiled prefill kernel (16-row tiles, key tiles over the block pool) for both cache
     * types (F16: the tensor-core products): chunks of 1, 7 and 64 rows attending to cached prefixes and to themselves,
     * prompts crossing block and tile boundaries, a decode row as a 1-row tile beside a chunk, GQA 1:1 to 8:1, head
     * dims that are not a multiple of 16, and sliding windows shorter than the chunk. Head dim 36 is staged element by
     * element from an F16 cache (not whole 16-byte chunks), in 16-byte chunks from an F32 one (9 a row, padded to 12).
     */
    @ParameterizedTest
    @EnumSource(KvCacheType.class)
    void promptChunksInTilesMatchTheCpu(KvCacheType type) {
        CudaBackend cuda = backends.cuda();
        CpuBackend cpu = backends.cpu();
        List<AttentionShape> shapes = List.of(new AttentionShape(4, 4, 64, 0), GQA, new AttentionShape(8, 1, 128, 0),
                new AttentionShape(4, 2, 80, 0), new AttentionShape(2, 1, 256, 0), new AttentionShape(8, 2, 64, 5),
                new AttentionShape(4, 1, 32, 20), new AttentionShape(4, 2, 36, 0));
        for (AttentionShape shape : shapes) {
            Side a = Side.of(cpu, 2, shape, 80, 200, type);
            Side b = Side.of(cuda, 2, shape, 80, 200, type);
            step(a, b, shape, 50, new int[]{0, 0, 7});                    // 7 rows from 0: one tile, two blocks
            step(a, b, shape, 51, new int[]{0, 7, 64}, new int[]{1, 0, 1}); // 64 over a cached prefix, a 1-row prompt
            step(a, b, shape, 52, new int[]{1, 1, 64}, new int[]{0, 71, 1}); // a decode row beside a chunk
            step(a, b, shape, 53, new int[]{0, 72, 1}, new int[]{1, 65, 7}); // chunk of 7 behind a long prefix
            step(a, b, shape, 54, new int[]{0, 30, 19});                   // rewind: recompute 30..48, two tiles
        }
    }

    /**
     * A GPU that gives a block 99 KB of shared memory (sm_86, sm_89; emulated with ZSE_CUDA_EMU_SHARED_KB) holds the
     * prompt tiles of an F16 or INT8 cache at head dim 256 (98 KB) but not an F32 one's (105 KB): that prompt is refused
     * by name, saying what fits, and the others give the CPU's outputs as on a larger GPU.
     */
    @ParameterizedTest
    @EnumSource(KvCacheType.class)
    void promptTilesLargerThanTheGpuGivesAreRefused(KvCacheType type) {
        AttentionShape shape = new AttentionShape(2, 1, 256, 0);
        Side a = Side.of(backends.cpu(), 1, shape, 80, 200, type);
        Side b = Side.of(backends.cuda(), 1, shape, 80, 200, type);
        TestCudaLibrary.setNativeEnvironment("ZSE_CUDA_EMU_SHARED_KB", "99");
        try {
            if (type == KvCacheType.F32) {
                CudaException e = assertThrows(CudaException.class, () -> step(a, b, shape, 60, new int[]{0, 0, 20}));
                assertTrue(e.getMessage().contains("an F16 or INT8 cache takes less"), e.getMessage());
            } else {
                step(a, b, shape, 60, new int[]{0, 0, 20});
            }
        } finally {
            TestCudaLibrary.setNativeEnvironment("ZSE_CUDA_EMU_SHARED_KB", null);
        }
    }

    /**
     * Gemma's logits, q·k times its own scale and then soft-capped (cap·tanh(logit / cap), a cap small enough to bend
     * most logits), with full and local attention, both cache types: prompt tiles, decode rows beside a chunk.
     */
    @ParameterizedTest
    @EnumSource(KvCacheType.class)
    void ownScaleAndSoftCapMatchTheCpu(KvCacheType type) {
        CudaBackend cuda = backends.cuda();
        CpuBackend cpu = backends.cpu();
        for (AttentionShape shape : List.of(new AttentionShape(8, 4, 32, 0, 0.5f, 0.5f),
                new AttentionShape(8, 4, 32, 5, 0.5f, 0.5f))) {
            Side a = Side.of(cpu, 2, shape, 80, 200, type);
            Side b = Side.of(cuda, 2, shape, 80, 200, type);
            step(a, b, shape, 60, new int[]{0, 0, 19});
            step(a, b, shape, 61, new int[]{0, 19, 1}, new int[]{1, 0, 7});
            step(a, b, shape, 62, new int[]{0, 20, 1}, new int[]{1, 7, 1});
        }
    }

    @Test
    void slidingWindowsCrossingBlocks() {
        CudaBackend cuda = backends.cuda();
        CpuBackend cpu = backends.cpu();
        for (int window : new int[]{1, 3, 4, 5, 9}) {
            AttentionShape shape = new AttentionShape(8, 2, 64, window);
            Side a = Side.of(cpu, 2, shape);
            Side b = Side.of(cuda, 2, shape);
            step(a, b, shape, 10 + window, new int[]{0, 0, 13}, new int[]{1, 0, 3});
            step(a, b, shape, 20 + window, new int[]{0, 13, 1}, new int[]{1, 3, 1});
        }
    }

    /**
     * Flash-decoding: on a device with as many multiprocessors as an H100, a few decode rows over hundreds of positions
     * are split over the sequence (2 to 8 runs per row, merged by the reduction kernel), rows shorter than the split
     * count included, with and without a sliding window.
     */
    @Test
    void longRowsSplitOverTheSequence() {
        CudaBackend cuda = backends.cuda();
        CpuBackend cpu = backends.cpu();
        CudaDevice emulated = cuda.device();
        CudaDevice h100Sized = new CudaDevice(emulated.index(), emulated.name(), emulated.totalBytes(),
                emulated.freeBytes(), emulated.major(), emulated.minor(), 132);
        assertEquals(8, LaunchShapes.splits(3, 8, LaunchShapes.positionsClass(300), 132));
        // a block takes 4, 2 or 1 query heads of one KV head: GQA's 4 (8 of 2), Gemma's 2, MHA's 1; rows too short
        // to split take 1 while the blocks would not fill the GPU twice over
        int longRows = LaunchShapes.positionsClass(300), shortRows = LaunchShapes.positionsClass(40);
        assertEquals(List.of(4, 2, 1, 4), List.of(LaunchShapes.headsPerBlock(8, 2, 3, longRows, 132),
                LaunchShapes.headsPerBlock(8, 4, 3, longRows, 132), LaunchShapes.headsPerBlock(4, 4, 3, longRows, 132),
                LaunchShapes.headsPerBlock(32, 4, 1, longRows, 132)));
        assertEquals(List.of(1, 1, 4), List.of(LaunchShapes.headsPerBlock(32, 8, 1, shortRows, 132),
                LaunchShapes.headsPerBlock(32, 8, 8, shortRows, 132),
                LaunchShapes.headsPerBlock(32, 8, 9, shortRows, 132)));
        try (CudaBackend split = new CudaBackend(backends.library(), h100Sized)) {
            for (AttentionShape shape : List.of(GQA, new AttentionShape(4, 1, 256, 0), new AttentionShape(8, 2, 64, 50),
                    new AttentionShape(8, 2, 64, 50, 0.5f, 0.5f))) {
                Side a = Side.of(cpu, 3, shape, 160, 400);
                Side b = Side.of(split, 3, shape, 160, 400);
                step(false, a, b, shape, 40, new int[]{0, 0, 150}, new int[]{1, 0, 37}, new int[]{2, 0, 1});
                step(a, b, shape, 41, new int[]{0, 150, 1}, new int[]{1, 37, 1}, new int[]{2, 1, 1});
                step(false, a, b, shape, 42, new int[]{0, 151, 160}, new int[]{2, 2, 3});
                step(a, b, shape, 43, new int[]{0, 311, 1}, new int[]{1, 38, 1}, new int[]{2, 5, 1});
                step(a, b, shape, 44, new int[]{0, 312, 1});
            }
        }
    }

    /**
     * The decode kernel whose warps load one key at a time (ZSE_CUDA_ATTENTION_KEYS=1) against the default, 4 keys (2
     * at head dim 256): the same bits, F32 and F16 caches, 4, 2 and 1 heads a block, rows split over the sequence and
     * not, a sliding window, rows whose keys are not a multiple of a warp's.
     */
    @ParameterizedTest
    @EnumSource(KvCacheType.class)
    void oneKeyAtATimeGivesTheBitsOfFour(KvCacheType type) {
        CudaBackend cuda = backends.cuda();
        CudaDevice emulated = cuda.device();
        CudaDevice h100Sized = new CudaDevice(emulated.index(), emulated.name(), emulated.totalBytes(),
                emulated.freeBytes(), emulated.major(), emulated.minor(), 132);
        for (CudaDevice device : List.of(emulated, h100Sized)) {
            try (CudaBackend four = new CudaBackend(backends.library(), device);
                 CudaBackend one = new CudaBackend(backends.library(), device)) {
                one.fixAttentionKeys(1);
                for (AttentionShape shape : List.of(GQA, new AttentionShape(8, 4, 32, 0),
                        new AttentionShape(4, 4, 64, 0), new AttentionShape(4, 1, 256, 0),
                        new AttentionShape(8, 2, 64, 50))) {
                    Side a = Side.of(four, 3, shape, 160, 400, type);
                    Side b = Side.of(one, 3, shape, 160, 400, type);
                    step(false, a, b, shape, 70, new int[]{0, 0, 150}, new int[]{1, 0, 37}, new int[]{2, 0, 1});
                    step(a, b, shape, 71, new int[]{0, 150, 1}, new int[]{1, 37, 1}, new int[]{2, 1, 1});
                    step(a, b, shape, 72, new int[]{0, 151, 1}, new int[]{2, 2, 1});
                }
            }
        }
        assertTrue(assertThrows(IllegalArgumentException.class, () -> cuda.fixAttentionKeys(4)).getMessage()
                .contains("0 or 1"));
    }

    @Test
    void prefixBlocksSharedByTwoSequences() {
        CudaBackend cuda = backends.cuda();
        CpuBackend cpu = backends.cpu();
        Side a = Side.of(cpu, 2, GQA);
        Side b = Side.of(cuda, 2, GQA);
        int[] prompt = {5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
        step(a, b, GQA, 30, new int[]{0, 0, prompt.length});
        for (Side side : List.of(a, b)) {
            side.caches().get(0).publishComputed(prompt);
            assertEquals(8, side.caches().get(1).adoptPrefix(prompt, prompt.length - 1)); // two full blocks
        }
        // both read blocks 0 and 1; sequence 1 writes its own third block
        step(a, b, GQA, 31, new int[]{1, 8, 2}, new int[]{0, 10, 1});
        step(a, b, GQA, 32, new int[]{0, 11, 1}, new int[]{1, 10, 1});
    }

    /**
     * INT8 rows on the device are the CPU's bit for bit (Int8KvRows: a head row's codes round(x * 127 / max|x|), ties
     * up, and its scale max|x| / 127): a head row of zeros, values on a tie of either sign, head dims 32 to 256, two
     * sequences' rows in one batch. Keys rotated by RoPE on their way (the queries by the same launch) are the rows
     * the device's RoPE then the store give. Both copies then attend alike (the decode and the tiled prompt kernels).
     */
    @Test
    void int8RowsAreTheCpusBitForBit() {
        CudaBackend cuda = backends.cuda();
        CpuBackend cpu = backends.cpu();
        for (AttentionShape shape : List.of(GQA, new AttentionShape(4, 1, 256, 0), new AttentionShape(4, 4, 32, 0),
                new AttentionShape(4, 2, 36, 0))) {
            Side a = Side.of(cpu, 2, shape, 16, 40, KvCacheType.INT8);
            Side b = Side.of(cuda, 2, shape, 16, 40, KvCacheType.INT8);
            for (Side side : List.of(a, b)) {
                assertTrue(side.caches().get(0).reserve(6) && side.caches().get(1).reserve(3));
            }
            BatchLayout la = batchOfTwo(a);
            BatchLayout lb = batchOfTwo(b);
            int rows = la.rows(), hd = shape.headDim();
            float[] k = random(rows * shape.kvDim(), 80);
            float[] v = random(rows * shape.kvDim(), 81);
            Arrays.fill(k, 0, hd, 0f);  // the first head row: zeros, scale 0
            k[hd] = 127f;               // the next: scale 1, so its codes are its values rounded, 0.5 up to 1
            k[hd + 1] = 0.5f;
            k[hd + 2] = -2.5f;          // and -2.5 up to -2
            v[0] = -127f;
            v[1] = -0.5f;
            BackendArrays.storeKv(cpu, k, v, la, 0);
            BackendArrays.storeKv(cuda, k, v, lb, 0);
            float[] frequencies = RotaryFrequencies.of(hd, 10000, null);
            float[] q = random(rows * shape.queryDim(), 82);
            float[] rotated = BackendArrays.rope(cuda, k, lb, shape.numKvHeads(), hd, frequencies);
            BackendArrays.storeKv(cpu, rotated, v, la, 1);
            assertArrayEquals(BackendArrays.rope(cuda, q, lb, shape.numHeads(), hd, frequencies),
                    BackendArrays.ropeQueriesAndStoreKv(cuda, q, shape.numHeads(), k, v, lb, 1, shape.numKvHeads(),
                            hd, frequencies), shape + ": the queries rotated by the INT8 write's launch");
            assertEquals(0f, ((Int8KvRows) a.pool().keys(0)).scale(a.caches().get(0).slot(0), 0));
            try (Arena arena = Arena.ofConfined()) {
                for (int layer = 0; layer < 2; layer++) {
                    for (boolean keys : new boolean[]{true, false}) {
                        Int8KvRows expected = (Int8KvRows) (keys ? a.pool().keys(layer) : a.pool().values(layer));
                        MemorySegment stored = cuda.storedKvRows(b.pool(), layer, keys, arena);
                        long scales = CudaWeight.scalesOffset((long) expected.slots() * shape.kvDim()) / Float.BYTES;
                        for (int[] s : new int[][]{{0, 6}, {1, 3}}) {
                            for (int position = 0; position < s[1]; position++) {
                                int slot = a.caches().get(s[0]).slot(position);
                                String where = shape + " layer " + layer + (keys ? " keys" : " values") + " slot "
                                        + slot;
                                for (int i = 0; i < shape.kvDim(); i++) {
                                    long at = (long) slot * shape.kvDim() + i;
                                    assertEquals(expected.codes().get(ValueLayout.JAVA_BYTE, at),
                                            stored.get(ValueLayout.JAVA_BYTE, at), where + " element " + i);
                                }
                                for (int h = 0; h < shape.numKvHeads(); h++) {
                                    assertEquals(expected.scale(slot, h), stored.getAtIndex(ValueLayout.JAVA_FLOAT,
                                            scales + (long) slot * shape.numKvHeads() + h), where + " head " + h);
                                }
                            }
                        }
                    }
                }
            }
            for (int layer = 0; layer < 2; layer++) {
                float[] expected = BackendArrays.attention(cpu, q, la, layer, shape);
                float[] actual = BackendArrays.attention(cuda, q, lb, layer, shape);
                for (int i = 0; i < expected.length; i++) {
                    assertEquals(expected[i], actual[i], 4e-3 * Math.max(1, Math.abs(expected[i])),
                            shape + " layer " + layer + " element " + i);  // prompt rows: F16 tiles (see step)
                }
            }
        }
    }

    /** Sequence 0's positions 0..5 and sequence 1's 0..2, one batch. */
    private static BatchLayout batchOfTwo(Side side) {
        return new BatchLayout(List.of(new BatchLayout.Segment(side.caches().get(0), 0, 0, 6),
                new BatchLayout.Segment(side.caches().get(1), 0, 6, 3)));
    }

    @Test
    void writesOutsideTheReservedBlocksOrIntoSharedPrefixBlocksAreRefused() {
        CudaBackend cuda = backends.cuda();
        Side b = Side.of(cuda, 2, GQA);
        KvCache cache = b.caches().getFirst();
        cache.reserve(4);
        float[] rows = new float[2 * GQA.kvDim()];
        BatchLayout past = BatchLayout.single(cache, 3, 2); // position 4 has no block
        assertThrows(IllegalArgumentException.class, () -> BackendArrays.storeKv(cuda, rows, rows, past, 0));
        assertThrows(IllegalArgumentException.class,
                () -> BackendArrays.attention(cuda, new float[2 * GQA.queryDim()], past, 0, GQA));
        BatchLayout layer2 = BatchLayout.single(cache, 0, 2);
        assertThrows(IllegalArgumentException.class, () -> BackendArrays.storeKv(cuda, rows, rows, layer2, 2));
    }

    /**
     * An INT8 cache's scales are indexed by kv head: a write or an attention whose heads split the same width another
     * way (4 heads of 32 against the pool's 2 of 64) is refused before a kernel runs, as are head counts whose width
     * overflows an int.
     */
    @Test
    void headsThatSplitTheCachesWidthAnotherWayAreRefused() {
        CudaBackend cuda = backends.cuda();
        Side b = Side.of(cuda, 1, GQA, 64, 200, KvCacheType.INT8);
        KvCache cache = b.caches().getFirst();
        cache.reserve(2);
        BatchLayout two = BatchLayout.single(cache, 0, 2);
        float[] rows = new float[2 * GQA.kvDim()];
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> BackendArrays.ropeStoreKv(cuda, rows, rows, two, 0, 4, 32, new float[16]));
        assertTrue(e.getMessage().contains("4 kv heads, kv dim 128, differ from the cache's 2"), e.getMessage());
        AttentionShape fourOf32 = new AttentionShape(8, 4, 32, 0);
        e = assertThrows(IllegalArgumentException.class,
                () -> BackendArrays.attention(cuda, new float[2 * fourOf32.queryDim()], two, 0, fourOf32));
        assertTrue(e.getMessage().contains("4 kv heads, kv dim 128, differ from the cache's 2"), e.getMessage());
        assertThrows(ArithmeticException.class,
                () -> BackendArrays.rope(cuda, new float[8], two, 65536, 65536, new float[32768]));
        assertThrows(IllegalArgumentException.class, () -> new AttentionShape(65536, 1, 65536, 0));
    }

    /**
     * A pool made in an arena that is then closed (a prompt pass's: one per embedding input) gives its device copy
     * back before the backend copies another pool (or at its next pass), not when the collector finds the pool.
     */
    @Test
    void aClosedPoolsDeviceCopyIsFreedBeforeTheNextPoolIsCopied() {
        try (CudaBackend backend = new CudaBackend(backends.library(), backends.device())) {
            float[] rows = new float[2 * GQA.kvDim()];
            Arena arena = Arena.ofConfined();
            KvCache first = new KvCache(new KvBlockPool(KvCacheType.F32, 2, GQA.numKvHeads(), GQA.headDim(), BLOCK, 4,
                    arena), 8);
            first.reserve(2);
            BackendArrays.storeKv(backend, rows, rows, BatchLayout.single(first, 0, 2), 0);
            assertEquals(1, backend.devicePools());
            arena.close();
            KvCache second = new KvCache(new KvBlockPool(KvCacheType.F32, 2, GQA.numKvHeads(), GQA.headDim(), BLOCK, 4,
                    Arena.ofAuto()), 8);
            second.reserve(2);
            BackendArrays.storeKv(backend, rows, rows, BatchLayout.single(second, 0, 2), 0);
            assertEquals(1, backend.devicePools(), "the closed pool's device copy is gone, the new one's is there");
        }
    }
}
