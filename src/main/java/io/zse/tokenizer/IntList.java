package io.zse.tokenizer;

import java.util.Arrays;

/** A growable int array, to collect ids without boxing. */
final class IntList {
    private int[] values;
    private int size;

    IntList(int capacity) {
        values = new int[Math.max(capacity, 4)];
    }

    void add(int value) {
        if (size == values.length) {
            values = Arrays.copyOf(values, size * 2);
        }
        values[size++] = value;
    }

    void addAll(int[] more) {
        if (size + more.length > values.length) {
            values = Arrays.copyOf(values, Math.max(size * 2, size + more.length));
        }
        System.arraycopy(more, 0, values, size, more.length);
        size += more.length;
    }

    int size() {
        return size;
    }

    int get(int index) {
        return values[index];
    }

    int[] toArray() {
        return Arrays.copyOf(values, size);
    }
}
