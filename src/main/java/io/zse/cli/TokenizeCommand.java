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

/** {@code zse tokenize}: UTF-8 text on stdin (taken exactly, trailing newline included) to a JSON array of ids. */
@Command(name = "tokenize",
        description = "Read UTF-8 text on stdin and print its token ids as a JSON array.")
public final class TokenizeCommand implements java.util.concurrent.Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--model", required = true, paramLabel = "FILE",
            description = "A tokenizer.json, a .zse model file, or a checkpoint directory with a tokenizer.json.")
    Path model;

    @Option(names = "--add-special", description = "Add the special tokens the tokenizer's template adds (BOS...).")
    boolean addSpecial;

    @Override
    public Integer call() throws IOException {
        Tokenizer tokenizer = TokenizerSource.load(model);
        String text = new String(System.in.readAllBytes(), StandardCharsets.UTF_8);
        int[] ids = tokenizer.encode(text, addSpecial);
        StringBuilder json = new StringBuilder(ids.length * 7 + 2).append('[');
        for (int i = 0; i < ids.length; i++) {
            json.append(i == 0 ? "" : ",").append(ids[i]);
        }
        PrintWriter out = spec.commandLine().getOut();
        out.println(json.append(']'));
        out.flush();
        return 0;
    }
}
