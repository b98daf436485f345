package io.zse.backend.cuda;

import io.zse.backend.ActivationBuffer;
import io.zse.generate.Sampler;
import io.zse.generate.SamplingParameters;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Sampling on the device ({@link CudaBackend#sample}) against the CPU {@link Sampler}: for the same seed, every draw of
 * a run gives the same token, for greedy rows and for temperature with top-k, top-p and min-p, rows of one batch
 * sampled together, each with its own parameters. The device's uniform is the next {@code nextDouble()} of a
 * {@link SplittableRandom} seeded as the CPU sampler's, which draws exactly one per non-greedy token.
 */
class CudaSamplingTest {
    @RegisterExtension
    static final CudaTestBackends backends = CudaTestBackends.cudaOnly();

    /** Small, so the emulation's one candidate pass per kept token stays quick (the ASan build runs these too). */
    private static final int VOCAB = 600;
    private static final int STEPS = 5;


    private static SamplingParameters parameters(double temperature, int topK, double topP, double minP) {
        return new SamplingParameters(temperature, topK, topP, minP, 1, 0, 0, 0);
    }

    /** A logits row shaped like a language model's: a few likely tokens, a long tail, some exact ties. */
    private static float[] row(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        float[] logits = new float[VOCAB];
        for (int t = 0; t < VOCAB; t++) {
            logits[t] = (float) (r.nextGaussian() * 2);
        }
        for (int i = 0; i < 8; i++) {
            logits[r.nextInt(VOCAB)] = (float) (6 + r.nextDouble() * 3);
        }
        logits[17] = logits[401]; // a tie, broken by the lower id on both sides
        return logits;
    }

    @Test
    void everyDrawOfASeededRunIsTheCpuSamplersToken() {
        CudaBackend cuda = backends.cuda();
        List<SamplingParameters> rows = List.of(
                SamplingParameters.GREEDY,
                parameters(0.7, 40, 1, 0),
                parameters(1.0, 0, 0.9, 0),
                parameters(1.3, 0, 1, 0.05),
                parameters(0.8, 5, 0.5, 0),
                parameters(2.0, 200, 0.95, 0.01),
                parameters(0.01, 0, 1, 0.2));
        int n = rows.size();
        Sampler[] samplers = new Sampler[n];
        SplittableRandom[] uniforms = new SplittableRandom[n];
        for (int i = 0; i < n; i++) {
            samplers[i] = new Sampler(rows.get(i), 1000 + i);
            uniforms[i] = new SplittableRandom(1000 + i);
        }
        try (ActivationBuffer logits = cuda.allocate((long) n * VOCAB)) {
            for (int step = 0; step < STEPS; step++) {
                float[] all = new float[n * VOCAB];
                double[] parameters = new double[5 * n];
                int[] expected = new int[n];
                for (int i = 0; i < n; i++) {
                    float[] row = row(step * 31L + i);
                    System.arraycopy(row, 0, all, i * VOCAB, VOCAB);
                    SamplingParameters p = rows.get(i);
                    expected[i] = samplers[i].sample(row, new int[0]).token();
                    parameters[5 * i] = p.temperature();
                    parameters[5 * i + 1] = p.topK();
                    parameters[5 * i + 2] = p.topP();
                    parameters[5 * i + 3] = p.minP();
                    parameters[5 * i + 4] = p.isGreedy() ? 0 : uniforms[i].nextDouble();
                }
                cuda.write(all, logits);
                int[] actual = cuda.sample(logits, n, VOCAB, parameters);
                for (int i = 0; i < n; i++) {
                    assertEquals(expected[i], actual[i], "step " + step + " row " + i + " " + rows.get(i));
                }
            }
        }
    }

    /** More than 1024 candidates kept (a flat row of 1100, no truncation): the device leaves the row to the host. */
    @Test
    void rowsWithTooManyCandidatesAreLeftToTheHost() {
        CudaBackend cuda = backends.cuda();
        int vocab = 1100;
        try (ActivationBuffer logits = cuda.allocate(2L * vocab)) {
            float[] flat = new float[2 * vocab];
            flat[vocab + 3] = 30; // the second row is peaked: decided on the device
            cuda.write(flat, logits);
            int[] ids = cuda.sample(logits, 2, vocab, new double[]{1, 0, 1, 0, 0.5, 1, 0, 0.5, 0, 0.25});
            assertEquals(-1, ids[0]);
            assertEquals(3, ids[1]);
            assertThrows(IllegalArgumentException.class, () -> cuda.sample(logits, 2, vocab, new double[5]));
        }
    }
}
