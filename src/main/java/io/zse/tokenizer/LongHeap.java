package io.zse.tokenizer;

import java.util.Arrays;

/** A binary min-heap of primitive longs (the BPE merge queue: rank in the high half, position in the low half). */
final class LongHeap {
    private long[] heap;
    private int size;

    LongHeap(int capacity) {
        heap = new long[Math.max(capacity, 4)];
    }

    boolean isEmpty() {
        return size == 0;
    }

    void add(long value) {
        if (size == heap.length) {
            heap = Arrays.copyOf(heap, size * 2);
        }
        int i = size++;
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (heap[parent] <= value) {
                break;
            }
            heap[i] = heap[parent];
            i = parent;
        }
        heap[i] = value;
    }

    long poll() {
        long top = heap[0];
        long last = heap[--size];
        int i = 0;
        while (true) {
            int child = 2 * i + 1;
            if (child >= size) {
                break;
            }
            if (child + 1 < size && heap[child + 1] < heap[child]) {
                child++;
            }
            if (heap[child] >= last) {
                break;
            }
            heap[i] = heap[child];
            i = child;
        }
        heap[i] = last;
        return top;
    }
}
