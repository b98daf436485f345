package io.zse.backend.cuda;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The integer products' settings alone (what the kernels compute with each is CudaBackendParityTest's). */
class IntegerProductsTest {
    /** ZSE_CUDA_MMA_ROWS: 16 or 32 (unset: the kernel's own, passed as 0); anything else refused, named. */
    @Test
    void mmaRowsSettingTakesSixteenOrThirtyTwo() {
        assertEquals(0, IntegerProducts.mmaRowsSetting(null));
        assertEquals(0, IntegerProducts.mmaRowsSetting("32"));
        assertEquals(16, IntegerProducts.mmaRowsSetting(" 16 "));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> IntegerProducts.mmaRowsSetting("64"))
                .getMessage().contains("ZSE_CUDA_MMA_ROWS"));
    }
}
