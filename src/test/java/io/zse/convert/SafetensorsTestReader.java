package io.zse.convert;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Test-only reader of F32 tensors from a .safetensors file: 8-byte little-endian header length, a JSON header of
 * {name: {dtype, shape, data_offsets}}, then the data (offsets count from the end of the header).
 */
final class SafetensorsTestReader {

    record Tensor(String name, long[] shape, float[] values) {
    }

    private SafetensorsTestReader() {
    }

    static Map<String, Tensor> readF32(Path file) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        ByteBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        int headerLength = Math.toIntExact(buffer.getLong(0));
        JsonNode header = new ObjectMapper().readTree(new String(bytes, 8, headerLength,
                java.nio.charset.StandardCharsets.UTF_8));
        int dataStart = 8 + headerLength;
        Map<String, Tensor> tensors = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = header.fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> entry = it.next();
            if (entry.getKey().equals("__metadata__")) {
                continue;
            }
            JsonNode info = entry.getValue();
            if (!info.get("dtype").asText().equals("F32")) {
                throw new IOException(entry.getKey() + " is " + info.get("dtype") + ", not F32");
            }
            List<Long> shape = new ArrayList<>();
            info.get("shape").forEach(n -> shape.add(n.asLong()));
            int begin = dataStart + info.get("data_offsets").get(0).asInt();
            int end = dataStart + info.get("data_offsets").get(1).asInt();
            float[] values = new float[(end - begin) / 4];
            buffer.slice(begin, end - begin).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(values);
            tensors.put(entry.getKey(), new Tensor(entry.getKey(),
                    shape.stream().mapToLong(Long::longValue).toArray(), values));
        }
        return tensors;
    }
}
