package io.zse.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What the deployment files (Dockerfiles, deploy/**) set for the server and what the application really reads, both
 * read from the repository's files so the comparison follows either side as it changes.
 */
final class DeployFiles {
    static final Path ROOT = Path.of("").toAbsolutePath();
    static final Path PROPERTIES = ROOT.resolve("src/main/resources/application.properties");
    static final Path SOURCES = ROOT.resolve("src/main/java");

    private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_.-]*)(?::([^}]*))?}");
    private static final Pattern CONFIG_PROPERTY = Pattern.compile("@ConfigProperty\\s*\\(\\s*name\\s*=\\s*\"([^\"]+)\"");
    private static final Pattern CONFIG_MAPPING = Pattern.compile("@ConfigMapping\\s*\\(\\s*prefix\\s*=\\s*\"([^\"]+)\"");
    private static final Pattern GETENV = Pattern.compile("System\\.getenv\\(\\s*\"([A-Z0-9_]+)\"\\s*\\)");
    /** A native library's location names its environment variable last (io.zse.backend.NativeLibraryLocation). */
    private static final Pattern LIBRARY_VARIABLE = Pattern.compile(
            "new NativeLibraryLocation\\([^;]*?\"([A-Z0-9_]+)\"\\s*\\)");
    private static final Pattern SHELL_VARIABLE = Pattern.compile("\\$\\{?([A-Z][A-Z0-9_]*)");
    private static final Pattern MAPPING_METHOD = Pattern.compile("^\\s*(?:@WithName\\(\"([^\"]+)\"\\)\\s*)?"
            + "[\\w<>?, .\\[\\]]+\\s+(\\w+)\\(\\)\\s*;", Pattern.MULTILINE);

    private DeployFiles() {
    }

    static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** MicroProfile Config's environment form of a property name: zse.model-path -> ZSE_MODEL_PATH. */
    static String envName(String property) {
        return property.replaceAll("[^A-Za-z0-9]", "_").toUpperCase();
    }

    /** Every environment variable the application, its launcher or the image entrypoint reads. */
    static Set<String> variablesTheAppReads() {
        Set<String> names = new LinkedHashSet<>();
        for (String line : read(PROPERTIES).lines().toList()) {
            String trimmed = line.strip();
            if (trimmed.isEmpty() || trimmed.startsWith("#") || !trimmed.contains("=")) {
                continue;
            }
            String key = trimmed.substring(0, trimmed.indexOf('=')).strip();
            names.add(envName(key.replaceFirst("^%[\\w-]+\\.", "")));
            Matcher placeholder = PLACEHOLDER.matcher(trimmed);
            while (placeholder.find()) {
                names.add(placeholder.group(1));
                names.add(envName(placeholder.group(1)));
            }
        }
        for (Path source : javaSources()) {
            String text = read(source);
            addAll(names, CONFIG_PROPERTY.matcher(text), true);
            addAll(names, GETENV.matcher(text), false);
            addAll(names, LIBRARY_VARIABLE.matcher(text), false);
            Matcher mapping = CONFIG_MAPPING.matcher(text);
            if (mapping.find()) {
                Matcher method = MAPPING_METHOD.matcher(text);
                while (method.find()) {
                    String name = method.group(1) != null ? method.group(1) : kebab(method.group(2));
                    names.add(envName(mapping.group(1) + "." + name));
                }
            }
        }
        for (String script : List.of("zse", "tools/jdk.sh", "deploy/docker/entrypoint.sh",
                "src/main/native/cuda/build.sh")) {
            if (Files.exists(ROOT.resolve(script))) {
                addAll(names, SHELL_VARIABLE.matcher(read(ROOT.resolve(script))), false);
            }
        }
        return names;
    }

    private static void addAll(Set<String> names, Matcher matcher, boolean property) {
        while (matcher.find()) {
            names.add(property ? envName(matcher.group(1)) : matcher.group(1));
        }
    }

    private static String kebab(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase();
    }

    private static List<Path> javaSources() {
        try (Stream<Path> files = Files.walk(SOURCES)) {
            return files.filter(f -> f.toString().endsWith(".java")).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The default of {@code quarkus.http.port=${PORT:8080}}: the port every platform file must use. */
    static int defaultHttpPort() {
        for (String line : read(PROPERTIES).lines().toList()) {
            if (line.startsWith("quarkus.http.port=")) {
                Matcher placeholder = PLACEHOLDER.matcher(line);
                if (placeholder.find() && "PORT".equals(placeholder.group(1)) && placeholder.group(2) != null) {
                    return Integer.parseInt(placeholder.group(2).strip());
                }
                throw new AssertionError("quarkus.http.port must read PORT with a default: " + line);
            }
        }
        throw new AssertionError("application.properties sets no quarkus.http.port");
    }

    /** ENV instructions of a Dockerfile (continuation lines joined), name to value. */
    static Map<String, String> dockerfileEnv(Path dockerfile) {
        Map<String, String> env = new LinkedHashMap<>();
        String joined = read(dockerfile).replace("\\\n", " ");
        for (String line : joined.lines().toList()) {
            String trimmed = line.strip();
            if (trimmed.startsWith("ENV ")) {
                Matcher pair = Pattern.compile("([A-Za-z_][A-Za-z0-9_]*)=(\\S+)").matcher(trimmed.substring(4));
                while (pair.find()) {
                    env.put(pair.group(1), pair.group(2));
                }
            }
        }
        return env;
    }

    /** Values of one Dockerfile instruction, e.g. every EXPOSE argument. */
    static List<String> dockerfileArguments(Path dockerfile, String instruction) {
        return read(dockerfile).lines()
                .map(String::strip)
                .filter(l -> l.startsWith(instruction + " "))
                .flatMap(l -> Stream.of(l.substring(instruction.length()).strip().split("\\s+")))
                .toList();
    }

    /** KEY=value lines of an env file, comments skipped. */
    static Map<String, String> envFile(Path file) {
        Map<String, String> env = new LinkedHashMap<>();
        for (String line : read(file).lines().toList()) {
            String trimmed = line.strip();
            if (!trimmed.isEmpty() && !trimmed.startsWith("#")) {
                int eq = trimmed.indexOf('=');
                env.put(trimmed.substring(0, eq), trimmed.substring(eq + 1));
            }
        }
        return env;
    }

    /** Keys of the dictionary passed to Modal's Image.env({...}) in app.py, with their Python source values. */
    static Map<String, String> modalImageEnv(Path appPy) {
        Matcher env = Pattern.compile("\\.env\\(\\{(.*?)}\\)", Pattern.DOTALL).matcher(read(appPy));
        if (!env.find()) {
            throw new AssertionError(appPy + " sets no image environment");
        }
        Map<String, String> result = new LinkedHashMap<>();
        Matcher pair = Pattern.compile("\"([A-Z0-9_]+)\"\\s*:\\s*(f?\"[^\"]*\"|[\\w.()]+)").matcher(env.group(1));
        while (pair.find()) {
            result.put(pair.group(1), pair.group(2).strip());
        }
        return result;
    }

    /** A module-level integer constant of a Python file, e.g. PORT = 8080. */
    static int pythonConstant(Path file, String name) {
        Matcher constant = Pattern.compile("^" + name + "\\s*=\\s*(\\d+)\\s*$", Pattern.MULTILINE).matcher(read(file));
        if (!constant.find()) {
            throw new AssertionError(file + " defines no " + name);
        }
        return Integer.parseInt(constant.group(1));
    }

    /** Whether the HTTP server (issue 5) is part of this build: its API package holds the OpenAI resources. */
    static boolean serverPresent() {
        return Files.isDirectory(SOURCES.resolve("io/zse/api"));
    }
}
