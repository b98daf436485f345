package io.zse.backend;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What each KV cache type gives back for what was stored, how much memory a position takes, and its bounds. */
class KvCacheTest {
    private static final int LAYERS = 2;
    private static final int HEADS = 4;
    private static final int HEAD_DIM = 16;
    private static final int KV_DIM = HEADS * HEAD_DIM;

    private static float[] random(Random random, int length, float range) {
        float[] x = new float[length];
        for (int i = 0; i < length; i++) {
            x[i] = (random.nextFloat() * 2 - 1) * range;
        }
        return x;
    }

    private static float[] read(KvRows rows, int position) {
        float[] out = new float[KV_DIM];
        rows.read(position, out, 0);
        return out;
    }

    @Test
    void f32KeepsEveryBit() {
        KvCache cache = new KvCache(KvCacheType.F32, LAYERS, 8, HEADS, HEAD_DIM);
        float[] k = random(new Random(1), 3 * KV_DIM, 50);
        float[] v = random(new Random(2), 3 * KV_DIM, 50);
        cache.store(1, 4, 3, k, v);
        for (int i = 0; i < 3; i++) {
            float[] keys = read(cache.keys(1), 4 + i);
            float[] values = read(cache.values(1), 4 + i);
            for (int e = 0; e < KV_DIM; e++) {
                assertEquals(k[i * KV_DIM + e], keys[e]);
                assertEquals(v[i * KV_DIM + e], values[e]);
            }
        }
        assertInstanceOf(F32KvRows.class, cache.keys(0));
    }

    @Test
    void f16IsExactForRepresentableValuesAndRoundsTheRest() {
        KvCache cache = new KvCache(KvCacheType.F16, LAYERS, 4, HEADS, HEAD_DIM);
        float[] exact = random(new Random(3), KV_DIM, 1000);
        for (int e = 0; e < KV_DIM; e++) {
            exact[e] = Float.float16ToFloat(Float.floatToFloat16(exact[e]));
        }
        exact[0] = 65504f;     // largest F16
        exact[1] = 0x1p-24f;   // smallest subnormal
        exact[2] = -0f;
        float[] any = random(new Random(4), KV_DIM, 3);
        cache.store(0, 2, 1, exact, any);
        float[] keys = read(cache.keys(0), 2);
        float[] values = read(cache.values(0), 2);
        for (int e = 0; e < KV_DIM; e++) {
            assertEquals(Float.floatToRawIntBits(exact[e]), Float.floatToRawIntBits(keys[e]), "element " + e);
            // Round to nearest: within half an F16 ulp, 2^-11 relative for normals, 2^-25 absolute for subnormals.
            assertTrue(Math.abs(values[e] - any[e]) <= Math.max(Math.abs(any[e]) * 0x1p-11f, 0x1p-25f),
                    any[e] + " read back as " + values[e]);
        }
    }

    @Test
    void int8IsWithinHalfAScaleOfEachElementWithOneScalePerHead() {
        KvCache cache = new KvCache(KvCacheType.INT8, LAYERS, 4, HEADS, HEAD_DIM);
        Random random = new Random(5);
        float[] k = random(random, KV_DIM, 1);
        for (int e = HEAD_DIM; e < 2 * HEAD_DIM; e++) {
            k[e] *= 100; // heads of very different magnitude each get their own scale
        }
        java.util.Arrays.fill(k, 2 * HEAD_DIM, 3 * HEAD_DIM, 0f); // an all-zero head
        float[] v = random(random, KV_DIM, 7);
        cache.store(1, 3, 1, k, v);
        Int8KvRows keys = (Int8KvRows) cache.keys(1);
        float[] decoded = read(keys, 3);
        for (int head = 0; head < HEADS; head++) {
            float absMax = 0;
            for (int i = 0; i < HEAD_DIM; i++) {
                absMax = Math.max(absMax, Math.abs(k[head * HEAD_DIM + i]));
            }
            float scale = keys.scale(3, head);
            assertEquals(absMax / 127, scale, 1e-7f * absMax, "head " + head);
            for (int i = 0; i < HEAD_DIM; i++) {
                int e = head * HEAD_DIM + i;
                assertTrue(Math.abs(decoded[e] - k[e]) <= scale / 2 * (1 + 1e-5f) + 1e-30f,
                        "head " + head + " element " + i + ": " + k[e] + " read back as " + decoded[e]);
            }
        }
        for (int e = 2 * HEAD_DIM; e < 3 * HEAD_DIM; e++) {
            assertEquals(0f, decoded[e]);
        }
    }

    @Test
    void bytesPerPositionShrinkWithTheType() {
        // TinyStories-656K: 2 layers, 4 kv heads of 16.
        assertEquals(1024, new KvCache(KvCacheType.F32, 2, 1, 4, 16).bytesPerPosition());
        assertEquals(512, new KvCache(KvCacheType.F16, 2, 1, 4, 16).bytesPerPosition());
        assertEquals(2 * 2 * (64 + 4 * 4), new KvCache(KvCacheType.INT8, 2, 1, 4, 16).bytesPerPosition());
        // Llama-3.2-1B: 16 layers, 8 kv heads of 64.
        assertEquals(65536, new KvCache(KvCacheType.F32, 16, 1, 8, 64).bytesPerPosition());
        assertEquals(32768, new KvCache(KvCacheType.F16, 16, 1, 8, 64).bytesPerPosition());
        assertEquals(17408, new KvCache(KvCacheType.INT8, 16, 1, 8, 64).bytesPerPosition());
        // The storage really is that small: 1 byte per element for INT8.
        assertEquals(112 * KV_DIM, ((Int8KvRows) new KvCache(KvCacheType.INT8, 1, 100, HEADS, HEAD_DIM).keys(0)).codes()
                .byteSize(), "7 blocks of 16 positions");
    }

    @Test
    void writesOutsideTheCacheAreRefused() {
        for (KvCacheType type : KvCacheType.values()) {
            KvCache cache = new KvCache(type, LAYERS, 4, HEADS, HEAD_DIM);
            float[] rows = new float[2 * KV_DIM];
            assertThrows(IllegalArgumentException.class, () -> cache.store(0, 3, 2, rows, rows), type.label());
            assertThrows(IllegalArgumentException.class, () -> cache.store(0, -1, 1, rows, rows), type.label());
            assertThrows(IllegalArgumentException.class, () -> cache.store(LAYERS, 0, 1, rows, rows), type.label());
            assertThrows(IllegalArgumentException.class, () -> cache.store(0, 0, 3, rows, rows), "k shorter than n rows");
            assertThrows(IllegalArgumentException.class, () -> cache.setLength(5), type.label());
            cache.store(0, 2, 2, rows, rows);
            cache.setLength(4);
            assertEquals(4, cache.length());
        }
        assertThrows(IllegalArgumentException.class, () -> new KvCache(KvCacheType.F16, 1, 0, HEADS, HEAD_DIM));
    }

    @Test
    void typesParseFromTheirCliNames() {
        assertEquals(KvCacheType.INT8, KvCacheType.parse("int8"));
        assertEquals(KvCacheType.F16, KvCacheType.parse("F16"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> KvCacheType.parse("q4"));
        assertEquals("unknown KV cache type 'q4' (use f32, f16 or int8)", e.getMessage());
    }
}
