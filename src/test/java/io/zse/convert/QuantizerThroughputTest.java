package io.zse.convert;

import io.zse.format.TensorType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Prints single-threaded quantize throughput per type, native and Java; a measurement, not an assertion. */
class QuantizerThroughputTest {

    @Test
    void printThroughput() {
        int count = 1 << 22; // 4M elements, gaussian like real weights
        float[] src = new float[count];
        Random random = new Random(1);
        for (int i = 0; i < count; i++) {
            src[i] = (float) (random.nextGaussian() * 0.02);
        }
        StringBuilder report = new StringBuilder("quantize throughput (one thread, 4M gaussian elements):\n");
        for (Quantizer quantizer : new Quantizer[] {Quantizer.of(TensorType.Q8, 32), Quantizer.of(TensorType.Q4, 32),
                Quantizer.of(TensorType.Q4, 64), Quantizer.of(TensorType.Q4, 128), Quantizer.of(TensorType.NF4, 64)}) {
            MemorySegment data = Arena.ofAuto().allocate(quantizer.type().dataBytes(count));
            MemorySegment scales = Arena.ofAuto().allocate(quantizer.type().scaleBytes(count, quantizer.groupSize()));
            long fast = Long.MAX_VALUE;
            long java = Long.MAX_VALUE;
            for (int run = 0; run < 3; run++) { // the first run warms up the JIT
                long start = System.nanoTime();
                quantizer.quantize(src, 0, count, data, 0, scales, 0);
                fast = Math.min(fast, System.nanoTime() - start);
                start = System.nanoTime();
                quantizer.quantizeInJava(src, 0, count, data, 0, scales, 0);
                java = Math.min(java, System.nanoTime() - start);
            }
            report.append(String.format("  %-4s g%-4d %6.1f M elements/s (%s), Java %6.1f%n", quantizer.type(),
                    quantizer.groupSize(), count / (fast / 1e9) / 1e6,
                    NativeQuantize.available() ? "native" : "Java", count / (java / 1e9) / 1e6));
        }
        System.out.print(report);
    }
}
