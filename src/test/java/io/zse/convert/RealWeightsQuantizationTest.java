package io.zse.convert;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zse.format.QuantErrorBound;
import io.zse.format.TensorType;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * On the real weights of tinystories-656k, the searched scales give lower total squared error than plain min/max
 * rounding for every 2-D tensor and every quantized type, and stay within the error bounds. Prints relative RMS errors.
 */
class RealWeightsQuantizationTest {
    private static final Path MODEL = Path.of("src/test/resources/models/tinystories-656k/model.safetensors");

    private record Variant(TensorType type, int groupSize) {
        String label() {
            return type + (type == TensorType.Q4 ? " g" + groupSize : "");
        }
    }

    private static final List<Variant> VARIANTS = List.of(new Variant(TensorType.Q8, 32),
            new Variant(TensorType.Q4, 32), new Variant(TensorType.Q4, 64), new Variant(TensorType.Q4, 128),
            new Variant(TensorType.NF4, 64));

    @Test
    void searchedScalesBeatMinMaxOnEveryWeightMatrix() throws Exception {
        Map<String, SafetensorsTestReader.Tensor> tensors = SafetensorsTestReader.readF32(MODEL);
        assertEquals(20, tensors.size());
        StringBuilder table = new StringBuilder(String.format("%-40s %-8s", "tensor (relative RMS error)", "shape"));
        VARIANTS.forEach(v -> table.append(String.format(" | %-17s", v.label() + " minmax->ours")));
        table.append('\n');
        List<String> failures = new ArrayList<>();
        double[][] totals = new double[VARIANTS.size()][2];
        double totalSignal = 0;
        int matrices = 0;
        for (SafetensorsTestReader.Tensor tensor : tensors.values()) {
            if (tensor.shape().length != 2) {
                continue;
            }
            matrices++;
            float[] w = tensor.values();
            double signal = RoundTrip.squaredError(w, new float[w.length]);
            totalSignal += signal;
            table.append(String.format("%-40s %-8s", tensor.name(), tensor.shape()[0] + "x" + tensor.shape()[1]));
            for (int k = 0; k < VARIANTS.size(); k++) {
                Variant v = VARIANTS.get(k);
                Quantizer quantizer = Quantizer.of(v.type(), v.groupSize());
                float[] decoded = RoundTrip.run(quantizer, w);
                int bad = QuantErrorBound.firstViolation(v.type(), v.groupSize(), w, 0, decoded, 0, w.length);
                assertEquals(-1, bad, () -> tensor.name() + " " + v.label() + ": element " + bad + " out of bound");
                double ours = RoundTrip.squaredError(w, decoded);
                double minMax = RoundTrip.squaredError(w,
                        RoundTrip.run(v.type(), v.groupSize(), new MinMaxBaseline(v.type(), v.groupSize()), w));
                totals[k][0] += minMax;
                totals[k][1] += ours;
                table.append(String.format(" | %.5f -> %.5f", Math.sqrt(minMax / signal), Math.sqrt(ours / signal)));
                if (!(ours < minMax)) {
                    failures.add(tensor.name() + " " + v.label() + ": " + ours + " >= " + minMax);
                }
            }
            table.append('\n');
        }
        table.append(String.format("%-40s %-8s", "all " + matrices + " matrices", ""));
        for (double[] total : totals) {
            table.append(String.format(" | %.5f -> %.5f", Math.sqrt(total[0] / totalSignal),
                    Math.sqrt(total[1] / totalSignal)));
        }
        System.out.println(table);
        assertTrue(matrices >= 15, "expected the model's weight matrices, found " + matrices);
        assertFalse(failures.stream().findAny().isPresent(), () -> "not better than min/max: " + failures);
    }
}
