package io.zse.backend.cuda;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The integer products' settings alone (what the kernels compute with each is CudaBackendParityTest's). */
class IntegerProductsTest {
    /** ZSE_CUDA_MMA_ROWS: staged (also unset, passed as 0), 16 or 32; anything else refused, named. */
    @Test
    void mmaRowsSettingTakesStagedSixteenOrThirtyTwo() {
        assertEquals(0, IntegerProducts.mmaRowsSetting(null));
        assertEquals(0, IntegerProducts.mmaRowsSetting("Staged"));
        assertEquals(32, IntegerProducts.mmaRowsSetting("32"));
        assertEquals(16, IntegerProducts.mmaRowsSetting(" 16 "));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> IntegerProducts.mmaRowsSetting("64"))
                .getMessage().contains("ZSE_CUDA_MMA_ROWS must be staged or 16 or 32"));
    }

    /** ZSE_CUDA_PRODUCT_SPLITS: 1, 2, 4 or 8 (unset: by the shapes, passed as 0); anything else refused, named. */
    @Test
    void productSplitsSettingTakesPowersOfTwoUpToEight() {
        assertEquals(0, IntegerProducts.productSplitsSetting(null));
        assertEquals(2, IntegerProducts.productSplitsSetting("2"));
        assertEquals(8, IntegerProducts.productSplitsSetting(" 8"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> IntegerProducts.productSplitsSetting("16"))
                .getMessage().contains("ZSE_CUDA_PRODUCT_SPLITS must be 1 or 2 or 4 or 8"));
    }

    /** ZSE_CUDA_ROW_WARPS: 1, 2, 4 or 8 (unset: by the row's length, passed as 0); anything else refused, named. */
    @Test
    void rowWarpsSettingTakesPowersOfTwoUpToEight() {
        assertEquals(0, IntegerProducts.rowWarpsSetting(" "));
        assertEquals(1, IntegerProducts.rowWarpsSetting("1"));
        assertEquals(8, IntegerProducts.rowWarpsSetting("8 "));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> IntegerProducts.rowWarpsSetting("3"))
                .getMessage().contains("ZSE_CUDA_ROW_WARPS must be 1 or 2 or 4 or 8"));
    }

    /** ZSE_CUDA_SWIGLU and ZSE_CUDA_ROPE: fused (also unset) or separate; anything else refused, named. */
    @Test
    void fusionSettingsTakeFusedOrSeparate() {
        assertTrue(IntegerProducts.fusedSetting("ZSE_CUDA_SWIGLU", null));
        assertTrue(IntegerProducts.fusedSetting("ZSE_CUDA_ROPE", "FUSED"));
        assertEquals(false, IntegerProducts.fusedSetting("ZSE_CUDA_SWIGLU", " separate"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> IntegerProducts.fusedSetting("ZSE_CUDA_ROPE",
                "off")).getMessage().contains("ZSE_CUDA_ROPE must be fused or separate"));
    }

    /** ZSE_CUDA_NORM: fused (the producer; also unset), separate or consumer; anything else refused, named. */
    @Test
    void normSettingPlacesTheNorm() {
        assertEquals(IntegerProducts.NormPlacement.PRODUCER, IntegerProducts.normSetting(null));
        assertEquals(IntegerProducts.NormPlacement.PRODUCER, IntegerProducts.normSetting("FUSED"));
        assertEquals(IntegerProducts.NormPlacement.SEPARATE, IntegerProducts.normSetting(" separate"));
        assertEquals(IntegerProducts.NormPlacement.CONSUMER, IntegerProducts.normSetting("consumer"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> IntegerProducts.normSetting("off"))
                .getMessage().contains("ZSE_CUDA_NORM must be fused or separate or consumer"));
    }

    /** ZSE_CUDA_PROMPT_PRODUCTS: int8 (also unset) or f16; anything else refused, named. */
    @Test
    void promptProductsSettingTakesInt8OrF16() {
        assertTrue(IntegerProducts.int8PromptsSetting(null));
        assertTrue(IntegerProducts.int8PromptsSetting("INT8"));
        assertEquals(false, IntegerProducts.int8PromptsSetting("f16 "));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> IntegerProducts.int8PromptsSetting("bf16"))
                .getMessage().contains("ZSE_CUDA_PROMPT_PRODUCTS must be int8 or f16"));
    }
}
