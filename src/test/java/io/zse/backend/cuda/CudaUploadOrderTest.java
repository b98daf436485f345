package io.zse.backend.cuda;

import io.zse.TestModels;
import io.zse.backend.BackendArrays;
import io.zse.backend.WeightMatrix;
import io.zse.backend.KvCache;
import io.zse.backend.KvCacheType;
import io.zse.convert.ConvertOptions;
import io.zse.format.InterleavedRows;
import io.zse.format.TensorInfo;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import io.zse.format.ZseLayout;
import io.zse.format.ZseTensor;
import io.zse.model.LlamaModel;
import io.zse.model.ModelConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Weights go to the device on the upload thread, in the order the forward pass reads them, and each op waits only for
 * the weights it reads: with the upload thread held before the last layer, a forward pass runs the embeddings and
 * every earlier layer and then waits for the last layer's first weight; released, it gives the logits of a pass run
 * after the whole upload. Every byte on the device is the file's. Files in layout interleaved-16 upload as stored and
 * are rewritten in row-groups on the device.
 */
class CudaUploadOrderTest {
    @RegisterExtension
    static final CudaTestBackends backends = CudaTestBackends.libraryOnly();

    @TempDir
    static Path dir;

    private static float[] forward(LlamaModel model, int[] prompt) {
        KvCache cache = new KvCache(model.newPool(KvCacheType.F32, 16, 4, Arena.ofAuto()), prompt.length);
        return model.forward(prompt, 0, cache);
    }

    @ParameterizedTest(name = "sender {0}, {1} buffers a lane")
    @CsvSource({"false,1", "true,2", "false,2"})
    void theFirstLayersComputeWhileTheLastIsStillUploading(boolean sender, int buffers) throws Exception {
        int[] prompt = {1, 400, 31, 7};
        CudaLibrary library = backends.library();
        try (ZseFile file = ZseFile.open(TestModels.convertTinyStories(TensorType.Q8,
                Files.createDirectories(dir.resolve("order-sender-" + sender + "-" + buffers))))) {
            float[] expected;
            try (CudaBackend whole = new CudaBackend(library, backends.device())) {
                LlamaModel model = LlamaModel.load(file, whole);
                whole.finishUploads();
                expected = forward(model, prompt);
            }
            ModelConfig config = ModelConfig.fromJson(file.configJson());
            int layers = config.numLayers();
            // Q8: data and scales are two copies per weight; the embeddings, then 7 weights per layer before the last.
            int beforeLastLayer = 2 * (1 + 7 * (layers - 1));
            Semaphore paced = new Semaphore(beforeLastLayer);
            try (CudaBackend backend = new CudaBackend(library, backends.device(), true, true, paced,
                    IntegerProducts.Variants.fromEnvironment(), settings(sender, buffers))) {
                LlamaModel model = LlamaModel.load(file, backend);
                CompletableFuture<float[]> logits = CompletableFuture.supplyAsync(() -> forward(model, prompt));
                String lastFirst = "model.layers." + (layers - 1) + ".self_attn.q_proj.weight";
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                while (!lastFirst.equals(backend.awaitedWeight()) && System.nanoTime() < deadline
                        && !logits.isDone()) {
                    Thread.sleep(5);
                }
                assertEquals(lastFirst, backend.awaitedWeight(), "the pass waits for the last layer's first weight");
                Thread.sleep(200);
                assertFalse(logits.isDone(), "the pass went on without the last layer's weights");
                assertTrue(backend.uploadedBytes() < file.fileSize(), "not everything was uploaded");
                paced.release(1 << 20);
                assertArrayEquals(expected, logits.get(120, TimeUnit.SECONDS), "logits after the paced upload");

                backend.finishUploads();
                assertDeviceBytesAreTheFiles(library, file, backend, config);
                // the lanes that had staged a chunk waited for the next while the upload was held (200 ms and more)
                Matcher idle = Pattern.compile("waiting for a chunk to stage ([0-9.]+) ms")
                        .matcher(backend.describeUpload());
                assertTrue(idle.find(), backend.describeUpload());
                assertTrue(Double.parseDouble(idle.group(1)) >= 200, backend.describeUpload());
            }
        }
    }

    /**
     * A Q8 or Q4 file written interleaved for the CPU's integer kernels: the logits of its first forward pass (each
     * weight rewritten as it is first read) are the row-groups file's, and after the upload every weight on the device
     * holds the row-groups bytes.
     */
    @ParameterizedTest
    @CsvSource({"Q8,32", "Q4,32", "Q4,128"})
    void interleavedFilesAreRewrittenInRowGroupsOnTheDevice(TensorType type, int groupSize) throws Exception {
        int[] prompt = {1, 400, 31, 7};
        ConvertOptions options = new ConvertOptions(type, groupSize, null, null, false);
        String name = type + "-g" + groupSize;
        Path rowGroups = TestModels.convert(TestModels.tinyStories(), options, dir.resolve(name + "-rows.zse"));
        Path interleaved = TestModels.convert(TestModels.tinyStories(), options.withInterleave(true),
                dir.resolve(name + "-x16.zse"));
        CudaLibrary library = backends.library();
        float[] expected;
        try (ZseFile file = ZseFile.open(rowGroups);
             CudaBackend backend = new CudaBackend(library, backends.device())) {
            expected = forward(LlamaModel.load(file, backend), prompt);
        }
        try (ZseFile file = ZseFile.open(interleaved);
             CudaBackend backend = new CudaBackend(library, backends.device())) {
            assertEquals(ZseLayout.LAYOUT_INTERLEAVED_16, file.tensor("model.layers.0.mlp.up_proj.weight").info()
                    .layout(), "the converter interleaved the weights");
            assertArrayEquals(expected, forward(LlamaModel.load(file, backend), prompt), "logits of the first pass");
            backend.finishUploads();
            assertDeviceBytesAreTheFiles(library, file, backend, ModelConfig.fromJson(file.configJson()));
        }
    }

    /**
     * ZSE_CUDA_WEIGHT_MEMORY=one: the weights a model lists before it asks for them take one device allocation, where
     * they otherwise take one each; the first pass's logits are the same bits, and every byte on the device is the
     * file's, the interleaved file's weights rewritten in row-groups in their slots.
     */
    @ParameterizedTest(name = "interleaved {0}")
    @ValueSource(booleans = {false, true})
    void expectedWeightsTakeOneAllocation(boolean interleaved) throws Exception {
        int[] prompt = {1, 400, 31, 7};
        ConvertOptions options = new ConvertOptions(TensorType.Q4, 32, null, null, false).withInterleave(interleaved);
        Path path = TestModels.convert(TestModels.tinyStories(), options,
                dir.resolve("one-allocation-" + interleaved + ".zse"));
        CudaLibrary library = backends.library();
        try (ZseFile file = ZseFile.open(path)) {
            ModelConfig config = ModelConfig.fromJson(file.configJson());
            int weights = 1 + 7 * config.numLayers() + (config.tieWordEmbeddings() ? 0 : 1);
            long[] allocations = new long[2];
            float[][] logits = new float[2][];
            for (int one = 0; one < 2; one++) {
                try (CudaBackend backend = new CudaBackend(library, backends.device())) {
                    backend.fixWeightMemory(one == 1);
                    long before = DeviceBuffer.changes();
                    LlamaModel model = LlamaModel.load(file, backend);
                    allocations[one] = DeviceBuffer.changes() - before;
                    logits[one] = forward(model, prompt);
                    backend.finishUploads();
                    assertDeviceBytesAreTheFiles(library, file, backend, config);
                }
            }
            assertEquals(weights - 1, allocations[0] - allocations[1],
                    "device allocations while loading: one a weight, then one in all");
            assertArrayEquals(logits[0], logits[1], "logits of the first pass");
        }
    }

    /**
     * Upload threads that cannot make their device current (an index no machine has) fail every chunk dealt to them
     * with the reason, lanes and sender alike: the caller learns why, and nothing waits for those chunks for ever.
     */
    @ParameterizedTest(name = "sender {0}")
    @ValueSource(booleans = {false, true})
    void uploadThreadsThatCannotStartFailTheirChunks(boolean sender) {
        CudaLibrary library = backends.library();
        byte[] bytes = new byte[100_000];
        new SplittableRandom(5).nextBytes(bytes);
        try (Arena arena = Arena.ofConfined();
             DeviceBuffer target = new DeviceBuffer(library, bytes.length);
             WeightUploader uploader = new WeightUploader(library, 4096, settings(sender), null)) {
            MemorySegment source = arena.allocate(bytes.length);
            source.copyFrom(MemorySegment.ofArray(bytes));
            uploader.upload("w", source, null, 0, target, 0);
            IllegalStateException e = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
                    java.time.Duration.ofSeconds(60), () -> assertThrows(IllegalStateException.class, uploader::finish));
            assertTrue(e.getMessage().contains("uploading w to the GPU failed") && e.getMessage()
                    .contains("cudaSetDevice"), e.getMessage());
        }
    }

    /** ZSE_CUDA_WEIGHT_MEMORY: each (also unset) or one; anything else refused, named. */
    @Test
    void weightMemorySettingTakesEachOrOne() {
        assertFalse(CudaBackend.oneWeightAllocationSetting(null));
        assertFalse(CudaBackend.oneWeightAllocationSetting("each"));
        assertTrue(CudaBackend.oneWeightAllocationSetting(" One"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> CudaBackend.oneWeightAllocationSetting("arena"))
                .getMessage().contains("ZSE_CUDA_WEIGHT_MEMORY must be each or one"));
    }

    /** Rows after the last whole tile of 16 stay in row-groups in the file and on the device. */
    @Test
    void rowsAfterTheLastWholeTileAreCopiedAsTheyAre() {
        int rows = 37;
        int cols = 256;
        TensorInfo planned = TensorInfo.planned("w", TensorType.Q4, new long[]{rows, cols}, 64);
        byte[] data = new byte[(int) planned.dataLength()];
        byte[] scales = new byte[(int) planned.scalesLength()];
        SplittableRandom random = new SplittableRandom(37);
        random.nextBytes(data);
        random.nextBytes(scales);
        MemorySegment tiledData = MemorySegment.ofArray(data.clone());
        MemorySegment tiledScales = MemorySegment.ofArray(scales.clone());
        InterleavedRows.interleave(TensorType.Q4, 64, rows, cols, tiledData, tiledScales);
        assertNotEquals(-1L, tiledData.mismatch(MemorySegment.ofArray(data)), "the tiles were rearranged");
        ZseTensor stored = new ZseTensor(planned.withLayout(ZseLayout.LAYOUT_INTERLEAVED_16), tiledData, tiledScales);
        CudaLibrary library = backends.library();
        try (CudaBackend backend = new CudaBackend(library, backends.device());
             CudaStream stream = new CudaStream(library); Arena arena = Arena.ofConfined()) {
            CudaWeight w = (CudaWeight) backend.weight(stored);
            backend.finishUploads();
            assertSame(library, stream, arena, MemorySegment.ofArray(data), w.data(), "data");
            assertSame(library, stream, arena, MemorySegment.ofArray(scales), w.scales(), "scales");
        }
    }

    /** ZSE_CUDA_UPLOAD_LANES: a lane per two cores, 2 to 8, unless set to 4, 8, 12 or 16; anything else refused. */
    @Test
    void uploadLanesSettingTakesFourSizes() {
        assertEquals(2, UploadSettings.lanesSetting(null, 2));
        assertEquals(8, UploadSettings.lanesSetting(" ", 64));
        assertEquals(16, UploadSettings.lanesSetting("16", 2));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> UploadSettings.lanesSetting("6", 16))
                .getMessage().contains("ZSE_CUDA_UPLOAD_LANES"));
    }

    /** ZSE_CUDA_UPLOAD_CHUNK_MB: 16 MiB unless set to 4, 8 or 16; anything else refused, named. */
    @Test
    void uploadChunkSettingTakesThreeSizes() {
        assertEquals(16L << 20, UploadSettings.chunkSetting(null));
        assertEquals(4L << 20, UploadSettings.chunkSetting(" 4"));
        assertEquals(8L << 20, UploadSettings.chunkSetting("8"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> UploadSettings.chunkSetting("32"))
                .getMessage().contains("ZSE_CUDA_UPLOAD_CHUNK_MB"));
    }

    /** ZSE_CUDA_UPLOAD_SOURCE: mapping (also unset) or reads; anything else refused, named. */
    @Test
    void uploadSourceSettingTakesTheMappingOrReads() {
        assertEquals("mapping", UploadSettings.sourceSetting(null));
        assertEquals("reads", UploadSettings.sourceSetting(" Reads"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> UploadSettings.sourceSetting("direct"))
                .getMessage().contains("ZSE_CUDA_UPLOAD_SOURCE must be mapping or reads"));
    }

    /**
     * Once uploaded, a model's weights are no longer resident in the process through its mapping (the upload copies
     * each chunk out of the mapping and lets its pages go): the mapping's resident bytes, as /proc/self/smaps counts
     * them, are under half of the file once every weight is on the device (measured: 393 KB of its 1.46 MB, what the
     * host itself read; all of it, 1.46 MB, without the release).
     */
    @Test
    void uploadedWeightsLeaveTheResidentSet() throws Exception {
        Path smaps = Path.of("/proc/self/smaps");
        assumeTrue(Files.isReadable(smaps), "needs /proc/self/smaps");
        Path path = TestModels.convert(TestModels.tinyStories(), ConvertOptions.of(TensorType.F16),
                dir.resolve("resident.zse")).toRealPath();
        try (ZseFile file = ZseFile.open(path);
             CudaBackend backend = new CudaBackend(backends.library(), backends.device())) {
            LlamaModel.load(file, backend);
            backend.finishUploads();
            long resident = 0;
            boolean inMapping = false;
            for (String line : Files.readAllLines(smaps)) {
                if (line.matches("^[0-9a-f]+-[0-9a-f]+ .*")) {
                    inMapping = line.endsWith(" " + path);
                } else if (inMapping && line.startsWith("Rss:")) {
                    resident += 1024 * Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
            assertTrue(resident < file.fileSize() / 2, resident + " bytes of the " + file.fileSize()
                    + "-byte file resident after the upload");
        }
    }

    /**
     * A .zse file cut short after it was opened (and mapped) fails that weight's upload, and the first op that reads
     * the weight says which weight and where the file ends (never a fault), whichever thread queues the copies.
     */
    @ParameterizedTest(name = "sender {0}")
    @ValueSource(booleans = {false, true})
    void aFileCutShortWhileOpenFailsItsWeightsUploadByName(boolean sender) throws Exception {
        Path cut = TestModels.convert(TestModels.tinyStories(), ConvertOptions.of(TensorType.Q8),
                dir.resolve("cut-short-" + sender + ".zse"));
        try (ZseFile file = ZseFile.open(cut);
             CudaBackend backend = new CudaBackend(backends.library(), backends.device(), true,
                     true, null, IntegerProducts.Variants.fromEnvironment(), settings(sender))) {
            TensorInfo last = file.tensors().stream().filter(t -> t.rank() == 2)
                    .max(Comparator.comparingLong(TensorInfo::dataOffset)).orElseThrow();
            try (FileChannel writer = FileChannel.open(cut, StandardOpenOption.WRITE)) {
                writer.truncate(last.dataOffset() + 16);
            }
            WeightMatrix weight = backend.weight(file.tensor(last.name()));
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> BackendArrays.embed(backend, weight, new int[]{0}));
            assertTrue(e.getMessage().contains(last.name()) && e.getMessage().contains("the file ends at byte "
                    + (last.dataOffset() + 16)), e.getMessage());
        }
    }

    /**
     * The environment's upload settings with a sender or without, and chunks of 16 KiB: the test model's larger
     * weights then span several chunks (its embeddings, 2048 x 128 as Q8, 16), and a lane stages one while another
     * waits to be queued.
     */
    private static UploadSettings settings(boolean sender) {
        return settings(sender, sender ? 2 : 1);
    }

    /** The same with {@code buffers} staging buffers a lane. */
    private static UploadSettings settings(boolean sender, int buffers) {
        UploadSettings environment = UploadSettings.fromEnvironment();
        return new UploadSettings(environment.lanes(), 16 << 10, environment.reads(), sender, buffers);
    }

    /** ZSE_CUDA_UPLOAD_ISSUE: lanes (also unset) or sender; anything else refused, named. */
    @Test
    void uploadIssueSettingTakesTheLanesOrASender() {
        assertEquals("lanes", UploadSettings.issueSetting(null));
        assertEquals("sender", UploadSettings.issueSetting("Sender "));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> UploadSettings.issueSetting("threads"))
                .getMessage().contains("ZSE_CUDA_UPLOAD_ISSUE must be lanes or sender"));
        assertEquals(2, settings(true).buffersPerLane());
    }

    /** ZSE_CUDA_UPLOAD_BUFFERS: 1 or 2 staging buffers a lane; unset, 2 with a sender and 1 without; else refused. */
    @Test
    void uploadBuffersSettingTakesOneOrTwo() {
        assertEquals(1, UploadSettings.buffersSetting(null, false));
        assertEquals(2, UploadSettings.buffersSetting(" ", true));
        assertEquals(2, UploadSettings.buffersSetting("2", false));
        assertEquals(1, UploadSettings.buffersSetting("1", true));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> UploadSettings.buffersSetting("3", false))
                .getMessage().contains("ZSE_CUDA_UPLOAD_BUFFERS must be 1 or 2"));
    }

    private static void assertDeviceBytesAreTheFiles(CudaLibrary library, ZseFile file, CudaBackend backend,
                                                     ModelConfig config) {
        try (CudaStream stream = new CudaStream(library); Arena arena = Arena.ofConfined()) {
            int checked = 0;
            for (TensorInfo info : file.tensors()) {
                String name = info.name();
                ZseTensor tensor = file.tensor(name);
                if (tensor.shape().length != 2 || name.contains("norm")) {
                    continue;
                }
                CudaWeight w = (CudaWeight) backend.weight(tensor); // known: the same upload
                ZseTensor rows = InterleavedRows.toRowGroups(tensor);
                assertSame(library, stream, arena, rows.data(), w.data(), name + " data");
                if (rows.scales().byteSize() > 0) {
                    assertSame(library, stream, arena, rows.scales(), w.scales(), name + " scales");
                }
                checked++;
            }
            assertEquals(1 + 7 * config.numLayers() + (config.tieWordEmbeddings() ? 0 : 1), checked, "weights");
        }
    }

    private static void assertSame(CudaLibrary library, CudaStream stream, Arena arena, MemorySegment expected,
                                   MemorySegment device, String what) {
        MemorySegment back = arena.allocate(expected.byteSize());
        library.call("zse_cuda_copy_to_host", back, device, expected.byteSize(), stream.handle());
        stream.synchronize();
        assertEquals(-1L, back.mismatch(expected), what + " differs on the device");
    }
}
