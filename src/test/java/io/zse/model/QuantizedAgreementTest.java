package io.zse.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.TestModels;
import io.zse.backend.cpu.CpuBackend;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Quantized TinyStories against the F32 reference greedy output, teacher-forced: the whole golden sequence is run in
 * one batch and each position's top-1 is compared with the token transformers chose next (so one early divergence
 * does not hide the rest).
 */
class QuantizedAgreementTest {
    @TempDir
    Path dir;

    @Test
    void quantizedModelsMostlyAgreeWithTheF32Reference() throws IOException {
        JsonNode golden;
        try (InputStream in = getClass().getResourceAsStream("/golden/tinystories-656k-greedy-f32.json")) {
            golden = new ObjectMapper().readTree(in);
        }
        try (CpuBackend backend = new CpuBackend(2)) {
            double q8 = 0;
            for (TensorType type : new TensorType[]{TensorType.Q8, TensorType.Q4, TensorType.NF4}) {
                double agreement = agreement(golden, type, backend);
                System.out.printf("TinyStories %s top-1 agreement with F32 greedy: %.1f%%%n", type, 100 * agreement);
                if (type == TensorType.Q8) {
                    q8 = agreement;
                }
            }
            assertTrue(q8 >= 0.95, "Q8 top-1 agreement " + q8);
        }
    }

    private double agreement(JsonNode golden, TensorType type, CpuBackend backend) throws IOException {
        try (ZseFile file = ZseFile.open(TestModels.convertTinyStories(type, dir))) {
            LlamaModel model = LlamaModel.load(file, backend);
            int vocab = model.config().vocabSize();
            int agree = 0;
            int total = 0;
            for (JsonNode c : golden.get("cases")) {
                int[] prompt = LlamaModelGoldenTest.ints(c.get("prompt_ids"));
                int[] generated = LlamaModelGoldenTest.ints(c.get("greedy_ids"));
                int[] sequence = IntStream.concat(IntStream.of(prompt), IntStream.of(generated)).toArray();
                float[] logits = model.forwardAll(sequence, 0, model.newCache(sequence.length));
                for (int g = 0; g < generated.length; g++) {
                    int position = prompt.length - 1 + g;
                    float[] row = java.util.Arrays.copyOfRange(logits, position * vocab, (position + 1) * vocab);
                    agree += LlamaModelGoldenTest.argmax(row) == generated[g] ? 1 : 0;
                    total++;
                }
            }
            return (double) agree / total;
        }
    }
}
