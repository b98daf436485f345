package io.zse.backend.cuda;

import io.zse.format.TensorType;

/**
 * How the CUDA backend cuts its kernels into blocks, as functions of the shapes and the GPU's multiprocessor count:
 * decode attention's heads a block and flash-decoding splits, and the prefill products' tiles. Functions of classes of
 * the shapes, where a recorded pass must keep its launches from step to step.
 */
final class LaunchShapes {
    /**
     * Flash-decoding: the fewest positions of the longest row one split takes (ZSE_CUDA_SPLIT_POSITIONS, to compare
     * on a GPU: the fifth run's 1-row decode lost more to a 512-token context than the KV bytes it reads explain), and
     * the most splits.
     */
    private static final int MIN_SPLIT_POSITIONS = splitPositionsSetting(System.getenv("ZSE_CUDA_SPLIT_POSITIONS"));
    private static final int MAX_SPLITS = 16;
    /** The prefill tiles' sizes (tokens and weight rows a block): the larger where it still fills the GPU. */
    static final int SMALL_PREFILL_TILE = 64;
    static final int LARGE_PREFILL_TILE = 128;

    private LaunchShapes() {
    }

    /**
     * Query heads a decode attention block takes, all of one KV head, so that it reads each key and value row once for
     * them all: 4 where the group (heads per KV head) is a multiple of 4, else 2 or 1. Rows too short to split (a
     * positions class of 1) read few cache bytes, and blocks are then what the GPU lacks: 1 while rows x heads blocks
     * fill it less than twice over (Llama 3 8B at one row and 29 positions: 9.1 us a layer at 4, 5.3 at 1, H200).
     */
    static int headsPerBlock(int heads, int kvHeads, int rows, int positionsClass, int multiprocessors) {
        int group = heads / kvHeads;
        if (positionsClass < 2 && (long) rows * heads < 2L * multiprocessors) {
            return 1;
        }
        return group % 4 == 0 ? 4 : group % 2 == 0 ? 2 : 1;
    }

    /**
     * The prefill tiles for a product of n activation rows on a weight of {@code rows} rows: 128 x 128 where those
     * tiles still give three in four multiprocessors a block (each weight tile is then read for 128 tokens and each
     * activation tile for 128 rows, half the loads of 64 x 64), else 64 x 64, whose blocks are four times as many.
     * (H100, Llama 3 8B Q4, 512 tokens: 128 x 128 for all products, 128 blocks for q, o and down on 132
     * multiprocessors, gave 4925 tok/s; 64 x 64 for those, 4808.)
     */
    static int prefillTile(int rows, int n, int multiprocessors) {
        long large = (long) Math.ceilDiv(rows, LARGE_PREFILL_TILE) * Math.ceilDiv(n, LARGE_PREFILL_TILE);
        return 4 * large >= 3L * multiprocessors ? LARGE_PREFILL_TILE : SMALL_PREFILL_TILE;
    }

    /** 0 (by shape) when unset; else 64 or 128, anything else refused. */
    static int prefillTileSetting(String value) {
        return Integer.parseInt(BenchmarkSwitch.choice("ZSE_CUDA_PREFILL_TILE", value, "0",
                String.valueOf(SMALL_PREFILL_TILE), String.valueOf(LARGE_PREFILL_TILE)));
    }

    /**
     * Flash-decoding's split count: 1 while rows x blocks a row already fill the GPU twice over or the longest row is
     * short, else doubled up to {@value #MAX_SPLITS} while each split keeps at least {@value #MIN_SPLIT_POSITIONS}
     * positions of the longest row. A function of the positions class, so a recorded pass keeps its count.
     */
    static int splits(int rows, int blocksPerRow, int positionsClass, int multiprocessors) {
        int splits = 1;
        while (splits < MAX_SPLITS && (long) rows * blocksPerRow * splits < 2L * multiprocessors
                && positionsClass >= 2 * splits) {
            splits *= 2;
        }
        return splits;
    }

    /**
     * ZSE_CUDA_SPLIT_COUNTERS: the counters at the start of flash-decoding's workspace, one per row and block of
     * heads. Enough: splits() splits only while rows x blocks a row are under twice the multiprocessors.
     */
    static final int SPLIT_COUNTERS = 1 << 16;

    /** The staged tensor-core products' weight rows a block and columns a stage (zse_cuda.h, integer_matvec.cu). */
    static final int STAGED_ROWS = 64;
    static final int STAGE_COLS = 256;
    /** The most parts the staged products split a row's columns into. */
    static final int MAX_PRODUCT_SPLITS = 8;
    /**
     * Q6_K rows stage in runs of 8 super-blocks: a stage copies the 16-byte-aligned bytes around its 18-byte scale
     * record, which 8 records (144 bytes) end on.
     */
    static final int Q6_K_STAGED_COLS = 8 * STAGE_COLS;

    /** The columns whose multiple a weight row of this type must be for the staged products to take it. */
    static int stagedColumns(TensorType type) {
        return type == TensorType.Q6_K ? Q6_K_STAGED_COLS : STAGE_COLS;
    }

    /**
     * The parts the staged integer products (9 to 64 activation rows) split the columns of {@code totalRows}
     * weight rows into: as many as keep all blocks resident at once (two a multiprocessor), at least 1, at most
     * {@value #MAX_PRODUCT_SPLITS} and one a stage of {@value #STAGE_COLS} columns. {@code fixed} (1, 2, 4 or 8)
     * overrides the count, within the same limits. Why not more: a second round of a few blocks runs alone, each as
     * long as one of the first; the fifth GPU run's 16-row step (Llama 3 8B, 132 multiprocessors) split q, k, v into 3
     * (288 blocks for 264 places: 21 us, 600 GB/s) and the output and down projections into 5 (320: 830 GB/s), where
     * gate and up, unsplit in 448 blocks, streamed 1478 GB/s.
     */
    static int productSplits(long totalRows, int cols, int multiprocessors, int fixed) {
        long blocks = Math.ceilDiv(totalRows, STAGED_ROWS);
        int wanted = fixed != 0 ? fixed : (int) Math.min(MAX_PRODUCT_SPLITS, 2L * multiprocessors / blocks);
        return Math.max(1, Math.min(wanted, Math.min(MAX_PRODUCT_SPLITS, cols / STAGE_COLS)));
    }

    /** maxEnd / MIN_SPLIT_POSITIONS rounded down to a power of two, at most MAX_SPLITS: all splits() reads of it. */
    static int positionsClass(int maxEnd) {
        return positionsClass(maxEnd, MIN_SPLIT_POSITIONS);
    }

    /** The same with {@code minSplitPositions} positions the fewest a split takes. */
    static int positionsClass(int maxEnd, int minSplitPositions) {
        return Math.min(MAX_SPLITS, Integer.highestOneBit(Math.max(1, maxEnd / minSplitPositions)));
    }

    /**
     * ZSE_CUDA_ATTENTION_KEYS=1: each warp of the decode attention loads one key at a time (the kernel before the
     * 4-key one, to compare them on a GPU); unset or 4, the default (4 keys, 2 where a head has over 128 dimensions).
     * The value zse_cuda_paged_attention takes: 0 (the default) or 1.
     */
    static int keysAtOnceSetting(String value) {
        return BenchmarkSwitch.choice("ZSE_CUDA_ATTENTION_KEYS", value, "4", "4", "1").equals("1") ? 1 : 0;
    }

    /** 32 when unset; else 32, 64, 128 or 256, anything else refused. */
    static int splitPositionsSetting(String value) {
        return Integer.parseInt(BenchmarkSwitch.choice("ZSE_CUDA_SPLIT_POSITIONS", value, "32", "32", "64", "128",
                "256"));
    }
}
