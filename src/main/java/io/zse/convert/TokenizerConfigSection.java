package io.zse.convert;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.zse.format.UserFiles;
import io.zse.tokenizer.TokenizerConfig;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The tokenizer config a .zse stores: the checkpoint's {@code tokenizer_config.json}, with the template of its
 * {@code chat_template.jinja} when it has one (newer transformers save the template there, and prefer it to the
 * config's), its template compiled once here so that one the server could not run is refused at convert time.
 */
final class TokenizerConfigSection {
    static final String CONFIG = "tokenizer_config.json";
    static final String TEMPLATE = "chat_template.jinja";
    private static final ObjectMapper JSON = new ObjectMapper();

    private TokenizerConfigSection() {
    }

    /** The section's bytes, or null when the checkpoint has neither file. */
    static byte[] of(Path checkpoint) throws IOException {
        Path configFile = checkpoint.resolve(CONFIG);
        Path templateFile = checkpoint.resolve(TEMPLATE);
        byte[] config = Files.isRegularFile(configFile) ? Files.readAllBytes(configFile) : null;
        if (config != null) {
            CheckpointJson.check(configFile, config);
        }
        Path templateSource = configFile;
        if (Files.isRegularFile(templateFile)) {
            ObjectNode merged = config == null ? JSON.createObjectNode()
                    : (ObjectNode) CheckpointJson.object(configFile, config);
            merged.put("chat_template", UserFiles.readUtf8(templateFile));
            config = JSON.writeValueAsBytes(merged);
            templateSource = templateFile;
        }
        if (config != null) {
            try {
                TokenizerConfig.parse(config).compiledChatTemplate();
            } catch (RuntimeException e) {
                throw new IllegalArgumentException(templateSource + ": its chat template cannot be compiled: "
                        + e.getMessage(), e);
            }
        }
        return config;
    }
}
