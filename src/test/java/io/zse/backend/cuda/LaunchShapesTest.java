package io.zse.backend.cuda;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The launch-shape rules alone (what the kernels compute with each is CudaBackendParityTest's). */
class LaunchShapesTest {
    /** 128 x 128 prefill tiles while they give 3 in 4 multiprocessors a block: 2 x 2 for 200 rows x 150 tokens. */
    @Test
    void largePrefillTilesWhileTheyFillTheGpu() {
        assertEquals(LaunchShapes.LARGE_PREFILL_TILE, LaunchShapes.prefillTile(200, 150, 5));
        assertEquals(LaunchShapes.SMALL_PREFILL_TILE, LaunchShapes.prefillTile(200, 150, 6));
        // Llama 3 8B at 512 tokens: o (4096 rows, 128 blocks) large on 132 multiprocessors, small on 171
        assertEquals(LaunchShapes.LARGE_PREFILL_TILE, LaunchShapes.prefillTile(4096, 512, 132));
        assertEquals(LaunchShapes.SMALL_PREFILL_TILE, LaunchShapes.prefillTile(4096, 512, 171));
    }

    /** ZSE_CUDA_PREFILL_TILE's values: unset (by shape), 64, 128; anything else is refused with the variable named. */
    @Test
    void prefillTileSettingTakesTheTwoSizesOnly() {
        assertEquals(0, LaunchShapes.prefillTileSetting(null));
        assertEquals(0, LaunchShapes.prefillTileSetting(" "));
        assertEquals(64, LaunchShapes.prefillTileSetting("64"));
        assertEquals(128, LaunchShapes.prefillTileSetting(" 128"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LaunchShapes.prefillTileSetting("96"))
                .getMessage().contains("ZSE_CUDA_PREFILL_TILE"));
    }
}
