package io.zse.backend.cuda;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The int8 scratch grows by at least doubling: prompts of one token more each time (65 to 320 rows of 256) allocate a
 * few times, not once each, since every device allocation drops the recorded decode graphs; each part is where the
 * kernels need it (aligned, after the codes).
 */
class QuantizedActivationsTest {
    @Test
    void growingPromptsAllocateAFewTimes() {
        CudaProbe probe = TestCudaLibrary.probe();
        assumeTrue(probe.usable(), TestCudaLibrary::skipReason);
        int cols = 256;
        try (QuantizedActivations scratch = new QuantizedActivations(probe.library().orElseThrow())) {
            long before = DeviceBuffer.changes();
            for (int n = QuantizedActivations.MAX_ROWS + 1; n <= 320; n++) {
                long values = (long) n * cols;
                QuantizedActivations.Parts parts = scratch.parts(values, cols);
                long scalesAt = parts.scales().address() - parts.codes().address();
                long sumsAt = parts.sums().address() - parts.codes().address();
                assertTrue(scalesAt >= values && sumsAt >= scalesAt + values / QuantizedActivations.BLOCK * Float.BYTES
                        && scalesAt % 256 == 0 && sumsAt % 256 == 0, n + " rows: scales at " + scalesAt + ", sums at "
                        + sumsAt);
            }
            long allocations = DeviceBuffer.changes() - before;
            // the first, then at 2x, 4x ... the first size: 65 rows -> 130 -> 260 -> 520; each but the first also frees
            assertTrue(allocations <= 2 * 3 + 1, allocations + " allocations and frees for 256 growing prompts");
        }
    }
}
