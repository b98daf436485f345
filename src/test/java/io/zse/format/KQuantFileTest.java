package io.zse.format;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Files holding the K-quant types: written, opened, verified and decoded; an index whose lengths, group size or row
 * length do not fit the type is refused on open, naming the tensor.
 */
class KQuantFileTest {
    @TempDir
    Path dir;

    private Path write(String file, TensorInfo planned, long dataBytes, long scaleBytes) throws IOException {
        Path out = dir.resolve(file);
        TensorInfo lying = new TensorInfo(planned.name(), planned.type(), planned.layout(), planned.shape(),
                planned.groupSize(), 0, dataBytes, 0, scaleBytes, 0, 0);
        SplittableRandom random = new SplittableRandom(dataBytes);
        try (ZseWriter writer = ZseWriter.create(out, Map.of(SectionKind.CONFIG, "{}".getBytes(StandardCharsets.UTF_8)),
                List.of(lying))) {
            ZseWriter.TensorSink sink = writer.nextTensor();
            byte[] data = new byte[(int) dataBytes];
            random.nextBytes(data);
            byte[] scales = new byte[(int) scaleBytes];
            random.nextBytes(scales);
            // F16 d (and dmin) of each super-block kept finite
            long record = planned.type() == TensorType.Q6_K ? 18 : 16;
            for (int at = 0; at + record <= scales.length; at += (int) record) {
                scales[at + 1] = 0x20;
                scales[at + 3] = planned.type() == TensorType.Q6_K ? scales[at + 3] : 0x20;
            }
            sink.writeData(MemorySegment.ofArray(data));
            sink.writeScales(MemorySegment.ofArray(scales));
            sink.finish();
            writer.finish();
        }
        return out;
    }

    @ParameterizedTest
    @CsvSource({"Q4_K, 73728, 9216", "Q5_K, 92160, 9216", "Q6_K, 110592, 10368"})
    void aFileOfEachTypeOpensVerifiesAndDecodes(TensorType type, long dataBytes, long scaleBytes) throws IOException {
        TensorInfo planned = TensorInfo.planned("model.layers.0.mlp.up_proj.weight", type, new long[]{288, 512}, 256);
        assertEquals(dataBytes, planned.dataLength());
        assertEquals(scaleBytes, planned.scalesLength());
        Path file = write(type + ".zse", planned, dataBytes, scaleBytes);
        try (ZseFile f = ZseFile.open(file)) {
            f.verify();
            ZseTensor t = f.tensor(planned.name());
            assertEquals(type, t.type());
            assertEquals(256, t.groupSize());
            float[] row = new float[512];
            TensorDecoder.decode(type, 256, t.data(), t.scales(), 287 * 512, 512, row, 0);
            for (float v : row) {
                assertTrue(Float.isFinite(v));
            }
        }
    }

    @ParameterizedTest
    @CsvSource({"Q4_K, 0, -16, needs 9216 scale bytes but the index says 9200",
            "Q5_K, -160, 0, needs 92160 data bytes but the index says 92000",
            "Q6_K, 0, 2, needs 10368 scale bytes but the index says 10370"})
    void lengthsThatDoNotFitTheTypeAreRefused(TensorType type, long dataDelta, long scaleDelta, String problem)
            throws IOException {
        TensorInfo planned = TensorInfo.planned("w", type, new long[]{288, 512}, 256);
        Path file = write("lying-" + type + ".zse", planned, planned.dataLength() + dataDelta,
                planned.scalesLength() + scaleDelta);
        ZseFormatException e = assertThrows(ZseFormatException.class, () -> ZseFile.open(file).close());
        assertTrue(e.getMessage().contains("tensor w") && e.getMessage().contains(problem), e.getMessage());
    }

    @ParameterizedTest
    @CsvSource({"Q4_K, 128, 512, group size 128", "Q6_K, 256, 384, not a multiple of group size 256"})
    void groupsOtherThanWholeSuperBlocksAreRefused(TensorType type, int groupSize, int rowLength, String problem)
            throws IOException {
        TensorInfo planned = TensorInfo.planned("w", type, new long[]{2, rowLength}, groupSize);
        Path file = write("groups-" + type + ".zse", planned, Math.max(256, planned.dataLength()),
                Math.max(16, planned.scalesLength()));
        ZseFormatException e = assertThrows(ZseFormatException.class, () -> ZseFile.open(file).close());
        assertTrue(e.getMessage().contains(problem), e.getMessage());
    }
}
