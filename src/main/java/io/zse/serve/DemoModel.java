package io.zse.serve;

import io.zse.convert.ConvertOptions;
import io.zse.convert.ModelConverter;
import io.zse.format.TensorType;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The model served when none is configured: the real TinyStories-656K checkpoint shipped inside the app (Apache-2.0,
 * see its SOURCE.md), converted to Q8 on first use into a cache directory and reused from there (a .zse must be a
 * file to be memory-mapped).
 */
public final class DemoModel {
    public static final String ID = "tinystories-656k";
    private static final String RESOURCE_DIR = "/demo/tinystories-656k/";
    private static final List<String> FILES = List.of("config.json", "generation_config.json", "model.safetensors",
            "special_tokens_map.json", "tokenizer.json", "tokenizer_config.json");

    private DemoModel() {
    }

    /** The converted file in {@code cacheDir}, converting it first if it is not there yet. */
    public static Path ensureConverted(Path cacheDir) throws IOException {
        Path target = cacheDir.resolve(ID + "-q8-v1.zse");
        if (Files.isRegularFile(target)) {
            return target;
        }
        Files.createDirectories(cacheDir);
        Path checkpoint = Files.createTempDirectory(cacheDir, ID + "-hf");
        Path partial = cacheDir.resolve(target.getFileName() + "." + ProcessHandle.current().pid() + ".partial");
        try {
            for (String name : FILES) {
                try (InputStream in = DemoModel.class.getResourceAsStream(RESOURCE_DIR + name)) {
                    if (in == null) {
                        throw new IOException("the demo model's " + name + " is missing from the application");
                    }
                    Files.copy(in, checkpoint.resolve(name));
                }
            }
            ModelConverter.convert(checkpoint, partial, new ConvertOptions(TensorType.Q8, TensorType.Q8.defaultGroupSize(),
                    null, null, true), ModelConverter.Progress.NONE);
            // atomic, so a second process starting at the same time never maps a half-written file
            Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return target;
        } finally {
            Files.deleteIfExists(partial);
            try (Stream<Path> files = Files.walk(checkpoint)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }
}
