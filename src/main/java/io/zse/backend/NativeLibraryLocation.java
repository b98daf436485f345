package io.zse.backend;

import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Where one of our native libraries is looked for: a system property (or its environment variable), else next to the
 * app: {@code lib/native/} of the packaged app (target/quarkus-app), or {@code target/native/} when running from the
 * build's classes, where the Maven build puts what it compiled.
 */
public record NativeLibraryLocation(String fileName, String property, String environmentVariable) {

    /** The configured path, if the property or environment variable is set (it need not exist). */
    public Optional<Path> configured() {
        String value = System.getProperty(property, System.getenv(environmentVariable));
        return value == null || value.isBlank() ? Optional.empty() : Optional.of(Path.of(value));
    }

    /** Places next to the app, most specific first. */
    public List<Path> besideApp() {
        List<Path> candidates = new ArrayList<>();
        Path code = codeLocation();
        if (code != null) {
            // quarkus-app/app/zse.jar -> quarkus-app/lib/native; target/classes -> target/native
            Path dir = Files.isDirectory(code) ? code : code.getParent();
            if (dir != null && dir.getParent() != null) {
                candidates.add(dir.getParent().resolve("lib/native").resolve(fileName));
                candidates.add(dir.getParent().resolve("native").resolve(fileName));
            }
        }
        return candidates;
    }

    /** The library to load: the configured path, else the first existing candidate beside the app. */
    public Optional<Path> find() {
        Optional<Path> configured = configured();
        if (configured.isPresent()) {
            return configured;
        }
        return besideApp().stream().filter(Files::isRegularFile).findFirst();
    }

    /** Why {@link #find()} found nothing, for a log line or an error. */
    public String notFound() {
        return fileName + " not found in " + besideApp() + "; set " + property;
    }

    private static Path codeLocation() {
        try {
            var source = NativeLibraryLocation.class.getProtectionDomain().getCodeSource();
            return source == null ? null : Path.of(source.getLocation().toURI());
        } catch (URISyntaxException | IllegalArgumentException | SecurityException e) {
            return null;
        }
    }
}
