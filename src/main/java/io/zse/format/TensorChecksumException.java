package io.zse.format;

import java.nio.file.Path;

/** A tensor's bytes do not match the checksum its index entry stores: the weights are corrupt. */
public final class TensorChecksumException extends ZseFormatException {
    private final String tensor;
    private final String region;
    private final int expected;
    private final int actual;

    /** @param region {@code data} or {@code scales} */
    public TensorChecksumException(Path file, String tensor, String region, int expected, int actual) {
        super(file, "tensor " + tensor, String.format("%s checksum mismatch: stored %08x, computed %08x (weights are corrupt)",
                region, expected, actual));
        this.tensor = tensor;
        this.region = region;
        this.expected = expected;
        this.actual = actual;
    }

    public String tensor() {
        return tensor;
    }

    public String region() {
        return region;
    }

    public int expected() {
        return expected;
    }

    public int actual() {
        return actual;
    }
}
