package io.zse.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.zse.serve.LoadedModel;
import io.zse.serve.Pooling;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;

/**
 * /v1/embeddings: each input's final hidden states, pooled as the model says ({@link Pooling}) and scaled to unit
 * length, as floats or as base64 of little-endian float32s (what OpenAI's SDKs ask for by default).
 */
@ApplicationScoped
public class Embeddings {
    /** OpenAI's limit on inputs per request. */
    static final int MAX_INPUTS = 2048;
    private static final Set<String> PARAMETERS = Set.of("model", "input", "encoding_format", "dimensions", "user");

    @Inject
    ApiGate gate;

    /**
     * Validates the request, embeds every input in order, and charges the caller for their tokens.
     *
     * @param clientGone asked before each input: a client that left stops the work (2048 inputs may take minutes)
     */
    public ObjectNode create(JsonNode body, String caller, BooleanSupplier clientGone) {
        LoadedModel model = gate.model();
        if (body == null || !body.isObject()) {
            throw ApiException.invalid("the request body must be a JSON object", null);
        }
        for (Iterator<String> it = body.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            if (!PARAMETERS.contains(name)) {
                throw ApiException.invalid("Unrecognized request argument supplied: " + name, name);
            }
        }
        JsonNode modelId = body.get("model");
        if (modelId == null || !modelId.isTextual()) {
            throw ApiException.invalid("you must provide model", "model");
        }
        if (!modelId.asText().equals(model.id())) {
            throw ApiException.notFound("The model '" + modelId.asText() + "' does not exist", "model", "model_not_found");
        }
        boolean base64 = encodingFormat(body.get("encoding_format"));
        int dimensions = model.model().config().hiddenSize();
        if (RequestReader.integer(body, "dimensions", dimensions, 1, Integer.MAX_VALUE) != dimensions) {
            throw ApiException.invalid("this model's embeddings have " + dimensions + " dimensions and cannot be "
                    + "shortened", "dimensions", "unsupported_parameter");
        }
        JsonNode user = body.get("user");
        if (user != null && !user.isNull() && !user.isTextual()) {
            throw ApiException.invalid("user must be a string", "user");
        }
        List<int[]> inputs = inputs(body.get("input"), model);

        Pooling pooling = Pooling.of(model.file());
        ObjectNode response = OpenAiShapes.JSON.createObjectNode();
        response.put("object", "list");
        ArrayNode data = response.putArray("data");
        int tokens = 0;
        try {
            for (int i = 0; i < inputs.size(); i++) {
                if (clientGone.getAsBoolean()) {
                    throw ApiException.clientGone();
                }
                int[] ids = inputs.get(i);
                float[] vector = model.engine().runAside(pass -> pass.embedding(ids, pooling));
                tokens += ids.length;
                ObjectNode item = data.addObject();
                item.put("object", "embedding");
                item.put("index", i);
                if (base64) {
                    item.put("embedding", base64(vector));
                } else {
                    ArrayNode values = item.putArray("embedding");
                    for (float v : vector) {
                        values.add(v);
                    }
                }
            }
        } finally { // a refused admission or a fault reaches the client through Failures
            gate.charge(caller, tokens);
        }
        response.put("model", model.id());
        ObjectNode usage = response.putObject("usage");
        usage.put("prompt_tokens", tokens);
        usage.put("total_tokens", tokens);
        return response;
    }

    private static boolean encodingFormat(JsonNode format) {
        if (format == null || format.isNull()) {
            return false;
        }
        if (format.isTextual() && (format.asText().equals("float") || format.asText().equals("base64"))) {
            return format.asText().equals("base64");
        }
        throw ApiException.invalid("encoding_format must be 'float' or 'base64'", "encoding_format");
    }

    /** A string, an array of token ids, or an array of either: each becomes one embedding. */
    private static List<int[]> inputs(JsonNode input, LoadedModel model) {
        if (input == null || input.isNull()) {
            throw ApiException.invalid("you must provide input", "input");
        }
        List<JsonNode> items = new ArrayList<>();
        if (input.isTextual() || (input.isArray() && !input.isEmpty() && RequestReader.allIntegers(input))) {
            items.add(input);
        } else if (input.isArray() && !input.isEmpty() && input.size() <= MAX_INPUTS) {
            input.forEach(items::add);
        } else {
            throw ApiException.invalid("input must be a string, an array of token ids, or an array of 1 to "
                    + MAX_INPUTS + " of either", "input");
        }
        int context = model.engine().contextLength();
        List<int[]> ids = new ArrayList<>();
        for (int i = 0; i < items.size(); i++) {
            JsonNode item = items.get(i);
            String where = items.size() == 1 && item == input ? "input" : "input[" + i + "]";
            int[] tokens;
            if (item.isTextual() && !item.asText().isEmpty()) {
                tokens = model.tokenizer().encode(item.asText(), true);
            } else if (item.isArray() && !item.isEmpty() && RequestReader.allIntegers(item)) {
                tokens = RequestReader.tokenIds(item, model.tokenizer().vocabSize(), where);
            } else {
                throw ApiException.invalid(where + " must be a non-empty string or a non-empty array of token ids",
                        "input");
            }
            if (tokens.length > context) {
                throw ApiException.invalid("This model's maximum context length is " + context + " tokens, however you "
                        + "requested " + tokens.length + " tokens in " + where + ". Please reduce your input.", "input",
                        "context_length_exceeded");
            }
            ids.add(tokens);
        }
        return ids;
    }

    private static String base64(float[] vector) {
        ByteBuffer bytes = ByteBuffer.allocate(vector.length * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (float v : vector) {
            bytes.putFloat(v);
        }
        return Base64.getEncoder().encodeToString(bytes.array());
    }
}
