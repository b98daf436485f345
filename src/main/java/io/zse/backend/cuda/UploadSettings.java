package io.zse.backend.cuda;

/**
 * How {@link WeightUploader} moves weights: its lanes, the bytes a lane stages at a time, where a lane reads them from,
 * and which thread queues the copies. The defaults won on GPUs so far; each environment switch (ZSE_CUDA_UPLOAD_*)
 * picks another value to compare on a GPU (bench/gpu-ab.sh).
 *
 * @param lanes      threads filling pinned staging, each with its own stream
 * @param chunkBytes the bytes a lane stages and sends at a time, a staging buffer's size
 * @param reads      whether lanes read the file (positional reads) rather than copy out of the mapping
 * @param sender     whether one thread queues every copy, the lanes only filling staging, rather than each lane
 *                   queueing its own
 * @param buffers    staging buffers a lane fills in turn: with two, a lane fills one while the other's copy runs
 */
record UploadSettings(int lanes, long chunkBytes, boolean reads, boolean sender, int buffers) {
    UploadSettings {
        if (lanes < 1 || chunkBytes < 1 || buffers < 1) {
            throw new IllegalArgumentException("upload lanes " + lanes + ", chunks of " + chunkBytes + " bytes, "
                    + buffers + " buffers a lane");
        }
    }

    /**
     * From ZSE_CUDA_UPLOAD_LANES, _CHUNK_MB, _SOURCE, _ISSUE and _BUFFERS.
     * <ul>
     * <li>Lanes: a lane per two cores, 2 to 8. Each lane's thread copies out of the page cache at 4-5 GB/s (sixth GPU
     * run, H200: 8 lanes 4.5 GB/s each, 12 lanes 4.3, 16 lanes 4.1). The same run found 12 and 16 lanes slower in
     * all: 17.90 and 16.74 GB/s, 15.71 and 14.40, against 18.93 and 17.16 at 8. The lanes' summed time queueing
     * copies grew from 278 ms at 8 lanes to 659 at 12 and 1138 at 16, as each lane's driver calls waited for the
     * others': what a single sender ({@code sender}) is to avoid.</li>
     * <li>Chunks: 16 MiB; 4 did not win in that run (14.04 and 17.19 GB/s against 18.93 and 17.16).</li>
     * <li>Source: the mapping. On an H100, 19.2-20.5 GB/s against reads' 15.5-16.7; on the H200 even (reads 19.31
     * and 17.52).</li>
     * <li>Issue: each lane queues its own copies (lanes); sender is the variant under test.</li>
     * <li>Buffers: one a lane, two with a sender (so a lane fills while the sender queues). On an H100 two a lane
     * lost to one (14.6-17.0 GB/s against 19.2-20.5), when the lanes still pinned them on the upload's way; they pin
     * as the backend opens since, and the sixth GPU run's lanes each waited for their one buffer's copy between fills:
     * two (of 8 MiB, the same pinned memory) is the variant under test.</li>
     * </ul>
     */
    static UploadSettings fromEnvironment() {
        boolean sender = issueSetting(System.getenv("ZSE_CUDA_UPLOAD_ISSUE")).equals("sender");
        return new UploadSettings(lanesSetting(System.getenv("ZSE_CUDA_UPLOAD_LANES"),
                Runtime.getRuntime().availableProcessors()), chunkSetting(System.getenv("ZSE_CUDA_UPLOAD_CHUNK_MB")),
                sourceSetting(System.getenv("ZSE_CUDA_UPLOAD_SOURCE")).equals("reads"), sender,
                buffersSetting(System.getenv("ZSE_CUDA_UPLOAD_BUFFERS"), sender));
    }

    /** Staging buffers a lane fills in turn. */
    int buffersPerLane() {
        return buffers;
    }

    /** ZSE_CUDA_UPLOAD_BUFFERS: 1 or 2; unset, 2 with a {@code sender}, else 1; anything else refused. */
    static int buffersSetting(String value, boolean sender) {
        return Integer.parseInt(BenchmarkSwitch.choice("ZSE_CUDA_UPLOAD_BUFFERS", value, sender ? "2" : "1", "1",
                "2"));
    }

    /** ZSE_CUDA_UPLOAD_SOURCE: mapping (also unset) or reads; anything else refused. */
    static String sourceSetting(String value) {
        return BenchmarkSwitch.choice("ZSE_CUDA_UPLOAD_SOURCE", value, "mapping", "mapping", "reads");
    }

    /** ZSE_CUDA_UPLOAD_CHUNK_MB: 4, 8 or 16 (also unset) MiB, in bytes; anything else refused. */
    static long chunkSetting(String value) {
        return Long.parseLong(BenchmarkSwitch.choice("ZSE_CUDA_UPLOAD_CHUNK_MB", value, "16", "4", "8", "16")) << 20;
    }

    /** ZSE_CUDA_UPLOAD_LANES: 4, 8, 12 or 16; unset, a lane per two of {@code cores}, 2 to 8. */
    static int lanesSetting(String value, int cores) {
        String lanes = BenchmarkSwitch.choice("ZSE_CUDA_UPLOAD_LANES", value, "", "4", "8", "12", "16");
        return lanes.isEmpty() ? Math.clamp(cores / 2, 2, 8) : Integer.parseInt(lanes);
    }

    /** ZSE_CUDA_UPLOAD_ISSUE: lanes (also unset) or sender; anything else refused. */
    static String issueSetting(String value) {
        return BenchmarkSwitch.choice("ZSE_CUDA_UPLOAD_ISSUE", value, "lanes", "lanes", "sender");
    }

    /** What the bench prints of the settings. */
    String describe() {
        return (reads ? "read from the file" : "copied out of the mapping") + " into pinned staging, " + lanes
                + " streams, " + buffers + (buffers == 1 ? " buffer" : " buffers") + " of " + (chunkBytes >> 20)
                + " MiB a lane, " + (sender ? "one thread queueing the copies" : "each lane queueing its copies");
    }
}
