package io.zse.api;

import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A normal start of the server prints no warning: an operator learns to read every WARN line. */
@QuarkusTest
class StartupLogTest extends ApiTestBase {
    @Test
    void aStartLogsNoWarnings() throws Exception {
        List<String> lines = Files.readAllLines(Path.of("target/quarkus-test.log"));
        assertTrue(lines.stream().anyMatch(l -> l.contains("KV cache pool:")), "the log has the start: " + lines.size());
        assertFalse(lines.stream().anyMatch(l -> l.contains("has been already registered")),
                "Micrometer's duplicate-gauge warning");
        List<String> warnings = lines.stream().filter(l -> l.contains(" WARN ") && l.contains("(main)")).toList();
        assertTrue(warnings.isEmpty(), "warnings at start: " + warnings);
    }
}
