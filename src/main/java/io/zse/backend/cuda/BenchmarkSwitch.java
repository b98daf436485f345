package io.zse.backend.cuda;

import java.util.Arrays;

/**
 * The environment variables that switch the CUDA backend between variants of a kernel or an upload, to compare them
 * on a GPU in one run (bench/gpu.sh): each takes one of a few values, case and surrounding blanks ignored.
 */
final class BenchmarkSwitch {
    private BenchmarkSwitch() {
    }

    /**
     * The one of {@code allowed} that {@code value} names, {@code unset} when it is null or blank.
     *
     * @throws IllegalArgumentException naming {@code variable} and its allowed values, for any other value
     */
    static String choice(String variable, String value, String unset, String... allowed) {
        if (value == null || value.isBlank()) {
            return unset;
        }
        for (String a : allowed) {
            if (a.equalsIgnoreCase(value.strip())) {
                return a;
            }
        }
        throw new IllegalArgumentException(variable + " must be " + String.join(" or ", Arrays.asList(allowed))
                + ", not " + value);
    }
}
