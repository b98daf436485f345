package io.zse.cli;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.zse.generate.Sampler;
import io.zse.tokenizer.Tokenizer;

import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;

/**
 * {@code generate --logprobs N} without {@code --json}: after the text, a table with a line per generated token, its
 * logprob and then its N most likely alternatives. Tokens are quoted and escaped as JSON strings, so a leading space
 * or a newline inside one stays visible.
 */
final class LogprobsTable {
    private LogprobsTable() {
    }

    static void print(List<Sampler.Choice> choices, int alternatives, Tokenizer tokenizer, PrintWriter out) {
        List<String> tokens = choices.stream().map(c -> quoted(tokenizer, c.token())).toList();
        int width = tokens.stream().mapToInt(String::length).max().orElse(0);
        out.println();
        out.println("logprobs: position, token, its logprob" + (alternatives == 0 ? ""
                : "; then the " + alternatives + " most likely tokens and theirs"));
        for (int i = 0; i < choices.size(); i++) {
            Sampler.Choice choice = choices.get(i);
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%4d  %-" + width + "s  %9.4f",
                    i + 1, tokens.get(i), choice.logprob()));
            if (!choice.top().isEmpty()) {
                line.append("  |");
                for (Sampler.TokenLogprob top : choice.top()) {
                    line.append(String.format(Locale.ROOT, "  %s %.4f", quoted(tokenizer, top.token()),
                            top.logprob()));
                }
            }
            out.println(line);
        }
    }

    private static String quoted(Tokenizer tokenizer, int token) {
        String text = tokenizer.decode(new int[]{token}, false);
        return "\"" + new String(JsonStringEncoder.getInstance().quoteAsString(text)) + "\"";
    }
}
