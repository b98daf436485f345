package io.zse.backend.cuda;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which path prompts' products take (what each computes is CudaBackendParityTest's). */
class IntegerProductsTest {
    /** ZSE_CUDA_PROMPT_PRODUCTS: unset or f16 the F16 tiles, int8 the int8 tiles; anything else refused, named. */
    @Test
    void promptProductsSettingTakesF16OrInt8() {
        assertFalse(IntegerProducts.promptsSetting(null));
        assertFalse(IntegerProducts.promptsSetting(""));
        assertFalse(IntegerProducts.promptsSetting("F16"));
        assertTrue(IntegerProducts.promptsSetting(" int8"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> IntegerProducts.promptsSetting("int4"))
                .getMessage().contains("ZSE_CUDA_PROMPT_PRODUCTS"));
    }
}
