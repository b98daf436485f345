package io.zse.cli;

import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ZseCommandTest {
    private static final List<String> ALL = List.of("serve", "convert", "inspect", "synth", "tokenize", "detokenize",
            "generate", "chat", "render-template", "bench", "eval");

    @Test
    void aNamedCommandIsTheOnlyOneBuilt() {
        assertEquals(List.of("generate"), List.copyOf(ZseCommand.commandLine("generate", "--model", "m.zse")
                .getSubcommands().keySet()));
    }

    /** The device is probed early only for commands that load a model and only where CUDA is not ruled out. */
    @Test
    void onlyModelCommandsThatMayPickCudaProbeItEarly() {
        assertTrue(ZseMain.mayRunOnCuda(new String[]{"generate", "--model", "m.zse", "--backend", "cuda"}));
        assertTrue(ZseMain.mayRunOnCuda(new String[]{"serve", "--backend=cuda:1"}));
        assertTrue(ZseMain.mayRunOnCuda(new String[]{"bench", "--backend", "auto"}));
        assertFalse(ZseMain.mayRunOnCuda(new String[]{"generate", "--backend", "cpu"}));
        assertFalse(ZseMain.mayRunOnCuda(new String[]{"chat", "--backend=cpu"}));
        assertFalse(ZseMain.mayRunOnCuda(new String[]{"generate", "--backend", "tpu"})); // the command says why
        assertFalse(ZseMain.mayRunOnCuda(new String[]{"convert", "in", "-o", "out.zse"}));
        assertFalse(ZseMain.mayRunOnCuda(new String[]{}));
    }

    /** A port past 65535 is refused by the launcher in one line (Quarkus's start failed on it with a trace). */
    @Test
    void aPortOutOfRangeIsRefused() {
        assertNull(ZseMain.serveOptions(new String[]{"--port", "99999"}));
        assertNull(ZseMain.serveOptions(new String[]{"--port", "65536"}));
        assertNull(ZseMain.serveOptions(new String[]{"--port", "abc"}));
    }

    @Test
    void helpAndTyposSeeEveryCommand() {
        assertEquals(ALL, List.copyOf(ZseCommand.commandLine().getSubcommands().keySet()));
        assertEquals(ALL, List.copyOf(ZseCommand.commandLine("--help").getSubcommands().keySet()));
        assertEquals(ALL, List.copyOf(ZseCommand.commandLine("genrate").getSubcommands().keySet()));

        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        assertEquals(0, ZseCommand.execute(new PrintWriter(out), new PrintWriter(err), "--help"));
        for (String command : ALL) {
            assertTrue(out.toString().contains(command), command + " missing from help:\n" + out);
        }
        assertEquals(2, ZseCommand.execute(new PrintWriter(out), new PrintWriter(err), "genrate"));
        assertTrue(err.toString().contains("genrate"), err.toString());
    }

    @Test
    void everyCommandAnswersHelpWithItsUsageAndExitCodeZero() {
        for (String command : ALL) {
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            // generate, convert, eval... have required options: help must win over their absence.
            assertEquals(0, ZseCommand.execute(new PrintWriter(out), new PrintWriter(err), command, "--help"),
                    command + ": " + err);
            assertTrue(out.toString().startsWith("Usage: zse " + command), command + ":\n" + out);
            assertTrue(out.toString().contains("--help"), command + ":\n" + out);
        }
    }
}
