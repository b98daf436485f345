package io.zse.generate;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StopMatcherTest {
    @Test
    void holdsBackAPartialMatchAndNeverEmitsTheStopString() {
        StopMatcher m = new StopMatcher(List.of("\nUser:"));
        assertEquals("Hello", m.append("Hello\nUs"));
        assertFalse(m.stopped());
        assertEquals("", m.append("er"));
        assertEquals("", m.append(":"));
        assertTrue(m.stopped());
        assertEquals("", m.flush());
        assertEquals("", m.append("more"));
    }

    @Test
    void releasesHeldTextWhenItTurnsOutNotToMatch() {
        StopMatcher m = new StopMatcher(List.of("END"));
        assertEquals("the ", m.append("the EN"));
        assertEquals("ENough", m.append("ough"));
        assertEquals("E", m.append("E") + m.flush());
    }

    @Test
    void earliestOfSeveralStopsWinsWithinOnePiece() {
        StopMatcher m = new StopMatcher(List.of("bb", "a"));
        assertEquals("xx", m.append("xxabb"));
        assertTrue(m.stopped());
    }

    @Test
    void emptyStopIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new StopMatcher(List.of("")));
    }
}
