package io.zse.format;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

class Nf4Test {

    @Test
    void codebookIsTheBitsandbytesOne() {
        assertEquals(16, Nf4.CODEBOOK.size());
        assertEquals(-1.0f, Nf4.value(0));
        assertEquals(0.0f, Nf4.value(Nf4.ZERO_CODE));
        assertEquals(1.0f, Nf4.value(15));
        assertEquals(0.07958029955625534f, Nf4.value(8));
        for (int q = 1; q < 16; q++) {
            assertTrue(Nf4.value(q - 1) < Nf4.value(q));
        }
        // widest gap: between -1.0 and -0.696...
        assertEquals((1.0f - 0.6961928009986877f) / 2, Nf4.MAX_HALF_GAP, 1e-7);
    }

    @Test
    void nearestCodeMatchesBruteForce() {
        Random random = new Random(3);
        for (int i = 0; i < 200_000; i++) {
            float x = (random.nextFloat() * 2.4f) - 1.2f;
            assertEquals(bruteForceNearest(x), Nf4.nearestCode(x), () -> "x = " + x);
        }
        for (int q = 0; q < 16; q++) {
            assertEquals(q, Nf4.nearestCode(Nf4.value(q)));
        }
        assertEquals(0, Nf4.nearestCode(-100f));
        assertEquals(15, Nf4.nearestCode(100f));
    }

    private static int bruteForceNearest(float x) {
        int best = 0;
        for (int q = 1; q < 16; q++) {
            if (Math.abs(x - Nf4.value(q)) < Math.abs(x - Nf4.value(best))) {
                best = q;
            }
        }
        return best;
    }
}
