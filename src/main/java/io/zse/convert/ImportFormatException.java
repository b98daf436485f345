package io.zse.convert;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A model file from another tool (GGUF, zse-engine) that cannot be imported: names the file, the part (header,
 * metadata key, section, tensor) and what is wrong.
 */
public final class ImportFormatException extends IOException {
    public ImportFormatException(Path file, String problem) {
        super(file + ": " + problem);
    }
}
