package io.zse.convert;

import java.io.IOException;
import java.nio.file.Path;

/** A safetensors file or Hugging Face checkpoint that is malformed or unusable; the message names the file. */
public final class SafetensorsException extends IOException {
    public SafetensorsException(Path file, String problem) {
        super(file + ": " + problem);
    }

    public SafetensorsException(Path file, String problem, Throwable cause) {
        super(file + ": " + problem, cause);
    }
}
