package io.zse.cli;

import io.zse.tokenizer.Tokenizer;
import io.zse.tokenizer.TokenizerSource;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/** {@code zse detokenize}: a JSON array of ids on stdin to the decoded text (printed as is, no newline added). */
@Command(name = "detokenize",
        description = "Read a JSON array of token ids on stdin and print the decoded text.")
public final class DetokenizeCommand implements java.util.concurrent.Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--model", required = true, paramLabel = "FILE",
            description = "A tokenizer.json, a .zse model file, or a checkpoint directory with a tokenizer.json.")
    Path model;

    @Option(names = "--skip-special", description = "Leave special tokens out of the text.")
    boolean skipSpecial;

    @Override
    public Integer call() throws IOException {
        Tokenizer tokenizer = TokenizerSource.load(model);
        String input = new String(System.in.readAllBytes(), StandardCharsets.UTF_8);
        PrintWriter out = spec.commandLine().getOut();
        out.print(tokenizer.decode(parseIds(input), skipSpecial));
        out.flush();
        return 0;
    }

    /** Parses {@code [1, 2, 3]}; anything else is refused with a one-line message. */
    static int[] parseIds(String input) {
        String trimmed = input.strip();
        if (!trimmed.startsWith("[") || !trimmed.endsWith("]")) {
            throw new IllegalArgumentException("expected a JSON array of token ids on stdin");
        }
        String body = trimmed.substring(1, trimmed.length() - 1).strip();
        if (body.isEmpty()) {
            return new int[0];
        }
        String[] parts = body.split(",");
        int[] ids = new int[parts.length];
        for (int i = 0; i < parts.length; i++) {
            try {
                ids[i] = Integer.parseInt(parts[i].strip());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a token id: '" + parts[i].strip() + "'");
            }
            if (ids[i] < 0) {
                throw new IllegalArgumentException("not a token id: " + ids[i]);
            }
        }
        return ids;
    }
}
