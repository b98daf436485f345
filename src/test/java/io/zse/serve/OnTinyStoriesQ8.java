package io.zse.serve;

import io.zse.TestModels;
import io.zse.backend.cpu.CpuBackend;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import io.zse.model.LlamaModel;
import io.zse.tokenizer.Tokenizer;
import io.zse.tokenizer.TokenizerSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

/** Engine tests on the demo model converted to Q8, on two CPU threads, loaded once per test class. */
abstract class OnTinyStoriesQ8 {
    @TempDir
    static Path dir;
    static ZseFile file;
    static CpuBackend backend;
    static LlamaModel model;
    static Tokenizer tokenizer;

    @BeforeAll
    static void load() throws Exception {
        file = ZseFile.open(TestModels.convertTinyStories(TensorType.Q8, dir));
        backend = new CpuBackend(2);
        model = LlamaModel.load(file, backend);
        tokenizer = TokenizerSource.fromZse(file);
    }

    @AfterAll
    static void close() {
        backend.close();
        file.close();
    }
}
