package io.zse.cli;

import io.zse.convert.ModelConverter;

import java.io.PrintWriter;

/** Progress on stderr: a redrawn bar on a terminal, a plain line every 10% otherwise (logs, CI). */
final class ProgressDisplay implements ModelConverter.Progress {
    private final PrintWriter err;
    private final boolean terminal;
    private int lastDecile = -1;
    private boolean barShown;

    ProgressDisplay(PrintWriter err) {
        this.err = err;
        java.io.Console console = System.console();
        this.terminal = console != null && console.isTerminal();
    }

    @Override
    public void advanced(String tensor, long done, long total) {
        double fraction = total == 0 ? 1 : (double) done / total;
        if (terminal) {
            int filled = (int) (fraction * 30);
            err.printf("\r[%s%s] %3d%% %-50.50s", "#".repeat(filled), " ".repeat(30 - filled), (int) (fraction * 100),
                    tensor);
            barShown = true;
        } else if ((int) (fraction * 10) > lastDecile) {
            lastDecile = (int) (fraction * 10);
            err.printf("convert: %3d%% (%s)%n", (int) (fraction * 100), tensor);
        }
        err.flush();
    }

    @Override
    public void note(String message) {
        err.println((barShown ? "\n" : "") + "convert: " + message);
        barShown = false;
        err.flush();
    }

    void done() {
        if (barShown) {
            err.println();
            err.flush();
        }
    }
}
