package io.zse.cli;

import io.zse.convert.AutoLayout;
import io.zse.convert.ConvertOptions;
import io.zse.convert.ModelConverter;
import io.zse.convert.ModelImport;
import io.zse.format.TensorType;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/** {@code zse convert}: a Hugging Face checkpoint directory, a GGUF file or a zse-engine .zse file to one .zse file. */
@Command(name = "convert", description = "Convert a Hugging Face checkpoint (safetensors), a GGUF file or a "
        + "zse-engine .zse file into a .zse file.")
public final class ConvertCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "INPUT", description = "Checkpoint directory (config.json, safetensors, "
            + "tokenizer files), a .gguf file, or a .zse file written by the Python zse-engine.")
    Path input;

    @Option(names = {"-o", "--output"}, required = true, paramLabel = "OUT.zse", description = "File to write.")
    Path output;

    @Option(names = "--quant", paramLabel = "TYPE",
            description = "Type of the 2-D weights: f32, f16, bf16, q8, q6_k, q4, nf4 (default q8). Checkpoint "
                    + "directories only: a GGUF or zse-engine file keeps its own types.")
    String quant;

    @Option(names = "--group-size", paramLabel = "N", description = "Q4 group size: 32 (default), 64 or 128.")
    Integer groupSize;

    @Option(names = "--embeddings", paramLabel = "TYPE", description = "Type of the token embeddings (default: Q8 under q4/nf4, else --quant).")
    String embeddings;

    @Option(names = "--lm-head", paramLabel = "TYPE", description = "Type of lm_head, and of tied embeddings (same default).")
    String lmHead;

    @Option(names = "--layout", paramLabel = "LAYOUT", description = "Q8 and Q4 weights (of a checkpoint, or a GGUF's "
            + "Q8_0, Q4_0 and Q4_1 ones): interleaved (16 rows side by side, what the native CPU kernels multiply "
            + "fastest), row-groups, or auto (default): interleaved where this machine runs the native SIMD kernels.")
    String layout;

    @Option(names = "--force", description = "Replace OUT if it exists.")
    boolean force;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        long start = System.nanoTime();
        if (!java.nio.file.Files.isDirectory(input)) {
            if (quant != null || groupSize != null || embeddings != null || lmHead != null) {
                throw new IllegalArgumentException("--quant, --group-size, --embeddings and --lm-head apply to "
                        + "checkpoint directories; " + input + " keeps the types it was quantized with");
            }
            boolean gguf = ModelImport.kindOf(input) == ModelImport.Kind.GGUF;
            if (layout != null && !gguf) {
                throw new IllegalArgumentException("--layout applies to checkpoint directories and GGUF files; "
                        + input + " is imported in layout row-groups");
            }
            ProgressDisplay progress = progressOn();
            ModelConverter.Result result = ModelImport.convertFile(input, output, force, gguf && interleave(),
                    progress);
            progress.done();
            return report(result, start);
        }
        TensorType type = TensorType.parse(quant == null ? "q8" : quant);
        ConvertOptions options = new ConvertOptions(type, groupSize != null ? groupSize : type.defaultGroupSize(),
                embeddings == null ? null : TensorType.parse(embeddings), lmHead == null ? null : TensorType.parse(lmHead),
                force, interleave());
        ProgressDisplay progress = progressOn();
        ModelConverter.Result result = ModelConverter.convert(input, output, options, progress);
        progress.done();
        return report(result, start);
    }

    private boolean interleave() {
        return switch (layout == null ? "auto" : layout) {
            case "interleaved" -> true;
            case "row-groups" -> false;
            case "auto" -> AutoLayout.interleaved();
            default -> throw new IllegalArgumentException("--layout " + layout
                    + " is not one of auto, interleaved, row-groups");
        };
    }

    private ProgressDisplay progressOn() {
        return new ProgressDisplay(spec.commandLine().getErr());
    }

    private int report(ModelConverter.Result result, long start) {
        double seconds = (System.nanoTime() - start) / 1e9;
        PrintWriter out = spec.commandLine().getOut();
        out.printf("wrote %s: %s, %d tensors %s, %s from %s of input in %.1f s (%.0f MB/s)%n", output,
                result.config().architecture(), result.tensors(), result.tensorsByType(),
                InspectCommand.bytes(result.outputBytes()), InspectCommand.bytes(result.inputBytes()), seconds,
                result.inputBytes() / 1e6 / seconds);
        out.flush();
        return 0;
    }
}
