package io.zse.cli;

import io.zse.backend.Backend;
import io.zse.format.SectionKind;
import io.zse.format.ZseFile;
import io.zse.generate.Generator;
import io.zse.generate.SamplingParameters;
import io.zse.model.LlamaModel;
import io.zse.serve.LoadedModel;
import io.zse.tokenizer.Tokenizer;
import io.zse.tokenizer.TokenizerConfig;
import io.zse.tokenizer.TokenizerSource;
import io.zse.tokenizer.template.ChatTemplate;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import sun.misc.Signal;
import sun.misc.SignalHandler;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code zse chat}: an interactive conversation in the terminal. Each reply streams as it is generated; Ctrl-C stops
 * a reply (and, at the prompt, ends the chat); {@code /reset}, {@code /system TEXT} and {@code /exit} steer it. Turns
 * that no longer fit the context are dropped oldest first, and the chat says so.
 */
@Command(name = "chat", description = "Chat with a .zse model in the terminal (CPU or CUDA).")
public final class ChatCommand implements Callable<Integer> {
    private static final String HELP = "/reset clears the conversation, /system TEXT sets the system prompt "
            + "(/system alone removes it), /exit or Ctrl-D ends; Ctrl-C stops a reply.";

    @Option(names = "--model", required = true, paramLabel = "FILE", description = "The .zse file.")
    Path model;

    @Option(names = "--system", paramLabel = "TEXT", description = "The system prompt to start with.")
    String system;

    @Option(names = "--max-tokens", paramLabel = "N", description = "The most tokens per reply (default: what the context leaves).")
    Integer maxTokens;

    @Mixin
    SamplingOptions sampling;

    @Mixin
    ThreadsOption threads;

    @Mixin
    BackendOption backendOption;

    @Mixin
    KvCacheOption kvCache;

    @Spec
    CommandSpec spec;

    private final List<Map<String, Object>> history = new ArrayList<>();
    private volatile boolean replying;
    private volatile boolean stopRequested;

    @Override
    public Integer call() throws IOException {
        if (maxTokens != null && maxTokens <= 0) {
            throw new IllegalArgumentException("--max-tokens must be positive, not " + maxTokens);
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        SamplingParameters parameters = sampling.parameters();
        try (ZseFile file = ZseFile.openToRun(model)) {
            Tokenizer tokenizer = TokenizerSource.fromZse(file);
            TokenizerConfig config = file.sectionBytes(SectionKind.TOKENIZER_CONFIG).map(TokenizerConfig::parse)
                    .orElse(new TokenizerConfig(null, null, null));
            ChatTemplate template = config.compiledChatTemplate().orElse(null);
            if (template == null) {
                out.println("zse chat: " + model.getFileName() + " has no chat template (a base model): messages are "
                        + "joined as plain text, as the server does");
                template = ChatTemplate.compile(LoadedModel.FALLBACK_TEMPLATE);
            }
            try (Backend backend = backendOption.open(file, Integer.MAX_VALUE, kvCache.type(), 512, threads.count(),
                    err)) {
                LlamaModel llama = LlamaModel.load(file, backend);
                Generator generator = new Generator(llama, tokenizer, llama.config().eosTokenIds(), kvCache.type());
                Conversation conversation = new Conversation(generator, tokenizer, template, config,
                        llama.config().contextLength(), parameters, out);
                SignalHandler previous = Signal.handle(new Signal("INT"), signal -> {
                    if (replying) {
                        stopRequested = true;
                    } else {
                        out.println();
                        out.flush();
                        System.exit(130);
                    }
                });
                if (previous == SignalHandler.SIG_IGN) { // inherited (a background job): the JVM then keeps it so
                    err.println("zse chat: this process was started with SIGINT ignored, so Ctrl-C cannot stop a "
                            + "reply; /exit or Ctrl-D ends the chat");
                    err.flush();
                }
                out.println(HELP);
                out.flush();
                conversation.run(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)));
            }
        }
        return 0;
    }

    /** The read-reply loop over one model. */
    private final class Conversation {
        private final Generator generator;
        private final Tokenizer tokenizer;
        private final ChatTemplate template;
        private final TokenizerConfig config;
        private final int context;
        private final SamplingParameters parameters;
        private final PrintWriter out;
        private long nextSeed = sampling.seedOrClock();

        Conversation(Generator generator, Tokenizer tokenizer, ChatTemplate template, TokenizerConfig config,
                     int context, SamplingParameters parameters, PrintWriter out) {
            this.generator = generator;
            this.tokenizer = tokenizer;
            this.template = template;
            this.config = config;
            this.context = context;
            this.parameters = parameters;
            this.out = out;
        }

        void run(BufferedReader in) throws IOException {
            while (true) {
                out.print("> ");
                out.flush();
                String line = in.readLine();
                if (line == null || line.strip().equals("/exit") || line.strip().equals("/quit")) {
                    out.println();
                    out.flush();
                    return;
                }
                String text = line.strip();
                if (text.isEmpty()) {
                    continue;
                }
                if (text.equals("/reset")) {
                    history.clear();
                    note("conversation cleared");
                } else if (text.equals("/system") || text.startsWith("/system ")) {
                    system = text.substring("/system".length()).strip();
                    system = system.isEmpty() ? null : system;
                    note(system == null ? "system prompt removed" : "system prompt set");
                } else if (text.startsWith("/")) {
                    note("unknown command " + text.split("\\s")[0] + ". " + HELP);
                } else {
                    reply(line);
                }
            }
        }

        private void reply(String message) {
            history.add(Map.of("role", "user", "content", message));
            int[] ids = promptFitting();
            if (ids == null) {
                history.removeLast();
                note("the message is too long for the model's context of " + context + " tokens");
                return;
            }
            int room = context - ids.length;
            if (maxTokens != null && maxTokens > room) {
                note("this reply is limited to " + room + " tokens: the prompt has " + ids.length + " of the "
                        + context + " the context holds");
            }
            stopRequested = false;
            replying = true;
            Generator.Result result;
            try {
                result = generator.generate(ids, maxTokens != null ? Math.min(maxTokens, room) : room, parameters,
                        nextSeed++, List.of(), piece -> {
                            out.print(piece);
                            out.flush();
                        }, () -> stopRequested);
            } finally {
                replying = false;
            }
            out.println();
            out.flush();
            history.add(Map.of("role", "assistant", "content", result.text()));
            switch (result.finishReason()) {
                case "cancelled" -> note("stopped");
                case "length" -> note("the reply reached its token limit");
                default -> {
                }
            }
        }

        /** The prompt's ids, dropping the oldest turns until it leaves room for a reply; null if even one does not fit. */
        private int[] promptFitting() {
            boolean dropped = false;
            while (true) {
                List<Map<String, Object>> messages = new ArrayList<>();
                if (system != null) {
                    messages.add(Map.of("role", "system", "content", system));
                }
                messages.addAll(history);
                String prompt = template.render(messages, null, true, config.bosToken(), config.eosToken(), Map.of());
                int[] ids = tokenizer.encode(prompt, false); // the template writes the special tokens
                if (ids.length < context) {
                    if (dropped) {
                        note("older turns were dropped to fit the model's context of " + context + " tokens");
                    }
                    return ids;
                }
                if (history.size() <= 1) {
                    return null;
                }
                // the oldest exchange goes: the user's message and the reply to it
                history.removeFirst();
                if (history.size() > 1 && "assistant".equals(history.getFirst().get("role"))) {
                    history.removeFirst();
                }
                dropped = true;
            }
        }

        /** Said in the conversation itself (stdout), so it comes in order with the replies and prompts. */
        private void note(String text) {
            out.println("(" + text + ")");
            out.flush();
        }
    }
}
