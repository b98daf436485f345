package io.zse.serve;

import io.zse.backend.Backend;
import io.zse.format.ZseFile;
import io.zse.model.LlamaModel;
import io.zse.tokenizer.Tokenizer;
import io.zse.tokenizer.TokenizerConfig;
import io.zse.tokenizer.template.ChatTemplate;

/**
 * A model ready to serve: the mapped file, the decoder, its tokenizer and chat template, its engine, and the check
 * of its weights' checksums.
 *
 * @param id           the name clients use in {@code "model"}
 * @param chatTemplate the model's own template, or {@link #FALLBACK_TEMPLATE} when it has none
 * @param createdAt    seconds since the epoch when the model was loaded
 */
public record LoadedModel(String id, ZseFile file, Backend backend, LlamaModel model, Tokenizer tokenizer,
                          TokenizerConfig tokenizerConfig, ChatTemplate chatTemplate, boolean ownChatTemplate,
                          BatchingEngine engine, WeightVerifier weights, long createdAt) implements AutoCloseable {

    /** For base models without a template (the demo model): the messages' text, one per line, after BOS. */
    public static final String FALLBACK_TEMPLATE =
            "{{ bos_token if bos_token is defined else '' }}{% for m in messages %}{{ m['content'] }}"
                    // a newline written as an expression: trim_blocks would drop one right after the block tag
                    + "{% if not loop.last %}{{ '\\n' }}{% endif %}{% endfor %}";

    @Override
    public void close() {
        weights.close(); // first: its thread reads the mapping that file.close() unmaps
        engine.close();
        backend.close();
        file.close();
    }
}
