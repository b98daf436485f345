package io.zse.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line of {@code zse} in a child JVM as the launcher starts the compute commands: this JDK, the test class
 * path, the Vector API module, through tools/run-java.sh (which drops the JVM's incubator notice from stderr).
 */
final class ChildZse {
    private ChildZse() {
    }

    /** The java command (without the launcher script) running {@code zse args...}. */
    static List<String> java(String... args) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "--add-modules", "jdk.incubator.vector", "-XX:+UseSerialGC",
                "-cp", System.getProperty("java.class.path"), ZseMain.class.getName()));
        command.addAll(List.of(args));
        return command;
    }

    /** {@link #java} through the launcher's stderr filter. */
    static List<String> launched(String... args) {
        List<String> command = new ArrayList<>(List.of(Path.of("tools/run-java.sh").toAbsolutePath().toString()));
        command.addAll(java(args));
        return command;
    }

    static ProcessBuilder builder(List<String> command) {
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().keySet().removeAll(List.of("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS"));
        return builder;
    }
}
