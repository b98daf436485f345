package io.zse.backend;

/**
 * Rows stored as int8 codes with one F32 scale per (position, kv head): value = codes[position * kvDim + kvHead *
 * headDim + i] * scales[position * numKvHeads + kvHead]. Symmetric, scale = absmax / 127 of the head's row, so each
 * element is within scale / 2 of what was written. A scale per head rather than per row: heads differ in magnitude.
 */
public final class Int8KvRows implements KvRows {
    private static final int MAX_CODE = 127;

    private final int numKvHeads;
    private final int headDim;
    private final byte[] codes;   // [capacity, numKvHeads * headDim]
    private final float[] scales; // [capacity, numKvHeads]

    Int8KvRows(int capacity, int numKvHeads, int headDim) {
        this.numKvHeads = numKvHeads;
        this.headDim = headDim;
        this.codes = new byte[Math.multiplyExact(capacity, numKvHeads * headDim)];
        this.scales = new float[Math.multiplyExact(capacity, numKvHeads)];
    }

    public int numKvHeads() {
        return numKvHeads;
    }

    @Override
    public int kvDim() {
        return numKvHeads * headDim;
    }

    /** [capacity, kvDim] int8 codes, read in place by the attention kernels. */
    public byte[] codes() {
        return codes;
    }

    /** [capacity, numKvHeads]: the scale of each head's row. */
    public float[] scales() {
        return scales;
    }

    @Override
    public void write(int position, float[] source, int sourceOffset) {
        for (int head = 0; head < numKvHeads; head++) {
            int from = sourceOffset + head * headDim;
            int to = position * kvDim() + head * headDim;
            float absMax = 0;
            for (int i = 0; i < headDim; i++) {
                absMax = Math.max(absMax, Math.abs(source[from + i]));
            }
            float inverse = absMax == 0 ? 0 : MAX_CODE / absMax;
            for (int i = 0; i < headDim; i++) {
                codes[to + i] = (byte) Math.clamp(Math.round(source[from + i] * inverse), -MAX_CODE, MAX_CODE);
            }
            scales[position * numKvHeads + head] = absMax / MAX_CODE;
        }
    }

    @Override
    public void read(int position, float[] out, int offset) {
        for (int head = 0; head < numKvHeads; head++) {
            float scale = scales[position * numKvHeads + head];
            int from = position * kvDim() + head * headDim;
            for (int i = 0; i < headDim; i++) {
                out[offset + head * headDim + i] = codes[from + i] * scale;
            }
        }
    }

    @Override
    public int bytesPerPosition() {
        return kvDim() + numKvHeads * Float.BYTES;
    }
}
