package io.zse.convert;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HfCheckpointTest {
    @TempDir
    Path dir;

    @Test
    void readsTinyStoriesWithTiedEmbeddings() throws IOException {
        try (HfCheckpoint ckpt = HfCheckpoint.open(SafetensorsFixtures.TINYSTORIES)) {
            assertEquals(20, ckpt.tensors().size());
            assertEquals(Optional.of("lm_head.weight"), ckpt.aliasOf("model.embed_tokens.weight"));
            assertEquals(Optional.empty(), ckpt.aliasOf("lm_head.weight"));
            assertTrue(ckpt.has("model.embed_tokens.weight"));
            assertTrue(ckpt.has("model.layers.1.mlp.up_proj.weight"));
            assertFalse(ckpt.has("model.layers.2.mlp.up_proj.weight"));
            assertFalse(ckpt.has("format"));
            assertArrayEquals(new long[]{2048, 128}, ckpt.tensor("model.embed_tokens.weight").orElseThrow().shape());

            float[] viaAlias = new float[300];
            float[] stored = new float[300];
            ckpt.readFloats("model.embed_tokens.weight", 128 * 80, 300, viaAlias, 0);
            ckpt.readFloats("lm_head.weight", 128 * 80, 300, stored, 0);
            assertArrayEquals(stored, viaAlias);
            assertTrue(stored[0] != 0f && stored[299] != 0f);
            assertThrows(SafetensorsException.class, () -> ckpt.readFloats("missing", 0, 1, stored, 0));
        }
    }

    @Test
    void readsShardedCheckpoint() throws IOException {
        SafetensorsTensor a = new SafetensorsTensor("a", SafetensorsDtype.BF16, new long[]{4, 8});
        SafetensorsTensor b = new SafetensorsTensor("b", SafetensorsDtype.F16, new long[]{16});
        SafetensorsTensor c = new SafetensorsTensor("c", SafetensorsDtype.F32, new long[]{3});
        SafetensorsFixtures.countingFile(dir.resolve("model-00001-of-00002.safetensors"), List.of(a, b), 0);
        SafetensorsFixtures.countingFile(dir.resolve("model-00002-of-00002.safetensors"), List.of(c), 100);
        writeIndex("a", "model-00001-of-00002.safetensors", "b", "model-00001-of-00002.safetensors",
                "c", "model-00002-of-00002.safetensors");
        try (HfCheckpoint ckpt = HfCheckpoint.open(dir)) {
            assertEquals(List.of(a, b, c), ckpt.tensors());
            assertEquals(dir.resolve("model-00002-of-00002.safetensors"), ckpt.fileOf("c").path());
            float[] out = new float[3];
            ckpt.readFloats("c", 0, 3, out, 0);
            assertArrayEquals(new float[]{100, 101, 102}, out);
            ckpt.readFloats("a", 29, 3, out, 0);
            assertArrayEquals(new float[]{29, 30, 31}, out);
            ckpt.readFloats("b", 13, 3, out, 0);
            assertArrayEquals(new float[]{13, 14, 15}, out);
        }
    }

    @Test
    void reportsBrokenCheckpoints() throws IOException {
        assertRefused(dir.resolve("absent"), "no such checkpoint directory");
        assertRefused(dir, "no model.safetensors or model.safetensors.index.json found (and no .safetensors files at all)");

        SafetensorsTensor t = new SafetensorsTensor("t", SafetensorsDtype.F32, new long[]{2});
        SafetensorsFixtures.countingFile(dir.resolve("model-00001-of-00002.safetensors"), List.of(t), 0);
        assertRefused(dir, "found model-00001-of-00002.safetensors without an index");

        writeIndex("t", "model-00001-of-00002.safetensors", "u", "model-00002-of-00002.safetensors");
        assertRefused(dir, "names shard 'model-00002-of-00002.safetensors', which does not exist");

        SafetensorsFixtures.countingFile(dir.resolve("model-00002-of-00002.safetensors"),
                List.of(t, new SafetensorsTensor("u", SafetensorsDtype.F32, new long[]{1})), 0);
        assertRefused(dir, "tensor 't' is also stored in model-00001-of-00002.safetensors");

        SafetensorsFixtures.countingFile(dir.resolve("model-00002-of-00002.safetensors"),
                List.of(new SafetensorsTensor("v", SafetensorsDtype.F32, new long[]{1})), 0);
        assertRefused(dir, "tensor 'u' is mapped to model-00002-of-00002.safetensors but no shard stores it");

        writeIndex("t", "../model.safetensors");
        assertRefused(dir, "invalid shard name");
        Files.writeString(dir.resolve(HfCheckpoint.INDEX_FILE), "{\"weight_map\": ");
        assertRefused(dir, "not valid JSON");
        Files.writeString(dir.resolve(HfCheckpoint.INDEX_FILE), "{\"metadata\": {}}");
        assertRefused(dir, "has no \"weight_map\" object");
        String index = "{\"weight_map\": {\"t\": \"#\"}}";
        byte[] bytes = index.getBytes(StandardCharsets.US_ASCII);
        bytes[index.indexOf('#')] = (byte) 0xFF; // a byte UTF-8 never uses
        Files.write(dir.resolve(HfCheckpoint.INDEX_FILE), bytes);
        assertRefused(dir, dir.resolve(HfCheckpoint.INDEX_FILE) + ": not valid UTF-8");
    }

    private void writeIndex(String... tensorAndShard) throws IOException {
        StringBuilder map = new StringBuilder();
        for (int i = 0; i < tensorAndShard.length; i += 2) {
            map.append(i == 0 ? "" : ",").append('"').append(tensorAndShard[i]).append("\":\"")
                    .append(tensorAndShard[i + 1]).append('"');
        }
        Files.writeString(dir.resolve(HfCheckpoint.INDEX_FILE), "{\"metadata\":{\"total_size\":1},\"weight_map\":{" + map + "}}");
    }

    private static void assertRefused(Path directory, String expected) {
        SafetensorsException e = assertThrows(SafetensorsException.class, () -> HfCheckpoint.open(directory).close());
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}
