package io.zse.format;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads the files a user names (the commands' options, a checkpoint's side files), so that every failure names the
 * file: the JDK's own messages for a directory ("Is a directory") or a bad byte ("Input length = 1") say neither which
 * file nor where.
 */
public final class UserFiles {
    private UserFiles() {
    }

    public static byte[] readBytes(Path file) throws IOException {
        try {
            return Files.readAllBytes(file);
        } catch (FileSystemException e) {
            throw e; // names the file already (the one-line error handler prints it)
        } catch (IOException e) {
            throw new IOException(file + ": " + e.getMessage(), e);
        }
    }

    /** The file as text, refusing (with the byte offset) a file that is not UTF-8 rather than guessing. */
    public static String readUtf8(Path file) throws IOException {
        ByteBuffer in = ByteBuffer.wrap(readBytes(file));
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder(); // reports malformed input, replaces nothing
        CharBuffer out = CharBuffer.allocate(in.remaining()); // UTF-8 never decodes to more chars than bytes
        CoderResult result = decoder.decode(in, out, true);
        if (result.isError()) {
            throw new IOException(file + " is not UTF-8 text (invalid byte at offset " + in.position() + ")");
        }
        decoder.flush(out);
        return out.flip().toString();
    }
}
