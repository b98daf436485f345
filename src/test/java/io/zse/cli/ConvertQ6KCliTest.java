package io.zse.cli;

import io.zse.TestModels;
import io.zse.backend.KvCacheType;
import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cpu.TestKernels;
import io.zse.format.TensorInfo;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import io.zse.generate.QualityComparison;
import io.zse.model.LlamaModel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code zse convert --lm-head q6_k}, llama.cpp's choice for the output layer of its 4-bit files and the default under
 * q4: on a checkpoint with rows of 256 the tied embedding/output tensor is stored as Q6_K, costs little next to Q8 and
 * is smaller; on rows that hold no whole super-block it falls back to Q8 (saying so when q6_k was asked for).
 */
class ConvertQ6KCliTest {
    @TempDir
    static Path dir;

    @Test
    void aTiedOutputLayerAsQ6KCostsLittleAgainstQ8() throws IOException {
        Path hf = dir.resolve("rows256");
        ConvertInspectCliTest.Run synth = ConvertInspectCliTest.run("synth", "--preset", "llama-3.2-1b",
                "--layers", "2", "--dtype", "f32", "--seed", "5", "--tokenizer", TestModels.tinyStories().toString(),
                "--set", "vocab_size=2048", "--set", "hidden_size=256", "--set", "intermediate_size=512",
                "--set", "num_attention_heads=4", "--set", "num_key_value_heads=2", "--set", "bos_token_id=1",
                "--set", "eos_token_id=2", "-o", hf.toString());
        assertEquals(0, synth.exit(), synth.err());
        Path f32 = convert(hf, "f32.zse", "--quant", "f32");
        Path q8Head = convert(hf, "q4-q8head.zse", "--quant", "q4", "--lm-head", "q8");
        Path q6Head = convert(hf, "q4-q6khead.zse", "--quant", "q4", "--lm-head", "q6_k");
        Path byDefault = convert(hf, "q4-default.zse", "--quant", "q4");
        assertEquals(-1, Files.mismatch(q6Head, byDefault), "q4's default output layer is Q6_K on rows of 256");
        try (ZseFile reference = ZseFile.open(f32); ZseFile q8 = ZseFile.open(q8Head);
             ZseFile q6 = ZseFile.open(q6Head); CpuBackend backend = TestKernels.backend("vector", 2)) {
            TensorInfo head = q6.tensors().stream().filter(t -> t.name().equals("model.embed_tokens.weight"))
                    .findFirst().orElseThrow();
            assertEquals(TensorType.Q6_K, head.type());
            assertEquals(2048L * 256 / 256 * (192 + 18), head.dataLength() + head.scalesLength());
            assertTrue(Files.size(q6Head) < Files.size(q8Head) - 2048 * 256 / 5, Files.size(q6Head) + " bytes");
            int[] text = new SplittableRandom(3).ints(300, 3, 2048).toArray();
            QualityComparison.Side ref = new QualityComparison.Side(LlamaModel.load(reference, backend),
                    KvCacheType.F32);
            QualityComparison.Report withQ8 = QualityComparison.compare(ref,
                    new QualityComparison.Side(LlamaModel.load(q8, backend), KvCacheType.F32), text, 300);
            QualityComparison.Report withQ6 = QualityComparison.compare(ref,
                    new QualityComparison.Side(LlamaModel.load(q6, backend), KvCacheType.F32), text, 300);
            System.out.println("Q4 with a Q8 head: " + withQ8 + "\nQ4 with a Q6_K head: " + withQ6);
            assertTrue(withQ6.meanKl() > 0 && withQ6.meanKl() < 1.2 * withQ8.meanKl(), withQ6 + " vs " + withQ8);
        }
    }

    @Test
    void byDefaultRowsWithoutWholeSuperBlocksTakeQ8Silently() throws IOException {
        ConvertInspectCliTest.Run run = ConvertInspectCliTest.run("convert", TestModels.tinyStories().toString(), "-o",
                dir.resolve("ts-default.zse").toString(), "--quant", "q4");
        assertEquals(0, run.exit(), run.err());
        assertFalse(run.err().contains("stored as"), run.err());
        try (ZseFile file = ZseFile.open(dir.resolve("ts-default.zse"))) {
            assertEquals(TensorType.Q8, file.tensors().getFirst().type());
        }
    }

    @Test
    void rowsWithoutWholeSuperBlocksFallBackToQ8() throws IOException {
        ConvertInspectCliTest.Run run = ConvertInspectCliTest.run("convert", TestModels.tinyStories().toString(), "-o",
                dir.resolve("ts.zse").toString(), "--quant", "q4", "--lm-head", "q6_k");
        assertEquals(0, run.exit(), run.err());
        assertTrue(run.err().contains("model.embed_tokens.weight: rows of 128 are not a multiple of group size 256, "
                + "stored as Q8"), run.err());
        try (ZseFile file = ZseFile.open(dir.resolve("ts.zse"))) {
            assertEquals(TensorType.Q8, file.tensors().getFirst().type());
        }
    }

    private static Path convert(Path hf, String name, String... options) {
        Path out = dir.resolve(name);
        String[] args = new String[options.length + 4];
        args[0] = "convert";
        args[1] = hf.toString();
        args[2] = "-o";
        args[3] = out.toString();
        System.arraycopy(options, 0, args, 4, options.length);
        ConvertInspectCliTest.Run run = ConvertInspectCliTest.run(args);
        assertEquals(0, run.exit(), run.err());
        return out;
    }
}
