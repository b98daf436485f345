package io.zse.format;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class QuantErrorBoundTest {

    @Test
    void groupBoundsAreHalfAPlainStep() {
        float[] group = new float[32];
        for (int i = 0; i < 32; i++) {
            group[i] = i - 10; // min -10, max 21, absmax 21
        }
        assertEquals(21.0 / 254, QuantErrorBound.forGroup(TensorType.Q8, group, 0, 32), 21.0 / 254 * 0.002);
        assertEquals(31.0 / 30, QuantErrorBound.forGroup(TensorType.Q4, group, 0, 32), 0.05);
        assertEquals(Nf4.MAX_HALF_GAP * 21, QuantErrorBound.forGroup(TensorType.NF4, group, 0, 32), 0.01);
        assertThrows(IllegalArgumentException.class, () -> QuantErrorBound.forGroup(TensorType.F16, group, 0, 32));
        assertThrows(IllegalArgumentException.class, () -> QuantErrorBound.forValue(TensorType.Q8, 1f));
    }

    @Test
    void firstViolationFindsTheFirstBadElement() {
        float[] src = {1f, 2f, 3f, 70000f};
        float[] decoded = new float[4];
        for (int i = 0; i < 4; i++) {
            decoded[i] = HalfFloats.roundToF16(src[i]);
        }
        assertEquals(3, QuantErrorBound.firstViolation(TensorType.F16, 0, src, 0, decoded, 0, 4), "overflow to inf");
        assertEquals(-1, QuantErrorBound.firstViolation(TensorType.F16, 0, src, 0, decoded, 0, 3));
        decoded[1] = 2.01f;
        assertEquals(1, QuantErrorBound.firstViolation(TensorType.F16, 0, src, 0, decoded, 0, 3));
        assertEquals(1, QuantErrorBound.firstViolation(TensorType.F32, 0, src, 0, decoded, 0, 3));
    }

    @Test
    void nanMatchesOnlyNan() {
        float[] src = {Float.NaN, 1f};
        assertEquals(-1, QuantErrorBound.firstViolation(TensorType.F32, 0, src, 0, src.clone(), 0, 2));
        assertEquals(0, QuantErrorBound.firstViolation(TensorType.F32, 0, src, 0, new float[] {0f, 1f}, 0, 2));
        assertEquals(1, QuantErrorBound.firstViolation(TensorType.F32, 0, src, 0, new float[] {Float.NaN, Float.NaN}, 0, 2));
    }

    @Test
    void groupBoundsAreTakenPerGroup() {
        float[] src = new float[64];
        Arrays.fill(src, 0, 32, 100f);
        Arrays.fill(src, 32, 64, 1f);
        float[] decoded = src.clone();
        decoded[40] = 1.1f; // fine against group 0's bound (100/254), not group 1's (1/254)
        assertEquals(40, QuantErrorBound.firstViolation(TensorType.Q8, 32, src, 0, decoded, 0, 64));
        decoded[40] = 1.003f;
        assertTrue(QuantErrorBound.firstViolation(TensorType.Q8, 32, src, 0, decoded, 0, 64) < 0);
    }
}
