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

    /**
     * ZSE_CUDA_SPLIT_POSITIONS (32 unset, 64, 128, 256) sets the fewest positions a flash-decoding split takes: Llama 3
     * 8B at one row and 520 positions (8 blocks of 4 heads) on 132 multiprocessors takes 16 splits at 32, 4 at 128.
     */
    @Test
    void splitPositionsSetTheSplitsOfALongRow() {
        assertEquals(32, LaunchShapes.splitPositionsSetting(null));
        assertEquals(128, LaunchShapes.splitPositionsSetting("128 "));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LaunchShapes.splitPositionsSetting("100"))
                .getMessage().contains("ZSE_CUDA_SPLIT_POSITIONS"));
        assertEquals(16, LaunchShapes.splits(1, 8, LaunchShapes.positionsClass(520, 32), 132));
        assertEquals(4, LaunchShapes.splits(1, 8, LaunchShapes.positionsClass(520, 128), 132));
        assertEquals(2, LaunchShapes.splits(1, 8, LaunchShapes.positionsClass(520, 256), 132));
    }

    /**
     * The staged products split the columns into as many parts as two blocks a multiprocessor hold at once: Llama 3 8B
     * on 132 multiprocessors (264 places); at most 8 parts and one a stage of 256 columns; a fixed count within those
     * limits.
     */
    @Test
    void productSplitsFillTheGpuWithinTheStages() {
        assertEquals(1, LaunchShapes.productSplits(2 * 14336, 4096, 132, 0));  // gate and up: 448 blocks
        assertEquals(2, LaunchShapes.productSplits(4096 + 2 * 1024, 4096, 132, 0));  // q, k, v: 96 blocks, 192
        assertEquals(4, LaunchShapes.productSplits(4096, 14336, 132, 0));  // down: 64 blocks, 256
        assertEquals(1, LaunchShapes.productSplits(133 * 64, 4096, 132, 0));  // 266 blocks would need two rounds
        assertEquals(8, LaunchShapes.productSplits(64, 14336, 132, 0));  // one block: at most 8
        assertEquals(2, LaunchShapes.productSplits(64, 512, 132, 0));  // two stages
        assertEquals(1, LaunchShapes.productSplits(4096, 4096, 1, 0));
        assertEquals(4, LaunchShapes.productSplits(2 * 14336, 4096, 132, 4));
        assertEquals(5, LaunchShapes.productSplits(339, 1280, 1, 8));  // fixed, within the 5 stages
    }
}
