package io.zse.deploy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The server's JVM has a known memory ceiling: the launcher's memory flags (tools/serve-jvm-flags.sh, also used by the
 * container image) cap the heap (512 MiB unless ZSE_HEAP says otherwise), direct memory, code cache and metaspace, and
 * a JDK 25 accepts them with those values.
 */
class ServeMemoryFlagsTest {
    private static List<String> flags(Map<String, String> env) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder("bash", "tools/serve-jvm-flags.sh");
        pb.environment().remove("ZSE_HEAP");
        pb.environment().remove("ZSE_THP_SETTING");
        pb.environment().putAll(env);
        Process p = pb.redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        return out.lines().toList();
    }

    private static long finalValue(List<String> flags, String name) throws IOException, InterruptedException {
        return Long.parseLong(finalSetting(flags, name));
    }

    /** What the JVM makes of the flags: -XX:+PrintFlagsFinal's value of {@code name}. */
    private static String finalSetting(List<String> flags, String name) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(flags);
        command.addAll(List.of("-XX:+PrintFlagsFinal", "-version"));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        for (String line : out.lines().toList()) {
            String[] cells = line.trim().split("\\s+");
            if (cells.length >= 4 && cells[1].equals(name)) {
                return cells[3];
            }
        }
        throw new AssertionError(name + " not in -XX:+PrintFlagsFinal");
    }

    @Test
    void theServerGetsABoundedHeapAndCappedNativeAreas() throws Exception {
        List<String> defaults = flags(Map.of());
        assertTrue(defaults.contains("-Xmx512m"), defaults.toString());
        assertEquals(512L << 20, finalValue(defaults, "MaxHeapSize"));
        assertEquals(256L << 20, finalValue(defaults, "MaxDirectMemorySize"));
        assertEquals(128L << 20, finalValue(defaults, "ReservedCodeCacheSize"));
        assertEquals(256L << 20, finalValue(defaults, "MaxMetaspaceSize"));
    }

    /** Huge pages for the heap where the kernel offers them (always or madvise), and no flag where it does not. */
    @Test
    void theHeapTakesTransparentHugePagesOnlyWhereTheKernelOffersThem(@TempDir Path dir) throws Exception {
        String flag = "-XX:+UseTransparentHugePages";
        for (String setting : List.of("always [madvise] never", "[always] madvise never", "always madvise [never]")) {
            Path file = dir.resolve("enabled");
            Files.writeString(file, setting + "\n");
            List<String> flags = flags(Map.of("ZSE_THP_SETTING", file.toString()));
            assertEquals(!setting.contains("[never]"), flags.contains(flag), setting + ": " + flags);
        }
        assertFalse(flags(Map.of("ZSE_THP_SETTING", dir.resolve("absent").toString())).contains(flag),
                "a kernel without the setting");
        Path real = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");
        if (Files.isReadable(real) && !Files.readString(real).contains("[never]")) {
            List<String> flags = flags(Map.of());
            assertTrue(flags.contains(flag), flags.toString());
            assertEquals("true", finalSetting(flags, "UseTransparentHugePages"), "the JVM keeps it on");
        }
    }

    @Test
    void zseHeapTakesASizeOrAShareOfTheMemoryLimit() throws Exception {
        assertEquals(1L << 30, finalValue(flags(Map.of("ZSE_HEAP", "1g")), "MaxHeapSize"));
        List<String> share = flags(Map.of("ZSE_HEAP", "10%"));
        assertTrue(share.contains("-XX:MaxRAMPercentage=10"), share.toString());
        assertTrue(share.stream().noneMatch(f -> f.startsWith("-Xmx")), share.toString());
    }
}
