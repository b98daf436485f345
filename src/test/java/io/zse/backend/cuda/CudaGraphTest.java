package io.zse.backend.cuda;

import io.zse.generate.Sampler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Graph capture and replay through the library's ABI: a captured step runs nothing until launched, and each replay
 * reads inputs updated in place in device memory; synchronizing a capturing stream breaks the capture, as on a GPU.
 */
class CudaGraphTest {
    @RegisterExtension
    static final CudaTestBackends backends = CudaTestBackends.libraryOnly();

    private static final int ROWS = 2;   // tokens per step
    private static final int DIM = 64;
    private static final int VOCAB = 96;

    private static float[] random(int length, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        float[] a = new float[length];
        for (int i = 0; i < length; i++) {
            a[i] = (float) r.nextDouble(-1, 1);
        }
        return a;
    }

    @Test
    void aCapturedStepReplaysWithItsInputsUpdatedInPlace() {
        CudaLibrary cuda = backends.library();
        float[] residual = random(ROWS * DIM, 1);
        float[] norm = random(DIM, 2);
        float[] weight = random(VOCAB * DIM, 3);
        try (CudaStream stream = new CudaStream(cuda);
             PinnedBuffer host = new PinnedBuffer(cuda, (long) VOCAB * DIM * Float.BYTES);
             DeviceBuffer x = new DeviceBuffer(cuda, (long) ROWS * DIM * Float.BYTES);
             DeviceBuffer r = upload(residual, host, stream);
             DeviceBuffer g = upload(norm, host, stream);
             DeviceBuffer w = upload(weight, host, stream);
             DeviceBuffer normed = new DeviceBuffer(cuda, (long) ROWS * DIM * Float.BYTES);
             DeviceBuffer logits = new DeviceBuffer(cuda, (long) ROWS * VOCAB * Float.BYTES);
             DeviceBuffer ids = new DeviceBuffer(cuda, (long) ROWS * Integer.BYTES)) {
            x.fill(0, stream);
            ids.fill(0xff, stream);
            stream.synchronize();
            // x += residual; normed = rmsnorm(x); logits = normed . w^T; ids = argmax(logits)
            try (CudaGraph step = CudaGraph.capture(cuda, stream, () -> {
                cuda.call("zse_cuda_add", floats(x), floats(r), (long) ROWS * DIM, stream.handle());
                cuda.call("zse_cuda_rms_norm", floats(x), ROWS, floats(g), DIM, 1e-5f, floats(normed),
                        MemorySegment.NULL, MemorySegment.NULL, MemorySegment.NULL, stream.handle());
                cuda.call("zse_cuda_matmul", floats(w), MemorySegment.NULL, 0, 0, VOCAB, DIM, floats(normed), ROWS,
                        64, floats(logits), stream.handle());
                cuda.call("zse_cuda_argmax", floats(logits), ROWS, VOCAB, floats(ids), stream.handle());
            })) {
                assertArrayEquals(new int[]{-1, -1}, readInts(ids, host, stream), "captured work ran before a replay");
                for (int round = 0; round < 3; round++) {
                    float[] input = random(ROWS * DIM, 100 + round);
                    write(input, x, host, stream); // in place: the graph holds the buffer's address, not its contents
                    step.launch(stream);
                    float[] expected = reference(input, residual, norm, weight);
                    float[] actual = readFloats(logits, ROWS * VOCAB, host, stream);
                    for (int i = 0; i < expected.length; i++) {
                        assertEquals(expected[i], actual[i], 1e-4f, "round " + round + " logit " + i);
                    }
                    int[] greedy = {Sampler.argmax(expected, 0, VOCAB), Sampler.argmax(expected, VOCAB, VOCAB)};
                    assertArrayEquals(greedy, readInts(ids, host, stream), "round " + round);
                }
            }
        }
    }

    @Test
    void synchronizingACapturingStreamBreaksTheCapture() {
        CudaLibrary cuda = backends.library();
        try (CudaStream stream = new CudaStream(cuda)) {
            CudaException e = assertThrows(CudaException.class, () -> CudaGraph.capture(cuda, stream, stream::synchronize));
            assertEquals(900, e.status(), e.getMessage()); // cudaErrorStreamCaptureUnsupported
            stream.synchronize(); // the stream is usable again once the capture has ended
        }
    }

    /** The step in Java: float sums in double, so only the device's rounding differs. */
    private static float[] reference(float[] input, float[] residual, float[] norm, float[] weight) {
        float[] logits = new float[ROWS * VOCAB];
        for (int t = 0; t < ROWS; t++) {
            float[] x = new float[DIM];
            double squares = 0;
            for (int k = 0; k < DIM; k++) {
                x[k] = input[t * DIM + k] + residual[t * DIM + k];
                squares += (double) x[k] * x[k];
            }
            double scale = 1 / Math.sqrt(squares / DIM + 1e-5);
            for (int v = 0; v < VOCAB; v++) {
                double dot = 0;
                for (int k = 0; k < DIM; k++) {
                    dot += x[k] * scale * norm[k] * weight[v * DIM + k];
                }
                logits[t * VOCAB + v] = (float) dot;
            }
        }
        return logits;
    }

    private static MemorySegment floats(DeviceBuffer b) {
        return b.at(0, b.bytes());
    }

    private static DeviceBuffer upload(float[] values, PinnedBuffer host, CudaStream stream) {
        DeviceBuffer d = new DeviceBuffer(backends.library(), (long) values.length * Float.BYTES);
        write(values, d, host, stream);
        return d;
    }

    private static void write(float[] values, DeviceBuffer into, PinnedBuffer host, CudaStream stream) {
        MemorySegment staged = host.segment().asSlice(0, (long) values.length * Float.BYTES);
        MemorySegment.copy(values, 0, staged, ValueLayout.JAVA_FLOAT, 0, values.length);
        into.copyFrom(staged, 0, stream);
        stream.synchronize();
    }

    private static float[] readFloats(DeviceBuffer from, int count, PinnedBuffer host, CudaStream stream) {
        MemorySegment staged = host.segment().asSlice(0, (long) count * Float.BYTES);
        from.copyTo(staged, 0, stream);
        stream.synchronize();
        return staged.toArray(ValueLayout.JAVA_FLOAT);
    }

    private static int[] readInts(DeviceBuffer from, PinnedBuffer host, CudaStream stream) {
        MemorySegment staged = host.segment().asSlice(0, from.bytes());
        from.copyTo(staged, 0, stream);
        stream.synchronize();
        return staged.toArray(ValueLayout.JAVA_INT);
    }
}
