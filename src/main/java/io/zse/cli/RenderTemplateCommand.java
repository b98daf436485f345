package io.zse.cli;

import io.zse.format.SectionKind;
import io.zse.format.UserFiles;
import io.zse.format.ZseFile;
import io.zse.serve.LoadedModel;
import io.zse.tokenizer.TokenizerConfig;
import io.zse.tokenizer.template.ChatTemplate;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code zse render-template}: prints exactly the prompt a model's chat template makes of some messages, as the server
 * (and transformers' apply_chat_template) renders it, with nothing added: for checking a template or a conversation.
 */
@Command(name = "render-template", description = "Print the prompt a model's chat template renders from messages.")
public final class RenderTemplateCommand implements Callable<Integer> {
    @Option(names = "--model", required = true, paramLabel = "FILE",
            description = "A .zse model file, or a tokenizer_config.json.")
    Path model;

    @Option(names = "--messages", required = true, paramLabel = "FILE",
            description = "JSON: {\"messages\": [...], \"tools\": [...], other template variables}, or just the array "
                    + "of messages.")
    Path messages;

    @Option(names = "--no-generation-prompt", description = "Leave out the assistant turn's opening.")
    boolean noGenerationPrompt;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws IOException {
        TokenizerConfig config = tokenizerConfig();
        ChatTemplate template = config.compiledChatTemplate().orElse(null);
        if (template == null) {
            spec.commandLine().getErr().println("zse render-template: " + model + " has no chat template; rendered "
                    + "with the server's fallback (BOS, then each message's content on a line of its own)");
            template = ChatTemplate.compile(LoadedModel.FALLBACK_TEMPLATE);
        }
        TemplateInput input = TemplateInput.read(messages);
        // the flag wins; a file may also turn the generation prompt off itself
        boolean generationPrompt = !noGenerationPrompt && input.generationPrompt();
        String prompt = template.render(input.messages(), input.tools(), generationPrompt, config.bosToken(),
                config.eosToken(), input.variables());
        PrintWriter out = spec.commandLine().getOut();
        out.print(prompt);
        out.flush();
        return 0;
    }

    /** From the .zse's tokenizer-config section, or the tokenizer_config.json itself. */
    private TokenizerConfig tokenizerConfig() throws IOException {
        if (model.getFileName().toString().endsWith(".json")) {
            return TokenizerConfig.parse(UserFiles.readBytes(model));
        }
        try (ZseFile file = ZseFile.open(model)) {
            return file.sectionBytes(SectionKind.TOKENIZER_CONFIG).map(TokenizerConfig::parse)
                    .orElse(new TokenizerConfig(null, null, null));
        }
    }
}
