package io.zse.cli;

import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.annotations.QuarkusMain;

import java.util.Arrays;

/**
 * Process entry point. Only {@code serve} boots Quarkus (and so opens an HTTP port); every other command runs as
 * plain Java so it starts fast and never binds a socket.
 */
@QuarkusMain
public final class ZseMain {
    private ZseMain() {
    }

    public static void main(String... args) {
        if (args.length > 0 && args[0].equals("serve")) {
            Quarkus.run(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        System.exit(ZseCommand.execute(args));
    }
}
