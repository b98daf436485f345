package io.zse.convert;

import java.util.Arrays;
import java.util.List;

/** Name, element type and shape of one tensor in a safetensors file (row-major, last dimension fastest). */
public record SafetensorsTensor(String name, SafetensorsDtype dtype, long[] shape) {

    public SafetensorsTensor {
        shape = shape.clone();
        for (long d : shape) {
            if (d < 0) {
                throw new IllegalArgumentException("tensor '" + name + "' has a negative dimension " + d);
            }
        }
    }

    public SafetensorsTensor(String name, SafetensorsDtype dtype, List<Long> shape) {
        this(name, dtype, shape.stream().mapToLong(Long::longValue).toArray());
    }

    @Override
    public long[] shape() {
        return shape.clone();
    }

    /** Product of the dimensions (1 for a scalar); throws ArithmeticException on overflow. */
    public long elementCount() {
        long n = 1;
        for (long d : shape) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }

    public long byteSize() {
        return Math.multiplyExact(elementCount(), (long) dtype.byteSize());
    }

    public List<Long> shapeList() {
        return Arrays.stream(shape).boxed().toList();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SafetensorsTensor t && name.equals(t.name) && dtype == t.dtype && Arrays.equals(shape, t.shape);
    }

    @Override
    public int hashCode() {
        return name.hashCode() * 31 + Arrays.hashCode(shape);
    }

    @Override
    public String toString() {
        return name + " " + dtype + Arrays.toString(shape);
    }
}
