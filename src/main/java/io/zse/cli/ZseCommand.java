package io.zse.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.PrintWriter;
import java.util.List;

/** The {@code zse} command line: one sub-command per job; {@code -h/--help} and {@code -V/--version} reach every one. */
@Command(name = "zse", mixinStandardHelpOptions = true, scope = CommandLine.ScopeType.INHERIT, version = "zse 0.1.0",
        description = "Convert Hugging Face models to .zse files and serve them.")
public final class ZseCommand implements Runnable {
    /** The sub-commands, in the order help lists them. */
    private static final List<Class<?>> COMMANDS = List.of(ServeCommand.class, ConvertCommand.class,
            InspectCommand.class, SynthCommand.class, TokenizeCommand.class, DetokenizeCommand.class,
            GenerateCommand.class, ChatCommand.class, RenderTemplateCommand.class, BenchCommand.class,
            EvalCommand.class);

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** Inherited by every sub-command; {@link #execute} reads it from the arguments, before picocli parses them. */
    @CommandLine.Option(names = "--debug", scope = CommandLine.ScopeType.INHERIT,
            description = "Print stack traces on failure.")
    boolean debug;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing command");
    }

    /** Runs the command line and returns the process exit code; failures print one line unless --debug is given. */
    public static int execute(String... args) {
        return execute(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args);
    }

    /** As {@link #execute(String...)} with the command's output and error streams given (tests capture them). */
    public static int execute(PrintWriter out, PrintWriter err, String... args) {
        boolean debug = java.util.Arrays.asList(args).contains("--debug");
        CommandLine cli = commandLine(args);
        cli.setOut(out);
        cli.setErr(err);
        // a usage mistake is one line too, pointing at the help rather than printing it
        cli.setParameterExceptionHandler((ex, commandArgs) -> {
            String command = ex.getCommandLine() == cli ? "zse" : "zse " + ex.getCommandLine().getCommandName();
            String suggestion = ex instanceof CommandLine.UnmatchedArgumentException u && !u.getSuggestions().isEmpty()
                    ? "; did you mean " + String.join(" or ", u.getSuggestions()) + "?" : "";
            err.println(command + ": " + oneLine(ex) + suggestion + " (see " + command + " --help)");
            err.flush();
            return 2;
        });
        cli.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            if (debug) {
                ex.printStackTrace(err);
            } else {
                err.println("zse " + commandLine.getCommandName() + ": " + oneLine(ex));
            }
            err.flush();
            return 1;
        });
        return cli.execute(args);
    }

    /**
     * The command line with only the sub-command {@code args} names, or all of them when it names none (help, typos):
     * picocli builds each sub-command's model by reflection, which costs a cold start about 0.1 s for all of them.
     */
    static CommandLine commandLine(String... args) {
        CommandLine cli = new CommandLine(new ZseCommand());
        List<Class<?>> named = args.length == 0 ? List.of()
                : COMMANDS.stream().filter(c -> c.getAnnotation(Command.class).name().equals(args[0])).toList();
        for (Class<?> command : named.isEmpty() ? COMMANDS : named) {
            cli.addSubcommand(command);
        }
        return cli;
    }

    private static String oneLine(Throwable ex) {
        String message = switch (ex) {
            case java.nio.file.NoSuchFileException e when e.getReason() == null -> "no such file: " + e.getFile();
            case java.nio.file.AccessDeniedException e when e.getReason() == null -> "permission denied: " + e.getFile();
            case java.nio.file.FileAlreadyExistsException e when e.getReason() == null -> "already exists: " + e.getFile();
            default -> ex.getMessage();
        };
        if (message == null || message.isBlank()) {
            message = ex.getClass().getSimpleName();
        }
        return message.replace('\n', ' ');
    }
}
