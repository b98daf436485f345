package io.zse.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code zse serve}, as help lists it. {@link ZseMain} starts the server itself before picocli is involved (Quarkus
 * takes the remaining arguments); this command is what {@code zse --help} and {@code zse serve --help} describe, and
 * it starts the same server when reached through {@link ZseCommand#execute}.
 */
@Command(name = "serve", description = "Serve the OpenAI-compatible API and the playground at / (docs/http-api.md).")
public final class ServeCommand implements Callable<Integer> {
    @Option(names = "--model", paramLabel = "FILE",
            description = "The .zse file (default: zse.model-path / ZSE_MODEL_PATH, else the bundled TinyStories demo).")
    Path model;

    @Option(names = "--port", paramLabel = "N", description = "HTTP port (default: $PORT, else 8080).")
    Integer port;

    @Override
    public Integer call() {
        List<String> args = new ArrayList<>();
        if (model != null) {
            args.addAll(List.of("--model", model.toString()));
        }
        if (port != null) {
            args.addAll(List.of("--port", port.toString()));
        }
        ZseMain.serve(args.toArray(String[]::new));
        return 0;
    }
}
