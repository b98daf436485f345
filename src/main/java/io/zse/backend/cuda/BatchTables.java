package io.zse.backend.cuda;

import io.zse.backend.BatchLayout;
import io.zse.backend.KvBlockPool;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * What the paged KV kernels need to know about a {@link BatchLayout}, as one int32 array uploaded once per forward
 * pass: per row its position, the offset of its sequence's block table and the slot its keys and values go to; then
 * the block tables, one per segment, covering positions 0..end-1; then the query tiles of the tiled prefill kernel,
 * (first row, row count) pairs of at most {@value #TILE_ROWS} consecutive rows of one segment, in row order. Rows past
 * the batch's own are padding (a pass run at a recorded, larger size): position and slot -1, which the kernels skip,
 * one tile each.
 *
 * @param rows       rows of the pass, padding included
 * @param groups     runs of consecutive segments whose caches share a pool: one kernel launch each
 * @param ints       the array: [positions | table offsets | slots | tables | tiles]
 * @param tilesStart where the tiles start in {@code ints}
 */
record BatchTables(int rows, List<Group> groups, int[] ints, int tilesStart) {

    /** Query rows per tile of zse_cuda_paged_prefill_attention. */
    static final int TILE_ROWS = 16;

    /**
     * Rows rowStart..rowStart+rowCount-1, all of whose caches take their blocks from {@code pool}; their tiles are
     * tileStart..tileStart+tileCount-1; {@code prompt} when a segment has more than one row (a prompt chunk).
     */
    record Group(KvBlockPool pool, int rowStart, int rowCount, int tileStart, int tileCount, boolean prompt) {
    }

    static BatchTables of(BatchLayout batch) {
        return of(batch, batch.rows());
    }

    /** The tables of {@code batch} run as {@code rows} rows: the batch's, then padding rows in its last group. */
    static BatchTables of(BatchLayout batch, int rows) {
        if (rows < batch.rows()) {
            throw new IllegalArgumentException(rows + " rows for a batch of " + batch.rows());
        }
        int tableLength = 0;
        int tileCount = rows - batch.rows(); // a tile per padding row
        for (BatchLayout.Segment s : batch.segments()) {
            tableLength += blocksCovering(s);
            tileCount += (s.length() + TILE_ROWS - 1) / TILE_ROWS;
        }
        int tilesStart = 3 * rows + tableLength;
        int[] ints = new int[tilesStart + 2 * tileCount];
        int tile = 0;
        List<Group> groups = new ArrayList<>();
        int table = 3 * rows;
        for (int index = 0; index < batch.segments().size(); index++) {
            BatchLayout.Segment s = batch.segments().get(index);
            int blockSize = s.cache().pool().blockSize();
            int[] slots = batch.slots(index); // positions 0..end-1
            int blocks = blocksCovering(s);
            for (int b = 0; b < blocks; b++) {
                ints[table + b] = slots[b * blockSize] / blockSize;
            }
            for (int i = 0; i < s.length(); i++) {
                int row = s.offset() + i;
                ints[row] = s.startPos() + i;
                ints[rows + row] = table;
                ints[2 * rows + row] = slots[s.startPos() + i];
            }
            table += blocks;
            int firstTile = tile;
            for (int i = 0; i < s.length(); i += TILE_ROWS) {
                ints[tilesStart + 2 * tile] = s.offset() + i;
                ints[tilesStart + 2 * tile + 1] = Math.min(TILE_ROWS, s.length() - i);
                tile++;
            }
            Group last = groups.isEmpty() ? null : groups.getLast();
            if (last != null && last.pool() == s.cache().pool()) {
                groups.set(groups.size() - 1, new Group(last.pool(), last.rowStart(), last.rowCount() + s.length(),
                        last.tileStart(), last.tileCount() + tile - firstTile, last.prompt() || s.length() > 1));
            } else {
                groups.add(new Group(s.cache().pool(), s.offset(), s.length(), firstTile, tile - firstTile,
                        s.length() > 1));
            }
        }
        for (int row = batch.rows(); row < rows; row++) {
            ints[row] = -1;
            ints[2 * rows + row] = -1;
            ints[tilesStart + 2 * tile] = row;
            ints[tilesStart + 2 * tile + 1] = 1;
            tile++;
        }
        Group last = groups.getLast();
        groups.set(groups.size() - 1, new Group(last.pool(), last.rowStart(), rows - last.rowStart(),
                last.tileStart(), last.tileCount() + rows - batch.rows(), last.prompt()));
        return new BatchTables(rows, List.copyOf(groups), ints, tilesStart);
    }

    private static int blocksCovering(BatchLayout.Segment s) {
        int blockSize = s.cache().pool().blockSize();
        return (s.end() + blockSize - 1) / blockSize;
    }

    /** Where, in the uploaded array at {@code device}, the positions of rows from {@code row} start. */
    MemorySegment positions(MemorySegment device, int row) {
        return at(device, row);
    }

    MemorySegment tableOffsets(MemorySegment device, int row) {
        return at(device, rows + row);
    }

    MemorySegment slots(MemorySegment device, int row) {
        return at(device, 2 * rows + row);
    }

    /** Where the (first row, row count) pairs of the tiles from {@code tile} start. */
    MemorySegment tiles(MemorySegment device, int tile) {
        return at(device, tilesStart + 2 * tile);
    }

    /** The base the table offsets count from: the array's start. */
    MemorySegment tables(MemorySegment device) {
        return at(device, 0);
    }

    private static MemorySegment at(MemorySegment device, int index) {
        return MemorySegment.ofAddress(device.address() + (long) index * Integer.BYTES);
    }
}
