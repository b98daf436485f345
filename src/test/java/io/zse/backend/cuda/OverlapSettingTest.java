package io.zse.backend.cuda;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The switch of the kernels' overlapping launches alone (a GPU of compute capability 9.0 is what runs them). */
class OverlapSettingTest {
    /** ZSE_CUDA_OVERLAP: on (also unset) or off; anything else refused, named. */
    @Test
    void overlapSettingTakesOnOrOff() {
        assertTrue(CudaBackend.overlapSetting(null));
        assertTrue(CudaBackend.overlapSetting("ON"));
        assertEquals(false, CudaBackend.overlapSetting(" off"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> CudaBackend.overlapSetting("1"))
                .getMessage().contains("ZSE_CUDA_OVERLAP must be on or off"));
    }
}
