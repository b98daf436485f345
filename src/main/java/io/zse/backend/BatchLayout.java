package io.zse.backend;

import java.util.ArrayList;
import java.util.List;

/**
 * How the rows of one forward pass belong to sequences: segment s is rows offset..offset+length-1, the tokens at
 * positions startPos..startPos+length-1 of its sequence, whose keys and values are in its {@link KvCache}. A decode
 * step has a segment of one row per sequence; a prefill chunk, one longer segment.
 */
public final class BatchLayout {
    /** One sequence's rows. */
    public record Segment(KvCache cache, int startPos, int offset, int length) {
        public int end() {
            return startPos + length;
        }
    }

    private final List<Segment> segments;
    private final int rows;
    private final int[] positions; // per row
    private final int[] segmentOfRow;
    private final int[][] slots; // per segment, filled on first use: the block tables do not change during a pass

    public BatchLayout(List<Segment> segments) {
        if (segments.isEmpty()) {
            throw new IllegalArgumentException("no tokens to run");
        }
        this.segments = List.copyOf(segments);
        int n = 0;
        for (Segment s : segments) {
            if (s.length() <= 0 || s.startPos() < 0 || s.offset() != n) {
                throw new IllegalArgumentException("segments must cover the rows in order, each at least one: " + s);
            }
            n += s.length();
        }
        this.rows = n;
        this.positions = new int[n];
        this.segmentOfRow = new int[n];
        this.slots = new int[segments.size()][];
        for (int s = 0; s < segments.size(); s++) {
            Segment segment = segments.get(s);
            for (int i = 0; i < segment.length(); i++) {
                positions[segment.offset() + i] = segment.startPos() + i;
                segmentOfRow[segment.offset() + i] = s;
            }
        }
    }

    /** One decode row per cache, row i for caches[i], at the position that follows what it holds. */
    public static BatchLayout decode(KvCache[] caches) {
        List<Segment> segments = new ArrayList<>();
        for (int i = 0; i < caches.length; i++) {
            segments.add(new Segment(caches[i], caches[i].length(), i, 1));
        }
        return new BatchLayout(segments);
    }

    /** One sequence, rows 0..n-1 at positions startPos... */
    public static BatchLayout single(KvCache cache, int startPos, int n) {
        return new BatchLayout(List.of(new Segment(cache, startPos, 0, n)));
    }

    public List<Segment> segments() {
        return segments;
    }

    /** Rows in the batch (tokens run together). */
    public int rows() {
        return rows;
    }

    /** The position of row i in its sequence. */
    public int position(int row) {
        return positions[row];
    }

    /**
     * The position of every row: the layout's own array, read by every RoPE of the pass (two a layer), so not copied
     * each time; as with {@link #slots}, callers read it and never write it.
     */
    public int[] positions() {
        return positions;
    }

    /** The index in {@link #segments()} of the segment row i belongs to. */
    public int segmentIndex(int row) {
        return segmentOfRow[row];
    }

    /**
     * The slot of each position 0..end-1 of segment s's cache, looked up once per forward pass rather than once per
     * layer. Call after the cache holds its blocks for the pass.
     */
    public synchronized int[] slots(int s) {
        if (slots[s] == null) {
            Segment segment = segments.get(s);
            int[] table = new int[segment.end()];
            for (int t = 0; t < table.length; t++) {
                table[t] = segment.cache().slot(t);
            }
            slots[s] = table;
        }
        return slots[s];
    }

    /** Refuses the batch if any of its caches holds rows of another shape (see {@link KvBlockPool#checkShape}). */
    public void checkCacheShape(int kvHeads, int kvDim) {
        for (Segment s : segments) {
            s.cache().pool().checkShape(kvHeads, kvDim);
        }
    }

    /** The furthest position any row attends to, plus one. */
    public int maxEnd() {
        int max = 0;
        for (Segment s : segments) {
            max = Math.max(max, s.end());
        }
        return max;
    }
}
