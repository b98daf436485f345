package io.zse.format;

import java.nio.file.Path;

/** A read of a mapped file faulted: the file shrank after it was mapped, or its storage failed ({@link MappedFiles}). */
public final class MappedReadException extends RuntimeException {
    private final Path path;

    MappedReadException(Path path, String message) {
        super(path == null ? message : path + ": " + message);
        this.path = path;
    }

    /** The file whose mapping faulted, or null when the address lies in no mapping known here. */
    public Path path() {
        return path;
    }
}
