package io.zse.format;

import java.io.IOException;
import java.nio.file.Path;

/** A {@code .zse} file is malformed; the message names the file, the part and what is wrong. */
public class ZseFormatException extends IOException {
    public ZseFormatException(Path file, String part, String problem) {
        super(file + ": " + part + ": " + problem);
    }
}
