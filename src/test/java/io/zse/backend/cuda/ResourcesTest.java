package io.zse.backend.cuda;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A failure to free one resource keeps none of the others held, and says what failed. */
class ResourcesTest {
    @Test
    void everyResourceIsClosedAndTheFirstFailureThrownWithTheLaterOnesSuppressed() {
        List<String> closed = new ArrayList<>();
        IllegalStateException first = new IllegalStateException("first");
        IllegalStateException second = new IllegalStateException("second");
        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> Resources.closeAll(
                () -> closed.add("a"), () -> {
                    closed.add("b");
                    throw first;
                }, null, () -> closed.add("c"), () -> {
                    closed.add("d");
                    throw second;
                }, () -> closed.add("e")));
        assertEquals(List.of("a", "b", "c", "d", "e"), closed);
        assertSame(first, thrown);
        assertEquals(List.of(second), Arrays.asList(thrown.getSuppressed()));
    }

    @Test
    void whatWasMadeBeforeAFailedAllocationIsClosedAgain() {
        List<String> closed = new ArrayList<>();
        IllegalStateException failure = new IllegalStateException("out of memory");
        assertSame(failure, assertThrows(IllegalStateException.class,
                () -> Resources.madeAfter(() -> closed.add("device"), () -> {
                    throw failure;
                })));
        assertEquals(List.of("device"), closed);
        assertEquals("pinned", Resources.madeAfter(() -> closed.add("never"), () -> "pinned"));
        assertEquals(List.of("device"), closed);
    }
}
