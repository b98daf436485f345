package io.zse.cli;

import io.quarkus.runtime.Quarkus;
import io.zse.api.EarlyModelLoad;
import io.zse.backend.BackendChoice;
import io.zse.backend.cuda.CudaProbe;
import io.quarkus.runtime.annotations.QuarkusMain;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Process entry point. Only {@code serve} boots Quarkus (and so opens an HTTP port); every other command runs as
 * plain Java so it starts fast and never binds a socket.
 */
@QuarkusMain
public final class ZseMain {
    private ZseMain() {
    }

    public static void main(String... args) {
        if (mayRunOnCuda(args)) {
            CudaProbe.startEarly(); // the device comes up while the JVM loads the rest of the command
        }
        if (args.length > 0 && args[0].equals("serve")) {
            List<String> serveArgs = Arrays.asList(args).subList(1, args.length);
            if (!serveArgs.contains("--help") && !serveArgs.contains("-h")) {
                serve(serveArgs.toArray(String[]::new));
                return;
            }
        }
        // JBoss LogManager is on the class path (Quarkus's); JUL must know it before anything logs, or its first use
        // prints a two-line complaint on stderr that would break the commands' one-line failures
        if (System.getProperty("java.util.logging.manager") == null) {
            System.setProperty("java.util.logging.manager", "org.jboss.logmanager.LogManager");
        }
        // picocli looks for Groovy's Closure class unless told not to, and a class missing from the class path makes
        // the JVM open and index every jar on it (Quarkus's 130): 20 ms of a cold start, for nothing
        if (System.getProperty("picocli.disable.closures") == null) {
            System.setProperty("picocli.disable.closures", "true");
        }
        System.exit(ZseCommand.execute(args));
    }

    /**
     * Whether the command may pick the CUDA backend: a command that loads a model, with no {@code --backend},
     * {@code zse.backend} or {@code ZSE_BACKEND} that says cpu (a value that does not parse is left to the command).
     */
    static boolean mayRunOnCuda(String[] args) {
        if (args.length == 0 || !Set.of("generate", "chat", "bench", "eval", "serve").contains(args[0])) {
            return false;
        }
        Optional<String> explicit = Optional.empty();
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals("--backend") && i + 1 < args.length) {
                explicit = Optional.of(args[i + 1]);
            } else if (args[i].startsWith("--backend=")) {
                explicit = Optional.of(args[i].substring("--backend=".length()));
            }
        }
        try {
            return BackendChoice.resolve(explicit).kind() != BackendChoice.Kind.CPU;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /** Boots Quarkus with the serve options turned into configuration; exits 2 after a usage error. */
    static void serve(String[] args) {
        String[] rest = serveOptions(args);
        if (rest == null) {
            System.exit(2);
        }
        // the model loads while Quarkus starts, not after it
        EarlyModelLoad.start();
        Quarkus.run(rest);
    }

    /**
     * {@code serve [--model FILE] [--port N]}: the options become MicroProfile Config system properties
     * (zse.model-path, quarkus.http.port), which outrank env vars and application.properties. Returns the arguments
     * left for Quarkus, or null after printing a usage error.
     */
    static String[] serveOptions(String[] args) {
        List<String> rest = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String key = switch (a) {
                case "--model" -> "zse.model-path";
                case "--port" -> "quarkus.http.port";
                default -> null;
            };
            if (key == null) {
                rest.add(a);
                continue;
            }
            if (i + 1 >= args.length) {
                System.err.println("zse serve: " + a + " needs a value");
                return null;
            }
            String value = args[++i];
            if (key.equals("quarkus.http.port") && !(value.matches("\\d{1,5}") && Integer.parseInt(value) <= 65535)) {
                System.err.println("zse serve: --port must be a number from 0 to 65535, not '" + value + "'");
                return null;
            }
            System.setProperty(key, value);
        }
        return rest.toArray(String[]::new);
    }
}
