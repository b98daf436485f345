package io.zse.backend;

import java.util.Optional;

/**
 * Which backend a user asked for: {@code auto} (CUDA when a usable device is present, else the CPU), {@code cpu},
 * {@code cuda} (device 0) or {@code cuda:N}.
 *
 * @param kind   what was asked for
 * @param device the CUDA device index; 0 unless {@code cuda:N} was given
 */
public record BackendChoice(Kind kind, int device) {
    /** The system property (and, upper-cased with _ for ., the environment variable) that sets the default. */
    public static final String PROPERTY = "zse.backend";

    public enum Kind { AUTO, CPU, CUDA }

    public static final BackendChoice AUTO = new BackendChoice(Kind.AUTO, 0);

    public BackendChoice {
        if (device < 0) {
            throw new IllegalArgumentException("CUDA device index " + device + " is negative");
        }
    }

    /** Parses auto, cpu, cuda or cuda:N (case-insensitive). */
    public static BackendChoice parse(String text) {
        String s = text.strip().toLowerCase(java.util.Locale.ROOT);
        if (s.equals("auto")) {
            return AUTO;
        }
        if (s.equals("cpu")) {
            return new BackendChoice(Kind.CPU, 0);
        }
        if (s.equals("cuda")) {
            return new BackendChoice(Kind.CUDA, 0);
        }
        if (s.startsWith("cuda:") && s.length() > 5 && s.substring(5).chars().allMatch(Character::isDigit)
                && s.length() <= 14) {
            return new BackendChoice(Kind.CUDA, Integer.parseInt(s.substring(5)));
        }
        throw new IllegalArgumentException("unknown backend '" + text + "' (expected auto, cpu, cuda or cuda:N)");
    }

    /** {@code explicit} when given, else {@code zse.backend}, else {@code ZSE_BACKEND}, else auto. */
    public static BackendChoice resolve(Optional<String> explicit) {
        return explicit.or(() -> Optional.ofNullable(System.getProperty(PROPERTY)))
                .or(() -> Optional.ofNullable(System.getenv("ZSE_BACKEND")))
                .map(BackendChoice::parse)
                .orElse(AUTO);
    }

    @Override
    public String toString() {
        return kind == Kind.CUDA ? "cuda:" + device : kind.name().toLowerCase(java.util.Locale.ROOT);
    }
}
