package io.zse.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Chat messages as the template receives them. */
class ChatMessagesTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** vLLM joins text parts with newlines: "Once" and "upon" must not become "Onceupon". */
    @Test
    void textPartsAreJoinedByNewlines() throws Exception {
        var messages = ChatMessages.read(JSON.readTree("""
                [{"role": "user", "content": [{"type": "text", "text": "Once"}, {"type": "text", "text": "upon"}]},
                 {"role": "user", "content": [{"type": "text", "text": "a time"}]}]"""));
        assertEquals("Once\nupon", messages.get(0).get("content"));
        assertEquals("a time", messages.get(1).get("content"));
    }
}
