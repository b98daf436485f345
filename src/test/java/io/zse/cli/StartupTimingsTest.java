package io.zse.cli;

import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class StartupTimingsTest {
    /** The process is older than its JVM's uptime by the JVM's own start, well under a second; never younger. */
    @Test
    void theProcessAgeFromProcAgreesWithTheJvmUptimeToATick() {
        assumeTrue(Files.isReadable(Path.of("/proc/self/stat")), "no /proc here");
        long uptime = ManagementFactory.getRuntimeMXBean().getUptime();
        long age = StartupTimings.processAgeMillis();
        long uptimeAfter = ManagementFactory.getRuntimeMXBean().getUptime();
        assertTrue(age >= uptime - 20 && age <= uptimeAfter + 1000, "process age " + age + " ms, JVM uptime " + uptime);
    }
}
