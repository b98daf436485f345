package io.zse.backend.cuda;

import java.util.Arrays;
import java.util.function.Supplier;

/** Closing several device resources at once: a failure to free one must not keep the others held. */
final class Resources {
    private Resources() {
    }

    /**
     * Closes each resource in order (nulls skipped), every one of them even where an earlier one throws, then throws
     * the first failure with the later ones suppressed in it.
     */
    static void closeAll(Iterable<? extends AutoCloseable> resources) {
        RuntimeException failure = null;
        for (AutoCloseable resource : resources) {
            if (resource == null) {
                continue;
            }
            try {
                resource.close();
            } catch (Exception e) {
                RuntimeException unchecked = e instanceof RuntimeException r ? r : new IllegalStateException(e);
                if (failure == null) {
                    failure = unchecked;
                } else if (failure != unchecked) {
                    failure.addSuppressed(unchecked);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    static void closeAll(AutoCloseable... resources) {
        closeAll(Arrays.asList(resources));
    }

    /**
     * What {@code next} makes; where it throws, {@code made} (what the caller made just before, for use with it) is
     * closed again, and the failure thrown.
     */
    static <T> T madeAfter(AutoCloseable made, Supplier<T> next) {
        try {
            return next.get();
        } catch (RuntimeException e) {
            try {
                made.close();
            } catch (Exception suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }
}
