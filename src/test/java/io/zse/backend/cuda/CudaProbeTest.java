package io.zse.backend.cuda;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Loading the library and finding out why CUDA is unusable, on machines without a GPU or without the library. */
class CudaProbeTest {
    @TempDir
    Path dir;

    /** An early probe (started while a command starts) is what the next run() returns, and only the next. */
    @Test
    void anEarlyProbeIsTakenByTheNextRunOnly() {
        CudaProbe early = CudaProbe.startEarly().join();
        assertSame(early, CudaProbe.run());
        CudaProbe later = CudaProbe.run();
        assertNotSame(early, later);
        assertEquals(early.reason(), later.reason()); // the same machine, the same answer
    }

    @Test
    void aMissingLibraryIsAReasonNotAFailure() {
        CudaProbe probe = CudaProbe.run(dir.resolve("libzse_cuda.so"));
        assertFalse(probe.usable());
        assertTrue(probe.reason().orElseThrow().startsWith("no CUDA library"), probe.reason().orElseThrow());
        assertTrue(probe.library().isEmpty());
    }

    @Test
    void aFileThatIsNoLibraryIsRefusedWithItsPath() throws IOException {
        Path bogus = Files.writeString(dir.resolve("libzse_cuda.so"), "not an ELF file");
        CudaProbe probe = CudaProbe.run(bogus);
        assertFalse(probe.usable());
        assertTrue(probe.reason().orElseThrow().contains("cannot be used"), probe.reason().orElseThrow());
        assertTrue(probe.reason().orElseThrow().contains(bogus.toString()), probe.reason().orElseThrow());
    }

    @Test
    void theLibraryPropertyWins() {
        withLibraryProperty(dir.resolve("elsewhere.so").toString(), () -> {
            assertEquals(dir.resolve("elsewhere.so"), CudaLibraryPath.find().orElseThrow());
            assertTrue(CudaProbe.run().reason().orElseThrow().contains("elsewhere.so"));
        });
    }

    /** Runs {@code body} with the library path property set to {@code value}, then restores it. */
    private static void withLibraryProperty(String value, Runnable body) {
        String before = System.getProperty(CudaLibraryPath.PROPERTY);
        try {
            System.setProperty(CudaLibraryPath.PROPERTY, value);
            body.run();
        } finally {
            if (before == null) {
                System.clearProperty(CudaLibraryPath.PROPERTY);
            } else {
                System.setProperty(CudaLibraryPath.PROPERTY, before);
            }
        }
    }

    /** Without libcuda.so.1 the statically linked runtime answers cudaErrorInsufficientDriver (35). */
    @Test
    void withoutADriverTheBuiltLibraryReportsError35() {
        assumeTrue(Files.isRegularFile(CudaHeaderBindingTest.BUILT), "no built library (no nvcc at build time)");
        CudaLibrary library = CudaLibrary.load(CudaHeaderBindingTest.BUILT);
        assumeTrue(driverMissing(library), "an NVIDIA driver is installed here");
        CudaException e = assertThrows(CudaException.class, library::deviceCount);
        assertTrue(e.isMissingDriver(), e.getMessage());
        assertTrue(e.getMessage().startsWith("cudaGetDeviceCount: "), e.getMessage());
        assertTrue(e.getMessage().contains("(CUDA error " + e.status() + ")"), e.getMessage());
        CudaProbe probe = CudaProbe.run(CudaHeaderBindingTest.BUILT);
        assertTrue(probe.reason().orElseThrow().startsWith("no NVIDIA driver"), probe.reason().orElseThrow());
    }

    /** Auto-detection answers without loading our library when the driver's library is not there. */
    @Test
    void withoutADriverLibraryAutoDetectionAnswersBeforeLoadingOurs() {
        assumeTrue(Files.isRegularFile(CudaHeaderBindingTest.BUILT), "no built library (no nvcc at build time)");
        assumeTrue(!CudaProbe.driverLoadable(), "an NVIDIA driver is installed here");
        withLibraryProperty(CudaHeaderBindingTest.BUILT.toString(), () -> {
            CudaProbe probe = CudaProbe.run();
            assertEquals("no NVIDIA driver (libcuda.so.1 cannot be loaded)", probe.reason().orElseThrow());
            assertTrue(probe.library().isEmpty(), "our library was loaded anyway");
        });
    }

    /** Argument checks in the library run before CUDA, so they answer -1 with a message even without a driver. */
    @Test
    void theLibraryRefusesBadKernelArgumentsBeforeCudaSeesThem() {
        assumeTrue(Files.isRegularFile(CudaHeaderBindingTest.BUILT), "no built library (no nvcc at build time)");
        CudaLibrary library = CudaLibrary.load(CudaHeaderBindingTest.BUILT);
        MemorySegment nul = MemorySegment.NULL;
        CudaException e = assertThrows(CudaException.class, () -> library.call("zse_cuda_matmul", nul, nul, 3, 32, 4,
                64, nul, 1, 64, nul, nul));
        assertEquals(-1, e.status());
        assertEquals("zse_cuda_matmul: weight data is NULL", e.getMessage());
        MemorySegment fake = MemorySegment.ofAddress(4096);
        e = assertThrows(CudaException.class, () -> library.call("zse_cuda_matmul", fake, fake, 4, 48, 4, 96, fake, 1,
                64, fake, nul));
        assertEquals("zse_cuda_matmul: Q4 groups are 32, 64 or 128", e.getMessage());
        e = assertThrows(CudaException.class, () -> library.call("zse_cuda_matmul", fake, nul, 5, 64, 4, 128, fake, 1,
                64, fake, nul));
        assertEquals("zse_cuda_matmul: quantized weight without scales", e.getMessage());
        e = assertThrows(CudaException.class, () -> library.call("zse_cuda_matmul", fake, fake, 4, 32, 4, 96, fake, 70,
                96, fake, nul));
        assertEquals("zse_cuda_matmul: tile must be 64 or 128", e.getMessage());
        e = assertThrows(CudaException.class, () -> library.call("zse_cuda_attention", fake, 1, 0, fake, fake, 6, 4,
                64, 0, fake, nul));
        assertEquals("zse_cuda_attention: heads must be a positive multiple of kv_heads", e.getMessage());
        e = assertThrows(CudaException.class, () -> library.call("zse_cuda_top_k", fake, 10, 11, fake, fake, nul));
        assertEquals("zse_cuda_top_k: need 0 < k <= min(vocab, 1024)", e.getMessage());
        assertEquals("zse_cuda_top_k: need 0 < k <= min(vocab, 1024)", library.lastError());
        e = assertThrows(CudaException.class, () -> library.call("zse_cuda_store_kv", fake, fake, 1, 2, 64, fake,
                fake, fake, nul, nul, DeviceKvPool.INT8_ROWS, nul));
        assertEquals("zse_cuda_store_kv: an INT8 cache needs its key and value scales (NULL)", e.getMessage());
        e = assertThrows(CudaException.class, () -> library.call("zse_cuda_rope_store_kv", fake, 4, fake, fake, 1, 2,
                512, fake, fake, fake, fake, fake, fake, fake, DeviceKvPool.INT8_ROWS, nul));
        assertEquals("zse_cuda_rope_store_kv: an INT8 cache's head_dim must be at most 256", e.getMessage());
        e = assertThrows(CudaException.class, () -> library.call("zse_cuda_rope_store_kv", fake, 4, fake, fake, 1, 2,
                64, fake, fake, fake, fake, fake, nul, fake, DeviceKvPool.INT8_ROWS, nul));
        assertEquals("zse_cuda_rope_store_kv: an INT8 cache needs its key and value scales (NULL)", e.getMessage());
        e = assertThrows(CudaException.class, () -> library.call("zse_cuda_paged_prefill_attention", fake, fake, fake,
                fake, fake, 1, 16, fake, fake, nul, nul, 4, 2, 64, 0, 0.125f, 0f, 2, fake, nul));
        assertEquals("zse_cuda_paged_prefill_attention: kv_type must be 0 (F32), 1 (F16) or 3 (INT8)", e.getMessage());
    }

    @Test
    void javaObjectsRefuseEmptyAllocationsBeforeNativeCode() {
        assumeTrue(Files.isRegularFile(CudaHeaderBindingTest.BUILT), "no built library (no nvcc at build time)");
        CudaLibrary library = CudaLibrary.load(CudaHeaderBindingTest.BUILT);
        assertThrows(IllegalArgumentException.class, () -> new DeviceBuffer(library, 0));
        assertThrows(IllegalArgumentException.class, () -> new PinnedBuffer(library, -1));
    }

    private static boolean driverMissing(CudaLibrary library) {
        try {
            library.deviceCount();
            return false;
        } catch (CudaException e) {
            return e.isMissingDriver();
        }
    }
}
